//! The benchmark data sets of BENCH.md, generated deterministically from a
//! seed: Zipf-distributed product popularity, eight languages with skewed
//! shares, ratings skewed towards 5 and 1, creation times spread over two
//! years, and ids derived from the seed too, so the same arguments give the
//! same data. Comments come out in creation order, as a live site receives
//! them; about one in ten shares its millisecond with the one before, so
//! exact ties occur.

use crate::model::{NewComment, Timestamp, VoteCounts};
use crate::photos::{MAX_PHOTOS, NewPhoto};
use crate::write::ImportComment;
use ulid::Ulid;

const LANGUAGES: [(&str, u64); 8] = [
    ("en", 40),
    ("de", 15),
    ("fr", 12),
    ("es", 10),
    ("it", 8),
    ("pt", 6),
    ("nl", 5),
    ("pl", 4),
];
const RATINGS: [(i64, u64); 5] = [(5, 45), (1, 20), (4, 18), (3, 9), (2, 8)];
const WORDS: [&str; 24] = [
    "works",
    "great",
    "battery",
    "screen",
    "broke",
    "after",
    "a",
    "week",
    "love",
    "it",
    "the",
    "strap",
    "is",
    "comfortable",
    "would",
    "buy",
    "again",
    "not",
    "worth",
    "price",
    "fast",
    "delivery",
    "quality",
    "poor",
];
/// 2024-01-01T00:00:00Z: the data set spans two years from here.
const START_MS: i64 = 1_704_067_200_000;
const SPAN_MS: u64 = 2 * 365 * 24 * 3600 * 1000;

/// xorshift64*: small, fast, deterministic.
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        // Never zero, or xorshift stays at zero.
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn weighted<T: Copy>(&mut self, table: &[(T, u64)]) -> T {
        let total: u64 = table.iter().map(|(_, w)| w).sum();
        let mut pick = self.next() % total;
        for (value, weight) in table {
            if pick < *weight {
                return *value;
            }
            pick -= weight;
        }
        table[0].0
    }
}

/// Zipf(s = 1.1) over `n` ranks, sampled by binary search on the CDF.
#[derive(Debug)]
struct Zipf(Vec<f64>);

impl Zipf {
    fn new(n: u64) -> Zipf {
        let mut cdf = Vec::with_capacity(n as usize);
        let mut total = 0.0;
        for k in 1..=n.max(1) {
            total += 1.0 / (k as f64).powf(1.1);
            cdf.push(total);
        }
        for c in &mut cdf {
            *c /= total;
        }
        Zipf(cdf)
    }

    fn sample(&self, rng: &mut Rng) -> u64 {
        let u = rng.unit();
        self.0.partition_point(|&c| c < u) as u64
    }
}

/// How a data set's comments are voted on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Votes {
    /// No votes (every helpfulness score 0).
    #[default]
    None,
    /// Up to 12 votes a comment, helpful with a probability that follows
    /// the rating: a 5-star comment's votes are nearly all helpful, a
    /// 1-star comment's nearly all unhelpful, so the most helpful comments
    /// are the best rated ones.
    ByRating,
    /// Up to 12 votes a comment, helpful with a probability drawn
    /// independently of the rating.
    Independent,
}

/// An endless, deterministic stream of comments.
#[derive(Debug)]
pub struct Generator {
    rng: Rng,
    votes: Votes,
    /// Votes draw from their own stream, so a data set with votes holds
    /// the same comments as the one without.
    vote_rng: Rng,
    products: Zipf,
    authors: Zipf,
    /// Photos draw from their own stream too.
    photo_rng: Rng,
    /// Stored photos comments may carry, and the share that carries some.
    photos: Vec<NewPhoto>,
    photo_share: f64,
    /// Average milliseconds between two comments.
    mean_gap_ms: u64,
    now_ms: i64,
}

impl Generator {
    pub fn new(products: u64, comments: u64, seed: u64) -> Generator {
        Generator {
            rng: Rng::new(seed),
            votes: Votes::None,
            vote_rng: Rng::new(!seed),
            photo_rng: Rng::new(seed.rotate_left(32)),
            photos: Vec::new(),
            photo_share: 0.0,
            products: Zipf::new(products),
            authors: Zipf::new((comments / 5).max(1)),
            mean_gap_ms: (SPAN_MS / comments.max(1)).max(1),
            now_ms: START_MS,
        }
    }

    /// The same comments with votes on them.
    pub fn with_votes(mut self, votes: Votes) -> Generator {
        self.votes = votes;
        self
    }

    /// The same comments, `share` of them (0 to 1) carrying one to three
    /// of `photos` (already stored: the data set only names them).
    pub fn with_photos(mut self, photos: Vec<NewPhoto>, share: f64) -> Generator {
        self.photos = photos;
        self.photo_share = share.clamp(0.0, 1.0);
        self
    }

    fn media(&mut self) -> Vec<NewPhoto> {
        if self.photos.is_empty() || self.photo_rng.unit() >= self.photo_share {
            return Vec::new();
        }
        let most = self.photos.len().min(3).min(MAX_PHOTOS) as u64;
        let count = 1 + self.photo_rng.next() % most;
        let first = self.photo_rng.next() as usize % self.photos.len();
        (0..count as usize)
            .map(|i| self.photos[(first + i) % self.photos.len()].clone())
            .collect()
    }

