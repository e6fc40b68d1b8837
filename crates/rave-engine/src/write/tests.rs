//! The writer driven directly, so a test decides exactly which requests
//! share a group.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rave_conformance::{delete, get, key, put, table_definition};
use rave_store::{
    AttributeValue, BatchWriteItemInput, Item, Number, Result, ReturnValuesOnConditionCheckFailure,
    StoreError, TableDefinition, WriteRequest, item,
};
use redb::ReadableTable;
use tokio::sync::{oneshot, watch};

use super::backfill;
use super::collections::measure;
use super::queue::{Job, WriteOp, WriteReply};
use super::writer::Writer;
use crate::catalog::{Catalog, IndexChange, IndexStatus, TableState};
use crate::clock::Clock;
use crate::codec::decode_record;
use crate::database::SharedDatabase;
use crate::keys::partition_prefix;
use crate::layout::{bytes_table, collections_table, stream_table};
use crate::read;
use crate::stream::{EventName, StoredRecord};
use crate::ttl::{Expired, TimeToLiveSpecification};

const TABLE: &str = "things";

fn writer(dir: &std::path::Path) -> Writer {
    let db = SharedDatabase::open(&dir.join("test.redb"), 1 << 20).expect("a database");
    let writer = Writer {
        db: Arc::new(db),
        catalog: Arc::new(Catalog::default()),
        next_sequence: 1,
        retention: Duration::from_secs(60),
        latest_sequence: watch::channel(0).0,
        last_trim: Instant::now(),
        max_group: 1024,
        durable_groups: true,
        clock: Clock::System,
        max_item_collection_bytes: crate::engine::MAX_ITEM_COLLECTION_BYTES,
        health: Default::default(),
        build_sizes: Default::default(),
    };
    writer
        .change_catalog(&WriteOp::CreateTable(table_definition(TABLE)))
        .expect("table created");
    writer
}

/// Runs `ops` as one group and returns each request's outcome.
fn group(writer: &mut Writer, ops: Vec<WriteOp>) -> Vec<Result<WriteReply>> {
    let (jobs, mut replies): (Vec<Job>, Vec<_>) = ops
        .into_iter()
        .map(|op| {
            let (reply, response) = oneshot::channel();
            (Job { op, reply }, response)
        })
        .unzip();
    writer.run_group(jobs);
    replies
        .iter_mut()
        .map(|r| r.try_recv().expect("answered after the commit").outcome)
        .collect()
}

fn read(writer: &Writer, pk: &str) -> Result<Option<Item>> {
    let table = writer.catalog.get(TABLE)?;
    let snapshot = writer.db.snapshot()?;
    Ok(read::get_item(&snapshot, &table, &get(TABLE, key(pk, "s")))?.item)
}

fn thing(pk: &str, v: i64) -> Item {
    item! {"PK" => pk, "SK" => "s", "v" => v}
}

/// A table with one local index, the way collections are kept for.
fn local_table(writer: &mut Writer) -> Arc<TableState> {
    let definition = TableDefinition {
        name: "locals".into(),
        local_secondary_indexes: vec![rave_store::LocalSecondaryIndex {
            name: "byV".into(),
            sort_key: rave_store::KeyAttribute::new("v", rave_store::KeyType::N),
            projection: rave_store::Projection::KeysOnly,
        }],
        ..table_definition("locals")
    };
    writer
        .change_catalog(&WriteOp::CreateTable(definition))
        .expect("table created");
    writer.catalog.get("locals").expect("the table")
}

fn collection_sizes(writer: &Writer, table: &TableState) -> Vec<(Vec<u8>, u64)> {
    let name = table.collections_table.as_deref().expect("kept");
    let txn = writer.db.begin_read().expect("a snapshot");
    let sizes = txn.open_table(collections_table(name)).expect("the sizes");
    sizes
        .iter()
        .expect("an iterator")
        .map(|entry| {
            let (key, size) = entry.expect("an entry");
            (key.value().to_vec(), size.value())
        })
        .collect()
}

