//! One behaviour suite for every backend.
//!
//! Each case takes a [`Store`] and the name of a table made with
//! [`table_definition`], and asserts DynamoDB's documented behaviour:
//! item operations, conditions, sparse indexes and projections, ordering
//! and paging, filters, parallel scans, batches, transactions, validation
//! errors and capacity units. [`conformance_tests!`] turns the cases into
//! tests for a backend; the engine runs them in its own tests and the
//! DynamoDB backend against Amazon's DynamoDB Local, and again against
//! rave's own DynamoDB API (an in-process server per case). Where DynamoDB
//! Local itself departs from DynamoDB's documented behaviour, the case is
//! listed as ignored with the reason, on that backend only, and a generated
//! test checks that every case either runs or says why not.
//!
//! Beside the cases are the domain's oracles, which both backends run as
//! property tests: the pagination oracle (`pagination`), the statistics
//! oracles (`statistics`), the product families' oracle (`groups`) and
//! the erasure scenario (`erasure`), with `shards` to give a single feed
//! DynamoDB Streams' shards.

#![allow(clippy::unwrap_used)]
#![warn(unreachable_pub)]

use rave_store::*;

pub mod erasure;
pub mod groups;
mod orders;
pub mod pagination;
pub mod shards;
pub mod statistics;

/// The table every case runs on: string keys, three sparse indexes with
/// N and B key types and each kind of projection, and a stream.
pub fn table_definition(name: &str) -> TableDefinition {
    TableDefinition {
        name: name.into(),
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
        time_to_live_attribute: None,
        local_secondary_indexes: Vec::new(),
    }
}

/// The key of item `pk`/`sk`.
pub fn key(pk: &str, sk: &str) -> Item {
    item! {"PK" => pk, "SK" => sk}
}

pub fn put(table: &str, item: Item) -> PutItemInput {
    PutItemInput {
        table: table.into(),
        item,
        condition: None,
        return_values: ReturnValues::None,
    }
}

pub fn get(table: &str, key: Item) -> GetItemInput {
    GetItemInput {
        table: table.into(),
        key,
        consistent_read: true,
    }
}

pub fn update(table: &str, key: Item, update: Update) -> UpdateItemInput {
    UpdateItemInput {
        table: table.into(),
        key,
        update,
        condition: None,
        return_values: ReturnValues::AllNew,
    }
}

pub fn delete(table: &str, key: Item) -> DeleteItemInput {
    DeleteItemInput {
        table: table.into(),
        key,
        condition: None,
        return_values: ReturnValues::AllOld,
    }
}

pub fn by_group(table: &str, group: &str) -> QueryInput {
    QueryInput::new(
        table,
        Some("byGroup"),
        KeyCondition::partition("GROUP", group),
    )
}

/// Asserts a ValidationException. The kind is the contract both backends
/// share; the wording is each backend's own (the engine's own tests check
/// its messages).
fn assert_validation<T: std::fmt::Debug>(result: Result<T>, about: &str) {
    match result {
        Err(StoreError::Validation(_)) => {}
        other => panic!("expected a validation error about {about:?}, got {other:?}"),
    }
}

pub async fn put_get_update_delete_round_trip<S: Store>(store: &S, table: &str) {
    let item = item! {"PK" => "a", "SK" => "1", "note" => "hello", "n" => 1i64};
    store.put_item(put(table, item.clone())).await.unwrap();
    assert_eq!(
        store
            .get_item(get(table, key("a", "1")))
            .await
            .unwrap()
            .item,
        Some(item)
    );

    let out = store
        .update_item(update(
            table,
            key("a", "1"),
            Update::new().add("n", 41i64).set_value("extra", true),
        ))
        .await
        .unwrap();
    let new = out.attributes.unwrap();
    assert_eq!(new["n"], AttributeValue::from(42i64));
    assert_eq!(new["extra"], AttributeValue::Bool(true));

    let out = store
        .delete_item(delete(table, key("a", "1")))
        .await
        .unwrap();
    assert_eq!(out.attributes, Some(new));
    assert_eq!(
        store
            .get_item(get(table, key("a", "1")))
            .await
            .unwrap()
            .item,
        None
    );
    // Deleting what is not there is fine and returns nothing.
    assert_eq!(
        store
            .delete_item(delete(table, key("a", "1")))
            .await
            .unwrap()
            .attributes,
        None
    );
}

pub async fn update_creates_missing_items_and_refuses_key_changes<S: Store>(
    store: &S,
    table: &str,
) {
    let out = store
        .update_item(update(
            table,
            key("new", "1"),
            Update::new().set_value("x", 1i64),
        ))
        .await
        .unwrap();
    assert_eq!(
        out.attributes,
        Some(item! {"PK" => "new", "SK" => "1", "x" => 1i64})
    );
    assert_validation(
        store
            .update_item(update(
                table,
                key("new", "1"),
                Update::new().set_value("SK", "2"),
            ))
            .await,
        "part of the key",
    );
}

/// The API reference (AttributeValueUpdate): for a missing item, "DELETE -
/// Nothing happens; there is no attribute to delete". An update that only
/// removes creates no item; it returns no image.
pub async fn update_that_only_removes_creates_nothing<S: Store>(store: &S, table: &str) {
    let out = store
        .update_item(update(table, key("ghost", "1"), Update::new().remove("x")))
        .await
        .unwrap();
    assert_eq!(out.attributes, None);
    assert_eq!(
        store
            .get_item(get(table, key("ghost", "1")))
            .await
            .unwrap()
            .item,
        None
    );
    let scanned = store.scan(ScanInput::new(table)).await.unwrap();
    assert!(scanned.items.is_empty(), "{:?}", scanned.items);
}

