//! Behaviour of the embedded engine, operation by operation, with
//! hand-computed capacity figures and the documented error kinds.

use rave_engine::{Checkpoint, Engine, EngineOptions, EventName, StartPosition};
use rave_store::*;

fn table_definition() -> TableDefinition {
    TableDefinition {
        name: "things".into(),
        key_schema: KeySchema::new(
            KeyAttribute::new("PK", KeyType::S),
            Some(KeyAttribute::new("SK", KeyType::S)),
        ),
        global_secondary_indexes: vec![
            GlobalSecondaryIndex {
                name: "byGroup".into(),
                key_schema: KeySchema::new(
                    KeyAttribute::new("GROUP", KeyType::S),
                    Some(KeyAttribute::new("AT", KeyType::S)),
                ),
                projection: Projection::All,
            },
            GlobalSecondaryIndex {
                name: "byScore".into(),
                key_schema: KeySchema::new(
                    KeyAttribute::new("KIND", KeyType::S),
                    Some(KeyAttribute::new("SCORE", KeyType::N)),
                ),
                projection: Projection::KeysOnly,
            },
            GlobalSecondaryIndex {
                name: "byTag".into(),
                key_schema: KeySchema::new(KeyAttribute::new("TAG", KeyType::B), None),
                projection: Projection::Include(vec!["note".into()]),
            },
        ],
        stream_enabled: true,
    }
}

async fn open() -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path()).unwrap();
    engine.create_table(table_definition()).await.unwrap();
    (dir, engine)
}

fn key(pk: &str, sk: &str) -> Item {
    item! {"PK" => pk, "SK" => sk}
}

fn put(item: Item) -> PutItemInput {
    PutItemInput {
        table: "things".into(),
        item,
        condition: None,
        return_values: ReturnValues::None,
    }
}

fn get(key: Item) -> GetItemInput {
    GetItemInput {
        table: "things".into(),
        key,
        consistent_read: true,
    }
}

fn update(key: Item, update: Update) -> UpdateItemInput {
    UpdateItemInput {
        table: "things".into(),
        key,
        update,
        condition: None,
        return_values: ReturnValues::AllNew,
    }
}

fn delete(key: Item) -> DeleteItemInput {
    DeleteItemInput {
        table: "things".into(),
        key,
        condition: None,
        return_values: ReturnValues::AllOld,
    }
}

fn by_group(group: &str) -> QueryInput {
    QueryInput::new(
        "things",
        Some("byGroup"),
        KeyCondition::partition("GROUP", group),
    )
}

fn assert_validation<T: std::fmt::Debug>(result: Result<T>, needle: &str) {
    match result {
        Err(StoreError::Validation(msg)) => {
            assert!(msg.contains(needle), "{msg:?} does not mention {needle:?}")
        }
        other => panic!("expected a validation error mentioning {needle:?}, got {other:?}"),
    }
}

#[tokio::test]
async fn put_get_update_delete_round_trip() {
    let (_dir, engine) = open().await;
    let item = item! {"PK" => "a", "SK" => "1", "note" => "hello", "n" => 1i64};
    engine.put_item(put(item.clone())).await.unwrap();
    assert_eq!(
        engine.get_item(get(key("a", "1"))).await.unwrap().item,
        Some(item)
    );

    let out = engine
        .update_item(update(
            key("a", "1"),
            Update::new().add("n", 41i64).set_value("extra", true),
        ))
        .await
        .unwrap();
    let new = out.attributes.unwrap();
    assert_eq!(new["n"], AttributeValue::from(42i64));
    assert_eq!(new["extra"], AttributeValue::Bool(true));

    let out = engine.delete_item(delete(key("a", "1"))).await.unwrap();
    assert_eq!(out.attributes, Some(new));
    assert_eq!(
        engine.get_item(get(key("a", "1"))).await.unwrap().item,
        None
    );
    // Deleting what is not there is fine and returns nothing.
    assert_eq!(
        engine
            .delete_item(delete(key("a", "1")))
            .await
            .unwrap()
            .attributes,
        None
    );
}