#[test]
fn collections_never_kept_are_measured_from_the_items() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = writer(dir.path());
    let table = local_table(&mut writer);
    let items = [
        item! {"PK" => "a", "SK" => "1", "v" => 1i64},
        item! {"PK" => "a", "SK" => "2"},
        item! {"PK" => "b", "SK" => "1", "v" => 2i64, "note" => "text"},
    ];
    let puts = items
        .iter()
        .map(|item| WriteOp::Put(put("locals", item.clone()), Default::default()))
        .collect();
    assert!(group(&mut writer, puts).iter().all(Result::is_ok));
    let kept = collection_sizes(&writer, &table);
    let expected = |pk: &str| -> u64 {
        items
            .iter()
            .filter(|item| item["PK"] == AttributeValue::from(pk))
            .map(|item| table.collection_bytes(item))
            .sum()
    };
    let partition = |pk: &str| partition_prefix(&[&AttributeValue::from(pk)]);
    let mut wanted = vec![
        (partition("a"), expected("a")),
        (partition("b"), expected("b")),
    ];
    wanted.sort();
    assert_eq!(kept, wanted);

    // As a data directory from before the sizes were kept: none at all.
    let txn = writer.db.begin_write().unwrap();
    let name = table.collections_table.as_deref().unwrap();
    txn.delete_table(collections_table(name)).unwrap();
    txn.commit().unwrap();
    let txn = writer.db.begin_write().unwrap();
    measure(&txn, &table).unwrap();
    txn.commit().unwrap();
    assert_eq!(collection_sizes(&writer, &table), wanted);
}

#[test]
fn a_corrupt_item_fails_only_the_requests_that_read_it() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut writer = writer(dir.path());
    let setup = group(
        &mut writer,
        vec![
            WriteOp::Put(
                put(TABLE, thing("good", 1)),
                ReturnValuesOnConditionCheckFailure::None,
            ),
            WriteOp::Put(
                put(TABLE, thing("bad", 1)),
                ReturnValuesOnConditionCheckFailure::None,
            ),
        ],
    );
    assert!(setup.iter().all(Result::is_ok));
    // Damage the stored bytes of one item, as a bad sector or a bug would.
    {
        let table = writer.catalog.get(TABLE).expect("the table");
        let stored = table.key_bytes(&key("bad", "s")).expect("a key");
        let txn = writer.db.begin_write().expect("a write transaction");
        txn.open_table(bytes_table(&table.items_table))
            .expect("the items table")
            .insert(stored.as_slice(), [7u8, 200, 1].as_slice())
            .expect("garbage written");
        txn.commit().expect("committed");
    }

    let outcomes = group(
        &mut writer,
        vec![
            WriteOp::Put(
                put(TABLE, thing("good", 2)),
                ReturnValuesOnConditionCheckFailure::None,
            ),
            WriteOp::Put(
                put(TABLE, thing("bad", 2)),
                ReturnValuesOnConditionCheckFailure::None,
            ),
            WriteOp::Put(
                put(TABLE, thing("new", 1)),
                ReturnValuesOnConditionCheckFailure::None,
            ),
            WriteOp::BatchWrite(BatchWriteItemInput {
                requests: vec![
                    (TABLE.into(), WriteRequest::Put(thing("batched", 1))),
                    (TABLE.into(), WriteRequest::Delete(key("bad", "s"))),
                ],
            }),
            WriteOp::Delete(
                delete(TABLE, key("bad", "s")),
                ReturnValuesOnConditionCheckFailure::None,
            ),
        ],
    );

    let corrupt = |outcome: &Result<WriteReply>| match outcome {
        Err(StoreError::Corrupt { what, .. }) => {
            what.contains(r#"PK="bad", SK="s""#) && what.contains(TABLE)
        }
        _ => false,
    };
    assert!(outcomes[0].is_ok(), "{:?}", outcomes[0]);
    assert!(corrupt(&outcomes[1]), "{:?}", outcomes[1]);
    assert!(outcomes[2].is_ok(), "{:?}", outcomes[2]);
    assert!(corrupt(&outcomes[3]), "{:?}", outcomes[3]);
    assert!(corrupt(&outcomes[4]), "{:?}", outcomes[4]);

    assert_eq!(read(&writer, "good"), Ok(Some(thing("good", 2))));
    assert_eq!(read(&writer, "new"), Ok(Some(thing("new", 1))));
    // The failed batch wrote none of its items.
    assert_eq!(read(&writer, "batched"), Ok(None));
    assert!(matches!(
        read(&writer, "bad"),
        Err(StoreError::Corrupt { .. })
    ));
}

