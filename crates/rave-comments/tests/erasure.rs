//! Erasing an author's data on the embedded engine (the scenario lives in
//! rave-conformance, so that the DynamoDB backend runs it too).

mod common;

use common::fixture;
use rave_comments::Moderation;
use rave_engine::EngineFeed;

#[tokio::test]
async fn erasing_an_author_leaves_nothing_of_them() {
    let f = fixture(Moderation::Off).await;
    let feed = EngineFeed::open(f.engine.clone(), "rave", "stats")
        .await
        .unwrap();
    rave_conformance::erasure::check_erasure(&f.comments, &feed).await;
}
