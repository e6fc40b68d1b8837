//! Item collections: the size of each partition key value's items and
//! their local secondary index entries, kept by every write in its commit,
//! reported with the write and limited (DynamoDB's 10 GB, made small here
//! through `EngineOptions::max_item_collection_bytes`).
//!
//! Sizes are computed by hand with string attributes only: an attribute
//! costs its name's bytes plus its value's.

use rave_engine::{Engine, EngineOptions, ItemCollectionSize};
use rave_store::*;

const TABLE: &str = "threads";
const PLAIN: &str = "plain";

/// A table whose local index `byRank` projects `note` as well as the keys.
fn definition() -> TableDefinition {
    TableDefinition {
        name: TABLE.into(),
        key_schema: KeySchema::new(
            KeyAttribute::new("PK", KeyType::S),
            Some(KeyAttribute::new("SK", KeyType::S)),
        ),
        global_secondary_indexes: Vec::new(),
        stream_enabled: false,
        time_to_live_attribute: None,
        local_secondary_indexes: vec![LocalSecondaryIndex {
            name: "byRank".into(),
            sort_key: KeyAttribute::new("rank", KeyType::S),
            projection: Projection::Include(vec!["note".into()]),
        }],
    }
}

fn plain_definition() -> TableDefinition {
    TableDefinition {
        name: PLAIN.into(),
        local_secondary_indexes: Vec::new(),
        ..definition()
    }
}

async fn open(dir: &std::path::Path, limit: u64) -> Engine {
    let options = EngineOptions {
        max_item_collection_bytes: limit,
        ..EngineOptions::default()
    };
    Engine::open_with(dir, options).unwrap()
}

/// PK 3 + SK 3 + rank 6 + note 9 + other 8 = 29 bytes; its index entry
/// (keys and note) 21: 50 for the collection.
fn item_a() -> Item {
    item! {"PK" => "p", "SK" => "a", "rank" => "r1", "note" => "hello", "other" => "xyz"}
}

/// PK 3 + SK 3 + other 10 = 16 bytes, and no index entry (no `rank`).
fn item_b() -> Item {
    item! {"PK" => "p", "SK" => "b", "other" => "12345"}
}

fn put(item: Item) -> PutItemInput {
    PutItemInput {
        table: TABLE.into(),
        item,
        condition: None,
        return_values: ReturnValues::None,
    }
}

fn key(pk: &str, sk: &str) -> Item {
    item! {"PK" => pk, "SK" => sk}
}

fn delete(pk: &str, sk: &str) -> DeleteItemInput {
    DeleteItemInput {
        table: TABLE.into(),
        key: key(pk, sk),
        condition: None,
        return_values: ReturnValues::None,
    }
}

fn remove_note() -> UpdateItemInput {
    UpdateItemInput {
        table: TABLE.into(),
        key: key("p", "a"),
        update: Update::new().remove("note"),
        condition: None,
        return_values: ReturnValues::None,
    }
}

fn size(pk: &str, bytes: u64) -> ItemCollectionSize {
    ItemCollectionSize {
        table: TABLE.into(),
        key: item! {"PK" => pk},
        bytes,
    }
}

const NONE: ReturnValuesOnConditionCheckFailure = ReturnValuesOnConditionCheckFailure::None;

#[tokio::test]
async fn every_write_reports_its_collection_at_its_size_after_the_write() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path(), rave_engine::MAX_ITEM_COLLECTION_BYTES).await;
    engine.create_table(definition()).await.unwrap();
    engine.create_table(plain_definition()).await.unwrap();

    let written = engine.put_item_with(put(item_a()), NONE).await.unwrap();
    assert_eq!(written.item_collections, [size("p", 50)]);
    let written = engine.put_item_with(put(item_b()), NONE).await.unwrap();
    assert_eq!(written.item_collections, [size("p", 66)]);
    // Writing the same item again changes nothing.
    let written = engine.put_item_with(put(item_b()), NONE).await.unwrap();
    assert_eq!(written.item_collections, [size("p", 66)]);
    // Without `note`: 20 bytes of item, 12 of index entry.
    let written = engine.update_item_with(remove_note(), NONE).await.unwrap();
    assert_eq!(written.item_collections, [size("p", 48)]);
    let written = engine
        .delete_item_with(delete("p", "b"), NONE)
        .await
        .unwrap();
    assert_eq!(written.item_collections, [size("p", 32)]);
    // A key without an item still names its collection.
    let written = engine
        .delete_item_with(delete("q", "a"), NONE)
        .await
        .unwrap();
    assert_eq!(written.item_collections, [size("q", 0)]);

    // 6 bytes each, one collection reported once.
    let requests = vec![
        (TABLE.into(), WriteRequest::Put(key("p", "c"))),
        (TABLE.into(), WriteRequest::Put(key("q", "a"))),
        (TABLE.into(), WriteRequest::Put(key("p", "d"))),
        (PLAIN.into(), WriteRequest::Put(key("p", "a"))),
    ];
    let written = engine
        .batch_write_item_with(BatchWriteItemInput { requests })
        .await
        .unwrap();
    assert_eq!(written.item_collections, [size("p", 44), size("q", 6)]);

    let actions = vec![
        TransactWriteAction::Delete {
            table: TABLE.into(),
            key: key("q", "a"),
            condition: None,
        },
        TransactWriteAction::ConditionCheck {
            table: TABLE.into(),
            key: key("r", "a"),
            condition: Condition::not_exists("PK"),
        },
        TransactWriteAction::Put {
            table: PLAIN.into(),
            item: key("q", "a"),
            condition: None,
        },
    ];
    let written = engine
        .transact_write_items_with(TransactWriteItemsInput { actions }, Vec::new())
        .await
        .unwrap();
    assert_eq!(written.item_collections, [size("q", 0)]);

    // A table without local secondary indexes has no item collections.
    let plain = PutItemInput {
        table: PLAIN.into(),
        ..put(item_a())
    };
    let written = engine.put_item_with(plain, NONE).await.unwrap();
    assert!(written.item_collections.is_empty());
}

