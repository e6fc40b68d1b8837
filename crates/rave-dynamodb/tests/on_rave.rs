//! rave's DynamoDB backend against rave's own DynamoDB API: the backend
//! speaks DynamoDB's wire protocol through the AWS SDK to a `rave
//! dynamodb-api` server (in process, on a fresh data directory), which must
//! answer as DynamoDB does. Every conformance case runs here, also those
//! DynamoDB Local departs from, and the statistics and pagination oracles
//! run over the SDK and DynamoDB Streams as they do against DynamoDB Local.

use std::sync::Arc;

use proptest::prelude::*;
use rave_comments::{Comments, Config, CursorKey, Moderation};
use rave_conformance::pagination::{check_walk, walk};
use rave_conformance::shards::ShardFeed;
use rave_conformance::table_definition;
use rave_dynamodb::DynamoStore;
use rave_store::Store;
use tokio::sync::oneshot;

/// A DynamoDB API server over a temporary data directory; stops when dropped.
struct RaveEndpoint {
    url: String,
    _stop: oneshot::Sender<()>,
    _dir: tempfile::TempDir,
}

async fn start() -> RaveEndpoint {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let engine = rave_engine::Engine::open(dir.path()).expect("the engine opens");
    let api = Arc::new(rave_dynamodb_api::DynamoApi::new(engine).expect("the metadata opens"));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let url = format!("http://{}", listener.local_addr().expect("an address"));
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(rave_dynamodb_api::serve(listener, api, async {
        let _ = stopped.await;
    }));
    RaveEndpoint {
        url,
        _stop: stop,
        _dir: dir,
    }
}

async fn setup(case: &str) -> (DynamoStore, String, RaveEndpoint) {
    let endpoint = start().await;
    let store = DynamoStore::local(&endpoint.url);
    store.create_table(table_definition(case)).await.unwrap();
    (store, case.to_owned(), endpoint)
}

rave_conformance::conformance_tests!(setup; every_case);

fn comments(store: DynamoStore, moderation: Moderation) -> Comments<DynamoStore> {
    Comments::new(
        store,
        Config {
            table: "comments".into(),
            cursor_key: CursorKey::new([4; 32]),
            moderation,
        },
    )
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    #[test]
    fn walking_cursors_through_raves_api_returns_each_match_once_in_order(walk in walk()) {
        runtime().block_on(async {
            let endpoint = start().await;
            let comments = comments(DynamoStore::local(&endpoint.url), Moderation::Off);
            comments.ensure_table().await.unwrap();
            check_walk(&comments, walk).await
        })?;
    }

    /// Statistics from rave's DynamoDB Streams API equal a recount, despite
    /// consumer restarts and a second consumer racing the first.
    #[test]
    fn statistics_through_raves_streams_api_equal_a_recount(ops in rave_conformance::statistics::ops()) {
        runtime().block_on(async {
            let endpoint = start().await;
            let store = DynamoStore::local(&endpoint.url);
            let comments = comments(store.clone(), Moderation::Pre);
            comments.ensure_table().await.unwrap();
            let open = || {
                let store = store.clone();
                async move { store.feed("comments", "statistics", rave_comments::aggregator_positions()).await.unwrap() }
            };
            rave_conformance::statistics::check_statistics(&comments, open, ops).await
        })?;
    }

    /// Three aggregators applying four shards at once keep the counts exact.
    #[test]
    fn concurrent_aggregators_through_raves_api_keep_counts_exact(ops in rave_conformance::statistics::sharded_ops()) {
        runtime().block_on(async {
            let endpoint = start().await;
            let store = DynamoStore::local(&endpoint.url);
            let comments = comments(store.clone(), Moderation::Pre);
            comments.ensure_table().await.unwrap();
            let open = |shard| {
                let store = store.clone();
                async move {
                    let consumer = store
                        .feed("comments", &format!("statistics-{shard}"), rave_comments::aggregator_positions())
                        .await
                        .unwrap();
                    ShardFeed::new(consumer, shard, rave_conformance::statistics::SHARDS)
                }
            };
            rave_conformance::statistics::check_statistics_sharded(&comments, open, ops).await
        })?;
    }
}
