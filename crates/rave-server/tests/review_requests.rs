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

/// `lamp` declares nothing and is in the family `lights`, which asks for
/// `quality` and `brightness`; `cable` asks for its own `durability`.
async fn declare_attributes(w: &World) {
    for (product, body) in [
        (
            "lights",
            json!({"name": "Lights", "attributes": [
                {"name": "quality", "kind": "rating"},
                {"name": "brightness", "kind": "choice",
                 "choices": ["too_dim", "just_right", "too_bright"]}
            ]}),
        ),
        ("lamp", json!({"name": "Desk lamp", "group": "lights"})),
        (
            "cable",
            json!({"name": "USB cable",
                   "attributes": [{"name": "durability", "kind": "rating"}]}),
        ),
    ] {
        let (status, answer) = w
            .server
            .call(
                Method::PUT,
                &format!("/v1/products/{product}"),
                Some(body),
                true,
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{answer}");
    }
}

/// An order's review link, its request sent.
async fn review_link(w: &World) -> String {
    put_order(w, order("A-1", "anna@example.com")).await;
    w.clock.set(T0 + 6 * DAY);
    w.scheduler.run_due().await.unwrap();
    w.outbox.0.lock().unwrap()[0].review_url.clone()
}

/// The section of the review page holding `product`'s form.
fn form_of<'a>(page: &'a str, product: &str) -> &'a str {
    page.split("<section>")
        .find(|section| section.contains(&format!("name=\"product\" value=\"{product}\"")))
        .unwrap_or_else(|| panic!("no form of {product} in {page}"))
}

/// The answers of the one comment on `product`.
async fn answers_on(w: &World, product: &str) -> Value {
    let (_, listing) = w
        .server
        .call(
            Method::GET,
            &format!("/v1/products/{product}/comments"),
            None,
            false,
        )
        .await;
    let items = listing["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{listing}");
    items[0]["attributes"].clone()
}

fn review_of(product: &'static str) -> Vec<(&'static str, &'static str)> {
    vec![
        ("product", product),
        ("language", "de"),
        ("rating", "4"),
        ("title", ""),
        ("body", "Gut."),
        ("author", "Anna E."),
    ]
}

#[tokio::test]
async fn the_review_form_asks_what_each_product_asks_and_takes_answers_in_both_encodings() {
    let w = world().await;
    declare_attributes(&w).await;
    let url = review_link(&w).await;
    let (status, page) = get_page(&w, &url).await;
    assert_eq!(status, StatusCode::OK);
    // The lamp asks its family's: a rating as 1-5, a choice as its
    // choices with their labels, each optional, in a fieldset.
    let lamp = form_of(&page, "lamp");
    assert!(
        lamp.contains("<fieldset><legend>More about it (each optional)</legend>"),
        "{lamp}"
    );
    assert!(
        lamp.contains(
            "<label>Quality <select name=\"attributes.quality\">\
             <option value=\"\" selected>No answer</option>\
             <option value=\"5\">★★★★★ 5</option>"
        ),
        "{lamp}"
    );
    assert!(
        lamp.contains(
            "<label>Brightness <select name=\"attributes.brightness\">\
             <option value=\"\" selected>No answer</option>\
             <option value=\"too_dim\">Too dim</option>\
             <option value=\"just_right\">Just right</option>\
             <option value=\"too_bright\">Too bright</option></select></label>"
        ),
        "{lamp}"
    );
    assert!(!lamp.contains("attributes.durability"), "{lamp}");
    let cable = form_of(&page, "cable");
    assert!(
        cable.contains("<select name=\"attributes.durability\">"),
        "{cable}"
    );
    assert!(!cable.contains("attributes.quality"), "{cable}");

    // Urlencoded, as a browser posts the form without photos.
    let mut lamp_review = review_of("lamp");
    lamp_review.extend([
        ("attributes.quality", "4"),
        ("attributes.brightness", "just_right"),
    ]);
    let (status, page) = post_form(&w, &url, &lamp_review).await;
    assert_eq!(status, StatusCode::CREATED, "{page}");
    assert_eq!(
        answers_on(&w, "lamp").await,
        json!({"quality": 4, "brightness": "just_right"})
    );
    // Multipart, as a browser posts it (an answer left at "No answer" is
    // sent empty and answers nothing).
    let mut cable_review = review_of("cable");
    cable_review.push(("attributes.durability", "2"));
    let (status, page) = post_with_photos(&w, &url, &cable_review, &[]).await;
    assert_eq!(status, StatusCode::CREATED, "{page}");
    assert_eq!(answers_on(&w, "cable").await, json!({"durability": 2}));
}

#[tokio::test]
async fn a_bad_answer_on_the_review_form_is_a_400_naming_the_field_and_stores_nothing() {
    let w = world().await;
    declare_attributes(&w).await;
    let url = review_link(&w).await;
    for (answers, expected) in [
        (
            vec![("attributes.quality", "9")],
            "attributes.quality: must be an integer from 1 to 5",
        ),
        (
            vec![("attributes.brightness", "huge")],
            "attributes.brightness: must be one of too_dim, just_right, too_bright",
        ),
        (
            vec![("attributes.durability", "3")],
            "attributes.durability: is not an attribute of this product",
        ),
        (
            vec![("attributes.quality", "4"), ("attributes.quality", "5")],
            "attributes.quality: is given twice",
        ),
    ] {
        let mut review = review_of("lamp");
        review.extend(answers.iter().copied());
        let (status, page) = post_form(&w, &url, &review).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answers:?}: {page}");
        assert!(page.contains(expected), "{answers:?}: {page}");
        // The same in multipart, but for the repeated part, which the
        // multipart reader refuses as given twice itself.
        let (status, page) = post_with_photos(&w, &url, &review, &[]).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answers:?}: {page}");
        assert!(page.contains(expected.split(':').next().unwrap()), "{page}");
    }
    // An answer part the order's products never ask for is refused by name.
    let mut review = review_of("lamp");
    review.push(("attributes.colour", "red"));
    let (status, page) = post_with_photos(&w, &url, &review, &[]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{page}");
    assert!(page.contains("attributes.colour"), "{page}");
    // A bad answer with a photo keeps no photo either.
    let mut review = review_of("lamp");
    review.push(("attributes.quality", "0"));
    let (status, page) =
        post_with_photos(&w, &url, &review, &[("lamp.jpg", images::jpeg(64, 48))]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{page}");
    assert!(page.contains("attributes.quality: must be"), "{page}");
    assert!(w.media.list().await.unwrap().is_empty());
    assert_eq!(w.server.stored().await, 0, "nothing stored");

    // Left unanswered, the review is taken.
    let mut review = review_of("lamp");
    review.extend([("attributes.quality", ""), ("attributes.brightness", "")]);
    let (status, page) = post_form(&w, &url, &review).await;
    assert_eq!(status, StatusCode::CREATED, "{page}");
    assert_eq!(answers_on(&w, "lamp").await, json!({}));
}

#[tokio::test]
async fn the_openapi_document_describes_the_review_forms_answers() {
    let w = world().await;
    let (_, document) = w
        .server
        .call(Method::GET, "/openapi.json", None, false)
        .await;
    let form = &document["components"]["schemas"]["ReviewUploadForm"];
    let answers = &form["additionalProperties"];
    assert_eq!(answers["type"], "string", "{form}");
    let post = document["paths"]["/review/{token}"]["post"]["description"]
        .as_str()
        .unwrap();
    assert!(post.contains("attributes.<name>"), "{post}");
}
