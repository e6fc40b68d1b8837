//! Random single-item writes through the HTTP API against a brute-force
//! model: every response (returned images, failed conditions) and the
//! final table must match what the model says.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde_json::{Value, json};

use crate::support::Server;

#[derive(Debug, Clone)]
enum Op {
    /// PutItem `{pk, v}` returning ALL_OLD, optionally only if absent.
    Put {
        pk: u8,
        v: i64,
        only_if_absent: bool,
    },
    /// UpdateItem `ADD c :n` returning UPDATED_NEW.
    Add { pk: u8, n: i64 },
    /// DeleteItem returning ALL_OLD.
    Delete { pk: u8 },
    /// A consistent GetItem.
    Get { pk: u8 },
}

fn op() -> impl Strategy<Value = Op> {
    let pk = 0u8..3;
    prop_oneof![
        (pk.clone(), -5i64..5, any::<bool>()).prop_map(|(pk, v, only_if_absent)| Op::Put {
            pk,
            v,
            only_if_absent
        }),
        (pk.clone(), -5i64..5).prop_map(|(pk, n)| Op::Add { pk, n }),
        pk.clone().prop_map(|pk| Op::Delete { pk }),
        pk.prop_map(|pk| Op::Get { pk }),
    ]
}

/// The model's item: `v` from the last put, `c` the sum of adds since.
#[derive(Debug, Clone, Default, PartialEq)]
struct Model {
    v: Option<i64>,
    c: Option<i64>,
}

fn json_of(pk: u8, item: &Model) -> Value {
    let mut json = json!({"pk": {"S": format!("k{pk}")}});
    if let Some(v) = item.v {
        json["v"] = json!({"N": v.to_string()});
    }
    if let Some(c) = item.c {
        json["c"] = json!({"N": c.to_string()});
    }
    json
}

fn key(pk: u8) -> Value {
    json!({"pk": {"S": format!("k{pk}")}})
}

async fn run(ops: Vec<Op>) {
    let server = Server::start().await;
    server.create_hash_keyed_table("model").await;
    let mut model: BTreeMap<u8, Model> = BTreeMap::new();
    for op in ops {
        match op {
            Op::Put {
                pk,
                v,
                only_if_absent,
            } => {
                let new = Model {
                    v: Some(v),
                    c: None,
                };
                let mut body = json!({"TableName": "model", "Item": json_of(pk, &new), "ReturnValues": "ALL_OLD"});
                if only_if_absent {
                    body["ConditionExpression"] = json!("attribute_not_exists(pk)");
                }
                let answer = server.call("PutItem", body).await;
                match model.get(&pk) {
                    Some(_) if only_if_absent => answer.error(
                        400,
                        "ConditionalCheckFailedException",
                        "The conditional request failed",
                    ),
                    old => {
                        let expected = match old {
                            Some(old) => json!({"Attributes": json_of(pk, old)}),
                            None => json!({}),
                        };
                        assert_eq!(answer.ok(), expected);
                        model.insert(pk, new);
                    }
                }
            }
            Op::Add { pk, n } => {
                let answer = server
                    .call(
                        "UpdateItem",
                        json!({
                            "TableName": "model",
                            "Key": key(pk),
                            "UpdateExpression": "ADD c :n",
                            "ExpressionAttributeValues": {":n": {"N": n.to_string()}},
                            "ReturnValues": "UPDATED_NEW",
                        }),
                    )
                    .await
                    .ok();
                let item = model.entry(pk).or_default();
                let c = item.c.unwrap_or(0) + n;
                item.c = Some(c);
                assert_eq!(answer, json!({"Attributes": {"c": {"N": c.to_string()}}}));
            }
            Op::Delete { pk } => {
                let answer = server
                    .call(
                        "DeleteItem",
                        json!({"TableName": "model", "Key": key(pk), "ReturnValues": "ALL_OLD"}),
                    )
                    .await
                    .ok();
                let expected = match model.remove(&pk) {
                    Some(old) => json!({"Attributes": json_of(pk, &old)}),
                    None => json!({}),
                };
                assert_eq!(answer, expected);
            }
            Op::Get { pk } => {
                let answer = server
                    .call(
                        "GetItem",
                        json!({"TableName": "model", "Key": key(pk), "ConsistentRead": true}),
                    )
                    .await
                    .ok();
                let expected = match model.get(&pk) {
                    Some(item) => json!({"Item": json_of(pk, item)}),
                    None => json!({}),
                };
                assert_eq!(answer, expected);
            }
        }
    }
    let scanned = server
        .call(
            "Scan",
            json!({"TableName": "model", "ConsistentRead": true}),
        )
        .await
        .ok();
    let mut items: Vec<Value> = scanned["Items"].as_array().expect("Items").clone();
    items.sort_by_key(|item| item.to_string());
    let mut expected: Vec<Value> = model.iter().map(|(pk, item)| json_of(*pk, item)).collect();
    expected.sort_by_key(|item| item.to_string());
    assert_eq!(items, expected);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn single_item_writes_match_the_model(ops in proptest::collection::vec(op(), 1..16)) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(run(ops));
    }
}
