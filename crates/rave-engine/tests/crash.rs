//! Durability under `kill -9`.
//!
//! The test runs itself a second time as a child process (the environment
//! variable below tells the copy it is the child). The child writes from
//! many tasks at once — single puts and two-item transactions — and prints
//! a line for every acknowledged write. The parent SIGKILLs it mid-stream,
//! reopens the database and checks that every acknowledged write is there,
//! that no transaction is half-applied, that indexes match the items, and
//! that replaying the stream yields exactly the items.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rave_engine::Engine;
use rave_store::*;

const CHILD_ENV: &str = "RAVE_CRASH_TEST_CHILD_DIR";
const TABLE: &str = "crash";

fn definition() -> TableDefinition {
    TableDefinition {
        name: TABLE.into(),
        key_schema: KeySchema::new(
            KeyAttribute::new("PK", KeyType::S),
            Some(KeyAttribute::new("SK", KeyType::S)),
        ),
        global_secondary_indexes: vec![GlobalSecondaryIndex {
            name: "byWriter".into(),
            key_schema: KeySchema::new(
                KeyAttribute::new("WRITER", KeyType::S),
                Some(KeyAttribute::new("SK", KeyType::S)),
            ),
            projection: Projection::KeysOnly,
        }],
        stream_enabled: true,
        time_to_live_attribute: None,
        local_secondary_indexes: Vec::new(),
    }
}

fn child(dir: &str) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let engine = Engine::open(dir).unwrap();
        engine.create_table(definition()).await.unwrap();
        let mut tasks = Vec::new();
        for writer in 0..16 {
            let engine = engine.clone();
            tasks.push(tokio::spawn(async move {
                for i in 0u64.. {
                    let sk = format!("{i:08}");
                    if i % 3 == 0 {
                        let pair = |side: &str| TransactWriteAction::Put {
                            table: TABLE.into(),
                            item: item! {"PK" => format!("pair{writer}/{sk}"), "SK" => side, "WRITER" => format!("w{writer}")},
                            condition: None,
                        };
                        let input = TransactWriteItemsInput { actions: vec![pair("a"), pair("b")] };
                        engine.transact_write_items(input).await.unwrap();
                        println!("PAIR {writer} {sk}");
                    } else {
                        let item = item! {"PK" => format!("w{writer}"), "SK" => sk.clone(), "WRITER" => format!("w{writer}"), "body" => "x".repeat(200)};
                        let input = PutItemInput { table: TABLE.into(), item, condition: None, return_values: ReturnValues::None };
                        engine.put_item(input).await.unwrap();
                        println!("PUT {writer} {sk}");
                    }
                }
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
    });
}

async fn scan_all(engine: &Engine, index: Option<&str>) -> Vec<Item> {
    let mut items = Vec::new();
    let mut start = None;
    loop {
        let mut scan = ScanInput::new(TABLE);
        scan.index = index.map(str::to_owned);
        scan.exclusive_start_key = start.take();
        let page = engine.scan(scan).await.unwrap();
        items.extend(page.items);
        match page.last_evaluated_key {
            Some(k) => start = Some(k),
            None => return items,
        }
    }
}

#[test]
fn killed_writer_loses_no_acknowledged_write() {
    if let Ok(dir) = std::env::var(CHILD_ENV) {
        child(&dir);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let test_name = "killed_writer_loses_no_acknowledged_write";
    let mut process = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test_name, "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = process.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let mut acked = Vec::new();
    let started = Instant::now();
    while acked.len() < 600 && started.elapsed() < Duration::from_secs(120) {
        match lines.next() {
            Some(Ok(line)) if line.starts_with("PUT") || line.starts_with("PAIR") => {
                acked.push(line)
            }
            Some(_) => {}
            None => panic!(
                "the child exited early; acknowledged so far: {}",
                acked.len()
            ),
        }
    }
    process.kill().unwrap();
    process.wait().unwrap();
    // Acknowledgements already in the pipe were printed before the kill.
    acked.extend(
        lines
            .map_while(Result::ok)
            .filter(|l| l.starts_with("PUT") || l.starts_with("PAIR")),
    );
    assert!(
        acked.len() >= 600,
        "the child wrote too little before the deadline: {}",
        acked.len()
    );

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let engine = Engine::open(dir.path()).unwrap();
        let items = scan_all(&engine, None).await;
        let stored: BTreeSet<(String, String)> = items
            .iter()
            .map(|i| {
                (
                    i["PK"].as_s().unwrap().to_owned(),
                    i["SK"].as_s().unwrap().to_owned(),
                )
            })
            .collect();
        for line in &acked {
            let mut parts = line.split(' ');
            let (kind, writer, sk) = (
                parts.next().unwrap(),
                parts.next().unwrap(),
                parts.next().unwrap(),
            );
            if kind == "PUT" {
                assert!(
                    stored.contains(&(format!("w{writer}"), sk.to_owned())),
                    "lost acknowledged {line}"
                );
            } else {
                for side in ["a", "b"] {
                    assert!(
                        stored.contains(&(format!("pair{writer}/{sk}"), side.to_owned())),
                        "lost acknowledged {line}"
                    );
                }
            }
        }
        // No transaction is half there, acknowledged or not.
        let mut pairs: BTreeMap<&str, usize> = BTreeMap::new();
        for (pk, _) in &stored {
            if pk.starts_with("pair") {
                *pairs.entry(pk).or_default() += 1;
            }
        }
        assert!(
            pairs.values().all(|&n| n == 2),
            "a transaction was half-applied"
        );

        // The index holds exactly one entry per item.
        let index_entries = scan_all(&engine, Some("byWriter")).await;
        assert_eq!(index_entries.len(), items.len());

        // Replaying the whole stream rebuilds exactly the stored items.
        let mut replayed: BTreeMap<(String, String), Item> = BTreeMap::new();
        for record in engine.read_stream(TABLE, 0, usize::MAX).unwrap() {
            let key = (
                record.keys["PK"].as_s().unwrap().to_owned(),
                record.keys["SK"].as_s().unwrap().to_owned(),
            );
            match record.new_image {
                Some(image) => replayed.insert(key, image),
                None => replayed.remove(&key),
            };
        }
        let by_key: BTreeMap<(String, String), Item> = items
            .into_iter()
            .map(|i| {
                (
                    (
                        i["PK"].as_s().unwrap().to_owned(),
                        i["SK"].as_s().unwrap().to_owned(),
                    ),
                    i,
                )
            })
            .collect();
        assert_eq!(replayed, by_key);
    });
}
