//! The engine against a brute-force model of DynamoDB.
//!
//! The model keeps items in a plain list and answers every query by
//! filtering and sorting that list. Random sequences of puts, updates,
//! deletes, batch writes and transactions (with conditions, some of them
//! invalid on purpose) run on both; then random queries on the table and on
//! each sparse index, walked page by page through LastEvaluatedKey, must
//! return exactly what the model returns, the stream must replay to the
//! final state, and every write must consume the units DynamoDB's formulas
//! give. A local secondary index is read both as it projects and through
//! to the table (ALL_ATTRIBUTES), strongly consistent; every key is read by
//! GetItem, built and shown in place. Condition and update evaluation itself is tested in rave-store; the
//! model reuses it so that this test is about storage, indexes and paging.

use std::cmp::Ordering;
use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use rave_engine::{Engine, EventName};
use rave_store::*;

const TABLE: &str = "model";

fn definition() -> TableDefinition {
    TableDefinition {
        name: TABLE.into(),
        key_schema: KeySchema::new(
            KeyAttribute::new("PK", KeyType::S),
            Some(KeyAttribute::new("SK", KeyType::N)),
        ),
        global_secondary_indexes: vec![
            GlobalSecondaryIndex {
                name: "byS".into(),
                key_schema: KeySchema::new(
                    KeyAttribute::new("GS", KeyType::S),
                    Some(KeyAttribute::new("GN", KeyType::N)),
                ),
                projection: Projection::All,
            },
            GlobalSecondaryIndex {
                name: "byN".into(),
                key_schema: KeySchema::new(
                    KeyAttribute::new("GN", KeyType::N),
                    Some(KeyAttribute::new("GS", KeyType::S)),
                ),
                projection: Projection::Include(vec!["v".into()]),
            },
            GlobalSecondaryIndex {
                name: "byB".into(),
                key_schema: KeySchema::new(KeyAttribute::new("GB", KeyType::B), None),
                projection: Projection::KeysOnly,
            },
        ],
        stream_enabled: true,
        time_to_live_attribute: None,
        local_secondary_indexes: vec![LocalSecondaryIndex {
            name: "byLocal".into(),
            sort_key: KeyAttribute::new("GN", KeyType::N),
            projection: Projection::Include(vec!["v".into()]),
        }],
    }
}

// ---------------------------------------------------------------- the model

#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Ok,
    Validation,
    ConditionFailed,
    Canceled(Vec<&'static str>),
}

fn outcome_of<T>(result: &Result<T>) -> Outcome {
    match result {
        Ok(_) => Outcome::Ok,
        Err(StoreError::Validation(_)) => Outcome::Validation,
        Err(StoreError::ConditionalCheckFailed) => Outcome::ConditionFailed,
        Err(StoreError::TransactionCanceled(reasons)) => Outcome::Canceled(
            reasons
                .iter()
                .map(|r| match r {
                    CancellationReason::None => "None",
                    CancellationReason::ConditionalCheckFailed => "ConditionalCheckFailed",
                    CancellationReason::ValidationError(_) => "ValidationError",
                    CancellationReason::TransactionConflict => "TransactionConflict",
                    CancellationReason::ItemCollectionSizeLimitExceeded => {
                        "ItemCollectionSizeLimitExceeded"
                    }
                })
                .collect(),
        ),
        Err(other) => panic!("unexpected error {other:?}"),
    }
}

#[derive(Default, Debug)]
struct Model {
    items: Vec<Item>,
}

