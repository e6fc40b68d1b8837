//! Sub-ratings and fit through real HTTP: a product record declares them,
//! posts answer them (a bad answer is a 400 naming the field and stores
//! nothing), comments and listings show them, the statistics count them
//! exactly, and the product page shows them.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

#[path = "common/client.rs"]
mod client;

#[path = "common/server.rs"]
mod server;

use server::TestServer;

fn record() -> Value {
    json!({
        "name": "Linen shirt",
        "attributes": [
            {"name": "quality", "kind": "rating"},
            {"name": "fit", "kind": "choice", "choices": ["runs_small", "true_to_size", "runs_large"]}
        ]
    })
}

fn post(rating: i64, attributes: Value) -> Value {
    json!({
        "author": "ann",
        "language": "en",
        "rating": rating,
        "body": "Nice shirt.",
        "attributes": attributes
    })
}

async fn declared() -> TestServer {
    let s = server::start(None).await;
    let (status, body) = s
        .call(Method::PUT, "/v1/products/shirt", Some(record()), true)
        .await;
    assert!(status.is_success(), "{status} {body}");
    s
}

#[tokio::test]
async fn a_record_declares_attributes_and_shows_them_and_a_bad_declaration_is_refused() {
    let s = declared().await;
    let (status, product) = s.call(Method::GET, "/v1/products/shirt", None, false).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(product["attributes"], record()["attributes"]);
    for (bad, what) in [
        (json!([{"name": "Quality", "kind": "rating"}]), "a capital"),
        (
            json!([{"name": "fit", "kind": "choice", "choices": ["one"]}]),
            "one choice",
        ),
        (json!([{"name": "fit", "kind": "choice"}]), "no choices"),
        (
            json!([{"name": "q", "kind": "rating"}, {"name": "q", "kind": "rating"}]),
            "twice",
        ),
    ] {
        let mut body = record();
        body["attributes"] = bad;
        let (status, problem) = s
            .call(Method::PUT, "/v1/products/shirt", Some(body), true)
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{what}: {problem}");
        assert_eq!(problem["field"], "attributes", "{what}");
    }
    let (_, unchanged) = s.call(Method::GET, "/v1/products/shirt", None, false).await;
    assert_eq!(unchanged["attributes"], record()["attributes"]);
}

