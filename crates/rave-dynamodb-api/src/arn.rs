//! The ARNs rave hands out and reads back: a table's, and its stream's
//! (`<table ARN>/stream/<label>`, the label being the stream's creation
//! time). Every one carries the same account and region.

use crate::metadata::TableMetadata;

/// The account and region in every ARN rave hands out: rave is one local
/// database, not a region of an account.
const ARN_PREFIX: &str = "arn:aws:dynamodb:local:000000000000:table/";

/// The ARN of the table `name`.
pub(crate) fn table_arn(name: &str) -> String {
    format!("{ARN_PREFIX}{name}")
}

/// The table name an ARN rave handed out names; `None` for any other
/// string. What follows the name (`/stream/...`) is left on it.
pub(crate) fn table_in_arn(arn: &str) -> Option<&str> {
    arn.strip_prefix(ARN_PREFIX)
}

/// `YYYY-MM-DDTHH:MM:SS.mmm` of the stream's creation (with the table, or
/// by UpdateTable since): a stream's label.
pub(crate) fn stream_label(metadata: Option<&TableMetadata>) -> String {
    let created_ms = metadata
        .and_then(|m| m.stream_enabled_at.or(m.created))
        .map_or(0, |seconds| (seconds * 1000.0) as i128);
    let format = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]"
    );
    time::OffsetDateTime::from_unix_timestamp_nanos(created_ms * 1_000_000)
        .ok()
        .and_then(|at| at.format(&format).ok())
        .unwrap_or_else(|| "1970-01-01T00:00:00.000".to_owned())
}

/// The ARN of the stream `label` of the table `table`.
pub(crate) fn stream_arn(table: &str, label: &str) -> String {
    format!("{}/stream/{label}", table_arn(table))
}

/// Whether `arn` has the shape of a DynamoDB table's ARN:
/// `arn:PARTITION:dynamodb:REGION:ACCOUNT:table/NAME`.
pub(crate) fn is_table_arn(arn: &str) -> bool {
    let parts: Vec<&str> = arn.splitn(6, ':').collect();
    matches!(
        parts.as_slice(),
        ["arn", partition, "dynamodb", region, account, resource]
            if !partition.is_empty()
                && !region.is_empty()
                && account.len() == 12
                && account.bytes().all(|b| b.is_ascii_digit())
                && resource
                    .strip_prefix("table/")
                    .is_some_and(|name| !name.is_empty() && !name.contains('/'))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_arns_are_told_from_other_strings() {
        assert!(is_table_arn(
            "arn:aws:dynamodb:us-east-1:000000000000:table/t"
        ));
        assert!(!is_table_arn(
            "arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/x"
        ));
        assert!(!is_table_arn("arn:aws:s3:us-east-1:000000000000:table/t"));
        assert!(!is_table_arn("not-a-valid-arn"));
    }
}
