//! A change record of the table as what it did to a comment, for consumers
//! of the change stream outside the domain (webhooks): they see comments,
//! never the table's attributes.

use rave_store::ChangeRecord;

use crate::error::Result;
use crate::model::Comment;
use crate::table::{ItemKind, comment};

/// A comment before and after one change; `None` on the side where it did
/// not exist (created, or deleted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommentChange {
    pub before: Option<Comment>,
    pub after: Option<Comment>,
}

/// What a change record did to a comment: `None` when the record is not a
/// comment's (statistics, idempotency records, positions). A comment image
/// that does not decode is an error naming its key, never skipped.
pub fn comment_change(record: &ChangeRecord) -> Result<Option<CommentChange>> {
    let is_comment = |image: &Option<rave_store::Item>| {
        image
            .as_ref()
            .is_some_and(|item| ItemKind::of(item) == ItemKind::Comment)
    };
    if !is_comment(&record.old_image) && !is_comment(&record.new_image) {
        return Ok(None);
    }
    let decode = |image: &Option<rave_store::Item>| -> Result<Option<Comment>> {
        Ok(image.as_ref().map(comment::decode).transpose()?)
    };
    Ok(Some(CommentChange {
        before: decode(&record.old_image)?,
        after: decode(&record.new_image)?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Status;

    use crate::model::sample_comment as comment;

    fn record(old: Option<&Comment>, new: Option<&Comment>) -> ChangeRecord {
        ChangeRecord {
            old_image: old.map(|c| comment::encode(c, 1)),
            new_image: new.map(|c| comment::encode(c, 2)),
            commit_time_ms: 0,
            removed_by_ttl: false,
        }
    }

    #[test]
    fn a_comment_change_decodes_both_images() {
        let before = comment(Status::Pending);
        let after = comment(Status::Published);
        let change = comment_change(&record(Some(&before), Some(&after))).unwrap();
        assert_eq!(
            change,
            Some(CommentChange {
                before: Some(before),
                after: Some(after)
            })
        );
    }

    #[test]
    fn other_items_are_not_comment_changes() {
        let mut item = rave_store::Item::new();
        item.insert(
            "PK".into(),
            rave_store::AttributeValue::S("AGGREGATES".into()),
        );
        let record = ChangeRecord {
            old_image: None,
            new_image: Some(item),
            commit_time_ms: 0,
            removed_by_ttl: false,
        };
        assert_eq!(comment_change(&record).unwrap(), None);
    }

    #[test]
    fn a_malformed_comment_image_is_an_error() {
        let mut item = comment::encode(&comment(Status::Published), 1);
        item.remove("body");
        let record = ChangeRecord {
            old_image: None,
            new_image: Some(item),
            commit_time_ms: 0,
            removed_by_ttl: false,
        };
        assert!(comment_change(&record).is_err());
    }
}
