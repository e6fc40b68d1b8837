//! Reading the statistics the aggregator maintains: a product's counts by
//! rating (AP7–AP10), the leaderboard (AP11, merged from its shards) and the
//! global aggregates (summed from their partial items).
//! Reads are eventually consistent, as statistics may be (normally well
//! under a second behind the comments). A product's average rating is
//! computed from its counts in integers, rounded half up to two decimals,
//! so `4.125` shows as `4.13` whatever its binary form.
//!
//! The counts' types live here: the listing planner sizes its sub-queries
//! by a product's [`RatingCounts`] (of all its comments, of the verified
//! ones, or of those with a published photo: [`listing_sizing`]), which it
//! asks this module for; this module knows nothing of listings.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::future::try_join_all;
use rave_store::Store;

use serde::Serialize;

use crate::access::TableAccess;
use crate::attributes::{AttributeName, AttributeStats};
use crate::error::Result;
use crate::model::{GlobalStats, Language, ProductId, Rating, check_page_size};
use crate::table::stats::leaderboard;
use crate::table::stats::product::{self, ProductCounts};
use crate::table::stats::totals::{self, TotalsPart};

/// Visible comments per rating (index 0 = 1 star), for a product's
/// language or overall; of verified comments when a listing is verified.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RatingCounts(pub [u64; 5]);

impl RatingCounts {
    pub fn of(&self, rating: Rating) -> u64 {
        self.0[usize::from(rating.get() - 1)]
    }
}

/// Which comments a product's per-rating counts count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Counted {
    Comments,
    /// Those a purchase verified.
    VerifiedComments,
    /// Those with a published photo (and verified, when asked: then each
    /// rating's count is the lesser of the two, which no more than bounds
    /// how many are both).
    MediaComments,
}

/// The per-rating counts among a product's `counts` that size a listing of
/// its comments, only verified ones or only those with photos as asked,
/// and which comments they count. Verified counts from an item written
/// before they were kept by rating are not used (see
/// `ProductCounts::verified_by_rating`): the counts of all comments stand
/// in, as a rating without comments has no verified ones either.
pub(crate) fn listing_sizing(
    counts: &ProductCounts,
    verified: bool,
    has_media: bool,
) -> (RatingCounts, Counted) {
    let verified_ratings = counts.verified_by_rating().filter(|_| verified);
    match (has_media, verified_ratings) {
        (true, None) => (RatingCounts(counts.media_ratings), Counted::MediaComments),
        (true, Some(verified)) => {
            let mut both = counts.media_ratings;
            for (count, verified) in both.iter_mut().zip(verified) {
                *count = (*count).min(verified);
            }
            (RatingCounts(both), Counted::MediaComments)
        }
        (false, Some(verified)) => (RatingCounts(verified), Counted::VerifiedComments),
        (false, None) => (RatingCounts(counts.ratings), Counted::Comments),
    }
}

/// A product's per-rating counts as a listing reads them to size its plan.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ListingCounts {
    pub(crate) counts: RatingCounts,
    pub(crate) counted: Counted,
    /// What reading them cost.
    pub(crate) read_units: f64,
}

/// Counts of one product, overall or in one language (AP7-AP10).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProductStats {
    pub product_id: ProductId,
    pub language: Option<Language>,
    pub counts: RatingCounts,
    pub total: u64,
    /// How many of the counted comments a purchase verified.
    pub verified_total: u64,
    /// The verified ones by rating.
    pub verified_counts: RatingCounts,
    /// How many of the counted comments show at least one published photo.
    pub media_total: u64,
    /// Those by rating.
    pub media_counts: RatingCounts,
    /// How they answered the product's attributes, by name.
    pub attributes: BTreeMap<AttributeName, AttributeStats>,
}

