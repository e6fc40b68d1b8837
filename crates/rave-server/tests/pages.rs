//! The product pages as crawlers, caches and shops see them, over real
//! HTTP with an aggregator keeping the statistics: following "older"
//! links, the structured data read by an independent extractor (extruct),
//! ETags and 304s on every cacheable route, hostile text, product records,
//! CORS preflights, and comments' photos as thumbnails.

#[path = "common/photos.rs"]
mod photos;

use std::sync::Arc;
use std::time::{Duration, Instant};

use rave_access::{Access, AccessConfig};
use rave_comments::{Comments, Config, CursorKey, Moderation, NewComment, NewPhoto};
use rave_engine::{Engine, EngineFeed};
use rave_media::{DiskStore, MediaStore};
use rave_server::{AllowedOrigin, AppState, MediaLinks, ServerConfig};
use rave_store::SharedStore;
use reqwest::header::{self, HeaderMap};
use reqwest::{Client, Method, StatusCode};
use serde_json::{Value, json};

const TOKEN: &str = "pages-admin-token";
const SHOP: &str = "http://shop.test:8080";

struct Server {
    base: String,
    client: Client,
    comments: Arc<Comments<SharedStore>>,
    /// The photos `/media` serves.
    media: MediaStore,
    _dir: tempfile::TempDir,
}

async fn start() -> Server {
    start_with(None, Moderation::Off).await
}

/// A server naming photos by `links` (rave's own `/media` path without).
async fn start_with(links: Option<MediaLinks>, moderation: Moderation) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let media = MediaStore::Disk(DiskStore::open(dir.path().join("media")).unwrap());
    let engine = Engine::open(dir.path()).unwrap();
    let comments = Arc::new(Comments::new(
        SharedStore::new(engine.clone()),
        Config {
            table: "rave".into(),
            cursor_key: CursorKey::new([9; 32]),
            moderation,
        },
    ));
    comments.ensure_table().await.unwrap();
    let access = Arc::new(Access::new(
        SharedStore::new(engine.clone()),
        AccessConfig::for_table("rave"),
    ));
    access.ensure_table().await.unwrap();
    let feed = EngineFeed::open(engine, "rave", "statistics")
        .await
        .unwrap();
    {
        let comments = comments.clone();
        tokio::spawn(async move {
            loop {
                let _ = comments
                    .aggregate_once(&feed, Duration::from_millis(20))
                    .await;
            }
        });
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let config = ServerConfig {
        admin_token: Some(TOKEN.into()),
        rate_limit_per_minute: 0,
    };
    let mut state = AppState::new(comments.clone(), access, &config)
        .with_allowed_origins(vec![SHOP.parse::<AllowedOrigin>().unwrap()])
        .with_media(media.clone());
    if let Some(links) = links {
        state = state.with_media_links(links);
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
        media,
        _dir: dir,
    }
}

impl Server {
    async fn fetch(&self, path: &str, headers: &[(&str, &str)]) -> (StatusCode, HeaderMap, String) {
        let mut request = self.client.get(format!("{}{path}", self.base));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.send().await.unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        (status, headers, response.text().await.unwrap())
    }

    async fn page(&self, path: &str) -> String {
        let (status, headers, body) = self.fetch(path, &[]).await;
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
        assert_eq!(headers[header::CONTENT_TYPE], "text/html; charset=utf-8");
        body
    }

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

