//! Time to Live against a brute-force model.
//!
//! Random puts (with TTL attributes that are Numbers in the past, in the
//! future and more than five years old, strings, binaries, sets, or none),
//! deletes, clock advances and sweeps run on the engine and on a model that
//! keeps items in a map and expires them by integer arithmetic. After every
//! step the table (and its index) equals the model's, so items that expired
//! but were not swept yet are still read; after every sweep the stream
//! holds exactly one REMOVE marked as TTL per item the model expired, and
//! no other step marks a record so. Then the enable/disable rules, the
//! background sweeper and its stop with the engine, and the queue of items
//! by TTL value the sweeper reads: filled from the items, a chunk at a
//! time beside other writes, when TTL is enabled, when a store from before
//! the queue is opened, and on from where a stopped engine left its fill.

use std::collections::BTreeMap;
use std::time::Duration;

use proptest::prelude::*;
use rave_conformance::{by_group, delete, get, key, put, table_definition};
use rave_engine::{
    Clock, Engine, EngineOptions, EventName, ManualClock, TimeToLiveSpecification, TimeToLiveStatus,
};
use rave_store::*;

const TABLE: &str = "expiring";
const ATTRIBUTE: &str = "expires";
/// The clock's start, in whole seconds since the epoch.
const START_SECONDS: i64 = 1_700_000_000;
const FIVE_YEARS_SECONDS: i64 = 5 * 365 * 24 * 60 * 60;

/// What an item's TTL attribute holds.
#[derive(Debug, Clone)]
enum Ttl {
    None,
    /// A Number: the clock's start plus this many half seconds.
    HalfSecondsFromStart(i64),
    Text,
    Binary,
    NumberSet,
}

#[derive(Debug, Clone)]
enum Step {
    Put { key: u8, ttl: Ttl, payload: u8 },
    Delete { key: u8 },
    Advance { seconds: i64 },
    Sweep,
}

fn ttl() -> impl Strategy<Value = Ttl> {
    let half_seconds = |seconds: i64| seconds * 2;
    prop_oneof![
        Just(Ttl::None),
        // Around the clock's reach: it starts at 0 and advances at most
        // days at a time, or five years at once.
        (half_seconds(-3 * 86_400)..half_seconds(3 * 86_400)).prop_map(Ttl::HalfSecondsFromStart),
        // Close to the five-year horizon.
        (half_seconds(-FIVE_YEARS_SECONDS - 86_400)..half_seconds(-FIVE_YEARS_SECONDS + 86_400))
            .prop_map(Ttl::HalfSecondsFromStart),
        Just(Ttl::Text),
        Just(Ttl::Binary),
        Just(Ttl::NumberSet),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0u8..8, ttl(), any::<u8>()).prop_map(|(key, ttl, payload)| Step::Put { key, ttl, payload }),
        1 => (0u8..8).prop_map(|key| Step::Delete { key }),
        2 => prop_oneof![0i64..120, 0i64..2 * 86_400, Just(FIVE_YEARS_SECONDS)]
            .prop_map(|seconds| Step::Advance { seconds }),
        2 => Just(Step::Sweep),
    ]
}

fn pk(key: u8) -> String {
    format!("item{key}")
}

/// The item a put writes: in the table's `byGroup` index too, so TTL's
/// deletions must keep the index in step.
fn item_of(key: u8, ttl: &Ttl, payload: u8) -> Item {
    let mut item = rave_store::item! {
        "PK" => pk(key), "SK" => "s", "GROUP" => "g", "AT" => pk(key), "payload" => i64::from(payload)
    };
    let value = match ttl {
        Ttl::None => None,
        Ttl::HalfSecondsFromStart(half) => {
            let total = START_SECONDS * 2 + half;
            let text = if total % 2 == 0 {
                (total / 2).to_string()
            } else {
                format!("{}.5", total / 2)
            };
            Some(AttributeValue::N(text.parse().expect("a number")))
        }
        Ttl::Text => Some(AttributeValue::S(START_SECONDS.to_string())),
        Ttl::Binary => Some(AttributeValue::B(vec![1, 2])),
        Ttl::NumberSet => Some(AttributeValue::Ns([Number::from(START_SECONDS)].into())),
    };
    if let Some(value) = value {
        item.insert(ATTRIBUTE.into(), value);
    }
    item
}