#[tokio::test]
async fn a_bad_answer_is_a_400_naming_the_field_and_stores_nothing() {
    let s = declared().await;
    for (answers, field) in [
        (json!({"quality": 6}), "attributes.quality"),
        (json!({"quality": 0}), "attributes.quality"),
        (json!({"quality": "4"}), "attributes.quality"),
        (json!({"fit": "huge"}), "attributes.fit"),
        (json!({"fit": 2}), "attributes.fit"),
        (json!({"colour": "red"}), "attributes.colour"),
        (json!({"quality": 4, "fit": "tiny"}), "attributes.fit"),
    ] {
        let (status, problem) = s
            .call(
                Method::POST,
                "/v1/products/shirt/comments",
                Some(post(5, answers.clone())),
                false,
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answers}: {problem}");
        assert_eq!(problem["field"], field, "{answers}");
        assert!(
            problem["detail"].as_str().unwrap().starts_with(field),
            "{problem}"
        );
    }
    // A product without a record asks for nothing.
    let (status, problem) = s
        .call(
            Method::POST,
            "/v1/products/other/comments",
            Some(post(5, json!({"quality": 4}))),
            false,
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(problem["field"], "attributes.quality");
    assert_eq!(s.stored().await, 0, "nothing stored");
}

#[tokio::test]
async fn answers_show_on_the_comment_and_in_listings_and_statistics_count_them() {
    let s = declared().await;
    let answers = [
        (5, json!({"quality": 5, "fit": "runs_small"})),
        (4, json!({"quality": 4, "fit": "runs_small"})),
        (2, json!({"quality": 2, "fit": "true_to_size"})),
        (3, json!({"fit": "runs_large"})),
        (5, json!({})),
    ];
    let mut ids = Vec::new();
    for (rating, given) in &answers {
        let (status, created) = s
            .call(
                Method::POST,
                "/v1/products/shirt/comments",
                Some(post(*rating, given.clone())),
                false,
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{created}");
        assert_eq!(created["attributes"], *given);
        ids.push(created["id"].as_str().unwrap().to_owned());
    }
    let (_, one) = s
        .call(
            Method::GET,
            &format!("/v1/comments/{}", ids[0]),
            None,
            false,
        )
        .await;
    assert_eq!(one["attributes"], answers[0].1);
    let (_, page) = s
        .call(
            Method::GET,
            "/v1/products/shirt/comments?limit=50",
            None,
            false,
        )
        .await;
    let listed: Vec<&Value> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["attributes"])
        .collect();
    // Newest first.
    let mut expected: Vec<&Value> = answers.iter().map(|(_, a)| a).collect();
    expected.reverse();
    assert_eq!(listed, expected);

    s.catch_up().await;
    let (status, stats) = s
        .call(Method::GET, "/v1/products/shirt/stats", None, false)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        stats["attributes"],
        json!({
            "quality": {
                "count": 3,
                "average": 3.67,
                "distribution": {"1": 0, "2": 1, "3": 0, "4": 1, "5": 1}
            },
            "fit": {
                "count": 4,
                "average": null,
                "distribution": {"runs_small": 2, "true_to_size": 1, "runs_large": 1}
            }
        })
    );
    // A deleted comment leaves the counts.
    let (status, _) = s
        .call(
            Method::DELETE,
            &format!("/v1/comments/{}", ids[0]),
            None,
            true,
        )
        .await;
    assert!(status.is_success());
    s.catch_up().await;
    let (_, stats) = s
        .call(
            Method::GET,
            "/v1/products/shirt/stats?language=en",
            None,
            false,
        )
        .await;
    assert_eq!(stats["attributes"]["quality"]["count"], 2);
    assert_eq!(stats["attributes"]["quality"]["average"], 3.0);
    assert_eq!(stats["attributes"]["fit"]["distribution"]["runs_small"], 1);
}

