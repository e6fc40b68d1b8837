//! Differential tests: the same request bytes sent to rave's endpoint and to
//! Amazon's DynamoDB Local (started by `./scripts/test.sh`, address in
//! `RAVE_DIFFERENTIAL_DYNAMODB_ENDPOINT`, else `RAVE_DYNAMODB_ENDPOINT`:
//! the script gives these cases a DynamoDB Local of their own, because one
//! that has served the other suites can stop building added indexes), the answers compared field by field once what
//! legitimately differs between two servers is taken out (request ids,
//! ARNs, creation times, stream labels and positions, sizes and counts
//! DynamoDB refreshes only every six hours, consumed capacity).
//!
//! Every case runs a script of steps on tables of its own (`{t}` in a
//! request is the case's table name, unique per run); a step may capture a
//! value of its answer (`{name}` in later requests), which each server
//! answers in its own way (a stream's ARN, a shard iterator). Where DynamoDB
//! Local departs from DynamoDB's documented behaviour, the step is listed in
//! `LOCAL_DEPARTURES` with the documentation's words, and rave's answer is
//! checked against the documented one instead.

use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Map, Value, json};

use crate::support::Server;

/// Fields whose values differ between any two servers by design.
const PER_SERVER: &[&str] = &[
    "TableArn",
    "TableId",
    "IndexArn",
    "LatestStreamArn",
    "LatestStreamLabel",
    "StreamArn",
    "StreamLabel",
    "CreationDateTime",
    "CreationRequestDateTime",
    "LastIncreaseDateTime",
    "LastDecreaseDateTime",
    "LastUpdateToPayPerRequestDateTime",
    "ApproximateCreationDateTime",
    // Refreshed every six hours on DynamoDB: neither server's figure is wrong.
    "TableSizeBytes",
    "ItemCount",
    "IndexSizeBytes",
    "SizeBytes",
    "ShardIterator",
    "NextShardIterator",
    "SequenceNumber",
    "StartingSequenceNumber",
    "EndingSequenceNumber",
    "ShardId",
    "eventID",
    "awsRegion",
    // PartiQL's page token: opaque, each server's own.
    "NextToken",
];

/// Compared only in the cases that name it in [`CAPACITY_CASES`]: in the
/// others rave's own capacity tests check it.
const CAPACITY: &str = "ConsumedCapacity";
/// The cases whose `ConsumedCapacity` is compared.
const CAPACITY_CASES: &[&str] = &["capacity", "local"];

/// A step where DynamoDB Local answers otherwise than DynamoDB does: rave
/// is held to DynamoDB's answer, which is DynamoDB Local's with `patches`
/// applied (a JSON pointer into `{"status", "body"}` and the value there in
/// JSON, `{t}` standing for the table's name; `null` removes the member).
struct Departure {
    case: &'static str,
    step: usize,
    /// What DynamoDB does, in its documentation's words where it has any.
    documented: &'static str,
    patches: &'static [(&'static str, &'static str)],
}

const NOT_FOUND: &str = "DynamoDB's error for a missing table: ResourceNotFoundException, \"Requested resource not found: Table: NAME not found\"; DynamoDB Local says \"Cannot do operations on a non-existent table\"";
const ITEMS_NOT_FOUND: &str = "DynamoDB's error for an item operation on a missing table: ResourceNotFoundException, \"Requested resource not found\" (the table is named by the control plane's answers only); DynamoDB Local says \"Cannot do operations on a non-existent table\"";
const INDEX_THROUGHPUT: &str = "DescribeTable's GlobalSecondaryIndexDescription carries ProvisionedThroughput (zero units on an on-demand table); DynamoDB Local leaves it out";

const DUPLICATE_ITEM_EXCEPTION: &str = "ExecuteStatement's errors (API reference): \"DuplicateItemException: There was an attempt to insert an item with the same primary key as an item that already exists in the DynamoDB table\"; DynamoDB Local names the type DuplicateItem";
const PARTIQL_NO_INDEX: &str = "a PartiQL read of \"table\".\"index\" naming no index: \"The table does not have the specified index\", without the name Query's refusal appends (DynamoDB as captured in several regions, 2026); DynamoDB Local appends it";
const PARTIQL_BATCH_READS: &str = "a batch's SELECT of a missing table answers ResourceNotFound's \"Requested resource not found\", and one not naming its item by the whole primary key \"Select statements within BatchExecuteStatement must specify the primary key in the where clause.\" (DynamoDB as captured in several regions, 2026); DynamoDB Local says \"Cannot do operations on a non-existent table\" and \"Only single item select is supported\"";
const PARTIQL_CUT_SHORT: &str = "a statement that ends where a term should come: \"Statement wasn't well formed, can't be processed: Unexpected term\" (DynamoDB as captured in two regions, October 2026); DynamoDB Local quotes the statement";
const PARTIQL_CONSISTENT_INDEX: &str = "ConsistentRead on a PartiQL read of a global secondary index: \"Strongly consistent read is not supported on Global Secondary Indexes\", in words of its own where Query has others (DynamoDB as captured, 2026); DynamoDB Local answers in Query's words";
const PARTIQL_NOT_DML: &str = "a statement that starts with no statement's keyword: \"Statement wasn't well formed, can't be processed: Expected data manipulation\" (DynamoDB as captured, eu-west-2, 2026); DynamoDB Local quotes the statement";
const NO_STATEMENTS: &str = "BatchExecuteStatement's Statements (\"Array Members: Minimum number of 1 item. Maximum number of 25 items\") and ExecuteTransaction's TransactStatements (1 to 100 items), refused in the validation framework's \"1 validation error detected\" form; DynamoDB Local answers in sentences of its own";
const TAGGING: &str = "TagResource, UntagResource and ListTagsOfResource tag a table by its ARN; DynamoDB Local answers \"Tagging is not currently supported in DynamoDB Local.\"";
const KEY_CONDITION_ON_OTHER_ATTRIBUTE: &str = "KeyConditionExpression \"must perform an equality test on a single partition key value\" and may test one sort key: DynamoDB refuses a condition on another attribute with \"Query key condition not supported\" (DynamoDB Local answers as for a missing partition key)";

const DELETING: &str = "DeleteTable: \"the table is in the DELETING state until DynamoDB completes the deletion\"; DynamoDB Local answers ACTIVE";
const COLLECTION_METRICS: &str = "ReturnItemCollectionMetrics = SIZE: \"If set to SIZE, the response includes statistics about item collections, if any, that were modified during the operation\" (ItemCollectionMetrics: ItemCollectionKey and SizeEstimateRangeGB, for tables with local secondary indexes); DynamoDB Local never answers them";
const ONE_SMALL_COLLECTION: &str =
    r#"{"ItemCollectionKey":{"pk":{"S":"a"}},"SizeEstimateRangeGB":[0.0,1.0]}"#;

const TRANSACTION_UNITS: &str = "a transaction's ConsumedCapacity names its units as ReadCapacityUnits (TransactGetItems) or WriteCapacityUnits (TransactWriteItems) beside CapacityUnits, at each level of detail, where single-item operations give the aggregate only; DynamoDB Local gives the aggregate only";
const MISSING_READ: &str = "BatchGetItem charges each key as a GetItem, and \"if you perform a read operation on an item that does not exist, DynamoDB still consumes provisioned read throughput\" (an eventually consistent read: half a unit); DynamoDB Local charges nothing for the missing item";
const MISSING_DELETE: &str = "BatchWriteItem charges each request as its PutItem or DeleteItem, and a delete of an item that does not exist consumes one write unit (a new item with a global secondary index entry: one unit each); DynamoDB Local charges the table one unit more";
const TRANSACTION_INDEXES: &str = "transactions: \"DynamoDB performs two underlying reads or writes of every item in the transaction\", while \"after a transaction completes, its changes start propagating to global secondary indexes\": the index's writes are not doubled; DynamoDB Local doubles them";

const MISSING_KEY: &str = "an item without one of the table's key attributes: \"One or more parameter values were invalid: Missing the key NAME in the item\"";
const KEY_MISMATCH: &str = "a Key with other attributes than the key schema's: \"The provided key element does not match the schema\"";
const TYPE_MISMATCH: &str = "a key of the wrong type: \"One or more parameter values were invalid: Type mismatch for key NAME expected: TYPE actual: TYPE\"";
const LIMIT_RANGE: &str = "Limit: \"Valid Range: Minimum value of 1\" (a constraint failure in DynamoDB's \"1 validation error detected\" form)";

const QUERY_LIMIT_RANGE: &str = "Query's Limit: \"Valid Range: Minimum value of 1\", which DynamoDB reports without the value: \"1 validation error detected: Value at 'Limit' failed to satisfy constraint: Member must have value greater than or equal to 1\"";
const BATCH_WRITE_LENGTH: &str = "BatchWriteItem's RequestItems: each table's list of requests has 1 to 25 members (\"Map value must satisfy constraint: [Member must have length less than or equal to 25, Member must have length greater than or equal to 1]\", the map echoed)";

const UPDATING: &str = "UpdateTable \"is an asynchronous operation; while it's executing, the table status changes from ACTIVE to UPDATING\"; DynamoDB Local answers ACTIVE";
const ON_DEMAND_INDEX: &str = "an index of an on-demand table describes its ProvisionedThroughput (zero units) and no OnDemandThroughput unless one was set; DynamoDB Local describes an index UpdateTable added the other way round";
const NO_PROVISIONED: &str =
    r#"{"NumberOfDecreasesToday":0,"ReadCapacityUnits":0,"WriteCapacityUnits":0}"#;

