//! Walking the cursors against a brute-force model, on the embedded
//! engine (the property lives in rave-conformance, so that the DynamoDB
//! backend runs it too). Here votes are cast between pages and the
//! aggregator counts them, so the `helpful` order moves during walks.

mod common;

use common::fixture;
use futures::FutureExt;
use proptest::prelude::*;
use rave_comments::Moderation;
use rave_conformance::pagination::{check_walk_counting, walk};
use rave_conformance::statistics::drain;
use rave_engine::EngineFeed;

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn walking_cursors_returns_each_match_once_in_order(walk in walk()) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let f = fixture(Moderation::Off).await;
            let consumer = EngineFeed::open(f.engine.clone(), "rave", "walk").await.unwrap();
            let aggregate = || drain(&f.comments, &consumer).boxed();
            check_walk_counting(&f.comments, walk, &aggregate).await
        })?;
    }
}
