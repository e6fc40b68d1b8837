//! A product record's SKUs find the product: claimed with the record,
//! released when the record drops them, refused while another product's
//! record lists them; racing writes of one product leave the lookups
//! matching the record that won.

mod common;

use common::fixture;
use rave_comments::{Comments, CommentsError, Moderation, ProductRecord};
use rave_engine::Engine;

fn record(name: &str, skus: &[&str]) -> ProductRecord {
    ProductRecord {
        name: name.into(),
        skus: skus.iter().map(|s| (*s).to_owned()).collect(),
        ..ProductRecord::default()
    }
}

/// `sku → product` for each of `skus` that names one.
async fn holders(comments: &Comments<Engine>, skus: &[&str]) -> Vec<(String, String)> {
    let mut found: Vec<_> = comments
        .products_by_sku(skus)
        .await
        .unwrap()
        .into_iter()
        .map(|(sku, product)| (sku, product.as_str().to_owned()))
        .collect();
    found.sort();
    found
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected
        .iter()
        .map(|(s, p)| ((*s).to_owned(), (*p).to_owned()))
        .collect()
}

#[tokio::test]
async fn a_records_skus_name_its_product_until_it_drops_them() {
    let f = fixture(Moderation::Off).await;
    let c = &f.comments;
    c.put_product("mug", record("Mug", &["MUG-1", "MUG-2", "MUG-1"]))
        .await
        .unwrap();
    c.put_product("plate", record("Plate", &["PLATE 7/8\""]))
        .await
        .unwrap();
    let asked = ["MUG-1", "MUG-2", "MUG-3", "PLATE 7/8\"", "", "x\u{0}y"];
    assert_eq!(
        holders(c, &asked).await,
        pairs(&[("MUG-1", "mug"), ("MUG-2", "mug"), ("PLATE 7/8\"", "plate")])
    );

    // The record drops MUG-1 and gains MUG-3: the lookups follow it.
    c.put_product("mug", record("Mug", &["MUG-2", "MUG-3"]))
        .await
        .unwrap();
    assert_eq!(
        holders(c, &asked).await,
        pairs(&[("MUG-2", "mug"), ("MUG-3", "mug"), ("PLATE 7/8\"", "plate")])
    );
    // A released SKU can be claimed by another product.
    c.put_product("plate", record("Plate", &["PLATE 7/8\"", "MUG-1"]))
        .await
        .unwrap();
    assert_eq!(holders(c, &["MUG-1"]).await, pairs(&[("MUG-1", "plate")]));
    // Writing the same record again changes nothing about its SKUs.
    c.put_product("plate", record("Plate", &["PLATE 7/8\"", "MUG-1"]))
        .await
        .unwrap();
    assert_eq!(holders(c, &["MUG-1"]).await, pairs(&[("MUG-1", "plate")]));
    // A record without SKUs releases them all.
    c.put_product("mug", record("Mug", &[])).await.unwrap();
    assert_eq!(holders(c, &["MUG-2", "MUG-3"]).await, pairs(&[]));
}

#[tokio::test]
async fn a_sku_another_record_lists_is_refused_and_nothing_changes() {
    let f = fixture(Moderation::Off).await;
    let c = &f.comments;
    c.put_product("mug", record("Mug", &["MUG-1"]))
        .await
        .unwrap();
    c.put_product("plate", record("Plate", &["PLATE-1"]))
        .await
        .unwrap();
    let error = c
        .put_product("plate", record("Plate, renamed", &["PLATE-2", "MUG-1"]))
        .await
        .unwrap_err();
    match &error {
        CommentsError::Conflict(message) => assert!(
            message.starts_with("skus: [1]: \"MUG-1\" is a SKU of product mug"),
            "{message}"
        ),
        other => panic!("{other:?}"),
    }
    // Nothing of the refused write is stored: neither the record nor the
    // SKU it would have gained.
    let overview = c.product_overview("plate").await.unwrap();
    assert_eq!(overview.name(), "Plate");
    assert_eq!(
        holders(c, &["MUG-1", "PLATE-1", "PLATE-2"]).await,
        pairs(&[("MUG-1", "mug"), ("PLATE-1", "plate")])
    );
}

#[tokio::test]
async fn racing_writes_of_one_product_leave_the_lookups_of_the_winner() {
    let f = fixture(Moderation::Off).await;
    let c = &f.comments;
    let writes = (0..8).map(|n| {
        let skus = [format!("SKU-{n}"), format!("SKU-{}", n + 1)];
        async move {
            let skus: Vec<&str> = skus.iter().map(String::as_str).collect();
            c.put_product("mug", record(&format!("Mug {n}"), &skus))
                .await
        }
    });
    for outcome in futures::future::join_all(writes).await {
        match outcome {
            // A write that kept losing races is told to try again.
            Ok(()) | Err(CommentsError::Unavailable { .. }) => {}
            Err(other) => panic!("{other:?}"),
        }
    }
    let overview = c.product_overview("mug").await.unwrap();
    let stored = overview.record.as_ref().unwrap().skus.clone();
    let all: Vec<String> = (0..=8).map(|n| format!("SKU-{n}")).collect();
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let expected: Vec<(String, String)> = {
        let mut expected: Vec<_> = stored
            .iter()
            .map(|sku| (sku.clone(), "mug".to_owned()))
            .collect();
        expected.sort();
        expected
    };
    assert_eq!(holders(c, &all).await, expected, "record {stored:?}");
}
