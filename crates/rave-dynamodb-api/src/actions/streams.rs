//! DynamoDB Streams (`DynamoDBStreams_20120810.*`) on the engine's change
//! stream: ListStreams, DescribeStream, GetShardIterator and GetRecords.
//!
//! Each table's stream is one shard that never closes. Sequence numbers are
//! the engine's, which increase across all tables: a table's records have
//! gaps between their numbers, as DynamoDB's do. The engine records both
//! images of every change; the table's view type is applied when read.
//! Sequence numbers are rendered as 21 digits, as short as DynamoDB's. A
//! removal by Time to Live carries DynamoDB's `userIdentity`.
//!
//! A stream's label is the table's creation time (or when UpdateTable
//! enabled the stream), so an ARN of a deleted and recreated table is not
//! found. A StreamArn shorter than DynamoDB's 37 characters is a
//! ValidationException; one naming no stream of rave's,
//! ResourceNotFoundException.
//!
//! A shard iterator is opaque to the client: the table, the stream label,
//! the position after which to read, and when it was issued (base64), so
//! that it is refused with ExpiredIteratorException after fifteen minutes,
//! as DynamoDB's are.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rave_engine::{EventName, StreamRecord};
use rave_store::{Item, Store, TableDefinition, item_size};
use serde_json::{Value, json};

use crate::api::DynamoApi;
use crate::arn::{stream_arn, stream_label, table_in_arn};
use crate::description::key_schema_json;
use crate::error::{ApiError, ErrorKind};
use crate::metadata::StreamViewType;
use crate::request::{Members, missing, validation_errors};
use crate::wire::item_to_json;

/// How long a shard iterator stays valid.
const ITERATOR_LIFETIME_MS: u64 = 15 * 60 * 1000;
/// The one shard of every stream.
const SHARD_ID: &str = "shardId-00000000000000000001-00000000";
/// Most records (and streams) one call returns, and the default.
const MAX_RECORDS: i64 = 1000;
const MAX_STREAMS: i64 = 100;
/// The region named in stream records, as in rave's ARNs.
const REGION: &str = "local";
/// Digits of a rendered sequence number: DynamoDB's are at least 21 long.
const SEQUENCE_DIGITS: usize = 21;

pub(crate) async fn list_streams(api: &DynamoApi, body: Members<'_>) -> Result<Value, ApiError> {
    let limit = body.integer("Limit")?.unwrap_or(MAX_STREAMS);
    if !(1..=MAX_STREAMS).contains(&limit) {
        return Err(ApiError::validation(format!(
            "1 validation error detected: Value '{limit}' at 'limit' failed to satisfy constraint: Member must have value between 1 and {MAX_STREAMS}"
        )));
    }
    let only = body.string("TableName")?;
    if let Some(table) = only {
        // An unknown table is an error, not an empty list.
        api.engine.describe_table(table).await?;
    }
    let start = body.string("ExclusiveStartStreamArn")?;
    let mut streams = Vec::new();
    for name in api.engine.table_names()? {
        if only.is_some_and(|only| only != name) {
            continue;
        }
        let definition = api.engine.describe_table(&name).await?;
        if !definition.stream_enabled {
            continue;
        }
        let label = stream_label(api.metadata.get(&name)?.as_ref());
        streams.push((stream_arn(&name, &label), name, label));
    }
    let mut after_start = streams
        .iter()
        .filter(|(arn, _, _)| start.is_none_or(|start| arn.as_str() > start));
    let page: Vec<Value> = after_start
        .by_ref()
        .take(limit as usize)
        .map(|(arn, table, label)| json!({"StreamArn": arn, "TableName": table, "StreamLabel": label}))
        .collect();
    let mut response = json!({});
    if after_start.next().is_some()
        && let Some(last) = page.last()
    {
        response["LastEvaluatedStreamArn"] = last["StreamArn"].clone();
    }
    response["Streams"] = Value::Array(page);
    Ok(response)
}

