//! The star rating, 1 to 5: a validated type of its own because both a
//! comment's rating (`model`) and its sub-ratings (`attributes`) are one.

use std::fmt;

use serde::Serialize;

use crate::error::CommentsError;

/// A star rating, 1 to 5.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct Rating(u8);

impl Rating {
    pub const ALL: [Rating; 5] = [Rating(1), Rating(2), Rating(3), Rating(4), Rating(5)];

    pub fn new(value: i64) -> Result<Rating, CommentsError> {
        match u8::try_from(value) {
            Ok(v @ 1..=5) => Ok(Rating(v)),
            _ => Err(CommentsError::Invalid {
                field: "rating",
                message: "must be an integer from 1 to 5".into(),
            }),
        }
    }

    pub fn get(self) -> u8 {
        self.0
    }
}

impl fmt::Display for Rating {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}