#[test]
fn an_added_index_is_creating_until_backfilled_in_chunks_then_active() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut writer = writer(dir.path());
    // 2,500 items: three backfill chunks. Every third has a colour; one
    // has a colour of the wrong type and stays out of the index.
    let items: Vec<WriteOp> = (0..2_500)
        .map(|i| {
            let mut item = thing(&format!("p{i}"), i);
            if i % 3 == 0 {
                item.insert("COLOR".into(), "red".into());
            }
            if i == 1 {
                item.insert("COLOR".into(), 7i64.into());
            }
            WriteOp::Put(put(TABLE, item), ReturnValuesOnConditionCheckFailure::None)
        })
        .collect();
    assert!(group(&mut writer, items).iter().all(Result::is_ok));
    let by_color = rave_store::GlobalSecondaryIndex {
        name: "byColor".into(),
        key_schema: rave_store::KeySchema::new(
            rave_store::KeyAttribute::new("COLOR", rave_store::KeyType::S),
            None,
        ),
        projection: rave_store::Projection::KeysOnly,
    };
    writer
        .change_catalog(&WriteOp::UpdateTable {
            table: TABLE.into(),
            change: IndexChange::Create(by_color.clone()),
        })
        .expect("index added");
    let query = |writer: &Writer| {
        let table = writer.catalog.get(TABLE)?;
        let snapshot = writer.db.snapshot()?;
        let condition = rave_store::KeyCondition::partition("COLOR", "red");
        read::query(
            &snapshot,
            &table,
            &rave_store::QueryInput::new(TABLE, Some("byColor"), condition),
        )
    };
    let status = |writer: &Writer| {
        let table = writer.catalog.get(TABLE).expect("the table");
        table.index("byColor").expect("the index").status
    };
    assert_eq!(status(&writer), IndexStatus::Creating);
    assert_eq!(
        query(&writer),
        Err(StoreError::validation(
            "Cannot read from backfilling global secondary index: byColor"
        ))
    );
    // A second index cannot start while this one builds.
    let mut second = by_color.clone();
    second.name = "byColour".into();
    assert!(matches!(
        writer.change_catalog(&WriteOp::UpdateTable {
            table: TABLE.into(),
            change: IndexChange::Create(second),
        }),
        Err(StoreError::ResourceInUse(_))
    ));
    // Writes meanwhile maintain the new index.
    let late = item! {"PK" => "late", "SK" => "s", "COLOR" => "red"};
    assert!(
        group(
            &mut writer,
            vec![WriteOp::Put(
                put(TABLE, late),
                ReturnValuesOnConditionCheckFailure::None
            )]
        )[0]
        .is_ok()
    );
    let mut steps = 0;
    while backfill::step(&writer.db, &writer.catalog) {
        steps += 1;
        assert!(steps <= 3, "three chunks of at most 1,000 items");
    }
    assert_eq!(steps, 3);
    assert_eq!(status(&writer), IndexStatus::Active);
    let page = query(&writer).expect("the index is readable");
    // p0, p3, ... p2499: 834 items, and the late one.
    assert_eq!(page.items.len(), 835);

    writer
        .change_catalog(&WriteOp::UpdateTable {
            table: TABLE.into(),
            change: IndexChange::Delete("byColor".into()),
        })
        .expect("index deleted");
    assert_eq!(
        query(&writer),
        Err(StoreError::validation(
            "The table does not have the specified index: byColor"
        ))
    );
    assert!(!backfill::step(&writer.db, &writer.catalog));
}

