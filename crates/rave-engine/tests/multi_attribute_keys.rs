//! A global secondary index keyed on several attributes (two partition
//! attributes, three sort attributes, of mixed types) against a brute-force
//! model: random puts and deletes, half of them before the index exists
//! (so the backfill builds that half) and half after (so the writer keeps
//! it), then random valid key conditions (equalities on both partition
//! attributes and on a prefix of the sort attributes, a comparison on the
//! next), walked forward and backward page by page through
//! ExclusiveStartKey, must return exactly what filtering and sorting the
//! items returns.

use std::cmp::Ordering;

use proptest::prelude::*;
use rave_conformance::{delete, put};
use rave_engine::{Engine, IndexChange, IndexStatus};
use rave_store::*;

const TABLE: &str = "places";
const INDEX: &str = "byPlace";
/// The index's partition attributes, then its sort attributes.
const PARTITION: [(&str, KeyType); 2] = [("h", KeyType::S), ("g", KeyType::N)];
const SORT: [(&str, KeyType); 3] = [("a", KeyType::S), ("b", KeyType::N), ("c", KeyType::S)];

fn index() -> GlobalSecondaryIndex {
    let attributes = |list: &[(&str, KeyType)]| {
        list.iter()
            .map(|(name, key_type)| KeyAttribute::new(*name, *key_type))
            .collect()
    };
    GlobalSecondaryIndex {
        name: INDEX.into(),
        key_schema: KeySchema::of(attributes(&PARTITION), attributes(&SORT))
            .expect("a partition attribute"),
        projection: Projection::KeysOnly,
    }
}

fn definition() -> TableDefinition {
    TableDefinition {
        name: TABLE.into(),
        key_schema: KeySchema::new(KeyAttribute::new("PK", KeyType::S), None),
        global_secondary_indexes: Vec::new(),
        stream_enabled: false,
        time_to_live_attribute: None,
        local_secondary_indexes: Vec::new(),
    }
}

fn num(text: &str) -> AttributeValue {
    AttributeValue::N(text.parse().expect("a number"))
}

fn value_of(name: &str) -> BoxedStrategy<AttributeValue> {
    match name {
        "h" => prop_oneof![Just("x"), Just("y")]
            .prop_map(AttributeValue::s)
            .boxed(),
        "g" => prop_oneof![Just("1"), Just("2")].prop_map(num).boxed(),
        "b" => prop_oneof![Just("-1"), Just("0"), Just("2.5"), Just("10")]
            .prop_map(num)
            .boxed(),
        _ => prop_oneof![Just("a"), Just("ab"), Just("b"), Just("b\u{0}"), Just("ba")]
            .prop_map(AttributeValue::s)
            .boxed(),
    }
}

/// An item; each index key attribute is missing one time in eight.
fn item() -> impl Strategy<Value = Item> {
    let names = ["h", "g", "a", "b", "c"];
    let attributes: Vec<_> = names
        .iter()
        .map(|name| proptest::option::weighted(0.875, value_of(name)))
        .collect();
    (0u8..24, attributes, any::<u8>()).prop_map(move |(pk, values, v)| {
        let mut item = Item::new();
        item.insert("PK".into(), AttributeValue::s(format!("i{pk:02}")));
        item.insert("v".into(), num(&v.to_string()));
        for (name, value) in names.iter().zip(values) {
            if let Some(value) = value {
                item.insert((*name).into(), value);
            }
        }
        item
    })
}

#[derive(Debug, Clone)]
enum Write {
    Put(Item),
    Delete(u8),
}

fn write() -> impl Strategy<Value = Write> {
    prop_oneof![
        4 => item().prop_map(Write::Put),
        1 => (0u8..24).prop_map(Write::Delete),
    ]
}

#[derive(Debug, Clone)]
struct Spec {
    partition: Vec<AttributeValue>,
    sort_equalities: Vec<AttributeValue>,
    range: Option<SortOp>,
    forward: bool,
    limit: Option<usize>,
}

fn range_on(name: &'static str) -> BoxedStrategy<Option<SortOp>> {
    let strings = name != "b";
    let one = move || value_of(name);
    let mut ops = vec![
        Just(None).boxed(),
        one().prop_map(|v| Some(SortOp::Eq(v))).boxed(),
        one().prop_map(|v| Some(SortOp::Lt(v))).boxed(),
        one().prop_map(|v| Some(SortOp::Le(v))).boxed(),
        one().prop_map(|v| Some(SortOp::Gt(v))).boxed(),
        one().prop_map(|v| Some(SortOp::Ge(v))).boxed(),
        (one(), one())
            .prop_map(|(x, y)| {
                let (low, high) = match order(&x, &y) {
                    Some(Ordering::Greater) => (y, x),
                    _ => (x, y),
                };
                Some(SortOp::Between(low, high))
            })
            .boxed(),
    ];
    if strings {
        // No empty prefix: DynamoDB refuses an empty sort-key value.
        ops.push(
            prop_oneof![Just("a"), Just("b")]
                .prop_map(|p| Some(SortOp::BeginsWith(AttributeValue::s(p))))
                .boxed(),
        );
    }
    proptest::strategy::Union::new(ops).boxed()
}

