//! A voter's vote on a comment: an item in the comment's own partition
//! (`COMMENT#<id>` / `VOTE#<voter>`), so one voter holds one vote per
//! comment (a later vote replaces it) and a comment's votes are one query.
//! No index: the aggregator counts votes from the change stream onto the
//! comment item.

use rave_store::{AttributeValue, Item, KeyCondition, SortOp};

use super::{Malformed, PK, SK, comment, text};
use crate::model::Voter;

pub(super) const SORT_PREFIX: &str = "VOTE#";

const COMMENT_ID: &str = "comment_id";
const VOTER: &str = "voter";
const HELPFUL: &str = "helpful";

/// One stored vote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Vote {
    pub(crate) comment_id: String,
    pub(crate) voter: String,
    pub(crate) helpful: bool,
}

pub(crate) fn key(comment_id: &str, voter: &Voter) -> Item {
    super::key(
        format!("{}{comment_id}", comment::PREFIX),
        format!("{SORT_PREFIX}{}", voter.as_str()),
    )
}

pub(crate) fn encode(comment_id: &str, voter: &Voter, helpful: bool) -> Item {
    let mut item = key(comment_id, voter);
    item.insert(COMMENT_ID.into(), AttributeValue::s(comment_id));
    item.insert(VOTER.into(), AttributeValue::s(voter.as_str()));
    item.insert(HELPFUL.into(), AttributeValue::Bool(helpful));
    item
}

pub(crate) fn decode(item: &Item) -> Result<Vote, Malformed> {
    let helpful = match item.get(HELPFUL) {
        Some(AttributeValue::Bool(helpful)) => *helpful,
        _ => return Err(Malformed::new(item, format!("{HELPFUL} is not a boolean"))),
    };
    Ok(Vote {
        comment_id: text(item, COMMENT_ID)?.to_owned(),
        voter: text(item, VOTER)?.to_owned(),
        helpful,
    })
}

/// Every vote on a comment: its partition's items whose sort key is a vote's.
pub(crate) fn votes_of(comment_id: &str) -> KeyCondition {
    KeyCondition::partition(PK, format!("{}{comment_id}", comment::PREFIX))
        .with_sort(SK, SortOp::BeginsWith(AttributeValue::s(SORT_PREFIX)))
}

/// Whether an item of a comment's partition is a vote (by its sort key).
pub(super) fn is_vote(item: &Item) -> bool {
    item.get(SK)
        .and_then(AttributeValue::as_s)
        .is_some_and(|sk| sk.starts_with(SORT_PREFIX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::{ItemKind, describe_key};

    #[test]
    fn a_vote_lives_in_its_comment_partition_and_round_trips() {
        let voter = Voter::parse("shopper-7").unwrap();
        let item = encode("01JD3X0000000000000000000A", &voter, true);
        assert_eq!(
            describe_key(&item),
            "COMMENT#01JD3X0000000000000000000A/VOTE#shopper-7"
        );
        assert_eq!(ItemKind::of(&item), ItemKind::Vote);
        assert_eq!(
            decode(&item).unwrap(),
            Vote {
                comment_id: "01JD3X0000000000000000000A".into(),
                voter: "shopper-7".into(),
                helpful: true,
            }
        );
        let condition = votes_of("01JD3X0000000000000000000A");
        assert_eq!(
            condition.partition_value,
            AttributeValue::s("COMMENT#01JD3X0000000000000000000A")
        );
    }

    #[test]
    fn a_malformed_vote_names_its_key() {
        let voter = Voter::parse("v").unwrap();
        let mut item = encode("01JD3X0000000000000000000A", &voter, false);
        item.insert(HELPFUL.into(), AttributeValue::s("yes"));
        let error = decode(&item).unwrap_err();
        assert!(error.key.ends_with("/VOTE#v"), "{error}");
    }
}