#[tokio::test]
async fn update_creates_missing_items_and_refuses_key_changes() {
    let (_dir, engine) = open().await;
    let out = engine
        .update_item(update(key("new", "1"), Update::new().set_value("x", 1i64)))
        .await
        .unwrap();
    assert_eq!(
        out.attributes,
        Some(item! {"PK" => "new", "SK" => "1", "x" => 1i64})
    );
    assert_validation(
        engine
            .update_item(update(key("new", "1"), Update::new().set_value("SK", "2")))
            .await,
        "part of the key",
    );
}

#[tokio::test]
async fn conditions_guard_writes() {
    let (_dir, engine) = open().await;
    let mut first = put(item! {"PK" => "c", "SK" => "1", "v" => 1i64});
    first.condition = Some(Condition::not_exists("PK"));
    engine.put_item(first.clone()).await.unwrap();
    assert_eq!(
        engine.put_item(first).await,
        Err(StoreError::ConditionalCheckFailed)
    );

    let mut guarded = update(key("c", "1"), Update::new().set_value("v", 2i64));
    guarded.condition = Some(Condition::eq("v", 5i64));
    assert_eq!(
        engine.update_item(guarded.clone()).await,
        Err(StoreError::ConditionalCheckFailed)
    );
    guarded.condition = Some(Condition::eq("v", 1i64));
    engine.update_item(guarded).await.unwrap();

    let mut guarded_delete = delete(key("c", "1"));
    guarded_delete.condition = Some(Condition::exists("missing"));
    assert_eq!(
        engine.delete_item(guarded_delete).await,
        Err(StoreError::ConditionalCheckFailed)
    );
    assert!(
        engine
            .get_item(get(key("c", "1")))
            .await
            .unwrap()
            .item
            .is_some()
    );
}

#[tokio::test]
async fn indexes_are_sparse_and_follow_changes() {
    let (_dir, engine) = open().await;
    for (sk, group, at) in [
        ("1", Some("g"), "2026-01"),
        ("2", Some("g"), "2026-03"),
        ("3", None, "2026-02"),
    ] {
        let mut item = item! {"PK" => "p", "SK" => sk, "AT" => at};
        if let Some(group) = group {
            item.insert("GROUP".into(), group.into());
        }
        engine.put_item(put(item)).await.unwrap();
    }
    let page = engine.query(by_group("g")).await.unwrap();
    let sks: Vec<_> = page.items.iter().map(|i| i["SK"].clone()).collect();
    assert_eq!(
        sks,
        vec![AttributeValue::from("1"), AttributeValue::from("2")],
        "only items with GROUP, by AT"
    );

    // Moving an item into the index, changing its sort key, and dropping it out.
    engine
        .update_item(update(key("p", "3"), Update::new().set_value("GROUP", "g")))
        .await
        .unwrap();
    engine
        .update_item(update(
            key("p", "1"),
            Update::new().set_value("AT", "2026-09"),
        ))
        .await
        .unwrap();
    engine
        .update_item(update(key("p", "2"), Update::new().remove("GROUP")))
        .await
        .unwrap();
    let page = engine.query(by_group("g")).await.unwrap();
    let sks: Vec<_> = page.items.iter().map(|i| i["SK"].clone()).collect();
    assert_eq!(
        sks,
        vec![AttributeValue::from("3"), AttributeValue::from("1")]
    );
}