const LOCAL_DEPARTURES: &[Departure] = &[
    Departure {
        case: "partiql",
        step: 0,
        documented: INDEX_THROUGHPUT,
        patches: &[(
            "/body/TableDescription/GlobalSecondaryIndexes/0/ProvisionedThroughput",
            NO_PROVISIONED,
        )],
    },
    Departure {
        case: "partiql",
        step: 2,
        documented: DUPLICATE_ITEM_EXCEPTION,
        patches: &[(
            "/body/__type",
            r#""com.amazonaws.dynamodb.v20120810#DuplicateItemException""#,
        )],
    },
    Departure {
        case: "partiql",
        step: 23,
        documented: PARTIQL_NO_INDEX,
        patches: &[(
            "/body/message",
            r#""The table does not have the specified index""#,
        )],
    },
    Departure {
        case: "partiql",
        step: 50,
        documented: PARTIQL_CUT_SHORT,
        patches: &[(
            "/body/message",
            r#""Statement wasn't well formed, can't be processed: Unexpected term""#,
        )],
    },
    Departure {
        case: "partiql",
        step: 52,
        documented: PARTIQL_CONSISTENT_INDEX,
        patches: &[(
            "/body/message",
            r#""Strongly consistent read is not supported on Global Secondary Indexes""#,
        )],
    },
    Departure {
        case: "partiql",
        step: 21,
        documented: PARTIQL_NOT_DML,
        patches: &[(
            "/body/message",
            r#""Statement wasn't well formed, can't be processed: Expected data manipulation""#,
        )],
    },
    Departure {
        case: "partiql",
        step: 29,
        documented: PARTIQL_NOT_DML,
        patches: &[(
            "/body/Responses/4/Error/Message",
            r#""Statement wasn't well formed, can't be processed: Expected data manipulation""#,
        )],
    },
    Departure {
        case: "partiql",
        step: 57,
        documented: NO_STATEMENTS,
        patches: &[(
            "/body/message",
            r#""1 validation error detected: Value '[]' at 'statements' failed to satisfy constraint: Member must have length greater than or equal to 1""#,
        )],
    },
    Departure {
        case: "partiql",
        step: 58,
        documented: NO_STATEMENTS,
        patches: &[(
            "/body/message",
            r#""1 validation error detected: Value '[]' at 'transactStatements' failed to satisfy constraint: Member must have length greater than or equal to 1""#,
        )],
    },
    Departure {
        case: "partiql",
        step: 28,
        documented: PARTIQL_BATCH_READS,
        patches: &[
            (
                "/body/Responses/2/Error/Message",
                r#""Requested resource not found""#,
            ),
            (
                "/body/Responses/3/Error/Message",
                r#""Select statements within BatchExecuteStatement must specify the primary key in the where clause.""#,
            ),
        ],
    },
    Departure {
        case: "partiql",
        step: 40,
        documented: ITEMS_NOT_FOUND,
        patches: &[("/body/message", r#""Requested resource not found""#)],
    },
    Departure {
        case: "key-condition-values",
        step: 0,
        documented: INDEX_THROUGHPUT,
        patches: &[(
            "/body/TableDescription/GlobalSecondaryIndexes/0/ProvisionedThroughput",
            NO_PROVISIONED,
        )],
    },
    Departure {
        case: "multikey",
        step: 0,
        documented: INDEX_THROUGHPUT,
        patches: &[
            (
                "/body/TableDescription/GlobalSecondaryIndexes/0/ProvisionedThroughput",
                NO_PROVISIONED,
            ),
            (
                "/body/TableDescription/GlobalSecondaryIndexes/1/ProvisionedThroughput",
                NO_PROVISIONED,
            ),
        ],
    },
    Departure {
        case: "multikey",
        step: 7,
        documented: KEY_CONDITION_ON_OTHER_ATTRIBUTE,
        patches: &[("/body/message", r#""Query key condition not supported""#)],
    },
    Departure {
        case: "multikey",
        step: 29,
        documented: INDEX_THROUGHPUT,
        patches: &[
            (
                "/body/Table/GlobalSecondaryIndexes/0/ProvisionedThroughput",
                NO_PROVISIONED,
            ),
            (
                "/body/Table/GlobalSecondaryIndexes/1/ProvisionedThroughput",
                NO_PROVISIONED,
            ),
        ],
    },
    Departure {
        case: "errors",
        step: 9,
        documented: BATCH_WRITE_LENGTH,
        patches: &[(
            "/body/message",
            r#""1 validation error detected: Value '{{t}=[]}' at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: [Member must have length less than or equal to 25, Member must have length greater than or equal to 1]""#,
        )],
    },
    Departure {
        case: "pages",
        step: 16,
        documented: "KeyConditionExpression without the partition key: \"Query condition missed key schema element: NAME\", naming the partition key",
        patches: &[(
            "/body/message",
            r#""Query condition missed key schema element: pk""#,
        )],
    },
    Departure {
        case: "indexes",
        step: 6,
        documented: "a global secondary index UpdateTable creates is CREATING with Backfilling true while rave reads the table's items into it (\"Indicates whether the index is currently backfilling\"), and the table UPDATING (UpdateTable \"is an asynchronous operation\"); DynamoDB Local builds the index at once and answers ACTIVE",
        patches: &[
            ("/body/TableDescription/TableStatus", r#""UPDATING""#),
            (
                "/body/TableDescription/GlobalSecondaryIndexes/0/Backfilling",
                "true",
            ),
            (
                "/body/TableDescription/GlobalSecondaryIndexes/0/ProvisionedThroughput",
                NO_PROVISIONED,
            ),
            (
                "/body/TableDescription/GlobalSecondaryIndexes/0/OnDemandThroughput",
                "null",
            ),
        ],
    },
    Departure {
        case: "indexes",
        step: 7,
        documented: ON_DEMAND_INDEX,
        patches: &[
            (
                "/body/Table/GlobalSecondaryIndexes/0/ProvisionedThroughput",
                NO_PROVISIONED,
            ),
            (
                "/body/Table/GlobalSecondaryIndexes/0/OnDemandThroughput",
                "null",
            ),
        ],
    },
    Departure {
        case: "indexes",
        step: 13,
        documented: UPDATING,
        patches: &[
            ("/body/TableDescription/TableStatus", r#""UPDATING""#),
            (
                "/body/TableDescription/GlobalSecondaryIndexes/0/ProvisionedThroughput",
                NO_PROVISIONED,
            ),
            (
                "/body/TableDescription/GlobalSecondaryIndexes/0/OnDemandThroughput",
                "null",
            ),
        ],
    },
    Departure {
        case: "indexes",
        step: 14,
        documented: "an index is DELETING while it is deleted, then gone from the table's description; DynamoDB Local describes it DELETING for ever",
        patches: &[("/body/Table/GlobalSecondaryIndexes", "null")],
    },
    Departure {
        case: "indexes",
        step: 15,
        documented: "a Query of an index the table does not have: ValidationException, \"The table does not have the specified index: NAME\"; DynamoDB Local fails with a 500 on a deleted one",
        patches: &[
            ("/status", "400"),
            (
                "/body/__type",
                r#""com.amazon.coral.validate#ValidationException""#,
            ),
            (
                "/body/message",
                r#""The table does not have the specified index: byG""#,
            ),
        ],
    },
    Departure {
        case: "errors",
        step: 1,
        documented: ITEMS_NOT_FOUND,
        patches: &[("/body/message", r#""Requested resource not found""#)],
    },
    Departure {
        case: "errors",
        step: 2,
        documented: MISSING_KEY,
        patches: &[(
            "/body/message",
            r#""One or more parameter values were invalid: Missing the key sk in the item""#,
        )],
    },
    Departure {
        case: "errors",
        step: 3,
        documented: TYPE_MISMATCH,
        patches: &[(
            "/body/message",
            r#""One or more parameter values were invalid: Type mismatch for key sk expected: N actual: S""#,
        )],
    },
    Departure {
        case: "errors",
        step: 6,
        documented: KEY_MISMATCH,
        patches: &[(
            "/body/message",
            r#""The provided key element does not match the schema""#,
        )],
    },
    Departure {
        case: "errors",
        step: 7,
        documented: KEY_MISMATCH,
        patches: &[(
            "/body/message",
            r#""The provided key element does not match the schema""#,
        )],
    },
    Departure {
        case: "errors",
        step: 14,
        documented: QUERY_LIMIT_RANGE,
        patches: &[(
            "/body/message",
            r#""1 validation error detected: Value at 'Limit' failed to satisfy constraint: Member must have value greater than or equal to 1""#,
        )],
    },
    Departure {
        case: "errors",
        step: 15,
        documented: LIMIT_RANGE,
        patches: &[(
            "/body/message",
            r#""1 validation error detected: Value '-1' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1""#,
        )],
    },
    Departure {
        case: "errors",
        step: 16,
        documented: "Scan: \"If you provide Segment, you must also provide TotalSegments\"",
        patches: &[(
            "/body/message",
            r#""The TotalSegments parameter is required but was not present in the request when Segment parameter is present""#,
        )],
    },
    Departure {
        case: "errors",
        step: 17,
        documented: "TotalSegments: \"Valid Range: Minimum value of 1\" (DynamoDB Local reports Segment against the bad TotalSegments instead)",
        patches: &[(
            "/body/message",
            r#""1 validation error detected: Value '0' at 'totalSegments' failed to satisfy constraint: Member must have value greater than or equal to 1""#,
        )],
    },
    Departure {
        case: "errors",
        step: 19,
        documented: "Segment: \"Valid Range: Minimum value of 0\"",
        patches: &[(
            "/body/message",
            r#""1 validation error detected: Value '-1' at 'segment' failed to satisfy constraint: Member must have value greater than or equal to 0""#,
        )],
    },
    Departure {
        case: "errors",
        step: 20,
        documented: "an operation DynamoDB does not have: UnknownOperationException from the service front end (com.amazon.coral.service), without a message; DynamoDB Local answers in DynamoDB's own namespace",
        patches: &[
            (
                "/body/__type",
                r#""com.amazon.coral.service#UnknownOperationException""#,
            ),
            ("/body/message", "null"),
        ],
    },
    Departure {
        case: "local",
        step: 11,
        documented: "Query: \"If you query or scan a local secondary index and request only attributes that are projected into that index, the operation will read only the index and not the table\"; DynamoDB Local fetches (and charges) every item from the table",
        patches: &[
            ("/body/ConsumedCapacity/CapacityUnits", "0.5"),
            ("/body/ConsumedCapacity/Table/CapacityUnits", "0.0"),
        ],
    },
    Departure {
        case: "capacity",
        step: 0,
        documented: INDEX_THROUGHPUT,
        patches: &[(
            "/body/TableDescription/GlobalSecondaryIndexes/0/ProvisionedThroughput",
            r#"{"NumberOfDecreasesToday":0,"ReadCapacityUnits":0,"WriteCapacityUnits":0}"#,
        )],
    },
    Departure {
        case: "capacity",
        step: 26,
        documented: MISSING_READ,
        patches: &[("/body/ConsumedCapacity/0/CapacityUnits", "1.0")],
    },
    Departure {
        case: "capacity",
        step: 27,
        documented: MISSING_DELETE,
        patches: &[("/body/ConsumedCapacity/0/CapacityUnits", "3.0")],
    },
    Departure {
        case: "capacity",
        step: 28,
        documented: TRANSACTION_UNITS,
        patches: &[("/body/ConsumedCapacity/0/ReadCapacityUnits", "2.0")],
    },
    Departure {
        case: "capacity",
        step: 29,
        documented: TRANSACTION_INDEXES,
        patches: &[
            ("/body/ConsumedCapacity/0/CapacityUnits", "5.0"),
            ("/body/ConsumedCapacity/0/WriteCapacityUnits", "5.0"),
        ],
    },
    Departure {
        case: "capacity",
        step: 41,
        documented: MISSING_READ,
        patches: &[
            ("/body/ConsumedCapacity/0/CapacityUnits", "1.0"),
            ("/body/ConsumedCapacity/0/Table/CapacityUnits", "1.0"),
        ],
    },
    Departure {
        case: "capacity",
        step: 42,
        documented: MISSING_DELETE,
        patches: &[
            ("/body/ConsumedCapacity/0/CapacityUnits", "3.0"),
            ("/body/ConsumedCapacity/0/Table/CapacityUnits", "2.0"),
        ],
    },
    Departure {
        case: "capacity",
        step: 43,
        documented: TRANSACTION_UNITS,
        patches: &[
            ("/body/ConsumedCapacity/0/ReadCapacityUnits", "2.0"),
            ("/body/ConsumedCapacity/0/Table/ReadCapacityUnits", "2.0"),
        ],
    },
    Departure {
        case: "capacity",
        step: 44,
        documented: TRANSACTION_INDEXES,
        patches: &[
            ("/body/ConsumedCapacity/0/CapacityUnits", "5.0"),
            ("/body/ConsumedCapacity/0/WriteCapacityUnits", "5.0"),
            ("/body/ConsumedCapacity/0/Table/WriteCapacityUnits", "4.0"),
            (
                "/body/ConsumedCapacity/0/GlobalSecondaryIndexes/byG/CapacityUnits",
                "1.0",
            ),
            (
                "/body/ConsumedCapacity/0/GlobalSecondaryIndexes/byG/WriteCapacityUnits",
                "1.0",
            ),
        ],
    },
    Departure {
        case: "collections",
        step: 1,
        documented: COLLECTION_METRICS,
        patches: &[("/body/ItemCollectionMetrics", ONE_SMALL_COLLECTION)],
    },
    Departure {
        case: "collections",
        step: 3,
        documented: COLLECTION_METRICS,
        patches: &[("/body/ItemCollectionMetrics", ONE_SMALL_COLLECTION)],
    },
    Departure {
        case: "collections",
        step: 4,
        documented: COLLECTION_METRICS,
        patches: &[("/body/ItemCollectionMetrics", ONE_SMALL_COLLECTION)],
    },
    Departure {
        case: "collections",
        step: 5,
        documented: COLLECTION_METRICS,
        patches: &[(
            "/body/ItemCollectionMetrics",
            r#"{"{t}":[{"ItemCollectionKey":{"pk":{"S":"a"}},"SizeEstimateRangeGB":[0.0,1.0]},{"ItemCollectionKey":{"pk":{"S":"b"}},"SizeEstimateRangeGB":[0.0,1.0]}]}"#,
        )],
    },
    Departure {
        case: "collections",
        step: 6,
        documented: COLLECTION_METRICS,
        patches: &[(
            "/body/ItemCollectionMetrics",
            r#"{"{t}":[{"ItemCollectionKey":{"pk":{"S":"c"}},"SizeEstimateRangeGB":[0.0,1.0]}]}"#,
        )],
    },
    Departure {
        case: "collections",
        step: 7,
        documented: "ReturnItemCollectionMetrics: \"Valid Values: SIZE | NONE\" (a constraint failure in DynamoDB's \"1 validation error detected\" form); DynamoDB Local accepts any value",
        patches: &[
            ("/status", "400"),
            (
                "/body",
                r#"{"__type":"com.amazon.coral.validate#ValidationException","message":"1 validation error detected: Value 'ALL' at 'returnItemCollectionMetrics' failed to satisfy constraint: Member must satisfy enum value set: [SIZE, NONE]"}"#,
            ),
        ],
    },
    Departure {
        case: "collections",
        step: 10,
        documented: DELETING,
        patches: &[("/body/TableDescription/TableStatus", r#""DELETING""#)],
    },
    Departure {
        case: "control",
        step: 0,
        documented: INDEX_THROUGHPUT,
        patches: &[(
            "/body/TableDescription/GlobalSecondaryIndexes/0/ProvisionedThroughput",
            r#"{"NumberOfDecreasesToday":0,"ReadCapacityUnits":0,"WriteCapacityUnits":0}"#,
        )],
    },
    Departure {
        case: "control",
        step: 1,
        documented: INDEX_THROUGHPUT,
        patches: &[(
            "/body/Table/GlobalSecondaryIndexes/0/ProvisionedThroughput",
            r#"{"NumberOfDecreasesToday":0,"ReadCapacityUnits":0,"WriteCapacityUnits":0}"#,
        )],
    },
    Departure {
        case: "control",
        step: 2,
        documented: "CreateTable on a name in use: ResourceInUseException, \"Table already exists: NAME\"",
        patches: &[("/body/message", r#""Table already exists: {t}""#)],
    },
    Departure {
        case: "control",
        step: 8,
        documented: "UpdateTable to PROVISIONED must give every global secondary index its throughput (a ValidationException naming the index); DynamoDB Local fails with a 500",
        patches: &[
            ("/status", "400"),
            (
                "/body/__type",
                r#""com.amazon.coral.validate#ValidationException""#,
            ),
            (
                "/body/message",
                r#""One or more parameter values were invalid: ProvisionedThroughput must be specified for index: byG""#,
            ),
        ],
    },
    Departure {
        case: "control",
        step: 9,
        documented: NOT_FOUND,
        patches: &[(
            "/body/message",
            r#""Requested resource not found: Table: {t}-missing not found""#,
        )],
    },
    Departure {
        case: "control",
        step: 10,
        documented: NOT_FOUND,
        patches: &[(
            "/body/message",
            r#""Requested resource not found: Table: {t}-missing not found""#,
        )],
    },
    Departure {
        case: "control",
        step: 11,
        documented: "a key attribute missing from AttributeDefinitions: \"One or more parameter values were invalid: Some index key attributes are not defined in AttributeDefinitions. Keys: [...], AttributeDefinitions: [...]\"",
        patches: &[(
            "/body/message",
            r#""One or more parameter values were invalid: Some index key attributes are not defined in AttributeDefinitions. Keys: [other], AttributeDefinitions: [pk]""#,
        )],
    },
    Departure {
        case: "control",
        step: 12,
        documented: "table names are 3 to 255 characters (TableName: Length Constraints: Minimum length of 3. Maximum length of 255.), a constraint failure in DynamoDB's \"1 validation error detected\" form",
        patches: &[(
            "/body/message",
            r#""1 validation error detected: Value 'x' at 'tableName' failed to satisfy constraint: Member must have length greater than or equal to 3""#,
        )],
    },
    Departure {
        case: "control",
        step: 13,
        documented: "BillingMode PROVISIONED (the default) needs ReadCapacityUnits and WriteCapacityUnits: \"One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED\"",
        patches: &[(
            "/body/message",
            r#""One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED""#,
        )],
    },
    Departure {
        case: "control",
        step: 14,
        documented: DELETING,
        patches: &[
            ("/body/TableDescription/TableStatus", r#""DELETING""#),
            (
                "/body/TableDescription/GlobalSecondaryIndexes/0/IndexStatus",
                r#""DELETING""#,
            ),
            (
                "/body/TableDescription/GlobalSecondaryIndexes/0/ProvisionedThroughput",
                r#"{"NumberOfDecreasesToday":0,"ReadCapacityUnits":0,"WriteCapacityUnits":0}"#,
            ),
        ],
    },
    Departure {
        case: "control",
        step: 15,
        documented: NOT_FOUND,
        patches: &[(
            "/body/message",
            r#""Requested resource not found: Table: {t} not found""#,
        )],
    },
    Departure {
        case: "pages",
        step: 18,
        documented: SPECIFIC_WITHOUT_PROJECTION,
        patches: &[("/body/message", SPECIFIC_WITHOUT_PROJECTION_MESSAGE)],
    },
    Departure {
        case: "local",
        step: 17,
        documented: SPECIFIC_WITHOUT_PROJECTION,
        patches: &[("/body/message", SPECIFIC_WITHOUT_PROJECTION_MESSAGE)],
    },
    Departure {
        case: "batch",
        step: 6,
        documented: "BatchGetItem with no tables in RequestItems: DynamoDB answers with its validation framework's RequestItems length constraint",
        patches: &[(
            "/body/message",
            r#""1 validation error detected: Value at 'RequestItems' failed to satisfy constraint: Member must have length greater than or equal to 1""#,
        )],
    },
    Departure {
        case: "batch",
        step: 8,
        documented: "a failed condition's cancellation reason reads \"The conditional request failed\", the ConditionalCheckFailedException's message, without DynamoDB Local's period",
        patches: &[(
            "/body/CancellationReasons/1/Message",
            r#""The conditional request failed""#,
        )],
    },
    Departure {
        case: "batch",
        step: 11,
        documented: "TransactItems: Array Members: Minimum number of 1 item (in DynamoDB's \"1 validation error detected\" form)",
        patches: &[(
            "/body/message",
            r#""1 validation error detected: Value '[]' at 'transactItems' failed to satisfy constraint: Member must have length greater than or equal to 1""#,
        )],
    },
    Departure {
        case: "items",
        step: 17,
        documented: CURRENT_WORDS,
        patches: &[(
            "/body/message",
            r#""1 validation error detected: Number overflow. Attempting to store a number with magnitude larger than supported range""#,
        )],
    },
    Departure {
        case: "items",
        step: 5,
        documented: "a Key without the sort key: \"The provided key element does not match the schema\"",
        patches: &[(
            "/body/message",
            r#""The provided key element does not match the schema""#,
        )],
    },
    Departure {
        case: "items",
        step: 11,
        documented: "an UpdateItem whose only action is REMOVE on an item that does not exist creates nothing (DynamoDB Local writes the bare key)",
        patches: &[("/body/Attributes", "null")],
    },
    Departure {
        case: "items",
        step: 12,
        documented: "an UpdateItem whose only action is REMOVE on an item that does not exist creates nothing (DynamoDB Local writes the bare key)",
        patches: &[("/body/Item", "null")],
    },
    Departure {
        case: "items",
        step: 18,
        documented: TYPE_MISMATCH,
        patches: &[(
            "/body/message",
            r#""One or more parameter values were invalid: Type mismatch for key sk expected: N actual: S""#,
        )],
    },
    Departure {
        case: "items",
        step: 19,
        documented: ITEMS_NOT_FOUND,
        patches: &[("/body/message", r#""Requested resource not found""#)],
    },
    Departure {
        case: "items",
        step: 20,
        documented: "PutItem's ReturnValues: \"The ReturnValues parameter ... PutItem does not recognize any values other than NONE or ALL_OLD\"",
        patches: &[(
            "/body/message",
            r#""ReturnValues can only be ALL_OLD or NONE for PutItem""#,
        )],
    },
    Departure {
        case: "pages",
        step: 0,
        documented: INDEX_THROUGHPUT,
        patches: &[(
            "/body/TableDescription/GlobalSecondaryIndexes/0/ProvisionedThroughput",
            r#"{"NumberOfDecreasesToday":0,"ReadCapacityUnits":0,"WriteCapacityUnits":0}"#,
        )],
    },
    Departure {
        case: "pages",
        step: 27,
        documented: "Segment: \"The value of Segment must be greater than or equal to 0, and less than the value provided for TotalSegments\" (DynamoDB's own message, not a constraint on the member)",
        patches: &[(
            "/body/message",
            r#""The Segment parameter is zero-based and must be less than parameter TotalSegments: Segment: 2 is not less than TotalSegments: 2""#,
        )],
    },
    Departure {
        case: "updates",
        step: 91,
        documented: KEY_CONDITION_ON_OTHER_ATTRIBUTE,
        patches: &[("/body/message", r#""Query key condition not supported""#)],
    },
    Departure {
        case: "updates",
        step: 96,
        documented: KEY_CONDITION_ON_OTHER_ATTRIBUTE,
        patches: &[("/body/message", r#""Query key condition not supported""#)],
    },
    Departure {
        case: "updates",
        step: 101,
        documented: KEY_CONDITION_ON_OTHER_ATTRIBUTE,
        patches: &[("/body/message", r#""Query key condition not supported""#)],
    },
    Departure {
        case: "updates",
        step: 106,
        documented: KEY_CONDITION_ON_OTHER_ATTRIBUTE,
        patches: &[("/body/message", r#""Query key condition not supported""#)],
    },
    Departure {
        case: "tags",
        step: 1,
        documented: TAGGING,
        patches: &[("/status", "200"), ("/body", "{}")],
    },
    Departure {
        case: "tags",
        step: 2,
        documented: TAGGING,
        patches: &[
            ("/status", "200"),
            (
                "/body",
                r#"{"Tags":[{"Key":"team","Value":"rave"},{"Key":"tier","Value":"1"}]}"#,
            ),
        ],
    },
    Departure {
        case: "tags",
        step: 3,
        documented: TAGGING,
        patches: &[("/status", "200"), ("/body", "{}")],
    },
    Departure {
        case: "tags",
        step: 4,
        documented: TAGGING,
        patches: &[
            ("/status", "200"),
            ("/body", r#"{"Tags":[{"Key":"team","Value":"rave"}]}"#),
        ],
    },
    Departure {
        case: "tags",
        step: 8,
        documented: "IdempotentParameterMismatchException: \"DynamoDB rejected the request because you retried a request with a different payload but with an idempotent token that was already used\"; DynamoDB Local's message is empty",
        patches: &[(
            "/body/message",
            r#""The request uses the same client token as a previous, but not identical request.""#,
        )],
    },
];

/// DynamoDB Local's normalised answer with a departure's patches applied.
fn patched(mut answer: Value, departure: &Departure, table: &str) -> Value {
    for (pointer, json) in departure.patches {
        let value: Value = serde_json::from_str(&json.replace("{t}", table))
            .unwrap_or_else(|e| panic!("{}: patch {pointer} is not JSON: {e}", departure.case));
        let (parent, member) = pointer.rsplit_once('/').unwrap_or(("", pointer));
        let Some(Value::Object(members)) = answer.pointer_mut(parent) else {
            panic!(
                "{} step {}: nothing at {parent}",
                departure.case, departure.step
            );
        };
        if value.is_null() {
            members.remove(member);
        } else {
            members.insert(member.to_owned(), value);
        }
    }
    answer
}

fn endpoint() -> String {
    let own = std::env::var("RAVE_DIFFERENTIAL_DYNAMODB_ENDPOINT");
    own.or_else(|_| std::env::var("RAVE_DYNAMODB_ENDPOINT")).unwrap_or_else(|_| {
        panic!(
            "RAVE_DYNAMODB_ENDPOINT is not set: run ./scripts/test.sh, which starts DynamoDB Local"
        )
    })
}

static RUNS: AtomicUsize = AtomicUsize::new(0);

/// A table name no other case or run uses on the shared DynamoDB Local.
fn unique_table(case: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{case}-{nanos}-{}", RUNS.fetch_add(1, Ordering::Relaxed))
}

/// One request of a script, and what of its answer later steps use.
struct Step {
    target: String,
    body: Value,
    captures: Vec<(&'static str, &'static str)>,
    /// Sent again (each server in its own time) until the answer's value
    /// at this JSON pointer is this JSON: a state that settles.
    until: Option<(&'static str, Value)>,
}

fn op(operation: &str, body: Value) -> Step {
    Step {
        target: format!("DynamoDB_20120810.{operation}"),
        body,
        captures: Vec::new(),
        until: None,
    }
}

fn streams_op(operation: &str, body: Value) -> Step {
    Step {
        target: format!("DynamoDBStreams_20120810.{operation}"),
        body,
        captures: Vec::new(),
        until: None,
    }
}

impl Step {
    /// Keeps the answer's value at JSON pointer `pointer` as `{name}`.
    fn capture(mut self, name: &'static str, pointer: &'static str) -> Step {
        self.captures.push((name, pointer));
        self
    }

    /// Repeats the request until the answer holds `value` at `pointer`.
    fn until(mut self, pointer: &'static str, value: Value) -> Step {
        self.until = Some((pointer, value));
        self
    }
}

/// One server under test, with the values its answers gave so far.
struct Peer {
    url: String,
    client: reqwest::Client,
    captured: Vec<(String, String)>,
}

impl Peer {
    fn new(url: String) -> Peer {
        Peer {
            url,
            client: reqwest::Client::new(),
            captured: Vec::new(),
        }
    }

    async fn run(&mut self, table: &str, step: &Step) -> (u16, Value) {
        let Some((pointer, settled)) = &step.until else {
            return self.send(table, step).await;
        };
        let mut last = Value::Null;
        // DynamoDB Local takes its time building an index on a loaded machine.
        for _ in 0..600 {
            let (status, answer) = self.send(table, step).await;
            if answer.pointer(pointer) == Some(settled) {
                return (status, answer);
            }
            last = answer;
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        panic!("{}: {pointer} never became {settled}: {last}", self.url);
    }

    async fn send(&mut self, table: &str, step: &Step) -> (u16, Value) {
        let mut body = step.body.to_string().replace("{t}", table);
        for (name, value) in &self.captured {
            body = body.replace(&format!("{{{name}}}"), value);
        }
        let response = self
            .client
            .post(format!("{}/", self.url))
            .header("content-type", "application/x-amz-json-1.0")
            .header("x-amz-target", &step.target)
            .header("x-amz-date", "20261123T120000Z")
            .header(
                "authorization",
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261123/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, Signature=0123456789abcdef",
            )
            .body(body)
            .send()
            .await
            .expect("the server answers");
        let status = response.status().as_u16();
        let bytes = response.bytes().await.expect("a body");
        let answer: Value = serde_json::from_slice(&bytes).unwrap_or_else(|_| {
            panic!(
                "{} answered with no JSON: {}",
                self.url,
                String::from_utf8_lossy(&bytes)
            )
        });
        for (name, pointer) in &step.captures {
            let value = match answer.pointer(pointer) {
                Some(Value::String(text)) => text.clone(),
                Some(other) => other.to_string(),
                None => panic!("{}: no {pointer} in {answer}", self.url),
            };
            self.captured.push(((*name).to_owned(), value));
        }
        (status, answer)
    }
}

/// The answer without what differs between servers by design; lists whose
/// order DynamoDB leaves unspecified (a BatchGetItem's items) sorted.
fn normalise(value: &Value, table: &str, capacity: bool) -> Value {
    match value {
        Value::Object(members) => {
            let mut kept = Map::new();
            for (name, member) in members {
                if PER_SERVER.contains(&name.as_str()) || (!capacity && name == CAPACITY) {
                    continue;
                }
                // DynamoDB Local spells every error's message key `Message`;
                // which key DynamoDB uses for which exception is checked by
                // rave's own tests (`error.rs`, `expressions`).
                let name = if name == "Message" && members.contains_key("__type") {
                    "message"
                } else {
                    name.as_str()
                };
                let mut member = normalise(member, table, capacity);
                if name == "LastEvaluatedTableName" {
                    // Other tests' tables page DynamoDB Local's listing.
                    continue;
                }
                if name == "TableNames" {
                    // DynamoDB Local is shared by every test: only this case's tables count.
                    if let Value::Array(names) = &mut member {
                        names.retain(|n| n.as_str().is_some_and(|n| n.starts_with(table)));
                    }
                }
                if matches!(name, "Responses" | "UnprocessedKeys") {
                    sort_lists(&mut member);
                }
                // A set in all but its JSON type: each server lists it in its own order.
                if let ("AttributeDefinitions", Value::Array(definitions)) = (name, &mut member) {
                    definitions.sort_by_key(|definition| definition.to_string());
                }
                // So are a table's indexes, which DynamoDB Local lists in an
                // order of its own.
                if let ("GlobalSecondaryIndexes" | "LocalSecondaryIndexes", Value::Array(indexes)) =
                    (name, &mut member)
                {
                    indexes.sort_by_key(|index| index["IndexName"].to_string());
                }
                kept.insert(name.to_owned(), member);
            }
            Value::Object(kept)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| normalise(i, table, capacity))
                .collect(),
        ),
        Value::String(text) => Value::String(sorted_type_set(text)),
        other => other.clone(),
    }
}

/// Every JSON pointer where `got` and `expected` differ, with both values.
fn differences(got: &Value, expected: &Value, at: String, out: &mut Vec<String>) {
    match (got, expected) {
        (Value::Object(got), Value::Object(expected)) => {
            for name in got
                .keys()
                .chain(expected.keys().filter(|k| !got.contains_key(*k)))
            {
                let missing = Value::String("<absent>".into());
                differences(
                    got.get(name).unwrap_or(&missing),
                    expected.get(name).unwrap_or(&missing),
                    format!("{at}/{name}"),
                    out,
                );
            }
        }
        (Value::Array(got_items), Value::Array(expected_items))
            if got_items.len() == expected_items.len() =>
        {
            for (index, (got, expected)) in got_items.iter().zip(expected_items).enumerate() {
                differences(got, expected, format!("{at}/{index}"), out);
            }
        }
        _ if got != expected => out.push(format!("{at}: {got} | {expected}")),
        _ => {}
    }
}

/// A message's `valid types: {N,BS,...}` with the types sorted: a set,
/// which each server lists in its own order.
fn sorted_type_set(text: &str) -> String {
    const MARK: &str = "valid types: {";
    let Some(start) = text.find(MARK).map(|at| at + MARK.len()) else {
        return text.to_owned();
    };
    let Some(length) = text[start..].find('}') else {
        return text.to_owned();
    };
    let mut types: Vec<&str> = text[start..start + length].split(',').collect();
    types.sort_unstable();
    format!(
        "{}{}{}",
        &text[..start],
        types.join(","),
        &text[start + length..]
    )
}

fn sort_lists(value: &mut Value) {
    if let Value::Object(members) = value {
        for member in members.values_mut() {
            if let Value::Array(items) = member {
                items.sort_by_key(|item| item.to_string());
            }
        }
    }
}

/// Runs `steps` on rave and on DynamoDB Local, and lists every step whose
/// answers differ (all of them, not only the first).
async fn differential(case: &'static str, steps: Vec<Step>) {
    let server = Server::start().await;
    let table = unique_table(case);
    let mut rave = Peer::new(server.url.clone());
    let mut local = Peer::new(endpoint());
    let mut divergences = Vec::new();
    for (index, step) in steps.iter().enumerate() {
        let (rave_status, rave_answer) = rave.run(&table, step).await;
        let (local_status, local_answer) = local.run(&table, step).await;
        let capacity = CAPACITY_CASES.contains(&case);
        let got = json!({"status": rave_status, "body": normalise(&rave_answer, &table, capacity)});
        let departure = LOCAL_DEPARTURES
            .iter()
            .find(|d| d.case == case && d.step == index);
        let local =
            json!({"status": local_status, "body": normalise(&local_answer, &table, capacity)});
        let (expected, whose) = match departure {
            Some(departure) => (patched(local, departure, &table), departure.documented),
            None => (local, "DynamoDB Local"),
        };
        if got != expected {
            let mut paths = Vec::new();
            differences(&got, &expected, String::new(), &mut paths);
            divergences.push(format!(
                "step {index} {} {}\n  where: {} (rave, then {whose})",
                step.target,
                step.body,
                paths.join("\n         ")
            ));
        }
    }
    // DynamoDB Local outlives the run: leave it no table to list next time.
    local
        .run(&table, &op("DeleteTable", json!({"TableName": "{t}"})))
        .await;
    server.stop().await;
    assert!(
        divergences.is_empty(),
        "{case}: {} step(s) differ\n{}",
        divergences.len(),
        divergences.join("\n")
    );
}

fn keyed_table(extra: Value) -> Value {
    let mut request = json!({
        "TableName": "{t}",
        "AttributeDefinitions": [
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "N"},
        ],
        "KeySchema": [
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        "BillingMode": "PAY_PER_REQUEST",
    });
    if let (Value::Object(request), Value::Object(extra)) = (&mut request, extra) {
        request.extend(extra);
    }
    request
}

fn item(pk: &str, sk: i64, extra: Value) -> Value {
    let mut item = json!({"pk": {"S": pk}, "sk": {"N": sk.to_string()}});
    if let (Value::Object(item), Value::Object(extra)) = (&mut item, extra) {
        item.extend(extra);
    }
    item
}

fn key(pk: &str, sk: i64) -> Value {
    item(pk, sk, json!({}))
}

#[tokio::test]
async fn control_plane_matches_dynamodb_local() {
    differential(
        "control",
        vec![
            op(
                "CreateTable",
                keyed_table(json!({
                    "AttributeDefinitions": [
                        {"AttributeName": "pk", "AttributeType": "S"},
                        {"AttributeName": "sk", "AttributeType": "N"},
                        {"AttributeName": "g", "AttributeType": "S"},
                        {"AttributeName": "l", "AttributeType": "B"},
                    ],
                    "GlobalSecondaryIndexes": [{
                        "IndexName": "byG",
                        "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
                        "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a", "b"]},
                    }],
                    "LocalSecondaryIndexes": [{
                        "IndexName": "byL",
                        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "l", "KeyType": "RANGE"}],
                        "Projection": {"ProjectionType": "KEYS_ONLY"},
                    }],
                })),
            ),
            op("DescribeTable", json!({"TableName": "{t}"})),
            op("CreateTable", keyed_table(json!({}))),
            op("ListTables", json!({})),
            op("DescribeTimeToLive", json!({"TableName": "{t}"})),
            op(
                "UpdateTimeToLive",
                json!({"TableName": "{t}", "TimeToLiveSpecification": {"Enabled": true, "AttributeName": "expires"}}),
            ),
            op("DescribeTimeToLive", json!({"TableName": "{t}"})),
            op(
                "UpdateTimeToLive",
                json!({"TableName": "{t}", "TimeToLiveSpecification": {"Enabled": true, "AttributeName": "expires"}}),
            ),
            op(
                "UpdateTable",
                json!({"TableName": "{t}", "BillingMode": "PROVISIONED", "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}}),
            ),
            op("DescribeTable", json!({"TableName": "{t}-missing"})),
            op("DeleteTable", json!({"TableName": "{t}-missing"})),
            op(
                "CreateTable",
                json!({"TableName": "{t}-bad", "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}], "KeySchema": [{"AttributeName": "other", "KeyType": "HASH"}], "BillingMode": "PAY_PER_REQUEST"}),
            ),
            op(
                "CreateTable",
                json!({"TableName": "x", "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}], "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "BillingMode": "PAY_PER_REQUEST"}),
            ),
            op(
                "CreateTable",
                json!({"TableName": "{t}-p", "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}], "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]}),
            ),
            op("DeleteTable", json!({"TableName": "{t}"})),
            op("DescribeTable", json!({"TableName": "{t}"})),
        ],
    )
    .await;
}

#[tokio::test]
async fn items_match_dynamodb_local() {
    differential(
        "items",
        vec![
            op("CreateTable", keyed_table(json!({}))),
            op(
                "PutItem",
                json!({"TableName": "{t}", "Item": item("a", 1, json!({"n": {"N": "10"}, "s": {"SS": ["x", "y"]}, "m": {"M": {"in": {"L": [{"S": "deep"}, {"NULL": true}]}}}})), "ReturnValues": "ALL_OLD"}),
            ),
            op(
                "PutItem",
                json!({"TableName": "{t}", "Item": item("a", 1, json!({"n": {"N": "11"}})), "ReturnValues": "ALL_OLD"}),
            ),
            op("GetItem", json!({"TableName": "{t}", "Key": key("a", 1)})),
            op("GetItem", json!({"TableName": "{t}", "Key": key("a", 2)})),
            op("GetItem", json!({"TableName": "{t}", "Key": {"pk": {"S": "a"}}})),
            op(
                "GetItem",
                json!({"TableName": "{t}", "Key": key("a", 1), "ProjectionExpression": "#n, sk", "ExpressionAttributeNames": {"#n": "n"}}),
            ),
            op(
                "PutItem",
                json!({"TableName": "{t}", "Item": item("a", 1, json!({})), "ConditionExpression": "attribute_not_exists(pk)", "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}),
            ),
            op(
                "UpdateItem",
                json!({"TableName": "{t}", "Key": key("a", 1), "UpdateExpression": "SET #n = #n + :one, tags = :tags ADD c :one", "ExpressionAttributeNames": {"#n": "n"}, "ExpressionAttributeValues": {":one": {"N": "1"}, ":tags": {"L": [{"S": "t"}]}}, "ReturnValues": "UPDATED_NEW"}),
            ),
            op(
                "UpdateItem",
                json!({"TableName": "{t}", "Key": key("a", 1), "UpdateExpression": "REMOVE tags[0] SET c = if_not_exists(c, :z)", "ExpressionAttributeValues": {":z": {"N": "0"}}, "ReturnValues": "UPDATED_OLD"}),
            ),
            op(
                "UpdateItem",
                json!({"TableName": "{t}", "Key": key("a", 1), "UpdateExpression": "SET sk = :z", "ExpressionAttributeValues": {":z": {"N": "0"}}}),
            ),
            op(
                "UpdateItem",
                json!({"TableName": "{t}", "Key": key("b", 1), "UpdateExpression": "REMOVE gone", "ReturnValues": "ALL_NEW"}),
            ),
            op("GetItem", json!({"TableName": "{t}", "Key": key("b", 1)})),
            op(
                "UpdateItem",
                json!({"TableName": "{t}", "Key": key("a", 1), "UpdateExpression": "SET n = :v", "ExpressionAttributeValues": {":v": {"N": "1"}, ":unused": {"N": "2"}}}),
            ),
            op(
                "DeleteItem",
                json!({"TableName": "{t}", "Key": key("a", 1), "ConditionExpression": "n > :v", "ExpressionAttributeValues": {":v": {"N": "100"}}}),
            ),
            op(
                "DeleteItem",
                json!({"TableName": "{t}", "Key": key("a", 1), "ReturnValues": "ALL_OLD"}),
            ),
            op(
                "PutItem",
                json!({"TableName": "{t}", "Item": item("a", 1, json!({"bad": {"S": ""}, "e": {"SS": []}}))}),
            ),
            op(
                "PutItem",
                json!({"TableName": "{t}", "Item": item("a", 1, json!({"n": {"N": "1e200"}}))}),
            ),
            op("PutItem", json!({"TableName": "{t}", "Item": {"pk": {"S": "a"}, "sk": {"S": "1"}}})),
            op("PutItem", json!({"TableName": "{t}-missing", "Item": key("a", 1)})),
            op(
                "PutItem",
                json!({"TableName": "{t}", "Item": key("a", 1), "ReturnValues": "ALL_NEW"}),
            ),
        ],
    )
    .await;
}

#[tokio::test]
async fn queries_and_scans_match_dynamodb_local() {
    let mut steps = vec![op(
        "CreateTable",
        keyed_table(json!({
            "AttributeDefinitions": [
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "N"},
                {"AttributeName": "g", "AttributeType": "S"},
            ],
            "GlobalSecondaryIndexes": [{
                "IndexName": "byG",
                // A sort key, so the index's order is defined.
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }],
        })),
    )];
    for sk in 0..8 {
        let pk = if sk % 2 == 0 { "even" } else { "odd" };
        steps.push(op(
            "PutItem",
            json!({"TableName": "{t}", "Item": item(pk, sk, json!({"g": {"S": "all"}, "v": {"N": (sk * 3).to_string()}}))}),
        ));
    }
    let queries = [
        json!({"KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "even"}}}),
        json!({"KeyConditionExpression": "pk = :p AND sk BETWEEN :a AND :b", "ExpressionAttributeValues": {":p": {"S": "even"}, ":a": {"N": "1"}, ":b": {"N": "5"}}, "ScanIndexForward": false}),
        json!({"KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "odd"}}, "Limit": 2}),
        json!({"KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "odd"}}, "Limit": 2, "ExclusiveStartKey": key("odd", 3)}),
        json!({"KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "odd"}}, "Select": "COUNT"}),
        json!({"KeyConditionExpression": "pk = :p", "FilterExpression": "v > :v", "ExpressionAttributeValues": {":p": {"S": "odd"}, ":v": {"N": "5"}}}),
        json!({"KeyConditionExpression": "pk = :p", "FilterExpression": "sk > :v", "ExpressionAttributeValues": {":p": {"S": "odd"}, ":v": {"N": "5"}}}),
        json!({"KeyConditionExpression": "sk = :v", "ExpressionAttributeValues": {":v": {"N": "5"}}}),
        json!({"KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "odd"}}, "ProjectionExpression": "v"}),
        json!({"KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "odd"}}, "Select": "SPECIFIC_ATTRIBUTES"}),
        json!({"IndexName": "byG", "KeyConditionExpression": "g = :g", "ExpressionAttributeValues": {":g": {"S": "all"}}, "Select": "ALL_ATTRIBUTES"}),
        json!({"IndexName": "byG", "KeyConditionExpression": "g = :g", "ExpressionAttributeValues": {":g": {"S": "all"}}, "ConsistentRead": true}),
        json!({"IndexName": "missing", "KeyConditionExpression": "g = :g", "ExpressionAttributeValues": {":g": {"S": "all"}}}),
        json!({"KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "odd"}}, "ExclusiveStartKey": key("even", 2)}),
    ];
    for query in queries {
        let mut body = query;
        body["TableName"] = json!("{t}");
        steps.push(op("Query", body));
    }
    let scans = [
        json!({}),
        json!({"Limit": 3}),
        json!({"Segment": 0, "TotalSegments": 2}),
        json!({"Segment": 1, "TotalSegments": 2}),
        json!({"Segment": 2, "TotalSegments": 2}),
        json!({"FilterExpression": "v >= :v", "ExpressionAttributeValues": {":v": {"N": "9"}}, "Select": "COUNT"}),
        json!({"IndexName": "byG"}),
        json!({"ProjectionExpression": "pk, v"}),
    ];
    for scan in scans {
        let mut body = scan;
        body["TableName"] = json!("{t}");
        steps.push(op("Scan", body));
    }
    differential("pages", steps).await;
}

/// A Query's key condition values are held to what an item's key may be:
/// an empty string or a sort-key value past 1,024 bytes is refused, an
/// index's key named with its index.
#[tokio::test]
async fn key_condition_values_match_dynamodb_local() {
    let mut steps = vec![op(
        "CreateTable",
        json!({
            "TableName": "{t}",
            "AttributeDefinitions": [
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
                {"AttributeName": "g", "AttributeType": "S"},
            ],
            "KeySchema": [
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
            "BillingMode": "PAY_PER_REQUEST",
            "GlobalSecondaryIndexes": [{
                "IndexName": "byG",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "ALL"},
            }],
        }),
    )];
    let long = "x".repeat(1025);
    let widest = "é".repeat(512);
    let queries = [
        json!({"KeyConditionExpression": "pk = :p AND sk = :s", "ExpressionAttributeValues": {":p": {"S": "a"}, ":s": {"S": long}}}),
        json!({"KeyConditionExpression": "pk = :p AND sk > :s", "ExpressionAttributeValues": {":p": {"S": "a"}, ":s": {"S": widest}}}),
        json!({"KeyConditionExpression": "pk = :p AND sk BETWEEN :a AND :b", "ExpressionAttributeValues": {":p": {"S": "a"}, ":a": {"S": "a"}, ":b": {"S": long}}}),
        json!({"KeyConditionExpression": "pk = :p AND begins_with(sk, :s)", "ExpressionAttributeValues": {":p": {"S": "a"}, ":s": {"S": ""}}}),
        json!({"KeyConditionExpression": "pk = :p AND sk BETWEEN :a AND :b", "ExpressionAttributeValues": {":p": {"S": "a"}, ":a": {"S": ""}, ":b": {"S": "b"}}}),
        json!({"KeyConditionExpression": "pk = :p AND sk = :s", "ExpressionAttributeValues": {":p": {"S": ""}, ":s": {"S": long}}}),
        json!({"IndexName": "byG", "KeyConditionExpression": "g = :g", "ExpressionAttributeValues": {":g": {"S": ""}}}),
        json!({"IndexName": "byG", "KeyConditionExpression": "g = :g AND begins_with(sk, :s)", "ExpressionAttributeValues": {":g": {"S": "a"}, ":s": {"S": ""}}}),
        json!({"IndexName": "byG", "KeyConditionExpression": "g = :g AND sk = :s", "ExpressionAttributeValues": {":g": {"S": "a"}, ":s": {"S": long}}}),
        json!({"KeyConditions": {"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]}, "sk": {"ComparisonOperator": "BEGINS_WITH", "AttributeValueList": [{"S": ""}]}}}),
    ];
    for query in queries {
        let mut body = query;
        body["TableName"] = json!("{t}");
        steps.push(op("Query", body));
    }
    differential("key-condition-values", steps).await;
}

#[tokio::test]
async fn batches_and_transactions_match_dynamodb_local() {
    differential(
        "batch",
        vec![
            op("CreateTable", keyed_table(json!({}))),
            op(
                "BatchWriteItem",
                json!({"RequestItems": {"{t}": [
                    {"PutRequest": {"Item": item("a", 1, json!({"v": {"S": "one"}}))}},
                    {"PutRequest": {"Item": item("a", 2, json!({"v": {"S": "two"}}))}},
                    {"PutRequest": {"Item": item("b", 1, json!({}))}},
                ]}}),
            ),
            op(
                "BatchGetItem",
                json!({"RequestItems": {"{t}": {"Keys": [key("a", 1), key("a", 2), key("z", 9)], "ProjectionExpression": "v"}}}),
            ),
            op(
                "BatchWriteItem",
                json!({"RequestItems": {"{t}": [
                    {"PutRequest": {"Item": key("c", 1)}},
                    {"DeleteRequest": {"Key": key("c", 1)}},
                ]}}),
            ),
            op(
                "BatchWriteItem",
                json!({"RequestItems": {"{t}": [{"DeleteRequest": {"Key": key("b", 1)}}]}}),
            ),
            op(
                "BatchGetItem",
                json!({"RequestItems": {"{t}": {"Keys": [key("a", 1), key("a", 1)]}}}),
            ),
            op("BatchGetItem", json!({"RequestItems": {}})),
            op(
                "TransactWriteItems",
                json!({"TransactItems": [
                    {"Put": {"TableName": "{t}", "Item": item("t", 1, json!({"v": {"N": "1"}}))}},
                    {"Update": {"TableName": "{t}", "Key": key("a", 1), "UpdateExpression": "SET w = :w", "ExpressionAttributeValues": {":w": {"N": "2"}}}},
                    {"Delete": {"TableName": "{t}", "Key": key("a", 2)}},
                    {"ConditionCheck": {"TableName": "{t}", "Key": key("b", 1), "ConditionExpression": "attribute_not_exists(pk)"}},
                ]}),
            ),
            op(
                "TransactWriteItems",
                json!({"TransactItems": [
                    {"Put": {"TableName": "{t}", "Item": item("t", 2, json!({}))}},
                    {"ConditionCheck": {"TableName": "{t}", "Key": key("t", 1), "ConditionExpression": "v = :two", "ExpressionAttributeValues": {":two": {"N": "2"}}, "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}},
                ]}),
            ),
            op(
                "TransactWriteItems",
                json!({"TransactItems": [
                    {"Put": {"TableName": "{t}", "Item": key("t", 3)}},
                    {"Delete": {"TableName": "{t}", "Key": key("t", 3)}},
                ]}),
            ),
            op(
                "TransactGetItems",
                json!({"TransactItems": [
                    {"Get": {"TableName": "{t}", "Key": key("t", 1)}},
                    {"Get": {"TableName": "{t}", "Key": key("t", 2)}},
                    {"Get": {"TableName": "{t}", "Key": key("a", 1), "ProjectionExpression": "w"}},
                ]}),
            ),
            op("TransactWriteItems", json!({"TransactItems": []})),
        ],
    )
    .await;
}

#[tokio::test]
async fn streams_match_dynamodb_local() {
    differential(
        "streams",
        vec![
            op(
                "CreateTable",
                keyed_table(json!({"StreamSpecification": {"StreamEnabled": true, "StreamViewType": "NEW_AND_OLD_IMAGES"}})),
            )
            .capture("stream", "/TableDescription/LatestStreamArn"),
            op("PutItem", json!({"TableName": "{t}", "Item": item("a", 1, json!({"v": {"N": "1"}}))})),
            op(
                "UpdateItem",
                json!({"TableName": "{t}", "Key": key("a", 1), "UpdateExpression": "SET v = :v", "ExpressionAttributeValues": {":v": {"N": "2"}}}),
            ),
            op("DeleteItem", json!({"TableName": "{t}", "Key": key("a", 1)})),
            op("DeleteItem", json!({"TableName": "{t}", "Key": key("a", 1)})),
            streams_op("ListStreams", json!({"TableName": "{t}"})),
            streams_op("DescribeStream", json!({"StreamArn": "{stream}"}))
                .capture("shard", "/StreamDescription/Shards/0/ShardId"),
            streams_op(
                "GetShardIterator",
                json!({"StreamArn": "{stream}", "ShardId": "{shard}", "ShardIteratorType": "TRIM_HORIZON"}),
            )
            .capture("iterator", "/ShardIterator"),
            streams_op("GetRecords", json!({"ShardIterator": "{iterator}"})),
            streams_op(
                "GetShardIterator",
                json!({"StreamArn": "{stream}", "ShardId": "{shard}", "ShardIteratorType": "AT_SEQUENCE_NUMBER"}),
            ),
            streams_op("GetRecords", json!({"ShardIterator": "nonsense"})),
        ],
    )
    .await;
}

/// A seeded generator of expressions (SplitMix64: the same corpus on every
/// run, so a divergence it finds stays found).
struct Corpus {
    state: u64,
    /// The value placeholders the expression being built uses.
    values: Map<String, Value>,
}

impl Corpus {
    fn new(seed: u64) -> Corpus {
        Corpus {
            state: seed,
            values: Map::new(),
        }
    }

    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, bound: usize) -> usize {
        usize::try_from(self.next() % bound as u64).unwrap_or(0)
    }

    fn pick<'a>(&mut self, choices: &[&'a str]) -> &'a str {
        choices[self.below(choices.len())]
    }

    /// An attribute path: plain, through `#name` (a reserved word), nested.
    fn path(&mut self) -> String {
        self.pick(&[
            "pk", "sk", "v", "s", "#name", "m.inner", "l[0]", "l[1]", "absent", "#size",
        ])
        .to_owned()
    }

    /// A value placeholder bound to a value of a random type.
    fn value(&mut self) -> String {
        let name = format!(":v{}", self.values.len());
        let value = match self.below(6) {
            0 => json!({"N": self.below(30).to_string()}),
            1 => json!({"S": self.pick(&["a", "b", "odd", "even", "x"])}),
            2 => json!({"N": format!("-{}.5", self.below(5))}),
            3 => json!({"BOOL": self.below(2) == 1}),
            4 => json!({"L": [{"N": "1"}]}),
            _ => json!({"S": ""}),
        };
        self.values.insert(name.clone(), value);
        name
    }

    fn operand(&mut self) -> String {
        match self.below(4) {
            0 | 1 => self.path(),
            2 => format!("size({})", self.path()),
            _ => self.value(),
        }
    }

    fn condition(&mut self, depth: u32) -> String {
        let leaf = depth == 0 || self.below(3) == 0;
        if leaf {
            return match self.below(9) {
                0 => format!("attribute_exists({})", self.path()),
                1 => format!("attribute_not_exists({})", self.path()),
                2 => format!("attribute_type({}, {})", self.path(), self.value()),
                3 => format!("begins_with({}, {})", self.path(), self.value()),
                4 => format!("contains({}, {})", self.path(), self.value()),
                5 => format!(
                    "{} BETWEEN {} AND {}",
                    self.operand(),
                    self.value(),
                    self.value()
                ),
                6 => format!("{} IN ({}, {})", self.operand(), self.value(), self.value()),
                _ => {
                    let comparator = self.pick(&["=", "<>", "<", "<=", ">", ">="]);
                    format!("{} {comparator} {}", self.operand(), self.operand())
                }
            };
        }
        match self.below(4) {
            0 => format!("NOT {}", self.condition(depth - 1)),
            1 => format!("({})", self.condition(depth - 1)),
            2 => format!(
                "{} AND {}",
                self.condition(depth - 1),
                self.condition(depth - 1)
            ),
            _ => format!(
                "{} OR {}",
                self.condition(depth - 1),
                self.condition(depth - 1)
            ),
        }
    }

    fn update(&mut self) -> String {
        let mut clauses = Vec::new();
        for _ in 0..=self.below(2) {
            clauses.push(match self.below(5) {
                0 => format!("SET {} = {}", self.path(), self.operand()),
                1 => format!(
                    "SET {} = {} + {}",
                    self.path(),
                    self.operand(),
                    self.operand()
                ),
                2 => format!(
                    "SET {} = list_append({}, {})",
                    self.path(),
                    self.operand(),
                    self.value()
                ),
                3 => format!("REMOVE {}", self.path()),
                _ => format!("ADD {} {}", self.path(), self.value()),
            });
        }
        clauses.join(" ")
    }

    /// Breaks a valid expression the ways a client does: a token dropped or
    /// doubled, an unknown function, an undefined placeholder, a reserved
    /// word used bare.
    fn break_expression(&mut self, expression: &str) -> String {
        let tokens: Vec<&str> = expression.split(' ').collect();
        let at = self.below(tokens.len());
        match self.below(5) {
            0 => tokens
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != at)
                .map(|(_, t)| *t)
                .collect::<Vec<_>>()
                .join(" "),
            1 => format!("{expression} {}", tokens[at]),
            2 => format!("frobnicate(v) AND {expression}"),
            3 => format!("{expression} AND v = :undefined"),
            _ => expression.replace("#name", "name"),
        }
    }

    /// The request members an expression needs: its names and values.
    fn bind(&mut self, expression: &str, request: &mut Value) {
        let mut names = Map::new();
        for (placeholder, name) in [("#name", "name"), ("#size", "size")] {
            if expression.contains(placeholder) {
                names.insert(placeholder.into(), json!(name));
            }
        }
        if !names.is_empty() {
            request["ExpressionAttributeNames"] = Value::Object(names);
        }
        let values = std::mem::take(&mut self.values);
        if !values.is_empty() {
            request["ExpressionAttributeValues"] = Value::Object(values);
        }
    }
}

fn corpus_items() -> Vec<Step> {
    let mut steps = vec![op("CreateTable", keyed_table(json!({})))];
    for sk in 0..6 {
        let pk = if sk % 2 == 0 { "even" } else { "odd" };
        let mut extra = json!({"v": {"N": (sk * 5).to_string()}, "s": {"S": (["a", "ab", "b"][sk as usize % 3])}});
        if sk % 3 != 0 {
            extra["name"] = json!({"S": format!("n{sk}")});
            extra["m"] = json!({"M": {"inner": {"N": sk.to_string()}}});
            extra["l"] = json!({"L": [{"N": "1"}, {"S": "two"}]});
        }
        steps.push(op(
            "PutItem",
            json!({"TableName": "{t}", "Item": item(pk, sk, extra)}),
        ));
    }
    steps
}

#[tokio::test]
async fn generated_filters_and_conditions_match_dynamodb_local() {
    let mut corpus = Corpus::new(0x5EED_0001);
    let mut steps = corpus_items();
    for round in 0..80 {
        let mut expression = corpus.condition(3);
        if round % 4 == 3 {
            expression = corpus.break_expression(&expression);
        }
        let mut request = json!({"TableName": "{t}", "FilterExpression": expression});
        corpus.bind(&expression, &mut request);
        steps.push(op("Scan", request));
    }
    for round in 0..30 {
        let mut expression = corpus.condition(2);
        if round % 4 == 3 {
            expression = corpus.break_expression(&expression);
        }
        let mut request = json!({
            "TableName": "{t}",
            "Item": item("odd", 1, json!({"v": {"N": "5"}})),
            "ConditionExpression": expression,
        });
        corpus.bind(&expression, &mut request);
        steps.push(op("PutItem", request));
    }
    differential("filters", steps).await;
}

#[tokio::test]
async fn generated_updates_and_projections_match_dynamodb_local() {
    let mut corpus = Corpus::new(0x5EED_0002);
    let mut steps = corpus_items();
    for round in 0..60 {
        let mut expression = corpus.update();
        if round % 4 == 3 {
            expression = corpus.break_expression(&expression);
        }
        let sk = corpus.below(6) as i64;
        let pk = if sk % 2 == 0 { "even" } else { "odd" };
        let mut request = json!({
            "TableName": "{t}",
            "Key": key(pk, sk),
            "UpdateExpression": expression,
            "ReturnValues": (["ALL_NEW", "UPDATED_OLD", "UPDATED_NEW", "ALL_OLD"][round % 4]),
        });
        corpus.bind(&expression, &mut request);
        steps.push(op("UpdateItem", request));
    }
    for round in 0..20 {
        let mut paths: Vec<String> = (0..=corpus.below(3)).map(|_| corpus.path()).collect();
        if round % 5 == 4 {
            paths.push("v[0".into());
        }
        let expression = paths.join(", ");
        let mut request = json!({"TableName": "{t}", "ProjectionExpression": expression});
        corpus.bind(&expression, &mut request);
        steps.push(op("Scan", request));
    }
    for round in 0..20 {
        let condition = match round % 5 {
            0 => "pk = :p AND sk > :s",
            1 => "pk = :p AND begins_with(sk, :s)",
            2 => ":p = pk AND sk <= :s",
            3 => "pk = :p OR sk = :s",
            _ => "pk = :p AND v = :s",
        };
        steps.push(op(
            "Query",
            json!({
                "TableName": "{t}",
                "KeyConditionExpression": condition,
                "ExpressionAttributeValues": {":p": {"S": (["odd", "even"][round % 2])}, ":s": {"N": (round % 6).to_string()}},
            }),
        ));
    }
    differential("updates", steps).await;
}

#[tokio::test]
async fn tags_limits_and_idempotent_transactions_match_dynamodb_local() {
    let transaction = json!({
        // The table's name: unique per run, since DynamoDB Local keeps tokens.
        "ClientRequestToken": "{t}",
        "TransactItems": [{"Put": {"TableName": "{t}", "Item": item("t", 1, json!({}))}}],
    });
    let mut changed = transaction.clone();
    changed["TransactItems"][0]["Put"]["Item"]["v"] = json!({"N": "2"});
    differential(
        "tags",
        vec![
            op("CreateTable", keyed_table(json!({})))
                .capture("arn", "/TableDescription/TableArn"),
            op(
                "TagResource",
                json!({"ResourceArn": "{arn}", "Tags": [{"Key": "team", "Value": "rave"}, {"Key": "tier", "Value": "1"}]}),
            ),
            op("ListTagsOfResource", json!({"ResourceArn": "{arn}"})),
            op("UntagResource", json!({"ResourceArn": "{arn}", "TagKeys": ["tier"]})),
            op("ListTagsOfResource", json!({"ResourceArn": "{arn}"})),
            op("DescribeLimits", json!({})),
            op("TransactWriteItems", transaction.clone()),
            op("TransactWriteItems", transaction),
            op("TransactWriteItems", changed),
            op("GetItem", json!({"TableName": "{t}", "Key": key("t", 1)})),
        ],
    )
    .await;
}

#[tokio::test]
async fn item_collection_metrics_match_dynamodb_local() {
    let metrics = |mut request: Value, asked: &str| {
        request["ReturnItemCollectionMetrics"] = json!(asked);
        request
    };
    differential(
        "collections",
        vec![
            op(
                "CreateTable",
                keyed_table(json!({
                    "AttributeDefinitions": [
                        {"AttributeName": "pk", "AttributeType": "S"},
                        {"AttributeName": "sk", "AttributeType": "N"},
                        {"AttributeName": "l", "AttributeType": "N"},
                    ],
                    "LocalSecondaryIndexes": [{
                        "IndexName": "byL",
                        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "l", "KeyType": "RANGE"}],
                        "Projection": {"ProjectionType": "KEYS_ONLY"},
                    }],
                })),
            ),
            op(
                "PutItem",
                metrics(
                    json!({"TableName": "{t}", "Item": item("a", 1, json!({"l": {"N": "5"}}))}),
                    "SIZE",
                ),
            ),
            op(
                "PutItem",
                metrics(
                    json!({"TableName": "{t}", "Item": item("a", 2, json!({}))}),
                    "NONE",
                ),
            ),
            op(
                "UpdateItem",
                metrics(
                    json!({"TableName": "{t}", "Key": key("a", 2), "UpdateExpression": "SET l = :l", "ExpressionAttributeValues": {":l": {"N": "7"}}, "ReturnValues": "ALL_NEW"}),
                    "SIZE",
                ),
            ),
            op(
                "DeleteItem",
                metrics(json!({"TableName": "{t}", "Key": key("a", 1)}), "SIZE"),
            ),
            op(
                "BatchWriteItem",
                metrics(
                    json!({"RequestItems": {"{t}": [
                        {"PutRequest": {"Item": item("a", 3, json!({}))}},
                        {"PutRequest": {"Item": item("b", 1, json!({"l": {"N": "1"}}))}},
                        {"DeleteRequest": {"Key": key("a", 2)}},
                    ]}}),
                    "SIZE",
                ),
            ),
            op(
                "TransactWriteItems",
                metrics(
                    json!({"TransactItems": [
                        {"Put": {"TableName": "{t}", "Item": item("c", 1, json!({}))}},
                        {"ConditionCheck": {"TableName": "{t}", "Key": key("d", 1), "ConditionExpression": "attribute_not_exists(pk)"}},
                    ]}),
                    "SIZE",
                ),
            ),
            op(
                "PutItem",
                metrics(
                    json!({"TableName": "{t}", "Item": item("a", 4, json!({}))}),
                    "ALL",
                ),
            ),
            // A table without local secondary indexes has no item collections.
            op("CreateTable", keyed_table(json!({"TableName": "{t}-plain"}))),
            op(
                "PutItem",
                metrics(
                    json!({"TableName": "{t}-plain", "Item": item("a", 1, json!({}))}),
                    "SIZE",
                ),
            ),
            op("DeleteTable", json!({"TableName": "{t}-plain"})),
        ],
    )
    .await;
}

/// `ReturnConsumedCapacity` NONE, TOTAL and INDEXES on every data-plane
/// operation, on a table with a global and a local secondary index.
#[tokio::test]
async fn consumed_capacity_matches_dynamodb_local() {
    let mut steps = vec![op(
        "CreateTable",
        keyed_table(json!({
            "AttributeDefinitions": [
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "N"},
                {"AttributeName": "g", "AttributeType": "S"},
                {"AttributeName": "l", "AttributeType": "N"},
            ],
            "GlobalSecondaryIndexes": [{
                "IndexName": "byG",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            }],
            "LocalSecondaryIndexes": [{
                "IndexName": "byL",
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "l", "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }],
        })),
    )];
    let partition = json!({":p": {"S": "a"}});
    for (round, detail) in ["NONE", "TOTAL", "INDEXES"].into_iter().enumerate() {
        let sk = round as i64 * 10;
        let with = |mut request: Value| {
            request["ReturnConsumedCapacity"] = json!(detail);
            request
        };
        let indexed = item(
            "a",
            sk,
            json!({"g": {"S": "x"}, "l": {"N": "3"}, "v": {"S": "some text"}}),
        );
        steps.extend([
            op("PutItem", with(json!({"TableName": "{t}", "Item": indexed}))),
            op("PutItem", with(json!({"TableName": "{t}", "Item": item("a", sk, json!({"g": {"S": "y"}}))}))),
            op("GetItem", with(json!({"TableName": "{t}", "Key": key("a", sk)}))),
            op("GetItem", with(json!({"TableName": "{t}", "Key": key("a", sk), "ConsistentRead": true}))),
            op(
                "UpdateItem",
                with(json!({"TableName": "{t}", "Key": key("a", sk), "UpdateExpression": "SET l = :l", "ExpressionAttributeValues": {":l": {"N": (4 + round).to_string()}}})),
            ),
            op(
                "Query",
                with(json!({"TableName": "{t}", "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": partition})),
            ),
            op(
                "Query",
                with(json!({"TableName": "{t}", "IndexName": "byL", "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": partition, "ConsistentRead": true})),
            ),
            op(
                "Query",
                with(json!({"TableName": "{t}", "IndexName": "byG", "KeyConditionExpression": "g = :g", "ExpressionAttributeValues": {":g": {"S": "y"}}})),
            ),
            // Counted: the order of a scan is each server's own.
            op("Scan", with(json!({"TableName": "{t}", "Select": "COUNT"}))),
            op(
                "Scan",
                with(json!({"TableName": "{t}", "IndexName": "byG", "Select": "COUNT"})),
            ),
            op(
                "BatchGetItem",
                with(json!({"RequestItems": {"{t}": {"Keys": [key("a", sk), key("b", sk)]}}})),
            ),
            op(
                "BatchWriteItem",
                with(json!({"RequestItems": {"{t}": [
                    {"PutRequest": {"Item": item("b", sk, json!({"g": {"S": "x"}}))}},
                    {"DeleteRequest": {"Key": key("c", sk)}},
                ]}})),
            ),
            op(
                "TransactGetItems",
                with(json!({"TransactItems": [{"Get": {"TableName": "{t}", "Key": key("a", sk)}}]})),
            ),
            op(
                "TransactWriteItems",
                with(json!({"TransactItems": [
                    {"Put": {"TableName": "{t}", "Item": item("c", sk, json!({}))}},
                    {"Update": {"TableName": "{t}", "Key": key("a", sk), "UpdateExpression": "REMOVE g"}},
                ]})),
            ),
            op("DeleteItem", with(json!({"TableName": "{t}", "Key": key("c", sk)}))),
        ]);
    }
    differential("capacity", steps).await;
}

/// Queries and scans of local secondary indexes: both consistency modes,
/// projections, reads of attributes an index does not project (fetched
/// from the table, and charged), every Select, paging, and the errors.
#[tokio::test]
async fn local_secondary_index_reads_match_dynamodb_local() {
    let query = |extra: Value| {
        let mut request = json!({
            "TableName": "{t}",
            "IndexName": "byDate",
            "KeyConditionExpression": "pk = :p",
            "ExpressionAttributeValues": {":p": {"S": "p"}},
            "ReturnConsumedCapacity": "INDEXES",
        });
        if let (Value::Object(request), Value::Object(extra)) = (&mut request, extra) {
            request.extend(extra);
        }
        op("Query", request)
    };
    let mut steps = vec![op(
        "CreateTable",
        keyed_table(json!({
            "AttributeDefinitions": [
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "N"},
                {"AttributeName": "date", "AttributeType": "N"},
                {"AttributeName": "title", "AttributeType": "S"},
            ],
            "LocalSecondaryIndexes": [
                {
                    "IndexName": "byDate",
                    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "date", "KeyType": "RANGE"}],
                    "Projection": {"ProjectionType": "KEYS_ONLY"},
                },
                {
                    "IndexName": "byTitle",
                    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "title", "KeyType": "RANGE"}],
                    "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["body"]},
                },
            ],
        })),
    )];
    // Dates run against the sort key; sk 4 has none (sparse).
    for (sk, date) in [(1, Some(30)), (2, Some(20)), (3, Some(10)), (4, None)] {
        let mut extra = json!({
            "title": {"S": format!("t{sk}")},
            "body": {"S": "text"},
            "extra": {"S": "not projected"},
        });
        if let Some(date) = date {
            extra["date"] = json!({"N": date.to_string()});
        }
        steps.push(op(
            "PutItem",
            json!({"TableName": "{t}", "Item": item("p", sk, extra)}),
        ));
    }
    steps.extend([
        query(json!({})),
        query(json!({"ConsistentRead": true})),
        query(json!({"Select": "ALL_ATTRIBUTES"})),
        query(json!({"Select": "ALL_PROJECTED_ATTRIBUTES", "ConsistentRead": true})),
        query(json!({"Select": "SPECIFIC_ATTRIBUTES", "ProjectionExpression": "extra, sk"})),
        query(json!({"Select": "COUNT"})),
        query(json!({"IndexName": "byTitle", "ProjectionExpression": "body, title"})),
        query(json!({"ScanIndexForward": false, "Limit": 2})),
        query(json!({
            "ExclusiveStartKey": {"pk": {"S": "p"}, "sk": {"N": "2"}, "date": {"N": "20"}},
            "ScanIndexForward": false,
        })),
        query(json!({
            "KeyConditionExpression": "pk = :p AND #d BETWEEN :a AND :b",
            "ExpressionAttributeNames": {"#d": "date"},
            "ExpressionAttributeValues": {":p": {"S": "p"}, ":a": {"N": "15"}, ":b": {"N": "30"}},
        })),
        op(
            "Scan",
            json!({"TableName": "{t}", "IndexName": "byTitle", "ReturnConsumedCapacity": "INDEXES"}),
        ),
        op(
            "Scan",
            json!({"TableName": "{t}", "IndexName": "byDate", "ConsistentRead": true, "Select": "COUNT", "ReturnConsumedCapacity": "INDEXES"}),
        ),
        // Refused: a Select that needs a projection without one; an index
        // the table lacks.
        query(json!({"Select": "SPECIFIC_ATTRIBUTES"})),
        query(json!({"IndexName": "byNothing"})),
    ]);
    differential("local", steps).await;
}

/// Errors a conformance suite probes, across operations: a missing table,
/// key schemas and key values that do not fit, empty key strings, an item
/// past 400 KB, batches empty or with one key twice, a transaction
/// touching one item twice, Limit and Segment out of range, and operations
/// DynamoDB does not have.
#[tokio::test]
async fn errors_across_operations_match_dynamodb_local() {
    let big = "x".repeat(400 * 1024);
    differential(
        "errors",
        vec![
            op("CreateTable", keyed_table(json!({}))),
            op("GetItem", json!({"TableName": "{t}-missing", "Key": key("a", 1)})),
            op("PutItem", json!({"TableName": "{t}", "Item": {"pk": {"S": "a"}}})),
            op("PutItem", json!({"TableName": "{t}", "Item": {"pk": {"S": "a"}, "sk": {"S": "1"}}})),
            op("PutItem", json!({"TableName": "{t}", "Item": {"pk": {"S": ""}, "sk": {"N": "1"}}})),
            op("GetItem", json!({"TableName": "{t}", "Key": {"pk": {"S": ""}, "sk": {"N": "1"}}})),
            op("GetItem", json!({"TableName": "{t}", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}, "x": {"S": "y"}}})),
            op("DeleteItem", json!({"TableName": "{t}", "Key": {"pk": {"S": "a"}}})),
            op("PutItem", json!({"TableName": "{t}", "Item": item("a", 1, json!({"big": {"S": big}}))})),
            op("BatchWriteItem", json!({"RequestItems": {"{t}": []}})),
            op(
                "BatchWriteItem",
                json!({"RequestItems": {"{t}": [
                    {"PutRequest": {"Item": key("a", 1)}},
                    {"DeleteRequest": {"Key": key("a", 1)}},
                ]}}),
            ),
            op("BatchGetItem", json!({"RequestItems": {"{t}": {"Keys": [key("a", 1), key("a", 1)]}}})),
            op(
                "TransactWriteItems",
                json!({"TransactItems": [
                    {"Put": {"TableName": "{t}", "Item": key("a", 1)}},
                    {"Delete": {"TableName": "{t}", "Key": key("a", 1)}},
                ]}),
            ),
            op(
                "TransactGetItems",
                json!({"TransactItems": [
                    {"Get": {"TableName": "{t}", "Key": key("a", 1)}},
                    {"Get": {"TableName": "{t}", "Key": key("a", 1)}},
                ]}),
            ),
            op(
                "Query",
                json!({"TableName": "{t}", "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "a"}}, "Limit": 0}),
            ),
            op("Scan", json!({"TableName": "{t}", "Limit": -1})),
            op("Scan", json!({"TableName": "{t}", "Segment": 1})),
            op("Scan", json!({"TableName": "{t}", "TotalSegments": 0, "Segment": 0})),
            op("Scan", json!({"TableName": "{t}", "TotalSegments": 1000001, "Segment": 0})),
            op("Scan", json!({"TableName": "{t}", "TotalSegments": 2, "Segment": -1})),
            op("Frobnicate", json!({"TableName": "{t}"})),
        ],
    )
    .await;
}

/// UpdateTable adding a global secondary index to a table of items (its
/// answer while the index is created, the index once ACTIVE and
/// backfilled, queries of it), then deleting it.
#[tokio::test]
async fn update_table_index_changes_match_dynamodb_local() {
    let mut steps = vec![op("CreateTable", keyed_table(json!({})))];
    for sk in 1..=5 {
        let mut extra = json!({"n": {"N": sk.to_string()}});
        if sk != 3 {
            extra["g"] = json!({"S": if sk % 2 == 0 { "even" } else { "odd" }});
        }
        steps.push(op(
            "PutItem",
            json!({"TableName": "{t}", "Item": item("a", sk, extra)}),
        ));
    }
    let by_g = |value: &str| {
        op(
            "Query",
            json!({"TableName": "{t}", "IndexName": "byG", "KeyConditionExpression": "g = :g", "ExpressionAttributeValues": {":g": {"S": value}}}),
        )
    };
    steps.extend([
        op(
            "UpdateTable",
            json!({
                "TableName": "{t}",
                "AttributeDefinitions": [{"AttributeName": "g", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"}],
                "GlobalSecondaryIndexUpdates": [{"Create": {
                    "IndexName": "byG",
                    "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
                    "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["n"]},
                }}],
            }),
        ),
        op("DescribeTable", json!({"TableName": "{t}"})).until(
            "/Table/GlobalSecondaryIndexes/0/IndexStatus",
            json!("ACTIVE"),
        ),
        by_g("odd"),
        by_g("even"),
        op(
            "Scan",
            json!({"TableName": "{t}", "IndexName": "byG", "Select": "COUNT"}),
        ),
        op(
            "PutItem",
            json!({"TableName": "{t}", "Item": item("a", 3, json!({"g": {"S": "odd"}}))}),
        ),
        by_g("odd"),
        op(
            "UpdateTable",
            json!({"TableName": "{t}", "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "byG"}}]}),
        ),
        op("DescribeTable", json!({"TableName": "{t}"}))
            .until("/Table/TableStatus", json!("ACTIVE")),
        by_g("odd"),
    ]);
    differential("indexes", steps).await;
}

/// A global secondary index keyed on several attributes (`h` HASH, `a` to
/// `d` RANGE) and one on two HASH attributes: the queries and refusals of
/// the case DynamoDB was observed answering, a page's LastEvaluatedKey and
/// resuming from it, DescribeTable, and CreateTable's refusals of keys of
/// several attributes.
#[tokio::test]
async fn multi_attribute_index_keys_match_dynamodb_local() {
    use crate::multi_attribute_keys::{
        by_owner, definitions as defined, element, items, query_request,
    };
    let mut steps = vec![op(
        "CreateTable",
        json!({
            "TableName": "{t}",
            "AttributeDefinitions": defined(&["pk", "h", "a", "b", "c", "d"]),
            "KeySchema": [element("pk", "HASH")],
            "BillingMode": "PAY_PER_REQUEST",
            "GlobalSecondaryIndexes": [
                by_owner(),
                {
                    "IndexName": "byOwnerAndFlag",
                    "KeySchema": [element("h", "HASH"), element("a", "HASH"), element("pk", "RANGE")],
                    "Projection": {"ProjectionType": "KEYS_ONLY"},
                },
            ],
        }),
    )];
    for item in items() {
        steps.push(op("PutItem", json!({"TableName": "{t}", "Item": item})));
    }
    let query = |index: &str, expression: &str, extra: Value| {
        op("Query", query_request("{t}", index, expression, extra))
    };
    let none = || json!({});
    steps.extend([
        query("byOwner", "h = :h AND pk = :a", none()),
        query("byOwner", "h = :h", none()),
        query("byOwner", "h = :h", json!({"ScanIndexForward": false})),
        query("byOwner", "h = :h AND a = :a", none()),
        query("byOwner", "b = :b AND h = :h AND a = :a", none()),
        query("byOwner", "h = :h AND a = :a AND b = :b AND c = :c", none()),
        query("byOwner", "h = :h AND a = :a AND b = :b AND c > :c", none()),
        query("byOwner", "h = :h AND a = :a AND b = :b AND c = :c AND begins_with(d, :d)", none()),
        query("byOwner", "h = :h AND a = :a AND b = :b AND c = :c AND d BETWEEN :lo AND :hi", none()),
        query("byOwner", "h = :h AND a = :a AND b < :b", none()),
        query("byOwner", "h = :h AND a = :a", json!({"Limit": 2})),
        query("byOwner", "h = :h AND a = :a", json!({"Limit": 2, "ExclusiveStartKey": {"pk": {"S": "p3"}, "h": {"S": "o1"}, "a": {"S": "T"}, "b": {"S": "live"}, "c": {"S": "a"}, "d": {"S": "r1"}}})),
        query("byOwner", "h = :h AND a = :a AND b = :b", json!({"ExclusiveStartKey": {"pk": {"S": "p4"}, "h": {"S": "o1"}, "a": {"S": "T"}, "b": {"S": "draft"}, "c": {"S": "c"}, "d": {"S": "r1"}}})),
        query("byOwner", "h = :h AND a = :a AND c = :c", none()),
        query("byOwner", "h = :h AND a = :a AND b > :b AND c = :c", none()),
        query("byOwner", "h = :h AND b = :b", none()),
        query("byOwner", "h = :h AND c = :c", none()),
        query("byOwner", "a = :a AND b = :b", none()),
        query("byOwnerAndFlag", "a = :a AND h = :h", none()),
        query("byOwnerAndFlag", "h = :h AND a > :a", none()),
        query("byOwnerAndFlag", "d = :d", none()),
        op("Scan", json!({"TableName": "{t}", "IndexName": "byOwner", "Select": "COUNT"})),
        op("DescribeTable", json!({"TableName": "{t}"})),
    ]);
    let wide = |suffix: &str, key_schema: Value| {
        op(
            "CreateTable",
            json!({
                "TableName": format!("{{t}}{suffix}"),
                "AttributeDefinitions": defined(&["pk", "k1", "k2", "k3", "k4", "k5"]),
                "KeySchema": [element("pk", "HASH")],
                "BillingMode": "PAY_PER_REQUEST",
                "GlobalSecondaryIndexes": [{"IndexName": "wide", "KeySchema": key_schema, "Projection": {"ProjectionType": "ALL"}}],
            }),
        )
    };
    let names = ["k1", "k2", "k3", "k4", "k5"];
    let of = |names: &[&str], role: &str| -> Vec<Value> {
        names.iter().map(|name| element(name, role)).collect()
    };
    let five_ranges: Vec<Value> = [element("pk", "HASH")]
        .into_iter()
        .chain(of(&names, "RANGE"))
        .collect();
    let nine: Vec<Value> = of(&names[..4], "HASH")
        .into_iter()
        .chain(of(&names, "RANGE"))
        .collect();
    steps.extend([
        wide("-a", json!(of(&names, "HASH"))),
        wide("-b", json!(five_ranges)),
        wide(
            "-c",
            json!([
                element("k1", "HASH"),
                element("k2", "RANGE"),
                element("k1", "RANGE")
            ]),
        ),
        wide("-d", json!([element("k1", "HASH"), element("k1", "HASH")])),
        wide(
            "-e",
            json!([
                element("k1", "HASH"),
                element("k2", "RANGE"),
                element("k3", "HASH")
            ]),
        ),
        wide("-f", json!(nine)),
    ]);
    differential("multikey", steps).await;
}

/// One probe of the validation corpus: a request, and, where DynamoDB
/// Local departs from DynamoDB, why and DynamoDB's answer (`{t}` standing
/// for the case's table).
struct Probe {
    name: String,
    step: Step,
    documented: Option<(&'static str, Value)>,
}

/// The three requests that put `item` into the probes' table: PutItem,
/// BatchWriteItem and TransactWriteItems.
fn put_requests(item: &Value) -> [(&'static str, Value); 3] {
    [
        ("PutItem", json!({"TableName": "{t}", "Item": item})),
        (
            "BatchWriteItem",
            json!({"RequestItems": {"{t}": [{"PutRequest": {"Item": item}}]}}),
        ),
        (
            "TransactWriteItems",
            json!({"TransactItems": [{"Put": {"TableName": "{t}", "Item": item}}]}),
        ),
    ]
}

fn probe(name: impl Into<String>, operation: &str, body: Value) -> Probe {
    Probe {
        name: name.into(),
        step: op(operation, body),
        documented: None,
    }
}

/// DynamoDB's error envelope for `exception` (in the namespace a client
/// dispatches on) with `message`.
fn refusal(exception: &str, message: &str) -> Value {
    let namespace = match exception {
        "ValidationException" => "com.amazon.coral.validate",
        "AccessDeniedException" => "com.amazon.coral.service",
        _ => "com.amazonaws.dynamodb.v20120810",
    };
    json!({"status": 400, "body": {"__type": format!("{namespace}#{exception}"), "message": message}})
}

impl Probe {
    /// DynamoDB answers it with `answer` (its status and body).
    fn answered(mut self, why: &'static str, answer: Value) -> Probe {
        self.documented = Some((why, answer));
        self
    }

    /// DynamoDB refuses it with `exception` and `message`.
    fn refused(self, why: &'static str, exception: &str, message: &str) -> Probe {
        self.answered(why, refusal(exception, message))
    }

    /// A value refused by `operation`: an item write answers in DynamoDB's
    /// current words, `current`, inside the validation envelope.
    fn in_current_words(self, operation: &str, current: &str) -> Probe {
        match operation {
            "PutItem" | "UpdateItem" | "DeleteItem" => self.refused(
                CURRENT_WORDS,
                "ValidationException",
                &format!("1 validation error detected: {current}"),
            ),
            _ => self,
        }
    }

    /// DynamoDB cancels it, one ValidationError reason per action given
    /// (`None` for an action that would have run).
    fn cancelled(mut self, why: &'static str, reasons: &[Option<&str>]) -> Probe {
        let codes: Vec<&str> = reasons
            .iter()
            .map(|r| r.map_or("None", |_| "ValidationError"))
            .collect();
        let mut answer = refusal(
            "TransactionCanceledException",
            &format!(
                "Transaction cancelled, please refer cancellation reasons for specific reasons [{}]",
                codes.join(", ")
            ),
        );
        answer["body"]["CancellationReasons"] = reasons
            .iter()
            .map(|reason| match reason {
                Some(message) => json!({"Code": "ValidationError", "Message": message}),
                None => json!({"Code": "None"}),
            })
            .collect();
        self.documented = Some((why, answer));
        self
    }
}

/// Runs `setup` on both servers, then each probe: rave's answer against
/// DynamoDB Local's, or against DynamoDB's where the probe documents it.
async fn probe_corpus(case: &'static str, setup: Vec<Step>, probes: Vec<Probe>, tables: &[&str]) {
    let server = Server::start().await;
    let table = unique_table(case);
    let mut rave = Peer::new(server.url.clone());
    let mut local = Peer::new(endpoint());
    for step in &setup {
        rave.run(&table, step).await;
        local.run(&table, step).await;
    }
    let mut divergences = Vec::new();
    for probe in &probes {
        let (status, answer) = rave.run(&table, &probe.step).await;
        let got = json!({"status": status, "body": normalise(&answer, &table, false)});
        let (expected, whose) = match &probe.documented {
            Some((why, answer)) => {
                let answer: Value =
                    serde_json::from_str(&answer.to_string().replace("{t}", &table))
                        .unwrap_or_else(|e| panic!("{}: not JSON: {e}", probe.name));
                (normalise(&answer, &table, false), *why)
            }
            None => {
                let (status, answer) = local.run(&table, &probe.step).await;
                (
                    json!({"status": status, "body": normalise(&answer, &table, false)}),
                    "DynamoDB Local",
                )
            }
        };
        if got != expected {
            let mut paths = Vec::new();
            differences(&got, &expected, String::new(), &mut paths);
            divergences.push(format!(
                "{}: {} {}\n  where: {} (rave, then {whose})",
                probe.name,
                probe.step.target,
                probe.step.body,
                paths.join("\n         ")
            ));
        }
    }
    for suffix in tables {
        let drop = op(
            "DeleteTable",
            json!({"TableName": format!("{{t}}{suffix}")}),
        );
        local.run(&table, &drop).await;
    }
    server.stop().await;
    assert!(
        divergences.is_empty(),
        "{case}: {} of {} probes differ\n{}",
        divergences.len(),
        probes.len(),
        divergences.join("\n")
    );
}

const INVALID_PARAMETER: &str = "One or more parameter values were invalid: ";

/// Why DynamoDB Local is not the reference and DynamoDB's message; `None`
/// where DynamoDB Local answers as DynamoDB does.
type Answer = Option<(&'static str, String)>;
const SCHEMA_MISMATCH: &str = "The provided key element does not match the schema";
const KEY_LOOKUP: &str = "a key looked up (GetItem, DeleteItem, UpdateItem, BatchGetItem, a DeleteRequest, a transaction's Update, Delete, ConditionCheck or Get) whose attributes are not the key schema's, or of other types: \"The provided key element does not match the schema\" (for a transaction, the action's ValidationError reason); DynamoDB Local says \"The number of conditions on the keys is invalid\" or \"Type mismatch for key\"";
const PUT_KEY_TYPE: &str = "an item's key of the wrong type: \"One or more parameter values were invalid: Type mismatch for key NAME expected: TYPE actual: TYPE\" (a transaction's Put cancels with it as the reason; a BatchWriteItem PutRequest reports \"The provided key element does not match the schema\"); DynamoDB Local leaves out the name and types or answers \"Invalid attribute value type\"";
const BAD_NUMBER: &str = "a number that does not parse: \"The parameter cannot be converted to a numeric value: TEXT\"; DynamoDB Local says \"A value provided cannot be converted into a number\"";
const LONG_NUMBER: &str = "Number: \"Numbers can have up to 38 digits of precision\", refused with \"Attempting to store more than 38 significant digits in a Number\"; DynamoDB Local says \"DynamoDB only supports precision up to 38 digits\"";

/// The validation corpus: every data-plane operation that takes a key or an
/// item, crossed with the ways a key can be wrong (an attribute missing or
/// extra, a type not the schema's, a list, an empty string, numbers that do
/// not parse, are too precise or out of range), each probe one request.
#[tokio::test]
async fn key_faults_across_operations_match_dynamodb() {
    let setup = vec![op("CreateTable", keyed_table(json!({})))];
    let good = key("a", 1);
    // (fault, the key, what DynamoDB answers a lookup and a put)
    let faults: Vec<(&str, Value, Answer, Answer)> = vec![
        (
            "the sort key missing",
            json!({"pk": {"S": "a"}}),
            Some((KEY_LOOKUP, SCHEMA_MISMATCH.to_owned())),
            Some((
                MISSING_KEY,
                format!("{INVALID_PARAMETER}Missing the key sk in the item"),
            )),
        ),
        (
            "an attribute beyond the key",
            item("a", 1, json!({"x": {"S": "y"}})),
            Some((KEY_LOOKUP, SCHEMA_MISMATCH.to_owned())),
            None,
        ),
        (
            "the sort key a string",
            json!({"pk": {"S": "a"}, "sk": {"S": "1"}}),
            Some((KEY_LOOKUP, SCHEMA_MISMATCH.to_owned())),
            Some((
                PUT_KEY_TYPE,
                format!("{INVALID_PARAMETER}Type mismatch for key sk expected: N actual: S"),
            )),
        ),
        (
            "the partition key a list",
            json!({"pk": {"L": [{"S": "a"}]}, "sk": {"N": "1"}}),
            Some((KEY_LOOKUP, SCHEMA_MISMATCH.to_owned())),
            Some((
                PUT_KEY_TYPE,
                format!("{INVALID_PARAMETER}Type mismatch for key pk expected: S actual: L"),
            )),
        ),
        (
            "the partition key empty",
            json!({"pk": {"S": ""}, "sk": {"N": "1"}}),
            None,
            None,
        ),
        (
            "the sort key not a number",
            json!({"pk": {"S": "a"}, "sk": {"N": "1..2"}}),
            Some((
                BAD_NUMBER,
                "The parameter cannot be converted to a numeric value: 1..2".to_owned(),
            )),
            Some((
                BAD_NUMBER,
                "The parameter cannot be converted to a numeric value: 1..2".to_owned(),
            )),
        ),
        (
            "the sort key of 39 digits",
            json!({"pk": {"S": "a"}, "sk": {"N": "123456789012345678901234567890123456789"}}),
            Some((
                LONG_NUMBER,
                "Attempting to store more than 38 significant digits in a Number".to_owned(),
            )),
            Some((
                LONG_NUMBER,
                "Attempting to store more than 38 significant digits in a Number".to_owned(),
            )),
        ),
        (
            "the sort key past 1E+126",
            json!({"pk": {"S": "a"}, "sk": {"N": "1E+126"}}),
            None,
            None,
        ),
        (
            "the sort key below 1E-130",
            json!({"pk": {"S": "a"}, "sk": {"N": "1E-131"}}),
            None,
            None,
        ),
    ];
    let mut probes = Vec::new();
    for (fault, key, lookup, put) in &faults {
        let item = {
            let mut item = key.clone();
            item["v"] = json!({"S": "x"});
            item
        };
        // A fault in the request's JSON is refused before any action runs;
        // one in the key's shape or types cancels a transaction.
        let in_json = lookup
            .as_ref()
            .is_some_and(|(why, _)| *why == BAD_NUMBER || *why == LONG_NUMBER);
        let lookups = [
            ("GetItem", json!({"TableName": "{t}", "Key": key})),
            ("DeleteItem", json!({"TableName": "{t}", "Key": key})),
            (
                "UpdateItem",
                json!({"TableName": "{t}", "Key": key, "UpdateExpression": "SET v = :v", "ExpressionAttributeValues": {":v": {"S": "x"}}}),
            ),
            (
                "BatchGetItem",
                json!({"RequestItems": {"{t}": {"Keys": [key]}}}),
            ),
            (
                "BatchWriteItem",
                json!({"RequestItems": {"{t}": [{"DeleteRequest": {"Key": key}}]}}),
            ),
        ];
        for (operation, body) in lookups {
            let mut probe = probe(format!("{operation}: {fault}"), operation, body);
            if let Some((why, message)) = lookup {
                probe = probe.refused(why, "ValidationException", message);
            }
            probes.push(probe);
        }
        let transactional_lookups = [
            json!({"Update": {"TableName": "{t}", "Key": key, "UpdateExpression": "SET v = :v", "ExpressionAttributeValues": {":v": {"S": "x"}}}}),
            json!({"Delete": {"TableName": "{t}", "Key": key}}),
            json!({"ConditionCheck": {"TableName": "{t}", "Key": key, "ConditionExpression": "attribute_exists(v)"}}),
        ];
        for action in transactional_lookups {
            // The untouched action beside it keeps the reasons positional.
            let other = json!({"ConditionCheck": {"TableName": "{t}", "Key": good, "ConditionExpression": "attribute_not_exists(v)"}});
            let name = format!(
                "TransactWriteItems {}: {fault}",
                action
                    .as_object()
                    .and_then(|a| a.keys().next())
                    .map_or("", |k| k.as_str())
            );
            let mut probe = probe(
                name,
                "TransactWriteItems",
                json!({"TransactItems": [other, action]}),
            );
            if let Some((why, message)) = lookup {
                probe = match in_json {
                    true => probe.refused(why, "ValidationException", message),
                    false => probe.cancelled(why, &[None, Some(message)]),
                };
            }
            probes.push(probe);
        }
        let mut get = probe(
            format!("TransactGetItems: {fault}"),
            "TransactGetItems",
            json!({"TransactItems": [{"Get": {"TableName": "{t}", "Key": key}}]}),
        );
        if let Some((why, message)) = lookup {
            get = match in_json {
                true => get.refused(why, "ValidationException", message),
                false => get.cancelled(why, &[Some(message)]),
            };
        }
        probes.push(get);
        for (operation, body) in put_requests(&item) {
            let mut probe = probe(format!("{operation} put: {fault}"), operation, body);
            if let Some((why, message)) = put {
                let type_fault = *why == PUT_KEY_TYPE;
                probe = match operation {
                    // BatchWriteItem names neither the key nor its types.
                    "BatchWriteItem" if type_fault || *why == MISSING_KEY => {
                        probe.refused(why, "ValidationException", SCHEMA_MISMATCH)
                    }
                    "TransactWriteItems" if type_fault => probe.cancelled(why, &[Some(message)]),
                    _ => probe.refused(why, "ValidationException", message),
                };
            }
            probes.push(probe);
        }
    }
    // The values the item writes refuse in DynamoDB's current words.
    let currently_worded = [
        (
            "the sort key not a number",
            "The parameter cannot be converted to a numeric value: 1..2",
        ),
        (
            "the sort key of 39 digits",
            "Attempting to store more than 38 significant digits in a Number",
        ),
        ("the sort key past 1E+126", OVERFLOW),
        ("the sort key below 1E-130", UNDERFLOW),
    ];
    let probes = probes
        .into_iter()
        .map(|probe| {
            let operation = probe
                .step
                .target
                .rsplit('.')
                .next()
                .unwrap_or_default()
                .to_owned();
            match currently_worded
                .iter()
                .find(|(fault, _)| probe.name.ends_with(&format!(": {fault}")))
            {
                Some((_, current)) => probe.in_current_words(&operation, current),
                None => probe,
            }
        })
        .collect();
    probe_corpus("keys", setup, probes, &[""]).await;
}

fn nested(depth: usize) -> Value {
    (0..depth).fold(json!({"S": "x"}), |inner, _| json!({"L": [inner]}))
}

const DUPLICATE_SET: &str = "a set with one member twice: \"One or more parameter values were invalid: Input collection [MEMBERS] contains duplicates.\" (with the period); DynamoDB Local leaves the period out";
const UPDATE_TOO_LARGE: &str = "an update whose item would pass 400 KB: \"Item size to update has exceeded the maximum allowed size\" (in a transaction, the Update's ValidationError reason, the stored item being needed to know)";
const EMPTY_NAME: &str = "an attribute with an empty name, in PutItem and BatchWriteItem: \"One or more parameter values were invalid: An AttributeValue may not contain an empty attribute name\"; DynamoDB Local says \"Empty attribute name\", as DynamoDB's TransactWriteItems does";
const LONG_NAME: &str = "attribute names are at most 64 KB long: \"One or more parameter values were invalid: Attribute name is too large, must be less than 65536 bytes\"; DynamoDB Local fails with a 500";
const KEY_SIZE: &str = "a partition key of at most 2048 bytes: \"One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes\"; DynamoDB Local words the partition and sort key limits in one sentence";
const MIXED: &str = "a request with both legacy and expression parameters: \"Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {LEGACY} Expression parameters: {EXPRESSIONS}\"; DynamoDB Local ignores the legacy KeyConditions beside a FilterExpression";
const SEGMENT_RANGE: &str = "Segment: \"The value of Segment must be greater than or equal to 0, and less than the value provided for TotalSegments\", in DynamoDB's own message; DynamoDB Local reports a constraint on the member";
const CURRENT_WORDS: &str = "a value PutItem, UpdateItem or DeleteItem refuses (a number that does not parse or is out of range, a set repeating a member) is answered in DynamoDB's current words (a repeating set's members quoted and in order to the repeat) inside the \"1 validation error detected\" envelope, as DynamoDB has since October 2026; DynamoDB Local answers in the older words, bare";
const CURRENT_WORDS_BARE: &str = "a value GetItem, BatchGetItem or Query refuses is answered in DynamoDB's current words, bare (no envelope, no placeholder named), as DynamoDB has since October 2026; DynamoDB Local answers in the older words";
const OVERFLOW: &str =
    "Number overflow. Attempting to store a number with magnitude larger than supported range";
const UNDERFLOW: &str =
    "Number underflow. Attempting to store a number with magnitude smaller than supported range";
const ITEM_WRITE_ENVELOPE: &str = "PutItem, UpdateItem and DeleteItem answer their request-level checks (expression members without an expression, an empty condition, an undefined value, legacy Expected conditions, DeleteItem's ReturnValues) in the validation framework's \"1 validation error detected\" envelope, as DynamoDB has since October 2026; DynamoDB Local answers them bare";
/// The condition faults an item write answers in the envelope, with the
/// bare message.
const ENVELOPED_CONDITION_FAULTS: [(&str, &str); 3] = [
    (
        "an undefined value",
        "Invalid ConditionExpression: An expression attribute value used in expression is not defined; attribute value: :a",
    ),
    (
        "an empty expression",
        "Invalid ConditionExpression: The expression can not be empty;",
    ),
    (
        "names without an expression",
        "ExpressionAttributeNames can only be specified when using expressions",
    ),
];
const CURRENT_ENUM_WORDS: &str = "Query's ConditionalOperator joining its filter, and UpdateItem's ReturnValues (the first enum it checks), are refused in the words of DynamoDB's current validation layer, which name neither the member nor the value and list the set in their own way (ALL for AND, UPDATE_NEW), as DynamoDB has since 2026; DynamoDB Local lets the operator through (refusing the Select) and says \"Return values set to invalid value\"";
const OLDER_NUMBER_READING: &str = "the operations in DynamoDB's older validation layer (BatchWriteItem among them) read a number's magnitude in 32 bits, so 1e2147483647 wraps to an underflow; DynamoDB Local says overflow";
const ALL_VIOLATIONS: &str = "DynamoDB's validation framework reports every member that breaks its constraints in one \"N validation errors detected\" message, the token first, then the enums; DynamoDB Local reports the first";
const MISNAMED_MAP: &str = r#"Value '{"bad!name":{"Keys":[{"pk":{"S":"a"}}]}}' at 'requestItems' failed to satisfy constraint: Map keys must satisfy constraint: [Member must have length less than or equal to 255, Member must have length greater than or equal to 3, Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+]"#;
const INVALID_CAPACITY: &str = "Value 'INVALID' at 'returnConsumedCapacity' failed to satisfy constraint: Member must satisfy enum value set: [INDEXES, TOTAL, NONE]";
const TOO_MANY_ACTIONS: &str = "TransactItems: \"Array Members: Minimum number of 1 item. Maximum number of 100 items\", refused in DynamoDB's \"1 validation error detected\" form with the list echoed at 'transactItems'; DynamoDB Local gives the constraint alone";
const BOGUS_CAPACITY: &str = "Value 'BOGUS' at 'returnConsumedCapacity' failed to satisfy constraint: Member must satisfy enum value set: [INDEXES, TOTAL, NONE]";
const BOGUS_METRICS: &str = "Value 'BOGUS2' at 'returnItemCollectionMetrics' failed to satisfy constraint: Member must satisfy enum value set: [SIZE, NONE]";
const MEMBER_PATH: &str = "a transaction's action members (Update's UpdateExpression, ConditionCheck's ConditionExpression, TransactGetItem's Get are \"Required: Yes\"; ReturnValuesOnConditionCheckFailure \"Valid Values: ALL_OLD | NONE\"), refused in DynamoDB's \"1 validation error detected\" form and placed by their path; DynamoDB Local accepts some, and leaves out the count";
const TOKEN_LENGTH: &str = "ClientRequestToken: \"Length Constraints: Minimum length of 1. Maximum length of 36\", in DynamoDB's \"1 validation error detected\" form; DynamoDB Local leaves out the count and the quotes";
const QUERY_START_KEY: &str = "a Query's ExclusiveStartKey that is no key of the table (or index) is refused with \"The provided starting key is invalid\", no reason given (Scan gives one); DynamoDB Local gives the reason alone";
const START_KEY: &str = "ExclusiveStartKey is \"the primary key of the first item that this operation will evaluate\": one that is not a key of the table is refused with \"The provided starting key is invalid: REASON\"; DynamoDB Local leaves the prefix out";

/// Items and requests that DynamoDB refuses whatever their key: sets empty
/// or repeating a member, nesting past 32 levels, items past 400 KB, bad
/// attribute names, keys too long, expression placeholders unused or
/// undefined, reserved words, syntax errors, operands of the wrong type,
/// Limit, Segment, ExclusiveStartKey, ConsistentRead on a global index, and
/// the legacy parameters, alone and beside expressions.
#[tokio::test]
async fn item_and_request_faults_match_dynamodb() {
    let setup = vec![
        op(
            "CreateTable",
            keyed_table(json!({
                "AttributeDefinitions": [
                    {"AttributeName": "pk", "AttributeType": "S"},
                    {"AttributeName": "sk", "AttributeType": "N"},
                    {"AttributeName": "g", "AttributeType": "S"},
                ],
                "GlobalSecondaryIndexes": [{
                    "IndexName": "byG",
                    "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "KEYS_ONLY"},
                }],
            })),
        ),
        op(
            "PutItem",
            json!({"TableName": "{t}", "Item": item("a", 1, json!({"g": {"S": "x"}, "n": {"N": "1"}}))}),
        ),
    ];
    let big = "x".repeat(400 * 1024);
    // What an item may not hold, each in every write that carries an item.
    let item_faults: Vec<(&str, Value, Answer)> = vec![
        ("an empty string set", json!({"x": {"SS": []}}), None),
        ("an empty binary set", json!({"x": {"BS": []}}), None),
        (
            "a string set repeating a member",
            json!({"x": {"SS": ["a", "a"]}}),
            Some((
                DUPLICATE_SET,
                format!("{INVALID_PARAMETER}Input collection [a, a] contains duplicates."),
            )),
        ),
        (
            "a number set repeating a number",
            json!({"x": {"NS": ["1", "1.0"]}}),
            None,
        ),
        ("nesting 32 levels", json!({"x": nested(31)}), None),
        ("nesting 33 levels", json!({"x": nested(32)}), None),
        // Deeper than a JSON parser's default limit of 128 levels.
        ("nesting 100 levels", json!({"x": nested(99)}), None),
        ("a string of 400 KB", json!({"x": {"S": big}}), None),
        ("an empty string", json!({"x": {"S": ""}}), None),
        ("a number past 1E+126", json!({"x": {"N": "-1E+126"}}), None),
        (
            "an attribute with an empty name",
            json!({"": {"S": "x"}}),
            Some((
                EMPTY_NAME,
                format!(
                    "{INVALID_PARAMETER}An AttributeValue may not contain an empty attribute name"
                ),
            )),
        ),
    ];
    // The values PutItem refuses in DynamoDB's current words.
    let currently_worded = [
        (
            "a string set repeating a member",
            format!(r#"{INVALID_PARAMETER}Input collection ["a", "a"] contains duplicates."#),
        ),
        (
            "a number set repeating a number",
            format!("{INVALID_PARAMETER}Input collection contains duplicates."),
        ),
        ("a number past 1E+126", OVERFLOW.to_owned()),
    ];
    // The faults TransactWriteItems refuses in DynamoDB Local's words, a
    // Put's item read in that operation's own layer.
    let transactions_worded_as_local = ["an attribute with an empty name"];
    let mut probes = Vec::new();
    for (fault, extra, documented) in &item_faults {
        let full = item("b", 2, extra.clone());
        for (operation, body) in put_requests(&full) {
            let mut probe = probe(format!("{operation}: {fault}"), operation, body);
            let worded_as_local =
                operation == "TransactWriteItems" && transactions_worded_as_local.contains(fault);
            if let Some((why, message)) = documented.as_ref().filter(|_| !worded_as_local) {
                probe = probe.refused(why, "ValidationException", message);
            }
            // PutItem answers a repeating string set in the older words, bare.
            let older_on_put =
                operation == "PutItem" && *fault == "a string set repeating a member";
            if let Some((_, current)) = currently_worded
                .iter()
                .find(|(f, _)| f == fault)
                .filter(|_| !older_on_put)
            {
                probe = probe.in_current_words(operation, current);
            }
            probes.push(probe);
        }
    }
    let long_name = "a".repeat(65536);
    let too_many_puts = Value::Array(
        (0..101)
            .map(|sk| json!({"Put": {"TableName": "{t}", "Item": key("m", sk)}}))
            .collect(),
    );
    let too_many_gets = Value::Array(
        (0..101)
            .map(|sk| json!({"Get": {"TableName": "{t}", "Key": key("m", sk)}}))
            .collect(),
    );
    let invalid = |reason: &str| format!("{INVALID_PARAMETER}{reason}");
    let too_long = invalid("Size of hashkey has exceeded the maximum size limit of2048 bytes");
    probes.extend([
        probe(
            "UpdateItem: an item past 400 KB",
            "UpdateItem",
            json!({"TableName": "{t}", "Key": key("a", 1), "UpdateExpression": "SET x = :x", "ExpressionAttributeValues": {":x": {"S": big}}}),
        )
        .refused(UPDATE_TOO_LARGE, "ValidationException", "Item size to update has exceeded the maximum allowed size"),
        probe("PutItem: a name of 64 KB", "PutItem", json!({"TableName": "{t}", "Item": item("b", 2, json!({long_name: {"S": "x"}}))}))
            .refused(LONG_NAME, "ValidationException", &invalid("Attribute name is too large, must be less than 65536 bytes")),
        probe("PutItem: a partition key of 2049 bytes", "PutItem", json!({"TableName": "{t}", "Item": {"pk": {"S": "a".repeat(2049)}, "sk": {"N": "1"}}}))
            .refused(KEY_SIZE, "ValidationException", &too_long),
        probe("GetItem: a partition key of 2049 bytes", "GetItem", json!({"TableName": "{t}", "Key": {"pk": {"S": "a".repeat(2049)}, "sk": {"N": "1"}}}))
            .refused(KEY_SIZE, "ValidationException", &too_long),
        probe("PutItem: a partition key of 2048 bytes", "PutItem", json!({"TableName": "{t}", "Item": {"pk": {"S": "a".repeat(2048)}, "sk": {"N": "1"}}})),
        probe(
            "TransactWriteItems: a ConditionCheck without a condition",
            "TransactWriteItems",
            json!({"TransactItems": [{"ConditionCheck": {"TableName": "{t}", "Key": key("a", 1)}}]}),
        )
        .refused(MEMBER_PATH, "ValidationException", "1 validation error detected: Value null at 'transactItems.1.member.conditionCheck.conditionExpression' failed to satisfy constraint: Member must not be null"),
        probe(
            "TransactWriteItems: an Update without an expression",
            "TransactWriteItems",
            json!({"TransactItems": [{"Update": {"TableName": "{t}", "Key": key("a", 1)}}]}),
        )
        .refused(MEMBER_PATH, "ValidationException", "1 validation error detected: Value null at 'transactItems.1.member.update.updateExpression' failed to satisfy constraint: Member must not be null"),
        probe(
            "TransactWriteItems: ReturnValuesOnConditionCheckFailure ALL_NEW",
            "TransactWriteItems",
            json!({"TransactItems": [{"Put": {"TableName": "{t}", "Item": key("d", 4), "ReturnValuesOnConditionCheckFailure": "ALL_NEW"}}]}),
        )
        .refused(MEMBER_PATH, "ValidationException", "1 validation error detected: Value 'ALL_NEW' at 'transactItems.1.member.put.returnValuesOnConditionCheckFailure' failed to satisfy constraint: Member must satisfy enum value set: [ALL_OLD, NONE]"),
        probe("PutItem: a condition value that is no number", "PutItem", json!({"TableName": "{t}", "Item": key("d", 4), "ConditionExpression": "attribute_not_exists(pk) OR n = :v", "ExpressionAttributeValues": {":v": {"N": "abc"}}}))
            .refused(CURRENT_WORDS, "ValidationException", "1 validation error detected: The parameter cannot be converted to a numeric value: abc"),
        probe("GetItem: an empty number in the key", "GetItem", json!({"TableName": "{t}", "Key": {"pk": {"S": "a"}, "sk": {"N": ""}}}))
            .refused(CURRENT_WORDS_BARE, "ValidationException", "The parameter cannot be converted to a numeric value: "),
        probe("Query: a filter value repeating a member", "Query", json!({"TableName": "{t}", "KeyConditionExpression": "pk = :p", "FilterExpression": "contains(:s, n)", "ExpressionAttributeValues": {":p": {"S": "a"}, ":s": {"SS": ["b", "a", "b"]}}}))
            .refused(CURRENT_WORDS_BARE, "ValidationException", r#"One or more parameter values were invalid: Input collection ["a", "b", "b"] contains duplicates."#),
        probe("UpdateItem: an empty table name and no key", "UpdateItem", json!({"TableName": "", "UpdateExpression": "SET a = :a", "ExpressionAttributeValues": {":a": {"S": "x"}}}))
            .refused(ALL_VIOLATIONS, "ValidationException", "2 validation errors detected: Value '' at 'tableName' failed to satisfy constraint: Member must have length greater than or equal to 1; Value null at 'key' failed to satisfy constraint: Member must not be null"),
        probe("UpdateItem: two unknown enums, an empty table name and no key", "UpdateItem", json!({"TableName": "", "UpdateExpression": "SET a = :a", "ExpressionAttributeValues": {":a": {"S": "x"}}, "ReturnConsumedCapacity": "INVALID", "ReturnValues": "INVALID"}))
            .refused(ALL_VIOLATIONS, "ValidationException", "4 validation errors detected: Value 'INVALID' at 'returnConsumedCapacity' failed to satisfy constraint: Member must satisfy enum value set: [INDEXES, TOTAL, NONE]; Value '' at 'tableName' failed to satisfy constraint: Member must have length greater than or equal to 1; Value 'INVALID' at 'returnValues' failed to satisfy constraint: Member must satisfy enum value set: [ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]; Value null at 'key' failed to satisfy constraint: Member must not be null"),
        probe("UpdateItem: XOR and no key", "UpdateItem", json!({"TableName": "{t}", "AttributeUpdates": {"x": {"Action": "PUT", "Value": {"S": "1"}}}, "Expected": {"a": {"Exists": false}, "b": {"Exists": false}}, "ConditionalOperator": "XOR"}))
            .refused(ALL_VIOLATIONS, "ValidationException", "2 validation errors detected: Value 'XOR' at 'conditionalOperator' failed to satisfy constraint: Member must satisfy enum value set: [OR, AND]; Value null at 'key' failed to satisfy constraint: Member must not be null"),
        probe("Query: XOR joining its filter, and an unknown Select", "Query", json!({"TableName": "{t}", "KeyConditions": {"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]}}, "QueryFilter": {"b": {"ComparisonOperator": "NULL"}, "c": {"ComparisonOperator": "NULL"}}, "ConditionalOperator": "XOR", "Select": "BOGUS"}))
            .refused(CURRENT_ENUM_WORDS, "ValidationException", "Failed to satisfy constraint: Member must satisfy enum value set: [ALL, OR]"),
        probe("UpdateItem: unknown ReturnValues and ReturnConsumedCapacity", "UpdateItem", json!({"TableName": "{t}", "Key": key("a", 1), "ReturnValues": "INVALID", "ReturnConsumedCapacity": "INVALID"}))
            .refused(ALL_VIOLATIONS, "ValidationException", &format!("2 validation errors detected: {INVALID_CAPACITY}; Value 'INVALID' at 'returnValues' failed to satisfy constraint: Member must satisfy enum value set: [ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]")),
        probe("UpdateItem: unknown ReturnValues", "UpdateItem", json!({"TableName": "{t}", "Key": key("a", 1), "ReturnValues": "INVALID"}))
            .refused(CURRENT_ENUM_WORDS, "ValidationException", "1 validation error detected: Failed to satisfy constraint: Member must satisfy enum value set: [ALL_OLD, UPDATED_OLD, ALL_NEW, UPDATE_NEW, NONE]"),
        probe("PutItem: values without an expression", "PutItem", json!({"TableName": "{t}", "Item": key("d", 4), "ExpressionAttributeValues": {":v": {"S": "x"}}})),
        probe("BatchGetItem: no tables and an unknown enum", "BatchGetItem", json!({"RequestItems": {}, "ReturnConsumedCapacity": "BOGUS"}))
            .refused(ALL_VIOLATIONS, "ValidationException", &format!("2 validation errors detected: Value at 'RequestItems' failed to satisfy constraint: Member must have length greater than or equal to 1; {BOGUS_CAPACITY}")),
        probe("TransactWriteItems: 101 actions", "TransactWriteItems", json!({"TransactItems": too_many_puts}))
            .refused(TOO_MANY_ACTIONS, "ValidationException", &format!("1 validation error detected: Value '{too_many_puts}' at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to 100")),
        probe("TransactGetItems: 101 actions", "TransactGetItems", json!({"TransactItems": too_many_gets}))
            .refused(TOO_MANY_ACTIONS, "ValidationException", &format!("1 validation error detected: Value '{too_many_gets}' at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to 100")),
        probe("BatchWriteItem: a number whose magnitude wraps in 32 bits", "BatchWriteItem", json!({"RequestItems": {"{t}": [{"PutRequest": {"Item": item("b", 2, json!({"n": {"N": "1e2147483647"}}))}}]}}))
            .refused(OLDER_NUMBER_READING, "ValidationException", UNDERFLOW),
        probe("DeleteItem: ReturnValues ALL_NEW", "DeleteItem", json!({"TableName": "{t}", "Key": key("a", 1), "ReturnValues": "ALL_NEW"}))
            .refused(ITEM_WRITE_ENVELOPE, "ValidationException", "1 validation error detected: ReturnValues can only be ALL_OLD or NONE"),
        probe("DeleteItem: Exists true without a value", "DeleteItem", json!({"TableName": "{t}", "Key": key("a", 1), "Expected": {"a": {"Exists": true}}}))
            .refused(ITEM_WRITE_ENVELOPE, "ValidationException", "1 validation error detected: One or more parameter values were invalid: Value must be provided when Exists is true for Attribute: a"),
        probe("UpdateItem: values without an expression", "UpdateItem", json!({"TableName": "{t}", "Key": key("a", 1), "AttributeUpdates": {"n": {"Action": "PUT", "Value": {"N": "2"}}}, "ExpressionAttributeValues": {":v": {"S": "x"}}}))
            .refused(ITEM_WRITE_ENVELOPE, "ValidationException", "1 validation error detected: ExpressionAttributeValues can only be specified when using expressions"),
        probe("BatchGetItem: a malformed table name", "BatchGetItem", json!({"RequestItems": {"bad!name": {"Keys": [{"pk": {"S": "a"}}]}}}))
            .refused(ALL_VIOLATIONS, "ValidationException", &format!("1 validation error detected: {MISNAMED_MAP}")),
        probe("BatchWriteItem: a malformed table name", "BatchWriteItem", json!({"RequestItems": {"bad!name": [{"PutRequest": {"Item": {"pk": {"S": "x"}}}}]}}))
            .refused(ALL_VIOLATIONS, "ValidationException", "1 validation error detected: Value '{bad!name=[WriteRequest(putRequest=PutRequest(item={pk=AttributeValue(S=x)}), deleteRequest=null)]}' at 'requestItems' failed to satisfy constraint: Map keys must satisfy constraint: [Member must have length less than or equal to 255, Member must have length greater than or equal to 3, Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+]"),
        probe("BatchGetItem: a malformed table name and an unknown enum", "BatchGetItem", json!({"RequestItems": {"bad!name": {"Keys": [{"pk": {"S": "a"}}]}}, "ReturnConsumedCapacity": "BOGUS"}))
            .refused(ALL_VIOLATIONS, "ValidationException", &format!("2 validation errors detected: {MISNAMED_MAP}; {BOGUS_CAPACITY}")),
        probe(
            "BatchWriteItem: two unknown enums",
            "BatchWriteItem",
            json!({"RequestItems": {"{t}": [{"PutRequest": {"Item": key("d", 4)}}]}, "ReturnConsumedCapacity": "BOGUS", "ReturnItemCollectionMetrics": "BOGUS2"}),
        )
        .refused(ALL_VIOLATIONS, "ValidationException", &format!("2 validation errors detected: {BOGUS_CAPACITY}; {BOGUS_METRICS}")),
        probe(
            "TransactWriteItems: two unknown enums",
            "TransactWriteItems",
            json!({"TransactItems": [{"Put": {"TableName": "{t}", "Item": key("d", 4)}}], "ReturnConsumedCapacity": "BOGUS", "ReturnItemCollectionMetrics": "BOGUS2"}),
        )
        .refused(ALL_VIOLATIONS, "ValidationException", &format!("2 validation errors detected: {BOGUS_CAPACITY}; {BOGUS_METRICS}")),
        probe(
            "TransactWriteItems: a long token and an unknown enum",
            "TransactWriteItems",
            json!({"TransactItems": [{"Put": {"TableName": "{t}", "Item": key("d", 4)}}], "ClientRequestToken": "x".repeat(37), "ReturnConsumedCapacity": "BOGUS"}),
        )
        .refused(ALL_VIOLATIONS, "ValidationException", &format!("2 validation errors detected: Value '{}' at 'clientRequestToken' failed to satisfy constraint: Member must have length less than or equal to 36; {BOGUS_CAPACITY}", "x".repeat(37))),
        probe(
            "TransactGetItems: a malformed table name in the second Get",
            "TransactGetItems",
            json!({"TransactItems": [
                {"Get": {"TableName": "{t}", "Key": key("a", 1)}},
                {"Get": {"TableName": "bad!name", "Key": key("a", 1)}},
            ]}),
        )
        .refused(MEMBER_PATH, "ValidationException", "1 validation error detected: Value 'bad!name' at 'transactItems.2.member.get.tableName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"),
        probe(
            "TransactWriteItems: a malformed table name in a Put",
            "TransactWriteItems",
            json!({"TransactItems": [{"Put": {"TableName": "bad!name", "Item": key("d", 4)}}]}),
        )
        .refused(MEMBER_PATH, "ValidationException", "1 validation error detected: Value 'bad!name' at 'transactItems.1.member.put.tableName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"),
        probe(
            "TransactGetItems: an entry without a Get",
            "TransactGetItems",
            json!({"TransactItems": [{}]}),
        )
        .refused(MEMBER_PATH, "ValidationException", "1 validation error detected: Value null at 'transactItems.1.member.get' failed to satisfy constraint: Member must not be null"),
        probe("TransactWriteItems: an action without an operation", "TransactWriteItems", json!({"TransactItems": [{}]})),
        probe(
            "TransactWriteItems: a client request token of 37 characters",
            "TransactWriteItems",
            json!({"ClientRequestToken": "t".repeat(37), "TransactItems": [{"Put": {"TableName": "{t}", "Item": key("d", 4)}}]}),
        )
        .refused(TOKEN_LENGTH, "ValidationException", &format!("1 validation error detected: Value '{}' at 'clientRequestToken' failed to satisfy constraint: Member must have length less than or equal to 36", "t".repeat(37))),
        probe(
            "TransactWriteItems: an Update past 400 KB",
            "TransactWriteItems",
            json!({"TransactItems": [{"Update": {"TableName": "{t}", "Key": key("a", 1), "UpdateExpression": "SET x = :x", "ExpressionAttributeValues": {":x": {"S": big}}}}]}),
        )
        .cancelled(UPDATE_TOO_LARGE, &[Some("Item size to update has exceeded the maximum allowed size")]),
        probe(
            "TransactWriteItems: an Update setting an index key to a number",
            "TransactWriteItems",
            json!({"TransactItems": [{"Update": {"TableName": "{t}", "Key": key("a", 1), "UpdateExpression": "SET g = :g", "ExpressionAttributeValues": {":g": {"N": "1"}}}}]}),
        )
        .cancelled(PUT_KEY_TYPE, &[Some(&invalid("Type mismatch for Index Key g Expected: S Actual: N IndexName: byG"))]),
    ]);
    // Expressions and their placeholders, in a write's condition and in a
    // Scan's filter.
    let conditions: Vec<(&str, Value)> = vec![
        (
            "an unused name",
            json!({"ConditionExpression": "attribute_exists(pk)", "ExpressionAttributeNames": {"#a": "a"}}),
        ),
        (
            "an unused value",
            json!({"ConditionExpression": "attribute_exists(pk)", "ExpressionAttributeValues": {":a": {"S": "a"}}}),
        ),
        (
            "an undefined value",
            json!({"ConditionExpression": "pk = :a"}),
        ),
        (
            "an undefined name",
            json!({"ConditionExpression": "#a = :a", "ExpressionAttributeValues": {":a": {"S": "a"}}}),
        ),
        (
            "a reserved word",
            json!({"ConditionExpression": "attribute_exists(name)"}),
        ),
        (
            "a syntax error at the start",
            json!({"ConditionExpression": ") pk = :a", "ExpressionAttributeValues": {":a": {"S": "a"}}}),
        ),
        (
            "a syntax error inside",
            json!({"ConditionExpression": "pk == :a", "ExpressionAttributeValues": {":a": {"S": "a"}}}),
        ),
        (
            "a syntax error at the end",
            json!({"ConditionExpression": "pk = "}),
        ),
        (
            "begins_with of a number",
            json!({"ConditionExpression": "begins_with(pk, :a)", "ExpressionAttributeValues": {":a": {"N": "1"}}}),
        ),
        (
            "size of a boolean",
            json!({"ConditionExpression": "size(:a) > :b", "ExpressionAttributeValues": {":a": {"BOOL": true}, ":b": {"N": "1"}}}),
        ),
        (
            "size of a string value",
            json!({"ConditionExpression": "size(:a) > :b", "ExpressionAttributeValues": {":a": {"S": "abc"}, ":b": {"N": "1"}}}),
        ),
        (
            "a comparison of two values",
            json!({"ConditionExpression": ":a = :b", "ExpressionAttributeValues": {":a": {"S": "a"}, ":b": {"S": "a"}}}),
        ),
        ("an empty expression", json!({"ConditionExpression": ""})),
        (
            "names without an expression",
            json!({"ExpressionAttributeNames": {"#a": "a"}}),
        ),
    ];
    for (fault, members) in conditions {
        let mut write = json!({"TableName": "{t}", "Item": item("c", 3, json!({}))});
        // Counted: a Scan's order is each server's own.
        let mut read = json!({"TableName": "{t}", "Select": "COUNT"});
        if let (Value::Object(write), Value::Object(read), Value::Object(members)) =
            (&mut write, &mut read, members)
        {
            for (member, value) in members {
                read.insert(member.replace("Condition", "Filter"), value.clone());
                write.insert(member, value);
            }
        }
        let mut put = probe(format!("PutItem: {fault}"), "PutItem", write);
        if let Some((_, message)) = ENVELOPED_CONDITION_FAULTS.iter().find(|(f, _)| *f == fault) {
            put = put.refused(
                ITEM_WRITE_ENVELOPE,
                "ValidationException",
                &format!("1 validation error detected: {message}"),
            );
        }
        probes.push(put);
        probes.push(probe(format!("Scan: {fault}"), "Scan", read));
    }
    let query = |extra: Value| {
        let mut body = json!({"TableName": "{t}", "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "a"}}});
        if let (Value::Object(body), Value::Object(extra)) = (&mut body, extra) {
            body.extend(extra);
        }
        body
    };
    probes.extend([
        probe("Query: Limit 0", "Query", query(json!({"Limit": 0}))).refused(
            QUERY_LIMIT_RANGE,
            "ValidationException",
            "1 validation error detected: Value at 'Limit' failed to satisfy constraint: Member must have value greater than or equal to 1",
        ),
        probe("Scan: Limit -5", "Scan", json!({"TableName": "{t}", "Limit": -5})).refused(
            LIMIT_RANGE,
            "ValidationException",
            "1 validation error detected: Value '-5' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1",
        ),
        probe("Scan: Segment equal to TotalSegments", "Scan", json!({"TableName": "{t}", "Segment": 4, "TotalSegments": 4})).refused(
            SEGMENT_RANGE,
            "ValidationException",
            "The Segment parameter is zero-based and must be less than parameter TotalSegments: Segment: 4 is not less than TotalSegments: 4",
        ),
        probe("Scan: a start key with an attribute beyond the key", "Scan", json!({"TableName": "{t}", "ExclusiveStartKey": item("a", 1, json!({"x": {"S": "y"}}))}))
            .refused(START_KEY, "ValidationException", "The provided starting key is invalid: Exclusive Start Key must have same size as table's key schema"),
        probe("Query: a start key of another partition", "Query", query(json!({"ExclusiveStartKey": key("b", 1)}))),
        probe("Query: a start key that is no key of the table", "Query", query(json!({"ExclusiveStartKey": {"bad": {"S": "p"}}})))
            .refused(QUERY_START_KEY, "ValidationException", "The provided starting key is invalid"),
        probe("Query: ConsistentRead on a global index", "Query", json!({"TableName": "{t}", "IndexName": "byG", "KeyConditionExpression": "g = :g", "ExpressionAttributeValues": {":g": {"S": "x"}}, "ConsistentRead": true})),
        probe("Scan: ConsistentRead on a global index", "Scan", json!({"TableName": "{t}", "IndexName": "byG", "ConsistentRead": true})),
        probe("Query: an index that does not exist", "Query", json!({"TableName": "{t}", "IndexName": "nope", "KeyConditionExpression": "g = :g", "ExpressionAttributeValues": {":g": {"S": "x"}}})),
        probe("Query: a filter on what a global index does not project", "Query", json!({"TableName": "{t}", "IndexName": "byG", "KeyConditionExpression": "g = :g", "FilterExpression": "n > :n", "ExpressionAttributeValues": {":g": {"S": "x"}, ":n": {"N": "0"}}})),
        probe("Query: Select COUNT with a projection", "Query", query(json!({"Select": "COUNT", "ProjectionExpression": "n"}))),
        probe("Query: SPECIFIC_ATTRIBUTES without a projection", "Query", query(json!({"Select": "SPECIFIC_ATTRIBUTES"})))
            .refused(SPECIFIC_WITHOUT_PROJECTION, "ValidationException", "1 validation error detected: Must specify the AttributesToGet or ProjectionExpression when choosing to get SPECIFIC_ATTRIBUTES"),
        probe("Query: ALL_PROJECTED_ATTRIBUTES of the table", "Query", query(json!({"Select": "ALL_PROJECTED_ATTRIBUTES"}))),
        probe("Query: the partition key empty", "Query", json!({"TableName": "{t}", "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": ""}}})),
    ]);
    // The legacy parameters, alone and beside expressions.
    let eq = |value: Value| json!({"ComparisonOperator": "EQ", "AttributeValueList": [value]});
    probes.extend([
        probe("GetItem: AttributesToGet", "GetItem", json!({"TableName": "{t}", "Key": key("a", 1), "AttributesToGet": ["n", "missing"]})),
        probe("PutItem: Expected that fails", "PutItem", json!({"TableName": "{t}", "Item": key("a", 1), "Expected": {"n": {"Value": {"N": "2"}}}})),
        probe("PutItem: Expected OR", "PutItem", json!({"TableName": "{t}", "Item": item("a", 1, json!({"n": {"N": "1"}, "g": {"S": "x"}})), "Expected": {"n": eq(json!({"N": "1"})), "x": {"Exists": true, "Value": {"S": "y"}}}, "ConditionalOperator": "OR"})),
        probe("PutItem: Expected and a ConditionExpression", "PutItem", json!({"TableName": "{t}", "Item": key("a", 1), "Expected": {"pk": {"Exists": false}}, "ConditionExpression": "attribute_not_exists(pk)"})),
        probe("UpdateItem: AttributeUpdates", "UpdateItem", json!({"TableName": "{t}", "Key": key("a", 1), "AttributeUpdates": {"n": {"Action": "ADD", "Value": {"N": "2"}}, "s": {"Action": "PUT", "Value": {"SS": ["a", "b"]}}}, "ReturnValues": "ALL_NEW"})),
        probe("UpdateItem: AttributeUpdates deleting from a set", "UpdateItem", json!({"TableName": "{t}", "Key": key("a", 1), "AttributeUpdates": {"s": {"Action": "DELETE", "Value": {"SS": ["a"]}}}, "ReturnValues": "UPDATED_NEW"})),
        probe("UpdateItem: AttributeUpdates and an UpdateExpression", "UpdateItem", json!({"TableName": "{t}", "Key": key("a", 1), "AttributeUpdates": {"n": {"Action": "PUT", "Value": {"N": "2"}}}, "UpdateExpression": "SET n = :n", "ExpressionAttributeValues": {":n": {"N": "2"}}})),
        probe("DeleteItem: Expected NOT_NULL", "DeleteItem", json!({"TableName": "{t}", "Key": key("z", 9), "Expected": {"n": {"ComparisonOperator": "NOT_NULL"}}})),
        probe("Query: KeyConditions", "Query", json!({"TableName": "{t}", "KeyConditions": {"sk": {"ComparisonOperator": "BETWEEN", "AttributeValueList": [{"N": "0"}, {"N": "5"}]}, "pk": eq(json!({"S": "a"}))}})),
        probe("Query: KeyConditions and a QueryFilter", "Query", json!({"TableName": "{t}", "KeyConditions": {"pk": eq(json!({"S": "a"}))}, "QueryFilter": {"n": {"ComparisonOperator": "GE", "AttributeValueList": [{"N": "2"}]}}})),
        probe("Query: KeyConditions and a KeyConditionExpression", "Query", json!({"TableName": "{t}", "KeyConditions": {"pk": eq(json!({"S": "a"}))}, "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "a"}}})),
        probe("Query: KeyConditions and a FilterExpression", "Query", json!({"TableName": "{t}", "KeyConditions": {"pk": eq(json!({"S": "a"}))}, "FilterExpression": "n = :n", "ExpressionAttributeValues": {":n": {"N": "1"}}}))
            .refused(MIXED, "ValidationException", "Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {KeyConditions} Expression parameters: {FilterExpression}"),
        probe("Scan: ScanFilter", "Scan", json!({"TableName": "{t}", "ScanFilter": {"n": {"ComparisonOperator": "IN", "AttributeValueList": [{"N": "1"}, {"N": "3"}]}}})),
        probe("Scan: ScanFilter with Select COUNT", "Scan", json!({"TableName": "{t}", "ScanFilter": {"g": {"ComparisonOperator": "BEGINS_WITH", "AttributeValueList": [{"S": "x"}]}}, "Select": "COUNT"})),
        probe("Scan: ScanFilter and a FilterExpression", "Scan", json!({"TableName": "{t}", "ScanFilter": {"n": eq(json!({"N": "1"}))}, "FilterExpression": "n = :n", "ExpressionAttributeValues": {":n": {"N": "1"}}})),
        probe("Scan: ConditionalOperator without a filter", "Scan", json!({"TableName": "{t}", "ConditionalOperator": "AND"})),
        probe("BatchGetItem: AttributesToGet", "BatchGetItem", json!({"RequestItems": {"{t}": {"Keys": [key("a", 1)], "AttributesToGet": ["g"]}}})),
    ]);
    probe_corpus("requests", setup, probes, &[""]).await;
}

const NAME_CONSTRAINT: &str = "table and index names: \"Length Constraints: Minimum length of 3. Maximum length of 255. Pattern: [a-zA-Z0-9_.-]+\", each broken constraint in DynamoDB's \"N validation error(s) detected\" form; DynamoDB Local answers one sentence for all";
const KEY_SCHEMA: &str = "KeySchema: \"Array Members: Minimum number of 1 item. Maximum number of 2 items\", a HASH key then a RANGE key, each defined in AttributeDefinitions, which defines nothing else; DynamoDB words its refusals \"Invalid KeySchema: ...\" and \"One or more parameter values were invalid: ...\"";
const SPECIFIC_WITHOUT_PROJECTION_MESSAGE: &str = r#""1 validation error detected: Must specify the AttributesToGet or ProjectionExpression when choosing to get SPECIFIC_ATTRIBUTES""#;
const SPECIFIC_WITHOUT_PROJECTION: &str = "Select SPECIFIC_ATTRIBUTES needs a projection; Query answers in the validation framework's \"1 validation error detected\" envelope (Scan without it); DynamoDB Local leaves the envelope out";
const STREAM_SPECIFICATION: &str = "CreateTable's StreamSpecification: StreamEnabled is required, a view type goes with an enabled stream only, in DynamoDB's \"Table is being created with a stream ...\" words; DynamoDB Local words them as UpdateTable does";
const BILLING: &str = "BillingMode: PROVISIONED \"requires ProvisionedThroughput\", PAY_PER_REQUEST refuses it: \"One or more parameter values were invalid: ...\"; DynamoDB Local accepts units on an on-demand table and words the others its own way";
const INDEX_LIMITS: &str = "quotas: 20 global and 5 local secondary indexes per table, and projections as the Projection shape describes them (NonKeyAttributes with INCLUDE only, and then required): \"One or more parameter values were invalid: ...\"";
const OTHER_ACCOUNT: &str = "a table ARN of another account or region than the caller's: AccessDeniedException, the caller not being authorized on that account's resource; DynamoDB Local does not tag";
const LIST_LIMIT: &str = "ListTables: \"Limit: Valid Range: Minimum value of 1. Maximum value of 100\", and ExclusiveStartTableName a table name (3 to 255 characters of [a-zA-Z0-9_.-]), in DynamoDB's \"1 validation error detected\" form";

/// The control plane's refusals: CreateTable with bad names, attribute
/// definitions and key schemas, billing settings, too many indexes and bad
/// projections; DescribeTable and DeleteTable of a missing table, a table
/// deleted twice; ListTables' limits and paging.
#[tokio::test]
async fn control_plane_faults_match_dynamodb() {
    let defined = |pairs: &[(&str, &str)]| -> Value {
        pairs
            .iter()
            .map(|(name, kind)| json!({"AttributeName": name, "AttributeType": kind}))
            .collect()
    };
    let schema = |pairs: &[(&str, &str)]| -> Value {
        pairs
            .iter()
            .map(|(name, role)| json!({"AttributeName": name, "KeyType": role}))
            .collect()
    };
    let table = |suffix: &str, extra: Value| {
        let mut body = json!({
            "TableName": format!("{{t}}{suffix}"),
            "AttributeDefinitions": defined(&[("pk", "S")]),
            "KeySchema": schema(&[("pk", "HASH")]),
            "BillingMode": "PAY_PER_REQUEST",
        });
        if let (Value::Object(body), Value::Object(extra)) = (&mut body, extra) {
            body.extend(extra);
        }
        body
    };
    let global = |name: &str, projection: Value| json!({"IndexName": name, "KeySchema": schema(&[("pk", "HASH")]), "Projection": projection});
    let invalid = |reason: &str| format!("{INVALID_PARAMETER}{reason}");
    let long = "a".repeat(256);
    let probes = vec![
        probe("CreateTable: a name with a space", "CreateTable", table("", json!({"TableName": "bad name!"})))
            .refused(NAME_CONSTRAINT, "ValidationException", "1 validation error detected: Value 'bad name!' at 'tableName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"),
        probe("CreateTable: a name of 256 characters", "CreateTable", table("", json!({"TableName": long})))
            .refused(NAME_CONSTRAINT, "ValidationException", &format!("1 validation error detected: Value '{long}' at 'tableName' failed to satisfy constraint: Member must have length less than or equal to 255")),
        probe("CreateTable: an empty name", "CreateTable", table("", json!({"TableName": ""})))
            .refused(NAME_CONSTRAINT, "ValidationException", "2 validation errors detected: Value '' at 'tableName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+; Value '' at 'tableName' failed to satisfy constraint: Member must have length greater than or equal to 3"),
        probe("CreateTable: an index name of one character", "CreateTable", table("-a", json!({"GlobalSecondaryIndexes": [global("g", json!({"ProjectionType": "ALL"}))]})))
            .refused(NAME_CONSTRAINT, "ValidationException", "1 validation error detected: Value 'g' at 'globalSecondaryIndexes.1.member.indexName' failed to satisfy constraint: Member must have length greater than or equal to 3"),
        probe("CreateTable: one attribute defined twice", "CreateTable", table("-b", json!({"AttributeDefinitions": defined(&[("pk", "S"), ("pk", "S")])})))
            .refused(KEY_SCHEMA, "ValidationException", &invalid("Cannot have two attributes with the same name")),
        probe("CreateTable: an attribute no key uses", "CreateTable", table("-c", json!({"AttributeDefinitions": defined(&[("pk", "S"), ("x", "S")])})))
            .refused(KEY_SCHEMA, "ValidationException", &invalid("Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions")),
        probe("CreateTable: a key not defined", "CreateTable", table("-d", json!({"AttributeDefinitions": defined(&[("x", "S")])})))
            .refused(KEY_SCHEMA, "ValidationException", &invalid("Some index key attributes are not defined in AttributeDefinitions. Keys: [pk], AttributeDefinitions: [x]")),
        probe("CreateTable: two HASH keys", "CreateTable", table("-e", json!({"AttributeDefinitions": defined(&[("pk", "S"), ("x", "S")]), "KeySchema": schema(&[("pk", "HASH"), ("x", "HASH")])})))
            .refused(KEY_SCHEMA, "ValidationException", "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type"),
        probe("CreateTable: a RANGE key first", "CreateTable", table("-f", json!({"KeySchema": schema(&[("pk", "RANGE")])})))
            .refused(KEY_SCHEMA, "ValidationException", "Invalid KeySchema: The first KeySchemaElement is not a HASH key type"),
        probe("CreateTable: the HASH key twice", "CreateTable", table("-g", json!({"KeySchema": schema(&[("pk", "HASH"), ("pk", "RANGE")])})))
            .refused(KEY_SCHEMA, "ValidationException", "Invalid KeySchema: Some index key attribute have no definition"),
        probe("CreateTable: an empty key schema", "CreateTable", table("-h", json!({"KeySchema": []})))
            .refused(KEY_SCHEMA, "ValidationException", "1 validation error detected: Value '[]' at 'keySchema' failed to satisfy constraint: Member must have length greater than or equal to 1"),
        probe("CreateTable: a key type that does not exist", "CreateTable", table("-i", json!({"KeySchema": schema(&[("pk", "PRIMARY")])})))
            .refused(KEY_SCHEMA, "ValidationException", "1 validation error detected: Value 'PRIMARY' at 'keySchema.1.member.keyType' failed to satisfy constraint: Member must satisfy enum value set: [HASH, RANGE]"),
        probe("CreateTable: an attribute type that does not exist", "CreateTable", table("-j", json!({"AttributeDefinitions": defined(&[("pk", "BOOL")])})))
            .refused(KEY_SCHEMA, "ValidationException", "1 validation error detected: Value 'BOOL' at 'attributeDefinitions.1.member.attributeType' failed to satisfy constraint: Member must satisfy enum value set: [B, N, S]"),
        probe("CreateTable: a stream disabled with a view type", "CreateTable", table("-s1", json!({"StreamSpecification": {"StreamEnabled": false, "StreamViewType": "NEW_IMAGE"}})))
            .refused(STREAM_SPECIFICATION, "ValidationException", &invalid("Table is being created with a stream disabled, UpdateViewType should not be specified")),
        probe("CreateTable: a stream enabled without a view type", "CreateTable", table("-s2", json!({"StreamSpecification": {"StreamEnabled": true}})))
            .refused(STREAM_SPECIFICATION, "ValidationException", &invalid("Table is being created with a stream enabled, UpdateViewType is required")),
        probe("CreateTable: a view type without StreamEnabled", "CreateTable", table("-s3", json!({"StreamSpecification": {"StreamViewType": "NEW_IMAGE"}})))
            .refused(STREAM_SPECIFICATION, "ValidationException", "1 validation error detected: Value null at 'streamSpecification.streamEnabled' failed to satisfy constraint: Member must not be null"),
        probe("CreateTable: units on an on-demand table", "CreateTable", table("-k", json!({"ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}})))
            .refused(BILLING, "ValidationException", &invalid("Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST")),
        probe("CreateTable: provisioned without units", "CreateTable", table("-l", json!({"BillingMode": "PROVISIONED"})))
            .refused(BILLING, "ValidationException", &invalid("ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED")),
        probe("CreateTable: 21 global indexes", "CreateTable", table("-m", json!({"GlobalSecondaryIndexes": (0..21).map(|n| global(&format!("index{n:02}"), json!({"ProjectionType": "KEYS_ONLY"}))).collect::<Vec<_>>()})))
            .refused(INDEX_LIMITS, "ValidationException", &invalid("GlobalSecondaryIndex count exceeds the per-table limit of 20")),
        probe("CreateTable: INCLUDE without attributes", "CreateTable", table("-n", json!({"GlobalSecondaryIndexes": [global("byPk", json!({"ProjectionType": "INCLUDE"}))]})))
            .refused(INDEX_LIMITS, "ValidationException", &invalid("ProjectionType is INCLUDE, but NonKeyAttributes is not specified")),
        probe("CreateTable: KEYS_ONLY with attributes", "CreateTable", table("-o", json!({"GlobalSecondaryIndexes": [global("byPk", json!({"ProjectionType": "KEYS_ONLY", "NonKeyAttributes": ["x"]}))]})))
            .refused(INDEX_LIMITS, "ValidationException", &invalid("ProjectionType is KEYS_ONLY, but NonKeyAttributes is specified")),
        probe("DescribeTable: a missing table", "DescribeTable", json!({"TableName": "{t}-missing"}))
            .refused(NOT_FOUND, "ResourceNotFoundException", "Requested resource not found: Table: {t}-missing not found"),
        probe("CreateTable", "CreateTable", table("", json!({}))),
        probe("DeleteTable", "DeleteTable", json!({"TableName": "{t}"}))
            .answered(DELETING, json!({"status": 200, "body": {"TableDescription": {
                "AttributeDefinitions": defined(&[("pk", "S")]),
                "BillingModeSummary": {"BillingMode": "PAY_PER_REQUEST"},
                "DeletionProtectionEnabled": false,
                "KeySchema": schema(&[("pk", "HASH")]),
                "ProvisionedThroughput": {"NumberOfDecreasesToday": 0, "ReadCapacityUnits": 0, "WriteCapacityUnits": 0},
                "TableName": "{t}",
                "TableStatus": "DELETING",
            }}})),
        probe("DeleteTable: the table again", "DeleteTable", json!({"TableName": "{t}"}))
            .refused(NOT_FOUND, "ResourceNotFoundException", "Requested resource not found: Table: {t} not found"),
        probe("ListTables: Limit 0", "ListTables", json!({"Limit": 0}))
            .refused(LIST_LIMIT, "ValidationException", "1 validation error detected: Value '0' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1"),
        probe("ListTables: Limit 101", "ListTables", json!({"Limit": 101}))
            .refused(LIST_LIMIT, "ValidationException", "1 validation error detected: Value '101' at 'limit' failed to satisfy constraint: Member must have value less than or equal to 100"),
        probe("ListTables: a start name that is no table name", "ListTables", json!({"ExclusiveStartTableName": "a b"}))
            .refused(LIST_LIMIT, "ValidationException", "1 validation error detected: Value 'a b' at 'exclusiveStartTableName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"),
        probe("ListTables: one a page", "ListTables", json!({"Limit": 1, "ExclusiveStartTableName": "{t}"})),
        probe("ListTagsOfResource: a table of another account", "ListTagsOfResource", json!({"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/elsewhere"}))
            .refused(OTHER_ACCOUNT, "AccessDeniedException", "User is not authorized to perform: dynamodb:ListTagsOfResource on resource: arn:aws:dynamodb:us-east-1:000000000000:table/elsewhere"),
        probe("TagResource: no ARN at all", "TagResource", json!({"ResourceArn": "not-a-valid-arn", "Tags": [{"Key": "k", "Value": "v"}]}))
            .refused(TAGGING, "ValidationException", "Invalid TableArn: Invalid ResourceArn provided as input not-a-valid-arn"),
    ];
    probe_corpus(
        "tables",
        Vec::new(),
        probes,
        &[
            "", "-a", "-b", "-c", "-d", "-e", "-f", "-g", "-h", "-i", "-j", "-k", "-l", "-m", "-n",
            "-o",
        ],
    )
    .await;
}

const STREAM_ARN: &str = "StreamArn: \"Required: Yes\", \"Length Constraints: Minimum length of 37. Maximum length of 1024\" (constraint failures in DynamoDB's \"1 validation error detected\" form), and a stream that does not exist is a ResourceNotFoundException naming it; DynamoDB Local answers otherwise";

/// DynamoDB Streams' refusals: stream ARNs too short or naming no stream,
/// shard iterators that are not one, missing members.
#[tokio::test]
async fn stream_faults_match_dynamodb() {
    let streams_probe = |name: &str, operation: &str, body: Value| Probe {
        name: name.to_owned(),
        step: streams_op(operation, body),
        documented: None,
    };
    let elsewhere =
        "arn:aws:dynamodb:us-east-1:000000000000:table/elsewhere/stream/2020-01-01T00:00:00.000";
    let probes = vec![
        streams_probe("DescribeStream: an ARN too short", "DescribeStream", json!({"StreamArn": "nope"}))
            .refused(STREAM_ARN, "ValidationException", "1 validation error detected: Value 'nope' at 'streamArn' failed to satisfy constraint: Member must have length greater than or equal to 37"),
        streams_probe("DescribeStream: a stream elsewhere", "DescribeStream", json!({"StreamArn": elsewhere}))
            .refused(STREAM_ARN, "ResourceNotFoundException", &format!("Requested resource not found: Stream: {elsewhere} not found")),
        streams_probe("GetShardIterator: a stream elsewhere", "GetShardIterator", json!({"StreamArn": elsewhere, "ShardId": "shardId-00000000000000000000-00000000", "ShardIteratorType": "LATEST"}))
            .refused(STREAM_ARN, "ResourceNotFoundException", &format!("Requested resource not found: Stream: {elsewhere} not found")),
        streams_probe("GetRecords: an iterator that is not one", "GetRecords", json!({"ShardIterator": "garbage"})),
        streams_probe("DescribeStream: no ARN", "DescribeStream", json!({}))
            .refused(STREAM_ARN, "ValidationException", "1 validation error detected: Value null at 'streamArn' failed to satisfy constraint: Member must not be null"),
    ];
    probe_corpus("streams-faults", Vec::new(), probes, &[]).await;
}

const TTL_SPECIFICATION: &str = "UpdateTimeToLive's TimeToLiveSpecification is required, and its AttributeName \"Length Constraints: Minimum length of 1. Maximum length of 255\" (constraint failures in DynamoDB's \"1 validation error detected\" form, placed by their path); DynamoDB Local words them its own way";

/// Time to Live's refusals: a missing specification, attribute names too
/// short or too long, a missing table, enabling twice, disabling another
/// attribute.
#[tokio::test]
async fn time_to_live_faults_match_dynamodb() {
    let setup = vec![op("CreateTable", keyed_table(json!({})))];
    let enable = |name: &str| json!({"TableName": "{t}", "TimeToLiveSpecification": {"Enabled": true, "AttributeName": name}});
    let long = "a".repeat(256);
    let probes = vec![
        probe("UpdateTimeToLive: no specification", "UpdateTimeToLive", json!({"TableName": "{t}"}))
            .refused(TTL_SPECIFICATION, "ValidationException", "1 validation error detected: Value null at 'timeToLiveSpecification' failed to satisfy constraint: Member must not be null"),
        probe("UpdateTimeToLive: an empty attribute name", "UpdateTimeToLive", enable(""))
            .refused(TTL_SPECIFICATION, "ValidationException", "1 validation error detected: Value '' at 'timeToLiveSpecification.attributeName' failed to satisfy constraint: Member must have length greater than or equal to 1"),
        probe("UpdateTimeToLive: an attribute name of 256 characters", "UpdateTimeToLive", enable(&long))
            .refused(TTL_SPECIFICATION, "ValidationException", &format!("1 validation error detected: Value '{long}' at 'timeToLiveSpecification.attributeName' failed to satisfy constraint: Member must have length less than or equal to 255")),
        probe("UpdateTimeToLive: a missing table", "UpdateTimeToLive", json!({"TableName": "{t}-missing", "TimeToLiveSpecification": {"Enabled": true, "AttributeName": "ttl"}}))
            .refused(NOT_FOUND, "ResourceNotFoundException", "Requested resource not found: Table: {t}-missing not found"),
        probe("DescribeTimeToLive: a missing table", "DescribeTimeToLive", json!({"TableName": "{t}-missing"}))
            .refused(NOT_FOUND, "ResourceNotFoundException", "Requested resource not found: Table: {t}-missing not found"),
        probe("DescribeTimeToLive: never enabled", "DescribeTimeToLive", json!({"TableName": "{t}"})),
        probe("UpdateTimeToLive: enabled", "UpdateTimeToLive", enable("ttl")),
        probe("UpdateTimeToLive: enabled again", "UpdateTimeToLive", enable("ttl")),
        probe("DescribeTimeToLive: enabled", "DescribeTimeToLive", json!({"TableName": "{t}"})),
    ];
    probe_corpus("ttl", setup, probes, &[""]).await;
}

fn statement(text: &str) -> Value {
    json!({"Statement": text})
}

/// Every PartiQL statement form rave serves, run as ExecuteStatement,
/// BatchExecuteStatement and ExecuteTransaction, with their refusals.
#[tokio::test]
async fn partiql_statements_match_dynamodb_local() {
    let execute = |text: &str| op("ExecuteStatement", statement(text));
    let execute_with = |text: &str, extra: Value| {
        let mut body = statement(text);
        if let (Value::Object(body), Value::Object(extra)) = (&mut body, extra) {
            body.extend(extra);
        }
        op("ExecuteStatement", body)
    };
    let batch = |texts: &[&str]| {
        let statements: Vec<Value> = texts.iter().map(|text| statement(text)).collect();
        op("BatchExecuteStatement", json!({ "Statements": statements }))
    };
    let transaction = |texts: &[&str]| {
        let statements: Vec<Value> = texts.iter().map(|text| statement(text)).collect();
        op(
            "ExecuteTransaction",
            json!({ "TransactStatements": statements }),
        )
    };
    let steps = vec![
        op(
            "CreateTable",
            keyed_table(json!({
                "AttributeDefinitions": [
                    {"AttributeName": "pk", "AttributeType": "S"},
                    {"AttributeName": "sk", "AttributeType": "N"},
                    {"AttributeName": "g", "AttributeType": "S"},
                ],
                "GlobalSecondaryIndexes": [{
                    "IndexName": "byG",
                    "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "ALL"},
                }],
            })),
        ),
        // 1: INSERT, and INSERT again: not an upsert.
        execute(
            r#"INSERT INTO "{t}" VALUE {'pk': 'a', 'sk': 1, 'g': 'x', 'n': 5, 'm': {'l': [1, 'two']}, 's': <<'s1', 's2'>>, 'ok': true, 'no': null}"#,
        ),
        execute(r#"INSERT INTO "{t}" VALUE {'pk': 'a', 'sk': 1}"#),
        execute_with(
            r#"INSERT INTO "{t}" VALUE {'pk': ?, 'sk': ?, 'n': 7}"#,
            json!({"Parameters": [{"S": "a"}, {"N": "2"}]}),
        ),
        execute(r#"INSERT INTO "{t}" VALUE {'pk': 'b', 'sk': 1, 'g': 'y'}"#),
        // 5: SELECT as a Query, with a sort key condition, backwards, on an index.
        execute(r#"SELECT * FROM "{t}" WHERE pk = 'a'"#),
        execute(r#"SELECT n, sk FROM "{t}" WHERE pk = 'a' AND sk > 1"#),
        execute(r#"SELECT pk, sk FROM "{t}" WHERE pk = 'a' ORDER BY sk DESC"#),
        execute(r#"SELECT pk, sk FROM "{t}"."byG" WHERE g = 'x'"#),
        // 9: SELECT as a Scan, with every function and MISSING.
        execute(r#"SELECT pk FROM "{t}" WHERE n IS MISSING"#),
        execute(
            r#"SELECT pk, sk FROM "{t}" WHERE begins_with(pk, 'a') AND n BETWEEN 1 AND 6 AND contains(s, 's1') AND size(m) = 1 AND attribute_exists(g) AND attribute_not_exists(zz) AND n IS NOT MISSING"#,
        ),
        execute(r#"SELECT sk FROM "{t}" WHERE pk IN ['b', 'c'] OR n = 70"#),
        // 12: pages.
        execute_with(r#"SELECT * FROM "{t}" WHERE pk = 'a'"#, json!({"Limit": 1}))
            .capture("next", "/NextToken"),
        execute_with(
            r#"SELECT * FROM "{t}" WHERE pk = 'a'"#,
            json!({"Limit": 1, "NextToken": "{next}", "ConsistentRead": true}),
        ),
        // 14: UPDATE.
        execute(
            r#"UPDATE "{t}" SET n = n + 1 SET l2 = list_append(m.l, [3]) REMOVE g WHERE pk = 'a' AND sk = 1 RETURNING ALL NEW *"#,
        ),
        execute(r#"UPDATE "{t}" SET n = 1 WHERE pk = 'zz' AND sk = 1"#),
        execute(
            r#"UPDATE "{t}" SET s = set_add(s, <<'s3'>>) WHERE pk = 'a' AND sk = 1 RETURNING MODIFIED NEW *"#,
        ),
        execute(r#"UPDATE "{t}" SET n = 0 WHERE pk = 'a' AND sk = 1 AND n = 100"#),
        execute(r#"UPDATE "{t}" SET n = 0 WHERE pk = 'a'"#),
        // 19: DELETE.
        execute(r#"DELETE FROM "{t}" WHERE pk = 'a' AND sk = 2 RETURNING ALL OLD *"#),
        execute(r#"DELETE FROM "{t}" WHERE pk = 'zz' AND sk = 2"#),
        // 21: refusals.
        execute(r#"SELEC * FROM "{t}""#),
        execute(r#"SELECT * FROM "{t}" WHERE foo(n)"#),
        execute(r#"SELECT * FROM "{t}"."nope" WHERE g = 'x'"#),
        execute_with(r#"SELECT * FROM "{t}" WHERE pk = 'a'"#, json!({"Limit": 0})),
        execute_with(
            r#"SELECT * FROM "{t}" WHERE pk = 'a'"#,
            json!({"NextToken": "garbage"}),
        ),
        execute(r#"INSERT INTO "{t}" VALUE {'pk': 'c'}"#),
        execute(r#"UPDATE "{t}" SET pk = 'z' WHERE pk = 'a' AND sk = 1"#),
        // 28: batches of reads, of writes, and what they refuse.
        batch(&[
            r#"SELECT * FROM "{t}" WHERE pk = 'a' AND sk = 1"#,
            r#"SELECT pk FROM "{t}" WHERE pk = 'zz' AND sk = 1"#,
            r#"SELECT * FROM "{t}-missing" WHERE pk = 'a' AND sk = 1"#,
            r#"SELECT * FROM "{t}" WHERE pk = 'a'"#,
        ]),
        batch(&[
            r#"INSERT INTO "{t}" VALUE {'pk': 'a', 'sk': 1}"#,
            r#"INSERT INTO "{t}" VALUE {'pk': 'c', 'sk': 1}"#,
            r#"UPDATE "{t}" SET x = 1 WHERE pk = 'q' AND sk = 1"#,
            r#"DELETE FROM "{t}" WHERE pk = 'b' AND sk = 9"#,
            r#"SELEC * FROM "{t}""#,
        ]),
        batch(&[
            r#"SELECT * FROM "{t}" WHERE pk = 'a' AND sk = 1"#,
            r#"INSERT INTO "{t}" VALUE {'pk': 'e', 'sk': 1}"#,
        ]),
        batch(&[
            r#"SELECT * FROM "{t}" WHERE pk = 'a' AND sk = 1"#,
            r#"SELECT * FROM "{t}" WHERE pk = 'a' AND sk = 1"#,
        ]),
        // 32: transactions of writes, cancelled, of reads, and refused.
        transaction(&[
            r#"INSERT INTO "{t}" VALUE {'pk': 'd', 'sk': 1}"#,
            r#"UPDATE "{t}" SET x = 1 WHERE pk = 'c' AND sk = 1"#,
        ]),
        transaction(&[
            r#"INSERT INTO "{t}" VALUE {'pk': 'd', 'sk': 1}"#,
            r#"INSERT INTO "{t}" VALUE {'pk': 'f', 'sk': 1}"#,
            r#"UPDATE "{t}" SET x = 1 WHERE pk = 'q' AND sk = 1"#,
        ]),
        transaction(&[
            r#"SELECT * FROM "{t}" WHERE pk = 'd' AND sk = 1"#,
            r#"SELECT x FROM "{t}" WHERE pk = 'c' AND sk = 1"#,
            r#"SELECT * FROM "{t}" WHERE pk = 'nope' AND sk = 1"#,
        ]),
        transaction(&[r#"SELECT * FROM "{t}" WHERE pk = 'd'"#]),
        transaction(&[
            r#"SELECT * FROM "{t}" WHERE pk = 'd' AND sk = 1"#,
            r#"DELETE FROM "{t}" WHERE pk = 'c' AND sk = 1"#,
        ]),
        transaction(&[
            r#"DELETE FROM "{t}" WHERE pk = 'c' AND sk = 1"#,
            r#"DELETE FROM "{t}" WHERE pk = 'c' AND sk = 1"#,
        ]),
        op(
            "ExecuteTransaction",
            json!({"TransactStatements": [{
                "Statement": r#"UPDATE "{t}" SET x = 2 WHERE pk = 'c' AND sk = 1 AND x = 5"#,
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            }]}),
        ),
        // 39: what the statements left, and a table that is not there.
        op(
            "BatchGetItem",
            json!({"RequestItems": {"{t}": {"ConsistentRead": true, "Keys": [key("a", 2), key("b", 1), key("c", 1), key("d", 1), key("e", 1), key("f", 1)]}}}),
        ),
        execute(r#"SELECT * FROM "{t}-missing" WHERE pk = 'a'"#),
        op(
            "GetItem",
            json!({"TableName": "{t}", "Key": key("a", 1), "ConsistentRead": true}),
        ),
        // 42: the FROM-first UPDATE, WHERE conditions on a write, set_delete,
        // nested paths selected, RETURNING where it is refused.
        execute(r#"FROM "{t}" WHERE pk = 'a' AND sk = 1 SET ff = 1 RETURNING ALL NEW *"#),
        execute(r#"DELETE FROM "{t}" WHERE pk = 'nobody' AND sk = 1 AND n = 5"#),
        execute(r#"DELETE FROM "{t}" WHERE pk = 'b' AND sk = 1 AND g = 'zz'"#),
        execute(r#"DELETE FROM "{t}" WHERE pk = 'a' AND sk = 1 RETURNING MODIFIED OLD *"#),
        execute(
            r#"UPDATE "{t}" SET s = set_delete(s, <<'s3'>>) WHERE pk = 'a' AND sk = 1 RETURNING MODIFIED NEW *"#,
        ),
        execute(r#"SELECT m.l[1], n FROM "{t}" WHERE pk = 'a' AND sk = 1"#),
        // 48: the FROM clause's paths, a WHERE cut short, an operand no
        // ordering takes, a strongly consistent index read.
        execute(r#"SELECT * FROM "{t}"."byG"."x""#),
        execute(r#"SELECT * FROM "" WHERE pk = 'a'"#),
        execute(r#"SELECT * FROM "{t}" WHERE"#),
        execute_with(
            r#"SELECT * FROM "{t}" WHERE pk = 'a' AND n < ?"#,
            json!({"Parameters": [{"BOOL": true}]}),
        ),
        execute_with(
            r#"SELECT * FROM "{t}"."byG" WHERE g = 'x'"#,
            json!({"ConsistentRead": true}),
        ),
        // 53: what a transaction refuses outright.
        transaction(&[r#"UPDATE "{t}" SET x = 2 WHERE pk = 'c' AND sk = 1 RETURNING ALL NEW *"#]),
        transaction(&[r#"SELECT * FROM "{t}"."byG" WHERE g = 'x'"#]),
        // 55: a condition compared with true, and IS with a type.
        execute(
            r#"SELECT pk FROM "{t}" WHERE pk = 'a' AND sk = 1 AND ATTRIBUTE_EXISTS(s) = true AND "no" IS NULL AND ok IS BOOL AND zz IS NOT NULL"#,
        ),
        execute(
            r#"SELECT pk FROM "{t}" WHERE pk = 'a' AND sk = 1 AND attribute_exists(s) = false"#,
        ),
        // 57: no statements.
        op("BatchExecuteStatement", json!({"Statements": []})),
        op("ExecuteTransaction", json!({"TransactStatements": []})),
    ];
    differential("partiql", steps).await;
}