impl ProductStats {
    /// The statistics `counts` make for a product (in one language).
    pub(crate) fn of(
        product_id: ProductId,
        language: Option<Language>,
        counts: &ProductCounts,
    ) -> ProductStats {
        ProductStats {
            product_id,
            language,
            counts: RatingCounts(counts.ratings),
            total: counts.total(),
            verified_total: counts.verified,
            verified_counts: RatingCounts(counts.verified_ratings),
            media_total: counts.media_total(),
            media_counts: RatingCounts(counts.media_ratings),
            attributes: counts
                .attributes
                .0
                .iter()
                .map(|(name, answers)| (name.clone(), AttributeStats::of(answers)))
                .collect(),
        }
    }

    /// The mean rating of the counted comments, rounded to two decimals;
    /// `None` without any.
    pub fn average(&self) -> Option<f64> {
        average(&self.counts)
    }
}

/// Averages are worked out here, once, for the star rating and the
/// attributes alike.
impl AttributeStats {
    /// The mean of a rating attribute's answers, rounded as the star
    /// rating's; `None` for a choice attribute or without answers.
    pub fn average(&self) -> Option<f64> {
        average(&RatingCounts(self.ratings()))
    }
}

/// The mean of per-rating counts, rounded half up to two decimals, in
/// integers so that 4.125 rounds to 4.13 and not to whatever its binary
/// approximation does.
pub(crate) fn average(counts: &RatingCounts) -> Option<f64> {
    let total: u64 = counts.0.iter().sum();
    if total == 0 {
        return None;
    }
    let weighted: u64 = (1..=5u64).zip(counts.0).map(|(r, c)| r * c).sum();
    let hundredths = (u128::from(weighted) * 200 + u128::from(total)) / (2 * u128::from(total));
    Some(hundredths as f64 / 100.0)
}

/// One row of the leaderboard (AP11).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leader {
    pub product_id: String,
    pub five_star: u64,
}

#[derive(Debug)]
pub(crate) struct Statistics<S> {
    access: Arc<TableAccess<S>>,
}

impl<S> Clone for Statistics<S> {
    fn clone(&self) -> Statistics<S> {
        Statistics {
            access: Arc::clone(&self.access),
        }
    }
}

impl<S: Store> Statistics<S> {
    pub(crate) fn new(access: Arc<TableAccess<S>>) -> Statistics<S> {
        Statistics { access }
    }

    pub(crate) async fn product_stats(
        &self,
        product: &str,
        language: Option<&str>,
    ) -> Result<ProductStats> {
        let product_id = ProductId::parse(product)?;
        let language = language.map(Language::parse).transpose()?;
        let (counts, _) = self.counts(&product_id, language.as_ref()).await?;
        Ok(ProductStats::of(product_id, language, &counts))
    }

    /// The per-rating counts of a product (all zero when it has none) that
    /// size a listing's plan ([`listing_sizing`]).
    pub(crate) async fn listing_counts(
        &self,
        product: &ProductId,
        language: Option<&Language>,
        verified: bool,
        has_media: bool,
    ) -> Result<ListingCounts> {
        let (stored, read_units) = self.counts(product, language).await?;
        let (counts, counted) = listing_sizing(&stored, verified, has_media);
        Ok(ListingCounts {
            counts,
            counted,
            read_units,
        })
    }

    /// Everything a product's statistics item counts, with its read units.
    async fn counts(
        &self,
        product: &ProductId,
        language: Option<&Language>,
    ) -> Result<(ProductCounts, f64)> {
        // Read in place: a listing reads this item for every page that
        // merges rating partitions, and wants its counts, not the item.
        let (counts, units) = self
            .access
            .get_reading(product::key(product, language), false, |item| {
                product::decode(item)
            })
            .await?;
        Ok((counts.transpose()?.unwrap_or_default(), units))
    }

