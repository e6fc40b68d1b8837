//! The embedded engine: the shared conformance suite (item operations,
//! indexes, paging, batches, transactions, validation, capacity), and what
//! only the engine has — its change stream, consumers, retention, reopening
//! and group commit.

use rave_conformance::{by_group, delete, get, key, put, table_definition, update};
use rave_engine::{
    Checkpoint, Engine, EngineOptions, EventName, IndexChange, IndexStatus, StartPosition,
};
use rave_store::*;

const TABLE: &str = "things";

async fn setup(_case: &str) -> (Engine, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path()).unwrap();
    engine.create_table(table_definition(TABLE)).await.unwrap();
    (engine, TABLE.to_owned(), dir)
}

rave_conformance::conformance_tests!(setup; every_case);

async fn open() -> (tempfile::TempDir, Engine) {
    let (engine, _, dir) = setup("").await;
    (dir, engine)
}

#[tokio::test]
async fn stream_records_every_change_once_in_order() {
    let (_dir, engine) = open().await;
    let position = engine
        .register_consumer(TABLE, "test", StartPosition::TrimHorizon)
        .await
        .unwrap();
    assert_eq!(position, 0);
    engine
        .put_item(put(TABLE, item! {"PK" => "s", "SK" => "1", "v" => 1i64}))
        .await
        .unwrap();
    // Writing the same item again changes nothing and records nothing.
    engine
        .put_item(put(TABLE, item! {"PK" => "s", "SK" => "1", "v" => 1i64}))
        .await
        .unwrap();
    engine
        .update_item(update(
            TABLE,
            key("s", "1"),
            Update::new().set_value("v", 2i64),
        ))
        .await
        .unwrap();
    engine
        .delete_item(delete(TABLE, key("s", "1")))
        .await
        .unwrap();
    engine
        .delete_item(delete(TABLE, key("s", "1")))
        .await
        .unwrap();
    // An update that only removes, on a missing item, creates nothing and
    // records nothing (DELETE on a missing item: "Nothing happens").
    engine
        .update_item(update(TABLE, key("s", "1"), Update::new().remove("v")))
        .await
        .unwrap();

    let records = engine.read_stream(TABLE, 0, 100).unwrap();
    let events: Vec<EventName> = records.iter().map(|r| r.event).collect();
    assert_eq!(
        events,
        [EventName::Insert, EventName::Modify, EventName::Remove]
    );
    assert!(records.windows(2).all(|w| w[0].sequence < w[1].sequence));
    assert_eq!(
        records[1].old_image.as_ref().unwrap()["v"],
        AttributeValue::from(1i64)
    );
    assert_eq!(
        records[1].new_image.as_ref().unwrap()["v"],
        AttributeValue::from(2i64)
    );
    assert_eq!(records[2].keys, key("s", "1"));
    assert_eq!(engine.latest_sequence(), records[2].sequence);

    // Reading after a position skips what came before.
    let rest = engine.read_stream(TABLE, records[0].sequence, 100).unwrap();
    assert_eq!(rest.len(), 2);

    // A checkpoint is a compare-and-set.
    let checkpoint = Checkpoint {
        table: TABLE.into(),
        consumer: "test".into(),
        expected: 0,
        sequence: records[1].sequence,
    };
    engine.checkpoint(checkpoint.clone()).await.unwrap();
    assert_eq!(
        engine.checkpoint(checkpoint).await,
        Err(StoreError::ConditionalCheckFailed)
    );
    assert_eq!(
        engine.consumer_position(TABLE, "test").unwrap(),
        Some(records[1].sequence)
    );
    let latest = engine
        .register_consumer(TABLE, "late", StartPosition::Latest)
        .await
        .unwrap();
    assert_eq!(latest, records[2].sequence);
}

