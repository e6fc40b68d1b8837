//! Google's Product Reviews Feed over real HTTP: validated against the 2.4
//! schema with xmllint (scripts/test.sh installs it) for an empty shop, a
//! shop with hostile text and a shop of 10,000 reviews; which comments it
//! holds by status; who may fetch it; reviewers' photos.

#[path = "common/photos.rs"]
mod photos;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use rave_access::{Access, AccessConfig};
use rave_comments::dataset::Generator;
use rave_comments::rules::{Outcome, Rules};
use rave_comments::{
    Comment, Comments, Config, CursorKey, Moderation, NewComment, NewPhoto, Status,
};
use rave_engine::Engine;
use rave_media::{DiskStore, MediaStore};
use rave_server::feeds::FeedSite;
use rave_server::{AppState, ServerConfig};
use rave_store::SharedStore;
use reqwest::{Client, Method, StatusCode, header};
use serde_json::{Value, json};

const TOKEN: &str = "feeds-admin-token";
const PUBLIC: &str = "https://reviews.shop.example";
const FEED: &str = "/v1/feeds/google-product-reviews.xml";

struct Server {
    base: String,
    client: Client,
    comments: Arc<Comments<SharedStore>>,
    _dir: tempfile::TempDir,
}

async fn start(site: Option<FeedSite>) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path()).unwrap();
    let mut rules = Rules::new();
    rules.max_links = Some((0, Outcome::Hold));
    let comments = Arc::new(
        Comments::new(
            SharedStore::new(engine.clone()),
            Config {
                table: "rave".into(),
                cursor_key: CursorKey::new([3; 32]),
                moderation: Moderation::Off,
            },
        )
        .with_rules(Arc::new(rules)),
    );
    comments.ensure_table().await.unwrap();
    let access = Arc::new(Access::new(
        SharedStore::new(engine.clone()),
        AccessConfig::for_table("rave"),
    ));
    access.ensure_table().await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let config = ServerConfig {
        admin_token: Some(TOKEN.into()),
        rate_limit_per_minute: 0,
    };
    let mut state = AppState::new(comments.clone(), access, &config).with_feed_token(FEED_TOKEN);
    if let Some(site) = site {
        state = state.with_feed_site(site);
    }
    tokio::spawn(rave_server::serve(
        listener,
        state,
        std::future::pending(),
        rave_server::DEFAULT_DRAIN,
    ));
    Server {
        base,
        client: Client::new(),
        comments,
        _dir: dir,
    }
}

/// `--feed-token`: reads the feeds and nothing else.
const FEED_TOKEN: &str = "merchant-center-reads-this";

fn site() -> FeedSite {
    FeedSite::new(PUBLIC, Some("Kettle & Co. \"Shop\"")).unwrap()
}

