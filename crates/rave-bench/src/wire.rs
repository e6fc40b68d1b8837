//! BENCH.md's "wire" row: the same DynamoDB API mix against rave's
//! endpoint (`rave dynamodb-api`) and DynamoDB Local, each its own
//! process, and each server's CPU time per request as the OS counts it
//! (`/proc/<pid>/stat`, user + system, every thread), so the figure does
//! not depend on the client.
//!
//! The client is plain HTTP: each request's DynamoDB JSON body is built
//! once, before anything is timed, and sent over keep-alive connections
//! (reqwest, `--connections` of them at once) with the headers an SDK
//! sends. Both servers are run as a local database is: rave without
//! access keys and DynamoDB Local as always, each requiring a complete
//! Signature V4 `Authorization` header and verifying none (rave's
//! verifying cost is in BENCHMARKS.md's profile of GetItem).
//!
//! Each server gets the same table — a string partition and sort key and
//! a global secondary index projecting every attribute — filled with the
//! same items (50 partitions of 40 items of about 220 bytes), then a
//! warm-up of every operation (DynamoDB Local's JIT compiles on the way),
//! then, for each operation in turn and each server one after the other,
//! `--seconds` of that operation alone. `--rounds` rounds; each figure is
//! the lowest of its rounds, with the spread beside it. The first row,
//! ListTables, is each server's floor: a request that reads nothing from
//! disk costs the HTTP exchange, the kernel's socket work and the
//! request's checks, which every operation pays before its own work.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use bytes::Bytes;
use serde_json::{Value, json};

use crate::report::Row;
use crate::running::{process_cpu_time, progress_bar};

const TABLE: &str = "bench";
const INDEX: &str = "byOwner";
const PARTITIONS: usize = 50;
const ITEMS_PER_PARTITION: usize = 40;
const OWNERS: usize = 50;
/// The items of the table, each of whose keys a body of the mix names.
const KEYS: usize = PARTITIONS * ITEMS_PER_PARTITION;
/// A complete Signature V4 header, verified by neither server.
const AUTHORIZATION: &str = "AWS4-HMAC-SHA256 Credential=bench/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=0000000000000000000000000000000000000000000000000000000000000000";
const AMZ_DATE: &str = "20260101T000000Z";

/// What the wire scenario runs.
#[derive(Debug, Clone)]
pub struct WireArgs {
    pub rave: PathBuf,
    /// DynamoDB Local's directory (the one holding `DynamoDBLocal.jar`).
    pub dynamodb_local: PathBuf,
    pub dir: PathBuf,
    pub seconds: u64,
    pub rounds: usize,
    pub connections: usize,
}

/// The operations of the mix, each timed alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operation {
    /// A request that reads only the table names a server holds in memory
    /// and writes nothing: each server's floor, what any request costs it
    /// before the operation's own work.
    ListTables,
    PutItem,
    GetItem,
    Query,
    QueryIndex,
    UpdateItem,
}

impl Operation {
    const ALL: [Operation; 6] = [
        Operation::ListTables,
        Operation::PutItem,
        Operation::GetItem,
        Operation::Query,
        Operation::QueryIndex,
        Operation::UpdateItem,
    ];

