//! The query planner: which index and partitions answer a listing, in
//! which order they are read, and how many items each sub-query reads
//! first — for every order and filter (part 2's `findStrategy`, with
//! statistics). The order says which partitions it reads
//! ([`Sort::reading`]); one builder makes every rating sub-query:
//!
//! * one partition: one query on `all` / `byLang` (or `helpfulAll` /
//!   `helpfulByLang`), or on one rating's partition;
//! * rating partitions merged (by time, or by helpfulness): one query per
//!   rating, each first reading its share of the page by the counts;
//! * rating partitions in turn (highest, lowest): one query per rating,
//!   each read only once the ones before it have run out.
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
//! `has_media` runs the same plan (verified or not) on the `MEDIA#`
//! partitions of the same indexes, which hold the listing copies of the
//! comments with a published photo and nothing else, sized and skipped by
//! the product's counts of such comments per rating (bounded by the
//! verified counts when verified too): every entry it reads is one it may
//! show.
//!
//! A product family's listing (`Planner::in_family`) runs the same plan
//! on the `FAMILY#<g>…` (or, `has_media`, `FAMILYMEDIA#<g>…`) partitions,
//! which hold the family copies of its variants' comments, sized by the
//! variants' counts summed (`listing::group`).
//!
//! Only a plan over several rating partitions wants the product's counts
//! ([`Planner::wants_counts`]). Given them, ratings with no comments are
//! skipped when the counts are exact, and each merged sub-query's limit is
//! its expected share of the page instead of the whole page (largest
//! remainder), so a fan-out reads close to what it returns rather than
//! k × 20 (the executor refills a sub-query that runs dry). EXPLAIN shows
//! the `Plan`, and its `sized_by` names the counts used.
//!
//! The counts are the aggregator's, and so a little behind. Sizing by them
//! is always safe; skipping a rating by them is not, since a comment just
//! acknowledged may not be counted yet. So ratings are skipped only while
//! the aggregator has applied every committed change
//! (`Comments::with_stats_freshness`): a listing always shows an
//! acknowledged comment.

use serde::Serialize;

use super::cursor::{Cursor, Position};
use super::filter::Filter;
use super::sort::{Reading, Sort};
use crate::model::{ProductId, Rating};
use crate::statistics::{Counted, RatingCounts};
use crate::table::Index;
use crate::table::comment::{Partitions, listing_partition};

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
    /// When it is read: sub-queries of one phase are merged; a phase is
    /// read only once every earlier phase has run out (all 0 for a merge).
    #[serde(skip)]
    pub(crate) phase: u8,
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
    /// Its counts of comments with a published photo per rating (a
    /// `has_media` listing; verified too: each the lesser of that and the
    /// verified count).
    MediaComments,
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

/// Whether per-rating counts have caught up with every write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trust {
    /// The statistics have applied every write: a count of 0 means no
    /// comments, and the partition is skipped.
    Exact,
    /// The counts may lag: they size the reads but skip nothing, so a
    /// comment whose count has not arrived yet still shows.
    MayLag,
}

/// Per-rating counts that size a plan.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sizing<'a> {
    pub(crate) counts: &'a RatingCounts,
    pub(crate) counted: Counted,
    pub(crate) trust: Trust,
}

impl From<Counted> for SizedBy {
    fn from(counted: Counted) -> SizedBy {
        match counted {
            Counted::Comments => SizedBy::Comments,
            Counted::VerifiedComments => SizedBy::VerifiedComments,
            Counted::MediaComments => SizedBy::MediaComments,
        }
    }
}

/// A listing page about to be planned: which partitions it reads is known
/// before any counts are.
#[derive(Debug)]
pub(crate) struct Planner<'a> {
    /// The product, or the group of a family's listing.
    product: &'a ProductId,
    /// Whether `product` names a group, whose family partitions are read.
    family: bool,
    filter: &'a Filter,
    sort: Sort,
    page_size: usize,
    reading: Reading,
}