#[test]
fn time_to_live_deletes_only_items_still_as_found() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut writer = writer(dir.path());
    writer.clock = Clock::Manual(crate::clock::ManualClock::starting_at(10_000_000));
    writer
        .change_catalog(&WriteOp::UpdateTimeToLive {
            table: TABLE.into(),
            change: TimeToLiveSpecification {
                attribute_name: "expires".into(),
                enabled: true,
            },
        })
        .expect("TTL enabled");
    let expiring = |pk: &str, at: i64| item! {"PK" => pk, "SK" => "s", "expires" => at};
    let setup = group(
        &mut writer,
        vec![
            WriteOp::Put(
                put(TABLE, expiring("found", 9_000)),
                ReturnValuesOnConditionCheckFailure::None,
            ),
            WriteOp::Put(
                put(TABLE, expiring("rewritten", 9_500)),
                ReturnValuesOnConditionCheckFailure::None,
            ),
        ],
    );
    assert!(setup.iter().all(Result::is_ok));
    let table = writer.catalog.get(TABLE).expect("the table");
    let found = |pk: &str, at: i64| Expired {
        key: table.key_bytes(&key(pk, "s")).expect("a key"),
        value: Number::from(at),
    };
    // "rewritten" was found with 9000 but has been written since.
    let outcomes = group(
        &mut writer,
        vec![WriteOp::Expire {
            table: TABLE.into(),
            attribute: "expires".into(),
            items: vec![found("found", 9_000), found("rewritten", 9_000)],
        }],
    );
    assert!(
        matches!(outcomes[..], [Ok(WriteReply::Expired(1))]),
        "{outcomes:?}"
    );
    assert_eq!(read(&writer, "found"), Ok(None));
    assert_eq!(
        read(&writer, "rewritten"),
        Ok(Some(expiring("rewritten", 9_500)))
    );

    let txn = writer.db.begin_read().expect("a read transaction");
    let stream = txn
        .open_table(stream_table(&table.stream_table))
        .expect("the stream");
    let records: Vec<StoredRecord> = stream
        .iter()
        .expect("records")
        .map(|entry| {
            let (_, value) = entry.expect("a record");
            decode_record(value.value()).expect("decodes")
        })
        .collect();
    let last = records.last().expect("a record of the deletion");
    assert_eq!(records.len(), 3);
    assert!(last.removed_by_ttl && last.event == EventName::Remove);
    assert_eq!(last.old_image, Some(expiring("found", 9_000)));
    assert!(records[..2].iter().all(|r| !r.removed_by_ttl));
}

