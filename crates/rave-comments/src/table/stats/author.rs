//! An author's statistics item (`AUTHOR#<author>` / `S`): how many counted
//! comments the author has.

use rave_store::{AttributeValue, Item};

use crate::table::{Malformed, count, number};

pub(in crate::table) const PREFIX: &str = "AUTHOR#";

const AUTHOR: &str = "author";
const COUNT: &str = "count";

pub(crate) fn key(author: &str) -> Item {
    crate::table::key(format!("{PREFIX}{author}"), "S".to_owned())
}

/// The item of an author with `comments` counted comments.
pub(crate) fn encode(author: &str, comments: u64) -> Item {
    let mut item = key(author);
    item.insert(AUTHOR.into(), AttributeValue::s(author));
    item.insert(COUNT.into(), number(comments));
    item
}

/// How many counted comments the author has.
pub(crate) fn decode(item: &Item) -> Result<u64, Malformed> {
    count(item, COUNT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_author_round_trips_and_a_negative_count_is_malformed() {
        assert_eq!(decode(&encode("a", 4)).unwrap(), 4);
        let mut item = encode("a", 1);
        item.insert(
            COUNT.into(),
            AttributeValue::N(rave_store::Number::from(-1i64)),
        );
        assert!(decode(&item).is_err());
    }
}
