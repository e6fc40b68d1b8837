//! A product family's declaration of sub-ratings and fit, on the embedded
//! engine: a variant whose record declares no attributes is asked its
//! group's, one declaring its own keeps them, moving a variant changes what
//! it is asked, and an answer the effective declaration does not know is a
//! 400 naming `attributes.<name>` that stores nothing (posts, edits,
//! imports). The revision of a variant asking its group's follows the
//! group's record.

mod common;

use std::collections::BTreeMap;

use common::{catch_up, fixture, new_comment, stats_feed};
use rave_comments::{
    AttributeDeclaration, AttributeInput, AttributeKind, AttributeName, CommentPatch, Comments,
    CommentsError, DeclaredAttributes, Filter, ImportComment, ListRequest, Moderation, NewComment,
    ProductRecord, Timestamp, VoteCounts,
};
use rave_engine::Engine;

fn rating(name: &str) -> AttributeDeclaration {
    AttributeDeclaration {
        name: AttributeName::parse(name).unwrap(),
        kind: AttributeKind::Rating,
    }
}

/// The family's declaration: `quality` and `fit`.
fn tee_declaration() -> DeclaredAttributes {
    DeclaredAttributes::new(vec![
        rating("quality"),
        AttributeDeclaration {
            name: AttributeName::parse("fit").unwrap(),
            kind: AttributeKind::Choice(vec![
                "runs_small".into(),
                "true_to_size".into(),
                "runs_large".into(),
            ]),
        },
    ])
    .unwrap()
}

fn record(group: Option<&str>, attributes: DeclaredAttributes) -> ProductRecord {
    ProductRecord {
        name: "Tee".into(),
        group: group.map(str::to_owned),
        attributes,
        ..ProductRecord::default()
    }
}

/// `tee` declares quality and fit; `tee-red` declares nothing, `tee-blue`
/// its own `value`; `mug` (another family) declares `sturdiness`.
async fn family(c: &Comments<Engine>) {
    c.put_product("tee", record(None, tee_declaration()))
        .await
        .unwrap();
    c.put_product("mug", record(None, declared(&["sturdiness"])))
        .await
        .unwrap();
    c.put_product(
        "tee-red",
        record(Some("tee"), DeclaredAttributes::default()),
    )
    .await
    .unwrap();
    c.put_product("tee-blue", record(Some("tee"), declared(&["value"])))
        .await
        .unwrap();
}

/// Rating attributes named `names`.
fn declared(names: &[&str]) -> DeclaredAttributes {
    DeclaredAttributes::new(names.iter().map(|name| rating(name)).collect()).unwrap()
}

fn answers(pairs: &[(&str, AttributeInput)]) -> BTreeMap<String, AttributeInput> {
    pairs
        .iter()
        .map(|(name, input)| ((*name).to_owned(), input.clone()))
        .collect()
}

fn answering(pairs: &[(&str, AttributeInput)]) -> NewComment {
    NewComment {
        attributes: answers(pairs),
        ..new_comment("en", 4, "answers")
    }
}

fn attribute_field(error: CommentsError) -> String {
    match error {
        CommentsError::InvalidAttribute { field, .. } => field,
        other => panic!("not an attribute's 400: {other:?}"),
    }
}

async fn stored_on(c: &Comments<Engine>, product: &str) -> usize {
    c.list(&ListRequest {
        product,
        filter: Filter::default(),
        sort: Default::default(),
        limit: 100,
        cursor: None,
    })
    .await
    .unwrap()
    .items
    .len()
}

fn names(declared: &DeclaredAttributes) -> Vec<&str> {
    declared.iter().map(|d| d.name.as_str()).collect()
}