#[test]
fn enabling_time_to_live_fills_the_queue_a_chunk_at_a_time_and_disabling_stops_it() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut writer = writer(dir.path());
    let ttl = |enabled| WriteOp::UpdateTimeToLive {
        table: TABLE.into(),
        change: TimeToLiveSpecification {
            attribute_name: "expires".into(),
            enabled,
        },
    };
    let filling = |writer: &Writer| {
        writer
            .catalog
            .get(TABLE)
            .expect("the table")
            .expiries_filling
    };
    let queued = |writer: &Writer| {
        let txn = writer.db.begin_read().expect("a read transaction");
        let queue = txn
            .open_table(bytes_table("expiries/things"))
            .expect("the queue");
        queue.iter().expect("entries").count()
    };
    // An empty table's queue is complete at once.
    writer.change_catalog(&ttl(true)).expect("TTL enabled");
    assert!(!filling(&writer));
    writer.change_catalog(&ttl(false)).expect("TTL disabled");

    // 12,000 items, every other one with a TTL value.
    for first in (0..12_000).step_by(1_000) {
        let puts = (first..first + 1_000)
            .map(|n: i64| {
                let mut thing = item! {"PK" => format!("p{n}"), "SK" => "s"};
                if n % 2 == 0 {
                    thing.insert("expires".into(), AttributeValue::N(n.into()));
                }
                WriteOp::Put(put(TABLE, thing), ReturnValuesOnConditionCheckFailure::None)
            })
            .collect();
        assert!(group(&mut writer, puts).iter().all(Result::is_ok));
    }
    writer.change_catalog(&ttl(true)).expect("TTL enabled");
    assert!(filling(&writer), "DescribeTimeToLive says ENABLING");
    assert_eq!(queued(&writer), 0);
    assert!(super::expiries::fill_step(&writer.db, &writer.catalog));
    assert!(filling(&writer));
    assert!(queued(&writer) > 0);
    let mut steps = 1;
    while super::expiries::fill_step(&writer.db, &writer.catalog) {
        steps += 1;
        assert!(steps <= 3, "chunks of 5,000 items");
    }
    assert_eq!(steps, 3);
    assert!(!filling(&writer));
    assert_eq!(queued(&writer), 6_000);

    // Disabling while a fill runs ends it, record and all.
    writer.change_catalog(&ttl(false)).expect("TTL disabled");
    writer.change_catalog(&ttl(true)).expect("TTL enabled");
    assert!(super::expiries::fill_step(&writer.db, &writer.catalog));
    writer.change_catalog(&ttl(false)).expect("TTL disabled");
    assert!(!filling(&writer));
    assert!(!super::expiries::fill_step(&writer.db, &writer.catalog));
    let txn = writer.db.begin_read().expect("a read transaction");
    let fills = txn
        .open_table(crate::layout::EXPIRY_FILLS)
        .expect("the fills");
    assert_eq!(fills.iter().expect("fills").count(), 0);
}

/// A table with every kind of index: the three global ones of
/// `table_definition` (ALL, KEYS_ONLY and INCLUDE projections, string,
/// number and binary keys) and a local one.
fn bulky_table(writer: &mut Writer) -> Arc<TableState> {
    let definition = TableDefinition {
        name: "bulky".into(),
        local_secondary_indexes: vec![rave_store::LocalSecondaryIndex {
            name: "byV".into(),
            sort_key: rave_store::KeyAttribute::new("v", rave_store::KeyType::N),
            projection: rave_store::Projection::All,
        }],
        ..table_definition("bulky")
    };
    writer
        .change_catalog(&WriteOp::CreateTable(definition))
        .expect("table created");
    writer.catalog.get("bulky").expect("the table")
}

/// Every entry of redb table `name`, in key order.
fn contents(writer: &Writer, name: &str) -> Vec<(Vec<u8>, Vec<u8>)> {
    let txn = writer.db.begin_read().expect("a read transaction");
    let table = txn.open_table(bytes_table(name)).expect("the table");
    table
        .iter()
        .expect("entries")
        .map(|entry| {
            let (key, value) = entry.expect("an entry");
            (key.value().to_vec(), value.value().to_vec())
        })
        .collect()
}

/// One write of the bulk tests: a put of item `pk`/`sk` with the index
/// attributes given, or (all `None`, `put` false) its delete.
#[derive(Debug, Clone)]
struct BulkWrite {
    pk: u8,
    sk: u8,
    put: bool,
    group: Option<(u8, u8)>,
    score: Option<(u8, i16)>,
    tag: Option<Vec<u8>>,
    v: Option<i16>,
}

fn bulk_write() -> impl proptest::strategy::Strategy<Value = BulkWrite> {
    use proptest::prelude::*;
    (
        0u8..30,
        0u8..3,
        proptest::bool::weighted(0.85),
        proptest::option::of((0u8..4, any::<u8>())),
        proptest::option::of((0u8..3, any::<i16>())),
        proptest::option::of(proptest::collection::vec(any::<u8>(), 1..6)),
        proptest::option::of(any::<i16>()),
    )
        .prop_map(|(pk, sk, put, group, score, tag, v)| BulkWrite {
            pk,
            sk,
            put,
            group,
            score,
            tag,
            v,
        })
}