#[tokio::test]
async fn projections_copy_what_they_promise() {
    let (_dir, engine) = open().await;
    let item = item! {
        "PK" => "p", "SK" => "1", "KIND" => "k", "SCORE" => 7i64,
        "TAG" => AttributeValue::B(vec![1, 2]), "note" => "kept", "other" => "dropped",
    };
    engine.put_item(put(item)).await.unwrap();
    let keys_only = engine
        .query(QueryInput::new(
            "things",
            Some("byScore"),
            KeyCondition::partition("KIND", "k"),
        ))
        .await
        .unwrap();
    assert_eq!(
        keys_only.items,
        vec![item! {"PK" => "p", "SK" => "1", "KIND" => "k", "SCORE" => 7i64}]
    );
    let include = engine
        .query(QueryInput::new(
            "things",
            Some("byTag"),
            KeyCondition::partition("TAG", AttributeValue::B(vec![1, 2])),
        ))
        .await
        .unwrap();
    assert_eq!(
        include.items,
        vec![
            item! {"PK" => "p", "SK" => "1", "TAG" => AttributeValue::B(vec![1, 2]), "note" => "kept"}
        ]
    );
}

#[tokio::test]
async fn numeric_sort_keys_order_numerically() {
    let (_dir, engine) = open().await;
    for (i, score) in ["-10", "-9.5", "0", "2", "10", "1e3", "0.001"]
        .iter()
        .enumerate()
    {
        let score: Number = score.parse().unwrap();
        engine
            .put_item(put(
                item! {"PK" => "s", "SK" => i.to_string(), "KIND" => "k", "SCORE" => score},
            ))
            .await
            .unwrap();
    }
    let mut query = QueryInput::new(
        "things",
        Some("byScore"),
        KeyCondition::partition("KIND", "k"),
    );
    query.scan_index_forward = false;
    let page = engine.query(query).await.unwrap();
    let scores: Vec<String> = page
        .items
        .iter()
        .map(|i| i["SCORE"].as_n().unwrap().to_string())
        .collect();
    assert_eq!(scores, ["1000", "10", "2", "0.001", "0", "-9.5", "-10"]);

    let ranged = QueryInput::new(
        "things",
        Some("byScore"),
        KeyCondition::partition("KIND", "k").with_sort(
            "SCORE",
            SortOp::Between((-9.5f64 as i64).into(), 2i64.into()),
        ),
    );
    let page = engine.query(ranged).await.unwrap();
    assert_eq!(
        page.items.len(),
        3,
        "-9, 0, 0.001 and 2 fall in [-9, 2] except -9.5: {:?}",
        page.items
    );
}

#[tokio::test]
async fn pagination_with_limits_and_start_keys() {
    let (_dir, engine) = open().await;
    for i in 0..25 {
        engine
            .put_item(put(item! {"PK" => "pg", "SK" => format!("{i:02}"), "GROUP" => "g", "AT" => format!("{:02}", i % 5)}))
            .await
            .unwrap();
    }
    for forward in [true, false] {
        let mut seen = Vec::new();
        let mut start = None;
        loop {
            let mut query = by_group("g");
            query.limit = Some(7);
            query.scan_index_forward = forward;
            query.exclusive_start_key = start.take();
            let page = engine.query(query).await.unwrap();
            seen.extend(page.items.iter().map(|i| {
                (
                    i["AT"].as_s().unwrap().to_owned(),
                    i["SK"].as_s().unwrap().to_owned(),
                )
            }));
            match page.last_evaluated_key {
                Some(lek) => {
                    assert_eq!(lek.len(), 4, "index and table keys: {lek:?}");
                    start = Some(lek);
                }
                None => break,
            }
        }
        let mut expected = seen.clone();
        expected.sort();
        if !forward {
            expected.reverse();
        }
        assert_eq!(seen.len(), 25);
        assert_eq!(seen, expected);
    }
}

#[tokio::test]
async fn filters_apply_after_limit_and_are_still_charged() {
    let (_dir, engine) = open().await;
    for i in 0..10i64 {
        engine
            .put_item(put(
                item! {"PK" => "f", "SK" => format!("{i}"), "even" => i % 2 == 0},
            ))
            .await
            .unwrap();
    }
    let mut query = QueryInput::new("things", None, KeyCondition::partition("PK", "f"));
    query.limit = Some(4);
    query.filter = Some(Condition::eq("even", true));
    let page = engine.query(query).await.unwrap();
    assert_eq!(page.scanned_count, 4);
    assert_eq!(page.items.len(), 2);
    assert!(page.last_evaluated_key.is_some());
}

