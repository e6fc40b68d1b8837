//! rave's DynamoDB API through its real HTTP server: hand-written DynamoDB
//! JSON requests (`http`), and the AWS CLI (`awscli`).

mod awscli;
mod http;
mod support;