pub(crate) async fn describe_stream(api: &DynamoApi, body: Members<'_>) -> Result<Value, ApiError> {
    let stream = Stream::named(api, body.required_string("StreamArn")?).await?;
    let starting = api
        .engine
        .read_stream(&stream.definition.name, stream.starts_after, 1)?
        .first()
        .map_or_else(
            || api.engine.latest_sequence() + 1,
            |record| record.sequence,
        );
    let shards = match body.string("ExclusiveStartShardId")? {
        Some(start) if start >= SHARD_ID => json!([]),
        _ => json!([{
            "ShardId": SHARD_ID,
            "SequenceNumberRange": {"StartingSequenceNumber": sequence_number(starting)},
        }]),
    };
    let mut description = json!({
        "StreamArn": stream.arn,
        "StreamLabel": stream.label,
        "StreamStatus": "ENABLED",
        "StreamViewType": stream.view.name(),
        "TableName": stream.definition.name,
        "KeySchema": key_schema_json(&stream.definition.key_schema),
        "Shards": shards,
    });
    if let Some(created) = stream.created {
        description["CreationRequestDateTime"] = json!(created);
    }
    Ok(json!({ "StreamDescription": description }))
}

pub(crate) async fn get_shard_iterator(
    api: &DynamoApi,
    body: Members<'_>,
) -> Result<Value, ApiError> {
    let stream = Stream::named(api, body.required_string("StreamArn")?).await?;
    let shard = body.required_string("ShardId")?;
    let kind = body
        .choice(
            "ShardIteratorType",
            &[
                "TRIM_HORIZON",
                "LATEST",
                "AT_SEQUENCE_NUMBER",
                "AFTER_SEQUENCE_NUMBER",
            ],
        )?
        .ok_or_else(|| missing("ShardIteratorType"))?;
    if shard != SHARD_ID {
        return Err(ApiError::new(
            ErrorKind::ResourceNotFound,
            format!("Requested resource not found: Shard does not exist: {shard}"),
        ));
    }
    let given = body.string("SequenceNumber")?;
    let after = match (kind, given) {
        ("TRIM_HORIZON", None) => stream.starts_after,
        ("LATEST", None) => api.engine.latest_sequence(),
        ("AT_SEQUENCE_NUMBER", Some(number)) => parse_sequence(number)?
            .saturating_sub(1)
            .max(stream.starts_after),
        ("AFTER_SEQUENCE_NUMBER", Some(number)) => parse_sequence(number)?.max(stream.starts_after),
        ("TRIM_HORIZON" | "LATEST", Some(_)) => {
            return Err(ApiError::validation(
                "Exactly one of SequenceNumber and a ShardIteratorType of AT_SEQUENCE_NUMBER or AFTER_SEQUENCE_NUMBER must be provided",
            ));
        }
        // As DynamoDB Streams answers a position type without its number.
        _ => {
            return Err(ApiError::validation(
                "One or more parameter values were invalid: Invalid SequenceNumber",
            ));
        }
    };
    if after > api.engine.latest_sequence() {
        return Err(ApiError::validation(format!(
            "Invalid SequenceNumber: {} is beyond the end of the shard",
            given.unwrap_or_default()
        )));
    }
    let iterator = ShardIterator {
        table: stream.definition.name,
        label: stream.label,
        after,
        issued_ms: now_ms(),
    };
    Ok(json!({ "ShardIterator": iterator.encode() }))
}

pub(crate) async fn get_records(api: &DynamoApi, body: Members<'_>) -> Result<Value, ApiError> {
    let text = body
        .string("ShardIterator")?
        .ok_or_else(|| missing("ShardIterator"))?;
    let limit = body.integer("Limit")?.unwrap_or(MAX_RECORDS);
    if !(1..=MAX_RECORDS).contains(&limit) {
        return Err(ApiError::validation(format!(
            "1 validation error detected: Value '{limit}' at 'limit' failed to satisfy constraint: Member must have value between 1 and {MAX_RECORDS}"
        )));
    }
    let iterator = ShardIterator::decode(text, now_ms())?;
    let stream = Stream::named(api, &stream_arn(&iterator.table, &iterator.label)).await?;
    let records = api.engine.read_stream(
        &iterator.table,
        iterator.after.max(stream.starts_after),
        limit as usize,
    )?;
    let next = ShardIterator {
        after: records.last().map_or(iterator.after, |r| r.sequence),
        issued_ms: now_ms(),
        ..iterator
    };
    let rendered: Vec<Value> = records
        .iter()
        .map(|record| render_record(record, stream.view))
        .collect();
    Ok(json!({ "Records": rendered, "NextShardIterator": next.encode() }))
}