#[derive(Default)]
struct Model {
    /// Items by key, each with its TTL in half seconds after the start when it is a Number.
    items: BTreeMap<u8, (Item, Option<i64>)>,
    /// Seconds the clock has moved since the start.
    elapsed: i64,
}

impl Model {
    /// DynamoDB's rule in integers: a TTL expires its item once it is
    /// before now, unless it is more than five years before now.
    fn is_expired(&self, ttl: Option<i64>) -> bool {
        let Some(half) = ttl else { return false };
        let now = self.elapsed * 2;
        half < now && half >= now - FIVE_YEARS_SECONDS * 2
    }

    fn sweep(&mut self) -> Vec<Item> {
        let expired: Vec<u8> = self
            .items
            .iter()
            .filter(|(_, (_, ttl))| self.is_expired(*ttl))
            .map(|(k, _)| *k)
            .collect();
        expired
            .into_iter()
            .filter_map(|k| self.items.remove(&k).map(|(item, _)| item))
            .collect()
    }

    fn sorted_items(&self) -> Vec<Item> {
        let mut items: Vec<Item> = self.items.values().map(|(i, _)| i.clone()).collect();
        items.sort_by_key(|i| format!("{:?}", i["PK"]));
        items
    }
}

async fn open(dir: &std::path::Path, clock: &ManualClock) -> Engine {
    let options = EngineOptions {
        clock: Clock::Manual(clock.clone()),
        // Only the test sweeps.
        ttl_sweep_interval: Duration::from_secs(24 * 60 * 60),
        ..EngineOptions::default()
    };
    Engine::open_with(dir, options).unwrap()
}

async fn create_expiring_table(engine: &Engine) {
    engine.create_table(table_definition(TABLE)).await.unwrap();
    set_ttl(engine, ATTRIBUTE, true).await;
}

async fn all_items(engine: &Engine) -> Vec<Item> {
    let mut items = engine.scan(ScanInput::new(TABLE)).await.unwrap().items;
    items.sort_by_key(|i| format!("{:?}", i["PK"]));
    items
}

async fn run(steps: Vec<Step>) -> std::result::Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::starting_at(START_SECONDS as u64 * 1000);
    let engine = open(dir.path(), &clock).await;
    create_expiring_table(&engine).await;
    let mut model = Model::default();
    let mut seen = engine.latest_sequence();
    for step in steps {
        let mut removed_by_model = Vec::new();
        match &step {
            Step::Put { key, ttl, payload } => {
                let item = item_of(*key, ttl, *payload);
                engine.put_item(put(TABLE, item.clone())).await.unwrap();
                let half = match ttl {
                    Ttl::HalfSecondsFromStart(half) => Some(*half),
                    _ => None,
                };
                model.items.insert(*key, (item, half));
            }
            Step::Delete { key: k } => {
                engine
                    .delete_item(delete(TABLE, key(&pk(*k), "s")))
                    .await
                    .unwrap();
                model.items.remove(k);
            }
            Step::Advance { seconds } => {
                clock.advance(Duration::from_secs(*seconds as u64));
                model.elapsed += seconds;
            }
            Step::Sweep => {
                let deleted = engine.sweep_expired().await.unwrap();
                removed_by_model = model.sweep();
                prop_assert_eq!(deleted as usize, removed_by_model.len());
            }
        }

        // The table, and its index, hold exactly the model's items:
        // expired items not swept yet among them.
        let expected = model.sorted_items();
        prop_assert_eq!(&all_items(&engine).await, &expected, "after {:?}", step);
        let mut indexed = engine.query(by_group(TABLE, "g")).await.unwrap().items;
        indexed.sort_by_key(|i| format!("{:?}", i["PK"]));
        prop_assert_eq!(&indexed, &expected);
        for (k, (item, ttl)) in &model.items {
            if model.is_expired(*ttl) {
                let read = engine
                    .get_item(get(TABLE, key(&pk(*k), "s")))
                    .await
                    .unwrap();
                prop_assert_eq!(read.item.as_ref(), Some(item));
            }
        }

        // Exactly one REMOVE marked as TTL per item the model expired.
        let records = engine.read_stream(TABLE, seen, 10_000).unwrap();
        seen = records.last().map_or(seen, |r| r.sequence);
        let mut by_ttl: Vec<Item> = Vec::new();
        for record in records {
            if record.removed_by_ttl {
                prop_assert_eq!(record.event, EventName::Remove);
                prop_assert!(record.new_image.is_none());
                by_ttl.extend(record.old_image);
            } else {
                prop_assert!(
                    !matches!(step, Step::Sweep),
                    "a sweep wrote a record not marked as TTL"
                );
            }
        }
        by_ttl.sort_by_key(|i| format!("{:?}", i["PK"]));
        removed_by_model.sort_by_key(|i| format!("{:?}", i["PK"]));
        prop_assert_eq!(by_ttl, removed_by_model);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn time_to_live_matches_the_model(steps in proptest::collection::vec(step(), 1..40)) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(run(steps))?;
    }
}