fn key_of(item: &Item) -> Item {
    item.iter()
        .filter(|(k, _)| *k == "PK" || *k == "SK")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Every key attribute that is present has its declared type and is not empty.
fn model_valid(item: &Item) -> bool {
    let typed = |name: &str, t: AttributeType| match item.get(name) {
        None => true,
        Some(AttributeValue::S(s)) => t == AttributeType::S && !s.is_empty(),
        Some(AttributeValue::B(b)) => t == AttributeType::B && !b.is_empty(),
        Some(v) => v.attribute_type() == t,
    };
    item.contains_key("PK")
        && item.contains_key("SK")
        && typed("PK", AttributeType::S)
        && typed("SK", AttributeType::N)
        && typed("GS", AttributeType::S)
        && typed("GN", AttributeType::N)
        && typed("GB", AttributeType::B)
}

struct ModelIndex {
    name: &'static str,
    partition: &'static str,
    sort: Option<&'static str>,
}

/// The last one is the table's local secondary index.
const INDEXES: [ModelIndex; 4] = [
    ModelIndex {
        name: "byS",
        partition: "GS",
        sort: Some("GN"),
    },
    ModelIndex {
        name: "byN",
        partition: "GN",
        sort: Some("GS"),
    },
    ModelIndex {
        name: "byB",
        partition: "GB",
        sort: None,
    },
    ModelIndex {
        name: "byLocal",
        partition: "PK",
        sort: Some("GN"),
    },
];

const LOCAL: usize = 3;

impl ModelIndex {
    fn project(&self, item: &Item) -> Option<Item> {
        item.get(self.partition)?;
        if let Some(sort) = self.sort {
            item.get(sort)?;
        }
        let keep = |name: &str| -> bool {
            match self.name {
                "byS" => true,
                "byN" => ["PK", "SK", "GN", "GS", "v"].contains(&name),
                "byLocal" => ["PK", "SK", "GN", "v"].contains(&name),
                _ => ["PK", "SK", "GB"].contains(&name),
            }
        };
        Some(
            item.iter()
                .filter(|(k, _)| keep(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        )
    }
}

/// The table's share of a write: the larger of the two images.
fn table_units_for_change(old: Option<&Item>, new: Option<&Item>) -> f64 {
    let size = |i: Option<&Item>| i.map_or(0, item_size);
    write_units(size(old).max(size(new)))
}

fn units_for_change(old: Option<&Item>, new: Option<&Item>) -> f64 {
    let mut units = table_units_for_change(old, new);
    if old == new {
        return units;
    }
    for index in &INDEXES {
        let before = old.and_then(|i| index.project(i));
        let after = new.and_then(|i| index.project(i));
        let index_key = |p: &Item| {
            (
                p.get(index.partition).cloned(),
                index.sort.and_then(|s| p.get(s).cloned()),
            )
        };
        units += match (&before, &after) {
            (None, None) => 0.0,
            (Some(b), None) => write_units(item_size(b)),
            (None, Some(a)) => write_units(item_size(a)),
            (Some(b), Some(a)) if index_key(b) != index_key(a) => {
                write_units(item_size(b)) + write_units(item_size(a))
            }
            (Some(b), Some(a)) if b != a => write_units(item_size(b).max(item_size(a))),
            _ => 0.0,
        };
    }
    units
}

impl Model {
    fn get(&self, key: &Item) -> Option<&Item> {
        self.items.iter().find(|i| key_of(i) == *key)
    }

    fn set(&mut self, key: &Item, new: Option<Item>) {
        self.items.retain(|i| key_of(i) != *key);
        self.items.extend(new);
    }

    fn condition_holds(&self, key: &Item, condition: Option<&Condition>) -> bool {
        let empty = Item::new();
        condition.is_none_or(|c| c.evaluate(self.get(key).unwrap_or(&empty)))
    }

    /// The item an update produces (`Some(None)` when an update that only
    /// removes meets a missing item: DynamoDB creates nothing), or `None` if
    /// it is invalid.
    fn updated(&self, key: &Item, update: &Update) -> Option<Option<Item>> {
        let old = self.get(key);
        let base = old.cloned().unwrap_or_else(|| key.clone());
        let touches_key = update.paths().any(|p| matches!(p.top(), Some("PK" | "SK")));
        if touches_key {
            return None;
        }
        let new = update.apply(&base).ok().filter(model_valid)?;
        Some(Some(new).filter(|new| old.is_some() || new != key))
    }

    /// Applies a single write; returns the outcome and the write units.
    fn write(&mut self, op: &Op) -> (Outcome, f64) {
        match op {
            Op::Put { item, condition } => {
                if !model_valid(item) {
                    return (Outcome::Validation, 0.0);
                }
                let key = key_of(item);
                if !self.condition_holds(&key, condition.as_ref()) {
                    return (Outcome::ConditionFailed, 0.0);
                }
                let units = units_for_change(self.get(&key), Some(item));
                self.set(&key, Some(item.clone()));
                (Outcome::Ok, units)
            }
            Op::Update {
                key,
                update,
                condition,
            } => {
                let touches_key = update.paths().any(|p| matches!(p.top(), Some("PK" | "SK")));
                if touches_key {
                    return (Outcome::Validation, 0.0);
                }
                if !self.condition_holds(key, condition.as_ref()) {
                    return (Outcome::ConditionFailed, 0.0);
                }
                let Some(new) = self.updated(key, update) else {
                    return (Outcome::Validation, 0.0);
                };
                let units = units_for_change(self.get(key), new.as_ref());
                self.set(key, new);
                (Outcome::Ok, units)
            }
            Op::Delete { key, condition } => {
                if !self.condition_holds(key, condition.as_ref()) {
                    return (Outcome::ConditionFailed, 0.0);
                }
                let units = units_for_change(self.get(key), None);
                self.set(key, None);
                (Outcome::Ok, units)
            }
            Op::Batch(requests) => {
                let keys: Vec<Item> = requests
                    .iter()
                    .map(|r| match r {
                        WriteRequest::Put(item) => key_of(item),
                        WriteRequest::Delete(key) => key.clone(),
                    })
                    .collect();
                let duplicate = keys.iter().enumerate().any(|(i, k)| keys[..i].contains(k));
                let invalid = requests
                    .iter()
                    .any(|r| matches!(r, WriteRequest::Put(item) if !model_valid(item)));
                if duplicate || invalid {
                    return (Outcome::Validation, 0.0);
                }
                let mut units = 0.0;
                for (request, key) in requests.iter().zip(&keys) {
                    let new = match request {
                        WriteRequest::Put(item) => Some(item.clone()),
                        WriteRequest::Delete(_) => None,
                    };
                    units += units_for_change(self.get(key), new.as_ref());
                    self.set(key, new);
                }
                (Outcome::Ok, units)
            }
            Op::Transact(actions) => self.transact(actions),
        }
    }

    fn transact(&mut self, actions: &[TxAction]) -> (Outcome, f64) {
        let keys: Vec<Item> = actions
            .iter()
            .map(|a| match a {
                TxAction::Put(item, _) => key_of(item),
                TxAction::Update(key, _, _)
                | TxAction::Delete(key, _)
                | TxAction::Check(key, _) => key.clone(),
            })
            .collect();
        let structurally_invalid = actions.iter().any(|a| match a {
            TxAction::Put(item, _) => !model_valid(item),
            TxAction::Update(_, update, _) => {
                update.paths().any(|p| matches!(p.top(), Some("PK" | "SK")))
            }
            _ => false,
        });
        if structurally_invalid || keys.iter().enumerate().any(|(i, k)| keys[..i].contains(k)) {
            return (Outcome::Validation, 0.0);
        }
        let mut reasons = Vec::new();
        let mut news = Vec::new();
        for (action, key) in actions.iter().zip(&keys) {
            let (condition, new) = match action {
                TxAction::Put(item, c) => (c.as_ref(), Some(Some(item.clone()))),
                TxAction::Update(key, update, c) => (c.as_ref(), self.updated(key, update)),
                TxAction::Delete(_, c) => (c.as_ref(), Some(None)),
                TxAction::Check(_, c) => (Some(c), Some(self.get(key).cloned())),
            };
            reasons.push(if !self.condition_holds(key, condition) {
                "ConditionalCheckFailed"
            } else if new.is_none() {
                "ValidationError"
            } else {
                "None"
            });
            news.push(new.flatten());
        }
        if reasons.iter().any(|r| *r != "None") {
            return (Outcome::Canceled(reasons), 0.0);
        }
        let mut units = 0.0;
        for ((action, key), new) in actions.iter().zip(&keys).zip(news) {
            // A transaction doubles the table's units, not the indexes'.
            if let TxAction::Check(..) = action {
                units += 2.0 * write_units(self.get(key).map_or(0, item_size));
            } else {
                let old = self.get(key);
                units +=
                    units_for_change(old, new.as_ref()) + table_units_for_change(old, new.as_ref());
                self.set(key, new);
            }
        }
        (Outcome::Ok, units)
    }

    /// Everything a query returns, in order, walking every page.
    fn query(&self, spec: &QuerySpec) -> Vec<Item> {
        let (partition, sort, index) = match spec.target {
            Target::Table => ("PK", Some("SK"), None),
            Target::Index(i) => (INDEXES[i].partition, INDEXES[i].sort, Some(&INDEXES[i])),
        };
        let mut rows: Vec<Item> = self
            .items
            .iter()
            .filter_map(|item| match index {
                // Read through to the table: the whole item, in index order.
                Some(index) if spec.whole => index.project(item).map(|_| item.clone()),
                Some(index) => index.project(item),
                None => Some(item.clone()),
            })
            .filter(|item| item.get(partition) == Some(&spec.partition))
            .filter(|item| match (&spec.sort, sort) {
                (Some(op), Some(sort)) => item.get(sort).is_some_and(|v| op.matches(v)),
                _ => true,
            })
            .collect();
        let cmp_opt = |a: Option<&AttributeValue>, b: Option<&AttributeValue>| match (a, b) {
            (Some(a), Some(b)) => order(a, b).expect("same key type"),
            _ => Ordering::Equal,
        };
        // Ties on the index sort key are broken by the table key.
        rows.sort_by(|a, b| {
            cmp_opt(sort.and_then(|s| a.get(s)), sort.and_then(|s| b.get(s)))
                .then_with(|| cmp_opt(a.get("PK"), b.get("PK")))
                .then_with(|| cmp_opt(a.get("SK"), b.get("SK")))
        });
        if !spec.forward {
            rows.reverse();
        }
        rows
    }
}

// ---------------------------------------------------------------- generators

#[derive(Debug, Clone)]
enum TxAction {
    Put(Item, Option<Condition>),
    Update(Item, Update, Option<Condition>),
    Delete(Item, Option<Condition>),
    Check(Item, Condition),
}

#[derive(Debug, Clone)]
enum Op {
    Put {
        item: Item,
        condition: Option<Condition>,
    },
    Update {
        key: Item,
        update: Update,
        condition: Option<Condition>,
    },
    Delete {
        key: Item,
        condition: Option<Condition>,
    },
    Batch(Vec<WriteRequest>),
    Transact(Vec<TxAction>),
}

#[derive(Debug, Clone, Copy)]
enum Target {
    Table,
    Index(usize),
}

#[derive(Debug, Clone)]
struct QuerySpec {
    target: Target,
    partition: AttributeValue,
    sort: Option<SortOp>,
    forward: bool,
    limit: Option<usize>,
    /// On the local index: ALL_ATTRIBUTES, strongly consistent, which
    /// fetches every item from the table.
    whole: bool,
}

fn num(text: &str) -> AttributeValue {
    AttributeValue::N(text.parse().expect("valid number"))
}

fn sk() -> impl Strategy<Value = AttributeValue> {
    prop::sample::select(vec!["-2", "-1", "0", "0.5", "1", "10"]).prop_map(num)
}

fn key() -> impl Strategy<Value = Item> {
    (prop::sample::select(vec!["a", "b"]), sk()).prop_map(|(pk, sk)| item! {"PK" => pk, "SK" => sk})
}

fn gs() -> impl Strategy<Value = AttributeValue> {
    // The empty string is not a valid key value: such writes must be refused.
    prop_oneof![
        12 => prop::sample::select(vec!["x", "y"]).prop_map(AttributeValue::from),
        1 => Just(AttributeValue::from("")),
    ]
}

fn gn() -> impl Strategy<Value = AttributeValue> {
    prop_oneof![
        12 => prop::sample::select(vec!["1", "2", "-1.5"]).prop_map(num),
        1 => Just(AttributeValue::from("not a number")),
    ]
}

fn gb() -> impl Strategy<Value = AttributeValue> {
    prop_oneof![
        12 => prop::sample::select(vec![vec![0u8], vec![0, 1]]).prop_map(AttributeValue::B),
        1 => Just(AttributeValue::B(vec![])),
    ]
}

fn item() -> impl Strategy<Value = Item> {
    (
        key(),
        proptest::option::weighted(0.8, gs()),
        proptest::option::weighted(0.8, gn()),
        proptest::option::weighted(0.5, gb()),
        proptest::option::of(0i64..3),
        prop::sample::select(vec![0usize, 10, 1000, 1500, 3000]),
    )
        .prop_map(|(mut item, gs, gn, gb, v, pad)| {
            for (name, value) in [("GS", gs), ("GN", gn), ("GB", gb)] {
                if let Some(value) = value {
                    item.insert(name.into(), value);
                }
            }
            if let Some(v) = v {
                item.insert("v".into(), v.into());
            }
            if pad > 0 {
                item.insert("pad".into(), "p".repeat(pad).into());
            }
            item
        })
}

fn condition() -> impl Strategy<Value = Option<Condition>> {
    prop_oneof![
        12 => Just(None),
        1 => Just(Some(Condition::not_exists("PK"))),
        1 => Just(Some(Condition::exists("PK"))),
        1 => (0i64..3).prop_map(|v| Some(Condition::eq("v", v))),
        1 => (0i64..3).prop_map(|v| Some(Condition::compare(Operand::attr("v"), Comparator::Lt, Operand::value(v)))),
        1 => Just(Some(Condition::exists("GS").and(Condition::not_exists("GB")))),
    ]
}

fn update() -> impl Strategy<Value = Update> {
    let action = prop_oneof![
        4 => (0i64..3).prop_map(|v| ("v", Some(SetValue::value(v)))),
        2 => gs().prop_map(|v| ("GS", Some(SetValue::Operand(UpdateOperand::Value(v))))),
        2 => gn().prop_map(|v| ("GN", Some(SetValue::Operand(UpdateOperand::Value(v))))),
        2 => gb().prop_map(|v| ("GB", Some(SetValue::Operand(UpdateOperand::Value(v))))),
        2 => prop::sample::select(vec!["GS", "GN", "GB", "v", "pad"]).prop_map(|name| (name, None)),
        2 => prop::sample::select(vec![10usize, 2000]).prop_map(|n| ("pad", Some(SetValue::value("q".repeat(n))))),
        1 => Just(("SK", Some(SetValue::value(num("7"))))),
    ];
    (proptest::collection::vec(action, 1..4), any::<bool>()).prop_map(|(actions, counter)| {
        let mut update = Update::new();
        let mut used = Vec::new();
        for (name, value) in actions {
            if used.contains(&name) {
                continue;
            }
            used.push(name);
            update = match value {
                Some(value) => update.set(name, value),
                None => update.remove(name),
            };
        }
        if counter {
            update = update.add("cnt", 1i64);
        }
        update
    })
}

fn tx_action() -> impl Strategy<Value = TxAction> {
    prop_oneof![
        (item(), condition()).prop_map(|(i, c)| TxAction::Put(i, c)),
        (key(), update(), condition()).prop_map(|(k, u, c)| TxAction::Update(k, u, c)),
        (key(), condition()).prop_map(|(k, c)| TxAction::Delete(k, c)),
        (key(), condition())
            .prop_map(|(k, c)| TxAction::Check(k, c.unwrap_or_else(|| Condition::exists("PK")))),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (item(), condition()).prop_map(|(item, condition)| Op::Put { item, condition }),
        4 => (key(), update(), condition()).prop_map(|(key, update, condition)| Op::Update { key, update, condition }),
        2 => (key(), condition()).prop_map(|(key, condition)| Op::Delete { key, condition }),
        1 => proptest::collection::vec(
            prop_oneof![item().prop_map(WriteRequest::Put), key().prop_map(WriteRequest::Delete)],
            1..5
        ).prop_map(Op::Batch),
        2 => proptest::collection::vec(tx_action(), 1..4).prop_map(Op::Transact),
    ]
}

fn sort_op(value: BoxedStrategy<AttributeValue>, strings: bool) -> BoxedStrategy<Option<SortOp>> {
    let v = value.clone();
    let mut options = vec![
        Just(None).boxed(),
        v.clone().prop_map(|v| Some(SortOp::Eq(v))).boxed(),
        v.clone().prop_map(|v| Some(SortOp::Lt(v))).boxed(),
        v.clone().prop_map(|v| Some(SortOp::Le(v))).boxed(),
        v.clone().prop_map(|v| Some(SortOp::Gt(v))).boxed(),
        v.clone().prop_map(|v| Some(SortOp::Ge(v))).boxed(),
        (v.clone(), v.clone())
            .prop_map(|(a, b)| {
                let (lo, hi) = if order(&a, &b) == Some(Ordering::Greater) {
                    (b, a)
                } else {
                    (a, b)
                };
                Some(SortOp::Between(lo, hi))
            })
            .boxed(),
    ];
    if strings {
        // No empty prefix: DynamoDB refuses an empty sort-key value.
        options.push(
            prop::sample::select(vec!["x", "y"])
                .prop_map(|p| Some(SortOp::BeginsWith(p.into())))
                .boxed(),
        );
    }
    proptest::strategy::Union::new(options).boxed()
}

fn query_spec() -> impl Strategy<Value = QuerySpec> {
    let valid_gs = || {
        prop::sample::select(vec!["x", "y"])
            .prop_map(AttributeValue::from)
            .boxed()
    };
    let valid_gn = || {
        prop::sample::select(vec!["1", "2", "-1.5"])
            .prop_map(num)
            .boxed()
    };
    let table = (
        prop::sample::select(vec!["a", "b"]),
        sort_op(sk().boxed(), false),
    )
        .prop_map(|(pk, sort)| (Target::Table, AttributeValue::from(pk), sort));
    let by_s = (valid_gs(), sort_op(valid_gn(), false)).prop_map(|(p, s)| (Target::Index(0), p, s));
    let by_n = (valid_gn(), sort_op(valid_gs(), true)).prop_map(|(p, s)| (Target::Index(1), p, s));
    let by_b = prop::sample::select(vec![vec![0u8], vec![0, 1]])
        .prop_map(|b| (Target::Index(2), AttributeValue::B(b), None));
    let by_local = (
        prop::sample::select(vec!["a", "b"]),
        sort_op(valid_gn(), false),
    )
        .prop_map(|(pk, sort)| (Target::Index(LOCAL), AttributeValue::from(pk), sort));
    (
        prop_oneof![table, by_s, by_n, by_b, by_local],
        any::<bool>(),
        proptest::option::of(1usize..5),
        any::<bool>(),
    )
        .prop_map(
            |((target, partition, sort), forward, limit, whole)| QuerySpec {
                whole: whole && matches!(target, Target::Index(LOCAL)),
                target,
                partition,
                sort,
                forward,
                limit,
            },
        )
}

// ---------------------------------------------------------------- running both

fn to_engine(op: &Op) -> EngineOp {
    match op {
        Op::Put { item, condition } => EngineOp::Put(PutItemInput {
            table: TABLE.into(),
            item: item.clone(),
            condition: condition.clone(),
            return_values: ReturnValues::None,
        }),
        Op::Update {
            key,
            update,
            condition,
        } => EngineOp::Update(UpdateItemInput {
            table: TABLE.into(),
            key: key.clone(),
            update: update.clone(),
            condition: condition.clone(),
            return_values: ReturnValues::None,
        }),
        Op::Delete { key, condition } => EngineOp::Delete(DeleteItemInput {
            table: TABLE.into(),
            key: key.clone(),
            condition: condition.clone(),
            return_values: ReturnValues::None,
        }),
        Op::Batch(requests) => EngineOp::Batch(BatchWriteItemInput {
            requests: requests
                .iter()
                .map(|r| (TABLE.to_string(), r.clone()))
                .collect(),
        }),
        Op::Transact(actions) => EngineOp::Transact(TransactWriteItemsInput {
            actions: actions
                .iter()
                .map(|a| match a.clone() {
                    TxAction::Put(item, condition) => TransactWriteAction::Put {
                        table: TABLE.into(),
                        item,
                        condition,
                    },
                    TxAction::Update(key, update, condition) => TransactWriteAction::Update {
                        table: TABLE.into(),
                        key,
                        update,
                        condition,
                    },
                    TxAction::Delete(key, condition) => TransactWriteAction::Delete {
                        table: TABLE.into(),
                        key,
                        condition,
                    },
                    TxAction::Check(key, condition) => TransactWriteAction::ConditionCheck {
                        table: TABLE.into(),
                        key,
                        condition,
                    },
                })
                .collect(),
        }),
    }
}

enum EngineOp {
    Put(PutItemInput),
    Update(UpdateItemInput),
    Delete(DeleteItemInput),
    Batch(BatchWriteItemInput),
    Transact(TransactWriteItemsInput),
}

async fn run_on_engine(engine: &Engine, op: EngineOp) -> (Outcome, f64) {
    fn units(consumed: &[ConsumedCapacity]) -> f64 {
        consumed.iter().map(|c| c.write_units).sum()
    }
    match op {
        EngineOp::Put(input) => {
            let r = engine.put_item(input).await;
            (outcome_of(&r), r.map_or(0.0, |o| o.consumed.write_units))
        }
        EngineOp::Update(input) => {
            let r = engine.update_item(input).await;
            (outcome_of(&r), r.map_or(0.0, |o| o.consumed.write_units))
        }
        EngineOp::Delete(input) => {
            let r = engine.delete_item(input).await;
            (outcome_of(&r), r.map_or(0.0, |o| o.consumed.write_units))
        }
        EngineOp::Batch(input) => {
            let r = engine.batch_write_item(input).await;
            (outcome_of(&r), r.map_or(0.0, |o| units(&o.consumed)))
        }
        EngineOp::Transact(input) => {
            let r = engine.transact_write_items(input).await;
            (outcome_of(&r), r.map_or(0.0, |o| units(&o.consumed)))
        }
    }
}

async fn walk(engine: &Engine, spec: &QuerySpec) -> (Vec<Item>, f64, f64) {
    let (index, partition_name, sort_name) = match spec.target {
        Target::Table => (None, "PK", Some("SK")),
        Target::Index(i) => (Some(INDEXES[i].name), INDEXES[i].partition, INDEXES[i].sort),
    };
    let mut condition = KeyCondition::partition(partition_name, spec.partition.clone());
    if let (Some(op), Some(name)) = (&spec.sort, sort_name) {
        condition = condition.with_sort(name, op.clone());
    }
    let mut all = Vec::new();
    let mut start = None;
    let (mut charged, mut expected) = (0.0, 0.0);
    loop {
        let mut input = QueryInput::new(TABLE, index, condition.clone());
        input.scan_index_forward = spec.forward;
        input.limit = spec.limit;
        input.exclusive_start_key = start.take();
        if spec.whole {
            input.select = Some(Select::AllAttributes);
            input.consistent_read = true;
        }
        let page = engine.query(input.clone()).await.expect("query");
        let visited = Arc::new(Mutex::new(Vec::new()));
        let sink = visited.clone();
        let mut visiting = engine
            .query_visiting(
                input,
                Box::new(move |item| sink.lock().expect("sink").push(item.to_item())),
            )
            .await
            .expect("query visiting");
        assert!(visiting.items.is_empty(), "a visiting page holds no items");
        visiting.items = std::mem::take(&mut *visited.lock().expect("visited"));
        assert_eq!(visiting, page, "visiting reads what the page holds");
        charged += page.consumed.read_units;
        if spec.whole {
            // The index entries read, and each item fetched on its own.
            let local = &INDEXES[LOCAL];
            let entries = page.items.iter().filter_map(|i| local.project(i));
            expected += read_units(entries.map(|e| item_size(&e)).sum(), true);
            expected += page
                .items
                .iter()
                .map(|i| read_units(item_size(i), true))
                .sum::<f64>();
        } else {
            expected += read_units(page.items.iter().map(item_size).sum(), false);
        }
        if let Some(limit) = spec.limit {
            assert!(page.items.len() <= limit);
        }
        let last = page.items.last().cloned();
        all.extend(page.items);
        match page.last_evaluated_key {
            Some(lek) => {
                let last = last.expect("a page with a LastEvaluatedKey has items");
                for (k, v) in &lek {
                    assert_eq!(
                        last.get(k),
                        Some(v),
                        "LastEvaluatedKey is the last item's keys"
                    );
                }
                start = Some(lek);
            }
            None => break,
        }
        assert!(all.len() <= 1000, "paging does not end");
    }
    (all, charged, expected)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn engine_matches_the_model(ops in proptest::collection::vec(op(), 1..60), queries in proptest::collection::vec(query_spec(), 1..16)) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let dir = tempfile::tempdir().unwrap();
        runtime.block_on(async {
            let engine = Engine::open(dir.path()).unwrap();
            engine.create_table(definition()).await.unwrap();
            let mut model = Model::default();
            for op in &ops {
                let expected = model.write(op);
                let actual = run_on_engine(&engine, to_engine(op)).await;
                prop_assert_eq!(&actual.0, &expected.0, "outcome of {:?}", op);
                prop_assert_eq!(actual.1, expected.1, "write units of {:?}", op);
            }
            for spec in &queries {
                let (items, charged, expected_units) = walk(&engine, spec).await;
                prop_assert_eq!(&items, &model.query(spec), "query {:?}", spec);
                prop_assert_eq!(charged, expected_units, "read units of {:?}", spec);
            }
            // Replaying the stream rebuilds exactly the final table, and each
            // record's old image is what the previous record left behind.
            let mut replayed = Model::default();
            for record in engine.read_stream(TABLE, 0, usize::MAX).unwrap() {
                prop_assert_eq!(replayed.get(&record.keys), record.old_image.as_ref());
                prop_assert_eq!(record.event == EventName::Remove, record.new_image.is_none());
                replayed.set(&record.keys, record.new_image.clone());
            }
            let sorted = |m: &Model| {
                let mut items = m.items.clone();
                items.sort_by_key(|i| format!("{:?}", key_of(i)));
                items
            };
            prop_assert_eq!(sorted(&replayed), sorted(&model));
            // A GetItem shown in place answers what the model holds, charged
            // as the built one is; a deleted or never written key, nothing.
            let gets = model.items.iter().map(key_of).chain(ops.iter().filter_map(|op| match op {
                Op::Delete { key, .. } => Some(key.clone()),
                _ => None,
            }));
            for key in gets {
                let input = GetItemInput { table: TABLE.into(), key, consistent_read: false };
                let built = engine.get_item(input.clone()).await.unwrap();
                let (consumed, viewed) = engine.get_item_viewed(&input, |view| view.to_item()).unwrap();
                prop_assert_eq!(&viewed, &built.item, "GetItem {:?}", input.key);
                prop_assert_eq!(consumed.read_units, built.consumed.read_units);
            }
            Ok(())
        })?;
    }
}
