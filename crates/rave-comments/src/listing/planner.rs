//! The query planner: which index and partitions answer a filter, and how
//! many items each sub-query should read (part 2's `findStrategy`, with
//! statistics).
//!
//! * no rating filter, or all five ratings: one query on `all` / `byLang`;
//! * one rating: one query on `byRating` / `byLangAndRating`;
//! * several ratings: one query per rating, merged newest first (fan-out).
//!
//! `verified` runs the same plan on the verified copies of these indexes,
//! which hold only verified comments, sized and skipped by the product's
//! counts of verified comments per rating (and per language and rating),
//! which the statistics items keep beside the counts of all comments. A
//! statistics item written before those were kept has only the verified
//! total: until `reconcile --fix` recounts it, the counts of all comments
//! size the plan (a rating without comments has no verified ones either),
//! and a share that is off is made up by the executor's refills.
//!
//! Given per-rating counts, ratings with no comments are skipped, and each
//! sub-query's limit is its expected share of the page instead of the whole
//! page, so a fan-out reads close to what it returns rather than k × 20
//! (the executor refills a sub-query that runs dry).

use serde::Serialize;

use super::cursor::{Cursor, Position};
use super::sort::Sort;
use crate::model::{Language, ProductId, Rating};
use crate::table::Index;
use crate::table::comment::listing_partition;

/// A set of ratings; empty means no rating filter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct RatingSet(u8);

impl RatingSet {
    pub fn from_ratings(ratings: impl IntoIterator<Item = Rating>) -> RatingSet {
        RatingSet(ratings.into_iter().fold(0, |mask, r| mask | (1 << r.get())))
    }

    pub fn contains(self, rating: Rating) -> bool {
        self.0 & (1 << rating.get()) != 0
    }

    pub fn ratings(self) -> Vec<Rating> {
        Rating::ALL
            .into_iter()
            .filter(|r| self.contains(*r))
            .collect()
    }

    /// Whether the set filters nothing out (empty, or all five ratings).
    pub fn is_unfiltered(self) -> bool {
        self.0 == 0 || self.ratings().len() == 5
    }

    /// A stable byte for cursor binding.
    pub fn mask(self) -> u8 {
        self.0
    }
}

/// What a listing asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Filter {
    pub language: Option<Language>,
    pub ratings: RatingSet,
    /// Only comments a purchase verified: the same plan on the verified
    /// copies of the indexes.
    pub verified: bool,
}

/// Visible comments per rating (index 0 = 1 star), for the listing's
/// language or overall; of verified comments for a verified listing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RatingCounts(pub [u64; 5]);

impl RatingCounts {
    pub fn of(&self, rating: Rating) -> u64 {
        self.0[usize::from(rating.get() - 1)]
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// AP1: one query on `all`.
    All,
    /// AP2: one query on `byLang`.
    Language,
    /// AP3, one rating: one query on `byRating`.
    Rating,
    /// AP3, one rating and a language: one query on `byLangAndRating`.
    LanguageRating,
    /// AP3, several ratings: parallel queries on `byRating`, merged.
    RatingsFanOut,
    /// AP3, several ratings and a language: parallel queries on `byLangAndRating`, merged.
    LanguageRatingsFanOut,
    /// Highest or lowest first: queries on `byRating`, one rating after another.
    RatingsInOrder,
    /// Highest or lowest first in a language: queries on `byLangAndRating`,
    /// one rating after another.
    LanguageRatingsInOrder,
    /// Most helpful first: one query on `helpfulAll`.
    HelpfulAll,
    /// Most helpful first in a language: one query on `helpfulByLang`.
    HelpfulLanguage,
    /// Most helpful first with a rating filter (or verified): queries on
    /// `helpfulByRating`, one per rating asked for, merged.
    HelpfulRatings,
    /// Most helpful first in a language with a rating filter (or verified):
    /// queries on `helpfulByLangAndRating`, merged.
    HelpfulLanguageRatings,
    /// Every rating asked for has no comments: nothing to read.
    Empty,
}

/// One sub-query of a plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedQuery {
    pub index: &'static str,
    pub partition_key: String,
    /// Items the first read of this sub-query asks for.
    pub limit: usize,
    /// Which sub-query this is in a cursor: the rating, or 0.
    #[serde(skip)]
    pub tag: u8,
    #[serde(skip)]
    pub(crate) index_kind: Index,
    /// The fraction of the page this sub-query is expected to supply.
    #[serde(skip)]
    pub(crate) share: f64,
    /// When it is read: sub-queries of one rank are merged; a rank is read
    /// only once every lower rank has run out (all 0 for a merge).
    #[serde(skip)]
    pub(crate) rank: u8,
}