#[tokio::test]
async fn parallel_scan_segments_partition_the_table() {
    let (_dir, engine) = open().await;
    for i in 0..200 {
        engine
            .put_item(put(item! {"PK" => format!("p{i}"), "SK" => "x"}))
            .await
            .unwrap();
    }
    let mut all = Vec::new();
    for segment in 0..4 {
        let mut start = None;
        loop {
            let mut scan = ScanInput::new("things");
            scan.segment = Some(Segment {
                segment,
                total_segments: 4,
            });
            scan.limit = Some(30);
            scan.exclusive_start_key = start.take();
            let page = engine.scan(scan).await.unwrap();
            all.extend(page.items.into_iter().map(|i| i["PK"].clone()));
            match page.last_evaluated_key {
                Some(k) => start = Some(k),
                None => break,
            }
        }
    }
    all.sort_by_key(|v| v.as_s().unwrap().to_owned());
    all.dedup();
    assert_eq!(all.len(), 200);
}

#[tokio::test]
async fn batch_operations() {
    let (_dir, engine) = open().await;
    let requests = (0..25)
        .map(|i| {
            (
                "things".to_string(),
                WriteRequest::Put(item! {"PK" => "b", "SK" => format!("{i}")}),
            )
        })
        .collect();
    engine
        .batch_write_item(BatchWriteItemInput { requests })
        .await
        .unwrap();
    let keys: Vec<Item> = (0..30).map(|i| key("b", &i.to_string())).collect();
    let out = engine
        .batch_get_item(BatchGetItemInput {
            requests: vec![TableKeys {
                table: "things".into(),
                keys,
                consistent_read: true,
            }],
        })
        .await
        .unwrap();
    assert_eq!(out.responses[0].1.len(), 25);
    // Each key is charged a whole unit, found or not.
    assert_eq!(out.consumed[0].read_units, 30.0);

    let too_many = (0..26)
        .map(|i| {
            (
                "things".to_string(),
                WriteRequest::Delete(key("b", &i.to_string())),
            )
        })
        .collect();
    assert_validation(
        engine
            .batch_write_item(BatchWriteItemInput { requests: too_many })
            .await,
        "Too many items",
    );
    let duplicates = vec![
        ("things".to_string(), WriteRequest::Delete(key("b", "1"))),
        ("things".to_string(), WriteRequest::Put(key("b", "1"))),
    ];
    assert_validation(
        engine
            .batch_write_item(BatchWriteItemInput {
                requests: duplicates,
            })
            .await,
        "duplicates",
    );
}

