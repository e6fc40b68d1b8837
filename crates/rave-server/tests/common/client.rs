//! One JSON call to a running rave: the status and the body (JSON, or the
//! text as a string when it is not JSON), with the admin token when asked.

use reqwest::{Client, Method, StatusCode};
use serde_json::Value;

pub async fn call(
    client: &Client,
    method: Method,
    url: String,
    body: Option<Value>,
    admin_token: Option<&str>,
) -> (StatusCode, Value) {
    let mut request = client.request(method, url);
    if let Some(body) = body {
        request = request.json(&body);
    }
    if let Some(token) = admin_token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}
