//! The orders a listing can be read in, and which partitions each reads.
//!
//! * `newest` (the default): no rating filter (or all five ratings), one
//!   partition of `all` / `byLang`; otherwise the rating partitions asked
//!   for of `byRating` / `byLangAndRating`, merged newest first;
//! * `oldest`: the same partitions read ascending, merged oldest first;
//! * `highest` / `lowest`: no index of their own. The per-rating partitions
//!   (`byLangAndRating` with a language, `byRating` without) are read one
//!   after the other, 5 stars down to 1 or 1 up to 5, each newest first;
//!   a page moves on to the next rating only when the one before has run
//!   out, so it reads what it returns, and the cursor records which rating
//!   it is in (earlier ones exhausted, later ones not started).
//! * `helpful`: the `helpful*` indexes, sorted by helpfulness, then time.
//!   Without a rating filter, one query on `helpfulByLang` (with a
//!   language) or `helpfulAll`: a page costs the same at any depth, however
//!   the ratings mix there (the top of the order from 5-star comments when
//!   votes follow the rating, every rating deeper down). With one, the
//!   rating partitions asked for of `helpfulByLangAndRating` or
//!   `helpfulByRating` are merged most helpful first, each read in chunks
//!   sized by its share of the product's counts, as a rating fan-out is;
//!   the executor reads a partition only once the merge is down to the
//!   helpfulness rank of its next comment, which the cursor carries.
//!   Verified listings merge the verified copies of the per-rating indexes
//!   in both cases. Scores move while a walk goes on: a comment whose score
//!   changes between two pages may show once more or not at all; every
//!   other comment shows exactly once.

use serde::Serialize;

use super::filter::Filter;
use crate::error::{CommentsError, Result};
use crate::model::Rating;

/// The order of a listing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Sort {
    /// Newest first (ties by id).
    #[default]
    Newest,
    /// Oldest first.
    Oldest,
    /// Most stars first, newest first within a rating.
    Highest,
    /// Fewest stars first, newest first within a rating.
    Lowest,
    /// The lower bound of the 95% Wilson interval of the helpful share of
    /// votes first (no votes: 0), newest first among equal scores.
    Helpful,
}

/// How a page in some order reads the product's partitions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reading {
    /// One partition holding every rating.
    OnePartition,
    /// These ratings' partitions, merged by the order.
    Merged(Vec<Rating>),
    /// These ratings' partitions, one after another in this order.
    InTurn(Vec<Rating>),
}

impl Reading {
    /// The rating partitions read, in the order they are planned.
    pub(crate) fn ratings(&self) -> &[Rating] {
        match self {
            Reading::OnePartition => &[],
            Reading::Merged(ratings) | Reading::InTurn(ratings) => ratings,
        }
    }
}

impl Sort {
    pub const ALL: [Sort; 5] = [
        Sort::Newest,
        Sort::Oldest,
        Sort::Highest,
        Sort::Lowest,
        Sort::Helpful,
    ];

    pub fn parse(value: &str) -> Result<Sort> {
        Sort::ALL
            .into_iter()
            .find(|sort| sort.as_str() == value)
            .ok_or_else(|| CommentsError::Invalid {
                field: "sort",
                message: "must be newest, oldest, highest, lowest or helpful".into(),
            })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Sort::Newest => "newest",
            Sort::Oldest => "oldest",
            Sort::Highest => "highest",
            Sort::Lowest => "lowest",
            Sort::Helpful => "helpful",
        }
    }

    /// Whether sub-queries read (and the page is merged) in ascending order.
    pub(crate) fn ascending(self) -> bool {
        self == Sort::Oldest
    }

    /// Which partitions a page in this order reads under `filter`. The
    /// orders by time read one partition unless some ratings are filtered
    /// out; highest and lowest always read rating partitions (all five
    /// without a filter); helpful reads one partition unless it is filtered
    /// by rating or verified (the verified copies have no `helpful` index
    /// across ratings).
    pub(crate) fn reading(self, filter: &Filter) -> Reading {
        let asked = || match filter.ratings.ratings() {
            asked if asked.is_empty() => Rating::ALL.to_vec(),
            asked => asked,
        };
        match self {
            Sort::Newest | Sort::Oldest if filter.ratings.is_unfiltered() => Reading::OnePartition,
            Sort::Newest | Sort::Oldest => Reading::Merged(filter.ratings.ratings()),
            Sort::Lowest => Reading::InTurn(asked()),
            Sort::Highest => Reading::InTurn(asked().into_iter().rev().collect()),
            Sort::Helpful if !filter.verified && filter.ratings.is_unfiltered() => {
                Reading::OnePartition
            }
            Sort::Helpful => Reading::Merged(asked()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sort_has_a_name_and_nothing_else_parses() {
        for sort in Sort::ALL {
            assert_eq!(Sort::parse(sort.as_str()).unwrap(), sort);
        }
        for bad in ["", "Newest", "helpfulness", "Helpful", "rating"] {
            assert!(Sort::parse(bad).is_err(), "{bad}");
        }
    }
}