/// A sub-query the plan does not run, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    pub partition_key: String,
    pub reason: &'static str,
}

/// Which per-rating counts sized (and skipped) a plan's sub-queries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SizedBy {
    /// No counts: one query, or every sub-query reads the whole page.
    #[default]
    Nothing,
    /// The product's counts of all its comments per rating.
    Comments,
    /// Its counts of verified comments per rating (a verified listing).
    VerifiedComments,
}

/// A plan, and after execution what it cost (what EXPLAIN shows).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    pub strategy: Strategy,
    pub sort: Sort,
    pub queries: Vec<PlannedQuery>,
    pub skipped: Vec<Skipped>,
    /// The counts the sub-queries' limits and skips come from.
    pub sized_by: SizedBy,
    /// Read units the page consumed, the statistics read included.
    pub read_units: f64,
    /// Items the execution read from the store (before merging).
    pub items_read: usize,
}

/// Plans a listing page of `page_size` items. A single query reads one item
/// more (in the same request) to know whether a next page exists; a
/// fan-out splits the page among its sub-queries. Ratings whose count is 0
/// are skipped only when the counts are `exact` (the statistics have caught
/// up with every write); otherwise counts only size the reads, so a comment
/// whose count has not arrived yet still shows.
pub fn plan(
    product: &ProductId,
    filter: &Filter,
    page_size: usize,
    counts: Option<&RatingCounts>,
    exact: bool,
) -> Plan {
    let want = page_size + 1;
    let language = filter.language.as_ref();
    let on = |index: Index| {
        if filter.verified {
            index.verified()
        } else {
            index
        }
    };
    let query = |index: Index, rating: Option<Rating>, limit: usize| PlannedQuery {
        index: on(index).name(),
        partition_key: listing_partition(index, product, language, rating),
        limit,
        tag: rating.map_or(0, Rating::get),
        index_kind: on(index),
        share: 1.0,
        rank: 0,
    };
    let plan = |strategy, queries, skipped| Plan {
        strategy,
        sort: Sort::Newest,
        queries,
        skipped,
        sized_by: SizedBy::Nothing,
        read_units: 0.0,
        items_read: 0,
    };
    if filter.ratings.is_unfiltered() {
        let (strategy, index) = match language {
            None => (Strategy::All, Index::All),
            Some(_) => (Strategy::Language, Index::ByLang),
        };
        return plan(strategy, vec![query(index, None, want)], Vec::new());
    }
    let index = if language.is_some() {
        Index::ByLangAndRating
    } else {
        Index::ByRating
    };
    let mut skipped = Vec::new();
    let mut ratings = Vec::new();
    for rating in filter.ratings.ratings() {
        match counts.map(|c| c.of(rating)) {
            Some(0) if exact => skipped.push(Skipped {
                partition_key: listing_partition(index, product, language, Some(rating)),
                reason: "count is 0",
            }),
            count => ratings.push((rating, count)),
        }
    }
    let single = if language.is_some() {
        Strategy::LanguageRating
    } else {
        Strategy::Rating
    };
    let fan_out = if language.is_some() {
        Strategy::LanguageRatingsFanOut
    } else {
        Strategy::RatingsFanOut
    };
    match ratings.len() {
        0 => plan(Strategy::Empty, Vec::new(), skipped),
        1 => plan(
            single,
            vec![query(index, Some(ratings[0].0), want)],
            skipped,
        ),
        _ => {
            let limits = share_limits(page_size, &ratings);
            let queries = ratings
                .iter()
                .zip(limits)
                .map(|((rating, _), (limit, share))| {
                    let mut q = query(index, Some(*rating), limit);
                    q.share = share;
                    q
                })
                .collect();
            plan(fan_out, queries, skipped)
        }
    }
}