impl<'a> Planner<'a> {
    pub(crate) fn new(
        product: &'a ProductId,
        filter: &'a Filter,
        sort: Sort,
        page_size: usize,
    ) -> Planner<'a> {
        Planner {
            product,
            family: false,
            filter,
            sort,
            page_size,
            reading: sort.reading(filter),
        }
    }

    /// The same listing of group `self.product`'s family: its partitions
    /// (`FAMILY#<g>…`, `FAMILYMEDIA#<g>…`) hold the family copies of its
    /// variants' comments, so the plan is a product's.
    pub(crate) fn in_family(self) -> Planner<'a> {
        Planner {
            family: true,
            ..self
        }
    }

    /// Whether the plan reads several rating partitions, which the
    /// product's per-rating counts size (and, exact, skip); a plan of one
    /// partition reads the page and one more whatever the counts say.
    pub(crate) fn wants_counts(&self) -> bool {
        self.reading.ratings().len() > 1
    }

    /// Plans a page of `page_size` items. A single query reads one item
    /// more (in the same request) to know whether a next page exists; a
    /// merge splits the page among its sub-queries.
    pub(crate) fn plan(self, sizing: Option<Sizing<'_>>) -> Plan {
        let language = self.filter.language.as_ref();
        let partitions = Partitions::of_listing(self.family, self.filter.has_media);
        let one_partition = matches!(self.reading, Reading::OnePartition);
        let listed = match (one_partition, language) {
            (true, None) => Index::All,
            (true, Some(_)) => Index::ByLang,
            (false, None) => Index::ByRating,
            (false, Some(_)) => Index::ByLangAndRating,
        };
        let mut read_on = listed;
        if self.filter.verified {
            read_on = read_on.verified();
        }
        if self.sort == Sort::Helpful {
            read_on = read_on.helpful();
        }
        let query = |rating: Option<Rating>, first: FirstRead, phase: usize| PlannedQuery {
            index: read_on.name(),
            partition_key: listing_partition(listed, partitions, self.product, language, rating),
            limit: first.limit,
            tag: rating.map_or(0, Rating::get),
            index_kind: read_on,
            share: first.share,
            phase: u8::try_from(phase).unwrap_or(u8::MAX),
        };
        // One more than the page, to know whether a next page exists.
        let whole_page = FirstRead {
            limit: self.page_size + 1,
            share: 1.0,
        };
        let mut skipped = Vec::new();
        let mut ratings = Vec::new();
        for &rating in self.reading.ratings() {
            let count = sizing.map(|s| s.counts.of(rating));
            if count == Some(0) && sizing.is_some_and(|s| s.trust == Trust::Exact) {
                skipped.push(Skipped {
                    partition_key: listing_partition(
                        listed,
                        partitions,
                        self.product,
                        language,
                        Some(rating),
                    ),
                    reason: "count is 0",
                });
            } else {
                ratings.push((rating, count));
            }
        }
        let queries: Vec<PlannedQuery> = match &self.reading {
            Reading::OnePartition => vec![query(None, whole_page, 0)],
            Reading::InTurn(_) => ratings
                .iter()
                .enumerate()
                .map(|(phase, (rating, _))| query(Some(*rating), whole_page, phase))
                .collect(),
            Reading::Merged(_) if ratings.len() == 1 => {
                vec![query(Some(ratings[0].0), whole_page, 0)]
            }
            Reading::Merged(_) => self
                .merged_limits(&ratings)
                .into_iter()
                .zip(&ratings)
                .map(|(limit, (rating, _))| query(Some(*rating), limit, 0))
                .collect(),
        };
        Plan {
            strategy: self.strategy(queries.len()),
            sort: self.sort,
            queries,
            skipped,
            sized_by: sizing.map_or(SizedBy::Nothing, |s| s.counted.into()),
            read_units: 0.0,
            items_read: 0,
        }
    }

    /// Each merged sub-query's first read and share of the page.
    fn merged_limits(&self, ratings: &[(Rating, Option<u64>)]) -> Vec<FirstRead> {
        let limits = share_limits(self.page_size, ratings);
        match self.sort {
            // Scores interleave the partitions unevenly (unlike times, which
            // the counts predict well), so each first reads half its share
            // and refills make up the rest: what is read past the page's end
            // and read again by the next page stays small. (A page that does
            // not know where the partitions rank first reads one of each:
            // see `Plan::resume`.)
            Sort::Helpful => limits
                .into_iter()
                .map(|first| FirstRead {
                    limit: first.limit.div_ceil(2),
                    ..first
                })
                .collect(),
            _ => limits,
        }
    }

    /// What EXPLAIN calls a plan of `queries` sub-queries.
    fn strategy(&self, queries: usize) -> Strategy {
        let in_language = self.filter.language.is_some();
        let pick = |without: Strategy, with: Strategy| if in_language { with } else { without };
        match (&self.reading, self.sort, queries) {
            (Reading::OnePartition, Sort::Helpful, _) => {
                pick(Strategy::HelpfulAll, Strategy::HelpfulLanguage)
            }
            (Reading::OnePartition, _, _) => pick(Strategy::All, Strategy::Language),
            (_, _, 0) => Strategy::Empty,
            (_, Sort::Helpful, _) => {
                pick(Strategy::HelpfulRatings, Strategy::HelpfulLanguageRatings)
            }
            (_, _, 1) => pick(Strategy::Rating, Strategy::LanguageRating),
            (Reading::InTurn(_), _, _) => {
                pick(Strategy::RatingsInOrder, Strategy::LanguageRatingsInOrder)
            }
            (Reading::Merged(_), _, _) => {
                pick(Strategy::RatingsFanOut, Strategy::LanguageRatingsFanOut)
            }
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

/// What a sub-query reads first, and the fraction of the page it is
/// expected to supply (what its refills ask for).
#[derive(Debug, Clone, Copy, PartialEq)]
struct FirstRead {
    limit: usize,
    share: f64,
}

/// Splits `want` items among sub-queries in proportion to their counts
/// (largest remainder, at least one each), with each one's share of the
/// page. Without counts every sub-query reads the whole page, as in part 2.
fn share_limits(want: usize, ratings: &[(Rating, Option<u64>)]) -> Vec<FirstRead> {
    let total: u64 = ratings.iter().filter_map(|(_, c)| *c).sum();
    if total == 0 || ratings.iter().any(|(_, c)| c.is_none()) {
        let whole = FirstRead {
            limit: want,
            share: 1.0,
        };
        return vec![whole; ratings.len()];
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
    limits
        .into_iter()
        .zip(shares)
        .map(|(limit, share)| FirstRead {
            limit: limit.max(1),
            share,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::listing::filter::RatingSet;
    use crate::model::Language;

    fn product() -> ProductId {
        ProductId::parse("42").unwrap()
    }

    fn ratings(list: &[i64]) -> RatingSet {
        RatingSet::from_ratings(list.iter().map(|r| Rating::new(*r).unwrap()))
    }

    fn filter(language: Option<&str>, list: &[i64]) -> Filter {
        Filter {
            language: language.map(|l| Language::parse(l).unwrap()),
            ratings: ratings(list),
            verified: false,
            incentivized: None,
            has_media: false,
        }
    }

    #[test]
    fn comments_with_photos_plan_every_order_on_the_media_partitions() {
        let with_media = |language, list: &[i64], verified| Filter {
            has_media: true,
            verified,
            ..filter(language, list)
        };
        for sort in Sort::ALL {
            for (language, list) in [(None, &[][..]), (Some("en"), &[4][..]), (None, &[1, 5])] {
                for verified in [false, true] {
                    let media = plan(&with_media(language, list, verified), sort, 20, None);
                    let plain = plan(
                        &Filter {
                            verified,
                            ..filter(language, list)
                        },
                        sort,
                        20,
                        None,
                    );
                    assert_eq!(media.strategy, plain.strategy, "{sort:?}");
                    assert_eq!(media.queries.len(), plain.queries.len());
                    for (m, p) in media.queries.iter().zip(&plain.queries) {
                        assert_eq!((m.index, m.limit, m.tag), (p.index, p.limit, p.tag));
                        assert_eq!(
                            m.partition_key,
                            p.partition_key.replacen("PRODUCT#", "MEDIA#", 1)
                        );
                    }
                }
            }
        }
        let counts = RatingCounts([0, 0, 2, 0, 6]);
        let product = product();
        let filter = with_media(None, &[1, 3, 5], false);
        let p = Planner::new(&product, &filter, Sort::Newest, 8).plan(Some(Sizing {
            counts: &counts,
            counted: Counted::MediaComments,
            trust: Trust::Exact,
        }));
        assert_eq!(p.sized_by, SizedBy::MediaComments);
        assert_eq!(
            partitions(&p),
            vec![("byRating", "MEDIA#42/3", 2), ("byRating", "MEDIA#42/5", 6)]
        );
        assert_eq!(p.skipped[0].partition_key, "MEDIA#42/1");
    }

    /// The plan of a page of `page_size` of product 42, sized by counts of
    /// all comments when there are `counts`.
    fn plan(
        filter: &Filter,
        sort: Sort,
        page_size: usize,
        counts: Option<(&RatingCounts, Trust)>,
    ) -> Plan {
        let product = product();
        Planner::new(&product, filter, sort, page_size).plan(counts.map(|(counts, trust)| Sizing {
            counts,
            counted: Counted::Comments,
            trust,
        }))
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
            let p = plan(&filter(None, list), Sort::Newest, 20, None);
            assert_eq!(p.strategy, Strategy::All);
            assert_eq!(partitions(&p), vec![("all", "PRODUCT#42", 21)]);
            let p = plan(&filter(Some("en"), list), Sort::Newest, 20, None);
            assert_eq!(p.strategy, Strategy::Language);
            assert_eq!(partitions(&p), vec![("byLang", "PRODUCT#42/en", 21)]);
        }
    }

    #[test]
    fn one_rating_is_one_query() {
        let p = plan(&filter(None, &[2]), Sort::Newest, 20, None);
        assert_eq!(p.strategy, Strategy::Rating);
        assert_eq!(partitions(&p), vec![("byRating", "PRODUCT#42/2", 21)]);
        let p = plan(&filter(Some("en"), &[2]), Sort::Newest, 20, None);
        assert_eq!(p.strategy, Strategy::LanguageRating);
        assert_eq!(
            partitions(&p),
            vec![("byLangAndRating", "PRODUCT#42/en/2", 21)]
        );
    }

    #[test]
    fn several_ratings_fan_out_with_full_limits_without_counts() {
        let p = plan(&filter(Some("en"), &[2, 3, 5]), Sort::Newest, 20, None);
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
            &filter(None, &[1, 2, 3, 5]),
            Sort::Newest,
            25,
            Some((&counts, Trust::Exact)),
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
            &filter(None, &[1, 3, 5]),
            Sort::Newest,
            20,
            Some((&counts, Trust::MayLag)),
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
        let p = plan(&verified(None, &[]), Sort::Newest, 20, None);
        assert_eq!(p.strategy, Strategy::All);
        assert_eq!(partitions(&p), vec![("verifiedAll", "PRODUCT#42", 21)]);
        let p = plan(&verified(Some("en"), &[]), Sort::Newest, 20, None);
        assert_eq!(
            partitions(&p),
            vec![("verifiedByLang", "PRODUCT#42/en", 21)]
        );
        let p = plan(&verified(None, &[4]), Sort::Newest, 20, None);
        assert_eq!(
            partitions(&p),
            vec![("verifiedByRating", "PRODUCT#42/4", 21)]
        );
        let counts = RatingCounts([0, 0, 5, 0, 15]);
        let p = plan(
            &verified(Some("de"), &[1, 3, 5]),
            Sort::Newest,
            20,
            Some((&counts, Trust::Exact)),
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
        let p = plan(
            &filter(None, &[1, 3]),
            Sort::Newest,
            20,
            Some((&counts, Trust::Exact)),
        );
        assert_eq!(p.strategy, Strategy::Rating);
        assert_eq!(partitions(&p), vec![("byRating", "PRODUCT#42/3", 21)]);
        let p = plan(
            &filter(None, &[1, 2]),
            Sort::Newest,
            20,
            Some((&counts, Trust::Exact)),
        );
        assert_eq!(p.strategy, Strategy::Empty);
        assert!(p.queries.is_empty());
        assert_eq!(p.skipped.len(), 2);
    }

    fn order(plan: &Plan) -> Vec<(&str, &str, u8)> {
        plan.queries
            .iter()
            .map(|q| (q.index, q.partition_key.as_str(), q.phase))
            .collect()
    }

    #[test]
    fn highest_reads_five_stars_down_to_one_without_a_new_index() {
        let p = plan(&filter(None, &[]), Sort::Highest, 20, None);
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
        let p = plan(&filter(Some("de"), &[1, 4]), Sort::Lowest, 20, None);
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
    fn exact_zero_counts_are_skipped_and_phases_stay_dense() {
        let counts = RatingCounts([3, 0, 0, 0, 7]);
        let p = plan(
            &filter(None, &[]),
            Sort::Highest,
            20,
            Some((&counts, Trust::Exact)),
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
            &filter(None, &[]),
            Sort::Highest,
            20,
            Some((&counts, Trust::MayLag)),
        );
        assert_eq!(p.queries.len(), 5, "counts that may lag skip nothing");
    }

    #[test]
    fn helpful_without_a_rating_filter_reads_one_partition() {
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
                &filter(language, ratings),
                Sort::Helpful,
                20,
                Some((&counts, Trust::Exact)),
            );
            assert_eq!(p.strategy, strategy);
            assert_eq!(order(&p), vec![(expected.0, expected.1, 0)]);
            assert_eq!(p.queries[0].limit, 21);
        }
        // Verified listings have no such index: they merge the verified
        // copies of the rating partitions.
        let mut verified = filter(Some("en"), &[]);
        verified.verified = true;
        let p = plan(&verified, Sort::Helpful, 20, None);
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
        let counts = RatingCounts([10, 0, 0, 30, 60]);
        let p = plan(
            &filter(None, &[1, 4, 5]),
            Sort::Helpful,
            20,
            Some((&counts, Trust::Exact)),
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
        let p = plan(&verified, Sort::Helpful, 20, None);
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
        let newest = plan(&filter(Some("en"), &[2, 3]), Sort::Newest, 10, None);
        let oldest = plan(&filter(Some("en"), &[2, 3]), Sort::Oldest, 10, None);
        assert_eq!(newest.queries, oldest.queries);
        assert_eq!(oldest.sort, Sort::Oldest);
        assert!(Sort::Oldest.ascending() && !Sort::Newest.ascending());
    }
}
