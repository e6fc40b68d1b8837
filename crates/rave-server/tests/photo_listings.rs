//! `has_media=true` through real HTTP: a product's and a group's listing
//! of the comments with photos in every order, cursors bound to it, the
//! plan on the `MEDIA#` partitions, a bad value refused naming the
//! parameter, `media_total` in the statistics and the OpenAPI document.

use std::collections::BTreeSet;

use rave_comments::{NewComment, NewPhoto, PhotoId};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

#[path = "common/client.rs"]
mod client;

#[path = "common/server.rs"]
mod server;

use server::TestServer;

/// Posts a comment on `product`, with `photos` photos already stored (the
/// domain's create: the upload is another route's).
async fn create(s: &TestServer, product: &str, rating: i64, photos: usize) -> String {
    let media = (0..photos)
        .map(|i| NewPhoto {
            id: PhotoId::parse(&format!("{:064x}", rating as usize * 100 + i)).unwrap(),
            width: 800,
            height: 600,
        })
        .collect();
    let new = NewComment {
        author: "ann".into(),
        language: if rating % 2 == 0 { "de" } else { "en" }.into(),
        rating,
        title: None,
        body: "fits well".into(),
        created_at: None,
        attributes: Default::default(),
        media,
    };
    s.comments
        .create(product, new, None)
        .await
        .unwrap()
        .comment
        .id
}

/// Every comment a walk of `path` (with `limit=2`) shows, in order, and the
/// partitions its plans read.
async fn walk(s: &TestServer, path: &str) -> (Vec<String>, BTreeSet<String>) {
    let (mut seen, mut partitions) = (Vec::new(), BTreeSet::new());
    let mut cursor: Option<String> = None;
    loop {
        let mut page_path = format!("{path}&limit=2&explain=true");
        if let Some(cursor) = &cursor {
            page_path.push_str(&format!("&cursor={cursor}"));
        }
        let (status, page) = s.call(Method::GET, &page_path, None, false).await;
        assert_eq!(status, StatusCode::OK, "{page_path}: {page}");
        for query in page["plan"]["queries"].as_array().unwrap() {
            partitions.insert(query["partition_key"].as_str().unwrap().to_owned());
        }
        for item in page["items"].as_array().unwrap() {
            seen.push(item["id"].as_str().unwrap().to_owned());
        }
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return (seen, partitions),
        }
    }
}

