//! The photo reference: the record that a comment names a stored photo,
//! `PHOTO#<photo id>` / `COMMENT#<comment id>`, one per comment naming it.
//!
//! Photos are content-addressed (the id is the SHA-256 of the upload), so
//! two comments carrying the same file name the same stored blob; the blob
//! may go only when no comment names it any more. The references answer
//! that with one query of the photo's partition, instead of a scan of every
//! comment. A reference is written in the same write as the comment that
//! names the photo (a transaction on create, the same batch on import) and
//! removed in the same write that removes the photo from the comment or
//! deletes the comment, so "no reference left" means "no comment names it".
//!
//! It holds nothing but its key: no index projects it, and no statistic,
//! listing or webhook reads it (`ItemKind::Other`).

use rave_store::{Item, ItemView, KeyCondition};

use super::{Malformed, PK, SK, text};
use crate::photos::PhotoId;

pub(crate) const PREFIX: &str = "PHOTO#";
const COMMENT_PREFIX: &str = "COMMENT#";

/// The reference of comment `comment_id` to `photo`.
pub(crate) fn encode(photo: &PhotoId, comment_id: &str) -> Item {
    super::key(
        format!("{PREFIX}{photo}"),
        format!("{COMMENT_PREFIX}{comment_id}"),
    )
}

/// Every reference to `photo`.
pub(crate) fn partition(photo: &PhotoId) -> KeyCondition {
    KeyCondition::partition(PK, format!("{PREFIX}{photo}"))
}

/// Whether a table item is a photo reference.
pub(crate) fn is_reference(item: &(impl ItemView + ?Sized)) -> bool {
    item.attribute(PK)
        .and_then(|value| value.as_s())
        .is_some_and(|pk| pk.starts_with(PREFIX))
}

/// The photo and the comment a reference links.
pub(crate) fn decode(item: &(impl ItemView + ?Sized)) -> Result<(PhotoId, String), Malformed> {
    let photo = text(item, PK)?
        .strip_prefix(PREFIX)
        .and_then(|id| PhotoId::parse(id).ok())
        .ok_or_else(|| Malformed::new(item, "PK does not name a photo"))?;
    let comment = text(item, SK)?
        .strip_prefix(COMMENT_PREFIX)
        .filter(|id| !id.is_empty())
        .ok_or_else(|| Malformed::new(item, "SK does not name a comment"))?;
    Ok((photo, comment.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::super::{ItemKind, describe_key};
    use super::*;

    #[test]
    fn a_reference_is_keyed_by_photo_then_comment_and_round_trips() {
        let photo = PhotoId::parse(&"ab".repeat(32)).unwrap();
        let item = encode(&photo, "01JD3X0000000000000000000A");
        assert_eq!(
            describe_key(&item),
            format!("PHOTO#{photo}/COMMENT#01JD3X0000000000000000000A")
        );
        assert!(is_reference(&item));
        assert_eq!(
            decode(&item).unwrap(),
            (photo, "01JD3X0000000000000000000A".to_owned())
        );
        // No statistic, listing or webhook treats it as a comment.
        assert_eq!(ItemKind::of(&item), ItemKind::Other);
    }

    #[test]
    fn a_reference_that_names_no_photo_is_malformed() {
        let item = super::super::key("PHOTO#nothex".into(), "COMMENT#x".into());
        assert!(decode(&item).is_err());
        let item = super::super::key(format!("PHOTO#{}", "a".repeat(64)), "VOTE#x".into());
        assert!(decode(&item).is_err());
    }
}