/// The shortest StreamArn DynamoDB Streams takes.
const MIN_STREAM_ARN: usize = 37;

/// A table's stream, as its ARN names it.
struct Stream {
    arn: String,
    label: String,
    view: StreamViewType,
    created: Option<f64>,
    /// The last sequence number of the table's earlier streams.
    starts_after: u64,
    definition: TableDefinition,
}

impl Stream {
    /// The stream `arn` names, if its table exists, has a stream, and is
    /// the table the label was given to (not a table of the same name
    /// created since).
    async fn named(api: &DynamoApi, arn: &str) -> Result<Stream, ApiError> {
        let not_found = || {
            ApiError::new(
                ErrorKind::ResourceNotFound,
                format!("Requested resource not found: Stream: {arn} not found"),
            )
        };
        // StreamArn: "Length Constraints: Minimum length of 37"; an ARN of
        // any other stream is not one of rave's.
        if arn.len() < MIN_STREAM_ARN {
            return Err(validation_errors(&[format!(
                "Value '{arn}' at 'streamArn' failed to satisfy constraint: Member must have length greater than or equal to {MIN_STREAM_ARN}"
            )]));
        }
        let (table, label) = table_in_arn(arn)
            .and_then(|rest| rest.split_once("/stream/"))
            .ok_or_else(not_found)?;
        let definition = match api.engine.describe_table(table).await {
            Ok(definition) if definition.stream_enabled => definition,
            Ok(_) | Err(rave_store::StoreError::ResourceNotFound(_)) => return Err(not_found()),
            Err(other) => return Err(other.into()),
        };
        let metadata = api.metadata.get(table)?;
        if stream_label(metadata.as_ref()) != label {
            return Err(not_found());
        }
        Ok(Stream {
            arn: arn.to_owned(),
            label: label.to_owned(),
            view: metadata
                .as_ref()
                .map(|m| m.stream_view_type)
                .unwrap_or_default(),
            created: metadata
                .as_ref()
                .and_then(|m| m.stream_enabled_at.or(m.created)),
            starts_after: metadata.as_ref().map_or(0, |m| m.stream_starts_after),
            definition,
        })
    }
}

/// One record as DynamoDB Streams renders it, cut down to `view`.
fn render_record(record: &StreamRecord, view: StreamViewType) -> Value {
    let new_image = matches!(
        view,
        StreamViewType::NewImage | StreamViewType::NewAndOldImages
    )
    .then_some(record.new_image.as_ref())
    .flatten();
    let old_image = matches!(
        view,
        StreamViewType::OldImage | StreamViewType::NewAndOldImages
    )
    .then_some(record.old_image.as_ref())
    .flatten();
    let size =
        item_size(&record.keys) + new_image.map_or(0, item_size) + old_image.map_or(0, item_size);
    let mut change = json!({
        // DynamoDB rounds the time down to the second.
        "ApproximateCreationDateTime": record.commit_time_ms / 1000,
        "Keys": item_to_json(&record.keys),
        "SequenceNumber": sequence_number(record.sequence),
        "SizeBytes": size,
        "StreamViewType": view.name(),
    });
    let images: [(&str, Option<&Item>); 2] = [("NewImage", new_image), ("OldImage", old_image)];
    for (member, image) in images {
        if let Some(image) = image {
            change[member] = item_to_json(image);
        }
    }
    let mut rendered = json!({
        "eventID": format!("{:032x}", record.sequence),
        "eventName": match record.event {
            EventName::Insert => "INSERT",
            EventName::Modify => "MODIFY",
            EventName::Remove => "REMOVE",
        },
        "eventVersion": "1.1",
        "eventSource": "aws:dynamodb",
        "awsRegion": REGION,
        "dynamodb": change,
    });
    if record.removed_by_ttl {
        rendered["userIdentity"] =
            json!({"type": "Service", "principalId": "dynamodb.amazonaws.com"});
    }
    rendered
}

fn sequence_number(sequence: u64) -> String {
    format!("{sequence:0SEQUENCE_DIGITS$}")
}

fn parse_sequence(text: &str) -> Result<u64, ApiError> {
    text.parse()
        .map_err(|_| ApiError::validation(format!("Invalid SequenceNumber: {text}")))
}

