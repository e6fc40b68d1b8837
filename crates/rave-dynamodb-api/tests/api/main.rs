//! rave's DynamoDB API through its real HTTP server: hand-written DynamoDB
//! JSON requests (`http`, `expressions`), and the AWS CLI (`awscli`).

mod awscli;
mod expressions;
mod http;
mod support;
