//! Verified purchases through real HTTP: a post with a purchase proof (a
//! JWT the shop signs HS256) is a verified purchase; every proof that does
//! not verify is a 400 that stores nothing; an order verifies one comment
//! per product; `verified=true` lists only verified comments; statistics
//! count them.

use jsonwebtoken::{Algorithm, EncodingKey, Header, encode, get_current_timestamp};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

#[path = "common/client.rs"]
mod client;
#[path = "common/server.rs"]
mod server;

use server::{TestServer, start};

const SHOP_SECRET: &[u8] = b"the shop's purchase secret";
/// `{"alg":"none","typ":"JWT"}` and `{"alg":"RS256","typ":"JWT"}`, base64url.
const NONE_HEADER: &str = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0";
const RS256_HEADER: &str = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9";

async fn post(s: &TestServer, product: &str, proof: Option<&str>) -> (StatusCode, Value) {
    let mut body = json!({"author": "alice", "language": "en", "rating": 5, "body": "Works."});
    if let Some(proof) = proof {
        body["purchase_proof"] = json!(proof);
    }
    s.call(
        Method::POST,
        &format!("/v1/products/{product}/comments"),
        Some(body),
        false,
    )
    .await
}

fn claims(product: &str, order: &str, exp: u64) -> Value {
    json!({"product_id": product, "order_id": order, "exp": exp})
}

fn sign_with(algorithm: Algorithm, secret: &[u8], claims: &Value) -> String {
    encode(
        &Header::new(algorithm),
        claims,
        &EncodingKey::from_secret(secret),
    )
    .unwrap()
}

fn proof(product: &str, order: &str) -> String {
    sign_with(
        Algorithm::HS256,
        SHOP_SECRET,
        &claims(product, order, get_current_timestamp() + 3600),
    )
}

/// `token` with its header replaced (and, for `none`, its signature dropped).
fn with_header(token: &str, header: &str, keep_signature: bool) -> String {
    let mut parts = token.split('.');
    let (_, payload, signature) = (parts.next(), parts.next().unwrap(), parts.next().unwrap());
    let signature = if keep_signature { signature } else { "" };
    format!("{header}.{payload}.{signature}")
}

fn assert_refused(result: (StatusCode, Value), status: StatusCode, says: &str) {
    let (actual, body) = result;
    assert_eq!(actual, status, "{body}");
    let detail = body["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains(says),
        "detail {detail:?} should say {says:?}"
    );
    if status == StatusCode::BAD_REQUEST {
        assert_eq!(body["field"], "purchase_proof", "{body}");
    }
}

#[tokio::test]
async fn proofs_verify_or_are_refused_and_store_nothing() {
    let s = start(Some(SHOP_SECRET)).await;
    let (status, plain) = post(&s, "p1", None).await;
    assert_eq!(status, StatusCode::CREATED, "{plain}");
    assert_eq!(plain["verified_purchase"], false);
    let (status, verified) = post(&s, "p1", Some(&proof("p1", "order-1"))).await;
    assert_eq!(status, StatusCode::CREATED, "{verified}");
    assert_eq!(verified["verified_purchase"], true);
    let (_, fetched) = s
        .call(
            Method::GET,
            &format!("/v1/comments/{}", verified["id"].as_str().unwrap()),
            None,
            false,
        )
        .await;
    assert_eq!(fetched["verified_purchase"], true);
    assert_eq!(s.stored().await, 2);

    let valid = proof("p1", "order-2");
    let hour = get_current_timestamp() + 3600;
    let refusals = [
        (
            sign_with(
                Algorithm::HS256,
                b"another secret",
                &claims("p1", "order-2", hour),
            ),
            "not signed with this shop's secret",
        ),
        (with_header(&valid, NONE_HEADER, false), "HS256"),
        (with_header(&valid, RS256_HEADER, true), "HS256"),
        (
            sign_with(
                Algorithm::HS512,
                SHOP_SECRET,
                &claims("p1", "order-2", hour),
            ),
            "HS256",
        ),
        (
            sign_with(
                Algorithm::HS256,
                SHOP_SECRET,
                &claims("p1", "order-2", get_current_timestamp() - 60),
            ),
            "expired",
        ),
        (
            sign_with(
                Algorithm::HS256,
                SHOP_SECRET,
                &json!({"product_id": "p1", "order_id": "order-2"}),
            ),
            "exp",
        ),
        (proof("p2", "order-2"), "another product"),
        (format!("{valid}x"), "not signed with this shop's secret"),
        ("garbage".to_owned(), "not a valid JWT"),
    ];
    for (token, says) in refusals {
        assert_refused(
            post(&s, "p1", Some(&token)).await,
            StatusCode::BAD_REQUEST,
            says,
        );
    }
    assert_eq!(s.stored().await, 2, "nothing stored on a refusal");

    // One order, one verified comment per product.
    assert_refused(
        post(&s, "p1", Some(&proof("p1", "order-1"))).await,
        StatusCode::CONFLICT,
        "already verified",
    );
    assert_eq!(s.stored().await, 2, "nothing stored on a conflict");
    let (status, elsewhere) = post(&s, "p2", Some(&proof("p2", "order-1"))).await;
    assert_eq!(status, StatusCode::CREATED, "{elsewhere}");
    let (status, second) = post(&s, "p1", Some(&valid)).await;
    assert_eq!(status, StatusCode::CREATED, "{second}");
}