    fn label(self) -> &'static str {
        match self {
            Operation::ListTables => {
                "ListTables (the floor: a request that reads nothing from disk)"
            }
            Operation::PutItem => "PutItem",
            Operation::GetItem => "GetItem",
            Operation::Query => "Query (a page of 20)",
            Operation::QueryIndex => "Query on a GSI (a page of 20)",
            Operation::UpdateItem => "UpdateItem (ADD)",
        }
    }

    fn target(self) -> &'static str {
        match self {
            Operation::ListTables => "DynamoDB_20120810.ListTables",
            Operation::PutItem => "DynamoDB_20120810.PutItem",
            Operation::GetItem => "DynamoDB_20120810.GetItem",
            Operation::Query | Operation::QueryIndex => "DynamoDB_20120810.Query",
            Operation::UpdateItem => "DynamoDB_20120810.UpdateItem",
        }
    }

    /// How many distinct bodies of this operation are built and cycled
    /// through: one per key, and for PutItem two, whose items differ in
    /// their version. A PutItem of the item already stored changes nothing
    /// and rave then writes nothing, so with one body per key every
    /// PutItem after the warm-up's first pass would be timed as a no-op;
    /// with two, each key's puts alternate between its versions and every
    /// one rewrites the item, as an UpdateItem's ADD does.
    fn bodies(self) -> usize {
        match self {
            Operation::PutItem => 2 * KEYS,
            _ => KEYS,
        }
    }

    /// The `n`th request body of this operation.
    fn body(self, n: usize) -> Value {
        let partition = n % PARTITIONS;
        let item = (n / PARTITIONS) % ITEMS_PER_PARTITION;
        let key = json!({"pk": {"S": pk(partition)}, "sk": {"S": sk(item)}});
        match self {
            Operation::ListTables => json!({}),
            Operation::PutItem => {
                json!({"TableName": TABLE, "Item": item_json(partition, item, n)})
            }
            Operation::GetItem => json!({"TableName": TABLE, "Key": key}),
            Operation::Query => json!({
                "TableName": TABLE,
                "KeyConditionExpression": "pk = :p",
                "ExpressionAttributeValues": {":p": {"S": pk(partition)}},
                "Limit": 20,
            }),
            Operation::QueryIndex => json!({
                "TableName": TABLE,
                "IndexName": INDEX,
                "KeyConditionExpression": "#o = :o",
                "ExpressionAttributeNames": {"#o": "owner"},
                "ExpressionAttributeValues": {":o": {"S": owner(n % OWNERS)}},
                "Limit": 20,
            }),
            Operation::UpdateItem => json!({
                "TableName": TABLE,
                "Key": key,
                "UpdateExpression": "ADD #c :one",
                "ExpressionAttributeNames": {"#c": "count"},
                "ExpressionAttributeValues": {":one": {"N": "1"}},
            }),
        }
    }
}

fn pk(partition: usize) -> String {
    format!("partition-{partition:03}")
}

fn sk(item: usize) -> String {
    format!("item-{item:04}")
}

fn owner(owner: usize) -> String {
    format!("owner-{owner:03}")
}

/// An item of about 220 bytes as DynamoDB sizes items (names and values;
/// 315 as JSON); `version` tells rewrites apart.
fn item_json(partition: usize, item: usize, version: usize) -> Value {
    json!({
        "pk": {"S": pk(partition)},
        "sk": {"S": sk(item)},
        "owner": {"S": owner((partition * ITEMS_PER_PARTITION + item) % OWNERS)},
        "rank": {"N": (partition * ITEMS_PER_PARTITION + item).to_string()},
        "title": {"S": format!("Item {item} of partition {partition}, version {version}")},
        "body": {"S": "x".repeat(100)},
        "tags": {"SS": ["red", "green", "blue"]},
        "count": {"N": "0"},
    })
}

