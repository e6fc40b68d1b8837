//! Product families on the embedded engine: the groups' oracle (in
//! rave-conformance, so that the DynamoDB backend runs it too), and what a
//! family refuses.

mod common;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use common::{catch_up, fixture, new_comment, stats_feed};
use futures::FutureExt;
use proptest::prelude::*;
use rave_comments::{CommentsError, ListRequest, Moderation, ProductRecord};
use rave_conformance::groups::{check_group_walk, group_walk};
use rave_conformance::statistics::drain;

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn walking_a_group_returns_each_variants_match_once_in_order(walk in group_walk()) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let f = fixture(Moderation::Off).await;
            let consumer = stats_feed(&f.engine).await;
            let aggregate = || drain(&f.comments, &consumer).boxed();
            check_group_walk(&f.comments, walk, &aggregate).await
        })?;
    }
}

fn variant_of(group: Option<&str>) -> ProductRecord {
    ProductRecord {
        name: "Tee".into(),
        group: group.map(str::to_owned),
        ..ProductRecord::default()
    }
}

fn field_of(error: CommentsError) -> &'static str {
    match error {
        CommentsError::Invalid { field, .. } => field,
        other => panic!("not a 400: {other:?}"),
    }
}

#[tokio::test]
async fn a_group_cycle_or_a_bad_group_is_refused_naming_the_field_and_changes_nothing() {
    let f = fixture(Moderation::Off).await;
    let c = &f.comments;
    c.put_product("tee-red", variant_of(Some("tee")))
        .await
        .unwrap();
    c.create("tee-red", new_comment("en", 5, "red"), None)
        .await
        .unwrap();

    // Its own group; a group id that is no id.
    assert_eq!(
        field_of(
            c.put_product("tee-blue", variant_of(Some("tee-blue")))
                .await
                .unwrap_err()
        ),
        "group"
    );
    assert_eq!(
        field_of(
            c.put_product("tee-blue", variant_of(Some("no spaces")))
                .await
                .unwrap_err()
        ),
        "group"
    );
    // The group itself becoming a variant of another group (tee → shirts).
    assert_eq!(
        field_of(
            c.put_product("tee", variant_of(Some("shirts")))
                .await
                .unwrap_err()
        ),
        "group"
    );
    // A variant becoming the group of another product (a second level).
    assert_eq!(
        field_of(
            c.put_product("tee-green", variant_of(Some("tee-red")))
                .await
                .unwrap_err()
        ),
        "group"
    );
    // A cycle: tee-red's group made a variant of tee-red.
    assert_eq!(
        field_of(
            c.put_product("tee", variant_of(Some("tee-red")))
                .await
                .unwrap_err()
        ),
        "group"
    );

    // Nothing changed: one variant, no record for the refused ones.
    let variants: Vec<String> = c
        .group_variants("tee")
        .await
        .unwrap()
        .iter()
        .map(|p| p.to_string())
        .collect();
    assert_eq!(variants, ["tee-red"]);
    for refused in ["tee-blue", "tee-green", "shirts"] {
        assert!(
            c.group_variants(refused).await.unwrap().is_empty(),
            "{refused}"
        );
        assert!(
            c.product_overview(refused).await.unwrap().record.is_none(),
            "{refused}"
        );
    }
    assert!(c.product_overview("tee").await.unwrap().record.is_none());

    // A product is in one group: moving it leaves the first.
    c.put_product("tee-red", variant_of(Some("shirts")))
        .await
        .unwrap();
    assert!(c.group_variants("tee").await.unwrap().is_empty());
    assert_eq!(c.group_variants("shirts").await.unwrap().len(), 1);
    // Once its last variant left, a group may become a variant itself.
    c.put_product("tee", variant_of(Some("shirts")))
        .await
        .unwrap();
    assert_eq!(c.group_variants("shirts").await.unwrap().len(), 2);
    c.put_product("tee-red", variant_of(None)).await.unwrap();
    assert_eq!(c.group_variants("shirts").await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_group_listing_refuses_a_cursor_of_another_group_or_a_product() {
    let f = fixture(Moderation::Off).await;
    let c = &f.comments;
    for (product, group) in [("a1", "a"), ("a2", "a"), ("b1", "b")] {
        c.put_product(product, variant_of(Some(group)))
            .await
            .unwrap();
        for _ in 0..3 {
            c.create(product, new_comment("en", 4, "x"), None)
                .await
                .unwrap();
        }
    }
    let first = c
        .list_group(&ListRequest {
            product: "a",
            limit: 2,
            ..ListRequest::default()
        })
        .await
        .unwrap();
    let cursor = first.next_cursor.unwrap();
    let of = |product| ListRequest {
        product,
        limit: 2,
        cursor: Some(&cursor),
        ..ListRequest::default()
    };
    assert!(matches!(
        c.list_group(&of("b")).await,
        Err(CommentsError::BadCursor(_))
    ));
    assert!(matches!(
        c.list(&of("a")).await,
        Err(CommentsError::BadCursor(_))
    ));
    assert!(c.list_group(&of("a")).await.is_ok());
    let bad = c
        .list_group(&ListRequest {
            product: "a b",
            limit: 2,
            ..ListRequest::default()
        })
        .await;
    assert_eq!(field_of(bad.unwrap_err()), "group");
}

#[tokio::test]
async fn a_group_holds_at_most_fifty_variants_and_lists_each_with_every_rating_partition() {
    let f = fixture(Moderation::Off).await;
    let c = &f.comments;
    for variant in 0..rave_comments::MAX_VARIANTS {
        c.put_product(&format!("v{variant}"), variant_of(Some("big")))
            .await
            .unwrap();
    }
    let refused = c
        .put_product("one-more", variant_of(Some("big")))
        .await
        .unwrap_err();
    assert_eq!(field_of(refused), "group");
    // Rewriting a variant already in the group is no 51st.
    c.put_product("v0", variant_of(Some("big"))).await.unwrap();
    c.create("v49", new_comment("en", 3, "x"), None)
        .await
        .unwrap();
    // The family's five rating partitions, one after another (highest
    // first), whatever the number of variants.
    let page = c
        .list_group(&ListRequest {
            product: "big",
            sort: rave_comments::Sort::Highest,
            limit: 5,
            ..ListRequest::default()
        })
        .await
        .unwrap();
    assert_eq!(page.items.len(), 1);
    assert_eq!(page.plan.queries.len(), 5);
    assert!(
        page.plan
            .queries
            .iter()
            .all(|q| q.partition_key.starts_with("FAMILY#big/"))
    );
    let empty = c
        .list_group(&ListRequest {
            product: "none",
            limit: 5,
            ..ListRequest::default()
        })
        .await
        .unwrap();
    assert!(empty.items.is_empty() && empty.next_cursor.is_none());
}

/// The engine, running `before_next_transaction` (once) just before the
/// next TransactWriteItems: what another writer does between a read and
/// the write that follows it; and, while `transactions_left` counts down
/// to zero, refusing every TransactWriteItems after that many (a process
/// that stops mid-job).
#[derive(Clone, Default)]
struct Interleaved {
    engine: Option<rave_engine::Engine>,
    before_next_transaction: Arc<Mutex<Option<futures::future::BoxFuture<'static, ()>>>>,
    transactions_left: Arc<Mutex<Option<usize>>>,
}

impl Interleaved {
    fn over(engine: &rave_engine::Engine) -> Interleaved {
        Interleaved {
            engine: Some(engine.clone()),
            ..Interleaved::default()
        }
    }

    fn engine(&self) -> &rave_engine::Engine {
        self.engine.as_ref().expect("an engine")
    }
}

fn domain<S: rave_store::Store>(store: S, moderation: Moderation) -> rave_comments::Comments<S> {
    rave_comments::Comments::new(
        store,
        rave_comments::Config {
            table: "rave".into(),
            cursor_key: rave_comments::CursorKey::new([9; 32]),
            moderation,
        },
    )
}

impl rave_store::Store for Interleaved {
    async fn create_table(
        &self,
        definition: rave_store::TableDefinition,
    ) -> rave_store::Result<()> {
        self.engine().create_table(definition).await
    }
    async fn describe_table(&self, table: &str) -> rave_store::Result<rave_store::TableDefinition> {
        self.engine().describe_table(table).await
    }
    async fn get_item(
        &self,
        input: rave_store::GetItemInput,
    ) -> rave_store::Result<rave_store::GetItemOutput> {
        self.engine().get_item(input).await
    }
    async fn put_item(
        &self,
        input: rave_store::PutItemInput,
    ) -> rave_store::Result<rave_store::WriteOutput> {
        self.engine().put_item(input).await
    }
    async fn update_item(
        &self,
        input: rave_store::UpdateItemInput,
    ) -> rave_store::Result<rave_store::WriteOutput> {
        self.engine().update_item(input).await
    }
    async fn delete_item(
        &self,
        input: rave_store::DeleteItemInput,
    ) -> rave_store::Result<rave_store::WriteOutput> {
        self.engine().delete_item(input).await
    }
    async fn query(&self, input: rave_store::QueryInput) -> rave_store::Result<rave_store::Page> {
        self.engine().query(input).await
    }
    async fn scan(&self, input: rave_store::ScanInput) -> rave_store::Result<rave_store::Page> {
        self.engine().scan(input).await
    }
    async fn batch_get_item(
        &self,
        input: rave_store::BatchGetItemInput,
    ) -> rave_store::Result<rave_store::BatchGetItemOutput> {
        self.engine().batch_get_item(input).await
    }
    async fn batch_write_item(
        &self,
        input: rave_store::BatchWriteItemInput,
    ) -> rave_store::Result<rave_store::BatchWriteItemOutput> {
        self.engine().batch_write_item(input).await
    }
    async fn transact_write_items(
        &self,
        input: rave_store::TransactWriteItemsInput,
    ) -> rave_store::Result<rave_store::TransactWriteItemsOutput> {
        if let Some(left) = self.transactions_left.lock().unwrap().as_mut() {
            match left.checked_sub(1) {
                Some(fewer) => *left = fewer,
                None => return Err(rave_store::StoreError::validation("stopped")),
            }
        }
        let interleaved = self.before_next_transaction.lock().unwrap().take();
        if let Some(write) = interleaved {
            write.await;
        }
        self.engine().transact_write_items(input).await
    }
}

#[tokio::test]
async fn a_create_racing_a_move_ends_in_the_family_the_record_names() {
    let f = fixture(Moderation::Off).await;
    let racing = Interleaved::over(&f.engine);
    let c = domain(racing.clone(), Moderation::Off);
    // One comment of each move's direction: into a group, out of one, and
    // from one group to another, each after the create read the record.
    for (before, after) in [
        (None, Some("tee")),
        (Some("tee"), None),
        (Some("tee"), Some("shirts")),
    ] {
        f.comments
            .put_product("tee-red", variant_of(before))
            .await
            .unwrap();
        let mover = domain(f.engine.clone(), Moderation::Off);
        *racing.before_next_transaction.lock().unwrap() = Some(
            async move {
                mover
                    .put_product("tee-red", variant_of(after))
                    .await
                    .unwrap();
            }
            .boxed(),
        );
        let created = c
            .create("tee-red", new_comment("en", 5, "raced"), None)
            .await
            .unwrap()
            .comment;
        assert!(racing.before_next_transaction.lock().unwrap().is_none());
        assert_eq!(created.group.as_ref().map(|g| g.as_str()), after);
        assert_eq!(c.get(&created.id).await.unwrap().group, created.group);
        for group in ["tee", "shirts"] {
            let listed = c
                .list_group(&ListRequest {
                    product: group,
                    limit: 50,
                    ..ListRequest::default()
                })
                .await
                .unwrap();
            let shown = listed.items.iter().any(|item| item.id == created.id);
            assert_eq!(shown, after == Some(group), "{group} after {after:?}");
        }
    }
}

async fn group_ids<S: rave_store::Store>(
    c: &rave_comments::Comments<S>,
    group: &str,
) -> Vec<String> {
    c.list_group(&ListRequest {
        product: group,
        limit: 100,
        ..ListRequest::default()
    })
    .await
    .unwrap()
    .items
    .into_iter()
    .map(|comment| comment.id)
    .collect()
}

#[tokio::test]
async fn a_move_stopped_midway_keeps_its_marker_and_a_restart_finishes_it() {
    let f = fixture(Moderation::Off).await;
    let faulty = Interleaved::over(&f.engine);
    let c = domain(faulty.clone(), Moderation::Off);
    c.put_product("tee-red", variant_of(None)).await.unwrap();
    let mut visible = Vec::new();
    for rating in 1..=5 {
        let created = c.create("tee-red", new_comment("en", rating, "x"), None);
        visible.push(created.await.unwrap().comment.id);
    }
    // One comment waits in the queue: the job finds it there.
    let held = domain(f.engine.clone(), Moderation::Pre)
        .create("tee-red", new_comment("en", 2, "held"), None)
        .await
        .unwrap()
        .comment;
    assert_eq!(c.run_pending_moves().await.unwrap(), 0, "no group, no move");

    c.put_product("tee-red", variant_of(Some("tee")))
        .await
        .unwrap();
    let pending = c.pending_moves().await.unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].product_id.as_str(), "tee-red");
    assert_eq!(pending[0].to.as_ref().map(|g| g.as_str()), Some("tee"));
    assert_eq!((pending[0].from.as_ref(), pending[0].total), (None, None));
    // The job stops after rewriting three comments.
    *faulty.transactions_left.lock().unwrap() = Some(3);
    assert!(c.run_pending_moves().await.is_err());
    let pending = c.pending_moves().await.unwrap();
    assert_eq!(pending.len(), 1, "the marker outlives the stopped job");
    assert_eq!((pending[0].done, pending[0].total), (3, Some(6)));
    assert_eq!(
        group_ids(&c, "tee").await.len(),
        3,
        "the listing follows the job"
    );
    assert_eq!(c.group_stats("tee", None).await.unwrap().variants.len(), 1);

    // Restarted: a new process finds the marker and finishes the move.
    let restarted = domain(f.engine.clone(), Moderation::Off);
    let found = restarted.pending_moves().await.unwrap();
    assert_eq!((found.len(), found[0].total), (1, None));
    assert_eq!(restarted.run_pending_moves().await.unwrap(), 1);
    assert!(restarted.pending_moves().await.unwrap().is_empty());
    let mut listed = group_ids(&restarted, "tee").await;
    listed.sort();
    visible.sort();
    assert_eq!(listed, visible, "each visible comment once");
    let held = restarted.get(&held.id).await.unwrap();
    assert_eq!(held.group.as_ref().map(|g| g.as_str()), Some("tee"));
    assert!(restarted.run_pending_moves().await.unwrap() == 0);
}