#[tokio::test]
async fn transactions_are_all_or_nothing() {
    let (_dir, engine) = open().await;
    engine
        .put_item(put(item! {"PK" => "t", "SK" => "1", "n" => 1i64}))
        .await
        .unwrap();
    let actions = vec![
        TransactWriteAction::Put {
            table: "things".into(),
            item: item! {"PK" => "t", "SK" => "2"},
            condition: None,
        },
        TransactWriteAction::Update {
            table: "things".into(),
            key: key("t", "1"),
            update: Update::new().add("n", 1i64),
            condition: Some(Condition::eq("n", 99i64)),
        },
    ];
    let result = engine
        .transact_write_items(TransactWriteItemsInput { actions })
        .await;
    assert_eq!(
        result,
        Err(StoreError::TransactionCanceled(vec![
            CancellationReason::None,
            CancellationReason::ConditionalCheckFailed
        ]))
    );
    assert_eq!(
        engine.get_item(get(key("t", "2"))).await.unwrap().item,
        None,
        "nothing applied"
    );

    let actions = vec![
        TransactWriteAction::Put {
            table: "things".into(),
            item: item! {"PK" => "t", "SK" => "2"},
            condition: None,
        },
        TransactWriteAction::Update {
            table: "things".into(),
            key: key("t", "1"),
            update: Update::new().add("n", 1i64),
            condition: Some(Condition::eq("n", 1i64)),
        },
        TransactWriteAction::ConditionCheck {
            table: "things".into(),
            key: key("t", "3"),
            condition: Condition::not_exists("PK"),
        },
    ];
    let out = engine
        .transact_write_items(TransactWriteItemsInput { actions })
        .await
        .unwrap();
    // Put (1) + update (1) + check (1), each doubled.
    assert_eq!(out.consumed[0].write_units, 6.0);
    assert!(
        engine
            .get_item(get(key("t", "2")))
            .await
            .unwrap()
            .item
            .is_some()
    );

    let duplicate = vec![
        TransactWriteAction::Delete {
            table: "things".into(),
            key: key("t", "1"),
            condition: None,
        },
        TransactWriteAction::ConditionCheck {
            table: "things".into(),
            key: key("t", "1"),
            condition: Condition::exists("n"),
        },
    ];
    assert_validation(
        engine
            .transact_write_items(TransactWriteItemsInput { actions: duplicate })
            .await,
        "multiple operations on one item",
    );
    let too_many = (0..101)
        .map(|i| TransactWriteAction::Delete {
            table: "things".into(),
            key: key("t", &format!("x{i}")),
            condition: None,
        })
        .collect();
    assert_validation(
        engine
            .transact_write_items(TransactWriteItemsInput { actions: too_many })
            .await,
        "length",
    );
}

#[tokio::test]
async fn validation_rejects_bad_keys_and_items() {
    let (_dir, engine) = open().await;
    assert_validation(
        engine
            .put_item(put(item! {"PK" => 1i64, "SK" => "x"}))
            .await,
        "Type mismatch",
    );
    assert_validation(
        engine.put_item(put(item! {"PK" => "", "SK" => "x"})).await,
        "empty string",
    );
    assert_validation(
        engine.put_item(put(item! {"PK" => "a"})).await,
        "Missing the key SK",
    );
    assert_validation(
        engine
            .put_item(put(item! {"PK" => "a", "SK" => "x", "GROUP" => 5i64}))
            .await,
        "Type mismatch for Index Key",
    );
    assert_validation(
        engine
            .put_item(put(item! {"PK" => "a", "SK" => "x", "AT" => ""}))
            .await,
        "empty string",
    );
    assert_validation(
        engine
            .put_item(put(item! {"PK" => "a".repeat(2049), "SK" => "x"}))
            .await,
        "2048",
    );
    engine
        .put_item(put(item! {"PK" => "a".repeat(2048), "SK" => "x"}))
        .await
        .unwrap();
    assert_validation(
        engine
            .put_item(put(item! {"PK" => "a", "SK" => "x".repeat(1025)}))
            .await,
        "1024",
    );
    let big = "x".repeat(400 * 1024);
    assert_validation(
        engine
            .put_item(put(item! {"PK" => "a", "SK" => "x", "body" => big}))
            .await,
        "maximum allowed size",
    );
    assert_validation(
        engine
            .put_item(put(
                item! {"PK" => "a", "SK" => "x", "s" => AttributeValue::Ss(Default::default())},
            ))
            .await,
        "may not be empty",
    );
    assert_validation(
        engine.get_item(get(item! {"PK" => "a"})).await,
        "does not match the schema",
    );
    assert_validation(
        engine
            .get_item(get(item! {"PK" => "a", "SK" => "x", "extra" => 1i64}))
            .await,
        "does not match the schema",
    );
    let mut bad_index_read = by_group("g");
    bad_index_read.consistent_read = true;
    assert_validation(engine.query(bad_index_read).await, "Consistent reads");
    assert_validation(
        engine
            .query(QueryInput::new(
                "things",
                None,
                KeyCondition::partition("SK", "x"),
            ))
            .await,
        "missed key schema element",
    );
    assert!(matches!(
        engine
            .get_item(GetItemInput {
                table: "nope".into(),
                key: key("a", "b"),
                consistent_read: false
            })
            .await,
        Err(StoreError::ResourceNotFound(_))
    ));
    assert!(matches!(
        engine.create_table(table_definition()).await,
        Err(StoreError::ResourceInUse(_))
    ));
}