fn spec() -> impl Strategy<Value = Spec> {
    (0usize..=SORT.len())
        .prop_flat_map(|prefix| {
            let partition: Vec<_> = PARTITION.iter().map(|(n, _)| value_of(n)).collect();
            let equalities: Vec<_> = SORT[..prefix].iter().map(|(n, _)| value_of(n)).collect();
            let range = match SORT.get(prefix) {
                Some((name, _)) => range_on(name),
                None => Just(None).boxed(),
            };
            (
                partition,
                equalities,
                range,
                any::<bool>(),
                proptest::option::of(1usize..4),
            )
        })
        .prop_map(|(partition, sort_equalities, range, forward, limit)| Spec {
            partition,
            sort_equalities,
            range,
            forward,
            limit,
        })
}

impl Spec {
    /// The condition, its clauses in a shuffled order the schema sorts out.
    fn condition(&self, rotation: usize) -> KeyCondition {
        let mut clauses: Vec<(&str, SortOp)> = PARTITION
            .iter()
            .zip(&self.partition)
            .chain(SORT.iter().zip(&self.sort_equalities))
            .map(|((name, _), value)| (*name, SortOp::Eq(value.clone())))
            .collect();
        if let Some(op) = &self.range {
            clauses.push((SORT[self.sort_equalities.len()].0, op.clone()));
        }
        let len = clauses.len();
        clauses.rotate_left(rotation % len);
        // The parser takes the first equality as the partition part.
        let first = clauses
            .iter()
            .position(|(_, op)| matches!(op, SortOp::Eq(_)))
            .expect("an equality");
        let (name, SortOp::Eq(value)) = clauses.remove(first) else {
            unreachable!("an equality");
        };
        clauses.into_iter().fold(
            KeyCondition::partition(name, value),
            |condition, (n, op)| condition.and(n, op),
        )
    }

    /// What filtering and sorting the items gives, as the index holds them
    /// (their keys).
    fn expected(&self, items: &[Item]) -> Vec<Item> {
        let in_index = |item: &&Item| {
            PARTITION
                .iter()
                .chain(&SORT)
                .all(|(name, _)| item.contains_key(*name))
        };
        let matches = |item: &&Item| {
            PARTITION
                .iter()
                .zip(&self.partition)
                .chain(SORT.iter().zip(&self.sort_equalities))
                .all(|((name, _), value)| item.get(*name) == Some(value))
                && self.range.as_ref().is_none_or(|op| {
                    item.get(SORT[self.sort_equalities.len()].0)
                        .is_some_and(|v| op.matches(v))
                })
        };
        let mut found: Vec<Item> = items
            .iter()
            .filter(in_index)
            .filter(matches)
            .map(|item| {
                let mut projected = item.clone();
                projected.retain(|name, _| name != "v");
                projected
            })
            .collect();
        found.sort_by(|x, y| {
            SORT.iter()
                .map(|(name, _)| *name)
                .chain(["PK"])
                .map(|name| order(&x[name], &y[name]).expect("ordered"))
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        });
        if !self.forward {
            found.reverse();
        }
        found
    }
}

async fn walk(engine: &Engine, spec: &Spec, rotation: usize) -> Vec<Item> {
    let mut all = Vec::new();
    let mut start = None;
    loop {
        let mut input = QueryInput::new(TABLE, Some(INDEX), spec.condition(rotation));
        input.scan_index_forward = spec.forward;
        input.limit = spec.limit;
        input.exclusive_start_key = start.take();
        let page = engine.query(input).await.expect("a valid query");
        if let Some(limit) = spec.limit {
            assert!(page.items.len() <= limit);
        }
        all.extend(page.items);
        match page.last_evaluated_key {
            Some(key) => start = Some(key),
            None => break,
        }
        assert!(all.len() <= 100, "paging does not end");
    }
    all
}

async fn apply(engine: &Engine, items: &mut Vec<Item>, write: &Write) {
    let key = |pk: &AttributeValue| {
        let mut key = Item::new();
        key.insert("PK".into(), pk.clone());
        key
    };
    match write {
        Write::Put(item) => {
            engine
                .put_item(put(TABLE, item.clone()))
                .await
                .expect("a valid item");
            items.retain(|i| i["PK"] != item["PK"]);
            items.push(item.clone());
        }
        Write::Delete(pk) => {
            let pk = AttributeValue::s(format!("i{pk:02}"));
            engine
                .delete_item(delete(TABLE, key(&pk)))
                .await
                .expect("a delete");
            items.retain(|i| i["PK"] != pk);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn queries_of_a_multi_attribute_index_match_the_model(
        before in proptest::collection::vec(write(), 0..40),
        after in proptest::collection::vec(write(), 0..40),
        specs in proptest::collection::vec((spec(), 0usize..8), 1..12),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let dir = tempfile::tempdir().unwrap();
        runtime.block_on(async {
            let engine = Engine::open(dir.path()).unwrap();
            engine.create_table(definition()).await.unwrap();
            let mut items = Vec::new();
            for write in &before {
                apply(&engine, &mut items, write).await;
            }
            engine.update_table(TABLE, IndexChange::Create(index())).await.unwrap();
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while engine
                .describe_indexes(TABLE)
                .unwrap()
                .iter()
                .any(|d| d.status != IndexStatus::Active)
            {
                assert!(std::time::Instant::now() < deadline, "backfill never ended");
                tokio::time::sleep(std::time::Duration::from_millis(2)).await;
            }
            for write in &after {
                apply(&engine, &mut items, write).await;
            }
            for (spec, rotation) in &specs {
                prop_assert_eq!(walk(&engine, spec, *rotation).await, spec.expected(&items), "{:?}", spec);
            }
            Ok(())
        })?;
    }
}
