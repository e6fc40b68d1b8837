//! Walking the cursors against a brute-force model, on the embedded
//! engine (the property lives in rave-conformance, so that the DynamoDB
//! backend runs it too).

mod common;

use common::fixture;
use proptest::prelude::*;
use rave_comments::Moderation;
use rave_conformance::pagination::{check_walk, walk};

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn walking_cursors_returns_each_match_once_in_order(walk in walk()) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let f = fixture(Moderation::Off).await;
            check_walk(&f.comments, walk).await
        })?;
    }
}
