//! DescribeEndpoints.

use serde_json::{Value, json};

/// DescribeEndpoints: this endpoint is the only one, at the address the
/// client reached it by, and stays so for a day (DynamoDB's cache period).
pub(crate) fn describe_endpoints(host: &str) -> Value {
    json!({"Endpoints": [{"Address": host, "CachePeriodInMinutes": 1440}]})
}
