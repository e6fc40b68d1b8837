//! rave's DynamoDB API through its real HTTP server: hand-written DynamoDB
//! JSON requests (`http`, `expressions`, which also holds what `size()`
//! counts in a string), random writes against a model
//! (`model`), the same requests sent to DynamoDB Local (`differential`),
//! Time to Live, limits, tags and TransactGetItems (`control`), the
//! 400 KB item, each index's write units and the 4 MB transaction
//! (`limits`), DynamoDB
//! Streams (`streams`), UpdateTable (`update_table`), local secondary
//! indexes (`local_indexes`) and their item collections (`collections`),
//! global secondary indexes keyed on several attributes
//! (`multi_attribute_keys`), Signature V4 headers and their verification
//! (`signatures`), the AWS CLI (`awscli`), and boto3 with the example
//! systems (`boto3`).

mod awscli;
mod boto3;
mod collections;
mod control;
mod differential;
mod expressions;
mod http;
mod limits;
mod local_indexes;
mod model;
mod multi_attribute_keys;
mod signatures;
mod streams;
mod support;
mod update_table;