impl Server {
    async fn json(&self, method: Method, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        let mut request = self
            .client
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(TOKEN);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        let status = response.status();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    async fn post(&self, product: &str, author: &str, title: &str, body: &str) -> String {
        let (status, created) = self
            .json(
                Method::POST,
                &format!("/v1/products/{product}/comments"),
                Some(json!({"author": author, "language": "en", "rating": 4, "title": title, "body": body})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{created}");
        created["id"].as_str().unwrap().to_owned()
    }

    /// The feed, saved to a file that xmllint reads.
    async fn feed(&self, dir: &Path) -> Feed {
        let response = self
            .client
            .get(format!("{}{FEED}", self.base))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            "application/xml; charset=utf-8"
        );
        let path = dir.join("feed.xml");
        std::fs::write(&path, response.bytes().await.unwrap()).unwrap();
        Feed(path)
    }
}

/// Google's schema, version 2.4 (see the fixture's README for its source).
fn schema() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/google-product-reviews/product_reviews.xsd")
}

fn xmllint(args: &[&str], file: &Path) -> std::process::Output {
    Command::new("xmllint")
        .args(args)
        .arg(file)
        .output()
        .expect("xmllint is missing: scripts/test.sh installs it (Debian package libxml2-utils)")
}

/// A feed written to a file, read back with xmllint.
struct Feed(PathBuf);

impl Feed {
    fn assert_valid(&self) {
        let schema = schema();
        let output = xmllint(&["--noout", "--schema", schema.to_str().unwrap()], &self.0);
        assert!(
            output.status.success(),
            "the feed does not validate: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// The string value of an XPath expression (xmllint ends it with a
    /// line feed of its own).
    fn xpath(&self, expression: &str) -> String {
        let output = xmllint(&["--xpath", &format!("string({expression})")], &self.0);
        let text = String::from_utf8(output.stdout).unwrap();
        text.strip_suffix('\n').unwrap_or(&text).to_owned()
    }

    fn count(&self, expression: &str) -> u64 {
        let output = xmllint(&["--xpath", &format!("count({expression})")], &self.0);
        let text = String::from_utf8(output.stdout).unwrap();
        text.trim()
            .parse()
            .unwrap_or_else(|_| panic!("count({expression}): {text:?}"))
    }

    fn review(&self, id: &str, path: &str) -> String {
        self.xpath(&format!("/feed/reviews/review[review_id='{id}']/{path}"))
    }

    fn text(&self) -> String {
        std::fs::read_to_string(&self.0).unwrap()
    }
}

#[tokio::test]
async fn the_feed_and_the_product_identifiers_are_in_the_openapi_document() {
    let s = start(None).await;
    let (_, document) = s.json(Method::GET, "/openapi.json", None).await;
    let feed = &document["paths"][FEED]["get"];
    assert!(
        feed["responses"]["200"]["content"]["application/xml"].is_object(),
        "{feed}"
    );
    assert_eq!(feed["security"][0]["access_token"], json!(["feed"]));
    let body = &document["components"]["schemas"]["PutProductBody"]["properties"];
    for field in ["gtins", "mpns", "skus", "brand"] {
        assert!(body[field].is_object(), "{field}");
    }
    assert_eq!(body["gtins"]["maxItems"], 20);
    assert_eq!(
        document["components"]["schemas"]["Gtin"]["pattern"],
        "^([0-9]{8}|[0-9]{12,14})$"
    );
}

#[test]
fn the_schema_accepts_googles_own_sample_feed() {
    let sample = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/google-product-reviews/google-sample-2.4.xml");
    Feed(sample).assert_valid();
}

#[tokio::test]
async fn an_empty_shop_has_a_valid_feed_and_only_the_admin_fetches_it() {
    let s = start(Some(site())).await;
    let dir = tempfile::tempdir().unwrap();
    let feed = s.feed(dir.path()).await;
    feed.assert_valid();
    assert_eq!(feed.count("/feed/reviews"), 0, "no empty <reviews>");
    assert_eq!(feed.xpath("/feed/version"), "2.4");
    assert_eq!(feed.xpath("/feed/publisher/name"), "Kettle & Co. \"Shop\"");

    let anonymous = s
        .client
        .get(format!("{}{FEED}", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    let wrong = s
        .client
        .get(format!("{}{FEED}", s.base))
        .bearer_auth("not-the-token")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);

    let without_site = start(None).await;
    let (status, problem) = without_site.json(Method::GET, FEED, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(
        problem["detail"].as_str().unwrap().contains("--public-url"),
        "{problem}"
    );
}

#[tokio::test]
async fn hostile_text_is_escaped_stripped_of_what_xml_forbids_and_validates() {
    let s = start(Some(site())).await;
    let (status, _) = s
        .json(
            Method::PUT,
            "/v1/products/kettle",
            Some(json!({
                "name": "Kettle <b>\"1.7 l\"</b> & ]]> 'steel'",
                "url": "https://shop.example/kettle?colour=red&size=l",
                "gtins": ["4006381333931", "96385074"],
                "mpns": ["KT<100>&"],
                "skus": ["sku\"1'", "sku]]>2"],
                "brand": "Acme & Söhne <GmbH>"
            })),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let body = "Quotes \" ' <script>alert(1)</script> & &amp; ]]> <![CDATA[x]]> \
                controls [\u{0}\u{1}\u{8}\u{B}\u{C}\u{1F}] kept [\t\u{7F}\u{85}] \
                emoji 🫖👍🏽 RTL \u{200F}\u{202E}עברית\u{202C} noncharacters [\u{FFFE}\u{FFFF}]";
    let stripped = body
        .replace(['\u{0}', '\u{1}', '\u{8}', '\u{B}', '\u{C}', '\u{1F}'], "")
        .replace(['\u{FFFE}', '\u{FFFF}'], "");
    let hostile = s
        .post(
            "kettle",
            "Eve \"<admin>\" & 'co' 🫖",
            "]]> <title> & \u{2}",
            body,
        )
        .await;
    let blank_author = s.post("kettle", "   ", "", "fine").await;
    let nothing_left = s.post("kettle", "mallory", "", "\u{1}\u{2}\u{3}").await;
    let plain = s.post("mug", "bob", "", "A plain mug.").await;

    let dir = tempfile::tempdir().unwrap();
    let feed = s.feed(dir.path()).await;
    feed.assert_valid();
    assert_eq!(feed.count("/feed/reviews/review"), 3, "{}", feed.text());
    assert_eq!(feed.review(&hostile, "content"), stripped);
    assert_eq!(feed.review(&hostile, "title"), "]]> <title> & ");
    assert_eq!(
        feed.review(&hostile, "reviewer/name"),
        "Eve \"<admin>\" & 'co' 🫖"
    );
    assert_eq!(feed.review(&blank_author, "reviewer/name"), "Anonymous");
    assert_eq!(
        feed.review(&blank_author, "reviewer/name/@is_anonymous"),
        "true"
    );
    assert_eq!(
        feed.count(&format!("//review[review_id='{nothing_left}']")),
        0
    );
    let product = |path: &str| feed.review(&hostile, &format!("products/product/{path}"));
    assert_eq!(
        product("product_name"),
        "Kettle <b>\"1.7 l\"</b> & ]]> 'steel'"
    );
    assert_eq!(
        product("product_url"),
        "https://shop.example/kettle?colour=red&size=l"
    );
    assert_eq!(product("product_ids/gtins/gtin[1]"), "4006381333931");
    assert_eq!(product("product_ids/gtins/gtin[2]"), "96385074");
    assert_eq!(product("product_ids/mpns/mpn"), "KT<100>&");
    assert_eq!(product("product_ids/skus/sku[2]"), "sku]]>2");
    assert_eq!(product("product_ids/brands/brand"), "Acme & Söhne <GmbH>");
    // A product without a record: rave's page, no identifiers.
    assert_eq!(
        feed.review(&plain, "products/product/product_url"),
        format!("{PUBLIC}/products/mug")
    );
    assert_eq!(
        feed.count(&format!("//review[review_id='{plain}']//product_ids")),
        0
    );
    // No raw markup from the text reached the document.
    let text = feed.text();
    assert!(!text.contains("<script>") && !text.contains("<b>") && !text.contains("<![CDATA[x"));
    assert!(!text.contains('\u{1}') && !text.contains('\u{FFFE}'));
}

#[tokio::test]
async fn the_feed_holds_visible_and_spam_held_comments_and_nothing_else() {
    let s = start(Some(site())).await;
    let published = s.post("p", "ann", "Good", "Boils fast.").await;
    let flagged = s.post("p", "ben", "", "Flag me.").await;
    let (status, _) = s
        .json(Method::POST, &format!("/v1/comments/{flagged}/flag"), None)
        .await;
    assert_eq!(status, StatusCode::OK);
    let held = s
        .post("p", "spammer", "", "Cheap at http://spam.example")
        .await;
    let (_, held_comment) = s
        .json(Method::GET, &format!("/v1/comments/{held}"), None)
        .await;
    assert_eq!(held_comment["status"], "pending", "{held_comment}");
    let rejected = s.post("p", "carl", "", "Reject me.").await;
    let (status, _) = s
        .json(
            Method::POST,
            &format!("/v1/comments/{rejected}/reject"),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let erased = s.post("p", "gone", "", "Erase me.").await;
    let (status, _) = s
        .json(Method::DELETE, "/v1/authors/gone/comments", None)
        .await;
    assert!(status.is_success(), "{status}");
    let (status, _) = s
        .json(
            Method::PUT,
            &format!("/v1/comments/{published}/reply"),
            Some(json!({"body": "Thanks from the merchant!"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    // Awaiting a person's approval without a rule's verdict, and a verified
    // purchase, as an import brings them.
    let mut generator = Generator::new(1, 10, 7);
    let mut awaiting = generator.next_comment();
    awaiting.product = "p".into();
    awaiting.status = Some(Status::Pending);
    let mut verified = generator.next_comment();
    verified.product = "p".into();
    verified.verified_purchase = true;
    verified.incentivized = true;
    let ids = s
        .comments
        .import(vec![awaiting, verified])
        .await
        .unwrap()
        .ids;
    let (awaiting, verified) = (ids[0].clone(), ids[1].clone());
    let (status, _) = s
        .json(
            Method::PUT,
            &format!("/v1/comments/{flagged}/incentivized"),
            Some(json!({"incentivized": true})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);

    let dir = tempfile::tempdir().unwrap();
    let feed = s.feed(dir.path()).await;
    feed.assert_valid();
    let mut listed: Vec<String> = (1..=feed.count("/feed/reviews/review"))
        .map(|i| feed.xpath(&format!("/feed/reviews/review[{i}]/review_id")))
        .collect();
    listed.sort();
    let mut expected = vec![
        published.clone(),
        flagged.clone(),
        held.clone(),
        verified.clone(),
    ];
    expected.sort();
    assert_eq!(listed, expected, "not {rejected}, {erased} or {awaiting}");
    for id in [&published, &flagged, &verified] {
        assert_eq!(feed.review(id, "is_spam"), "false");
    }
    assert_eq!(feed.review(&held, "is_spam"), "true");
    assert_eq!(feed.review(&verified, "is_verified_purchase"), "true");
    assert_eq!(feed.review(&published, "is_verified_purchase"), "false");
    assert_eq!(feed.count("//review[collection_method='unsolicited']"), 4);
    // Marked by staff (flagged) and by the import (verified).
    for (id, incentivized) in [
        (&published, "false"),
        (&flagged, "true"),
        (&verified, "true"),
    ] {
        assert_eq!(feed.review(id, "is_incentivized_review"), incentivized);
    }
    assert!(
        !feed.text().contains("Thanks from the merchant"),
        "replies stay out"
    );
    assert_eq!(
        feed.review(&published, "review_url"),
        format!("{PUBLIC}/products/p#comment-{published}")
    );
    assert_eq!(feed.review(&published, "review_url/@type"), "singleton");
    assert_eq!(feed.review(&published, "ratings/overall"), "4");
    assert_eq!(feed.review(&published, "ratings/overall/@min"), "1");
    assert_eq!(feed.review(&published, "ratings/overall/@max"), "5");
    assert_eq!(feed.review(&published, "title"), "Good");
    assert_eq!(
        feed.count(&format!("//review[review_id='{flagged}']/title")),
        0
    );
    let (_, shown) = s
        .json(Method::GET, &format!("/v1/comments/{published}"), None)
        .await;
    assert_eq!(
        feed.review(&published, "review_timestamp"),
        shown["created_at"]
    );
    // The anchor the review URL names is on the product page.
    let page = s
        .client
        .get(format!("{}/products/p", s.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains(&format!("id=\"comment-{published}\"")));
}

#[tokio::test]
async fn a_shop_of_ten_thousand_reviews_validates() {
    let s = start(Some(site())).await;
    let mut generator = Generator::new(50, 10_000, 11);
    for _ in 0..20 {
        let batch: Vec<_> = (0..500).map(|_| generator.next_comment()).collect();
        s.comments.import(batch).await.unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let feed = s.feed(dir.path()).await;
    feed.assert_valid();
    assert_eq!(feed.count("/feed/reviews/review"), 10_000);
    assert_eq!(feed.count("//review[is_spam='true']"), 0);
}

#[tokio::test]
async fn merchant_center_fetches_with_the_feed_token_as_a_basic_password_and_nothing_more() {
    let s = start(Some(site())).await;
    let fetched = s
        .client
        .get(format!("{}{FEED}", s.base))
        .basic_auth("merchant-center", Some(FEED_TOKEN))
        .send()
        .await
        .unwrap();
    assert_eq!(fetched.status(), StatusCode::OK);
    let bearer = s
        .client
        .get(format!("{}{FEED}", s.base))
        .bearer_auth(FEED_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(bearer.status(), StatusCode::OK);
    let wrong = s
        .client
        .get(format!("{}{FEED}", s.base))
        .basic_auth("merchant-center", Some("guess"))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);

    // The feed token opens nothing else.
    let queue = s
        .client
        .get(format!("{}/v1/moderation/queue", s.base))
        .bearer_auth(FEED_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(queue.status(), StatusCode::FORBIDDEN);
}

impl Server {
    /// A comment with photos, written through the domain as an upload's
    /// would be once its photos are stored.
    async fn post_with_photos(&self, author: &str, body: &str, media: Vec<NewPhoto>) -> Comment {
        self.comments
            .create(
                "p",
                NewComment {
                    author: author.into(),
                    language: "en".into(),
                    rating: 5,
                    title: None,
                    body: body.into(),
                    created_at: None,
                    attributes: Default::default(),
                    media,
                },
                None,
            )
            .await
            .unwrap()
            .comment
    }
}

#[tokio::test]
async fn published_photos_are_reviewer_images_under_the_public_url_and_validate() {
    let s = start(Some(site())).await;
    let dir = tempfile::tempdir().unwrap();
    let media = MediaStore::Disk(DiskStore::open(dir.path().join("media")).unwrap());
    let first = photos::stored(&media, 640, 480, 7).await;
    let second = photos::stored(&media, 300, 400, 8).await;
    let shown = s
        .post_with_photos("ann", "Two photos.", vec![first.clone(), second.clone()])
        .await;
    // Held by the link rule: in the feed as spam, its photo still waiting.
    let held = s
        .post_with_photos(
            "spammer",
            "Cheap at http://spam.example",
            vec![first.clone()],
        )
        .await;
    assert_eq!(held.status, Status::Pending);
    let plain = s.post("p", "ben", "", "No photos.").await;
    let feed = s.feed(dir.path()).await;
    feed.assert_valid();
    assert_eq!(
        feed.count(&format!(
            "/feed/reviews/review[review_id='{}']/reviewer_images/reviewer_image",
            shown.id
        )),
        2
    );
    for (at, photo) in [(1, &first), (2, &second)] {
        assert_eq!(
            feed.review(
                &shown.id,
                &format!("reviewer_images/reviewer_image[{at}]/url")
            ),
            format!("{PUBLIC}/media/{}/display.jpg", photo.id)
        );
    }
    // After review_url and before ratings, as the schema orders them.
    let images = format!(
        "/feed/reviews/review[review_id='{}']/reviewer_images",
        shown.id
    );
    assert_eq!(
        feed.count(&format!(
            "{images}/preceding-sibling::*[1][self::review_url]"
        )),
        1
    );
    assert_eq!(
        feed.count(&format!("{images}/following-sibling::*[1][self::ratings]")),
        1
    );
    for id in [&held.id, &plain] {
        assert_eq!(
            feed.count(&format!(
                "/feed/reviews/review[review_id='{id}']/reviewer_images"
            )),
            0,
            "{id}"
        );
    }
}