fn key(pk: &str, sk: &str) -> rave_store::Item {
    [
        ("PK".to_owned(), rave_store::AttributeValue::s(pk)),
        ("SK".to_owned(), rave_store::AttributeValue::s(sk)),
    ]
    .into_iter()
    .collect()
}

async fn put_raw(engine: &rave_engine::Engine, item: rave_store::Item) {
    use rave_store::Store;
    engine
        .put_item(rave_store::PutItemInput {
            table: "rave".into(),
            item,
            condition: None,
            return_values: rave_store::ReturnValues::None,
        })
        .await
        .unwrap();
}

async fn delete_raw(engine: &rave_engine::Engine, key: rave_store::Item) {
    use rave_store::Store;
    engine
        .delete_item(rave_store::DeleteItemInput {
            table: "rave".into(),
            key,
            condition: None,
            return_values: rave_store::ReturnValues::None,
        })
        .await
        .unwrap();
}

#[tokio::test]
async fn reconcile_finds_and_mends_comments_families_copies_and_member_items() {
    use rave_store::Store;
    let f = fixture(Moderation::Off).await;
    let c = &f.comments;
    let feed = stats_feed(&f.engine).await;
    c.put_product("tee-red", variant_of(Some("tee")))
        .await
        .unwrap();
    c.put_product("tee-blue", variant_of(Some("tee")))
        .await
        .unwrap();
    let old = c
        .create(
            "tee-red",
            new_comment("en", 5, "stored before families"),
            None,
        )
        .await
        .unwrap()
        .comment;
    let kept = c
        .create("tee-blue", new_comment("en", 4, "in its family"), None)
        .await
        .unwrap()
        .comment;
    catch_up(c, &feed).await;
    assert!(
        c.reconcile(1, false, &|_| {})
            .await
            .unwrap()
            .drift
            .is_empty()
    );

    // What a store written before families had copies looks like: the
    // comment names no family and has no family copy; and member items
    // that drifted: tee-red's gone, a stray one in mugs, tee's head wrong.
    let comment_key = key(
        &format!("COMMENT#{}", old.id),
        &format!("COMMENT#{}", old.id),
    );
    let mut item = f
        .engine
        .get_item(rave_store::GetItemInput {
            table: "rave".into(),
            key: comment_key.clone(),
            consistent_read: true,
        })
        .await
        .unwrap()
        .item
        .unwrap();
    item.remove("details");
    put_raw(&f.engine, item).await;
    delete_raw(&f.engine, key(&format!("COMMENT#{}", old.id), "FAMILY")).await;
    delete_raw(&f.engine, key("GROUP#tee", "MEMBER#tee-red")).await;
    put_raw(&f.engine, key("GROUP#mugs", "MEMBER#tee-blue")).await;
    let mut head = key("GROUP#tee", "GROUP");
    head.insert("members".into(), rave_store::AttributeValue::N(5u64.into()));
    put_raw(&f.engine, head).await;
    assert_eq!(
        group_ids(c, "tee").await,
        std::slice::from_ref(&kept.id),
        "the old one is missing"
    );

    catch_up(c, &feed).await;
    let report = c.reconcile(1, false, &|_| {}).await.unwrap();
    let drifted: BTreeSet<String> = report.drift.iter().map(|d| d.key.clone()).collect();
    let expected: BTreeSet<String> = [
        format!("COMMENT#{0}/COMMENT#{0}", old.id),
        format!("COMMENT#{}/FAMILY", old.id),
        "GROUP#tee/MEMBER#tee-red".to_owned(),
        "GROUP#mugs/MEMBER#tee-blue".to_owned(),
        "GROUP#tee/GROUP".to_owned(),
    ]
    .into_iter()
    .collect();
    assert_eq!(drifted, expected);
    assert!(
        c.group_variants("mugs").await.unwrap().len() == 1,
        "reported, not fixed"
    );

    let fixed = c.reconcile(1, true, &|_| {}).await.unwrap();
    assert_eq!(fixed.drift.len(), expected.len());
    catch_up(c, &feed).await;
    let after = c.reconcile(1, false, &|_| {}).await.unwrap();
    assert!(after.drift.is_empty(), "{:?}", after.drift);
    let mut listed = group_ids(c, "tee").await;
    listed.sort();
    let mut both = vec![old.id.clone(), kept.id.clone()];
    both.sort();
    assert_eq!(listed, both);
    assert_eq!(
        c.get(&old.id).await.unwrap().group.map(|g| g.to_string()),
        Some("tee".to_owned())
    );
    let variants: Vec<String> = c
        .group_variants("tee")
        .await
        .unwrap()
        .iter()
        .map(|p| p.to_string())
        .collect();
    assert_eq!(variants, ["tee-blue", "tee-red"]);
    assert!(c.group_variants("mugs").await.unwrap().is_empty());
    // The head counts its two members again: a move out leaves one, and
    // until the move's job has run, its comment is reported misplaced.
    c.put_product("tee-red", variant_of(None)).await.unwrap();
    catch_up(c, &feed).await;
    let moving = c.reconcile(1, false, &|_| {}).await.unwrap();
    let moving: BTreeSet<String> = moving.drift.iter().map(|d| d.key.clone()).collect();
    let misplaced: BTreeSet<String> = [
        format!("COMMENT#{0}/COMMENT#{0}", old.id),
        format!("COMMENT#{}/FAMILY", old.id),
    ]
    .into_iter()
    .collect();
    assert_eq!(moving, misplaced);
    c.run_pending_moves().await.unwrap();
    catch_up(c, &feed).await;
    assert!(
        c.reconcile(1, false, &|_| {})
            .await
            .unwrap()
            .drift
            .is_empty()
    );
}

/// What a family copy adds to a post (`families`' doc): the copy, written
/// transactionally (2 units a KB), and its entries in the four listing
/// and four `helpful` indexes.
#[tokio::test]
async fn write_units_of_a_create_in_a_family() {
    let f = fixture(Moderation::Off).await;
    let c = &f.comments;
    c.put_product("tee-red", variant_of(Some("tee")))
        .await
        .unwrap();
    let before = c.usage().write_units();
    c.create("tee-red", new_comment("en", 5, "grouped"), None)
        .await
        .unwrap();
    let grouped = c.usage().write_units() - before;
    let before = c.usage().write_units();
    c.create("alone", new_comment("en", 5, "plain"), None)
        .await
        .unwrap();
    let plain = c.usage().write_units() - before;
    assert_eq!((plain, grouped), (13.0, 23.0));
}