impl Plan {
    /// Resumes the plan where `cursor` left off: sub-queries the cursor
    /// says are exhausted (or that it does not name: they had no comments
    /// when the walk began, so comments added since may be left out) move
    /// to `skipped`; the others are returned with where each starts.
    pub(crate) fn resume(&mut self, cursor: Option<&Cursor>) -> Vec<(PlannedQuery, Position)> {
        // A merge by helpfulness that does not know where its partitions
        // rank (its first page, or a cursor from before it recorded that)
        // first reads one comment of each, which tells: a share of the page
        // read from a partition ranked far below it would be thrown away.
        let ranks_unknown = self.queries.len() > 1
            && self.queries.iter().all(|q| q.index_kind.is_helpful())
            && cursor.is_none_or(|c| c.next_ranks.is_empty());
        if ranks_unknown {
            for query in &mut self.queries {
                query.limit = 1;
            }
        }
        let mut running = Vec::with_capacity(self.queries.len());
        for query in std::mem::take(&mut self.queries) {
            let start = cursor.map_or(Position::Start, |c| {
                c.position(query.tag).unwrap_or(Position::Exhausted)
            });
            if start == Position::Exhausted {
                self.skipped.push(Skipped {
                    partition_key: query.partition_key,
                    reason: "exhausted on an earlier page",
                });
            } else {
                self.queries.push(query.clone());
                running.push((query, start));
            }
        }
        running
    }
}