    async fn post(&self, product: &str, body: Value) -> Value {
        let (status, created) = self
            .json(
                Method::POST,
                &format!("/v1/products/{product}/comments"),
                Some(body),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{created}");
        created
    }

    /// Waits until the aggregator has counted `total` comments of `product`.
    async fn settle(&self, product: &str, total: u64) -> Value {
        let started = Instant::now();
        loop {
            let (_, stats) = self
                .json(Method::GET, &format!("/v1/products/{product}/stats"), None)
                .await;
            if stats["total"] == total {
                // Let the aggregator finish anything behind the counts too.
                tokio::time::sleep(Duration::from_millis(100)).await;
                return stats;
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "statistics stuck at {stats}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

fn comment(author: &str, language: &str, rating: u8, title: &str, body: &str) -> Value {
    json!({"author": author, "language": language, "rating": rating, "title": title, "body": body})
}

/// `&amp;` and friends back to text, for hrefs read out of the HTML.
fn unescape(text: &str) -> String {
    text.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The value of the first `attribute="…"` after `marker`.
fn attribute_after(html: &str, marker: &str, attribute: &str) -> Option<String> {
    let at = html.find(marker)?;
    let rest = &html[at..];
    let start = rest.find(&format!("{attribute}=\""))? + attribute.len() + 2;
    let end = rest[start..].find('"')?;
    Some(unescape(&rest[start..start + end]))
}

/// The ids of the comments a page lists, in order.
fn listed_ids(html: &str) -> Vec<String> {
    html.split("id=\"comment-")
        .skip(1)
        .map(|rest| rest[..rest.find('"').unwrap()].to_owned())
        .collect()
}

/// The JSON-LD block of a page, parsed.
fn json_ld(html: &str) -> Value {
    let open = "<script type=\"application/ld+json\">";
    let start = html.find(open).unwrap() + open.len();
    let end = html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..start + end]).unwrap()
}

#[tokio::test]
async fn a_crawler_following_older_links_finds_every_counted_comment_once_newest_first() {
    let s = start().await;
    let mut expected = Vec::new();
    for i in 0..47 {
        let language = ["en", "de", "fr"][i % 3];
        let created = s
            .post(
                "p",
                comment(
                    &format!("author{i}"),
                    language,
                    (i % 5 + 1) as u8,
                    &format!("t{i}"),
                    "b",
                ),
            )
            .await;
        expected.push((
            created["created_at"].as_str().unwrap().to_owned(),
            created["id"].as_str().unwrap().to_owned(),
        ));
    }
    // Flagged comments stay visible and counted; other products stay out.
    for (_, id) in expected.iter().step_by(7) {
        let (status, _) = s
            .json(Method::POST, &format!("/v1/comments/{id}/flag"), None)
            .await;
        assert_eq!(status, StatusCode::OK);
    }
    s.post("other", comment("x", "en", 5, "elsewhere", "b"))
        .await;
    let stats = s.settle("p", 47).await;
    expected.sort();
    expected.reverse();
    let expected: Vec<String> = expected.into_iter().map(|(_, id)| id).collect();

    let mut seen = Vec::new();
    let mut path = "/products/p".to_owned();
    let mut pages = Vec::new();
    loop {
        let html = s.page(&path).await;
        let ids = listed_ids(&html);
        assert!(ids.len() <= 20, "{path}: {} comments", ids.len());
        assert!(html.contains("<title>"), "{path}");
        assert!(html.contains("<meta name=\"description\""), "{path}");
        assert!(
            !html.contains("noindex"),
            "the unfiltered listing is indexed"
        );
        assert_eq!(
            attribute_after(&html, "rel=\"canonical\"", "href").unwrap(),
            path,
            "unfiltered pages are their own canonical URL"
        );
        assert!(html.contains(&format!(
            "<span class=\"rave-average\">{:.2}</span>",
            stats["average"].as_f64().unwrap()
        )));
        assert!(html.contains("<span class=\"rave-count\">47</span>"));
        pages.push((path.clone(), ids.clone()));
        seen.extend(ids);
        match attribute_after(&html, "rel=\"next\"", "href") {
            Some(next) => path = next,
            None => break,
        }
    }
    assert_eq!(seen, expected, "every counted comment once, newest first");
    assert_eq!(pages.len(), 3);
    // A keyset URL names the same comments on every visit.
    let (older, ids) = &pages[1];
    assert!(older.contains("cursor="));
    assert_eq!(&listed_ids(&s.page(older).await), ids);

    // Filtered views: a GET form and links, canonical to the listing, noindex.
    let html = s.page("/products/p?language=de&rating=2").await;
    assert!(html.contains("<form class=\"rave-filters\" method=\"get\""));
    assert!(html.contains("<meta name=\"robots\" content=\"noindex, follow\">"));
    assert_eq!(
        attribute_after(&html, "rel=\"canonical\"", "href").unwrap(),
        "/products/p"
    );
    assert!(html.contains("href=\"/products/p?language=de&amp;rating=5\""));
    let (_, listing) = s
        .json(
            Method::GET,
            "/v1/products/p/comments?language=de&rating=2&limit=100",
            None,
        )
        .await;
    let want: Vec<&str> = listing["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert!(!want.is_empty());
    assert_eq!(listed_ids(&html), want);
    // The histogram and count of the language shown.
    let (_, german) = s
        .json(Method::GET, "/v1/products/p/stats?language=de", None)
        .await;
    assert!(html.contains(&format!(
        "<span class=\"rave-count\">{}</span>",
        german["total"]
    )));
    // A product nobody commented on yet still has a page.
    let html = s.page("/products/quiet").await;
    assert!(html.contains("No comments here yet."));
    assert!(!html.contains("aggregateRating"));
}

#[tokio::test]
async fn the_average_is_in_the_stats_per_language_too() {
    let s = start().await;
    let (_, stats) = s.json(Method::GET, "/v1/products/p/stats", None).await;
    assert_eq!(stats["average"], Value::Null);
    for (language, rating) in [("en", 5), ("en", 4), ("de", 1)] {
        s.post("p", comment("a", language, rating, "", "b")).await;
    }
    let stats = s.settle("p", 3).await;
    assert_eq!(stats["average"], 3.33);
    let (_, english) = s
        .json(Method::GET, "/v1/products/p/stats?language=en", None)
        .await;
    assert_eq!(english["average"], 4.5);
    let (_, product) = s.json(Method::GET, "/v1/products/p", None).await;
    assert_eq!(product["stats"]["average"], 3.33);
    assert_eq!(product["languages"][0]["language"], "de");
    assert_eq!(product["languages"][1]["average"], 4.5);
}

/// Where scripts/test.sh installs extruct.
fn extruct_python() -> Option<std::path::PathBuf> {
    let python =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/extruct/bin/python");
    python.exists().then_some(python)
}

#[tokio::test]
async fn search_engines_read_the_product_its_rating_and_the_pages_reviews() {
    let Some(python) = extruct_python() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "extruct is missing: scripts/test.sh installs it into .tools/extruct"
        );
        eprintln!("skipped: extruct is not installed (scripts/test.sh installs it)");
        return;
    };
    let s = start().await;
    let (status, _) = s
        .json(
            Method::PUT,
            "/v1/products/kettle",
            Some(json!({
                "name": "Steel kettle",
                "url": "https://shop.example/kettle",
                "image": "https://shop.example/kettle.jpg",
                "gtins": ["4006381333931", "96385074", "036000291452", "10614141000415"],
                "mpns": ["KT-100"],
                "skus": ["kettle-steel", "kettle-steel-eu"],
                "brand": "Acme & Söhne"
            })),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    for i in 0..23u8 {
        s.post(
            "kettle",
            comment(
                &format!("buyer {i}"),
                ["en", "de"][usize::from(i % 2)],
                i % 5 + 1,
                if i % 4 == 0 { "" } else { "Boils fast" },
                &format!("Review {i} with \"quotes\" & </script> in it"),
            ),
        )
        .await;
    }
    let stats = s.settle("kettle", 23).await;
    for path in ["/products/kettle", "/fragments/products/kettle"] {
        let html = s.page(path).await;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("page.html");
        std::fs::write(&file, &html).unwrap();
        let output = std::process::Command::new(&python)
            .args([
                "-c",
                "import extruct, json, sys\n\
                 data = extruct.extract(open(sys.argv[1], encoding='utf-8').read(), base_url=sys.argv[2], syntaxes=['json-ld'])\n\
                 print(json.dumps(data['json-ld']))",
            ])
            .arg(&file)
            .arg(format!("{}{path}", s.base))
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let found: Value = serde_json::from_slice(&output.stdout).unwrap();
        let products: Vec<&Value> = found
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| v["@type"] == "Product")
            .collect();
        assert_eq!(products.len(), 1, "{path}: {found}");
        let product = products[0];
        assert_eq!(product["name"], "Steel kettle");
        assert_eq!(product["url"], "https://shop.example/kettle");
        assert_eq!(product["image"], "https://shop.example/kettle.jpg");
        // Each GTIN under schema.org's property of its length.
        assert_eq!(product["gtin13"], "4006381333931");
        assert_eq!(product["gtin8"], "96385074");
        assert_eq!(product["gtin12"], "036000291452");
        assert_eq!(product["gtin14"], "10614141000415");
        assert_eq!(product["mpn"], "KT-100");
        assert_eq!(product["sku"], json!(["kettle-steel", "kettle-steel-eu"]));
        assert_eq!(
            product["brand"],
            json!({"@type": "Brand", "name": "Acme & Söhne"})
        );
        let rating = &product["aggregateRating"];
        assert_eq!(rating["@type"], "AggregateRating");
        assert_eq!(rating["ratingValue"], stats["average"]);
        assert_eq!(rating["reviewCount"], stats["total"]);
        assert_eq!(rating["bestRating"], 5);
        assert_eq!(rating["worstRating"], 1);
        // The reviews are the page's comments, as the API lists them.
        let (_, listing) = s
            .json(Method::GET, "/v1/products/kettle/comments", None)
            .await;
        let items = listing["items"].as_array().unwrap();
        let reviews = product["review"].as_array().unwrap();
        assert_eq!(
            listed_ids(&html),
            items
                .iter()
                .map(|c| c["id"].as_str().unwrap())
                .collect::<Vec<_>>()
        );
        assert_eq!(reviews.len(), items.len());
        for (review, item) in reviews.iter().zip(items) {
            assert_eq!(review["@type"], "Review");
            assert_eq!(review["author"]["@type"], "Person");
            assert_eq!(review["author"]["name"], item["author"]);
            assert_eq!(review["datePublished"], item["created_at"]);
            assert_eq!(review["reviewRating"]["ratingValue"], item["rating"]);
            assert_eq!(review["reviewBody"], item["body"]);
            assert_eq!(review["inLanguage"], item["language"]);
            let title = item["title"].as_str().unwrap();
            let name = review["name"].as_str().unwrap();
            if title.is_empty() {
                assert!(item["body"].as_str().unwrap().starts_with(name));
            } else {
                assert_eq!(name, title);
            }
        }
    }
}

/// Every cacheable route: a validator and freshness on 200, a 304 for it.
async fn revalidate(s: &Server, path: &str) -> String {
    let (status, headers, body) = s.fetch(path, &[]).await;
    assert_eq!(status, StatusCode::OK, "{path}: {body}");
    let tag = headers
        .get(header::ETAG)
        .unwrap_or_else(|| panic!("{path} has no ETag"))
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        headers[header::CACHE_CONTROL]
            .to_str()
            .unwrap()
            .starts_with("public, max-age="),
        "{path}"
    );
    let (status, again, body) = s.fetch(path, &[("If-None-Match", &tag)]).await;
    assert_eq!(status, StatusCode::NOT_MODIFIED, "{path}");
    assert!(body.is_empty());
    assert_eq!(again[header::ETAG], tag.as_str());
    assert_eq!(again[header::CACHE_CONTROL], headers[header::CACHE_CONTROL]);
    let (status, _, _) = s.fetch(path, &[("If-None-Match", "\"other\"")]).await;
    assert_eq!(status, StatusCode::OK, "{path}");
    tag
}

#[tokio::test]
async fn cacheable_routes_revalidate_and_change_their_etag_with_the_data() {
    let s = start().await;
    let mut ids = Vec::new();
    for i in 0..25 {
        let created = s
            .post("p", comment("a", "en", 4, &format!("t{i}"), "b"))
            .await;
        ids.push(created["id"].as_str().unwrap().to_owned());
    }
    s.settle("p", 25).await;
    let first = s.page("/products/p").await;
    let older = attribute_after(&first, "rel=\"next\"", "href").unwrap();
    let (_, listing) = s.json(Method::GET, "/v1/products/p/comments", None).await;
    let json_older = format!(
        "/v1/products/p/comments?cursor={}",
        listing["next_cursor"].as_str().unwrap()
    );
    let product_routes = [
        "/products/p".to_owned(),
        older.clone(),
        "/fragments/products/p".to_owned(),
        "/v1/products/p/comments".to_owned(),
        json_older.clone(),
        "/v1/products/p/stats".to_owned(),
        "/v1/products/p".to_owned(),
    ];
    let mut tags = Vec::new();
    for path in &product_routes {
        tags.push(revalidate(&s, path).await);
    }
    let leaderboard = revalidate(&s, "/v1/leaderboard").await;
    revalidate(&s, "/embed.js").await;

    // Keyset pages of older comments are kept longer than first pages.
    let (_, first_headers, _) = s.fetch("/products/p", &[]).await;
    let (_, older_headers, _) = s.fetch(&older, &[]).await;
    assert_eq!(first_headers[header::CACHE_CONTROL], "public, max-age=10");
    assert_eq!(older_headers[header::CACHE_CONTROL], "public, max-age=300");
    // The plan changes with every request: never cached.
    let (_, explain, _) = s.fetch("/v1/products/p/comments?explain=true", &[]).await;
    assert!(explain.get(header::ETAG).is_none());

    // A 304 reads the product's partition, never a comment.
    let before = s.comments.usage().items_read();
    let (status, _, _) = s.fetch("/products/p", &[("If-None-Match", &tags[0])]).await;
    assert_eq!(status, StatusCode::NOT_MODIFIED);
    let read = s.comments.usage().items_read() - before;
    assert!(read <= 2, "a 304 read {read} items: S and S#en at most");

    // A changed comment changes every tag of its product; the oldest
    // comment is on the older pages, whose tags change too.
    let (status, _) = s
        .json(
            Method::PATCH,
            &format!("/v1/comments/{}", ids[0]),
            Some(json!({"rating": 5})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let started = Instant::now();
    loop {
        let (_, stats) = s.json(Method::GET, "/v1/products/p/stats", None).await;
        if stats["counts"]["5"] == 1 {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(10));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for (path, tag) in product_routes.iter().zip(&tags) {
        let (status, _, _) = s.fetch(path, &[("If-None-Match", tag)]).await;
        assert_eq!(status, StatusCode::OK, "{path} kept its ETag");
    }
    let (status, _, _) = s
        .fetch("/v1/leaderboard", &[("If-None-Match", &leaderboard)])
        .await;
    assert_eq!(status, StatusCode::OK, "the leaderboard changed");

    // An edit no count sees changes the tags too.
    let tag = revalidate(&s, "/products/p").await;
    s.json(
        Method::PATCH,
        &format!("/v1/comments/{}", ids[24]),
        Some(json!({"title": "edited"})),
    )
    .await;
    let started = Instant::now();
    loop {
        let (status, _, body) = s.fetch("/products/p", &[("If-None-Match", &tag)]).await;
        if status == StatusCode::OK {
            assert!(body.contains("edited"));
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the ETag stayed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn pages_fragments_and_listings_are_kept_by_their_tag_and_never_hide_a_write() {
    let s = start().await;
    for i in 0..3 {
        s.post("p", comment("a", "en", 4, &format!("kept{i}"), "b"))
            .await;
    }
    s.settle("p", 3).await;
    for path in [
        "/products/p",
        "/fragments/products/p",
        "/products/p?language=en",
        "/v1/products/p/comments",
    ] {
        let (status, first_headers, first) = s.fetch(path, &[]).await;
        assert_eq!(status, StatusCode::OK, "{path}");

        // Nothing changed: the kept answer, for the two reads of the revision.
        let before = s.comments.usage().items_read();
        let (status, headers, again) = s.fetch(path, &[]).await;
        let read = s.comments.usage().items_read() - before;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert_eq!(again, first, "{path}");
        assert!(read <= 2, "{path}: a kept page read {read} items");
        for name in [
            header::ETAG,
            header::CACHE_CONTROL,
            header::CONTENT_TYPE,
            header::CONTENT_SECURITY_POLICY,
            header::X_CONTENT_TYPE_OPTIONS,
        ] {
            assert_eq!(
                headers.get(&name),
                first_headers.get(&name),
                "{path}: {name}"
            );
        }

        // `Cache-Control: no-cache` reads it afresh: the same page.
        let before = s.comments.usage().items_read();
        let (_, _, fresh) = s.fetch(path, &[("Cache-Control", "no-cache")]).await;
        let read = s.comments.usage().items_read() - before;
        assert_eq!(fresh, first, "{path}");
        assert!(read > 2, "{path}: a fresh page read only {read} items");
    }

    // A write through the server shows at once on the kept pages.
    s.post("p", comment("a", "en", 5, "newest", "b")).await;
    for path in ["/products/p", "/fragments/products/p"] {
        assert!(s.page(path).await.contains("newest"), "{path}");
    }
}

#[tokio::test]
async fn hostile_text_is_inert_in_the_page_the_fragment_and_the_json_ld() {
    let s = start().await;
    let author = "\"><script>alert('author')</script>";
    let title = "<img src=x onerror=alert(1)> ' \" \u{202e}evil";
    let body = "</script><script>alert('body')</script>\n<!-- \u{202e}txt.exe";
    s.json(
        Method::PUT,
        "/v1/products/p",
        Some(json!({"name": "</title><script>alert('name')</script>\u{202e}"})),
    )
    .await;
    let created = s.post("p", comment(author, "en", 3, title, body)).await;
    let reply = "<script>alert('reply')</script>\u{202e}thanks";
    let (status, _) = s
        .json(
            Method::PUT,
            &format!("/v1/comments/{}/reply", created["id"].as_str().unwrap()),
            Some(json!({"body": reply})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    s.settle("p", 1).await;
    for path in ["/products/p", "/fragments/products/p"] {
        let html = s.page(path).await;
        assert_eq!(
            html.matches("<script").count(),
            1,
            "{path}: only the JSON-LD"
        );
        assert!(!html.contains("<img"), "{path}");
        // Outside the JSON-LD (whose strings need no HTML escapes), every
        // quote is escaped, so no attribute is broken out of.
        let open = html.find("<script type=\"application/ld+json\">").unwrap();
        let close = open + html[open..].find("</script>").unwrap();
        let markup = format!("{}{}", &html[..open], &html[close..]);
        assert!(!markup.contains("alert('"), "{path}: quotes are escaped");
        assert!(!markup.contains("\"><script"), "{path}");
        assert!(
            markup.contains("&lt;script&gt;alert(&#39;reply&#39;)&lt;/script&gt;"),
            "{path}: the reply is shown, as text"
        );
        // Every direction override is closed by an isolate around it.
        for (at, _) in html.match_indices('\u{202e}') {
            let before = &html[..at];
            let bdi = before.rfind("<bdi>").unwrap_or(0);
            let fsi = before.rfind('\u{2068}').unwrap_or(0);
            let open = bdi.max(fsi);
            assert!(open > 0, "{path}: an override outside any isolate");
            let closed_bdi = before[bdi..].contains("</bdi>");
            let closed_fsi = before[fsi..].contains('\u{2069}');
            assert!(
                (bdi > 0 && !closed_bdi) || (fsi > 0 && !closed_fsi),
                "{path}: an override after its isolate closed"
            );
        }
        let data = json_ld(&html);
        assert_eq!(data["review"][0]["author"]["name"], author);
        assert_eq!(data["review"][0]["reviewBody"], body);
        assert_eq!(data["review"][0]["name"], title);
    }
}

#[tokio::test]
async fn product_records_need_the_admin_and_valid_links_and_problems_name_fields() {
    let s = start().await;
    let response = s
        .client
        .put(format!("{}/v1/products/p", s.base))
        .json(&json!({"name": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let (status, problem) = s
        .json(
            Method::PUT,
            "/v1/products/p",
            Some(json!({"name": "Kettle", "url": "javascript:alert(1)"})),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(problem["field"], "url");
    let (status, product) = s
        .json(
            Method::PUT,
            "/v1/products/p",
            Some(json!({"name": "Kettle"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(product["name"], "Kettle");
    assert_eq!(product["gtins"], json!([]));
    assert_eq!(product["brand"], Value::Null);
    let html = s.page("/products/p").await;
    assert!(html.contains("<title>\u{2068}Kettle\u{2069}: customer reviews</title>"));
    assert_eq!(
        json_ld(&html)["sku"],
        "p",
        "the id until the record has SKUs"
    );
    let (_, unnamed) = s.json(Method::GET, "/v1/products/q", None).await;
    assert_eq!(unnamed["name"], "q");

    // Identifiers: bad ones are a 400 naming the field, and nothing is stored.
    let identified = json!({
        "name": "Kettle",
        "gtins": ["4006381333931"],
        "mpns": ["KT-100"],
        "skus": ["kettle-red"],
        "brand": "Acme"
    });
    let (status, product) = s
        .json(Method::PUT, "/v1/products/p", Some(identified.clone()))
        .await;
    assert_eq!(status, StatusCode::OK, "{product}");
    for (field, value) in [
        ("gtins", json!(["4006381333932"])),
        ("gtins", json!(["4006381333931", "12345"])),
        ("gtins", json!(vec!["96385074"; 21])),
        ("mpns", json!(["   "])),
        ("skus", json!(["a\u{7}b"])),
        ("brand", json!("")),
    ] {
        let mut body = identified.clone();
        body[field] = value.clone();
        body["name"] = json!("Renamed");
        let (status, problem) = s.json(Method::PUT, "/v1/products/p", Some(body)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{field}: {value}");
        assert_eq!(problem["field"], field, "{problem}");
    }
    let (status, problem) = s
        .json(
            Method::PUT,
            "/v1/products/p",
            Some(json!({"name": "Kettle", "gtins": "4006381333931"})),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{problem}");
    let (_, kept) = s.json(Method::GET, "/v1/products/p", None).await;
    assert_eq!(
        kept["name"], "Kettle",
        "nothing of a refused record is stored"
    );
    for field in ["gtins", "mpns", "skus", "brand"] {
        assert_eq!(kept[field], product[field], "{field}");
    }
    assert_eq!(kept["gtins"], json!(["4006381333931"]));
    assert_eq!(kept["mpns"], json!(["KT-100"]));
    assert_eq!(kept["skus"], json!(["kettle-red"]));
    assert_eq!(kept["brand"], "Acme");

    let (status, problem) = s
        .json(
            Method::POST,
            "/v1/products/p/comments",
            Some(comment("a", "en", 9, "", "b")),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(problem["field"], "rating");
}

#[tokio::test]
async fn cors_preflights_succeed_for_allowed_origins_only() {
    let s = start().await;
    let preflight = |origin: &'static str| {
        s.client
            .request(
                Method::OPTIONS,
                format!("{}/v1/products/p/comments", s.base),
            )
            .header("Origin", origin)
            .header("Access-Control-Request-Method", "POST")
            .header(
                "Access-Control-Request-Headers",
                "content-type,idempotency-key",
            )
            .send()
    };
    let allowed = preflight(SHOP).await.unwrap();
    assert!(allowed.status().is_success());
    assert_eq!(allowed.headers()["access-control-allow-origin"], SHOP);
    let methods = allowed.headers()["access-control-allow-methods"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(methods.contains("POST"), "{methods}");
    let other = preflight("http://evil.test").await.unwrap();
    assert!(other.headers().get("access-control-allow-origin").is_none());
    // Simple requests get the header too, and caches are told it varies.
    let (_, headers, _) = s.fetch("/v1/products/p/stats", &[("Origin", SHOP)]).await;
    assert_eq!(headers["access-control-allow-origin"], SHOP);
    assert!(
        headers
            .get_all(header::VARY)
            .iter()
            .any(|v| v.to_str().unwrap().contains("origin"))
    );
    // The embed's helpful votes: a JSON PUT and a DELETE.
    for method in ["PUT", "DELETE"] {
        let vote = s
            .client
            .request(
                Method::OPTIONS,
                format!("{}/v1/comments/c/votes/shopper-1", s.base),
            )
            .header("Origin", SHOP)
            .header("Access-Control-Request-Method", method)
            .header("Access-Control-Request-Headers", "content-type")
            .send()
            .await
            .unwrap();
        assert!(vote.status().is_success(), "{method}");
        assert_eq!(vote.headers()["access-control-allow-origin"], SHOP);
        let methods = vote.headers()["access-control-allow-methods"]
            .to_str()
            .unwrap();
        assert!(methods.contains(method), "{methods}");
    }
    // Admin calls stay same-origin: Authorization is not allowed across.
    let admin = s
        .client
        .request(Method::OPTIONS, format!("{}/v1/products/p", s.base))
        .header("Origin", SHOP)
        .header("Access-Control-Request-Method", "PUT")
        .header("Access-Control-Request-Headers", "authorization")
        .send()
        .await
        .unwrap();
    let allowed_headers = admin
        .headers()
        .get("access-control-allow-headers")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    assert!(!allowed_headers.contains("authorization"));
}

#[tokio::test]
async fn every_new_route_is_in_the_openapi_document() {
    let s = start().await;
    let (_, document) = s.json(Method::GET, "/openapi.json", None).await;
    let paths = &document["paths"];
    for (path, method) in [
        ("/products/{product_id}", "get"),
        ("/fragments/products/{product_id}", "get"),
        ("/embed.js", "get"),
        ("/v1/products/{product_id}", "get"),
        ("/v1/products/{product_id}", "put"),
    ] {
        assert!(paths[path][method].is_object(), "{method} {path}");
    }
    assert!(
        document["components"]["schemas"]["ProductStatsBody"]["properties"]["average"].is_object()
    );
}

#[tokio::test]
async fn html_answers_carry_a_strict_content_security_policy() {
    use base64::Engine as _;
    use sha2::Digest as _;
    let s = start().await;
    let page = s.client.get(format!("{}/", s.base)).send().await.unwrap();
    let headers = page.headers().clone();
    let html = page.text().await.unwrap();
    let header = |name: &str| {
        headers
            .get(name)
            .unwrap_or_else(|| panic!("no {name}"))
            .to_str()
            .unwrap()
            .to_owned()
    };
    let policy = header("content-security-policy");
    for directive in [
        "default-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(policy.contains(directive), "{directive} missing: {policy}");
    }
    assert!(!policy.contains("unsafe-inline"), "{policy}");
    // The page's one inline script is allowed by the hash a browser computes.
    let script = &html[html.find("<script>").unwrap() + 8..html.find("</script>").unwrap()];
    let hash = base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(script));
    assert!(policy.contains(&format!("'sha256-{hash}'")), "{policy}");
    assert_eq!(header("x-frame-options"), "DENY");
    assert_eq!(header("referrer-policy"), "same-origin");

    let product = s
        .client
        .get(format!("{}/products/p1", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(
        product.headers().get("content-security-policy").unwrap(),
        policy.as_str()
    );
    let json = s
        .client
        .get(format!("{}/v1/products/p1/comments", s.base))
        .send()
        .await
        .unwrap();
    assert!(json.headers().get("content-security-policy").is_none());
}

/// A comment by `author` on `product` carrying `media`, written through the
/// domain as an upload's would be once its photos are stored.
async fn comment_with_photos(
    s: &Server,
    product: &str,
    author: &str,
    media: Vec<NewPhoto>,
) -> String {
    s.comments
        .create(
            product,
            NewComment {
                author: author.into(),
                language: "en".into(),
                rating: 5,
                title: Some("Fits well".into()),
                body: "See the photos.".into(),
                created_at: None,
                attributes: Default::default(),
                media,
            },
            None,
        )
        .await
        .unwrap()
        .comment
        .id
}

/// The `<picture>` thumbnails of comment `id` on a page: each its link,
/// WebP source, JPEG image, width, height, loading and alt text.
fn thumbnails(html: &str, id: &str) -> Vec<[String; 7]> {
    let start = html.find(&format!("id=\"comment-{id}\"")).unwrap();
    let article = &html[start..start + html[start..].find("</article>").unwrap()];
    article
        .split("<li><a ")
        .skip(1)
        .map(|item| {
            let value = |attribute: &str| attribute_after(item, "", attribute).unwrap_or_default();
            [
                value("href"),
                value("srcset"),
                value("src"),
                value("width"),
                value("height"),
                value("loading"),
                value("alt"),
            ]
        })
        .collect()
}

#[tokio::test]
async fn photos_show_as_thumbnails_linking_to_their_display_size_on_every_page() {
    let s = start().await;
    for variant in ["tee-red", "tee-blue"] {
        let (status, body) = s
            .json(
                Method::PUT,
                &format!("/v1/products/{variant}"),
                Some(json!({"name": format!("Tee {variant}"), "group": "tee"})),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let landscape = photos::stored(&s.media, 1200, 900, 1).await;
    let portrait = photos::stored(&s.media, 600, 800, 2).await;
    let with_photos = comment_with_photos(
        &s,
        "tee-red",
        "Ann",
        vec![landscape.clone(), portrait.clone()],
    )
    .await;
    let without = s
        .post("tee-blue", comment("Ben", "en", 4, "Plain", "No photos."))
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    s.settle("tee-red", 1).await;
    let expected = |photo: &NewPhoto, n: usize, width: u32, height: u32| {
        let id = photo.id.as_str();
        [
            format!("/media/{id}/display.jpg"),
            format!("/media/{id}/thumb.webp"),
            format!("/media/{id}/thumb.jpg"),
            width.to_string(),
            height.to_string(),
            "lazy".to_owned(),
            format!("Photo {n} of 2 by \u{2068}Ann\u{2069}"),
        ]
    };
    for path in [
        "/products/tee-red",
        "/fragments/products/tee-red",
        "/products/tee-blue?scope=group",
    ] {
        let html = s.page(path).await;
        assert_eq!(
            thumbnails(&html, &with_photos),
            [
                expected(&landscape, 1, 320, 240),
                expected(&portrait, 2, 240, 320)
            ],
            "{path}"
        );
        assert!(html.contains("<source type=\"image/webp\""), "{path}");
        if path.contains("group") {
            assert!(thumbnails(&html, &without).is_empty(), "{path}");
        }
    }
    // Every link and image is served, in the type its name says.
    for photo in [&landscape, &portrait] {
        for (rendition, kind) in [
            ("display.jpg", "image/jpeg"),
            ("thumb.webp", "image/webp"),
            ("thumb.jpg", "image/jpeg"),
        ] {
            let (status, headers, _) = s
                .fetch(&format!("/media/{}/{rendition}", photo.id), &[])
                .await;
            assert_eq!(status, StatusCode::OK, "{rendition}");
            assert_eq!(headers[header::CONTENT_TYPE], kind);
        }
    }
}

#[tokio::test]
async fn a_waiting_comments_photos_show_nowhere_until_it_is_approved() {
    let s = start_with(None, Moderation::Pre).await;
    let photo = photos::stored(&s.media, 800, 600, 3).await;
    let id = comment_with_photos(&s, "kettle", "Ann", vec![photo.clone()]).await;
    for path in ["/products/kettle", "/fragments/products/kettle"] {
        let html = s.page(path).await;
        assert!(!html.contains(photo.id.as_str()), "{path}: {html}");
        assert!(!html.contains("<ul class=\"rave-photos\">"), "{path}");
    }
    s.comments.approve(&id).await.unwrap();
    let html = s
        .fetch("/products/kettle", &[("cache-control", "no-cache")])
        .await
        .2;
    assert_eq!(thumbnails(&html, &id).len(), 1, "{html}");
    assert!(html.contains(&format!("/media/{}/thumb.jpg", photo.id)));
}

#[tokio::test]
async fn search_engines_read_each_reviews_photos_as_absolute_urls() {
    let Some(python) = extruct_python() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "extruct is missing: scripts/test.sh installs it into .tools/extruct"
        );
        eprintln!("skipped: extruct is not installed (scripts/test.sh installs it)");
        return;
    };
    const PUBLIC: &str = "https://reviews.shop.example";
    let s = start_with(Some(MediaLinks::served_at(PUBLIC)), Moderation::Off).await;
    for variant in ["mug-red", "mug-blue"] {
        let (status, _) = s
            .json(
                Method::PUT,
                &format!("/v1/products/{variant}"),
                Some(json!({"name": "Mug", "group": "mugs"})),
            )
            .await;
        assert_eq!(status, StatusCode::OK);
    }
    let first = photos::stored(&s.media, 640, 480, 4).await;
    let second = photos::stored(&s.media, 480, 640, 5).await;
    comment_with_photos(&s, "mug-red", "Ann", vec![first.clone(), second.clone()]).await;
    s.post("mug-red", comment("Ben", "en", 3, "Plain", "No photos."))
        .await;
    s.settle("mug-red", 2).await;
    for path in [
        "/products/mug-red",
        "/fragments/products/mug-red",
        "/products/mug-red?scope=group",
    ] {
        let html = s.page(path).await;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("page.html");
        std::fs::write(&file, &html).unwrap();
        let output = std::process::Command::new(&python)
            .args([
                "-c",
                "import extruct, json, sys\n\
                 data = extruct.extract(open(sys.argv[1], encoding='utf-8').read(), base_url=sys.argv[2], syntaxes=['json-ld'])\n\
                 print(json.dumps(data['json-ld']))",
            ])
            .arg(&file)
            .arg(format!("{}{path}", s.base))
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let found: Value = serde_json::from_slice(&output.stdout).unwrap();
        let reviews = found[0]["review"]
            .as_array()
            .unwrap_or_else(|| panic!("{path}: {found}"));
        let images: Vec<&Value> = reviews.iter().map(|review| &review["image"]).collect();
        // Newest first: Ben's review has no photos, Ann's has both.
        assert_eq!(
            images,
            [
                &Value::Null,
                &json!([
                    format!("{PUBLIC}/media/{}/display.jpg", first.id),
                    format!("{PUBLIC}/media/{}/display.jpg", second.id),
                ])
            ],
            "{path}: {found}"
        );
    }
}
