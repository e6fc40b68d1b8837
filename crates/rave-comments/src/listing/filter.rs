//! What a listing asks for: a language, a set of ratings, verified
//! purchases only, incentivized reviews or not, comments with photos only.
//! A cursor is bound to it.

use crate::model::{Language, Rating};

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
    pub(crate) fn mask(self) -> u8 {
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
    /// Only comments written for a reward (`Some(true)`) or only the
    /// others (`Some(false)`): a FilterExpression on the same plan's
    /// queries (the executor's doc says what it costs).
    pub incentivized: Option<bool>,
    /// Only comments showing at least one published photo: the same plan
    /// on the `MEDIA#` partitions, which hold their listing copies.
    pub has_media: bool,
}
