//! Review requests through real HTTP: orders in, the schedule run on a
//! clock moved by hand, the links a request carries (the review form,
//! one-click unsubscribe), and what the admin sees — never an address.

use std::sync::{Arc, Mutex};

use rave_comments::Moderation;
use rave_media::{DiskStore, MediaStore};
use rave_requests::{
    Catalog, Channel, Links, LookupFuture, ManualClock, RequestMessage, Requests, Schedule,
    Scheduler, SendFuture,
};
use rave_server::feeds::FeedSite;
use rave_server::{ReviewRequests, ServerConfig};
use rave_store::SharedStore;
use reqwest::multipart::{Form, Part};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

#[path = "common/client.rs"]
mod client;

#[path = "common/server.rs"]
mod server;

// The images of rave-media's own tests.
#[path = "../../rave-media/tests/common/mod.rs"]
mod images;

use server::{TOKEN, TestServer};

const DAY: u64 = 24 * 60 * 60 * 1000;
const T0: u64 = 1_790_000_000_000;

#[derive(Debug, Default)]
struct Outbox(Mutex<Vec<RequestMessage>>);

impl Channel for Outbox {
    fn send<'a>(&'a self, message: &'a RequestMessage) -> SendFuture<'a> {
        Box::pin(async move {
            self.0.lock().unwrap().push(message.clone());
            Ok(())
        })
    }
}

#[derive(Debug)]
struct NoNames;

impl Catalog for NoNames {
    fn product<'a>(&'a self, _: &'a str) -> LookupFuture<'a> {
        Box::pin(async { None })
    }
}

struct World {
    server: TestServer,
    clock: ManualClock,
    scheduler: Scheduler<SharedStore>,
    outbox: Arc<Outbox>,
    media: MediaStore,
    _media_dir: tempfile::TempDir,
}

async fn world() -> World {
    let media_dir = tempfile::tempdir().unwrap();
    let media = MediaStore::Disk(DiskStore::open(media_dir.path()).unwrap());
    let clock = ManualClock::at(T0);
    let links = Links::new([4; 32], "http://placeholder");
    let made: Arc<Mutex<Option<Arc<Requests<SharedStore>>>>> = Arc::default();
    let server = server::start_serving(
        ServerConfig {
            admin_token: Some(TOKEN.into()),
            rate_limit_per_minute: 0,
        },
        Moderation::Off,
        None,
        async |state, engine| {
            let requests = Arc::new(Requests::new(
                SharedStore::new(engine.clone()),
                "rave",
                Schedule::default(),
                Arc::new(clock.clone()),
            ));
            requests.ensure_table().await.unwrap();
            *made.lock().unwrap() = Some(requests.clone());
            let state = state
                .with_review_requests(ReviewRequests {
                    requests,
                    links: links.clone(),
                })
                .with_feed_site(FeedSite::new("https://reviews.shop.example", None).unwrap())
                .with_media(media.clone());
            (state, None)
        },
    )
    .await;
    let requests = made.lock().unwrap().take().unwrap();
    let outbox = Arc::new(Outbox::default());
    let scheduler = Scheduler::new(
        requests,
        outbox.clone(),
        Arc::new(NoNames),
        Links::new([4; 32], &server.base),
    );
    for (id, name) in [("lamp", "Desk lamp"), ("cable", "USB cable")] {
        let (status, _) = server
            .call(
                Method::PUT,
                &format!("/v1/products/{id}"),
                Some(json!({"name": name})),
                true,
            )
            .await;
        assert_eq!(status, StatusCode::OK);
    }
    World {
        server,
        clock,
        scheduler,
        outbox,
        media,
        _media_dir: media_dir,
    }
}

fn order(id: &str, email: &str) -> Value {
    json!({
        "order_id": id,
        "email": email,
        "name": "Anna Example",
        "locale": "de-DE",
        "delivered_at": "2026-09-20T10:00:00Z",
        "products": ["lamp", "cable"],
    })
}

/// T0 is 2026-09-21T13:46:40Z: the orders above were delivered the day before.
async fn put_order(w: &World, body: Value) -> (StatusCode, Value) {
    w.server
        .call(Method::POST, "/v1/admin/orders", Some(body), true)
        .await
}

