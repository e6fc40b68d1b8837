//! An author's data through real HTTP (admin only): every comment of an
//! author, any status, newest first with cursors; erasing them all with
//! their replies, idempotently; statistics follow.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

#[path = "common/client.rs"]
mod client;
#[path = "common/server.rs"]
mod server;

use server::{TestServer, start};

/// `Zoë #1/x?`, percent-encoded for a path segment.
const AUTHOR: &str = "Zo%C3%AB%20%231%2Fx%3F";
const AUTHOR_TEXT: &str = "Zoë #1/x?";

async fn post(s: &TestServer, author: &str, product: &str) -> Value {
    let (status, body) = s
        .call(
            Method::POST,
            &format!("/v1/products/{product}/comments"),
            Some(json!({"author": author, "language": "en", "rating": 4, "body": "Fine."})),
            false,
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body
}

async fn list_all(s: &TestServer, author: &str) -> Vec<Value> {
    let mut items = Vec::new();
    let mut path = format!("/v1/authors/{author}/comments?limit=2");
    loop {
        let (status, page) = s.call(Method::GET, &path, None, true).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        items.extend(page["items"].as_array().unwrap().iter().cloned());
        match page["next_cursor"].as_str() {
            Some(cursor) => path = format!("/v1/authors/{author}/comments?limit=2&cursor={cursor}"),
            None => return items,
        }
    }
}

#[tokio::test]
async fn an_authors_comments_are_listed_and_erased() {
    let s = start(None).await;
    let mut ids = Vec::new();
    for product in ["p1", "p2", "p1"] {
        ids.insert(0, post(&s, AUTHOR_TEXT, product).await["id"].clone());
    }
    let flagged = ids[1].as_str().unwrap().to_owned();
    let (status, _) = s
        .call(
            Method::POST,
            &format!("/v1/comments/{flagged}/flag"),
            None,
            false,
        )
        .await;
    assert!(status.is_success());
    let (status, _) = s
        .call(
            Method::PUT,
            &format!("/v1/comments/{}/reply", ids[0].as_str().unwrap()),
            Some(json!({"body": "Thanks"})),
            true,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    post(&s, "Zoë", "p1").await;
    post(&s, "bob", "p2").await;

    let listed: Vec<Value> = list_all(&s, AUTHOR)
        .await
        .iter()
        .map(|c| c["id"].clone())
        .collect();
    assert_eq!(
        listed, ids,
        "every comment of exactly this author, newest first"
    );
    let (status, page) = s
        .call(
            Method::GET,
            &format!("/v1/authors/{AUTHOR}/comments"),
            None,
            false,
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{page}");
    let (status, _) = s
        .call(
            Method::DELETE,
            &format!("/v1/authors/{AUTHOR}/comments"),
            None,
            false,
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _) = s
        .call(Method::GET, "/v1/authors/a%07b/comments", None, true)
        .await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "control characters are no author"
    );
    let (status, other) = s
        .call(
            Method::GET,
            &format!("/v1/authors/bob/comments?cursor={}", {
                let (_, page) = s
                    .call(
                        Method::GET,
                        &format!("/v1/authors/{AUTHOR}/comments?limit=1"),
                        None,
                        true,
                    )
                    .await;
                page["next_cursor"].as_str().unwrap().to_owned()
            }),
            None,
            true,
        )
        .await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "a cursor is bound to its author: {other}"
    );

    let (status, erased) = s
        .call(
            Method::DELETE,
            &format!("/v1/authors/{AUTHOR}/comments"),
            None,
            true,
        )
        .await;
    assert_eq!((status, erased), (StatusCode::OK, json!({"erased": 3})));
    assert!(list_all(&s, AUTHOR).await.is_empty());
    for id in &ids {
        let (status, _) = s
            .call(
                Method::GET,
                &format!("/v1/comments/{}", id.as_str().unwrap()),
                None,
                false,
            )
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }
    assert_eq!(s.stored().await, 2, "the other authors' comments stay");
    let (status, again) = s
        .call(
            Method::DELETE,
            &format!("/v1/authors/{AUTHOR}/comments"),
            None,
            true,
        )
        .await;
    assert_eq!((status, again), (StatusCode::OK, json!({"erased": 0})));

    s.catch_up().await;
    let (_, stats) = s
        .call(Method::GET, "/v1/products/p1/stats", None, false)
        .await;
    assert_eq!(stats["total"], 1, "{stats}");
    let (_, global) = s.call(Method::GET, "/v1/stats", None, false).await;
    assert_eq!(global["authors_total"], 2, "{global}");
}