#[tokio::test]
async fn capacity_follows_dynamodb_rules() {
    let (_dir, engine) = open().await;
    // An item of exactly 1,500 bytes: PK(2)+"p"(1) + SK(2)+"1"(1) + body(4)+1490.
    let body = "x".repeat(1490);
    let item = item! {"PK" => "p", "SK" => "1", "body" => body.clone()};
    assert_eq!(item_size(&item), 1500);
    let out = engine.put_item(put(item)).await.unwrap();
    assert_eq!(
        out.consumed.write_units, 2.0,
        "1,500 bytes is two 1 KB units"
    );
    assert!(out.consumed.index_units.is_empty(), "in no index");

    // Entering byGroup (ALL projection): the index entry is charged too.
    let out = engine
        .update_item(update(
            key("p", "1"),
            Update::new().set_value("GROUP", "g").set_value("AT", "t"),
        ))
        .await
        .unwrap();
    // New item 1500 + GROUP(5)+1 + AT(2)+1 = 1509 bytes: 2 units, plus 2 for the index entry.
    assert_eq!(out.consumed.write_units, 4.0);
    assert_eq!(out.consumed.index_units["byGroup"], 2.0);

    // Changing the index sort key: delete + put in the index.
    let out = engine
        .update_item(update(key("p", "1"), Update::new().set_value("AT", "u")))
        .await
        .unwrap();
    assert_eq!(out.consumed.index_units["byGroup"], 4.0);
    assert_eq!(out.consumed.write_units, 6.0);

    // Reads: a strongly consistent Get of 1,509 bytes is one unit; half eventually consistent.
    let read = engine.get_item(get(key("p", "1"))).await.unwrap();
    assert_eq!(read.consumed.read_units, 1.0);
    let read = engine
        .get_item(GetItemInput {
            table: "things".into(),
            key: key("p", "1"),
            consistent_read: false,
        })
        .await
        .unwrap();
    assert_eq!(read.consumed.read_units, 0.5);

    // A Query sums its items before rounding: 3 items of 1,500 bytes = 4,500 bytes → 2 units.
    for sk in ["2", "3"] {
        engine
            .put_item(put(item! {"PK" => "p", "SK" => sk, "body" => body.clone()}))
            .await
            .unwrap();
    }
    let mut q = QueryInput::new("things", None, KeyCondition::partition("PK", "p"));
    q.consistent_read = true;
    let page = engine.query(q).await.unwrap();
    assert_eq!(page.items.len(), 3);
    assert_eq!(page.consumed.read_units, 2.0);
    // An empty Query still costs the minimum.
    let page = engine
        .query(QueryInput::new(
            "things",
            None,
            KeyCondition::partition("PK", "none"),
        ))
        .await
        .unwrap();
    assert_eq!(page.consumed.read_units, 0.5);
    // Deleting charges the larger (old) image and leaves the index.
    let out = engine.delete_item(delete(key("p", "1"))).await.unwrap();
    assert_eq!(out.consumed.write_units, 4.0);
}