async fn post_form(w: &World, url: &str, fields: &[(&str, &str)]) -> (StatusCode, String) {
    let response = w
        .server
        .client
        .post(url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(serde_urlencoded::to_string(fields).unwrap())
        .send()
        .await
        .unwrap();
    (response.status(), response.text().await.unwrap())
}

async fn get_page(w: &World, url: &str) -> (StatusCode, String) {
    let response = w.server.client.get(url).send().await.unwrap();
    let policy = response.headers().get("content-security-policy").cloned();
    assert!(policy.is_some(), "{url} carries the pages' policy");
    (response.status(), response.text().await.unwrap())
}

#[tokio::test]
async fn an_order_becomes_a_request_whose_link_posts_a_verified_review() {
    let w = world().await;
    let (status, body) = put_order(&w, order("A-1", "anna@example.com")).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["outcome"], "created");
    let (status, body) = put_order(&w, order("A-1", "anna@example.com")).await;
    assert_eq!(
        (status, body["outcome"].as_str()),
        (StatusCode::OK, Some("unchanged"))
    );

    w.clock.set(T0 + 6 * DAY);
    assert_eq!(w.scheduler.run_due().await.unwrap().sent, 1);
    let message = w.outbox.0.lock().unwrap()[0].clone();
    assert_eq!(message.order.language(), "de");

    let (status, page) = get_page(&w, &message.review_url).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.contains("Desk lamp") && page.contains("USB cable"),
        "{page}"
    );
    assert_eq!(
        page.matches("<form method=\"post\" enctype=\"multipart/form-data\">")
            .count(),
        2
    );

    let review = [
        ("product", "lamp"),
        ("language", "de"),
        ("rating", "4"),
        ("title", "Hell"),
        ("body", "Gutes Licht."),
        ("author", "Anna E."),
    ];
    let (status, page) = post_form(&w, &message.review_url, &review).await;
    assert_eq!(status, StatusCode::CREATED, "{page}");
    assert_eq!(
        page.matches("<form method=\"post\" enctype=\"multipart/form-data\">")
            .count(),
        1
    );
    let (status, _) = post_form(&w, &message.review_url, &review).await;
    assert_eq!(status, StatusCode::CONFLICT);
    let mut elsewhere = review;
    elsewhere[0] = ("product", "sofa");
    let (status, _) = post_form(&w, &message.review_url, &elsewhere).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    let (_, listing) = w
        .server
        .call(Method::GET, "/v1/products/lamp/comments", None, false)
        .await;
    let comments = listing["items"].as_array().unwrap();
    assert_eq!(comments.len(), 1);
    assert_eq!(comments[0]["verified_purchase"], true);
    assert_eq!(comments[0]["author"], "Anna E.");
    let id = comments[0]["id"].as_str().unwrap();
    let (_, comment) = w
        .server
        .call(Method::GET, &format!("/v1/comments/{id}"), None, false)
        .await;
    assert_eq!(comment["source"], "review-request");
    let feed = w
        .server
        .client
        .get(format!(
            "{}/v1/feeds/google-product-reviews.xml",
            w.server.base
        ))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        feed.contains("<collection_method>post_fulfillment</collection_method>"),
        "{feed}"
    );

    // Reviewed: no reminder.
    w.clock.set(T0 + 13 * DAY);
    let pass = w.scheduler.run_due().await.unwrap();
    assert_eq!((pass.sent, pass.skipped), (0, 1));

    let (_, conversion) = w
        .server
        .call(Method::GET, "/v1/admin/requests/products", None, true)
        .await;
    let lamp = conversion["products"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["product_id"] == "lamp")
        .unwrap()
        .clone();
    assert_eq!(
        (lamp["requested"].as_u64(), lamp["reviewed"].as_u64()),
        (Some(1), Some(1))
    );
    let (_, sent) = w
        .server
        .call(Method::GET, "/v1/admin/requests?status=sent", None, true)
        .await;
    assert_eq!(sent["requests"].as_array().unwrap().len(), 1);
    assert!(!sent.to_string().contains("anna@example.com"));
    assert!(!conversion.to_string().contains("anna@example.com"));

    // Erasing the author erases the order, its address and its requests.
    let (status, _) = w
        .server
        .call(Method::DELETE, "/v1/authors/Anna%20E./comments", None, true)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(get_page(&w, &message.review_url).await.0, StatusCode::GONE);
    let (_, sent) = w
        .server
        .call(Method::GET, "/v1/admin/requests?status=sent", None, true)
        .await;
    assert_eq!(sent["requests"], json!([]));

    // Expired after 60 days; forged always.
    w.clock.set(T0 + 6 * DAY + 61 * DAY);
    assert_eq!(get_page(&w, &message.review_url).await.0, StatusCode::GONE);
    let forged = format!("{}x", message.review_url);
    assert_eq!(get_page(&w, &forged).await.0, StatusCode::NOT_FOUND);
}

/// The review form as a browser posts it with files chosen: multipart,
/// its fields and `photo` parts (an empty one for an input left empty).
async fn post_with_photos(
    w: &World,
    url: &str,
    fields: &[(&str, &str)],
    photos: &[(&str, Vec<u8>)],
) -> (StatusCode, String) {
    let mut form = Form::new();
    for (name, value) in fields {
        form = form.text(name.to_string(), value.to_string());
    }
    for (file_name, bytes) in photos {
        form = form.part(
            "photo",
            Part::bytes(bytes.clone()).file_name(file_name.to_string()),
        );
    }
    let response = w
        .server
        .client
        .post(url)
        .multipart(form)
        .send()
        .await
        .unwrap();
    (response.status(), response.text().await.unwrap())
}

