//! Scoped tokens and the audit trail through real HTTP: a token opens
//! exactly the endpoints of its scopes, a revoked one nothing, and every
//! staff action leaves an entry naming who, what, which and from where.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

#[path = "common/client.rs"]
mod client;

#[path = "common/server.rs"]
mod server;

use server::TestServer;

async fn call_with(
    s: &TestServer,
    token: &str,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    client::call(
        &s.client,
        method,
        format!("{}{path}", s.base),
        body,
        Some(token),
    )
    .await
}

/// A token made through the API by the operator's admin token.
async fn token(s: &TestServer, name: &str, scopes: &[&str]) -> (String, String) {
    let (status, body) = s
        .call(
            Method::POST,
            "/v1/admin/tokens",
            Some(json!({"name": name, "scopes": scopes})),
            true,
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    (
        body["id"].as_str().unwrap().to_owned(),
        body["token"].as_str().unwrap().to_owned(),
    )
}

async fn comment(s: &TestServer, author: &str) -> String {
    let (status, body) = s
        .call(
            Method::POST,
            "/v1/products/p/comments",
            Some(json!({"author": author, "language": "en", "rating": 4, "title": "Fine", "body": "It works."})),
            false,
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body["id"].as_str().unwrap().to_owned()
}

async fn audit(s: &TestServer, query: &str) -> Vec<Value> {
    let (status, body) = s
        .call(Method::GET, &format!("/v1/admin/audit{query}"), None, true)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["entries"].as_array().unwrap().clone()
}

#[tokio::test]
async fn a_token_opens_the_endpoints_of_its_scopes_only() {
    let s = server::start(None).await;
    let (_, moderator) = token(&s, "support-anna", &["moderate"]).await;
    let id = comment(&s, "ben").await;

    let (status, _) = call_with(
        &s,
        &moderator,
        Method::POST,
        &format!("/v1/comments/{id}/approve"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = call_with(&s, &moderator, Method::GET, "/v1/moderation/queue", None).await;
    assert_eq!(status, StatusCode::OK);

    let refused = [
        (
            Method::DELETE,
            "/v1/authors/ben/comments".to_owned(),
            None,
            "erase",
        ),
        (
            Method::PUT,
            format!("/v1/comments/{id}/reply"),
            Some(json!({"body": "Thanks"})),
            "reply",
        ),
        (Method::GET, "/v1/admin/tokens".to_owned(), None, "admin"),
        (Method::GET, "/v1/admin/audit".to_owned(), None, "admin"),
        (
            Method::PUT,
            "/v1/products/p".to_owned(),
            Some(json!({"name": "P"})),
            "admin",
        ),
    ];
    for (method, path, body, scope) in refused {
        let (status, problem) = call_with(&s, &moderator, method.clone(), &path, body).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{method} {path}");
        let detail = problem["detail"].as_str().unwrap();
        assert!(detail.contains(&format!("scope {scope}")), "{detail}");
    }
    // Nothing was erased by the refused call.
    let (status, _) = s
        .call(Method::GET, &format!("/v1/comments/{id}"), None, false)
        .await;
    assert_eq!(status, StatusCode::OK);

    // A public post may set created_at only with the scope import.
    let backdated = json!({"author": "c", "language": "en", "rating": 5, "title": "Old", "body": "From the old shop.", "created_at": "2024-05-01T10:00:00.000Z"});
    let (status, _) = call_with(
        &s,
        &moderator,
        Method::POST,
        "/v1/products/p/comments",
        Some(backdated.clone()),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (_, importer) = token(&s, "migration", &["import"]).await;
    let (status, body) = call_with(
        &s,
        &importer,
        Method::POST,
        "/v1/products/p/comments",
        Some(backdated),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["created_at"], "2024-05-01T10:00:00.000Z");

    // An eraser may erase.
    let (_, eraser) = token(&s, "privacy", &["erase"]).await;
    let (status, body) = call_with(
        &s,
        &eraser,
        Method::DELETE,
        "/v1/authors/ben/comments",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["erased"], 1);
}

#[tokio::test]
async fn tokens_are_shown_once_listed_without_secrets_and_revoked_at_once() {
    let s = server::start(None).await;
    let (id, secret) = token(&s, "merchant-center", &["feed", "moderate"]).await;
    assert!(secret.starts_with("rave_"));

    let (status, list) = s.call(Method::GET, "/v1/admin/tokens", None, true).await;
    assert_eq!(status, StatusCode::OK);
    let tokens = list["tokens"].as_array().unwrap();
    assert_eq!(tokens.len(), 1);
    assert_eq!(tokens[0]["id"], id.as_str());
    assert_eq!(tokens[0]["scopes"], json!(["moderate", "feed"]));
    assert_eq!(tokens[0]["created_by"], "admin-token");
    assert!(tokens[0].get("token").is_none());
    assert!(!list.to_string().contains(&secret));

    let (status, _) = call_with(&s, &secret, Method::GET, "/v1/moderation/queue", None).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = s
        .call(
            Method::DELETE,
            &format!("/v1/admin/tokens/{id}"),
            None,
            true,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, problem) = call_with(&s, &secret, Method::GET, "/v1/moderation/queue", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(problem["detail"].as_str().unwrap().contains("not valid"));
    let (status, _) = s
        .call(
            Method::DELETE,
            &format!("/v1/admin/tokens/{id}"),
            None,
            true,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn bad_token_requests_are_refused_and_create_nothing() {
    let s = server::start(None).await;
    let bad = [
        json!({"name": "x", "scopes": ["superuser"]}),
        json!({"name": "x", "scopes": []}),
        json!({"name": "", "scopes": ["feed"]}),
        json!({"name": "tab\there", "scopes": ["feed"]}),
        json!({"name": "x"}),
        json!({"name": "x", "scopes": ["feed"], "expires": 3}),
    ];
    for body in bad {
        let (status, problem) = s
            .call(Method::POST, "/v1/admin/tokens", Some(body.clone()), true)
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {problem}");
        let detail = problem["detail"].as_str().unwrap();
        assert!(
            ["name", "scopes", "expires"]
                .iter()
                .any(|field| detail.contains(field)),
            "{detail}"
        );
    }
    let (_, list) = s.call(Method::GET, "/v1/admin/tokens", None, true).await;
    assert_eq!(list["tokens"], json!([]));
    assert!(audit(&s, "").await.is_empty());
}

#[tokio::test]
async fn every_staff_action_is_in_the_audit_trail() {
    let s = server::start(None).await;
    let (token_id, moderator) = token(&s, "support-anna", &["moderate", "reply"]).await;
    let first = comment(&s, "ben").await;
    let second = comment(&s, "ben").await;
    let third = comment(&s, "cleo").await;

    let actions = [
        (
            Method::PATCH,
            format!("/v1/comments/{first}"),
            Some(json!({"rating": 2, "title": "Meh"})),
        ),
        (Method::POST, format!("/v1/comments/{first}/approve"), None),
        (
            Method::PUT,
            format!("/v1/comments/{first}/reply"),
            Some(json!({"body": "Sorry!"})),
        ),
        (Method::DELETE, format!("/v1/comments/{first}/reply"), None),
        (Method::POST, format!("/v1/comments/{second}/reject"), None),
        (Method::DELETE, format!("/v1/comments/{third}"), None),
    ];
    for (method, path, body) in actions {
        let (status, problem) = call_with(&s, &moderator, method.clone(), &path, body).await;
        assert!(status.is_success(), "{method} {path}: {problem}");
    }
    let (status, _) = s
        .call(
            Method::PUT,
            "/v1/products/p",
            Some(json!({"name": "Lamp"})),
            true,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = s
        .call(Method::DELETE, "/v1/authors/ben/comments", None, true)
        .await;
    assert_eq!(status, StatusCode::OK);
    // A refused action leaves no entry.
    let (status, _) = call_with(
        &s,
        &moderator,
        Method::DELETE,
        "/v1/authors/cleo/comments",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    let entries = audit(&s, "").await;
    let summary: Vec<(String, String, String, String)> = entries
        .iter()
        .map(|e| {
            let text = |name: &str| e[name].as_str().unwrap_or_default().to_owned();
            (
                text("actor"),
                text("action"),
                text("target_kind"),
                text("target_id"),
            )
        })
        .collect();
    let entry = |actor: &str, action: &str, kind: &str, id: &str| {
        (
            actor.to_owned(),
            action.to_owned(),
            kind.to_owned(),
            id.to_owned(),
        )
    };
    let anna = "support-anna";
    assert_eq!(
        summary,
        vec![
            entry("admin-token", "author.erase", "author", "ben"),
            entry("admin-token", "product.put", "product", "p"),
            entry(anna, "comment.delete", "comment", &third),
            entry(anna, "comment.reject", "comment", &second),
            entry(anna, "reply.delete", "comment", &first),
            entry(anna, "reply.set", "comment", &first),
            entry(anna, "comment.approve", "comment", &first),
            entry(anna, "comment.edit", "comment", &first),
            entry("admin-token", "token.create", "token", &token_id),
        ]
    );
    for e in &entries {
        assert_eq!(e["client"], "127.0.0.1", "{e}");
        assert!(e["at"].as_str().unwrap().ends_with('Z'));
        if e["actor"] == anna {
            assert_eq!(e["actor_token"], token_id.as_str());
        }
    }
    assert_eq!(entries[0]["detail"], "1 comments and 0 orders erased");
    assert_eq!(entries[7]["detail"], "set rating, title");

    // Filters and pages.
    let on_first = audit(&s, &format!("?target=comment:{first}")).await;
    assert_eq!(on_first.len(), 4);
    assert_eq!(audit(&s, "?actor=admin-token").await.len(), 3);
    assert_eq!(audit(&s, "?action=comment.reject").await.len(), 1);
    let (_, page) = s
        .call(Method::GET, "/v1/admin/audit?limit=4", None, true)
        .await;
    assert_eq!(page["entries"].as_array().unwrap().len(), 4);
    let cursor = page["next_cursor"].as_str().unwrap();
    let rest = audit(&s, &format!("?limit=100&cursor={cursor}")).await;
    assert_eq!(rest.len(), 5);
    assert_eq!(audit(&s, "?since=2100-01-01T00:00:00Z").await.len(), 0);
    assert_eq!(audit(&s, "?until=2000-01-01T00:00:00Z").await.len(), 0);

    for bad in [
        "?target=comment",
        "?since=yesterday",
        "?limit=0",
        "?cursor=x",
        "?who=me",
        "?actor=",
    ] {
        let (status, _) = s
            .call(Method::GET, &format!("/v1/admin/audit{bad}"), None, true)
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
    }
    // The trail cannot be edited through the API.
    for method in [Method::DELETE, Method::POST, Method::PUT, Method::PATCH] {
        let (status, _) = s.call(method.clone(), "/v1/admin/audit", None, true).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{method}");
    }
}

#[tokio::test]
async fn the_openapi_document_states_each_staff_endpoints_scope() {
    let s = server::start(None).await;
    let (_, doc) = s.call(Method::GET, "/openapi.json", None, false).await;
    let mut scoped = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let Some(security) = operation.get("security") else {
                continue;
            };
            let scopes = security[0]["access_token"].as_array().unwrap();
            assert_eq!(scopes.len(), 1, "{method} {path}");
            let scope = scopes[0].as_str().unwrap();
            assert!(
                [
                    "moderate", "reply", "erase", "import", "feed", "webhooks", "admin"
                ]
                .contains(&scope),
                "{method} {path}: {scope}"
            );
            let summary = operation["summary"].as_str().unwrap();
            assert!(summary.contains(&format!("(scope {scope})")), "{summary}");
            scoped += 1;
        }
    }
    assert!(scoped >= 20, "{scoped} staff operations");
    assert_eq!(
        doc["paths"]["/v1/admin/tokens"]["post"]["security"][0]["access_token"],
        json!(["admin"])
    );
}