#[tokio::test]
async fn a_variant_declaring_nothing_is_asked_its_groups_and_one_declaring_its_own_keeps_them() {
    let f = fixture(Moderation::Off).await;
    let c = &f.comments;
    family(c).await;

    assert_eq!(
        names(&c.product_overview("tee-red").await.unwrap().asked),
        ["quality", "fit"]
    );
    assert_eq!(
        names(&c.product_overview("tee-blue").await.unwrap().asked),
        ["value"]
    );
    let red = c
        .create(
            "tee-red",
            answering(&[
                ("quality", AttributeInput::Integer(4)),
                ("fit", AttributeInput::Text("runs_small".into())),
            ]),
            None,
        )
        .await
        .unwrap();
    assert_eq!(red.comment.attributes.iter().count(), 2);
    c.create(
        "tee-blue",
        answering(&[("value", AttributeInput::Integer(2))]),
        None,
    )
    .await
    .unwrap();

    // What the effective declaration does not know, or a value out of range.
    for (product, given, field) in [
        (
            "tee-red",
            vec![("value", AttributeInput::Integer(3))],
            "attributes.value",
        ),
        (
            "tee-red",
            vec![("fit", AttributeInput::Text("huge".into()))],
            "attributes.fit",
        ),
        (
            "tee-blue",
            vec![("quality", AttributeInput::Integer(3))],
            "attributes.quality",
        ),
        (
            "tee-blue",
            vec![("value", AttributeInput::Integer(6))],
            "attributes.value",
        ),
    ] {
        let error = c
            .create(product, answering(&given), None)
            .await
            .unwrap_err();
        assert_eq!(attribute_field(error), field, "{product} {given:?}");
    }
    assert_eq!(stored_on(c, "tee-red").await, 1, "nothing stored");
    assert_eq!(stored_on(c, "tee-blue").await, 1, "nothing stored");

    // An edit is checked against the same declaration, and changes nothing
    // when refused.
    let patch = |pairs: &[(&str, AttributeInput)]| CommentPatch {
        attributes: Some(answers(pairs)),
        ..CommentPatch::default()
    };
    let error = c
        .edit(
            &red.comment.id,
            &patch(&[("value", AttributeInput::Integer(3))]),
        )
        .await
        .unwrap_err();
    assert_eq!(attribute_field(error), "attributes.value");
    assert_eq!(
        c.get(&red.comment.id).await.unwrap().attributes,
        red.comment.attributes
    );
    let edited = c
        .edit(
            &red.comment.id,
            &patch(&[("quality", AttributeInput::Integer(1))]),
        )
        .await
        .unwrap();
    assert_eq!(edited.attributes.iter().count(), 1);

    // The group's statistics sum its variants' answers.
    let feed = stats_feed(&f.engine).await;
    catch_up(c, &feed).await;
    let group = c.group_stats("tee", None).await.unwrap().stats;
    let counted = |name: &str| {
        group
            .attributes
            .get(&AttributeName::parse(name).unwrap())
            .map(|stats| stats.distribution.clone())
    };
    assert_eq!(counted("quality").unwrap()["1"], 1);
    assert_eq!(counted("value").unwrap()["2"], 1);
    assert_eq!(counted("fit"), None, "the edit removed red's fit");
}

#[tokio::test]
async fn moving_a_variant_to_another_group_changes_what_it_is_asked() {
    let f = fixture(Moderation::Off).await;
    let c = &f.comments;
    family(c).await;
    let before = c.product_overview("tee-red").await.unwrap();
    c.put_product(
        "tee-red",
        record(Some("mug"), DeclaredAttributes::default()),
    )
    .await
    .unwrap();
    let after = c.product_overview("tee-red").await.unwrap();
    assert_eq!(names(&after.asked), ["sturdiness"]);
    assert_ne!(before.revision, after.revision);
    let error = c
        .create(
            "tee-red",
            answering(&[("quality", AttributeInput::Integer(4))]),
            None,
        )
        .await
        .unwrap_err();
    assert_eq!(attribute_field(error), "attributes.quality");
    assert_eq!(stored_on(c, "tee-red").await, 0, "nothing stored");
    c.create(
        "tee-red",
        answering(&[("sturdiness", AttributeInput::Integer(5))]),
        None,
    )
    .await
    .unwrap();
    // Out of any family, it asks nothing.
    c.put_product("tee-red", record(None, DeclaredAttributes::default()))
        .await
        .unwrap();
    assert!(
        c.product_overview("tee-red")
            .await
            .unwrap()
            .asked
            .is_empty()
    );
    let error = c
        .create(
            "tee-red",
            answering(&[("sturdiness", AttributeInput::Integer(5))]),
            None,
        )
        .await
        .unwrap_err();
    assert_eq!(attribute_field(error), "attributes.sturdiness");
}

