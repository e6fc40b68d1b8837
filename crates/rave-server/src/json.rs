//! JSON answers, written into one buffer.
//!
//! axum's own `Json` writes through `BytesMut`'s `Writer`: every piece
//! serde hands over (a key, a quote, a run of unescaped text) pays a
//! capacity check and a possible reallocation, and a page of 20 comments
//! is about a thousand pieces (230 k of the 730 k instructions a fresh
//! page took). A `Vec` sized for a page takes them with a plain copy.
//!
//! sonic-rs writes the same bytes as serde_json (its tests below hold it
//! to that), but checks a string for characters to escape 32 bytes at a
//! time where serde_json looks each byte up in a table: on a page of 20
//! comments that was 113 k of serde_json's 145 k instructions.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// More than a page of 20 comments takes (11 KB in the generated set), so
/// the usual answer is written without growing.
const FIRST_CAPACITY: usize = 16 * 1024;

/// A JSON answer (`application/json`), as axum's `Json` answers.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Json<T>(pub T);

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        let mut body = Vec::with_capacity(FIRST_CAPACITY);
        match sonic_rs::to_writer(&mut body, &self.0) {
            Ok(()) => answer(body),
            // A body type that cannot be written (a map with non-string
            // keys) is a bug here, not the client's.
            Err(error) => (StatusCode::INTERNAL_SERVER_ERROR, error.to_string()).into_response(),
        }
    }
}

/// A body that writes its own JSON, the same bytes its `Serialize` would
/// (`comment_json`: the pages of comments).
pub(crate) trait WriteJson {
    fn write_json(&self, out: &mut Vec<u8>);
}

/// A JSON answer whose body writes itself ([`WriteJson`]).
#[derive(Debug)]
pub(crate) struct Written<T>(pub T);

impl<T: WriteJson> IntoResponse for Written<T> {
    fn into_response(self) -> Response {
        let mut body = Vec::with_capacity(FIRST_CAPACITY);
        self.0.write_json(&mut body);
        answer(body)
    }
}

/// A written JSON `body` as the answer.
fn answer(mut body: Vec<u8>) -> Response {
    // A small answer gives back what it did not use: the body's `Bytes`
    // keeps its whole allocation, and kept answers are budgeted by their
    // length.
    if body.capacity() > 2 * body.len() {
        body.shrink_to_fit();
    }
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn answers_what_serde_json_writes_as_application_json() {
        let value =
            serde_json::json!({"items": [{"title": "a \"quote\" and \\ and \u{1}"}], "next": null});
        let response = Json(&value).into_response();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("a body");
        assert_eq!(&body[..], serde_json::to_vec(&value).expect("JSON"));
    }

    #[derive(Debug, Serialize)]
    struct Mixed {
        text: String,
        number: f64,
        small: f32,
        count: i64,
        missing: Option<u8>,
        names: std::collections::BTreeMap<String, u32>,
    }

    proptest::proptest! {
        #[test]
        fn sonic_writes_serde_jsons_bytes(
            text in "\\PC*|[\u{0}-\u{1f}\"\\\\/<>&\u{7f}\u{2028}é😀]{0,40}",
            number in proptest::num::f64::ANY,
            small in proptest::num::f32::ANY,
            count in proptest::num::i64::ANY,
            missing in proptest::option::of(0u8..),
        ) {
            let mixed = Mixed {
                names: [(text.clone(), 1)].into_iter().collect(),
                text,
                number,
                small,
                count,
                missing,
            };
            let mut ours = Vec::new();
            sonic_rs::to_writer(&mut ours, &mixed).expect("JSON");
            proptest::prop_assert_eq!(
                String::from_utf8(ours).expect("UTF-8"),
                serde_json::to_string(&mixed).expect("JSON")
            );
        }
    }
}
