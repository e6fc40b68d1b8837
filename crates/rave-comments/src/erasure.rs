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

use std::sync::Arc;

use rave_store::{KeyCondition, Store, WriteRequest};

use crate::access::TableAccess;
use crate::error::Result;
use crate::model::validate_author;
use crate::table::{Index, comment, personal, primary_key};

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
    /// is harmless). The author's comments are walked oldest first, so one
    /// posted while the erasure runs is reached too.
    pub(crate) async fn erase_author(&self, author: &str) -> Result<u64> {
        let author = validate_author(author)?;
        let index = Index::ByAuthor;
        let mut erased = 0;
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
                erased += self.erase_partition(&id).await?;
            }
            match page.last_evaluated_key {
                Some(key) => start = Some(key),
                None => return Ok(erased),
            }
        }
    }

    /// Deletes every item of comment `id`'s partition; 1 if the comment
    /// itself was among them. The partition is read consistently, so an
    /// index entry that lags behind a deletion finds nothing to delete.
    async fn erase_partition(&self, id: &str) -> Result<u64> {
        let mut erased = 0;
        let mut start = None;
        loop {
            let mut input = self.access.query_input(None, comment::partition(id));
            input.consistent_read = true;
            input.exclusive_start_key = start.take();
            let page = self.access.query(input).await?;
            erased += page
                .items
                .iter()
                .filter(|item| comment::is_comment_item(item))
                .count() as u64;
            let deletes = page
                .items
                .iter()
                .map(|item| WriteRequest::Delete(primary_key(item)))
                .collect();
            self.access.write_many(deletes).await?;
            match page.last_evaluated_key {
                Some(key) => start = Some(key),
                None => return Ok(erased),
            }
        }
    }
}