#[tokio::test]
async fn a_write_past_the_limit_fails_and_changes_nothing_while_shrinking_is_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path(), 60).await;
    engine.create_table(definition()).await.unwrap();
    engine.put_item_with(put(item_a()), NONE).await.unwrap();

    // 50 + 16 > 60.
    let refused = engine.put_item_with(put(item_b()), NONE).await.unwrap_err();
    assert!(
        matches!(
            refused.error,
            StoreError::ItemCollectionSizeLimitExceeded(_)
        ),
        "{refused:?}"
    );
    let read = engine
        .get_item(GetItemInput {
            table: TABLE.into(),
            key: key("p", "b"),
            consistent_read: true,
        })
        .await
        .unwrap();
    assert_eq!(read.item, None);
    // Another collection is not concerned.
    let other = engine
        .put_item_with(
            put(item! {"PK" => "q", "SK" => "b", "other" => "12345"}),
            NONE,
        )
        .await
        .unwrap();
    assert_eq!(other.item_collections, [size("q", 16)]);

    // A batch is refused whole: its second put alone fits, not both.
    let requests = vec![
        (TABLE.into(), WriteRequest::Put(key("q", "c"))),
        (TABLE.into(), WriteRequest::Put(key("p", "c"))),
        (TABLE.into(), WriteRequest::Put(key("p", "d"))),
    ];
    let refused = engine
        .batch_write_item_with(BatchWriteItemInput { requests })
        .await
        .unwrap_err();
    assert!(
        matches!(refused, StoreError::ItemCollectionSizeLimitExceeded(_)),
        "{refused:?}"
    );
    // The transaction names the action that would overflow.
    let actions = vec![
        TransactWriteAction::Put {
            table: TABLE.into(),
            item: key("q", "c"),
            condition: None,
        },
        TransactWriteAction::Put {
            table: TABLE.into(),
            item: item_b(),
            condition: None,
        },
    ];
    let refused = engine
        .transact_write_items_with(TransactWriteItemsInput { actions }, Vec::new())
        .await
        .unwrap_err();
    assert_eq!(
        refused.error,
        StoreError::TransactionCanceled(vec![
            CancellationReason::None,
            CancellationReason::ItemCollectionSizeLimitExceeded,
        ])
    );
    let written = engine
        .put_item_with(put(key("p", "c")), NONE)
        .await
        .unwrap();
    assert_eq!(written.item_collections, [size("p", 56)]);
    drop(engine);

    // The sizes survive a restart; under a smaller limit the collection is
    // over it: growing it fails, shrinking it does not.
    let engine = open(dir.path(), 40).await;
    let refused = engine
        .put_item_with(put(key("p", "d")), NONE)
        .await
        .unwrap_err();
    assert!(
        matches!(
            refused.error,
            StoreError::ItemCollectionSizeLimitExceeded(_)
        ),
        "{refused:?}"
    );
    let written = engine.update_item_with(remove_note(), NONE).await.unwrap();
    assert_eq!(written.item_collections, [size("p", 38)]);
    let written = engine
        .delete_item_with(delete("p", "c"), NONE)
        .await
        .unwrap();
    assert_eq!(written.item_collections, [size("p", 32)]);
    let written = engine
        .put_item_with(put(key("p", "d")), NONE)
        .await
        .unwrap();
    assert_eq!(written.item_collections, [size("p", 38)]);
    let written = engine
        .delete_item_with(delete("p", "a"), NONE)
        .await
        .unwrap();
    assert_eq!(written.item_collections, [size("p", 6)]);
}

#[tokio::test]
async fn a_deleted_table_takes_its_collections_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path(), rave_engine::MAX_ITEM_COLLECTION_BYTES).await;
    engine.create_table(definition()).await.unwrap();
    engine.put_item_with(put(item_a()), NONE).await.unwrap();
    engine.delete_table(TABLE).await.unwrap();
    engine.create_table(definition()).await.unwrap();
    let written = engine.put_item_with(put(item_b()), NONE).await.unwrap();
    assert_eq!(written.item_collections, [size("p", 16)]);
}