    /// The top `limit` products by 5-star count, ties by product id: the
    /// top of every leaderboard shard, merged. Every product sits in one
    /// shard, so the merge is the global top (among products tied at the
    /// last row, which make the cut is up to each shard's index order).
    pub(crate) async fn leaderboard(
        &self,
        limit: usize,
        language: Option<&str>,
    ) -> Result<Vec<Leader>> {
        let limit = check_page_size(limit)?;
        let language = language.map(Language::parse).transpose()?;
        let shards = leaderboard::partitions(language.as_ref())
            .into_iter()
            .map(|partition| {
                let mut query = self
                    .access
                    .query_input(Some(leaderboard::INDEX.name()), partition);
                query.scan_index_forward = false;
                query.limit = Some(limit);
                self.access.query(query)
            });
        let mut leaders = Vec::new();
        for page in try_join_all(shards).await? {
            for item in &page.items {
                let (product_id, five_star) = leaderboard::decode(item)?;
                leaders.push(Leader {
                    product_id: product_id.as_str().to_owned(),
                    five_star,
                });
            }
        }
        leaders.sort_by(|a, b| {
            b.five_star
                .cmp(&a.five_star)
                .then_with(|| a.product_id.cmp(&b.product_id))
        });
        leaders.truncate(limit);
        Ok(leaders)
    }

    /// The sum of the partial totals items (and of the old layout's single
    /// item, until `reconcile --fix` folds it in).
    pub(crate) async fn global_stats(&self) -> Result<GlobalStats> {
        let mut sum = TotalsPart::default();
        for item in self.access.get_many(&totals::all_keys()).await? {
            sum.add(&totals::decode(&item)?);
        }
        Ok(sum.to_stats())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn averages_round_half_up_to_two_decimals() {
        assert_eq!(average(&RatingCounts([0; 5])), None);
        assert_eq!(average(&RatingCounts([0, 0, 0, 0, 3])), Some(5.0));
        // (4 * 7 + 5) / 8 = 4.125
        assert_eq!(average(&RatingCounts([0, 0, 0, 7, 1])), Some(4.13));
        // (1 + 2 + 2) / 3 = 1.666…
        assert_eq!(average(&RatingCounts([1, 2, 0, 0, 0])), Some(1.67));
    }

    #[test]
    fn listings_are_sized_by_the_counts_of_what_they_list() {
        let counts = ProductCounts {
            ratings: [4, 0, 3, 2, 9],
            verified: 5,
            verified_ratings: [1, 0, 0, 2, 2],
            media_ratings: [2, 0, 3, 0, 1],
            ..ProductCounts::default()
        };
        let sized = |verified, has_media| listing_sizing(&counts, verified, has_media);
        assert_eq!(
            sized(false, false),
            (RatingCounts([4, 0, 3, 2, 9]), Counted::Comments)
        );
        assert_eq!(
            sized(true, false),
            (RatingCounts([1, 0, 0, 2, 2]), Counted::VerifiedComments)
        );
        assert_eq!(
            sized(false, true),
            (RatingCounts([2, 0, 3, 0, 1]), Counted::MediaComments)
        );
        assert_eq!(
            sized(true, true),
            (RatingCounts([1, 0, 0, 0, 1]), Counted::MediaComments)
        );
        let old = ProductCounts {
            verified_ratings: [0; 5],
            ..counts.clone()
        };
        assert_eq!(
            listing_sizing(&old, true, true),
            (RatingCounts([2, 0, 3, 0, 1]), Counted::MediaComments),
            "verified counts that do not add up bound nothing"
        );
    }

    proptest! {
        #[test]
        fn the_average_is_the_mean_of_the_ratings(counts in proptest::array::uniform5(0u64..50)) {
            let ratings: Vec<f64> = counts
                .iter()
                .enumerate()
                .flat_map(|(i, c)| std::iter::repeat_n((i + 1) as f64, *c as usize))
                .collect();
            let got = average(&RatingCounts(counts));
            if ratings.is_empty() {
                prop_assert_eq!(got, None);
            } else {
                let mean = ratings.iter().sum::<f64>() / ratings.len() as f64;
                let got = got.unwrap();
                prop_assert!((got - mean).abs() <= 0.005 + 1e-9, "{} vs {}", got, mean);
                prop_assert!((got * 100.0 - (got * 100.0).round()).abs() < 1e-9);
            }
        }
    }
}
