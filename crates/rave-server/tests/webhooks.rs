//! The webhooks admin API through real HTTP, delivering to a receiver on
//! loopback (the server allows private targets, as a test must); the
//! OpenAPI document lists every webhook route.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode as AxumStatus};
use axum::routing::post;
use rave_comments::{Moderation, NewComment};
use rave_engine::EngineFeed;
use rave_media::{DiskStore, MediaStore};
use rave_server::{MediaLinks, ServerConfig};
use rave_store::SharedStore;
use rave_webhooks::{
    PhotoLinks, RetryPolicy, Secret, TargetPolicy, Timeouts, WebhookConfig, Webhooks,
};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

#[path = "common/client.rs"]
mod client;
#[path = "common/photos.rs"]
mod photos;
#[path = "common/server.rs"]
mod server;

use server::TestServer;

type Inbox = Arc<Mutex<Vec<(HeaderMap, String)>>>;

async fn receiver() -> (String, Inbox) {
    let inbox = Inbox::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let app = Router::new()
        .route(
            "/hook",
            post(
                |State(inbox): State<Inbox>, headers: HeaderMap, body: Bytes| async move {
                    inbox
                        .lock()
                        .unwrap()
                        .push((headers, String::from_utf8(body.to_vec()).unwrap()));
                    AxumStatus::OK
                },
            ),
        )
        .with_state(inbox.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, inbox)
}

/// A server with webhooks, their delivery task running on the store's
/// change feed.
async fn start() -> TestServer {
    start_naming_photos(None).await
}

/// [`start`], its payloads naming photos by `links`.
async fn start_naming_photos(links: Option<MediaLinks>) -> TestServer {
    let config = ServerConfig {
        admin_token: Some(server::TOKEN.into()),
        rate_limit_per_minute: 0,
    };
    server::start_serving(config, Moderation::Off, None, async |state, engine| {
        let webhooks = Arc::new(Webhooks::new(
            SharedStore::new(engine.clone()),
            WebhookConfig {
                comments_table: "rave".into(),
                targets: TargetPolicy {
                    allow_private: true,
                },
                retry: RetryPolicy::default(),
                photo_links: links.map(|links| Arc::new(links) as Arc<dyn PhotoLinks>),
            },
        ));
        webhooks.ensure_table().await.unwrap();
        let feed = EngineFeed::open(engine.clone(), "rave", rave_webhooks::CONSUMER)
            .await
            .unwrap();
        let (stop, stopped) = tokio::sync::watch::channel(false);
        tokio::spawn(rave_webhooks::run(
            webhooks.clone(),
            feed,
            Timeouts::default(),
            stopped,
            tokio::sync::watch::channel(Default::default()).0,
        ));
        let kept: server::Kept = Box::new(stop);
        (state.with_webhooks(webhooks), Some(kept))
    })
    .await
}

