//! A successful operation's answer: a JSON value the operation put
//! together, or the bytes it already wrote (GetItem's and Query's, whose
//! items are serialised straight from the store's, see `to_json`).

use serde::Serialize;
use serde_json::Value;

use crate::error::ApiError;

#[derive(Debug)]
pub(crate) enum Answer {
    Value(Value),
    Written(Vec<u8>),
}

impl Answer {
    /// `answer` written as JSON now.
    pub(crate) fn write(answer: &impl Serialize) -> Result<Answer, ApiError> {
        serde_json::to_vec(answer)
            .map(Answer::Written)
            .map_err(|error| ApiError::from(rave_store::StoreError::Internal(error.to_string())))
    }

    /// The answer as a value, for what reshapes it (PartiQL's statements
    /// run as GetItem, Query or Scan).
    pub(crate) fn into_value(self) -> Result<Value, ApiError> {
        match self {
            Answer::Value(value) => Ok(value),
            Answer::Written(bytes) => serde_json::from_slice(&bytes).map_err(|error| {
                ApiError::from(rave_store::StoreError::Internal(error.to_string()))
            }),
        }
    }

    /// The body sent.
    pub(crate) fn into_bytes(self) -> Vec<u8> {
        match self {
            // A `Value` always serialises: its keys are strings.
            Answer::Value(value) => serde_json::to_vec(&value).unwrap_or_default(),
            Answer::Written(bytes) => bytes,
        }
    }
}

impl From<Value> for Answer {
    fn from(value: Value) -> Answer {
        Answer::Value(value)
    }
}
