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
//!
//! Every answer's CRC32 and request id are checked, as the SDKs check them.
//! The AWS CLI and the boto3 scripts (`tests/boto3/`, and the example
//! systems under the repository's `examples/`) are each given the server's URL and fail on
//! their first wrong answer. `examples/sdk_mix.rs` is the speed comparison
//! of BENCHMARKS.md: one request mix through the AWS SDK for Rust against
//! rave's API, served in process, and against another endpoint.

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
mod partiql;
mod signatures;
mod streams;
mod support;
mod update_table;
