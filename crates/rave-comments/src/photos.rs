//! The photos a comment carries: which stored images it names, their size,
//! and whether a moderator still has to look at each.
//!
//! The domain keeps references only. The images themselves were checked,
//! re-encoded and stored by `rave-media` before the comment naming them is
//! written, under the id the domain keeps here (the SHA-256 of the upload,
//! so two comments carrying the same file name the same image).
//!
//! A photo is `pending` while its comment waits for a moderator (held by a
//! rule, the hook or pre-moderation): approving the comment publishes the
//! photos still pending, and a moderator may approve or reject one photo
//! without touching the text. A rejected photo is removed from the comment;
//! nothing keeps it.

use std::fmt;

use serde::Serialize;

use crate::error::{CommentsError, Result};

/// Most photos one comment may carry, whatever the server allows per post
/// (its own limit, 5 by default, is at most this): the references live in
/// the listed `details` map, so they are bounded like every listed field.
pub const MAX_PHOTOS: usize = 10;

/// Longest edge accepted for a stored photo's size, in pixels.
const MAX_EDGE: u32 = 65_535;

fn invalid(message: impl Into<String>) -> CommentsError {
    CommentsError::Invalid {
        field: "media",
        message: message.into(),
    }
}

/// A stored photo's id: the SHA-256 of the uploaded file, 64 lower-case hex
/// digits (what `rave-media` names it by).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct PhotoId(String);

impl PhotoId {
    pub fn parse(value: &str) -> Result<PhotoId> {
        let ok = value.len() == 64
            && value
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if ok {
            Ok(PhotoId(value.to_owned()))
        } else {
            Err(invalid(format!(
                "{value:?} is not a photo id (64 lower-case hex digits)"
            )))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for PhotoId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Whether shoppers see a photo.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PhotoStatus {
    Published,
    /// Waiting for a moderator, with its comment or on its own.
    Pending,
}

impl PhotoStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            PhotoStatus::Published => "published",
            PhotoStatus::Pending => "pending",
        }
    }
}

/// A photo stored for a new comment, before the comment is written.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NewPhoto {
    pub id: PhotoId,
    /// The display rendition's size in pixels.
    pub width: u32,
    pub height: u32,
}

impl NewPhoto {
    pub(crate) fn with_status(&self, status: PhotoStatus) -> Photo {
        Photo {
            id: self.id.clone(),
            width: self.width,
            height: self.height,
            status,
        }
    }
}

/// A photo of a comment.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Photo {
    pub id: PhotoId,
    /// The display rendition's size in pixels.
    pub width: u32,
    pub height: u32,
    pub status: PhotoStatus,
}

impl Photo {
    pub fn is_published(&self) -> bool {
        self.status == PhotoStatus::Published
    }
}

/// At most [`MAX_PHOTOS`], each named once, each of a plausible size.
pub(crate) fn validate(photos: &[NewPhoto]) -> Result<()> {
    if photos.len() > MAX_PHOTOS {
        return Err(invalid(format!("at most {MAX_PHOTOS} photos per comment")));
    }
    for (at, photo) in photos.iter().enumerate() {
        if photos[..at].iter().any(|earlier| earlier.id == photo.id) {
            return Err(invalid(format!("the photo {} is named twice", photo.id)));
        }
        let edge = 1..=MAX_EDGE;
        if !edge.contains(&photo.width) || !edge.contains(&photo.height) {
            return Err(invalid(format!(
                "the photo {} is {} × {} pixels: each edge must be 1 to {MAX_EDGE}",
                photo.id, photo.width, photo.height
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn photo(hex: char, width: u32) -> NewPhoto {
        NewPhoto {
            id: PhotoId::parse(&hex.to_string().repeat(64)).unwrap(),
            width,
            height: 100,
        }
    }

    #[test]
    fn an_id_is_64_lower_case_hex_digits() {
        assert!(PhotoId::parse(&"a".repeat(64)).is_ok());
        assert!(PhotoId::parse(&"A".repeat(64)).is_err());
        assert!(PhotoId::parse(&"a".repeat(63)).is_err());
        assert!(PhotoId::parse(&format!("{}/", "a".repeat(63))).is_err());
        assert!(PhotoId::parse("").is_err());
    }

    #[test]
    fn photos_are_few_distinct_and_sized() {
        assert!(validate(&[photo('a', 10), photo('b', 10)]).is_ok());
        assert!(validate(&[photo('a', 10), photo('a', 10)]).is_err());
        assert!(validate(&[photo('a', 0)]).is_err());
        assert!(validate(&[photo('a', MAX_EDGE + 1)]).is_err());
        let many: Vec<_> = "0123456789a".chars().map(|c| photo(c, 5)).collect();
        assert!(validate(&many).is_err());
        assert!(validate(&many[..MAX_PHOTOS]).is_ok());
    }
}