#[tokio::test]
async fn enabling_and_disabling_follow_dynamodbs_rules_and_persist() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::starting_at(START_SECONDS as u64 * 1000);
    let engine = open(dir.path(), &clock).await;
    engine.create_table(table_definition(TABLE)).await.unwrap();
    let spec = |name: &str, enabled| TimeToLiveSpecification {
        attribute_name: name.into(),
        enabled,
    };
    let described = engine.describe_time_to_live(TABLE).unwrap();
    assert_eq!(described.status, TimeToLiveStatus::Disabled);
    assert_eq!(described.attribute_name, None);
    assert!(matches!(
        engine
            .update_time_to_live(TABLE, spec(ATTRIBUTE, false))
            .await,
        Err(StoreError::Validation(_))
    ));
    engine
        .update_time_to_live(TABLE, spec(ATTRIBUTE, true))
        .await
        .unwrap();
    for refused in [
        spec(ATTRIBUTE, true),
        spec("other", true),
        spec("other", false),
    ] {
        assert!(matches!(
            engine.update_time_to_live(TABLE, refused).await,
            Err(StoreError::Validation(_))
        ));
    }
    assert!(matches!(
        engine
            .update_time_to_live("missing", spec(ATTRIBUTE, true))
            .await,
        Err(StoreError::ResourceNotFound(_))
    ));
    drop(engine);

    let engine = open(dir.path(), &clock).await;
    let described = engine.describe_time_to_live(TABLE).unwrap();
    assert_eq!(described.status, TimeToLiveStatus::Enabled);
    assert_eq!(described.attribute_name.as_deref(), Some(ATTRIBUTE));
    assert_eq!(
        engine
            .describe_table(TABLE)
            .await
            .unwrap()
            .time_to_live_attribute
            .as_deref(),
        Some(ATTRIBUTE)
    );
    // Changing the attribute is a disable, then an enable.
    engine
        .update_time_to_live(TABLE, spec(ATTRIBUTE, false))
        .await
        .unwrap();
    engine
        .update_time_to_live(TABLE, spec("other", true))
        .await
        .unwrap();
    assert_eq!(
        engine
            .describe_time_to_live(TABLE)
            .unwrap()
            .attribute_name
            .as_deref(),
        Some("other")
    );
}

#[tokio::test]
async fn disabled_ttl_deletes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::starting_at(START_SECONDS as u64 * 1000);
    let engine = open(dir.path(), &clock).await;
    engine.create_table(table_definition(TABLE)).await.unwrap();
    let item = item_of(1, &Ttl::HalfSecondsFromStart(-10), 0);
    engine.put_item(put(TABLE, item.clone())).await.unwrap();
    assert_eq!(engine.sweep_expired().await.unwrap(), 0);
    assert_eq!(all_items(&engine).await, vec![item]);
}

