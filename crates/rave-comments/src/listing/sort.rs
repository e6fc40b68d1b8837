//! The orders a listing can be read in, and the plans of those that are not
//! newest first.
//!
//! * `newest` (the default): the planner's plan, merged newest first;
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
//!   rank of its next comment, which the cursor carries. Verified listings
//!   merge the verified copies of the per-rating indexes in both cases.
//!   Scores move while a walk goes on: a comment whose score
//!   changes between two pages may show once more or not at all; every
//!   other comment shows exactly once.

use serde::Serialize;

use super::planner::{
    Filter, Plan, PlannedQuery, RatingCounts, SizedBy, Skipped, Strategy, share_limits,
};
use crate::error::{CommentsError, Result};
use crate::model::{ProductId, Rating};
use crate::table::Index;
use crate::table::comment::listing_partition;

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
}

/// Plans a page read in `sort`'s order. Newest and oldest first share the
/// planner's partitions; highest and lowest read rating partitions in turn.
pub(crate) fn plan(
    product: &ProductId,
    filter: &Filter,
    sort: Sort,
    page_size: usize,
    counts: Option<&RatingCounts>,
    exact: bool,
) -> Plan {
    let mut plan = match sort {
        Sort::Newest | Sort::Oldest => {
            super::planner::plan(product, filter, page_size, counts, exact)
        }
        Sort::Highest | Sort::Lowest => {
            in_rating_order(product, filter, sort, page_size, counts, exact)
        }
        Sort::Helpful => most_helpful(product, filter, page_size, counts, exact),
    };
    plan.sort = sort;
    plan
}

/// The per-rating partitions a rating-ordered listing reads: the index
/// keyed by language and rating when `filter` has a language, by rating
/// alone otherwise, and the ratings asked for (all five without a filter).
fn rating_partitions(filter: &Filter) -> (Index, Vec<Rating>) {
    let index = match filter.language {
        Some(_) => Index::ByLangAndRating,
        None => Index::ByRating,
    };
    let ratings = match filter.ratings.ratings() {
        asked if asked.is_empty() => Rating::ALL.to_vec(),
        asked => asked,
    };
    (index, ratings)
}

/// One sub-query per rating asked for (all five without a rating filter),
/// ranked in the order they are read: each is read only once the ones
/// before it have run out. A rating whose exact count is 0 is skipped.
fn in_rating_order(
    product: &ProductId,
    filter: &Filter,
    sort: Sort,
    page_size: usize,
    counts: Option<&RatingCounts>,
    exact: bool,
) -> Plan {
    let language = filter.language.as_ref();
    let (index, mut ratings) = rating_partitions(filter);
    // Verified listings read the same partitions of the verified copy.
    let read_on = if filter.verified {
        index.verified()
    } else {
        index
    };
    if sort == Sort::Highest {
        ratings.reverse();
    }
    let mut queries = Vec::with_capacity(ratings.len());
    let mut skipped = Vec::new();
    for rating in ratings {
        let partition_key = listing_partition(index, product, language, Some(rating));
        if exact && counts.is_some_and(|c| c.of(rating) == 0) {
            skipped.push(Skipped {
                partition_key,
                reason: "count is 0",
            });
            continue;
        }
        queries.push(PlannedQuery {
            index: read_on.name(),
            partition_key,
            // One more than the page, to know whether a next page exists;
            // a rating started mid-page reads only what the page still needs.
            limit: page_size + 1,
            tag: rating.get(),
            index_kind: read_on,
            share: 1.0,
            rank: queries.len() as u8,
        });
    }
    let strategy = match (queries.len(), language.is_some()) {
        (0, _) => Strategy::Empty,
        (1, false) => Strategy::Rating,
        (1, true) => Strategy::LanguageRating,
        (_, false) => Strategy::RatingsInOrder,
        (_, true) => Strategy::LanguageRatingsInOrder,
    };
    Plan {
        strategy,
        sort,
        queries,
        skipped,
        sized_by: SizedBy::Nothing,
        read_units: 0.0,
        items_read: 0,
    }
}

/// Whether a `helpful` listing reads one partition of `helpfulByLang` or
/// `helpfulAll` rather than merging rating partitions.
pub(crate) fn helpful_in_one_partition(filter: &Filter) -> bool {
    !filter.verified && filter.ratings.is_unfiltered()
}