#[tokio::test]
async fn endpoints_are_registered_listed_delivered_to_and_removed() {
    let server = start().await;
    let (url, inbox) = receiver().await;
    let (status, created) = server
        .call(
            Method::POST,
            "/v1/admin/webhooks",
            Some(json!({"url": url, "events": ["comment.created", "comment.published"]})),
            true,
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    let secret = Secret::parse(created["secret"].as_str().unwrap()).unwrap();

    let (status, listed) = server
        .call(Method::GET, "/v1/admin/webhooks", None, true)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(listed["webhooks"][0]["id"], id.as_str());
    assert!(
        listed["webhooks"][0].get("secret").is_none(),
        "the secret is shown once"
    );

    let (status, comment) = server
        .call(
            Method::POST,
            "/v1/products/p1/comments",
            Some(json!({"author": "ann", "language": "en", "rating": 5, "body": "great"})),
            false,
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{comment}");
    for _ in 0..100 {
        if inbox.lock().unwrap().len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let received = inbox.lock().unwrap().clone();
    let types: Vec<String> = received
        .iter()
        .map(|(_, body)| {
            serde_json::from_str::<Value>(body).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(types, ["comment.created", "comment.published"]);
    for (headers, body) in &received {
        let header = |name: &str| headers[name].to_str().unwrap().to_owned();
        let timestamp: i64 = header("webhook-timestamp").parse().unwrap();
        assert_eq!(
            header("webhook-signature"),
            secret.sign(&header("webhook-id"), timestamp, body.as_bytes())
        );
        assert_eq!(
            serde_json::from_str::<Value>(body).unwrap()["data"]["id"],
            comment["id"]
        );
    }

    let mut deliveries = Value::Null;
    for _ in 0..100 {
        let (status, body) = server
            .call(
                Method::GET,
                &format!("/v1/admin/webhooks/{id}/deliveries"),
                None,
                true,
            )
            .await;
        assert_eq!(status, StatusCode::OK);
        deliveries = body;
        let all_delivered = deliveries["deliveries"]
            .as_array()
            .is_some_and(|d| d.len() == 2 && d.iter().all(|d| d["status"] == "delivered"));
        if all_delivered {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let first = &deliveries["deliveries"][0];
    assert_eq!(first["status"], "delivered", "{deliveries}");
    assert_eq!(first["attempts"], 1);
    let (status, problem) = server
        .call(
            Method::POST,
            &format!(
                "/v1/admin/webhooks/{id}/deliveries/{}/retry",
                first["id"].as_str().unwrap()
            ),
            None,
            true,
        )
        .await;
    assert_eq!(
        status,
        StatusCode::CONFLICT,
        "only a failed delivery is sent again: {problem}"
    );

    let path = format!("/v1/admin/webhooks/{id}");
    assert_eq!(
        server.call(Method::DELETE, &path, None, true).await.0,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        server.call(Method::DELETE, &path, None, true).await.0,
        StatusCode::NOT_FOUND
    );
    let (_, listed) = server
        .call(Method::GET, "/v1/admin/webhooks", None, true)
        .await;
    assert_eq!(listed["webhooks"], json!([]));
}

#[tokio::test]
async fn bad_registrations_are_refused_with_problems() {
    let server = start().await;
    let cases = [
        (
            json!({"url": "ftp://example.com/", "events": ["comment.created"]}),
            "http",
        ),
        (
            json!({"url": "http://example.com/", "events": []}),
            "events",
        ),
        (
            json!({"url": "http://example.com/", "events": ["comment.liked"]}),
            "events",
        ),
        (
            json!({"url": "not a url", "events": ["comment.created"]}),
            "url",
        ),
    ];
    for (body, mentions) in cases {
        let (status, problem) = server
            .call(Method::POST, "/v1/admin/webhooks", Some(body.clone()), true)
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {problem}");
        assert!(
            problem["detail"].as_str().unwrap().contains(mentions),
            "{problem}"
        );
    }
    let (status, _) = server
        .call(Method::GET, "/v1/admin/webhooks", None, false)
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _) = server
        .call(
            Method::GET,
            "/v1/admin/webhooks/nope/deliveries",
            None,
            true,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_openapi_document_lists_the_webhook_routes() {
    let server = start().await;
    let (_, document) = server.call(Method::GET, "/openapi.json", None, false).await;
    let paths = &document["paths"];
    for (path, method) in [
        ("/v1/admin/webhooks", "post"),
        ("/v1/admin/webhooks", "get"),
        ("/v1/admin/webhooks/{id}", "delete"),
        ("/v1/admin/webhooks/{id}/deliveries", "get"),
        (
            "/v1/admin/webhooks/{id}/deliveries/{delivery_id}/retry",
            "post",
        ),
    ] {
        assert!(
            paths[path][method].is_object(),
            "{method} {path} is documented"
        );
    }
    // A created endpoint leads to the operations on it, by its id.
    let links = &paths["/v1/admin/webhooks"]["post"]["responses"]["201"]["links"];
    for (link, operation) in [
        ("ListDeliveries", "list_deliveries"),
        ("DeleteWebhook", "delete_webhook"),
        ("RetryDelivery", "retry_delivery"),
    ] {
        assert_eq!(links[link]["operationId"], operation, "{links}");
        assert_eq!(links[link]["parameters"]["id"], "$response.body#/id");
    }
    for path in [
        "/v1/admin/webhooks/{id}",
        "/v1/admin/webhooks/{id}/deliveries",
        "/v1/admin/webhooks/{id}/deliveries/{delivery_id}/retry",
    ] {
        let operation = paths[path].as_object().unwrap().values().next().unwrap();
        for status in ["400", "403", "404", "503"] {
            assert!(
                operation["responses"][status].is_object(),
                "{path} documents {status}"
            );
        }
    }
}

/// An import's comments are announced like any others, and the payloads
/// carry no reviewer's email (it lives apart from the comment).
#[tokio::test]
async fn imported_reviews_are_announced_without_their_emails() {
    let server = start().await;
    let (url, inbox) = receiver().await;
    let (status, created) = server
        .call(
            Method::POST,
            "/v1/admin/webhooks",
            Some(json!({"url": url, "events": ["comment.created"]})),
            true,
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let upload = server
        .client
        .post(format!(
            "{}/v1/admin/imports?from=okendo&language=en&product=gid://shopify/Product/7=plate-7&product=SKU-PLATE=plate",
            server.base
        ))
        .bearer_auth(server::TOKEN)
        .body(include_str!("../../rave-import/tests/fixtures/okendo.csv"))
        .send()
        .await
        .unwrap();
    assert_eq!(upload.status(), StatusCode::ACCEPTED);
    for _ in 0..200 {
        if inbox.lock().unwrap().len() >= 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let received = inbox.lock().unwrap().clone();
    assert_eq!(received.len(), 3, "one delivery per imported review");
    for (_, body) in &received {
        assert!(body.contains(r#""source":"okendo""#), "{body}");
        assert!(!body.contains("@example.com"), "{body}");
    }
}

/// The payloads a receiver has got so far, once there are `count`.
async fn payloads(inbox: &Inbox, count: usize) -> Vec<Value> {
    for _ in 0..200 {
        if inbox.lock().unwrap().len() >= count {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    inbox
        .lock()
        .unwrap()
        .iter()
        .map(|(_, body)| serde_json::from_str(body).unwrap())
        .collect()
}

#[tokio::test]
async fn payloads_carry_each_photo_with_its_size_status_and_urls() {
    const PUBLIC: &str = "https://reviews.shop.example";
    let server = start_naming_photos(Some(MediaLinks::served_at(PUBLIC))).await;
    let (url, inbox) = receiver().await;
    let (status, _) = server
        .call(
            Method::POST,
            "/v1/admin/webhooks",
            Some(json!({"url": url, "events": ["comment.created"]})),
            true,
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let dir = tempfile::tempdir().unwrap();
    let media = MediaStore::Disk(DiskStore::open(dir.path()).unwrap());
    let photo = photos::stored(&media, 640, 480, 9).await;
    let new = |media| NewComment {
        author: "ann".into(),
        language: "en".into(),
        rating: 5,
        title: None,
        body: "See the photo.".into(),
        created_at: None,
        attributes: Default::default(),
        media,
    };
    let with_photo = server
        .comments
        .create("p1", new(vec![photo.clone()]), None)
        .await
        .unwrap()
        .comment;
    let without = server
        .comments
        .create("p1", new(Vec::new()), None)
        .await
        .unwrap()
        .comment;
    let received = payloads(&inbox, 2).await;
    let data_of = |id: &str| {
        received
            .iter()
            .map(|payload| &payload["data"])
            .find(|data| data["id"] == id)
            .unwrap_or_else(|| panic!("no payload of {id}: {received:?}"))
            .clone()
    };
    let id = photo.id.as_str();
    assert_eq!(
        data_of(&with_photo.id)["media"],
        json!([{
            "id": id,
            "url": format!("{PUBLIC}/media/{id}/display.webp"),
            "thumbnail_url": format!("{PUBLIC}/media/{id}/thumb.webp"),
            "fallback_url": format!("{PUBLIC}/media/{id}/display.jpg"),
            "thumbnail_fallback_url": format!("{PUBLIC}/media/{id}/thumb.jpg"),
            "width": 640,
            "height": 480,
            "status": "published",
        }])
    );
    assert_eq!(data_of(&without.id)["media"], json!([]));
}
