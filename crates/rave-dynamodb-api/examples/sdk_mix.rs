//! The same request mix through the AWS SDK for Rust against rave's
//! DynamoDB API (served by this program, in process, on a fresh data
//! directory) and against another endpoint (DynamoDB Local), one after the
//! other in the same run; prints each one's throughput.
//!
//! ```sh
//! cargo run --release -p rave-dynamodb-api --example sdk_mix -- http://127.0.0.1:8001
//! ```
//!
//! The mix, from 16 concurrent clients for 10 s each: 60 % GetItem, 20 %
//! Query (a page of up to 20), 10 % PutItem, 10 % UpdateItem (ADD), on 50
//! partitions of 40 items each, loaded first.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::config::{Credentials, Region};
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, KeySchemaElement, KeyType,
    ScalarAttributeType,
};
use rave_dynamodb_api::DynamoApi;
use rave_engine::Engine;

const CLIENTS: u64 = 16;
const RUN: Duration = Duration::from_secs(10);
const PARTITIONS: u64 = 50;
const ITEMS_PER_PARTITION: u64 = 40;
const TABLE: &str = "mix";

type Failure = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let other = std::env::args()
        .nth(1)
        .ok_or("usage: sdk_mix <the other endpoint's URL>")?;
    let dir = tempfile::tempdir()?;
    let api = Arc::new(DynamoApi::new(Engine::open(dir.path())?)?);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let rave = format!("http://{}", listener.local_addr()?);
    tokio::spawn(rave_dynamodb_api::serve(
        listener,
        api,
        std::future::pending(),
    ));
    for (name, endpoint) in [("rave", rave.as_str()), ("other", other.as_str())] {
        let client = client(endpoint);
        prepare(&client).await?;
        let (requests, elapsed) = run(&client).await?;
        println!(
            "{name} ({endpoint}): {requests} requests in {:.1} s, {:.0} requests/s",
            elapsed.as_secs_f64(),
            requests as f64 / elapsed.as_secs_f64()
        );
    }
    Ok(())
}

fn client(endpoint: &str) -> Client {
    let config = aws_sdk_dynamodb::Config::builder()
        .behavior_version_latest()
        .region(Region::new("us-east-1"))
        .endpoint_url(endpoint)
        .credentials_provider(Credentials::new("rave", "rave", None, None, "sdk_mix"))
        .build();
    Client::from_conf(config)
}

/// A fresh table, loaded with every partition's items.
async fn prepare(client: &Client) -> Result<(), Failure> {
    let _ = client.delete_table().table_name(TABLE).send().await;
    client
        .create_table()
        .table_name(TABLE)
        .attribute_definitions(attribute("pk", ScalarAttributeType::S)?)
        .attribute_definitions(attribute("sk", ScalarAttributeType::N)?)
        .key_schema(key("pk", KeyType::Hash)?)
        .key_schema(key("sk", KeyType::Range)?)
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await?;
    for partition in 0..PARTITIONS {
        for sort in 0..ITEMS_PER_PARTITION {
            put(client, partition, sort).await?;
        }
    }
    Ok(())
}

fn attribute(name: &str, kind: ScalarAttributeType) -> Result<AttributeDefinition, Failure> {
    Ok(AttributeDefinition::builder()
        .attribute_name(name)
        .attribute_type(kind)
        .build()?)
}

fn key(name: &str, kind: KeyType) -> Result<KeySchemaElement, Failure> {
    Ok(KeySchemaElement::builder()
        .attribute_name(name)
        .key_type(kind)
        .build()?)
}

async fn put(client: &Client, partition: u64, sort: u64) -> Result<(), Failure> {
    client
        .put_item()
        .table_name(TABLE)
        .item("pk", AttributeValue::S(format!("p{partition}")))
        .item("sk", AttributeValue::N(sort.to_string()))
        .item(
            "title",
            AttributeValue::S(format!("item {sort} of p{partition}")),
        )
        .item("body", AttributeValue::S("x".repeat(200)))
        .item("views", AttributeValue::N("0".into()))
        .send()
        .await?;
    Ok(())
}

/// Every client runs the mix until the time is up; returns the requests
/// answered and the time taken.
async fn run(client: &Client) -> Result<(u64, Duration), Failure> {
    let done = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|worker| {
            let (client, done, stop) = (client.clone(), done.clone(), stop.clone());
            tokio::spawn(async move {
                // A small linear congruential generator: the mix needs no
                // better randomness, and each worker's sequence is fixed.
                let mut state = worker.wrapping_mul(6364136223846793005).wrapping_add(1);
                while !stop.load(Ordering::Relaxed) {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let roll = (state >> 33) % 100;
                    let partition = (state >> 20) % PARTITIONS;
                    let sort = (state >> 8) % ITEMS_PER_PARTITION;
                    one(&client, roll, partition, sort).await?;
                    done.fetch_add(1, Ordering::Relaxed);
                }
                Ok::<(), Failure>(())
            })
        })
        .collect();
    tokio::time::sleep(RUN).await;
    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        task.await??;
    }
    Ok((done.load(Ordering::Relaxed), started.elapsed()))
}

async fn one(client: &Client, roll: u64, partition: u64, sort: u64) -> Result<(), Failure> {
    let pk = AttributeValue::S(format!("p{partition}"));
    let sk = AttributeValue::N(sort.to_string());
    match roll {
        0..60 => {
            client
                .get_item()
                .table_name(TABLE)
                .key("pk", pk)
                .key("sk", sk)
                .send()
                .await?;
        }
        60..80 => {
            client
                .query()
                .table_name(TABLE)
                .key_condition_expression("pk = :pk AND sk >= :sk")
                .expression_attribute_values(":pk", pk)
                .expression_attribute_values(":sk", sk)
                .limit(20)
                .send()
                .await?;
        }
        80..90 => put(client, partition, sort).await?,
        _ => {
            client
                .update_item()
                .table_name(TABLE)
                .key("pk", pk)
                .key("sk", sk)
                .update_expression("ADD #views :one")
                .expression_attribute_names("#views", "views")
                .expression_attribute_values(":one", AttributeValue::N("1".into()))
                .send()
                .await?;
        }
    }
    Ok(())
}