#[tokio::test]
async fn has_media_lists_exactly_the_comments_with_photos_in_every_order() {
    let s = server::start(None).await;
    let mut with_photos = BTreeSet::new();
    for (i, rating) in [5, 4, 5, 1, 3, 5, 2, 4].into_iter().enumerate() {
        let photos = i % 3;
        let id = create(&s, "p1", rating, photos).await;
        if photos > 0 {
            with_photos.insert(id);
        }
    }
    s.catch_up().await;
    for query in [
        "",
        "&sort=oldest",
        "&sort=highest",
        "&sort=lowest",
        "&sort=helpful",
        "&rating=5&rating=1",
        "&language=en&sort=highest",
        "&verified=true",
    ] {
        let path = format!("/v1/products/p1/comments?has_media=true{query}");
        let (seen, partitions) = walk(&s, &path).await;
        let expected = match query {
            "&verified=true" => BTreeSet::new(),
            _ => with_photos.clone(),
        };
        let filtered: BTreeSet<String> = seen.iter().cloned().collect();
        assert_eq!(seen.len(), filtered.len(), "{query}: each once");
        if query.starts_with("&rating") || query.starts_with("&language") {
            assert!(filtered.is_subset(&with_photos), "{query}");
        } else {
            assert_eq!(filtered, expected, "{query}");
        }
        assert!(
            partitions.iter().all(|p| p.starts_with("MEDIA#p1")),
            "{query}: {partitions:?}"
        );
    }
    // EXPLAIN: a fan-out over ratings is sized by the counts of comments
    // with photos.
    let (_, explained) = s
        .call(
            Method::GET,
            "/v1/products/p1/comments?has_media=true&rating=1&rating=5&explain=true",
            None,
            false,
        )
        .await;
    assert_eq!(
        explained["plan"]["sized_by"], "media_comments",
        "{explained}"
    );
    assert_eq!(explained["plan"]["strategy"], "ratings_fan_out");
    // A cursor of the listing with photos serves no other listing.
    let (_, first) = s
        .call(
            Method::GET,
            "/v1/products/p1/comments?has_media=true&limit=1",
            None,
            false,
        )
        .await;
    let cursor = first["next_cursor"].as_str().unwrap();
    let (status, refused) = s
        .call(
            Method::GET,
            &format!("/v1/products/p1/comments?limit=1&cursor={cursor}"),
            None,
            false,
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    for bad in ["has_media=yes", "has_media=", "has_media=1"] {
        let (status, problem) = s
            .call(
                Method::GET,
                &format!("/v1/products/p1/comments?{bad}"),
                None,
                false,
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
        assert!(
            problem["detail"]
                .as_str()
                .unwrap()
                .starts_with("has_media:"),
            "{bad}: {problem}"
        );
    }
    // A deleted comment leaves the listing of comments with photos.
    let gone = with_photos.pop_first().unwrap();
    let (status, _) = s
        .call(Method::DELETE, &format!("/v1/comments/{gone}"), None, true)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (seen, _) = walk(&s, "/v1/products/p1/comments?has_media=true").await;
    assert_eq!(seen.into_iter().collect::<BTreeSet<_>>(), with_photos);
}

#[tokio::test]
async fn statistics_count_the_comments_with_photos() {
    let s = server::start(None).await;
    for (rating, photos) in [(5, 2), (5, 0), (4, 1), (1, 1), (2, 0)] {
        create(&s, "p1", rating, photos).await;
    }
    s.catch_up().await;
    let (status, stats) = s
        .call(Method::GET, "/v1/products/p1/stats", None, false)
        .await;
    assert_eq!(status, StatusCode::OK, "{stats}");
    assert_eq!(stats["total"], 5);
    assert_eq!(stats["media_total"], 3);
    assert_eq!(
        stats["media_counts"],
        json!({"1": 1, "2": 0, "3": 0, "4": 1, "5": 1})
    );
    let (_, german) = s
        .call(
            Method::GET,
            "/v1/products/p1/stats?language=de",
            None,
            false,
        )
        .await;
    assert_eq!(german["media_total"], 1, "{german}");
    let (_, none) = s
        .call(Method::GET, "/v1/products/none/stats", None, false)
        .await;
    assert_eq!(none["media_total"], 0);
}

#[tokio::test]
async fn a_groups_listing_with_photos_reads_its_family_media_copies() {
    let s = server::start(None).await;
    for product in ["v1", "v2"] {
        let (status, body) = s
            .call(
                Method::PUT,
                &format!("/v1/products/{product}"),
                Some(json!({"name": format!("Tee {product}"), "group": "tee"})),
                true,
            )
            .await;
        assert!(status.is_success(), "{body}");
    }
    let mut with_photos = BTreeSet::new();
    for (i, (product, rating)) in [("v1", 5), ("v2", 4), ("v1", 3), ("v2", 5), ("v2", 1)]
        .into_iter()
        .enumerate()
    {
        let id = create(&s, product, rating, i % 2).await;
        if i % 2 == 1 {
            with_photos.insert(id);
        }
    }
    s.catch_up().await;
    for sort in ["newest", "oldest", "highest", "lowest", "helpful"] {
        let (seen, partitions) = walk(
            &s,
            &format!("/v1/groups/tee/comments?has_media=true&sort={sort}"),
        )
        .await;
        assert_eq!(seen.len(), with_photos.len(), "{sort}: each once");
        assert_eq!(seen.into_iter().collect::<BTreeSet<_>>(), with_photos);
        assert!(
            partitions.iter().all(|p| p.starts_with("FAMILYMEDIA#tee")),
            "{sort}: {partitions:?}"
        );
    }
    let (status, problem) = s
        .call(
            Method::GET,
            "/v1/groups/tee/comments?has_media=maybe",
            None,
            false,
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .starts_with("has_media:"),
        "{problem}"
    );
    let (_, stats) = s
        .call(Method::GET, "/v1/groups/tee/stats", None, false)
        .await;
    assert_eq!(stats["stats"]["media_total"], 2, "{stats}");
}

#[tokio::test]
async fn the_openapi_document_names_has_media_and_media_total() {
    let s = server::start(None).await;
    let (status, document) = s.call(Method::GET, "/openapi.json", None, false).await;
    assert_eq!(status, StatusCode::OK);
    for path in [
        "/v1/products/{product_id}/comments",
        "/v1/groups/{group}/comments",
    ] {
        let parameters = document["paths"][path]["get"]["parameters"]
            .as_array()
            .unwrap_or_else(|| panic!("{path} has parameters"));
        let has_media: Vec<&Value> = parameters
            .iter()
            .filter(|p| p["name"] == "has_media")
            .collect();
        assert_eq!(has_media.len(), 1, "{path}");
        assert_eq!(has_media[0]["in"], "query");
    }
    let stats = &document["components"]["schemas"]["ProductStatsBody"]["properties"];
    assert!(stats["media_total"].is_object(), "{stats}");
    assert!(stats["media_counts"].is_object(), "{stats}");
}