fn create_table() -> Value {
    json!({
        "TableName": TABLE,
        "AttributeDefinitions": [
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
            {"AttributeName": "owner", "AttributeType": "S"},
            {"AttributeName": "rank", "AttributeType": "N"},
        ],
        "KeySchema": [
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        "GlobalSecondaryIndexes": [{
            "IndexName": INDEX,
            "KeySchema": [
                {"AttributeName": "owner", "KeyType": "HASH"},
                {"AttributeName": "rank", "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "ALL"},
        }],
        "BillingMode": "PAY_PER_REQUEST",
    })
}

/// One of the two servers, stopped when dropped.
struct Endpoint {
    name: &'static str,
    child: Child,
    url: String,
}

impl Endpoint {
    fn start_rave(rave: &Path, dir: &Path) -> anyhow::Result<Endpoint> {
        let port = free_port()?;
        let data = dir.join("rave-data");
        std::fs::create_dir_all(&data)?;
        let log = std::fs::File::create(dir.join("rave-dynamodb-api.log"))?;
        let child = Command::new(rave)
            .arg("dynamodb-api")
            .arg("--data")
            .arg(&data)
            .args(["--addr", &format!("127.0.0.1:{port}")])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .with_context(|| format!("cannot start {} dynamodb-api", rave.display()))?;
        Ok(Endpoint {
            name: "rave",
            child,
            url: format!("http://127.0.0.1:{port}/"),
        })
    }

    fn start_dynamodb_local(jar_dir: &Path, dir: &Path) -> anyhow::Result<Endpoint> {
        let jar = jar_dir.join("DynamoDBLocal.jar");
        if !jar.exists() {
            bail!(
                "{} not found: pass --dynamodb-local DIR (scripts/test.sh installs DynamoDB Local under .tools/dynamodb-local)",
                jar.display()
            );
        }
        let port = free_port()?;
        let log = std::fs::File::create(dir.join("dynamodb-local.log"))?;
        let child = Command::new("java")
            .arg(format!(
                "-Djava.library.path={}",
                jar_dir.join("DynamoDBLocal_lib").display()
            ))
            .arg("-jar")
            .arg(&jar)
            .args(["-inMemory", "-sharedDb", "-port", &port.to_string()])
            .arg("-disableTelemetry")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .context("cannot start DynamoDB Local (java)")?;
        Ok(Endpoint {
            name: "DynamoDB Local",
            child,
            url: format!("http://127.0.0.1:{port}/"),
        })
    }

    /// The process's user + system CPU time so far, every thread.
    fn cpu_time(&self) -> anyhow::Result<Duration> {
        process_cpu_time(self.child.id())
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> anyhow::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

/// Sends DynamoDB JSON requests to one endpoint.
#[derive(Clone)]
struct Client {
    http: reqwest::Client,
    url: String,
}

impl Client {
    async fn send(&self, target: &str, body: Bytes) -> anyhow::Result<(u16, Vec<u8>)> {
        let response = self
            .http
            .post(&self.url)
            .header("content-type", "application/x-amz-json-1.0")
            .header("x-amz-target", target)
            .header("x-amz-date", AMZ_DATE)
            .header("authorization", AUTHORIZATION)
            .body(body)
            .send()
            .await?;
        let status = response.status().as_u16();
        Ok((status, response.bytes().await?.to_vec()))
    }

    /// Sends `body` and fails unless it is answered 200.
    async fn call(&self, target: &str, body: &Value) -> anyhow::Result<Value> {
        let (status, answer) = self.send(target, Bytes::from(body.to_string())).await?;
        if status != 200 {
            bail!(
                "{target} answered {status}: {}",
                String::from_utf8_lossy(&answer)
            );
        }
        Ok(serde_json::from_slice(&answer)?)
    }

    async fn wait_until_up(&self, endpoint: &mut Endpoint) -> anyhow::Result<()> {
        let started = Instant::now();
        loop {
            if self
                .call("DynamoDB_20120810.ListTables", &json!({}))
                .await
                .is_ok()
            {
                return Ok(());
            }
            if let Some(status) = endpoint.child.try_wait()? {
                bail!("{} exited with {status} before answering", endpoint.name);
            }
            if started.elapsed() > Duration::from_secs(60) {
                bail!("{} did not answer within 60 s", endpoint.name);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Creates the table, waits for it and its index, and writes the items.
    async fn fill(&self) -> anyhow::Result<()> {
        self.call("DynamoDB_20120810.CreateTable", &create_table())
            .await?;
        loop {
            let described = self
                .call(
                    "DynamoDB_20120810.DescribeTable",
                    &json!({"TableName": TABLE}),
                )
                .await?;
            let table = &described["Table"];
            let index_active = table["GlobalSecondaryIndexes"]
                .as_array()
                .is_some_and(|i| i.iter().all(|i| i["IndexStatus"] == "ACTIVE"));
            if table["TableStatus"] == "ACTIVE" && index_active {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let items: Vec<Value> = (0..PARTITIONS)
            .flat_map(|p| (0..ITEMS_PER_PARTITION).map(move |i| item_json(p, i, 0)))
            .collect();
        for batch in items.chunks(25) {
            let writes: Vec<Value> = batch
                .iter()
                .map(|item| json!({"PutRequest": {"Item": item}}))
                .collect();
            let answer = self
                .call(
                    "DynamoDB_20120810.BatchWriteItem",
                    &json!({"RequestItems": {TABLE: writes}}),
                )
                .await?;
            if answer["UnprocessedItems"]
                .as_object()
                .is_some_and(|u| !u.is_empty())
            {
                bail!("BatchWriteItem left items unprocessed while filling the table");
            }
        }
        Ok(())
    }

    /// Sends `bodies` round-robin from `connections` tasks for `duration`;
    /// returns how many were answered.
    async fn drive(
        &self,
        operation: Operation,
        bodies: &Arc<Vec<Bytes>>,
        connections: usize,
        duration: Duration,
    ) -> anyhow::Result<u64> {
        let answered = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let mut tasks = Vec::with_capacity(connections);
        for task in 0..connections {
            let (client, bodies, answered, stop) = (
                self.clone(),
                Arc::clone(bodies),
                Arc::clone(&answered),
                Arc::clone(&stop),
            );
            tasks.push(tokio::spawn(async move {
                let mut next = task * bodies.len() / connections.max(1);
                while !stop.load(Ordering::Relaxed) {
                    let body = bodies[next % bodies.len()].clone();
                    next += 1;
                    let (status, answer) = client.send(operation.target(), body).await?;
                    if status != 200 {
                        bail!(
                            "{} answered {status}: {}",
                            operation.target(),
                            String::from_utf8_lossy(&answer)
                        );
                    }
                    answered.fetch_add(1, Ordering::Relaxed);
                }
                Ok(())
            }));
        }
        tokio::time::sleep(duration).await;
        stop.store(true, Ordering::Relaxed);
        for task in tasks {
            task.await??;
        }
        Ok(answered.load(Ordering::Relaxed))
    }
}

/// CPU per request of each round, for one operation on one server.
#[derive(Debug, Default, Clone)]
struct Figures {
    micros_per_request: Vec<f64>,
    requests_per_second: Vec<f64>,
}

impl Figures {
    fn lowest(&self) -> f64 {
        self.micros_per_request
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min)
    }

    fn spread(&self) -> String {
        let all: Vec<String> = self
            .micros_per_request
            .iter()
            .map(|us| format!("{us:.0}"))
            .collect();
        all.join(", ")
    }

    fn best_rate(&self) -> f64 {
        self.requests_per_second.iter().copied().fold(0.0, f64::max)
    }
}

/// The wire rows: per operation, rave's and DynamoDB Local's CPU per
/// request and their ratio.
pub fn run(args: &WireArgs) -> anyhow::Result<Vec<Row>> {
    std::fs::create_dir_all(&args.dir)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(run_async(args))
}

async fn run_async(args: &WireArgs) -> anyhow::Result<Vec<Row>> {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(args.connections)
        .tcp_nodelay(true)
        .build()?;
    let mut endpoints = [
        Endpoint::start_rave(&args.rave, &args.dir)?,
        Endpoint::start_dynamodb_local(&args.dynamodb_local, &args.dir)?,
    ];
    let clients: Vec<Client> = endpoints
        .iter()
        .map(|endpoint| Client {
            http: http.clone(),
            url: endpoint.url.clone(),
        })
        .collect();
    for (client, endpoint) in clients.iter().zip(endpoints.iter_mut()) {
        client.wait_until_up(endpoint).await?;
        client
            .fill()
            .await
            .with_context(|| format!("filling {}", endpoint.name))?;
    }
    let bodies: Vec<(Operation, Arc<Vec<Bytes>>)> = Operation::ALL
        .iter()
        .map(|&operation| {
            let bodies = (0..operation.bodies())
                .map(|n| Bytes::from(operation.body(n).to_string()))
                .collect();
            (operation, Arc::new(bodies))
        })
        .collect();
    let warm_up = Duration::from_secs(args.seconds.max(2));
    let bar = progress_bar(
        (Operation::ALL.len() * endpoints.len() * (args.rounds + 1)) as u64,
        "DynamoDB API mix",
    );
    // DynamoDB Local compiles its hot paths as it goes: every operation
    // once on both servers before anything is counted.
    for (operation, bodies) in &bodies {
        for client in &clients {
            client
                .drive(*operation, bodies, args.connections, warm_up)
                .await?;
            bar.inc(1);
        }
    }
    let mut figures = vec![[Figures::default(), Figures::default()]; bodies.len()];
    for _ in 0..args.rounds {
        for ((operation, bodies), per_server) in bodies.iter().zip(figures.iter_mut()) {
            for ((client, endpoint), figures) in clients
                .iter()
                .zip(endpoints.iter())
                .zip(per_server.iter_mut())
            {
                let cpu_before = endpoint.cpu_time()?;
                let started = Instant::now();
                let answered = client
                    .drive(
                        *operation,
                        bodies,
                        args.connections,
                        Duration::from_secs(args.seconds),
                    )
                    .await?;
                let elapsed = started.elapsed();
                let cpu = endpoint.cpu_time()?.saturating_sub(cpu_before);
                if answered == 0 {
                    bail!("{} answered no {}", endpoint.name, operation.label());
                }
                figures
                    .micros_per_request
                    .push(cpu.as_secs_f64() * 1e6 / answered as f64);
                figures
                    .requests_per_second
                    .push(answered as f64 / elapsed.as_secs_f64());
                bar.inc(1);
            }
        }
    }
    bar.finish_and_clear();
    Ok(rows(&bodies, &figures, args))
}

fn rows(
    bodies: &[(Operation, Arc<Vec<Bytes>>)],
    figures: &[[Figures; 2]],
    args: &WireArgs,
) -> Vec<Row> {
    bodies
        .iter()
        .zip(figures)
        .map(|((operation, _), [rave, local])| {
            let ratio = rave.lowest() / local.lowest();
            let row = Row::new(
                "wire",
                format!(
                    "{}: server CPU per request ({} connections, {} s × {} rounds; lowest, then every round)",
                    operation.label(),
                    args.connections,
                    args.seconds,
                    args.rounds
                ),
                format!(
                    "{:.1} µs ({}; {:.0} requests/s)",
                    rave.lowest(),
                    rave.spread(),
                    rave.best_rate()
                ),
            )
            .peers(format!(
                "DynamoDB Local {:.1} µs ({}; {:.0} requests/s)",
                local.lowest(),
                local.spread(),
                local.best_rate()
            ))
            .ratio(ratio);
            // The floor has no target: it is what the operations' targets
            // are read against.
            if *operation == Operation::ListTables {
                row
            } else {
                row.target("≤ 0.1× DynamoDB Local's CPU per request", ratio <= 0.1)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mix_reads_and_writes_the_items_it_loaded() {
        let get = Operation::GetItem.body(PARTITIONS * ITEMS_PER_PARTITION + 3);
        assert_eq!(get["Key"]["pk"]["S"], pk(3));
        assert_eq!(get["Key"]["sk"]["S"], sk(0));
        let put = Operation::PutItem.body(PARTITIONS + 1);
        assert_eq!(put["Item"]["pk"]["S"], pk(1));
        assert_eq!(put["Item"]["sk"]["S"], sk(1));
        let index = Operation::QueryIndex.body(OWNERS + 7);
        assert_eq!(index["ExpressionAttributeValues"][":o"]["S"], owner(7));
        let item = item_json(1, 2, 0).to_string();
        assert!((280..340).contains(&item.len()), "{} bytes", item.len());
    }

    /// Bodies are sent in turn from each connection's starting point, so
    /// a key's next PutItem is the body `KEYS` further on: it must name
    /// the same item and change it, or it would be timed writing nothing.
    #[test]
    fn every_put_rewrites_its_item_with_a_change() {
        let bodies = Operation::PutItem.bodies();
        for n in 0..bodies {
            let (this, next) = (
                Operation::PutItem.body(n),
                Operation::PutItem.body((n + KEYS) % bodies),
            );
            assert_eq!(this["Item"]["pk"], next["Item"]["pk"], "body {n}");
            assert_eq!(this["Item"]["sk"], next["Item"]["sk"], "body {n}");
            assert_ne!(this["Item"], next["Item"], "body {n}");
        }
    }
}
