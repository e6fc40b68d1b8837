//! rave's DynamoDB API through its real HTTP server: hand-written DynamoDB
//! JSON requests (`http`, `expressions`), random writes against a model
//! (`model`), and the AWS CLI (`awscli`).

mod awscli;
mod expressions;
mod http;
mod model;
mod support;