    fn vote_counts(&mut self, rating: i64) -> VoteCounts {
        let helpful_share = match self.votes {
            Votes::None => return VoteCounts::default(),
            // 0.04 for 1 star up to 0.96 for 5 stars.
            Votes::ByRating => 0.04 + 0.23 * (rating - 1) as f64,
            Votes::Independent => self.vote_rng.unit(),
        };
        let cast = self.vote_rng.next() % 13;
        let mut counts = VoteCounts::default();
        for _ in 0..cast {
            if self.vote_rng.unit() < helpful_share {
                counts.helpful += 1;
            } else {
                counts.unhelpful += 1;
            }
        }
        counts
    }

    fn text(&mut self, words: u64) -> String {
        let mut out = String::new();
        for i in 0..words {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(WORDS[(self.rng.next() % WORDS.len() as u64) as usize]);
        }
        out
    }

    pub fn next_comment(&mut self) -> ImportComment {
        let product = self.products.sample(&mut self.rng) + 1;
        let language = self.rng.weighted(&LANGUAGES);
        let rating = self.rng.weighted(&RATINGS);
        // Gaps uniform in [0, 2 × mean): the two years fill evenly, and a
        // tenth of the comments land on the previous one's millisecond.
        if !self.rng.next().is_multiple_of(10) {
            self.now_ms += (1 + self.rng.next() % (2 * self.mean_gap_ms)) as i64;
        }
        let created_ms = self.now_ms;
        let random = (u128::from(self.rng.next()) << 16) ^ u128::from(self.rng.next());
        let id = Ulid::from_parts(created_ms as u64, random & ((1u128 << 80) - 1));
        let title_words = 2 + self.rng.next() % 5;
        let body_words = 4 + self.rng.next() % 60;
        let author = format!("user{}", self.authors.sample(&mut self.rng) + 1);
        let title = self.text(title_words);
        let body = self.text(body_words);
        let votes = self.vote_counts(rating);
        let media = self.media();
        ImportComment {
            product: format!("p{product}"),
            id: Some(id.to_string()),
            status: None,
            comment: NewComment {
                attributes: Default::default(),
                author,
                language: language.to_owned(),
                rating,
                title: Some(title),
                body,
                created_at: Timestamp::from_millis(created_ms).ok(),
                media,
            },
            reply: None,
            verified_purchase: false,
            votes,
            source: None,
            incentivized: false,
            image_urls: Vec::new(),
            email: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_data() {
        let a: Vec<_> = (0..50)
            .map({
                let mut g = Generator::new(100, 1000, 7);
                move |_| g.next_comment()
            })
            .collect();
        let b: Vec<_> = (0..50)
            .map({
                let mut g = Generator::new(100, 1000, 7);
                move |_| g.next_comment()
            })
            .collect();
        assert_eq!(a, b);
        let mut other = Generator::new(100, 1000, 8);
        assert_ne!(a[0], other.next_comment());
        let mut voted = Generator::new(100, 1000, 7).with_votes(Votes::ByRating);
        let mut votes = 0;
        for plain in &a {
            let comment = voted.next_comment();
            assert_eq!(comment.comment, plain.comment, "votes change no comment");
            votes += comment.votes.helpful + comment.votes.unhelpful;
        }
        assert!(votes > 0);
    }

    #[test]
    fn a_share_of_comments_carries_photos_and_nothing_else_changes() {
        let pool: Vec<NewPhoto> = ["a", "b", "c", "d"]
            .iter()
            .map(|hex| NewPhoto {
                id: crate::photos::PhotoId::parse(&hex.repeat(64)).unwrap(),
                width: 1600,
                height: 1200,
            })
            .collect();
        let mut plain = Generator::new(100, 1000, 7);
        let mut with_photos = Generator::new(100, 1000, 7).with_photos(pool, 0.3);
        let mut carrying = 0;
        for _ in 0..2_000 {
            let mut comment = with_photos.next_comment();
            let media = std::mem::take(&mut comment.comment.media);
            assert!(media.len() <= 3);
            assert!(crate::photos::validate(&media).is_ok());
            carrying += usize::from(!media.is_empty());
            assert_eq!(comment, plain.next_comment(), "photos change no comment");
        }
        assert!(
            (450..750).contains(&carrying),
            "{carrying} of 2000 carry photos"
        );
    }

    #[test]
    fn comments_come_in_creation_order_with_ties() {
        let mut g = Generator::new(10, 10_000, 3);
        let times: Vec<i64> = (0..10_000)
            .map(|_| g.next_comment().comment.created_at.expect("time").millis())
            .collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]));
        let ties = times.windows(2).filter(|w| w[0] == w[1]).count();
        assert!((500..2_000).contains(&ties), "{ties} ties");
        let span = times[times.len() - 1] - times[0];
        assert!(
            span > (SPAN_MS as i64) * 8 / 10,
            "spread over the two years: {span}"
        );
    }

    #[test]
    fn popularity_and_ratings_are_skewed() {
        let mut g = Generator::new(1000, 20_000, 1);
        let sample: Vec<_> = (0..20_000).map(|_| g.next_comment()).collect();
        let top = sample.iter().filter(|c| c.product == "p1").count();
        let tail = sample.iter().filter(|c| c.product == "p500").count();
        assert!(top > 20 * tail.max(1), "p1 {top} vs p500 {tail}");
        let fives = sample.iter().filter(|c| c.comment.rating == 5).count();
        let threes = sample.iter().filter(|c| c.comment.rating == 3).count();
        assert!(fives > 3 * threes);
        let english = sample.iter().filter(|c| c.comment.language == "en").count();
        assert!(english > sample.len() / 3);
    }
}
