//! The data set sizes of BENCH.md and what each means for every scenario.

use clap::ValueEnum;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Size {
    Quick,
    Small,
    Medium,
    Large,
}

/// What a size means for every scenario.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub name: &'static str,
    pub products: u64,
    pub comments: u64,
    /// The deep page of B2 (page 1000 unless the data set is too small).
    pub deep_page: usize,
    /// Timed calls per in-process figure.
    pub iterations: usize,
    /// Seconds of each wrk run.
    pub http_seconds: u64,
    /// dynoxide gets the whole data set (`None`), or only the newest `n`
    /// comments of the hot product: every page the read scenarios compare,
    /// page 1000 included. Its load slows as its file grows (well under
    /// 1 k comments/s past a few hundred MB), so the whole medium set
    /// would take hours.
    pub dynoxide_hot_tail: Option<u64>,
    /// Whether `all` runs B5's CSV row: it imports the whole set nine
    /// times (an hour on the medium set), so the medium set's row is
    /// `rave-bench imports --loaded DIR`'s, run on its own.
    pub imports: bool,
}

impl Size {
    pub fn plan(self) -> Plan {
        match self {
            Size::Quick => Plan {
                name: "quick",
                products: 20,
                comments: 3_000,
                deep_page: 8,
                iterations: 30,
                http_seconds: 1,
                dynoxide_hot_tail: None,
                imports: true,
            },
            Size::Small => Plan {
                name: "small",
                products: 100,
                comments: 10_000,
                deep_page: 40,
                iterations: 500,
                http_seconds: 5,
                dynoxide_hot_tail: None,
                imports: true,
            },
            Size::Medium => Plan {
                name: "medium",
                products: 1_000,
                comments: 1_000_000,
                deep_page: 1_000,
                iterations: 2_000,
                http_seconds: 20,
                dynoxide_hot_tail: Some(60_000),
                imports: false,
            },
            // B12: three times the medium set, with as many comments a
            // product, so that a product's pages are the medium set's and
            // only the store around them grows.
            Size::Large => Plan {
                name: "large",
                products: 3_000,
                comments: 3_000_000,
                deep_page: 1_000,
                iterations: 2_000,
                http_seconds: 20,
                dynoxide_hot_tail: Some(60_000),
                imports: false,
            },
        }
    }
}
