//! Erasing an author's data on the embedded engine (the scenario lives in
//! rave-conformance, so that the DynamoDB backend runs it too).

mod common;

use common::{fixture, stats_feed};
use rave_comments::Moderation;

#[tokio::test]
async fn erasing_an_author_leaves_nothing_of_them() {
    let f = fixture(Moderation::Off).await;
    let feed = stats_feed(&f.engine).await;
    rave_conformance::erasure::check_erasure(&f.comments, &feed).await;
}