/// An update without actions is DynamoDB's UpdateItem without an
/// UpdateExpression: it writes the bare key, creating a missing item with
/// only its key and leaving an existing one as it is.
pub async fn update_without_actions_writes_the_bare_key<S: Store>(store: &S, table: &str) {
    let mut touch = update(table, key("bare", "1"), Update::new());
    touch.return_values = ReturnValues::AllNew;
    let out = store.update_item(touch.clone()).await.unwrap();
    assert_eq!(out.attributes, Some(key("bare", "1")));
    store
        .put_item(put(table, item! {"PK" => "bare", "SK" => "2", "v" => 1i64}))
        .await
        .unwrap();
    touch.key = key("bare", "2");
    let out = store.update_item(touch).await.unwrap();
    assert_eq!(
        out.attributes,
        Some(item! {"PK" => "bare", "SK" => "2", "v" => 1i64})
    );
    let scanned = store.scan(ScanInput::new(table)).await.unwrap();
    assert_eq!(scanned.items.len(), 2, "{:?}", scanned.items);
}

pub async fn conditions_guard_writes<S: Store>(store: &S, table: &str) {
    let mut first = put(table, item! {"PK" => "c", "SK" => "1", "v" => 1i64});
    first.condition = Some(Condition::not_exists("PK"));
    store.put_item(first.clone()).await.unwrap();
    assert_eq!(
        store.put_item(first).await,
        Err(StoreError::ConditionalCheckFailed)
    );

    let mut guarded = update(table, key("c", "1"), Update::new().set_value("v", 2i64));
    guarded.condition = Some(Condition::eq("v", 5i64));
    assert_eq!(
        store.update_item(guarded.clone()).await,
        Err(StoreError::ConditionalCheckFailed)
    );
    guarded.condition = Some(Condition::eq("v", 1i64));
    store.update_item(guarded).await.unwrap();

    let mut guarded_delete = delete(table, key("c", "1"));
    guarded_delete.condition = Some(Condition::exists("missing"));
    assert_eq!(
        store.delete_item(guarded_delete).await,
        Err(StoreError::ConditionalCheckFailed)
    );
    assert!(
        store
            .get_item(get(table, key("c", "1")))
            .await
            .unwrap()
            .item
            .is_some()
    );
}

pub async fn indexes_are_sparse_and_follow_changes<S: Store>(store: &S, table: &str) {
    for (sk, group, at) in [
        ("1", Some("g"), "2026-01"),
        ("2", Some("g"), "2026-03"),
        ("3", None, "2026-02"),
    ] {
        let mut item = item! {"PK" => "p", "SK" => sk, "AT" => at};
        if let Some(group) = group {
            item.insert("GROUP".into(), group.into());
        }
        store.put_item(put(table, item)).await.unwrap();
    }
    let page = store.query(by_group(table, "g")).await.unwrap();
    let sks: Vec<_> = page.items.iter().map(|i| i["SK"].clone()).collect();
    assert_eq!(
        sks,
        vec![AttributeValue::from("1"), AttributeValue::from("2")],
        "only items with GROUP, by AT"
    );

    // Moving an item into the index, changing its sort key, and dropping it out.
    store
        .update_item(update(
            table,
            key("p", "3"),
            Update::new().set_value("GROUP", "g"),
        ))
        .await
        .unwrap();
    store
        .update_item(update(
            table,
            key("p", "1"),
            Update::new().set_value("AT", "2026-09"),
        ))
        .await
        .unwrap();
    store
        .update_item(update(table, key("p", "2"), Update::new().remove("GROUP")))
        .await
        .unwrap();
    let page = store.query(by_group(table, "g")).await.unwrap();
    let sks: Vec<_> = page.items.iter().map(|i| i["SK"].clone()).collect();
    assert_eq!(
        sks,
        vec![AttributeValue::from("3"), AttributeValue::from("1")]
    );
}

