//! Erasing an author's data: every comment whose author is exactly the
//! given value, with everything in its partition (its votes; the merchant's
//! reply lives on the comment item) and the personal data kept apart for it
//! (`table::personal`: an imported email). Statistics, leaderboards and global
//! aggregates follow through the change stream, as for any deletion, and the
//! author's statistics item goes with the last counted comment.
//!
//! The comments are found through `byAuthor`, which keys every comment by
//! its exact author (`AUTHOR#<author>`: nothing follows the author, so no
//! character in it reaches another author's partition). The index is walked
//! oldest first, so a comment posted while the erasure runs is reached too,
//! and each comment's partition is read consistently, so an index entry that
//! lags behind a deletion finds nothing. Idempotency records keep the id of
//! the comment they created, not its author, and expire.
//!
//! A comment with photos goes in one transaction with its photo references
//! (`table::photo`); the erasure answers which photos no comment names any
//! more, so the caller deletes their blobs at once (an erased author's
//! photos must not stay reachable by URL).

use std::sync::Arc;

use rave_store::{KeyCondition, Store, WriteRequest};

use crate::access::TableAccess;
use crate::error::Result;
use crate::model::validate_author;
use crate::photos::PhotoId;
use crate::references;
use crate::table::{Index, comment, personal, photo, primary_key};

/// What an erasure removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Erased {
    /// Comments erased (0 when the author had none left).
    pub comments: u64,
    /// The erased comments' photos that no comment names any more: their
    /// blobs are to be deleted.
    pub unreferenced_photos: Vec<PhotoId>,
}

/// Index entries an erasure reads per request.
const AUTHOR_PAGE: usize = 100;

#[derive(Debug)]
pub(crate) struct Erasure<S> {
    access: Arc<TableAccess<S>>,
}

impl<S: Store> Erasure<S> {
    pub(crate) fn new(access: Arc<TableAccess<S>>) -> Erasure<S> {
        Erasure { access }
    }

    /// Deletes every comment of `author` with its partition, and returns
    /// how many comments were deleted (0 when none was left: erasing twice
    /// is harmless) and which of their photos lost their last reference.
    /// The author's comments are walked oldest first, so one posted while
    /// the erasure runs is reached too.
    pub(crate) async fn erase_author(&self, author: &str) -> Result<Erased> {
        let author = validate_author(author)?;
        let index = Index::ByAuthor;
        let mut erased = 0;
        let mut photos = Vec::new();
        let mut start = None;
        loop {
            let mut input = self.access.query_input(
                Some(index.name()),
                KeyCondition::partition(
                    index.partition_attribute(),
                    comment::author_partition(&author),
                ),
            );
            input.limit = Some(AUTHOR_PAGE);
            input.exclusive_start_key = start.take();
            let page = self.access.query(input).await?;
            for entry in &page.items {
                let id = comment::id_of_key(entry)?.to_string();
                // The personal data first: were the erasure cut short, the
                // comment left would still lead a second erasure to it.
                self.access.delete(personal::key(&id), None).await?;
                erased += self.erase_partition(&id, &mut photos).await?;
            }
            match page.last_evaluated_key {
                Some(key) => start = Some(key),
                None => {
                    photos.sort();
                    photos.dedup();
                    return Ok(Erased {
                        comments: erased,
                        unreferenced_photos: references::unreferenced(&self.access, photos).await?,
                    });
                }
            }
        }
    }

    /// Deletes every item of comment `id`'s partition; 1 if the comment
    /// itself was among them, whose photos are added to `photos`. The
    /// partition is read consistently, so an index entry that lags behind a
    /// deletion finds nothing to delete.
    async fn erase_partition(&self, id: &str, photos: &mut Vec<PhotoId>) -> Result<u64> {
        let mut erased = 0;
        let mut start = None;
        loop {
            let mut input = self.access.query_input(None, comment::partition(id));
            input.consistent_read = true;
            input.exclusive_start_key = start.take();
            let page = self.access.query(input).await?;
            let (comments, others): (Vec<_>, Vec<_>) = page
                .items
                .iter()
                .partition(|item| comment::is_comment_item(item));
            let deletes = others
                .into_iter()
                .map(|item| WriteRequest::Delete(primary_key(item)))
                .collect();
            self.access.write_many(deletes).await?;
            for item in comments {
                let named: Vec<PhotoId> = comment::decode(item)?
                    .media
                    .into_iter()
                    .map(|named| named.id)
                    .collect();
                if named.is_empty() {
                    self.access.delete(primary_key(item), None).await?;
                } else {
                    let mut actions = vec![self.access.delete_action(primary_key(item), None)];
                    actions.extend(
                        named
                            .iter()
                            .map(|photo| self.access.delete_action(photo::encode(photo, id), None)),
                    );
                    self.access.transact(actions).await?;
                }
                photos.extend(named);
                erased += 1;
            }
            match page.last_evaluated_key {
                Some(key) => start = Some(key),
                None => return Ok(erased),
            }
        }
    }
}
