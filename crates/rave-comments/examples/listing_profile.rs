//! One product's first page, read in process over and over, for a
//! profiler: callgrind counts what `measured` does with
//! `--toggle-collect='*listing_profile*measured*'`.
//!
//! ```sh
//! cargo build --release -p rave-comments --example listing_profile
//! valgrind --tool=callgrind --toggle-collect='*listing_profile*measured*' \
//!   target/release/examples/listing_profile DATA_DIR p1 1,5 100
//! ```
//!
//! DATA_DIR is a store `rave load` filled and `rave aggregate
//! --until-caught-up` counted; the ratings (comma-separated, or empty for
//! all) pick AP1 or AP3. The page is read TIMES times to warm up and TIMES
//! times timed, both in `measured`: the profile counts 2 × TIMES pages. It
//! prints the time a page took, which only means something outside the
//! profiler.

use std::error::Error;
use std::time::Instant;

use rave_comments::{
    Comments, Config, CursorKey, Filter, ListRequest, Moderation, Rating, RatingSet,
};
use rave_engine::Engine;
use tokio::runtime::Runtime;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Reads the page `times` times; returns how many comments it showed.
#[inline(never)]
fn measured(
    rt: &Runtime,
    comments: &Comments<Engine>,
    product: &str,
    filter: &Filter,
    times: usize,
) -> rave_comments::Result<usize> {
    let mut shown = 0;
    for _ in 0..times {
        let page = rt.block_on(comments.list(&ListRequest {
            product,
            filter: filter.clone(),
            sort: Default::default(),
            limit: 20,
            cursor: None,
        }))?;
        shown += page.items.len();
    }
    Ok(shown)
}

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, data, product, ratings, times] = args.as_slice() else {
        return Err("usage: listing_profile DATA_DIR PRODUCT RATINGS TIMES".into());
    };
    let times: usize = times.parse()?;
    let ratings = ratings
        .split(',')
        .filter(|r| !r.is_empty())
        .map(|r| Ok(Rating::new(r.parse()?)?))
        .collect::<Result<Vec<_>, Box<dyn Error>>>()?;
    let filter = Filter {
        ratings: RatingSet::from_ratings(ratings),
        ..Filter::default()
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let comments = Comments::new(
        Engine::open(std::path::Path::new(data))?,
        Config {
            table: "rave".into(),
            cursor_key: CursorKey::new([1; 32]),
            moderation: Moderation::Off,
        },
    );
    // Warm: the pages the profile counts find the store's pages cached.
    measured(&rt, &comments, product, &filter, times)?;
    let started = Instant::now();
    let shown = measured(&rt, &comments, product, &filter, times)?;
    println!(
        "{shown} comments shown, {:.2} µs a page",
        started.elapsed().as_secs_f64() * 1e6 / times as f64
    );
    Ok(())
}