#[tokio::test]
async fn a_change_of_the_groups_declaration_changes_the_revision_of_the_variants_asking_it() {
    let f = fixture(Moderation::Off).await;
    let c = &f.comments;
    family(c).await;
    c.put_product("plain", record(None, DeclaredAttributes::default()))
        .await
        .unwrap();
    let revisions = || async {
        let mut revisions = Vec::new();
        for product in ["tee-red", "tee-blue", "plain", "tee"] {
            let revision = c.product_revision(product).await.unwrap();
            // The cheap revision is the overview's.
            assert_eq!(
                revision,
                c.product_overview(product).await.unwrap().revision,
                "{product}"
            );
            revisions.push(revision);
        }
        revisions
    };
    let before = revisions().await;
    c.put_product("tee", record(None, declared(&["quality", "value"])))
        .await
        .unwrap();
    let after = revisions().await;
    assert_ne!(after[0], before[0], "tee-red asks the group's");
    assert_eq!(after[1], before[1], "tee-blue asks its own");
    assert_eq!(after[2], before[2], "plain is in no family");
    assert_ne!(after[3], before[3], "the group's own record");
    assert_eq!(
        names(&c.product_overview("tee-red").await.unwrap().asked),
        ["quality", "value"]
    );
    // A group without a record of its own: its variant asks nothing, and
    // asks what the record declares once there is one.
    c.put_product(
        "cup-red",
        record(Some("cup"), DeclaredAttributes::default()),
    )
    .await
    .unwrap();
    let without = c.product_overview("cup-red").await.unwrap();
    assert!(without.asked.is_empty());
    c.put_product("cup", record(None, declared(&["sturdiness"])))
        .await
        .unwrap();
    let with = c.product_overview("cup-red").await.unwrap();
    assert_ne!(with.revision, without.revision);
    assert_eq!(names(&with.asked), ["sturdiness"]);
}

fn imported(product: &str, body: &str, given: &[(&str, AttributeInput)]) -> ImportComment {
    let mut comment = answering(given);
    comment.body = body.into();
    comment.created_at = Some(Timestamp::parse("2025-03-04T05:06:07.000Z").unwrap());
    ImportComment {
        product: product.into(),
        id: None,
        status: None,
        comment,
        reply: None,
        verified_purchase: false,
        votes: VoteCounts::default(),
        source: None,
        incentivized: false,
        image_urls: Vec::new(),
        email: None,
    }
}

#[tokio::test]
async fn an_import_checks_each_variant_against_what_it_is_asked_and_a_bad_batch_stores_nothing() {
    let f = fixture(Moderation::Off).await;
    let c = &f.comments;
    family(c).await;
    let good = vec![
        imported(
            "tee-red",
            "red",
            &[("fit", AttributeInput::Text("runs_large".into()))],
        ),
        imported("tee-blue", "blue", &[("value", AttributeInput::Integer(5))]),
        imported("mug", "mug", &[("sturdiness", AttributeInput::Integer(3))]),
    ];
    let mut bad = good.clone();
    bad.push(imported(
        "tee-red",
        "red again",
        &[("sturdiness", AttributeInput::Integer(3))],
    ));
    let error = c.import(bad).await.unwrap_err();
    assert_eq!(attribute_field(error), "attributes.sturdiness");
    for product in ["tee-red", "tee-blue", "mug"] {
        assert_eq!(stored_on(c, product).await, 0, "{product}: nothing stored");
    }
    let outcome = c.import(good).await.unwrap();
    assert_eq!(outcome.created, 3);
    let red = c.get(&outcome.ids[0]).await.unwrap();
    assert_eq!(
        red.attributes.get("fit").map(|answer| answer.key()),
        Some("runs_large".to_owned())
    );
}