#[tokio::test]
async fn stream_records_every_change_once_in_order() {
    let (_dir, engine) = open().await;
    let position = engine
        .register_consumer("things", "test", StartPosition::TrimHorizon)
        .await
        .unwrap();
    assert_eq!(position, 0);
    engine
        .put_item(put(item! {"PK" => "s", "SK" => "1", "v" => 1i64}))
        .await
        .unwrap();
    // Writing the same item again changes nothing and records nothing.
    engine
        .put_item(put(item! {"PK" => "s", "SK" => "1", "v" => 1i64}))
        .await
        .unwrap();
    engine
        .update_item(update(key("s", "1"), Update::new().set_value("v", 2i64)))
        .await
        .unwrap();
    engine.delete_item(delete(key("s", "1"))).await.unwrap();
    engine.delete_item(delete(key("s", "1"))).await.unwrap();

    let records = engine.read_stream("things", 0, 100).unwrap();
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
    let rest = engine
        .read_stream("things", records[0].sequence, 100)
        .unwrap();
    assert_eq!(rest.len(), 2);

    // A checkpoint is a compare-and-set.
    let checkpoint = Checkpoint {
        table: "things".into(),
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
        engine.consumer_position("things", "test").unwrap(),
        Some(records[1].sequence)
    );
    let latest = engine
        .register_consumer("things", "late", StartPosition::Latest)
        .await
        .unwrap();
    assert_eq!(latest, records[2].sequence);
}

#[tokio::test]
async fn checkpoint_commits_with_the_consumer_writes() {
    let (_dir, engine) = open().await;
    engine
        .register_consumer("things", "agg", StartPosition::TrimHorizon)
        .await
        .unwrap();
    engine
        .put_item(put(item! {"PK" => "x", "SK" => "1"}))
        .await
        .unwrap();
    let batch = engine.read_stream("things", 0, 10).unwrap();
    let last = batch.last().unwrap().sequence;
    let effects = || TransactWriteItemsInput {
        actions: vec![TransactWriteAction::Update {
            table: "things".into(),
            key: key("STATS", "S"),
            update: Update::new().add("count", 1i64),
            condition: None,
        }],
    };
    let checkpoint = Checkpoint {
        table: "things".into(),
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
        .get_item(get(key("STATS", "S")))
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
    engine.create_table(table_definition()).await.unwrap();
    engine
        .register_consumer("things", "slow", StartPosition::TrimHorizon)
        .await
        .unwrap();
    for i in 0..5 {
        engine
            .put_item(put(item! {"PK" => "r", "SK" => format!("{i}")}))
            .await
            .unwrap();
    }
    let checkpoint = Checkpoint {
        table: "things".into(),
        consumer: "slow".into(),
        expected: 0,
        sequence: 3,
    };
    engine.checkpoint(checkpoint).await.unwrap();
    // The writer trims at most once a second, during a later commit.
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    engine
        .put_item(put(item! {"PK" => "r", "SK" => "late"}))
        .await
        .unwrap();
    let kept: Vec<u64> = engine
        .read_stream("things", 0, 100)
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
        engine.create_table(table_definition()).await.unwrap();
        engine
            .put_item(put(item! {"PK" => "d", "SK" => "1"}))
            .await
            .unwrap();
    }
    let engine = Engine::open(dir.path()).unwrap();
    assert_eq!(engine.table_names().unwrap(), vec!["things".to_string()]);
    assert!(
        engine
            .get_item(get(key("d", "1")))
            .await
            .unwrap()
            .item
            .is_some()
    );
    assert_eq!(engine.latest_sequence(), 1);
    engine
        .put_item(put(item! {"PK" => "d", "SK" => "2"}))
        .await
        .unwrap();
    assert_eq!(
        engine.latest_sequence(),
        2,
        "sequence numbers never restart"
    );
    engine.delete_table("things").await.unwrap();
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
                    .put_item(put(item! {"PK" => format!("w{writer}"), "SK" => format!("{i:03}"), "GROUP" => "all", "AT" => format!("{writer}-{i}")}))
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
        let mut q = by_group("all");
        q.exclusive_start_key = start.take();
        let page = engine.query(q).await.unwrap();
        total += page.items.len();
        match page.last_evaluated_key {
            Some(k) => start = Some(k),
            None => break,
        }
    }
    assert_eq!(total, 640);
    assert_eq!(engine.read_stream("things", 0, 10_000).unwrap().len(), 640);
}