pub async fn projections_copy_what_they_promise<S: Store>(store: &S, table: &str) {
    let item = item! {
        "PK" => "p", "SK" => "1", "KIND" => "k", "SCORE" => 7i64,
        "TAG" => AttributeValue::B(vec![1, 2]), "note" => "kept", "other" => "dropped",
    };
    store.put_item(put(table, item)).await.unwrap();
    let keys_only = store
        .query(QueryInput::new(
            table,
            Some("byScore"),
            KeyCondition::partition("KIND", "k"),
        ))
        .await
        .unwrap();
    assert_eq!(
        keys_only.items,
        vec![item! {"PK" => "p", "SK" => "1", "KIND" => "k", "SCORE" => 7i64}]
    );
    let include = store
        .query(QueryInput::new(
            table,
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

pub async fn numeric_sort_keys_order_numerically<S: Store>(store: &S, table: &str) {
    for (i, score) in ["-10", "-9.5", "0", "2", "10", "1e3", "0.001"]
        .iter()
        .enumerate()
    {
        let score: Number = score.parse().unwrap();
        store
            .put_item(put(
                table,
                item! {"PK" => "s", "SK" => i.to_string(), "KIND" => "k", "SCORE" => score},
            ))
            .await
            .unwrap();
    }
    let mut query = QueryInput::new(table, Some("byScore"), KeyCondition::partition("KIND", "k"));
    query.scan_index_forward = false;
    let page = store.query(query).await.unwrap();
    let scores: Vec<String> = page
        .items
        .iter()
        .map(|i| i["SCORE"].as_n().unwrap().to_string())
        .collect();
    assert_eq!(scores, ["1000", "10", "2", "0.001", "0", "-9.5", "-10"]);

    let ranged = QueryInput::new(
        table,
        Some("byScore"),
        KeyCondition::partition("KIND", "k")
            .with_sort("SCORE", SortOp::Between((-9i64).into(), 2i64.into())),
    );
    let page = store.query(ranged).await.unwrap();
    let scores: Vec<String> = page
        .items
        .iter()
        .map(|i| i["SCORE"].as_n().unwrap().to_string())
        .collect();
    assert_eq!(
        scores,
        ["0", "0.001", "2"],
        "BETWEEN -9 AND 2 is inclusive, numeric"
    );
}

pub async fn pagination_with_limits_and_start_keys<S: Store>(store: &S, table: &str) {
    for i in 0..25 {
        store
            .put_item(put(table, item! {"PK" => "pg", "SK" => format!("{i:02}"), "GROUP" => "g", "AT" => format!("{:02}", i % 5)}))
            .await
            .unwrap();
    }
    for forward in [true, false] {
        let mut seen = Vec::new();
        let mut start = None;
        loop {
            let mut query = by_group(table, "g");
            query.limit = Some(7);
            query.scan_index_forward = forward;
            query.exclusive_start_key = start.take();
            let page = store.query(query).await.unwrap();
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
        // Ordered by the index sort key; DynamoDB does not order items whose
        // sort keys are equal, so compare within each group as sets.
        let sort_keys: Vec<&String> = seen.iter().map(|(at, _)| at).collect();
        let mut ordered = sort_keys.clone();
        ordered.sort();
        if !forward {
            ordered.reverse();
        }
        assert_eq!(sort_keys, ordered);
        let mut all = seen.clone();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 25, "every item once");
    }
}

pub async fn filters_apply_after_limit_and_are_still_charged<S: Store>(store: &S, table: &str) {
    for i in 0..10i64 {
        store
            .put_item(put(
                table,
                item! {"PK" => "f", "SK" => format!("{i}"), "even" => i % 2 == 0},
            ))
            .await
            .unwrap();
    }
    let mut query = QueryInput::new(table, None, KeyCondition::partition("PK", "f"));
    query.limit = Some(4);
    query.filter = Some(Condition::eq("even", true));
    let page = store.query(query).await.unwrap();
    assert_eq!(page.scanned_count, 4);
    assert_eq!(page.items.len(), 2);
    assert!(page.last_evaluated_key.is_some());
}

/// ProjectionExpression keeps nested paths in place (list elements in index
/// order); Select=COUNT returns counts and no items; SPECIFIC_ATTRIBUTES
/// needs a projection; ALL_ATTRIBUTES needs an index that projects ALL.
pub async fn projections_and_select_shape_what_reads_return<S: Store>(store: &S, table: &str) {
    let doc = AttributeValue::M(item! {"x" => 1i64, "y" => 2i64});
    let list = AttributeValue::L(vec!["l0".into(), "l1".into(), "l2".into()]);
    for (sk, even) in [("1", false), ("2", true), ("3", true)] {
        store
            .put_item(put(
                table,
                item! {"PK" => "pr", "SK" => sk, "doc" => doc.clone(), "list" => list.clone(),
                "even" => even, "KIND" => "k", "SCORE" => 5i64},
            ))
            .await
            .unwrap();
    }
    let mut query = QueryInput::new(table, None, KeyCondition::partition("PK", "pr"));
    query.projection = Some(vec![
        Path::attr("SK"),
        Path::attr("doc").key("y"),
        Path::attr("list").index(2),
        Path::attr("list").index(0),
    ]);
    let page = store.query(query).await.unwrap();
    assert_eq!(page.count, 3);
    assert_eq!(
        page.items[0],
        item! {"SK" => "1", "doc" => AttributeValue::M(item! {"y" => 2i64}),
        "list" => AttributeValue::L(vec!["l0".into(), "l2".into()])}
    );

    let mut count = QueryInput::new(table, None, KeyCondition::partition("PK", "pr"));
    count.select = Some(Select::Count);
    count.filter = Some(Condition::eq("even", true));
    let page = store.query(count).await.unwrap();
    assert!(page.items.is_empty());
    assert_eq!((page.count, page.scanned_count), (2, 3));

    let mut scan = ScanInput::new(table);
    scan.select = Some(Select::SpecificAttributes);
    scan.projection = Some(vec![Path::attr("even")]);
    let page = store.scan(scan).await.unwrap();
    assert_eq!(page.items.len(), 3);
    assert!(
        page.items
            .iter()
            .all(|i| i.len() == 1 && i.contains_key("even"))
    );

    let mut unnamed = QueryInput::new(table, None, KeyCondition::partition("PK", "pr"));
    unnamed.select = Some(Select::SpecificAttributes);
    assert_validation(
        store.query(unnamed).await,
        "SPECIFIC_ATTRIBUTES without a projection",
    );
    let mut both = QueryInput::new(table, None, KeyCondition::partition("PK", "pr"));
    both.select = Some(Select::Count);
    both.projection = Some(vec![Path::attr("SK")]);
    assert_validation(store.query(both).await, "COUNT with a projection");
    let mut keys_only =
        QueryInput::new(table, Some("byScore"), KeyCondition::partition("KIND", "k"));
    keys_only.select = Some(Select::AllAttributes);
    assert_validation(
        store.query(keys_only).await,
        "ALL_ATTRIBUTES on a KEYS_ONLY index",
    );
    let mut projected =
        QueryInput::new(table, Some("byScore"), KeyCondition::partition("KIND", "k"));
    projected.select = Some(Select::AllProjectedAttributes);
    let page = store.query(projected).await.unwrap();
    assert_eq!(page.items.len(), 3);
    assert!(page.items.iter().all(|i| !i.contains_key("doc")));
}

/// UPDATED_OLD and UPDATED_NEW return only the attributes the update wrote
/// (nested ones in place), and nothing when there are none.
pub async fn updates_return_only_the_updated_attributes<S: Store>(store: &S, table: &str) {
    store
        .put_item(put(
            table,
            item! {"PK" => "up", "SK" => "1", "a" => 1i64, "b" => "kept",
            "m" => AttributeValue::M(item! {"x" => 1i64, "y" => 2i64})},
        ))
        .await
        .unwrap();
    let mut request = update(
        table,
        key("up", "1"),
        Update::new()
            .set_value("a", 2i64)
            .set("m", SetValue::value(AttributeValue::M(item! {"x" => 9i64})))
            .remove("gone"),
    );
    request.return_values = ReturnValues::UpdatedOld;
    let out = store.update_item(request.clone()).await.unwrap();
    assert_eq!(
        out.attributes,
        Some(item! {"a" => 1i64, "m" => AttributeValue::M(item! {"x" => 1i64, "y" => 2i64})})
    );
    request.update = Update::new().add("a", 5i64).remove("m");
    request.return_values = ReturnValues::UpdatedNew;
    let out = store.update_item(request.clone()).await.unwrap();
    assert_eq!(out.attributes, Some(item! {"a" => 7i64}));
    // Only a removal: nothing new to return.
    request.update = Update::new().remove("b");
    let out = store.update_item(request).await.unwrap();
    assert_eq!(out.attributes, None);
    let mut put_updated = put(table, item! {"PK" => "up", "SK" => "2"});
    put_updated.return_values = ReturnValues::UpdatedNew;
    assert_validation(
        store.put_item(put_updated).await,
        "UPDATED_NEW on a PutItem",
    );
}

/// An ExclusiveStartKey must be a key of what is read (the table's key
/// attributes, and the index's) and lie inside the Query's key condition.
pub async fn exclusive_start_keys_must_fit_the_read<S: Store>(store: &S, table: &str) {
    let on_table = |start: Item, condition: KeyCondition| {
        let mut query = QueryInput::new(table, None, condition);
        query.exclusive_start_key = Some(start);
        query
    };
    let in_p = || KeyCondition::partition("PK", "p");
    // The right shape inside the condition is accepted.
    store.query(on_table(key("p", "5"), in_p())).await.unwrap();
    // Another partition, or a sort key the condition excludes.
    assert_validation(
        store.query(on_table(key("q", "5"), in_p())).await,
        "a start key in another partition",
    );
    let after_7 = in_p().with_sort("SK", SortOp::Gt("7".into()));
    assert_validation(
        store.query(on_table(key("p", "5"), after_7)).await,
        "a start key outside the sort condition",
    );
    // Too few or too many attributes.
    assert_validation(
        store.query(on_table(item! {"PK" => "p"}, in_p())).await,
        "a start key without its sort key",
    );
    let mut extra = key("p", "5");
    extra.insert("note".into(), "x".into());
    assert_validation(
        store.query(on_table(extra, in_p())).await,
        "a start key with a non-key attribute",
    );
    // On an index: its key and the table's, nothing less.
    let mut query = by_group(table, "g");
    query.exclusive_start_key = Some(item! {"GROUP" => "g", "AT" => "a"});
    assert_validation(
        store.query(query).await,
        "an index start key without the table key",
    );
    let mut query = by_group(table, "g");
    query.exclusive_start_key = Some(item! {"GROUP" => "g", "AT" => "a", "PK" => "p", "SK" => "1"});
    store.query(query).await.unwrap();
}

/// The developer guide (Filter expressions for Query): "A filter expression
/// cannot contain partition key or sort key attributes" — of the table or
/// the index the Query reads.
pub async fn query_filters_refuse_key_attributes<S: Store>(store: &S, table: &str) {
    let mut on_table = QueryInput::new(table, None, KeyCondition::partition("PK", "p"));
    on_table.filter = Some(Condition::eq("note", "x").and(Condition::exists("SK")));
    assert_validation(store.query(on_table).await, "a filter on the sort key");
    let mut on_index = by_group(table, "g");
    on_index.filter = Some(Condition::eq("GROUP", "g"));
    assert_validation(store.query(on_index).await, "a filter on the index's key");
    // The table's key is an ordinary attribute in an index's Query.
    let mut table_key_on_index = by_group(table, "g");
    table_key_on_index.filter = Some(Condition::eq("PK", "p"));
    assert!(
        store
            .query(table_key_on_index)
            .await
            .unwrap()
            .items
            .is_empty()
    );
}

pub async fn parallel_scan_segments_partition_the_table<S: Store>(store: &S, table: &str) {
    for i in 0..200 {
        store
            .put_item(put(table, item! {"PK" => format!("p{i}"), "SK" => "x"}))
            .await
            .unwrap();
    }
    let mut all = Vec::new();
    for segment in 0..4 {
        let mut start = None;
        loop {
            let mut scan = ScanInput::new(table);
            scan.segment = Some(Segment {
                segment,
                total_segments: 4,
            });
            scan.limit = Some(30);
            scan.exclusive_start_key = start.take();
            let page = store.scan(scan).await.unwrap();
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

pub async fn batch_operations<S: Store>(store: &S, table: &str) {
    let requests = (0..25)
        .map(|i| {
            (
                table.to_string(),
                WriteRequest::Put(item! {"PK" => "b", "SK" => format!("{i}")}),
            )
        })
        .collect();
    store
        .batch_write_item(BatchWriteItemInput { requests })
        .await
        .unwrap();
    let keys: Vec<Item> = (0..30).map(|i| key("b", &i.to_string())).collect();
    let out = store
        .batch_get_item(BatchGetItemInput {
            requests: vec![TableKeys {
                table: table.into(),
                keys,
                consistent_read: true,
            }],
        })
        .await
        .unwrap();
    assert_eq!(out.responses[0].1.len(), 25);
    // Each key is charged a whole unit, found or not.

    let too_many = (0..26)
        .map(|i| {
            (
                table.to_string(),
                WriteRequest::Delete(key("b", &i.to_string())),
            )
        })
        .collect();
    assert_validation(
        store
            .batch_write_item(BatchWriteItemInput { requests: too_many })
            .await,
        "Too many items",
    );
    let duplicates = vec![
        (table.to_string(), WriteRequest::Delete(key("b", "1"))),
        (table.to_string(), WriteRequest::Put(key("b", "1"))),
    ];
    assert_validation(
        store
            .batch_write_item(BatchWriteItemInput {
                requests: duplicates,
            })
            .await,
        "duplicates",
    );
}

pub async fn transactions_are_all_or_nothing<S: Store>(store: &S, table: &str) {
    store
        .put_item(put(table, item! {"PK" => "t", "SK" => "1", "n" => 1i64}))
        .await
        .unwrap();
    let actions = vec![
        TransactWriteAction::Put {
            table: table.into(),
            item: item! {"PK" => "t", "SK" => "2"},
            condition: None,
        },
        TransactWriteAction::Update {
            table: table.into(),
            key: key("t", "1"),
            update: Update::new().add("n", 1i64),
            condition: Some(Condition::eq("n", 99i64)),
        },
    ];
    let result = store
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
        store
            .get_item(get(table, key("t", "2")))
            .await
            .unwrap()
            .item,
        None,
        "nothing applied"
    );

    let actions = vec![
        TransactWriteAction::Put {
            table: table.into(),
            item: item! {"PK" => "t", "SK" => "2"},
            condition: None,
        },
        TransactWriteAction::Update {
            table: table.into(),
            key: key("t", "1"),
            update: Update::new().add("n", 1i64),
            condition: Some(Condition::eq("n", 1i64)),
        },
        TransactWriteAction::ConditionCheck {
            table: table.into(),
            key: key("t", "3"),
            condition: Condition::not_exists("PK"),
        },
    ];
    store
        .transact_write_items(TransactWriteItemsInput { actions })
        .await
        .unwrap();
    assert!(
        store
            .get_item(get(table, key("t", "2")))
            .await
            .unwrap()
            .item
            .is_some()
    );

    let too_many = (0..101)
        .map(|i| TransactWriteAction::Delete {
            table: table.into(),
            key: key("t", &format!("x{i}")),
            condition: None,
        })
        .collect();
    assert_validation(
        store
            .transact_write_items(TransactWriteItemsInput { actions: too_many })
            .await,
        "length",
    );
}

pub async fn transactions_refuse_two_actions_on_one_item<S: Store>(store: &S, table: &str) {
    store
        .put_item(put(table, item! {"PK" => "t", "SK" => "1", "n" => 1i64}))
        .await
        .unwrap();
    let duplicate = vec![
        TransactWriteAction::Delete {
            table: table.into(),
            key: key("t", "1"),
            condition: None,
        },
        TransactWriteAction::ConditionCheck {
            table: table.into(),
            key: key("t", "1"),
            condition: Condition::exists("n"),
        },
    ];
    assert_validation(
        store
            .transact_write_items(TransactWriteItemsInput { actions: duplicate })
            .await,
        "multiple operations on one item",
    );
}

/// Time to Live: a table created with a TTL attribute reports it, and an
/// expired item is still read, queried and scanned until the background
/// deletes it (DynamoDB takes up to days; the engine a sweep interval, a
/// minute by default), as are items whose TTL is not a Number or lies in
/// the future.
pub async fn expired_items_are_still_read_until_deleted<S: Store>(store: &S, table: &str) {
    let table = format!("{table}-ttl");
    let definition = TableDefinition {
        time_to_live_attribute: Some("expires".into()),
        ..table_definition(&table)
    };
    store.create_table(definition).await.unwrap();
    assert_eq!(
        store
            .describe_table(&table)
            .await
            .unwrap()
            .time_to_live_attribute
            .as_deref(),
        Some("expires")
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let items = [
        item! {"PK" => "t", "SK" => "expired", "GROUP" => "g", "AT" => "expired", "expires" => now - 3600},
        item! {"PK" => "t", "SK" => "future", "GROUP" => "g", "AT" => "future", "expires" => now + 3600},
        item! {"PK" => "t", "SK" => "text", "GROUP" => "g", "AT" => "text", "expires" => (now - 3600).to_string()},
        item! {"PK" => "t", "SK" => "none", "GROUP" => "g", "AT" => "none"},
    ];
    for item in &items {
        store.put_item(put(&table, item.clone())).await.unwrap();
    }
    let expired = store
        .get_item(get(&table, key("t", "expired")))
        .await
        .unwrap()
        .item;
    assert_eq!(expired.as_ref(), Some(&items[0]));
    let queried = store
        .query(QueryInput::new(
            &table,
            None,
            KeyCondition::partition("PK", "t"),
        ))
        .await
        .unwrap()
        .items;
    let scanned = store.scan(ScanInput::new(&table)).await.unwrap().items;
    let by_index = store.query(by_group(&table, "g")).await.unwrap().items;
    for found in [&queried, &scanned, &by_index] {
        assert_eq!(found.len(), items.len(), "{found:?}");
    }
    for item in &items {
        assert!(queried.contains(item) && scanned.contains(item), "{item:?}");
    }
}

pub async fn validation_rejects_bad_keys_and_items<S: Store>(store: &S, table: &str) {
    assert_validation(
        store
            .put_item(put(table, item! {"PK" => 1i64, "SK" => "x"}))
            .await,
        "Type mismatch",
    );
    assert_validation(
        store
            .put_item(put(table, item! {"PK" => "", "SK" => "x"}))
            .await,
        "empty string",
    );
    assert_validation(
        store.put_item(put(table, item! {"PK" => "a"})).await,
        "Missing the key SK",
    );
    assert_validation(
        store
            .put_item(put(
                table,
                item! {"PK" => "a", "SK" => "x", "GROUP" => 5i64},
            ))
            .await,
        "Type mismatch for Index Key",
    );
    assert_validation(
        store
            .put_item(put(table, item! {"PK" => "a", "SK" => "x", "AT" => ""}))
            .await,
        "empty string",
    );
    assert_validation(
        store
            .put_item(put(table, item! {"PK" => "a".repeat(2049), "SK" => "x"}))
            .await,
        "2048",
    );
    store
        .put_item(put(table, item! {"PK" => "a".repeat(2048), "SK" => "x"}))
        .await
        .unwrap();
    assert_validation(
        store
            .put_item(put(table, item! {"PK" => "a", "SK" => "x".repeat(1025)}))
            .await,
        "1024",
    );
    let big = "x".repeat(400 * 1024);
    assert_validation(
        store
            .put_item(put(table, item! {"PK" => "a", "SK" => "x", "body" => big}))
            .await,
        "maximum allowed size",
    );
    assert_validation(
        store
            .put_item(put(
                table,
                item! {"PK" => "a", "SK" => "x", "s" => AttributeValue::Ss(Default::default())},
            ))
            .await,
        "may not be empty",
    );
    assert_validation(
        store.get_item(get(table, item! {"PK" => "a"})).await,
        "does not match the schema",
    );
    assert_validation(
        store
            .get_item(get(
                table,
                item! {"PK" => "a", "SK" => "x", "extra" => 1i64},
            ))
            .await,
        "does not match the schema",
    );
    let mut bad_index_read = by_group(table, "g");
    bad_index_read.consistent_read = true;
    assert_validation(store.query(bad_index_read).await, "Consistent reads");
    assert_validation(
        store
            .query(QueryInput::new(
                table,
                None,
                KeyCondition::partition("SK", "x"),
            ))
            .await,
        "missed key schema element",
    );
    assert!(matches!(
        store
            .get_item(GetItemInput {
                table: "nope".into(),
                key: key("a", "b"),
                consistent_read: false
            })
            .await,
        Err(StoreError::ResourceNotFound(_))
    ));
    assert!(matches!(
        store.create_table(table_definition(table)).await,
        Err(StoreError::ResourceInUse(_))
    ));
}

pub async fn capacity_follows_dynamodb_rules<S: Store>(store: &S, table: &str) {
    // An item of exactly 1,500 bytes: PK(2)+"p"(1) + SK(2)+"1"(1) + body(4)+1490.
    let body = "x".repeat(1490);
    let item = item! {"PK" => "p", "SK" => "1", "body" => body.clone()};
    assert_eq!(item_size(&item), 1500);
    let out = store.put_item(put(table, item)).await.unwrap();
    assert_eq!(
        out.consumed.write_units, 2.0,
        "1,500 bytes is two 1 KB units"
    );
    assert!(out.consumed.index_units.is_empty(), "in no index");

    // Entering byGroup (ALL projection): the index entry is charged too.
    let out = store
        .update_item(update(
            table,
            key("p", "1"),
            Update::new().set_value("GROUP", "g").set_value("AT", "t"),
        ))
        .await
        .unwrap();
    // New item 1500 + GROUP(5)+1 + AT(2)+1 = 1509 bytes: 2 units, plus 2 for the index entry.
    assert_eq!(out.consumed.write_units, 4.0);
    assert_eq!(out.consumed.index_units["byGroup"], 2.0);

    // Changing the index sort key: delete + put in the index.
    let out = store
        .update_item(update(
            table,
            key("p", "1"),
            Update::new().set_value("AT", "u"),
        ))
        .await
        .unwrap();
    assert_eq!(out.consumed.index_units["byGroup"], 4.0);
    assert_eq!(out.consumed.write_units, 6.0);

    // Reads: a strongly consistent Get of 1,509 bytes is one unit; half eventually consistent.
    let read = store.get_item(get(table, key("p", "1"))).await.unwrap();
    assert_eq!(read.consumed.read_units, 1.0);
    let read = store
        .get_item(GetItemInput {
            table: table.into(),
            key: key("p", "1"),
            consistent_read: false,
        })
        .await
        .unwrap();
    assert_eq!(read.consumed.read_units, 0.5);

    // A Query sums its items before rounding: 3 items of 1,500 bytes = 4,500 bytes → 2 units.
    for sk in ["2", "3"] {
        store
            .put_item(put(
                table,
                item! {"PK" => "p", "SK" => sk, "body" => body.clone()},
            ))
            .await
            .unwrap();
    }
    let mut q = QueryInput::new(table, None, KeyCondition::partition("PK", "p"));
    q.consistent_read = true;
    let page = store.query(q).await.unwrap();
    assert_eq!(page.items.len(), 3);
    assert_eq!(page.consumed.read_units, 2.0);
    // An empty Query still costs the minimum.
    let page = store
        .query(QueryInput::new(
            table,
            None,
            KeyCondition::partition("PK", "none"),
        ))
        .await
        .unwrap();
    assert_eq!(page.consumed.read_units, 0.5);
    // Deleting charges the larger (old) image and leaves the index.
    let out = store
        .delete_item(delete(table, key("p", "1")))
        .await
        .unwrap();
    assert_eq!(out.consumed.write_units, 4.0);
    // BatchGetItem charges each key on its own, found or not: 3 keys, 1 unit each.
    let keys = vec![key("p", "2"), key("p", "3"), key("p", "missing")];
    let out = store
        .batch_get_item(BatchGetItemInput {
            requests: vec![TableKeys {
                table: table.into(),
                keys,
                consistent_read: true,
            }],
        })
        .await
        .unwrap();
    assert_eq!(out.consumed[0].read_units, 3.0);
    // A transaction costs double: a put (1 unit) and a condition check (1 unit), each ×2.
    let actions = vec![
        TransactWriteAction::Put {
            table: table.into(),
            item: item! {"PK" => "t", "SK" => "1"},
            condition: None,
        },
        TransactWriteAction::ConditionCheck {
            table: table.into(),
            key: key("t", "2"),
            condition: Condition::not_exists("PK"),
        },
    ];
    let out = store
        .transact_write_items(TransactWriteItemsInput { actions })
        .await
        .unwrap();
    assert_eq!(out.consumed[0].write_units, 4.0);
    // Only the table's units are doubled ("two underlying writes of every
    // item"): the index entry is propagated once, 2 + 1.
    let actions = vec![TransactWriteAction::Put {
        table: table.into(),
        item: item! {"PK" => "t", "SK" => "3", "GROUP" => "g", "AT" => "a"},
        condition: None,
    }];
    let out = store
        .transact_write_items(TransactWriteItemsInput { actions })
        .await
        .unwrap();
    assert_eq!(out.consumed[0].index_units["byGroup"], 1.0);
    assert_eq!(out.consumed[0].write_units, 3.0);

    // An index entry rewritten in place costs the larger of its two sizes:
    // shrinking p/2 from 1,509 bytes to 19 is 2 units in the table and 2 in byGroup.
    store
        .update_item(update(
            table,
            key("p", "2"),
            Update::new().set_value("GROUP", "g").set_value("AT", "t"),
        ))
        .await
        .unwrap();
    let out = store
        .update_item(update(table, key("p", "2"), Update::new().remove("body")))
        .await
        .unwrap();
    assert_eq!(out.consumed.index_units["byGroup"], 2.0);
    assert_eq!(out.consumed.write_units, 4.0);
}

/// The visiting reads show their visitor the items the plain reads
/// return, in the same order, and report the same capacity and page; the
/// engine overrides them to show items in place, the other backends visit
/// the items of a plain answer.
pub async fn visiting_reads_show_what_plain_reads_return<S: Store>(store: &S, table: &str) {
    let items = [
        item! {"PK" => "v", "SK" => "1", "GROUP" => "g", "AT" => "2026-01-01", "note" => "first",
        "n" => 7i64, "ok" => true, "none" => AttributeValue::Null,
        "doc" => AttributeValue::M(item! {"x" => 1i64, "s" => "é"}),
        "list" => AttributeValue::L(vec!["a".into(), 2i64.into()])},
        item! {"PK" => "v", "SK" => "2", "GROUP" => "g", "AT" => "2026-01-02",
        "note" => "x".repeat(300), "n" => "-1.5".parse::<Number>().unwrap()},
        item! {"PK" => "v", "SK" => "3", "GROUP" => "g", "AT" => "2026-01-03"},
    ];
    for item in &items {
        store.put_item(put(table, item.clone())).await.unwrap();
    }
    let visited = || {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = seen.clone();
        let visitor: ItemVisitor = Box::new(move |item| sink.lock().unwrap().push(item.to_item()));
        (seen, visitor)
    };
    for (pk, sk) in [("v", "1"), ("v", "2"), ("v", "3"), ("v", "missing")] {
        for consistent_read in [true, false] {
            let input = GetItemInput {
                consistent_read,
                ..get(table, key(pk, sk))
            };
            let plain = store.get_item(input.clone()).await.unwrap();
            let (seen, visitor) = visited();
            let visiting = store.get_item_visiting(input, visitor).await.unwrap();
            assert_eq!(visiting.item, None, "a visiting GetItem holds no item");
            // Shown once if found, never if not.
            let shown = std::mem::take(&mut *seen.lock().unwrap());
            assert_eq!(shown, Vec::from_iter(plain.item), "GetItem {pk}/{sk}");
            assert_eq!(visiting.consumed, plain.consumed, "GetItem {pk}/{sk}");
        }
    }
    for (forward, limit) in [(true, Some(2)), (false, Some(2)), (false, None)] {
        let mut input = by_group(table, "g");
        input.scan_index_forward = forward;
        input.limit = limit;
        let plain = store.query(input.clone()).await.unwrap();
        let (seen, visitor) = visited();
        let mut visiting = store.query_visiting(input, visitor).await.unwrap();
        assert!(visiting.items.is_empty(), "a visiting page holds no items");
        visiting.items = std::mem::take(&mut *seen.lock().unwrap());
        assert_eq!(visiting, plain);
    }
}

/// Every case of the suite, by name.
pub const CASES: &[&str] = &[
    "put_get_update_delete_round_trip",
    "update_creates_missing_items_and_refuses_key_changes",
    "update_that_only_removes_creates_nothing",
    "update_without_actions_writes_the_bare_key",
    "conditions_guard_writes",
    "indexes_are_sparse_and_follow_changes",
    "projections_copy_what_they_promise",
    "numeric_sort_keys_order_numerically",
    "pagination_with_limits_and_start_keys",
    "filters_apply_after_limit_and_are_still_charged",
    "query_filters_refuse_key_attributes",
    "projections_and_select_shape_what_reads_return",
    "updates_return_only_the_updated_attributes",
    "exclusive_start_keys_must_fit_the_read",
    "parallel_scan_segments_partition_the_table",
    "batch_operations",
    "transactions_are_all_or_nothing",
    "transactions_refuse_two_actions_on_one_item",
    "validation_rejects_bad_keys_and_items",
    "capacity_follows_dynamodb_rules",
    "expired_items_are_still_read_until_deleted",
    "visiting_reads_show_what_plain_reads_return",
];

/// Generates one `#[tokio::test]` per case for a backend. `$setup` is an
/// async fn taking the case's name and returning `(store, table, guard)`;
/// the guard lives until the case ends. Cases under `skip:` are generated
/// as ignored tests carrying the reason (where the backend itself departs
/// from DynamoDB's documented behaviour), and a generated test checks that
/// every case of [`CASES`] is either run or skipped with a reason.
/// `conformance_tests!(setup; every_case)` runs them all.
#[macro_export]
macro_rules! conformance_tests {
    // A backend that follows DynamoDB's documented behaviour in every case.
    ($setup:path; every_case) => {
        $crate::conformance_tests!($setup; run: [
            put_get_update_delete_round_trip,
            update_creates_missing_items_and_refuses_key_changes,
            update_that_only_removes_creates_nothing,
            update_without_actions_writes_the_bare_key,
            conditions_guard_writes,
            indexes_are_sparse_and_follow_changes,
            projections_copy_what_they_promise,
            numeric_sort_keys_order_numerically,
            pagination_with_limits_and_start_keys,
            filters_apply_after_limit_and_are_still_charged,
            query_filters_refuse_key_attributes,
            projections_and_select_shape_what_reads_return,
            updates_return_only_the_updated_attributes,
            exclusive_start_keys_must_fit_the_read,
            parallel_scan_segments_partition_the_table,
            batch_operations,
            transactions_are_all_or_nothing,
            transactions_refuse_two_actions_on_one_item,
            validation_rejects_bad_keys_and_items,
            capacity_follows_dynamodb_rules,
            expired_items_are_still_read_until_deleted,
            visiting_reads_show_what_plain_reads_return,
        ]; skip: []);
    };
    ($setup:path; run: [$($case:ident),* $(,)?]; skip: [$($skipped:ident = $why:literal),* $(,)?]) => {
        $(
            #[tokio::test]
            async fn $case() {
                let (store, table, _guard) = $setup(stringify!($case)).await;
                $crate::$case(&store, &table).await;
            }
        )*
        $(
            #[tokio::test]
            #[ignore = $why]
            async fn $skipped() {
                let (store, table, _guard) = $setup(stringify!($skipped)).await;
                $crate::$skipped(&store, &table).await;
            }
        )*
        #[test]
        fn every_conformance_case_runs_or_says_why_not() {
            let mut listed: Vec<&str> = vec![$(stringify!($case),)* $(stringify!($skipped),)*];
            listed.sort_unstable();
            let mut all = $crate::CASES.to_vec();
            all.sort_unstable();
            assert_eq!(listed, all);
        }
    };
}