#[tokio::test]
async fn the_background_sweeper_deletes_and_stops_with_the_engine() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::starting_at(START_SECONDS as u64 * 1000);
    let options = EngineOptions {
        clock: Clock::Manual(clock.clone()),
        ttl_sweep_interval: Duration::from_millis(20),
        ..EngineOptions::default()
    };
    let engine = Engine::open_with(dir.path(), options.clone()).unwrap();
    create_expiring_table(&engine).await;
    let expiring = item_of(1, &Ttl::HalfSecondsFromStart(20), 0);
    let lasting = item_of(2, &Ttl::HalfSecondsFromStart(7200), 0);
    for item in [&expiring, &lasting] {
        engine.put_item(put(TABLE, item.clone())).await.unwrap();
    }
    // Not expired yet: several sweeps pass and it stays.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(all_items(&engine).await.len(), 2);

    clock.advance(Duration::from_secs(11));
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while all_items(&engine).await.len() != 1 {
        assert!(
            std::time::Instant::now() < deadline,
            "the sweeper did not delete the expired item"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(all_items(&engine).await, vec![lasting]);

    // Dropping the engine stops the sweeper and the writer and closes the
    // file: opening it again would fail while either still held it.
    drop(engine);
    let reopened = Engine::open_with(dir.path(), options).unwrap();
    assert_eq!(
        reopened.describe_time_to_live(TABLE).unwrap().status,
        TimeToLiveStatus::Enabled
    );
}

#[tokio::test]
async fn items_stored_before_ttl_is_enabled_expire_once_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::starting_at(START_SECONDS as u64 * 1000);
    let engine = open(dir.path(), &clock).await;
    engine.create_table(table_definition(TABLE)).await.unwrap();
    let expired = item_of(1, &Ttl::HalfSecondsFromStart(-10), 0);
    let lasting = item_of(2, &Ttl::HalfSecondsFromStart(7200), 0);
    // Expired by another attribute, which TTL is moved to below.
    let mut expired_by_other = item_of(3, &Ttl::None, 0);
    expired_by_other.insert(
        "other".into(),
        AttributeValue::N((START_SECONDS - 5).into()),
    );
    for item in [&expired, &lasting, &expired_by_other] {
        engine.put_item(put(TABLE, item.clone())).await.unwrap();
    }
    set_ttl(&engine, ATTRIBUTE, true).await;
    wait_until_enabled(&engine).await;
    assert_eq!(engine.sweep_expired().await.unwrap(), 1);
    assert_eq!(
        all_items(&engine).await,
        vec![lasting.clone(), expired_by_other]
    );

    set_ttl(&engine, ATTRIBUTE, false).await;
    set_ttl(&engine, "other", true).await;
    wait_until_enabled(&engine).await;
    assert_eq!(engine.sweep_expired().await.unwrap(), 1);
    assert_eq!(all_items(&engine).await, vec![lasting]);
}

#[tokio::test]
async fn a_store_from_before_the_ttl_queue_has_it_filled_when_opened() {
    // The file as a rave that kept no queue left it.
    expire_after_reopening(|txn| {
        let queue: redb::TableDefinition<&[u8], &[u8]> =
            redb::TableDefinition::new("expiries/expiring");
        assert!(txn.delete_table(queue).unwrap(), "the queue was kept");
    })
    .await;
}

#[tokio::test]
async fn a_fill_a_stopped_engine_left_unfinished_goes_on_when_it_opens() {
    // The file as an engine stopped before its fill's first chunk left it:
    // the fill's record, and a queue without the items' entries.
    expire_after_reopening(|txn| {
        let queue: redb::TableDefinition<&[u8], &[u8]> =
            redb::TableDefinition::new("expiries/expiring");
        txn.open_table(queue).unwrap().retain(|_, _| false).unwrap();
        let fills: redb::TableDefinition<&str, &[u8]> = redb::TableDefinition::new("expiry_fills");
        txn.open_table(fills)
            .unwrap()
            .insert(TABLE, [].as_slice())
            .unwrap();
    })
    .await;
}

