//! rave's DynamoDB API through its real HTTP server: hand-written DynamoDB
//! JSON requests (`http`, `expressions`), random writes against a model
//! (`model`), Time to Live, limits, tags and TransactGetItems (`control`),
//! DynamoDB Streams (`streams`), and the AWS CLI (`awscli`).

mod awscli;
mod control;
mod expressions;
mod http;
mod model;
mod streams;
mod support;