#[tokio::test]
async fn checkpoint_commits_with_the_consumer_writes() {
    let (_dir, engine) = open().await;
    engine
        .register_consumer(TABLE, "agg", StartPosition::TrimHorizon)
        .await
        .unwrap();
    engine
        .put_item(put(TABLE, item! {"PK" => "x", "SK" => "1"}))
        .await
        .unwrap();
    let batch = engine.read_stream(TABLE, 0, 10).unwrap();
    let last = batch.last().unwrap().sequence;
    let effects = || TransactWriteItemsInput {
        actions: vec![TransactWriteAction::Update {
            table: TABLE.into(),
            key: key("STATS", "S"),
            update: Update::new().add("count", 1i64),
            condition: None,
        }],
    };
    let checkpoint = Checkpoint {
        table: TABLE.into(),
        consumer: "agg".into(),
        expected: 0,
        sequence: last,
    };
    engine
        .transact_with_checkpoint(effects(), checkpoint.clone())
        .await
        .unwrap();
    // A retry of the same batch (say after a crash before the consumer saw
    // the reply) is refused as a whole: the count stays exact.
    assert_eq!(
        engine.transact_with_checkpoint(effects(), checkpoint).await,
        Err(StoreError::ConditionalCheckFailed)
    );
    let stats = engine
        .get_item(get(TABLE, key("STATS", "S")))
        .await
        .unwrap()
        .item
        .unwrap();
    assert_eq!(stats["count"], AttributeValue::from(1i64));
}

#[tokio::test]
async fn stream_is_trimmed_only_after_every_consumer_passed() {
    let dir = tempfile::tempdir().unwrap();
    let options = EngineOptions {
        stream_retention: std::time::Duration::ZERO,
        ..EngineOptions::default()
    };
    let engine = Engine::open_with(dir.path(), options).unwrap();
    engine.create_table(table_definition(TABLE)).await.unwrap();
    engine
        .register_consumer(TABLE, "slow", StartPosition::TrimHorizon)
        .await
        .unwrap();
    for i in 0..5 {
        engine
            .put_item(put(TABLE, item! {"PK" => "r", "SK" => format!("{i}")}))
            .await
            .unwrap();
    }
    let checkpoint = Checkpoint {
        table: TABLE.into(),
        consumer: "slow".into(),
        expected: 0,
        sequence: 3,
    };
    engine.checkpoint(checkpoint).await.unwrap();
    // The writer trims at most once a second, during a later commit.
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    engine
        .put_item(put(TABLE, item! {"PK" => "r", "SK" => "late"}))
        .await
        .unwrap();
    let kept: Vec<u64> = engine
        .read_stream(TABLE, 0, 100)
        .unwrap()
        .iter()
        .map(|r| r.sequence)
        .collect();
    assert_eq!(
        kept,
        vec![4, 5, 6],
        "records 1-3 were passed by the only consumer"
    );
}

