//! DynamoDB's operations, one file per operation or per small family, each
//! named as DynamoDB names it. `protocol`'s operation table is their index:
//! it maps an `X-Amz-Target` to the function here that answers it. An
//! operation reads its members with `request`, runs on the engine through
//! [`crate::api::DynamoApi`] and answers DynamoDB JSON.

pub(crate) mod batch;
pub(crate) mod create_table;
pub(crate) mod delete_table;
pub(crate) mod describe_endpoints;
pub(crate) mod describe_limits;
pub(crate) mod describe_table;
pub(crate) mod items;
pub(crate) mod list_tables;
pub(crate) mod partiql;
pub(crate) mod query_scan;
pub(crate) mod streams;
pub(crate) mod tags;
pub(crate) mod time_to_live;
pub(crate) mod transact;
pub(crate) mod update_table;