#[tokio::test]
async fn the_review_form_takes_photos_with_the_same_checks() {
    let w = world().await;
    put_order(&w, order("A-1", "anna@example.com")).await;
    w.clock.set(T0 + 6 * DAY);
    w.scheduler.run_due().await.unwrap();
    let message = w.outbox.0.lock().unwrap()[0].clone();
    let (_, page) = get_page(&w, &message.review_url).await;
    assert!(
        page.contains("<input type=\"file\" name=\"photo\" accept=\"image/jpeg,image/png,image/webp\" multiple>"),
        "{page}"
    );
    let review = [
        ("product", "lamp"),
        ("language", "de"),
        ("rating", "5"),
        ("title", ""),
        ("body", "Gutes Licht, siehe Foto."),
        ("author", "Anna E."),
    ];

    let markup = b"<html><script>alert(1)</script></html>".to_vec();
    let (status, page) =
        post_with_photos(&w, &message.review_url, &review, &[("lamp.jpg", markup)]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{page}");
    assert!(page.contains("photo[1]: the file is markup"), "{page}");
    assert!(w.media.list().await.unwrap().is_empty());

    let (status, page) = post_with_photos(
        &w,
        &message.review_url,
        &review,
        &[("lamp.jpg", images::jpeg(320, 240)), ("", Vec::new())],
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{page}");
    let (_, listing) = w
        .server
        .call(Method::GET, "/v1/products/lamp/comments", None, false)
        .await;
    let media = &listing["items"][0]["media"];
    assert_eq!(media.as_array().map(Vec::len), Some(1), "{listing}");
    assert_eq!(
        (media[0]["width"].as_u64(), media[0]["height"].as_u64()),
        (Some(320), Some(240))
    );
    assert_eq!(w.media.list().await.unwrap().len(), 4);
}

#[tokio::test]
async fn one_click_unsubscribe_stops_every_later_request_to_the_address() {
    let w = world().await;
    put_order(&w, order("A-1", "anna@example.com")).await;
    w.clock.set(T0 + 6 * DAY);
    w.scheduler.run_due().await.unwrap();
    let message = w.outbox.0.lock().unwrap()[0].clone();
    let (status, page) = get_page(&w, &message.unsubscribe_url).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("Unsubscribe"));
    let (status, _) = post_form(
        &w,
        &message.unsubscribe_url,
        &[("List-Unsubscribe", "One-Click")],
    )
    .await;
    assert_eq!(status, StatusCode::OK);

    let mut later = order("A-2", "Anna@Example.com");
    later["delivered_at"] = json!("2026-09-27T10:00:00Z");
    assert_eq!(put_order(&w, later).await.0, StatusCode::CREATED);
    w.clock.set(T0 + 30 * DAY);
    let pass = w.scheduler.run_due().await.unwrap();
    assert_eq!(pass.sent, 0);
    assert_eq!(w.outbox.0.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn bad_orders_are_refused_and_store_nothing() {
    let w = world().await;
    let cases = [
        ("email", json!({"email": "anna"})),
        ("products", json!({"products": ["sofa"]})),
        ("products", json!({"products": []})),
        (
            "delivered_at",
            json!({"delivered_at": "2027-09-20T10:00:00Z"}),
        ),
        (
            "delivered_at",
            json!({"delivered_at": "2025-01-01T10:00:00Z"}),
        ),
        ("delivered_at", json!({"delivered_at": "yesterday"})),
        ("locale", json!({"locale": "deutsch!"})),
    ];
    for (field, change) in cases {
        let mut body = order("B-1", "ben@example.com");
        for (key, value) in change.as_object().unwrap() {
            body[key] = value.clone();
        }
        let (status, problem) = put_order(&w, body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{field}: {problem}");
        assert!(
            problem["detail"].as_str().unwrap().starts_with(field),
            "{problem}"
        );
    }
    let (status, _) = w
        .server
        .call(Method::DELETE, "/v1/admin/orders/B-1", None, true)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "nothing was stored");
    w.clock.set(T0 + 30 * DAY);
    assert_eq!(w.scheduler.run_due().await.unwrap().sent, 0);

    // Orders need the scope import.
    let (status, token) = w
        .server
        .call(
            Method::POST,
            "/v1/admin/tokens",
            Some(json!({"name": "support", "scopes": ["moderate"]})),
            true,
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, _) = client::call(
        &w.server.client,
        Method::POST,
        format!("{}/v1/admin/orders", w.server.base),
        Some(order("B-2", "ben@example.com")),
        token["token"].as_str(),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn a_cancelled_order_gets_nothing_and_its_link_stops_working() {
    let w = world().await;
    put_order(&w, order("A-1", "anna@example.com")).await;
    w.clock.set(T0 + 6 * DAY);
    w.scheduler.run_due().await.unwrap();
    let message = w.outbox.0.lock().unwrap()[0].clone();
    let (status, _) = w
        .server
        .call(Method::DELETE, "/v1/admin/orders/A-1", None, true)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(get_page(&w, &message.review_url).await.0, StatusCode::GONE);
    w.clock.set(T0 + 13 * DAY);
    assert_eq!(w.scheduler.run_due().await.unwrap().sent, 0);
    let (_, trail) = w
        .server
        .call(Method::GET, "/v1/admin/audit?target=order:A-1", None, true)
        .await;
    let actions: Vec<&str> = trail["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["order.cancel", "order.put"]);
    assert!(!trail.to_string().contains("anna@example.com"));
}