/// Where a reader is in a stream, and since when it holds the iterator.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ShardIterator {
    table: String,
    label: String,
    /// The last sequence number already read (0 before the first).
    after: u64,
    issued_ms: u64,
}

impl ShardIterator {
    fn encode(&self) -> String {
        let plain = format!(
            "{}|{}|{}|{}",
            self.issued_ms, self.after, self.label, self.table
        );
        URL_SAFE_NO_PAD.encode(plain)
    }

    /// The iterator `text` encodes, if it is one and has not expired by
    /// `now_ms`.
    fn decode(text: &str, now_ms: u64) -> Result<ShardIterator, ApiError> {
        let invalid = || ApiError::validation("Invalid ShardIterator");
        let plain = URL_SAFE_NO_PAD.decode(text).map_err(|_| invalid())?;
        let plain = String::from_utf8(plain).map_err(|_| invalid())?;
        let mut parts = plain.splitn(4, '|');
        let (Some(issued), Some(after), Some(label), Some(table)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(invalid());
        };
        let iterator = ShardIterator {
            issued_ms: issued.parse().map_err(|_| invalid())?,
            after: after.parse().map_err(|_| invalid())?,
            label: label.to_owned(),
            table: table.to_owned(),
        };
        if now_ms.saturating_sub(iterator.issued_ms) > ITERATOR_LIFETIME_MS {
            return Err(ApiError::new(
                ErrorKind::ExpiredIterator,
                "Iterator expired. The iterator was created more than 15 minutes ago",
            ));
        }
        Ok(iterator)
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rave_store::AttributeValue;

    fn iterator() -> ShardIterator {
        ShardIterator {
            table: "orders|2".into(),
            label: "2026-11-23T13:05:57.123".into(),
            after: 42,
            issued_ms: 1_000_000,
        }
    }

    #[test]
    fn iterators_decode_to_what_was_encoded_until_they_expire() {
        let encoded = iterator().encode();
        assert_eq!(ShardIterator::decode(&encoded, 1_000_000), Ok(iterator()));
        assert_eq!(
            ShardIterator::decode(&encoded, 1_000_000 + ITERATOR_LIFETIME_MS),
            Ok(iterator())
        );
        let expired = ShardIterator::decode(&encoded, 1_000_001 + ITERATOR_LIFETIME_MS);
        assert_eq!(expired.map_err(|e| e.kind), Err(ErrorKind::ExpiredIterator));
        let garbage = ShardIterator::decode("not an iterator", 0);
        assert_eq!(garbage.map_err(|e| e.kind), Err(ErrorKind::Validation));
    }

    #[test]
    fn view_types_keep_the_images_they_name() {
        let keys = Item::from([("pk".to_owned(), AttributeValue::S("a".into()))]);
        let mut old = keys.clone();
        old.insert("n".into(), AttributeValue::S("old".into()));
        let mut new = keys.clone();
        new.insert("n".into(), AttributeValue::S("new".into()));
        let record = StreamRecord {
            sequence: 7,
            event: EventName::Modify,
            keys,
            old_image: Some(old),
            new_image: Some(new),
            commit_time_ms: 1_700_000_000_999,
            removed_by_ttl: false,
        };
        let has = |view, member: &str| {
            render_record(&record, view)["dynamodb"]
                .get(member)
                .is_some()
        };
        assert!(
            !has(StreamViewType::KeysOnly, "NewImage")
                && !has(StreamViewType::KeysOnly, "OldImage")
        );
        assert!(
            has(StreamViewType::NewImage, "NewImage") && !has(StreamViewType::NewImage, "OldImage")
        );
        assert!(
            !has(StreamViewType::OldImage, "NewImage") && has(StreamViewType::OldImage, "OldImage")
        );
        assert!(
            has(StreamViewType::NewAndOldImages, "NewImage")
                && has(StreamViewType::NewAndOldImages, "OldImage")
        );
        let rendered = render_record(&record, StreamViewType::KeysOnly);
        assert_eq!(
            rendered["dynamodb"]["SequenceNumber"],
            json!("000000000000000000007")
        );
        assert_eq!(
            rendered["dynamodb"]["ApproximateCreationDateTime"],
            json!(1_700_000_000u64)
        );
        assert_eq!(rendered["eventName"], json!("MODIFY"));
        assert!(rendered.get("userIdentity").is_none());
    }
}
