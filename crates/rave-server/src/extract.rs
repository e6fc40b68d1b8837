//! Request extractors that answer in problem documents: a strict JSON body
//! (415 for another content type, 413 past 64 KiB, 400 naming the field for
//! anything malformed or unknown, via `serde_path_to_error`) and the
//! tokens the operator configured (`callers` checks callers against them).
//! They are kept only as SHA-256 digests, compared in constant time, and
//! never logged.

use axum::extract::{FromRequest, Request};
use axum::http::{StatusCode, header};
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::error::ApiError;

/// Largest request body accepted.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// A JSON body whose type rejects unknown fields.
#[derive(Debug)]
pub(crate) struct JsonBody<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, _state: &S) -> Result<Self, ApiError> {
        let content_type = request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let media_type = content_type.split(';').next().unwrap_or("").trim();
        if !media_type.eq_ignore_ascii_case("application/json") {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "Content-Type must be application/json",
            ));
        }
        let too_large = || {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the body must be at most {MAX_BODY_BYTES} bytes"),
            )
        };
        let declared = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok());
        if declared.is_some_and(|len| len > MAX_BODY_BYTES) {
            return Err(too_large());
        }
        let bytes = axum::body::to_bytes(request.into_body(), MAX_BODY_BYTES)
            .await
            .map_err(|_| too_large())?;
        let value = json_object(&bytes, "body")?;
        Ok(JsonBody(value))
    }
}

/// `bytes` read as the JSON of `T`, refused with a 400 naming the field
/// (or `whole`, the body or the part it came in, when the JSON is wrong as a
/// whole).
pub(crate) fn json_object<T: DeserializeOwned>(bytes: &[u8], whole: &str) -> Result<T, ApiError> {
    // Every body is an object (or `null` where the document makes it
    // optional); serde would also read a struct from an array of its
    // fields in order, which no document allows.
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
        return Err(ApiError::bad_request(format!(
            "{whole}: must be a JSON object"
        )));
    }
    let mut json = serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(&mut json).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner();
        if path.is_empty() || path == "." {
            ApiError::bad_request(format!("{whole}: {inner}"))
        } else {
            ApiError::bad_request(format!("{path}: {inner}"))
        }
    })
}

/// A token the operator configured (`--admin-token`, `--feed-token`), kept
/// only as a digest so comparisons take the same time whatever the input.
#[derive(Clone)]
pub struct ConfiguredToken(Option<[u8; 32]>);

impl std::fmt::Debug for ConfiguredToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "ConfiguredToken(set)"
        } else {
            "ConfiguredToken(unset)"
        })
    }
}

impl ConfiguredToken {
    pub fn new(token: Option<&str>) -> ConfiguredToken {
        ConfiguredToken(
            token
                .filter(|t| !t.is_empty())
                .map(|t| Sha256::digest(t.as_bytes()).into()),
        )
    }

    pub(crate) fn matches(&self, presented: &str) -> bool {
        match &self.0 {
            Some(expected) => {
                let presented: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
                bool::from(expected.ct_eq(&presented))
            }
            None => false,
        }
    }
}