#[tokio::test]
async fn an_edit_replaces_the_answers_checked_as_a_posts_and_the_statistics_follow() {
    let s = declared().await;
    let (status, created) = s
        .call(
            Method::POST,
            "/v1/products/shirt/comments",
            Some(post(4, json!({"quality": 5, "fit": "runs_small"}))),
            false,
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let path = format!("/v1/comments/{}", created["id"].as_str().unwrap());
    for (answers, field) in [
        (json!({"quality": 9}), "attributes.quality"),
        (json!({"colour": "red"}), "attributes.colour"),
        (json!({"fit": "tiny"}), "attributes.fit"),
    ] {
        let (status, problem) = s
            .call(
                Method::PATCH,
                &path,
                Some(json!({"attributes": answers, "title": "changed"})),
                true,
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answers}: {problem}");
        assert_eq!(problem["field"], field, "{answers}");
    }
    let (_, unchanged) = s.call(Method::GET, &path, None, false).await;
    assert_eq!(
        unchanged["attributes"],
        json!({"quality": 5, "fit": "runs_small"})
    );
    assert_eq!(unchanged["title"], "", "a refused edit changes nothing");

    let (status, edited) = s
        .call(
            Method::PATCH,
            &path,
            Some(json!({"attributes": {"quality": 2}})),
            true,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{edited}");
    assert_eq!(edited["attributes"], json!({"quality": 2}));
    s.catch_up().await;
    let (_, stats) = s
        .call(Method::GET, "/v1/products/shirt/stats", None, false)
        .await;
    assert_eq!(stats["attributes"]["quality"]["average"], 2.0, "{stats}");
    assert!(stats["attributes"].get("fit").is_none(), "{stats}");

    let (status, cleared) = s
        .call(Method::PATCH, &path, Some(json!({"attributes": {}})), true)
        .await;
    assert_eq!(status, StatusCode::OK, "{cleared}");
    assert_eq!(cleared["attributes"], json!({}));
}

/// The page's HTML as text.
async fn html(s: &TestServer, path: &str) -> String {
    let response = s
        .client
        .get(format!("{}{path}", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK, "{path}");
    response.text().await.unwrap()
}

#[tokio::test]
async fn the_page_and_fragment_show_bars_a_fit_scale_and_each_comments_answers() {
    let s = declared().await;
    for (rating, given) in [
        (5, json!({"quality": 5, "fit": "runs_small"})),
        (4, json!({"quality": 4, "fit": "runs_small"})),
        (3, json!({"fit": "runs_large"})),
    ] {
        let (status, _) = s
            .call(
                Method::POST,
                "/v1/products/shirt/comments",
                Some(post(rating, given)),
                false,
            )
            .await;
        assert_eq!(status, StatusCode::CREATED);
    }
    s.catch_up().await;
    for path in ["/products/shirt", "/fragments/products/shirt"] {
        let page = html(&s, path).await;
        // Quality: a bar of the average (4.5 of 5).
        assert!(
            page.contains(
                "<th scope=\"row\">Quality</th><td><meter min=\"1\" max=\"5\" value=\"4.5\">"
            ),
            "{path}: {page}"
        );
        // Fit: the scale in the declared order, each choice's share of 3.
        let scale = page
            .split("<ol class=\"rave-scale\" aria-label=\"Fit\">")
            .nth(1)
            .and_then(|rest| rest.split("</ol>").next())
            .unwrap_or_else(|| panic!("{path}: no fit scale in {page}"));
        let choices: Vec<(&str, &str)> = scale
            .split("<li>")
            .skip(1)
            .map(|item| {
                let value = item
                    .split("value=\"")
                    .nth(1)
                    .and_then(|v| v.split('"').next())
                    .unwrap();
                let name = item
                    .split("</meter> ")
                    .nth(1)
                    .unwrap()
                    .split(" <span")
                    .next()
                    .unwrap();
                (name, value)
            })
            .collect();
        assert_eq!(
            choices,
            [
                ("Runs small", "2"),
                ("True to size", "0"),
                ("Runs large", "1")
            ],
            "{path}"
        );
        assert!(scale.contains("max=\"3\""), "{path}: {scale}");
        assert!(
            page.contains("<p class=\"rave-answers\">Quality: 5/5 · Fit: Runs small</p>"),
            "{path}"
        );
        assert!(!page.contains("style=\""), "{path}: no style attribute");
    }
}

/// A GET with `If-None-Match`: the status, the `ETag` and the body.
async fn revalidated(
    s: &TestServer,
    path: &str,
    tag: Option<&str>,
) -> (StatusCode, String, String) {
    let mut request = s.client.get(format!("{}{path}", s.base));
    if let Some(tag) = tag {
        request = request.header("If-None-Match", tag);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let tag = response
        .headers()
        .get("etag")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    (status, tag, response.text().await.unwrap())
}

#[tokio::test]
async fn a_variant_declaring_nothing_is_asked_its_familys_and_its_pages_follow_the_groups_record() {
    let s = declared().await;
    // `shirt` is the family; `shirt-red` declares nothing, `shirt-blue` its own.
    for (product, body) in [
        ("shirt-red", json!({"name": "Red shirt", "group": "shirt"})),
        (
            "shirt-blue",
            json!({"name": "Blue shirt", "group": "shirt",
                   "attributes": [{"name": "value", "kind": "rating"}]}),
        ),
    ] {
        let (status, answer) = s
            .call(
                Method::PUT,
                &format!("/v1/products/{product}"),
                Some(body),
                true,
            )
            .await;
        assert!(status.is_success(), "{status} {answer}");
    }
    let (_, red) = s
        .call(Method::GET, "/v1/products/shirt-red", None, false)
        .await;
    assert_eq!(red["attributes"], json!([]), "the record as stored");
    assert_eq!(red["effective_attributes"], record()["attributes"]);
    let (_, blue) = s
        .call(Method::GET, "/v1/products/shirt-blue", None, false)
        .await;
    assert_eq!(blue["effective_attributes"], blue["attributes"]);

    for (product, answers, expected) in [
        (
            "shirt-red",
            json!({"quality": 4, "fit": "runs_small"}),
            Ok(()),
        ),
        ("shirt-red", json!({"value": 3}), Err("attributes.value")),
        ("shirt-blue", json!({"value": 2}), Ok(())),
        (
            "shirt-blue",
            json!({"fit": "runs_small"}),
            Err("attributes.fit"),
        ),
    ] {
        let (status, answer) = s
            .call(
                Method::POST,
                &format!("/v1/products/{product}/comments"),
                Some(post(4, answers.clone())),
                false,
            )
            .await;
        match expected {
            Ok(()) => assert_eq!(status, StatusCode::CREATED, "{answers}: {answer}"),
            Err(field) => {
                assert_eq!(status, StatusCode::BAD_REQUEST, "{answers}: {answer}");
                assert_eq!(answer["field"], field);
            }
        }
    }
    assert_eq!(s.stored().await, 2, "the refused posts stored nothing");
    s.catch_up().await;

    // The family's statistics sum the variants' answers; its page shows the
    // group's bars.
    let (_, group) = s
        .call(Method::GET, "/v1/groups/shirt/stats", None, false)
        .await;
    assert_eq!(
        group["stats"]["attributes"]["quality"]["count"], 1,
        "{group}"
    );
    assert_eq!(group["stats"]["attributes"]["value"]["count"], 1, "{group}");
    let family = html(&s, "/products/shirt-red?scope=group").await;
    assert!(
        family.contains("<th scope=\"row\">Quality</th>"),
        "{family}"
    );
    assert!(family.contains("aria-label=\"Fit\""), "{family}");
    assert!(
        family.contains("<p class=\"rave-answers\">Value: 2/5</p>"),
        "a comment shows what its variant asks: {family}"
    );

    let (status, page_tag, page) = revalidated(&s, "/products/shirt-red", None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.contains("<p class=\"rave-answers\">Quality: 4/5 · Fit: Runs small</p>"),
        "{page}"
    );
    assert!(page.contains("aria-label=\"Fit\""), "{page}");
    let (_, json_tag, _) = revalidated(&s, "/v1/products/shirt-red", None).await;
    let (status, ..) = revalidated(&s, "/products/shirt-red", Some(&page_tag)).await;
    assert_eq!(status, StatusCode::NOT_MODIFIED);

    // The family now asks value and quality, no fit.
    let mut changed = record();
    changed["attributes"] = json!([
        {"name": "value", "kind": "rating"},
        {"name": "quality", "kind": "rating"}
    ]);
    let (status, _) = s
        .call(
            Method::PUT,
            "/v1/products/shirt",
            Some(changed.clone()),
            true,
        )
        .await;
    assert!(status.is_success());
    let (status, new_tag, page) = revalidated(&s, "/products/shirt-red", Some(&page_tag)).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "the group's record changed the page"
    );
    assert_ne!(new_tag, page_tag);
    assert!(
        page.contains("<p class=\"rave-answers\">Quality: 4/5</p>"),
        "{page}"
    );
    assert!(!page.contains("aria-label=\"Fit\""), "{page}");
    let (status, _, product) = revalidated(&s, "/v1/products/shirt-red", Some(&json_tag)).await;
    assert_eq!(status, StatusCode::OK, "the kept JSON answer changed too");
    let product: Value = serde_json::from_str(&product).unwrap();
    assert_eq!(product["effective_attributes"], changed["attributes"]);
    // A variant declaring its own is not touched by it.
    let (_, blue) = s
        .call(Method::GET, "/v1/products/shirt-blue", None, false)
        .await;
    assert_eq!(
        blue["effective_attributes"],
        json!([{"name": "value", "kind": "rating"}])
    );
    let (status, answer) = s
        .call(
            Method::POST,
            "/v1/products/shirt-red/comments",
            Some(post(3, json!({"value": 3}))),
            false,
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
}