#[tokio::test]
async fn reopening_keeps_tables_items_and_sequence() {
    let dir = tempfile::tempdir().unwrap();
    {
        let engine = Engine::open(dir.path()).unwrap();
        engine.create_table(table_definition(TABLE)).await.unwrap();
        engine
            .put_item(put(TABLE, item! {"PK" => "d", "SK" => "1"}))
            .await
            .unwrap();
    }
    let engine = Engine::open(dir.path()).unwrap();
    assert_eq!(engine.table_names().unwrap(), vec![TABLE.to_string()]);
    assert!(
        engine
            .get_item(get(TABLE, key("d", "1")))
            .await
            .unwrap()
            .item
            .is_some()
    );
    assert_eq!(engine.latest_sequence(), 1);
    engine
        .put_item(put(TABLE, item! {"PK" => "d", "SK" => "2"}))
        .await
        .unwrap();
    assert_eq!(
        engine.latest_sequence(),
        2,
        "sequence numbers never restart"
    );
    engine.delete_table(TABLE).await.unwrap();
    assert!(engine.table_names().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_share_commits_and_all_land() {
    let (_dir, engine) = open().await;
    let mut tasks = Vec::new();
    for writer in 0..32 {
        let engine = engine.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..20 {
                engine
                    .put_item(put(TABLE, item! {"PK" => format!("w{writer}"), "SK" => format!("{i:03}"), "GROUP" => "all", "AT" => format!("{writer}-{i}")}))
                    .await
                    .unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let mut total = 0;
    let mut start = None;
    loop {
        let mut q = by_group(TABLE, "all");
        q.exclusive_start_key = start.take();
        let page = engine.query(q).await.unwrap();
        total += page.items.len();
        match page.last_evaluated_key {
            Some(k) => start = Some(k),
            None => break,
        }
    }
    assert_eq!(total, 640);
    assert_eq!(engine.read_stream(TABLE, 0, 10_000).unwrap().len(), 640);
}

#[tokio::test]
async fn a_query_filter_on_a_key_attribute_names_it_as_dynamodb_does() {
    let (_dir, engine) = open().await;
    let mut query = QueryInput::new(TABLE, None, KeyCondition::partition("PK", "p"));
    query.filter = Some(Condition::exists("SK"));
    assert_eq!(
        engine.query(query).await,
        Err(StoreError::Validation(
            "Filter Expression can only contain non-primary key attributes: Primary key attribute: SK"
                .into()
        ))
    );
}

/// An item of about 390 KB under `pk`.
fn big(pk: &str) -> Item {
    item! {"PK" => pk, "SK" => "1", "body" => "b".repeat(390_000)}
}

#[tokio::test]
async fn a_transaction_of_more_than_4_mb_is_refused() {
    let (_dir, engine) = open().await;
    let puts = |count: usize| TransactWriteItemsInput {
        actions: (0..count)
            .map(|i| TransactWriteAction::Put {
                table: TABLE.into(),
                item: big(&format!("t{i}")),
                condition: None,
            })
            .collect(),
    };
    // Ten items of 390 KB are 3.9 MB; eleven are 4.3 MB.
    engine.transact_write_items(puts(10)).await.unwrap();
    assert_eq!(
        engine.transact_write_items(puts(11)).await,
        Err(StoreError::Validation(
            "Transaction request cannot be larger than 4 MB".into()
        ))
    );
    assert_eq!(
        engine
            .get_item(get(TABLE, key("t10", "1")))
            .await
            .unwrap()
            .item,
        None
    );
}

#[tokio::test]
async fn an_invalid_action_cancels_a_transaction_with_dynamodbs_message_alone() {
    let (_dir, engine) = open().await;
    let input = TransactWriteItemsInput {
        actions: vec![
            TransactWriteAction::Update {
                table: TABLE.into(),
                key: key("t", "1"),
                update: Update::new().set("body", SetValue::value("b".repeat(500_000))),
                condition: None,
            },
            TransactWriteAction::Put {
                table: TABLE.into(),
                item: item! {"PK" => "u", "SK" => "1"},
                condition: None,
            },
        ],
    };
    assert_eq!(
        engine.transact_write_items(input).await,
        Err(StoreError::TransactionCanceled(vec![
            CancellationReason::ValidationError(
                "Item size has exceeded the maximum allowed size".into()
            ),
            CancellationReason::None,
        ]))
    );
}

#[tokio::test]
async fn batch_get_returns_at_most_16_mb_and_the_rest_unprocessed() {
    let (_dir, engine) = open().await;
    let keys: Vec<Item> = (0..50).map(|i| key(&format!("b{i}"), "1")).collect();
    for chunk in keys.chunks(10) {
        let actions = chunk
            .iter()
            .map(|k| TransactWriteAction::Put {
                table: TABLE.into(),
                item: big(k["PK"].as_s().unwrap()),
                condition: None,
            })
            .collect();
        engine
            .transact_write_items(TransactWriteItemsInput { actions })
            .await
            .unwrap();
    }
    let out = engine
        .batch_get_item(BatchGetItemInput {
            requests: vec![TableKeys {
                table: TABLE.into(),
                keys: keys.clone(),
                consistent_read: true,
            }],
        })
        .await
        .unwrap();
    let returned = &out.responses[0].1;
    let bytes: usize = returned.iter().map(item_size).sum();
    // 43 items of 390 KB fit in 16 MB; the 44th would not.
    assert_eq!(returned.len(), 43);
    assert!(bytes <= MAX_BATCH_GET_BYTES);
    assert_eq!(out.unprocessed.len(), 1);
    assert_eq!(out.unprocessed[0].keys, keys[43..]);
    // Only what was read is charged: 390,013 bytes are 96 units each.
    assert_eq!(out.consumed[0].read_units, 43.0 * 96.0);
}

#[tokio::test]
async fn a_scan_start_key_outside_its_segment_is_refused() {
    let (_dir, engine) = open().await;
    for i in 0..20 {
        engine
            .put_item(put(TABLE, item! {"PK" => format!("s{i}"), "SK" => "1"}))
            .await
            .unwrap();
    }
    let segment = |segment: u32, start: Option<Item>| {
        let mut scan = ScanInput::new(TABLE);
        scan.segment = Some(Segment {
            segment,
            total_segments: 2,
        });
        scan.exclusive_start_key = start;
        scan
    };
    let first = engine.scan(segment(0, None)).await.unwrap();
    let inside = first.items[0].clone();
    // Resuming the segment from one of its own keys works; from the other's does not.
    engine.scan(segment(0, Some(inside.clone()))).await.unwrap();
    assert_eq!(
        engine.scan(segment(1, Some(inside))).await,
        Err(StoreError::Validation(
            "The provided starting key is invalid: Invalid ExclusiveStartKey. Please use ExclusiveStartKey with correct Segment. TotalSegments: 2 Segment: 1"
                .into()
        ))
    );
}

#[tokio::test]
async fn start_keys_are_refused_with_dynamodbs_messages() {
    let (_dir, engine) = open().await;
    let mut query = QueryInput::new(TABLE, None, KeyCondition::partition("PK", "p"));
    query.exclusive_start_key = Some(item! {"PK" => "p"});
    assert_eq!(
        engine.query(query.clone()).await,
        Err(StoreError::Validation(
            "The provided starting key is invalid".into()
        ))
    );
    query.exclusive_start_key = Some(key("q", "1"));
    assert_eq!(
        engine.query(query).await,
        Err(StoreError::Validation(
            "The provided starting key does not match the range key predicate".into()
        ))
    );
}

#[tokio::test]
async fn update_table_adds_an_index_that_becomes_active_and_survives_a_reopen() {
    let (dir, engine) = open().await;
    for i in 0..50 {
        let mut item = item! {"PK" => format!("u{i}"), "SK" => "1"};
        if i % 2 == 0 {
            item.insert("SHADE".into(), "dark".into());
        }
        engine.put_item(put(TABLE, item)).await.unwrap();
    }
    let by_shade = GlobalSecondaryIndex {
        name: "byShade".into(),
        key_schema: KeySchema::new(KeyAttribute::new("SHADE", KeyType::S), None),
        projection: Projection::All,
    };
    engine
        .update_table(TABLE, IndexChange::Create(by_shade.clone()))
        .await
        .unwrap();
    let status = |engine: &Engine| {
        engine
            .describe_indexes(TABLE)
            .unwrap()
            .into_iter()
            .find(|d| d.index.name == "byShade")
            .map(|d| d.status)
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while status(&engine) != Some(IndexStatus::Active) {
        assert!(std::time::Instant::now() < deadline, "backfill never ended");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let shaded = || {
        QueryInput::new(
            TABLE,
            Some("byShade"),
            KeyCondition::partition("SHADE", "dark"),
        )
    };
    assert_eq!(engine.query(shaded()).await.unwrap().items.len(), 25);
    assert!(
        engine
            .describe_table(TABLE)
            .await
            .unwrap()
            .global_secondary_indexes
            .contains(&by_shade)
    );
    drop(engine);
    let engine = Engine::open(dir.path()).unwrap();
    assert_eq!(status(&engine), Some(IndexStatus::Active));
    assert_eq!(engine.query(shaded()).await.unwrap().items.len(), 25);
    engine
        .update_table(TABLE, IndexChange::Delete("byShade".into()))
        .await
        .unwrap();
    assert_eq!(status(&engine), None);
    assert!(matches!(
        engine
            .update_table(TABLE, IndexChange::Delete("byShade".into()))
            .await,
        Err(StoreError::ResourceNotFound(_))
    ));
}

/// Items `g0`…`g{n-1}`, each in `byGroup`'s partition `g`.
async fn put_grouped(engine: &Engine, from: usize, to: usize) {
    for i in from..to {
        let item =
            item! {"PK" => format!("g{i}"), "SK" => "1", "GROUP" => "g", "AT" => format!("{i:03}")};
        engine.put_item(put(TABLE, item)).await.unwrap();
    }
}

#[tokio::test]
async fn a_bulk_load_defers_the_indexes_and_builds_them_from_the_items() {
    let (_dir, engine) = open().await;
    put_grouped(&engine, 0, 10).await;
    engine.defer_indexes(TABLE).await.unwrap();
    assert!(
        engine
            .describe_indexes(TABLE)
            .unwrap()
            .iter()
            .all(|index| index.status == IndexStatus::Creating)
    );
    assert!(matches!(
        engine.query(by_group(TABLE, "g")).await,
        Err(StoreError::Validation(_))
    ));
    assert!(matches!(
        engine.defer_indexes(TABLE).await,
        Err(StoreError::ResourceInUse(_))
    ));
    put_grouped(&engine, 10, 30).await;
    engine
        .delete_item(delete(TABLE, key("g3", "1")))
        .await
        .unwrap();
    engine.build_deferred_indexes(TABLE).await.unwrap();
    assert!(
        engine
            .describe_indexes(TABLE)
            .unwrap()
            .iter()
            .all(|index| index.status == IndexStatus::Active)
    );
    let grouped = engine.query(by_group(TABLE, "g")).await.unwrap().items;
    let expected: Vec<String> = (0..30)
        .filter(|i| *i != 3)
        .map(|i| format!("g{i}"))
        .collect();
    let found: Vec<String> = grouped
        .iter()
        .map(|item| item["PK"].as_s().unwrap().to_owned())
        .collect();
    assert_eq!(found, expected);
}

/// Reads share one snapshot until the writer commits: with readers
/// keeping a snapshot in use all along, a read that starts after a write
/// was acknowledged (a GetItem, a Query of an index, a Scan) sees it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_after_an_acknowledged_write_sees_it_while_other_reads_share_a_snapshot() {
    let (_dir, engine) = open().await;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (engine, stop) = (engine.clone(), stop.clone());
            tokio::spawn(async move {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    engine.get_item(get(TABLE, key("g0", "1"))).await.unwrap();
                    tokio::task::yield_now().await;
                }
            })
        })
        .collect();
    for i in 0..300i64 {
        let item =
            item! {"PK" => "g0", "SK" => "1", "GROUP" => "g", "AT" => format!("{i:03}"), "v" => i};
        engine.put_item(put(TABLE, item)).await.unwrap();
        let read = engine.get_item(get(TABLE, key("g0", "1"))).await.unwrap();
        assert_eq!(read.item.unwrap()["v"], AttributeValue::n(i));
        let listed = engine.query(by_group(TABLE, "g")).await.unwrap().items;
        assert_eq!(listed[0]["AT"], AttributeValue::s(format!("{i:03}")));
        assert_eq!(grouped_count(&engine).await, 1);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for reader in readers {
        reader.await.unwrap();
    }
}

/// What a crash would leave of `engine`'s file now: a copy of it, opened
/// as a store of its own (the header names the last durable commit).
fn store_left_by_a_crash_of(dir: &std::path::Path) -> (tempfile::TempDir, Engine) {
    let copy = tempfile::tempdir().unwrap();
    std::fs::copy(
        dir.join(rave_engine::DATABASE_FILE),
        copy.path().join(rave_engine::DATABASE_FILE),
    )
    .unwrap();
    let engine = Engine::open(copy.path()).unwrap();
    (copy, engine)
}

async fn grouped_count(engine: &Engine) -> usize {
    engine
        .scan(ScanInput::new(TABLE))
        .await
        .unwrap()
        .items
        .len()
}

#[tokio::test]
async fn a_bulk_load_without_durable_groups_is_durable_once_its_indexes_are_built() {
    let dir = tempfile::tempdir().unwrap();
    let options = EngineOptions {
        durable_groups: false,
        ..EngineOptions::default()
    };
    let engine = Engine::open_with(dir.path(), options).unwrap();
    engine.create_table(table_definition(TABLE)).await.unwrap();
    engine.defer_indexes(TABLE).await.unwrap();
    put_grouped(&engine, 0, 20).await;
    // Acknowledged and readable, and not yet in the file's last durable
    // commit (the deferral's).
    assert_eq!(grouped_count(&engine).await, 20);
    let (_copy, crashed) = store_left_by_a_crash_of(dir.path());
    assert_eq!(grouped_count(&crashed).await, 0);
    drop(crashed);
    engine.build_deferred_indexes(TABLE).await.unwrap();
    let (_copy, crashed) = store_left_by_a_crash_of(dir.path());
    assert_eq!(grouped_count(&crashed).await, 20);
    assert_eq!(
        crashed
            .query(by_group(TABLE, "g"))
            .await
            .unwrap()
            .items
            .len(),
        20
    );
}

#[tokio::test]
async fn indexes_deferred_by_an_engine_that_stopped_are_backfilled_when_it_opens() {
    let (dir, engine) = open().await;
    put_grouped(&engine, 0, 10).await;
    engine.defer_indexes(TABLE).await.unwrap();
    put_grouped(&engine, 10, 20).await;
    engine
        .delete_item(delete(TABLE, key("g3", "1")))
        .await
        .unwrap();
    // Stopped before the build: the file says CREATING, with the indexes
    // emptied.
    drop(engine);
    let engine = Engine::open(dir.path()).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while engine
        .describe_indexes(TABLE)
        .unwrap()
        .iter()
        .any(|index| index.status != IndexStatus::Active)
    {
        assert!(std::time::Instant::now() < deadline, "backfill never ended");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let grouped = engine.query(by_group(TABLE, "g")).await.unwrap().items;
    assert_eq!(grouped.len(), 19);
    assert!(
        grouped
            .iter()
            .all(|item| item["PK"] != AttributeValue::s("g3"))
    );
}

#[tokio::test]
async fn items_nested_too_deep_or_with_too_long_names_are_refused() {
    let (_dir, engine) = open().await;
    let nested = |depth: usize| {
        (0..depth).fold(AttributeValue::s("leaf"), |inner, _| {
            AttributeValue::M(item! {"n" => inner})
        })
    };
    let with = |name: String, value: AttributeValue| {
        let mut item = key("deep", "1");
        item.insert(name, value);
        item
    };
    // 31 documents put the leaf at level 32, DynamoDB's deepest.
    engine
        .put_item(put(TABLE, with("doc".into(), nested(31))))
        .await
        .unwrap();
    assert_eq!(
        engine.put_item(put(TABLE, with("doc".into(), nested(32)))).await,
        Err(StoreError::Validation(
            "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit".into()
        ))
    );
    // An update that nests one level deeper is refused as well.
    let deeper = Update::new().set_value("doc", nested(32));
    assert!(matches!(
        engine
            .update_item(update(TABLE, key("deep", "1"), deeper))
            .await,
        Err(StoreError::Validation(_))
    ));
    let long_name = "a".repeat(MAX_ATTRIBUTE_NAME_BYTES + 1);
    assert!(matches!(
        engine
            .put_item(put(TABLE, with(long_name, AttributeValue::Null)))
            .await,
        Err(StoreError::Validation(_))
    ));
}

#[tokio::test]
async fn a_backfill_cut_short_by_closing_the_engine_resumes_on_reopen() {
    let (dir, engine) = open().await;
    // 5,000 items: five backfill chunks, far more than one commit.
    for chunk in 0..50 {
        let actions = (0..100)
            .map(|i| TransactWriteAction::Put {
                table: TABLE.into(),
                item: item! {"PK" => format!("r{chunk}-{i}"), "SK" => "1", "TONE" => "warm"},
                condition: None,
            })
            .collect();
        engine
            .transact_write_items(TransactWriteItemsInput { actions })
            .await
            .unwrap();
    }
    let by_tone = GlobalSecondaryIndex {
        name: "byTone".into(),
        key_schema: KeySchema::new(KeyAttribute::new("TONE", KeyType::S), None),
        projection: Projection::KeysOnly,
    };
    engine
        .update_table(TABLE, IndexChange::Create(by_tone))
        .await
        .unwrap();
    // Closing stops the writer after the chunk it is on.
    drop(engine);
    let engine = Engine::open(dir.path()).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while engine
        .describe_indexes(TABLE)
        .unwrap()
        .iter()
        .any(|d| d.status == IndexStatus::Creating)
    {
        assert!(std::time::Instant::now() < deadline, "backfill never ended");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let mut entries = 0;
    let mut start = None;
    loop {
        let mut query = QueryInput::new(
            TABLE,
            Some("byTone"),
            KeyCondition::partition("TONE", "warm"),
        );
        query.exclusive_start_key = start.take();
        query.select = Some(Select::Count);
        let page = engine.query(query).await.unwrap();
        entries += page.count;
        match page.last_evaluated_key {
            Some(key) => start = Some(key),
            None => break,
        }
    }
    assert_eq!(entries, 5_000);
}

#[tokio::test]
async fn a_stream_turned_off_records_nothing_until_turned_on_again() {
    let (dir, engine) = open().await;
    assert!(engine.describe_table(TABLE).await.unwrap().stream_enabled);
    let write = |v: i64| put(TABLE, item! {"PK" => "s", "SK" => "1", "v" => v});
    engine.put_item(write(1)).await.unwrap();
    assert_eq!(
        engine.update_stream(TABLE, true).await,
        Err(StoreError::validation(
            "Table already has an enabled stream: TableName: things"
        ))
    );
    engine.update_stream(TABLE, false).await.unwrap();
    assert_eq!(
        engine.update_stream(TABLE, false).await,
        Err(StoreError::validation(
            "Table has no stream to disable: TableName: things"
        ))
    );
    engine.put_item(write(2)).await.unwrap();
    assert_eq!(engine.read_stream(TABLE, 0, 10).unwrap().len(), 1);
    drop(engine);
    // The change is in the catalog: a reopened engine keeps it.
    let engine = Engine::open(dir.path()).unwrap();
    assert!(!engine.describe_table(TABLE).await.unwrap().stream_enabled);
    engine.update_stream(TABLE, true).await.unwrap();
    engine.put_item(write(3)).await.unwrap();
    let records = engine.read_stream(TABLE, 0, 10).unwrap();
    assert_eq!(records.len(), 2);
    assert_eq!(
        records[1].new_image.as_ref().and_then(|i| i.get("v")),
        Some(&AttributeValue::from(3i64))
    );
}

/// The harness's floor reads a partition's stored entries, in either
/// direction, and stops at its limit.
#[tokio::test]
async fn a_raw_partition_read_stops_at_its_limit_and_its_partition() {
    let (_dir, engine) = open().await;
    for (group, at) in [("a", "x"), ("a", "yy"), ("a", "zzz"), ("b", "wwww")] {
        engine
            .put_item(put(
                TABLE,
                item! {"PK" => format!("{group}{at}"), "SK" => "s", "GROUP" => group, "AT" => at},
            ))
            .await
            .unwrap();
    }
    let raw = |group: &str, forward, limit| {
        engine
            .read_raw_partition(
                TABLE,
                Some("byGroup"),
                &AttributeValue::s(group),
                forward,
                limit,
            )
            .unwrap()
    };
    let whole = raw("a", true, 10);
    assert_eq!(raw("a", false, 10), whole);
    assert_eq!(raw("a", true, 3), whole);
    let (first, last) = (raw("a", true, 1), raw("a", false, 1));
    assert!(
        first > 0 && first < last && last < whole,
        "{first} {last} {whole}"
    );
    assert_eq!(raw("none", true, 10), 0);
    assert!(
        engine
            .read_raw_partition(TABLE, Some("missing"), &AttributeValue::s("a"), true, 1)
            .is_err()
    );
}

#[tokio::test]
async fn a_subscription_taken_after_a_commit_waits_for_the_next_one() {
    let (_dir, engine) = open().await;
    engine
        .put_item(put(TABLE, item! {"PK" => "s", "SK" => "1"}))
        .await
        .unwrap();
    let mut commits = engine.subscribe();
    assert!(
        !commits.has_changed().unwrap(),
        "a fresh subscription saw a commit made before it"
    );
    engine
        .put_item(put(TABLE, item! {"PK" => "s", "SK" => "2"}))
        .await
        .unwrap();
    assert!(commits.has_changed().unwrap(), "a commit went unseen");
    commits.borrow_and_update();
    assert!(!commits.has_changed().unwrap());
}

#[tokio::test(start_paused = true)]
async fn a_caught_up_feed_waits_out_its_time_instead_of_returning_at_once() {
    use rave_store::ChangeFeed;
    let (_dir, engine) = open().await;
    let feed = rave_engine::EngineFeed::open(engine.clone(), TABLE, "waiting")
        .await
        .unwrap();
    engine
        .put_item(put(TABLE, item! {"PK" => "s", "SK" => "1"}))
        .await
        .unwrap();
    let batch = feed
        .next(100, std::time::Duration::from_secs(5))
        .await
        .unwrap()
        .expect("the committed change");
    feed.commit(batch, Vec::new()).await.unwrap();
    // Caught up: with the clock paused, the wait ends only when the paused
    // clock has been advanced through all of it.
    let started = tokio::time::Instant::now();
    assert!(
        feed.next(100, std::time::Duration::from_secs(5))
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(5),
        "the feed returned after {:?} without a commit",
        started.elapsed()
    );
}
