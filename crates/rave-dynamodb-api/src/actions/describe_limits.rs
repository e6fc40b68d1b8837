//! DescribeLimits: DynamoDB's default quotas, which rave does not enforce
//! but reports as an account that never asked for more would see them.

use serde_json::{Value, json};

use crate::api::DynamoApi;
use crate::error::ApiError;
use crate::request::Members;

/// DynamoDB's default quotas, as DescribeLimits reports them for an
/// account that never asked for more.
const ACCOUNT_MAX_CAPACITY_UNITS: u64 = 80_000;
const TABLE_MAX_CAPACITY_UNITS: u64 = 40_000;

pub(crate) async fn describe_limits(
    _api: &DynamoApi,
    _body: Members<'_>,
) -> Result<Value, ApiError> {
    Ok(json!({
        "AccountMaxReadCapacityUnits": ACCOUNT_MAX_CAPACITY_UNITS,
        "AccountMaxWriteCapacityUnits": ACCOUNT_MAX_CAPACITY_UNITS,
        "TableMaxReadCapacityUnits": TABLE_MAX_CAPACITY_UNITS,
        "TableMaxWriteCapacityUnits": TABLE_MAX_CAPACITY_UNITS,
    }))
}
