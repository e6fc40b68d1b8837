//! Helpful votes: one voter's vote on a comment, replaced by a later one or
//! withdrawn. A vote is an item in the comment's partition; the counts on
//! the comment are the aggregator's, from the change stream.
//!
//! A vote is written in one transaction with a condition check that the
//! comment is listed (it has the `all` index's key), so nobody votes on a
//! pending or deleted comment. Deleting a comment deletes its votes after
//! it: they are one query of its partition.

use std::sync::Arc;

use rave_store::{CancellationReason, Store, StoreError, WriteRequest};
use ulid::Ulid;

use crate::access::TableAccess;
use crate::error::{CommentsError, Result};
use crate::model::Voter;
use crate::table::{comment, primary_key, vote};

/// Votes of one comment read per query when they are deleted.
const VOTES_PAGE: usize = 1000;

#[derive(Debug)]
pub(crate) struct Votes<S> {
    access: Arc<TableAccess<S>>,
}

impl<S: Store> Votes<S> {
    pub(crate) fn new(access: Arc<TableAccess<S>>) -> Votes<S> {
        Votes { access }
    }

    /// Records `voter`'s vote on a listed comment, replacing an earlier one.
    pub(crate) async fn vote(&self, id: &str, voter: &str, helpful: bool) -> Result<()> {
        let (id, voter) = parse(id, voter)?;
        let put = self
            .access
            .put_action(vote::encode(&id, &voter, helpful), None);
        self.on_listed_comment(&id, put).await
    }

    /// Withdraws `voter`'s vote on a listed comment; no vote, nothing to do.
    pub(crate) async fn withdraw(&self, id: &str, voter: &str) -> Result<()> {
        let (id, voter) = parse(id, voter)?;
        let delete = self.access.delete_action(vote::key(&id, &voter), None);
        self.on_listed_comment(&id, delete).await
    }

    /// Runs `action` on a vote of comment `id` in one transaction with the
    /// check that the comment exists and is listed, so no vote outlives a
    /// deletion that committed first, and nobody votes on what they cannot see.
    async fn on_listed_comment(
        &self,
        id: &str,
        action: rave_store::TransactWriteAction,
    ) -> Result<()> {
        let check = self
            .access
            .condition_check_action(comment::key(id), comment::listed());
        match self.access.transact(vec![check, action]).await {
            Ok(()) => Ok(()),
            Err(StoreError::TransactionCanceled(reasons))
                if reasons.first() == Some(&CancellationReason::ConditionalCheckFailed) =>
            {
                Err(CommentsError::NotFound)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Deletes every vote on comment `id` (after the comment itself, whose
    /// deletion stops new ones).
    pub(crate) async fn delete_all(&self, id: &str) -> Result<()> {
        loop {
            let mut input = self.access.query_input(None, vote::votes_of(id));
            input.limit = Some(VOTES_PAGE);
            input.consistent_read = true;
            let page = self.access.query(input).await?;
            if page.items.is_empty() {
                return Ok(());
            }
            let deletes = page
                .items
                .iter()
                .map(|item| WriteRequest::Delete(primary_key(item)))
                .collect();
            self.access.write_many(deletes).await?;
        }
    }
}

/// A comment id (anything but a ULID names no comment) and a voter.
fn parse(id: &str, voter: &str) -> Result<(String, Voter)> {
    let voter = Voter::parse(voter)?;
    let id = Ulid::from_string(id).map_err(|_| CommentsError::NotFound)?;
    Ok((id.to_string(), voter))
}