#[tokio::test]
async fn a_proof_without_a_purchase_secret_is_refused() {
    let s = start(None).await;
    assert_refused(
        post(&s, "p1", Some(&proof("p1", "order-1"))).await,
        StatusCode::BAD_REQUEST,
        "no purchase secret",
    );
    assert_eq!(s.stored().await, 0);
    let (status, _) = post(&s, "p1", None).await;
    assert_eq!(status, StatusCode::CREATED);
}

#[tokio::test]
async fn verified_listings_and_statistics() {
    let s = start(Some(SHOP_SECRET)).await;
    let mut verified_ids = Vec::new();
    for i in 0..6 {
        let order = format!("order-{i}");
        let proof = (i % 2 == 0).then(|| proof("p", &order));
        let (status, body) = post(&s, "p", proof.as_deref()).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        if proof.is_some() {
            verified_ids.insert(0, body["id"].clone());
        }
    }
    let mut seen = Vec::new();
    let mut path =
        "/v1/products/p/comments?verified=true&language=en&rating=5&limit=2&explain=true"
            .to_owned();
    loop {
        let (status, page) = s.call(Method::GET, &path, None, false).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        assert_eq!(
            page["plan"]["queries"][0]["index"],
            "verifiedByLangAndRating"
        );
        for item in page["items"].as_array().unwrap() {
            assert_eq!(item["verified_purchase"], true);
            seen.push(item["id"].clone());
        }
        match page["next_cursor"].as_str() {
            Some(cursor) => {
                let (status, other) = s
                    .call(
                        Method::GET,
                        &format!(
                            "/v1/products/p/comments?language=en&rating=5&limit=2&cursor={cursor}"
                        ),
                        None,
                        false,
                    )
                    .await;
                assert_eq!(
                    status,
                    StatusCode::BAD_REQUEST,
                    "a cursor is bound to verified: {other}"
                );
                path = format!(
                    "/v1/products/p/comments?verified=true&language=en&rating=5&limit=2&explain=true&cursor={cursor}"
                );
            }
            None => break,
        }
    }
    assert_eq!(seen, verified_ids, "every verified comment, newest first");
    let (status, _) = s
        .call(
            Method::GET,
            "/v1/products/p/comments?verified=yes",
            None,
            false,
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    s.catch_up().await;
    for path in ["/v1/products/p/stats", "/v1/products/p/stats?language=en"] {
        let (_, stats) = s.call(Method::GET, path, None, false).await;
        assert_eq!(
            (
                stats["total"].clone(),
                stats["verified_total"].clone(),
                stats["verified_counts"].clone()
            ),
            (
                json!(6),
                json!(3),
                json!({"1": 0, "2": 0, "3": 0, "4": 0, "5": 3})
            ),
            "{path}"
        );
    }
}