/// Without a rating filter, one query on `helpfulByLang` or `helpfulAll`.
/// Otherwise one sub-query per rating asked for on the `helpful*` index
/// over that rating's partition (verified listings: all five without a
/// rating filter), all merged; each first reads its share of the page by
/// the counts (the whole page without counts). A rating whose exact count
/// is 0 is skipped.
fn most_helpful(
    product: &ProductId,
    filter: &Filter,
    page_size: usize,
    counts: Option<&RatingCounts>,
    exact: bool,
) -> Plan {
    let language = filter.language.as_ref();
    if helpful_in_one_partition(filter) {
        let (strategy, index) = match language {
            Some(_) => (Strategy::HelpfulLanguage, Index::ByLang),
            None => (Strategy::HelpfulAll, Index::All),
        };
        let read_on = index.helpful();
        return Plan {
            strategy,
            sort: Sort::Helpful,
            queries: vec![PlannedQuery {
                index: read_on.name(),
                partition_key: listing_partition(index, product, language, None),
                // One more than the page, to know whether a next page exists.
                limit: page_size + 1,
                tag: 0,
                index_kind: read_on,
                share: 1.0,
                rank: 0,
            }],
            skipped: Vec::new(),
            sized_by: SizedBy::Nothing,
            read_units: 0.0,
            items_read: 0,
        };
    }
    let (index, asked) = rating_partitions(filter);
    let read_on = match filter.verified {
        true => index.verified().helpful(),
        false => index.helpful(),
    };
    let mut ratings = Vec::with_capacity(asked.len());
    let mut skipped = Vec::new();
    for rating in asked {
        match counts.map(|c| c.of(rating)) {
            Some(0) if exact => skipped.push(Skipped {
                partition_key: listing_partition(index, product, language, Some(rating)),
                reason: "count is 0",
            }),
            count => ratings.push((rating, count)),
        }
    }
    let limits = match ratings.len() {
        1 => vec![(page_size + 1, 1.0)],
        // Scores interleave the partitions unevenly (unlike times, which
        // the counts predict well), so each first reads half its share and
        // refills make up the rest: what is read past the page's end and
        // read again by the next page stays small. (A page that does not
        // know where the partitions rank first reads one of each: see
        // `Plan::resume`.)
        _ => share_limits(page_size, &ratings)
            .into_iter()
            .map(|(limit, share)| (limit.div_ceil(2), share))
            .collect(),
    };
    let queries: Vec<PlannedQuery> = ratings
        .iter()
        .zip(limits)
        .map(|((rating, _), (limit, share))| PlannedQuery {
            index: read_on.name(),
            partition_key: listing_partition(index, product, language, Some(*rating)),
            limit,
            tag: rating.get(),
            index_kind: read_on,
            share,
            rank: 0,
        })
        .collect();
    let strategy = match (queries.len(), language.is_some()) {
        (0, _) => Strategy::Empty,
        (_, false) => Strategy::HelpfulRatings,
        (_, true) => Strategy::HelpfulLanguageRatings,
    };
    Plan {
        strategy,
        sort: Sort::Helpful,
        queries,
        skipped,
        sized_by: SizedBy::Nothing,
        read_units: 0.0,
        items_read: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::listing::planner::tests::{filter, product};

    fn order(plan: &Plan) -> Vec<(&str, &str, u8)> {
        plan.queries
            .iter()
            .map(|q| (q.index, q.partition_key.as_str(), q.rank))
            .collect()
    }

    #[test]
    fn every_sort_has_a_name_and_nothing_else_parses() {
        for sort in Sort::ALL {
            assert_eq!(Sort::parse(sort.as_str()).unwrap(), sort);
        }
        for bad in ["", "Newest", "helpfulness", "Helpful", "rating"] {
            assert!(Sort::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn highest_reads_five_stars_down_to_one_without_a_new_index() {
        let product = product();
        let p = plan(&product, &filter(None, &[]), Sort::Highest, 20, None, false);
        assert_eq!(p.strategy, Strategy::RatingsInOrder);
        assert_eq!(
            order(&p),
            vec![
                ("byRating", "PRODUCT#42/5", 0),
                ("byRating", "PRODUCT#42/4", 1),
                ("byRating", "PRODUCT#42/3", 2),
                ("byRating", "PRODUCT#42/2", 3),
                ("byRating", "PRODUCT#42/1", 4),
            ]
        );
        let p = plan(
            &product,
            &filter(Some("de"), &[1, 4]),
            Sort::Lowest,
            20,
            None,
            false,
        );
        assert_eq!(p.strategy, Strategy::LanguageRatingsInOrder);
        assert_eq!(
            order(&p),
            vec![
                ("byLangAndRating", "PRODUCT#42/de/1", 0),
                ("byLangAndRating", "PRODUCT#42/de/4", 1),
            ]
        );
    }

    #[test]
    fn exact_zero_counts_are_skipped_and_ranks_stay_dense() {
        let product = product();
        let counts = RatingCounts([3, 0, 0, 0, 7]);
        let p = plan(
            &product,
            &filter(None, &[]),
            Sort::Highest,
            20,
            Some(&counts),
            true,
        );
        assert_eq!(
            order(&p),
            vec![
                ("byRating", "PRODUCT#42/5", 0),
                ("byRating", "PRODUCT#42/1", 1)
            ]
        );
        assert_eq!(p.skipped.len(), 3);
        let p = plan(
            &product,
            &filter(None, &[]),
            Sort::Highest,
            20,
            Some(&counts),
            false,
        );
        assert_eq!(p.queries.len(), 5, "counts that may lag skip nothing");
    }

    #[test]
    fn helpful_without_a_rating_filter_reads_one_partition() {
        let product = product();
        let counts = RatingCounts([10, 0, 0, 30, 60]);
        for (language, ratings, strategy, expected) in [
            (
                None,
                &[][..],
                Strategy::HelpfulAll,
                ("helpfulAll", "PRODUCT#42"),
            ),
            (
                Some("en"),
                &[][..],
                Strategy::HelpfulLanguage,
                ("helpfulByLang", "PRODUCT#42/en"),
            ),
            (
                None,
                &[1, 2, 3, 4, 5][..],
                Strategy::HelpfulAll,
                ("helpfulAll", "PRODUCT#42"),
            ),
        ] {
            let p = plan(
                &product,
                &filter(language, ratings),
                Sort::Helpful,
                20,
                Some(&counts),
                true,
            );
            assert_eq!(p.strategy, strategy);
            assert_eq!(order(&p), vec![(expected.0, expected.1, 0)]);
            assert_eq!(p.queries[0].limit, 21);
        }
        // Verified listings have no such index: they merge the verified
        // copies of the rating partitions.
        let mut verified = filter(Some("en"), &[]);
        verified.verified = true;
        let p = plan(&product, &verified, Sort::Helpful, 20, None, false);
        assert_eq!(p.strategy, Strategy::HelpfulLanguageRatings);
        assert_eq!(p.queries.len(), 5);
        assert!(
            p.queries
                .iter()
                .all(|q| q.index == "verifiedHelpfulByLangAndRating")
        );
    }

    #[test]
    fn helpful_merges_the_rating_partitions_of_the_helpful_indexes() {
        let product = product();
        let counts = RatingCounts([10, 0, 0, 30, 60]);
        let p = plan(
            &product,
            &filter(None, &[1, 4, 5]),
            Sort::Helpful,
            20,
            Some(&counts),
            true,
        );
        assert_eq!(p.strategy, Strategy::HelpfulRatings);
        assert_eq!(
            order(&p),
            vec![
                ("helpfulByRating", "PRODUCT#42/1", 0),
                ("helpfulByRating", "PRODUCT#42/4", 0),
                ("helpfulByRating", "PRODUCT#42/5", 0),
            ]
        );
        let limits: Vec<usize> = p.queries.iter().map(|q| q.limit).collect();
        assert_eq!(
            limits,
            vec![1, 3, 6],
            "half the shares of the page by the counts"
        );
        let mut verified = filter(Some("fr"), &[3]);
        verified.verified = true;
        let p = plan(&product, &verified, Sort::Helpful, 20, None, false);
        assert_eq!(p.strategy, Strategy::HelpfulLanguageRatings);
        assert_eq!(
            order(&p),
            vec![("verifiedHelpfulByLangAndRating", "PRODUCT#42/fr/3", 0)]
        );
        assert_eq!(p.queries[0].limit, 21);
        assert!(!Sort::Helpful.ascending());
    }

    #[test]
    fn oldest_plans_what_newest_plans() {
        let product = product();
        let newest = plan(
            &product,
            &filter(Some("en"), &[2, 3]),
            Sort::Newest,
            10,
            None,
            false,
        );
        let oldest = plan(
            &product,
            &filter(Some("en"), &[2, 3]),
            Sort::Oldest,
            10,
            None,
            false,
        );
        assert_eq!(newest.queries, oldest.queries);
        assert_eq!(oldest.sort, Sort::Oldest);
        assert!(Sort::Oldest.ascending() && !Sort::Newest.ascending());
    }
}
