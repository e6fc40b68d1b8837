//! A successful operation's answer: a JSON value the operation put
//! together, or the bytes it already wrote (GetItem's and Query's, whose
//! items are written straight from the store's, see `to_json`).

use std::io::Write as _;

use serde_json::Value;

use crate::error::ApiError;

#[derive(Debug)]
pub(crate) enum Answer {
    Value(Value),
    Written(Vec<u8>),
}

impl Answer {
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

/// An answer's JSON object, written member by member. Callers give the
/// members in the order a `Value`'s map would write them (by name), so
/// that the answer reads as it did when it was a `Value`.
#[derive(Debug)]
pub(crate) struct AnswerWriter {
    text: Vec<u8>,
}

impl AnswerWriter {
    /// An empty object, with room for about `capacity` bytes.
    pub(crate) fn with_capacity(capacity: usize) -> AnswerWriter {
        let mut text = Vec::with_capacity(capacity);
        text.push(b'{');
        AnswerWriter { text }
    }

    /// Starts member `name` (a name with nothing to escape) and gives the
    /// bytes its value is to be written after.
    pub(crate) fn member(&mut self, name: &str) -> &mut Vec<u8> {
        if self.text.len() > 1 {
            self.text.push(b',');
        }
        self.text.push(b'"');
        self.text.extend_from_slice(name.as_bytes());
        self.text.extend_from_slice(b"\":");
        &mut self.text
    }

    /// Member `name` with a value put together as a `Value`.
    pub(crate) fn value(&mut self, name: &str, value: &Value) {
        // Writing into a `Vec` cannot fail.
        let _ = write!(self.member(name), "{value}");
    }

    /// Member `name` with a count.
    pub(crate) fn count(&mut self, name: &str, count: usize) {
        // Writing into a `Vec` cannot fail.
        let _ = write!(self.member(name), "{count}");
    }

    pub(crate) fn finish(mut self) -> Answer {
        self.text.push(b'}');
        Answer::Written(self.text)
    }
}