/// Splits `want` items among sub-queries in proportion to their counts
/// (largest remainder, at least one each), with each one's share of the
/// page. Without counts every sub-query reads the whole page, as in part 2.
pub(super) fn share_limits(want: usize, ratings: &[(Rating, Option<u64>)]) -> Vec<(usize, f64)> {
    let total: u64 = ratings.iter().filter_map(|(_, c)| *c).sum();
    if total == 0 || ratings.iter().any(|(_, c)| c.is_none()) {
        return ratings.iter().map(|_| (want, 1.0)).collect();
    }
    let shares: Vec<f64> = ratings
        .iter()
        .map(|(_, c)| c.unwrap_or(0) as f64 / total as f64)
        .collect();
    let exact: Vec<f64> = shares.iter().map(|s| s * want as f64).collect();
    let mut limits: Vec<usize> = exact.iter().map(|e| e.floor() as usize).collect();
    let mut by_remainder: Vec<usize> = (0..limits.len()).collect();
    by_remainder
        .sort_by(|&a, &b| (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor())));
    let assigned: usize = limits.iter().sum();
    for &i in by_remainder.iter().take(want.saturating_sub(assigned)) {
        limits[i] += 1;
    }
    limits.into_iter().map(|l| l.max(1)).zip(shares).collect()
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(in crate::listing) fn product() -> ProductId {
        ProductId::parse("42").unwrap()
    }

    fn ratings(list: &[i64]) -> RatingSet {
        RatingSet::from_ratings(list.iter().map(|r| Rating::new(*r).unwrap()))
    }

    pub(in crate::listing) fn filter(language: Option<&str>, list: &[i64]) -> Filter {
        Filter {
            language: language.map(|l| Language::parse(l).unwrap()),
            ratings: ratings(list),
            verified: false,
        }
    }

    fn partitions(plan: &Plan) -> Vec<(&str, &str, usize)> {
        plan.queries
            .iter()
            .map(|q| (q.index, q.partition_key.as_str(), q.limit))
            .collect()
    }

    #[test]
    fn no_filter_and_all_five_ratings_use_one_unfiltered_query() {
        for list in [&[][..], &[1, 2, 3, 4, 5]] {
            let p = plan(&product(), &filter(None, list), 20, None, true);
            assert_eq!(p.strategy, Strategy::All);
            assert_eq!(partitions(&p), vec![("all", "PRODUCT#42", 21)]);
            let p = plan(&product(), &filter(Some("en"), list), 20, None, true);
            assert_eq!(p.strategy, Strategy::Language);
            assert_eq!(partitions(&p), vec![("byLang", "PRODUCT#42/en", 21)]);
        }
    }

    #[test]
    fn one_rating_is_one_query() {
        let p = plan(&product(), &filter(None, &[2]), 20, None, true);
        assert_eq!(p.strategy, Strategy::Rating);
        assert_eq!(partitions(&p), vec![("byRating", "PRODUCT#42/2", 21)]);
        let p = plan(&product(), &filter(Some("en"), &[2]), 20, None, true);
        assert_eq!(p.strategy, Strategy::LanguageRating);
        assert_eq!(
            partitions(&p),
            vec![("byLangAndRating", "PRODUCT#42/en/2", 21)]
        );
    }

    #[test]
    fn several_ratings_fan_out_with_full_limits_without_counts() {
        let p = plan(&product(), &filter(Some("en"), &[2, 3, 5]), 20, None, true);
        assert_eq!(p.strategy, Strategy::LanguageRatingsFanOut);
        assert_eq!(
            partitions(&p),
            vec![
                ("byLangAndRating", "PRODUCT#42/en/2", 20),
                ("byLangAndRating", "PRODUCT#42/en/3", 20),
                ("byLangAndRating", "PRODUCT#42/en/5", 20)
            ]
        );
    }

    #[test]
    fn counts_skip_empty_ratings_and_size_limits_by_share() {
        let counts = RatingCounts([10, 0, 30, 0, 60]);
        let p = plan(
            &product(),
            &filter(None, &[1, 2, 3, 5]),
            25,
            Some(&counts),
            true,
        );
        assert_eq!(p.strategy, Strategy::RatingsFanOut);
        // 25 split 10 : 30 : 60 is 2.5 : 7.5 : 15 → 3, 7, 15 (largest remainder).
        assert_eq!(
            partitions(&p),
            vec![
                ("byRating", "PRODUCT#42/1", 3),
                ("byRating", "PRODUCT#42/3", 7),
                ("byRating", "PRODUCT#42/5", 15)
            ]
        );
        assert_eq!(p.queries.iter().map(|q| q.limit).sum::<usize>(), 25);
        assert_eq!(
            p.skipped,
            vec![Skipped {
                partition_key: "PRODUCT#42/2".into(),
                reason: "count is 0"
            }]
        );
    }

    #[test]
    fn inexact_counts_size_but_never_skip() {
        let counts = RatingCounts([0, 0, 10, 0, 10]);
        let p = plan(
            &product(),
            &filter(None, &[1, 3, 5]),
            20,
            Some(&counts),
            false,
        );
        assert!(p.skipped.is_empty());
        assert_eq!(
            partitions(&p),
            vec![
                ("byRating", "PRODUCT#42/1", 1),
                ("byRating", "PRODUCT#42/3", 10),
                ("byRating", "PRODUCT#42/5", 10)
            ]
        );
    }

    #[test]
    fn verified_listings_plan_the_same_queries_on_the_verified_indexes() {
        let verified = |language, list| Filter {
            verified: true,
            ..filter(language, list)
        };
        let p = plan(&product(), &verified(None, &[]), 20, None, true);
        assert_eq!(p.strategy, Strategy::All);
        assert_eq!(partitions(&p), vec![("verifiedAll", "PRODUCT#42", 21)]);
        let p = plan(&product(), &verified(Some("en"), &[]), 20, None, true);
        assert_eq!(
            partitions(&p),
            vec![("verifiedByLang", "PRODUCT#42/en", 21)]
        );
        let p = plan(&product(), &verified(None, &[4]), 20, None, true);
        assert_eq!(
            partitions(&p),
            vec![("verifiedByRating", "PRODUCT#42/4", 21)]
        );
        let counts = RatingCounts([0, 0, 5, 0, 15]);
        let p = plan(
            &product(),
            &verified(Some("de"), &[1, 3, 5]),
            20,
            Some(&counts),
            true,
        );
        assert_eq!(p.strategy, Strategy::LanguageRatingsFanOut);
        assert_eq!(
            partitions(&p),
            vec![
                ("verifiedByLangAndRating", "PRODUCT#42/de/3", 5),
                ("verifiedByLangAndRating", "PRODUCT#42/de/5", 15)
            ]
        );
    }

    #[test]
    fn counts_can_reduce_a_fan_out_to_one_query_or_none() {
        let counts = RatingCounts([0, 0, 5, 0, 0]);
        let p = plan(&product(), &filter(None, &[1, 3]), 20, Some(&counts), true);
        assert_eq!(p.strategy, Strategy::Rating);
        assert_eq!(partitions(&p), vec![("byRating", "PRODUCT#42/3", 21)]);
        let p = plan(&product(), &filter(None, &[1, 2]), 20, Some(&counts), true);
        assert_eq!(p.strategy, Strategy::Empty);
        assert!(p.queries.is_empty());
        assert_eq!(p.skipped.len(), 2);
    }
}