/// Stores an expired and a lasting item under TTL, changes the file with
/// `change` while no engine has it open, and checks that the next engine
/// expires the one item once its queue is filled.
async fn expire_after_reopening(change: impl FnOnce(&redb::WriteTransaction)) {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::starting_at(START_SECONDS as u64 * 1000);
    let engine = open(dir.path(), &clock).await;
    create_expiring_table(&engine).await;
    let expired = item_of(1, &Ttl::HalfSecondsFromStart(-10), 0);
    let lasting = item_of(2, &Ttl::HalfSecondsFromStart(7200), 0);
    for item in [&expired, &lasting] {
        engine.put_item(put(TABLE, item.clone())).await.unwrap();
    }
    drop(engine);
    {
        let db = redb::Database::open(dir.path().join(rave_engine::DATABASE_FILE)).unwrap();
        let txn = db.begin_write().unwrap();
        change(&txn);
        txn.commit().unwrap();
    }
    let engine = open(dir.path(), &clock).await;
    wait_until_enabled(&engine).await;
    assert_eq!(engine.sweep_expired().await.unwrap(), 1);
    assert_eq!(all_items(&engine).await, vec![lasting]);
}

#[tokio::test]
async fn a_fill_of_many_chunks_queues_every_item_and_the_writes_made_meanwhile() {
    // More items than three of the fill's chunks (5,000 items each).
    const ITEMS: u32 = 16_000;
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::starting_at(START_SECONDS as u64 * 1000);
    let engine = open(dir.path(), &clock).await;
    engine.create_table(table_definition(TABLE)).await.unwrap();
    let item = |n: u32, expires: i64| {
        rave_store::item! {
            "PK" => format!("many{n}"), "SK" => "s", "GROUP" => "g", "AT" => format!("many{n}"),
            ATTRIBUTE => expires
        }
    };
    let (past, future) = (START_SECONDS - 10, START_SECONDS + 3600);
    // Every third item has expired.
    let expires = |n: u32| if n.is_multiple_of(3) { past } else { future };
    // Batches sent side by side, so that the writer commits many at once.
    let mut batches = tokio::task::JoinSet::new();
    for first in (0..ITEMS).step_by(25) {
        let engine = engine.clone();
        let requests = (first..(first + 25).min(ITEMS))
            .map(|n| (TABLE.to_owned(), WriteRequest::Put(item(n, expires(n)))))
            .collect();
        batches.spawn(async move {
            engine
                .batch_write_item(BatchWriteItemInput { requests })
                .await
        });
    }
    while let Some(written) = batches.join_next().await {
        assert!(written.unwrap().unwrap().unprocessed.is_empty());
    }

    set_ttl(&engine, ATTRIBUTE, true).await;
    // While the queue fills (before, between or after its chunks): an
    // expired item deleted, a lasting one made expired, an expired one
    // made lasting, and a new expired one.
    engine
        .delete_item(delete(TABLE, key("many0", "s")))
        .await
        .unwrap();
    engine.put_item(put(TABLE, item(1, past))).await.unwrap();
    engine.put_item(put(TABLE, item(3, future))).await.unwrap();
    engine
        .put_item(put(TABLE, item(ITEMS, past)))
        .await
        .unwrap();
    wait_until_enabled(&engine).await;

    // Items 0 and 3 no longer expire; items 1 and ITEMS do.
    let expected = (0..ITEMS).filter(|n| n.is_multiple_of(3)).count() as u64 - 2 + 2;
    assert_eq!(engine.sweep_expired().await.unwrap(), expected);
    assert_eq!(engine.sweep_expired().await.unwrap(), 0);
    let left = all_items(&engine).await;
    // One item more (ITEMS) and one deleted (0): ITEMS items before the sweep.
    assert_eq!(left.len() as u64, u64::from(ITEMS) - expected);
    assert!(
        left.iter()
            .all(|item| item[ATTRIBUTE] == AttributeValue::N(future.into()))
    );
}

/// Waits until the table's TTL queue has been filled from its items
/// (DescribeTimeToLive says ENABLED).
async fn wait_until_enabled(engine: &Engine) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while engine.describe_time_to_live(TABLE).unwrap().status != TimeToLiveStatus::Enabled {
        assert!(
            std::time::Instant::now() < deadline,
            "the TTL queue was never filled"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

async fn set_ttl(engine: &Engine, attribute: &str, enabled: bool) {
    engine
        .update_time_to_live(
            TABLE,
            TimeToLiveSpecification {
                attribute_name: attribute.into(),
                enabled,
            },
        )
        .await
        .unwrap();
}
