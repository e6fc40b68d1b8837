//! Reasons for reports and the incentive disclosure through real HTTP: a
//! flag with each reason (or none), a bad reason or note refused naming the
//! field with nothing changed, the moderation queue's counts by reason and
//! its filter; a review marked incentivized by staff (audited), by the
//! purchase proof's claim, shown in the API, the product page and the
//! fragment, and filtered in the listing in every order.

use jsonwebtoken::{Algorithm, EncodingKey, Header, encode, get_current_timestamp};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

#[path = "common/client.rs"]
mod client;
#[path = "common/server.rs"]
mod server;

use server::{TestServer, start};

const LABEL: &str = "Received a free product or discount for this review";

async fn post(s: &TestServer, product: &str, body: &str) -> String {
    let (status, created) = s
        .call(
            Method::POST,
            &format!("/v1/products/{product}/comments"),
            Some(json!({"author": "ann", "language": "en", "rating": 4, "body": body})),
            false,
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    created["id"].as_str().unwrap().to_owned()
}

async fn flag(s: &TestServer, id: &str, body: Option<Value>) -> (StatusCode, Value) {
    s.call(
        Method::POST,
        &format!("/v1/comments/{id}/flag"),
        body,
        false,
    )
    .await
}

async fn queue(s: &TestServer, query: &str) -> Vec<Value> {
    let (status, page) = s
        .call(
            Method::GET,
            &format!("/v1/moderation/queue?state=flagged{query}"),
            None,
            true,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    page["items"].as_array().unwrap().clone()
}

fn ids(items: &[Value]) -> Vec<&str> {
    items.iter().map(|c| c["id"].as_str().unwrap()).collect()
}

#[tokio::test]
async fn a_flag_counts_its_reason_and_the_queue_shows_and_filters_by_it() {
    let s = start(None).await;
    let mut comments = Vec::new();
    for n in 0..6 {
        comments.push(post(&s, "p", &format!("comment {n}")).await);
    }
    for (id, reason) in comments
        .iter()
        .zip(["spam", "offensive", "off_topic", "fake", "other"])
    {
        let (status, body) = flag(&s, id, Some(json!({"reason": reason}))).await;
        assert_eq!(status, StatusCode::OK, "{reason}: {body}");
        assert_eq!(body["status"], "flagged");
    }
    // A second report with a note, and one without a body at all (other).
    let (status, _) = flag(
        &s,
        &comments[0],
        Some(json!({"reason": "spam", "note": "Links to another shop."})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = flag(&s, &comments[5], None).await;
    assert_eq!(status, StatusCode::OK);
    let response = s
        .client
        .post(format!("{}/v1/comments/{}/flag", s.base, comments[0]))
        .header("Content-Type", "application/json")
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.status(),
        StatusCode::OK,
        "an empty JSON body is no body"
    );
    let (status, body) = flag(&s, &comments[0], Some(Value::Null)).await;
    assert_eq!(status, StatusCode::OK, "a null body is no body: {body}");
    let (status, body) = flag(&s, &comments[0], Some(json!([null, null]))).await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "an array is no body: {body}"
    );

    let all = queue(&s, "").await;
    assert_eq!(all.len(), 6);
    let first = &all[0];
    assert_eq!(first["id"], comments[0]);
    assert_eq!(
        first["reports"],
        json!({"spam": 2, "offensive": 0, "off_topic": 0, "fake": 0, "other": 2})
    );
    assert_eq!(
        first["report_notes"],
        json!([{"reason": "spam", "note": "Links to another shop."}])
    );
    assert_eq!(all[5]["reports"]["other"], 1);
    assert_eq!(
        ids(&queue(&s, "&reason=spam").await),
        [comments[0].as_str()]
    );
    assert_eq!(
        ids(&queue(&s, "&reason=other").await),
        [comments[0].as_str(), &comments[4], &comments[5]]
    );
    assert_eq!(
        ids(&queue(&s, "&reason=off_topic").await),
        [comments[2].as_str()]
    );
    // Walked a page of one at a time, the filter still sees each once.
    let mut walked = Vec::new();
    let mut cursor = String::new();
    loop {
        let (status, page) = s
            .call(
                Method::GET,
                &format!("/v1/moderation/queue?state=flagged&reason=other&limit=1{cursor}"),
                None,
                true,
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{page}");
        walked.extend(
            ids(page["items"].as_array().unwrap())
                .iter()
                .map(|id| id.to_string()),
        );
        match page["next_cursor"].as_str() {
            Some(next) => cursor = format!("&cursor={next}"),
            None => break,
        }
    }
    assert_eq!(
        walked,
        [
            comments[0].clone(),
            comments[4].clone(),
            comments[5].clone()
        ]
    );
    let (status, problem) = s
        .call(Method::GET, "/v1/moderation/queue?reason=rude", None, true)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        problem["detail"].as_str().unwrap().contains("reason"),
        "{problem}"
    );
    // The public listing does not show reports.
    let (_, listing) = s
        .call(Method::GET, "/v1/products/p/comments", None, false)
        .await;
    assert!(listing["items"][0].get("reports").is_none(), "{listing}");
}

#[tokio::test]
async fn a_bad_reason_or_note_is_a_400_naming_it_and_changes_nothing() {
    let s = start(None).await;
    let id = post(&s, "p", "fine").await;
    let long = "x".repeat(501);
    for (body, field) in [
        (json!({"reason": "rude"}), "reason"),
        (json!({"reason": 3}), "reason"),
        (json!({"reason": "spam", "note": long}), "note"),
        (json!({"reason": "spam", "note": "a\u{7}b"}), "note"),
        (json!({"reason": "spam", "mood": "cross"}), "mood"),
    ] {
        let (status, problem) = flag(&s, &id, Some(body.clone())).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(
            problem["detail"].as_str().unwrap().contains(field),
            "{body}: {problem}"
        );
    }
    let (_, comment) = s
        .call(Method::GET, &format!("/v1/comments/{id}"), None, false)
        .await;
    assert_eq!(comment["status"], "published", "nothing changed");
    assert!(queue(&s, "").await.is_empty());
}

async fn audit_actions(s: &TestServer) -> Vec<String> {
    let (status, body) = s.call(Method::GET, "/v1/admin/audit", None, true).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn staff_mark_a_review_incentivized_and_every_surface_shows_it() {
    let s = start(None).await;
    let plain = post(&s, "p", "Bought it myself.").await;
    let rewarded = post(&s, "p", "Got it free.").await;
    let path = format!("/v1/comments/{rewarded}/incentivized");
    let (status, _) = s
        .call(
            Method::PUT,
            &path,
            Some(json!({"incentivized": true})),
            false,
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "staff only");
    for bad in [json!({"incentivized": "yes"}), json!({})] {
        let (status, problem) = s.call(Method::PUT, &path, Some(bad), true).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{problem}");
    }
    let (status, body) = s
        .call(
            Method::PUT,
            &path,
            Some(json!({"incentivized": true})),
            true,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["incentivized"], true);
    assert!(
        audit_actions(&s)
            .await
            .contains(&"comment.incentivized".to_owned())
    );
    let (_, comment) = s
        .call(
            Method::GET,
            &format!("/v1/comments/{rewarded}"),
            None,
            false,
        )
        .await;
    assert_eq!(comment["incentivized"], true);

    for sort in ["newest", "oldest", "highest", "lowest", "helpful"] {
        for (filter, expected) in [("true", &rewarded), ("false", &plain)] {
            let (status, page) = s
                .call(
                    Method::GET,
                    &format!("/v1/products/p/comments?incentivized={filter}&sort={sort}&limit=1"),
                    None,
                    false,
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{page}");
            assert_eq!(ids(page["items"].as_array().unwrap()), [expected.as_str()]);
            assert!(page["next_cursor"].is_null(), "{sort}: one of each");
        }
    }
    let (status, problem) = s
        .call(
            Method::GET,
            "/v1/products/p/comments?incentivized=maybe",
            None,
            false,
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(problem["detail"].as_str().unwrap().contains("incentivized"));

    for page in ["/products/p", "/fragments/products/p"] {
        let html = s
            .client
            .get(format!("{}{page}", s.base))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert_eq!(
            html.matches(LABEL).count(),
            1,
            "{page}: only the rewarded one"
        );
    }
    // Cleared again: the label goes.
    let (status, _) = s
        .call(
            Method::PUT,
            &path,
            Some(json!({"incentivized": false})),
            true,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let html = s
        .client
        .get(format!("{}/products/p", s.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!html.contains(LABEL));
}

#[tokio::test]
async fn a_purchase_proof_can_claim_the_review_was_rewarded() {
    const SECRET: &[u8] = b"the shop's purchase secret";
    let s = start(Some(SECRET)).await;
    let proof = |order: &str, incentivized: Option<bool>| {
        let mut claims = json!({
            "product_id": "p", "order_id": order, "exp": get_current_timestamp() + 3600
        });
        if let Some(incentivized) = incentivized {
            claims["incentivized"] = json!(incentivized);
        }
        encode(
            &Header::new(Algorithm::HS256),
            &claims,
            &EncodingKey::from_secret(SECRET),
        )
        .unwrap()
    };
    for (order, claim, expected) in [
        ("o-1", Some(true), true),
        ("o-2", Some(false), false),
        ("o-3", None, false),
    ] {
        let (status, created) = s
            .call(
                Method::POST,
                "/v1/products/p/comments",
                Some(json!({
                    "author": "ann", "language": "en", "rating": 5, "body": "Works.",
                    "purchase_proof": proof(order, claim)
                })),
                false,
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{created}");
        assert_eq!(created["verified_purchase"], true);
        assert_eq!(created["incentivized"], expected, "{order}");
    }
}

#[tokio::test]
async fn the_moderation_figures_count_a_scripted_sequence_exactly() {
    let s = start(None).await;
    let (status, _) = s
        .call(Method::GET, "/v1/moderation/figures", None, false)
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "staff only");
    let (status, empty) = s
        .call(Method::GET, "/v1/moderation/figures", None, true)
        .await;
    assert_eq!(status, StatusCode::OK, "{empty}");
    assert_eq!(empty["decisions"], 0);
    assert!(empty["median_decision_seconds"].is_null());

    let ids: Vec<String> = post_many(&s, 4).await;
    for (id, reason) in [
        (&ids[0], "spam"),
        (&ids[0], "spam"),
        (&ids[1], "fake"),
        (&ids[2], "offensive"),
        (&ids[3], "off_topic"),
    ] {
        let (status, _) = flag(&s, id, Some(json!({"reason": reason}))).await;
        assert_eq!(status, StatusCode::OK);
    }
    let (status, _) = flag(&s, &ids[2], None).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = s
        .call(
            Method::POST,
            &format!("/v1/comments/{}/approve", ids[0]),
            None,
            true,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = s
        .call(
            Method::POST,
            &format!("/v1/comments/{}/reject", ids[1]),
            None,
            true,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    // Approved, it is reported again: a new report, counted too.
    let (status, _) = flag(&s, &ids[0], Some(json!({"reason": "spam"}))).await;
    assert_eq!(status, StatusCode::OK);
    s.catch_up().await;
    let (status, figures) = s
        .call(Method::GET, "/v1/moderation/figures", None, true)
        .await;
    assert_eq!(status, StatusCode::OK, "{figures}");
    assert_eq!(
        figures["reports_by_reason"],
        json!({"spam": 3, "offensive": 1, "off_topic": 1, "fake": 1, "other": 1})
    );
    assert_eq!(figures["pending"], 0);
    assert_eq!(figures["flagged"], 3, "ids 0 (again), 2 and 3: {figures}");
    assert_eq!(figures["decisions"], 2);
    let median = figures["median_decision_seconds"].as_f64().unwrap();
    assert!((0.0..600.0).contains(&median), "{median}");
    assert_eq!(figures["holds_by_rule"], json!({}));
    // Nothing changes them but changes: asked again, the same.
    s.catch_up().await;
    let (_, again) = s
        .call(Method::GET, "/v1/moderation/figures", None, true)
        .await;
    assert_eq!(again, figures);
}

async fn post_many(s: &TestServer, n: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..n {
        ids.push(post(s, "p", &format!("comment {i}")).await);
    }
    ids
}