fn bulk_op(write: &BulkWrite) -> WriteOp {
    let (pk, sk) = (format!("p{}", write.pk), format!("s{}", write.sk));
    if !write.put {
        return WriteOp::Delete(
            delete("bulky", key(&pk, &sk)),
            ReturnValuesOnConditionCheckFailure::None,
        );
    }
    let mut item = item! {"PK" => pk, "SK" => sk, "note" => "n".repeat(usize::from(write.sk) * 40)};
    if let Some((group, at)) = write.group {
        item.insert("GROUP".into(), format!("g{group}").into());
        item.insert("AT".into(), format!("{at:03}").into());
    }
    if let Some((kind, score)) = write.score {
        item.insert("KIND".into(), format!("k{kind}").into());
        item.insert("SCORE".into(), AttributeValue::N(i64::from(score).into()));
    }
    if let Some(tag) = &write.tag {
        item.insert("TAG".into(), AttributeValue::B(tag.clone()));
    }
    if let Some(v) = write.v {
        item.insert("v".into(), AttributeValue::N(i64::from(v).into()));
    }
    WriteOp::Put(
        put("bulky", item),
        ReturnValuesOnConditionCheckFailure::None,
    )
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// Indexes deferred and built from sorted runs (runs and commits a few
    /// hundred bytes each, so the build spills and merges many) hold
    /// exactly the entries, byte for byte, that writes maintaining them one
    /// by one leave.
    #[test]
    fn indexes_built_after_a_bulk_load_equal_indexes_kept_by_each_write(
        groups in proptest::collection::vec(proptest::collection::vec(bulk_write(), 1..12), 1..12)
    ) {
        let (kept_dir, bulk_dir) = (
            tempfile::tempdir().expect("a directory"),
            tempfile::tempdir().expect("a directory"),
        );
        let (mut kept, mut bulk) = (writer(kept_dir.path()), writer(bulk_dir.path()));
        // As `rave load` writes: groups committed without an fsync.
        bulk.durable_groups = false;
        let table = bulky_table(&mut kept);
        bulky_table(&mut bulk);
        bulk.change_catalog(&WriteOp::DeferIndexes("bulky".into()))
            .expect("indexes deferred");
        let deferred = bulk.catalog.get("bulky").expect("the table");
        proptest::prop_assert!(deferred
            .indexes
            .iter()
            .all(|index| index.deferred && index.status == IndexStatus::Creating));
        for writes in &groups {
            let ops = || writes.iter().map(bulk_op).collect::<Vec<_>>();
            proptest::prop_assert!(group(&mut kept, ops()).iter().all(Result::is_ok));
            proptest::prop_assert!(group(&mut bulk, ops()).iter().all(Result::is_ok));
            // Nothing backfills a deferred index between groups.
            proptest::prop_assert!(!backfill::step(&bulk.db, &bulk.catalog));
        }
        for index in &table.indexes {
            proptest::prop_assert!(contents(&bulk, &index.redb_table).is_empty());
        }
        bulk.build_sizes = super::bulk::BuildSizes { run_bytes: 300, commit_bytes: 500 };
        bulk.change_catalog(&WriteOp::BuildDeferredIndexes("bulky".into()))
            .expect("indexes built");
        let built = bulk.catalog.get("bulky").expect("the table");
        proptest::prop_assert!(built
            .indexes
            .iter()
            .all(|index| !index.deferred && index.status == IndexStatus::Active));
        proptest::prop_assert_eq!(
            contents(&bulk, &table.items_table),
            contents(&kept, &table.items_table)
        );
        for index in &table.indexes {
            proptest::prop_assert_eq!(
                contents(&bulk, &index.redb_table),
                contents(&kept, &index.redb_table),
                "index {}", index.index.name
            );
        }
        let txn = bulk.db.begin_read().expect("a read transaction");
        let builds = txn.open_table(crate::layout::INDEX_BUILDS).expect("the builds");
        proptest::prop_assert_eq!(builds.iter().expect("builds").count(), 0);
    }
}
