//! Faults an operator meets, injected into the real `rave serve`: the data
//! directory's disk fills up, and the process is killed with SIGKILL twenty
//! times under mixed writes. Each test prints its figures (run with
//! `--nocapture` to see them).
//!
//! The full disk is an 8 MiB tmpfs where the test can mount one, else
//! `RLIMIT_FSIZE` set with `prlimit` (SIGXFSZ ignored, so a write past it
//! fails with EFBIG). In CI a fault that cannot be injected fails the test
//! rather than skipping it. The twenty SIGKILLs come under mixed writes
//! from 16 clients, checked against a model of acknowledged state, then
//! `rave reconcile`.
#![cfg(target_os = "linux")]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{RAVE, Server, readiness, serve, serve_args};
use reqwest::StatusCode;
use serde_json::{Value, json};

const ADMIN_TOKEN: &str = "faults-admin-token";

fn in_ci() -> bool {
    std::env::var_os("CI").is_some()
}

/// How the test makes the disk of the data directory full.
enum SmallDisk {
    /// An 8 MiB tmpfs mounted over `mount`, with `ballast` taking part of
    /// it; deleting the ballast frees space.
    Tmpfs { mount: PathBuf, ballast: PathBuf },
    /// RLIMIT_FSIZE on the server (SIGXFSZ ignored, so a write past the
    /// limit fails with EFBIG); raising it with `prlimit` frees space.
    FileSizeLimit { bytes: u64 },
}

impl SmallDisk {
    fn tmpfs(dir: &Path) -> Option<SmallDisk> {
        let mount = dir.join("mnt");
        std::fs::create_dir_all(&mount).ok()?;
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=8m", "tmpfs"])
            .arg(&mount)
            .output()
            .ok()?;
        if !mounted.status.success() {
            return None;
        }
        let ballast = mount.join("ballast");
        std::fs::write(&ballast, vec![0xA5; 2 << 20]).expect("write the ballast file");
        Some(SmallDisk::Tmpfs { mount, ballast })
    }

    fn file_size_limit() -> Option<SmallDisk> {
        let found = Command::new("prlimit").arg("--version").output().ok()?;
        found
            .status
            .success()
            .then_some(SmallDisk::FileSizeLimit { bytes: 8 << 20 })
    }

    /// A tmpfs where one can be mounted, else RLIMIT_FSIZE. `None` only
    /// outside CI; in CI a fault that cannot be injected fails the test.
    fn best(dir: &Path) -> Option<SmallDisk> {
        let disk = SmallDisk::tmpfs(dir).or_else(SmallDisk::file_size_limit);
        assert!(
            disk.is_some() || !in_ci(),
            "CI is set but neither a tmpfs mount nor prlimit (RLIMIT_FSIZE) is available"
        );
        disk
    }

    fn name(&self) -> &'static str {
        match self {
            SmallDisk::Tmpfs { .. } => "tmpfs of 8 MiB",
            SmallDisk::FileSizeLimit { .. } => "RLIMIT_FSIZE of 8 MiB",
        }
    }

    fn data_dir(&self, dir: &Path) -> PathBuf {
        match self {
            SmallDisk::Tmpfs { mount, .. } => mount.join("data"),
            SmallDisk::FileSizeLimit { .. } => dir.join("data"),
        }
    }

    fn serve(&self, data: &Path) -> Server {
        match self {
            SmallDisk::Tmpfs { .. } => serve(data, &[]),
            SmallDisk::FileSizeLimit { bytes } => {
                // An ignored signal stays ignored across exec.
                let mut command = Command::new("sh");
                command
                    .args(["-c", "trap '' XFSZ; exec \"$@\"", "sh", "prlimit"])
                    // Only the soft limit: raising it later needs no privilege.
                    .arg(format!("--fsize={bytes}:unlimited"))
                    .args(["--", RAVE])
                    .args(serve_args(data, &[]));
                Server::start(command)
            }
        }
    }

    fn free_space(&self, server: &Server) {
        match self {
            SmallDisk::Tmpfs { ballast, .. } => {
                std::fs::remove_file(ballast).expect("delete the ballast file")
            }
            SmallDisk::FileSizeLimit { .. } => {
                let raised = Command::new("prlimit")
                    .args(["--fsize=unlimited:unlimited", "--pid"])
                    .arg(server.child.id().to_string())
                    .status()
                    .expect("run prlimit");
                assert!(raised.success(), "prlimit could not raise the limit");
            }
        }
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        if let SmallDisk::Tmpfs { mount, .. } = self {
            let _ = Command::new("umount").arg("-l").arg(mount).status();
        }
    }
}

fn comment_body(i: usize) -> Value {
    // Distinct, and large, so that the disk fills in a few hundred writes.
    let body = format!("comment {i} ") + &"lorem ipsum dolor sit amet ".repeat(150);
    json!({"author": format!("filler{}", i % 7), "language": "en", "rating": 1 + i % 5, "body": body})
}

/// Posts comment `i`: its id when acknowledged, else the refusal.
async fn post(client: &reqwest::Client, base: &str, i: usize) -> Result<String, reqwest::Response> {
    let response = client
        .post(format!("{base}/v1/products/full/comments"))
        .json(&comment_body(i))
        .send()
        .await
        .expect("the server answers");
    if response.status() != StatusCode::CREATED {
        return Err(response);
    }
    let created: Value = response.json().await.expect("a comment");
    Ok(created["id"].as_str().expect("an id").to_owned())
}

/// Every acknowledged comment reads back with the body it was posted with.
async fn verify_acknowledged(
    client: &reqwest::Client,
    base: &str,
    acknowledged: &BTreeMap<String, usize>,
) -> usize {
    for (id, i) in acknowledged {
        let response = client
            .get(format!("{base}/v1/comments/{id}"))
            .send()
            .await
            .expect("the server answers");
        assert_eq!(response.status(), StatusCode::OK, "comment {id} is gone");
        let comment: Value = response.json().await.expect("a comment");
        assert_eq!(comment["body"], comment_body(*i)["body"], "comment {id}");
    }
    acknowledged.len()
}

async fn assert_refusal_is_a_problem(response: reqwest::Response) {
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    let headers = response.headers().clone();
    assert!(
        headers.contains_key("retry-after"),
        "a 503 without Retry-After"
    );
    assert_eq!(
        headers.get("content-type").and_then(|v| v.to_str().ok()),
        Some("application/problem+json")
    );
    let problem: Value = response.json().await.expect("a problem document");
    assert_eq!(problem["status"], 503);
    assert!(
        problem["title"].is_string() && problem["detail"].is_string(),
        "{problem}"
    );
}

/// The readiness condition called `name`.
fn condition<'a>(readiness: &'a Value, name: &str) -> &'a Value {
    readiness["conditions"]
        .as_array()
        .and_then(|all| all.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("no condition {name} in {readiness}"))
}

/// Fills the disk through the API, then checks the contract while it is
/// full and after space is freed.
async fn fill_refuse_and_recover(disk: SmallDisk, dir: &Path) {
    let data = disk.data_dir(dir);
    let mut server = disk.serve(&data);
    let client = reqwest::Client::new();
    readiness(&server.base, StatusCode::OK, Duration::ZERO).await;
    let mut acknowledged = BTreeMap::new();
    let mut next = 0;
    let first_refusal = loop {
        assert!(next < 20_000, "the disk never filled up");
        match post(&client, &server.base, next).await {
            Ok(id) => acknowledged.insert(id, next),
            Err(refusal) => break refusal,
        };
        next += 1;
    };
    let filled_with = acknowledged.len();
    assert!(filled_with > 0, "the first write was refused");
    assert_refusal_is_a_problem(first_refusal).await;
    // Not ready while the store refuses writes, and liveness still says ok.
    let not_ready = readiness(
        &server.base,
        StatusCode::SERVICE_UNAVAILABLE,
        Duration::ZERO,
    )
    .await;
    let writes = condition(&not_ready, "writes");
    assert_eq!(writes["ready"], false, "{not_ready}");
    assert!(
        writes["detail"]
            .as_str()
            .is_some_and(|d| d.contains("refuses writes")),
        "{not_ready}"
    );
    let health = client
        .get(format!("{}/healthz", server.base))
        .send()
        .await
        .expect("the server answers");
    assert_eq!(health.status(), StatusCode::OK);

    // More writes while full: refused (a small one may still fit in a page
    // the database has free; it must then be readable like any other).
    let mut refused = 1;
    for _ in 0..4 {
        next += 1;
        match post(&client, &server.base, next).await {
            Ok(id) => {
                acknowledged.insert(id, next);
            }
            Err(refusal) => {
                refused += 1;
                assert_refusal_is_a_problem(refusal).await;
            }
        }
    }

    // Reads keep answering on the full disk.
    let reads_while_full = verify_acknowledged(&client, &server.base, &acknowledged).await;
    let listing = client
        .get(format!(
            "{}/v1/products/full/comments?limit=100",
            server.base
        ))
        .send()
        .await
        .expect("the server answers");
    assert_eq!(listing.status(), StatusCode::OK);

    // Space comes back: the server finds out by itself, with no write
    // from outside, and is ready again.
    disk.free_space(&server);
    let freed = Instant::now();
    readiness(&server.base, StatusCode::OK, Duration::from_secs(30)).await;
    let ready_after = freed.elapsed();
    // And writes succeed again, without a restart.
    loop {
        next += 1;
        match post(&client, &server.base, next).await {
            Ok(id) => {
                acknowledged.insert(id, next);
                break;
            }
            Err(refusal) => {
                assert_refusal_is_a_problem(refusal).await;
                assert!(
                    freed.elapsed() < Duration::from_secs(30),
                    "writes still refused 30 s after space was freed"
                );
            }
        }
    }
    let recovered_after = freed.elapsed();
    for _ in 0..10 {
        next += 1;
        let id = post(&client, &server.base, next)
            .await
            .unwrap_or_else(|r| panic!("refused after recovery: {}", r.status()));
        acknowledged.insert(id, next);
    }
    verify_acknowledged(&client, &server.base, &acknowledged).await;

    // And all of it is durable.
    server.kill();
    let server = serve(&data, &[]);
    let verified = verify_acknowledged(&client, &server.base, &acknowledged).await;
    println!(
        "disk full ({}): {filled_with} writes acknowledged before the disk filled; \
         {refused} of 5 writes refused with 503 while full; {reads_while_full} reads served \
         while full; ready again {ready_after:?} and writes accepted again \
         {recovered_after:?} after space was freed, without a restart; {verified} \
         acknowledged writes verified after a restart",
        disk.name()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_refuses_writes_keeps_reads_and_recovers_without_restart() {
    let dir = tempfile::tempdir().expect("a directory");
    let Some(disk) = SmallDisk::best(dir.path()) else {
        eprintln!("SKIPPED: no tmpfs mount and no prlimit here; the disk cannot be filled");
        return;
    };
    fill_refuse_and_recover(disk, dir.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_size_limit_refuses_writes_and_recovers_without_restart() {
    let dir = tempfile::tempdir().expect("a directory");
    let disk = SmallDisk::file_size_limit();
    assert!(
        disk.is_some() || !in_ci(),
        "CI is set but prlimit (RLIMIT_FSIZE) is not available"
    );
    let Some(disk) = disk else {
        eprintln!("SKIPPED: prlimit is not installed");
        return;
    };
    fill_refuse_and_recover(disk, dir.path()).await;
}

/// SIGKILLs of `rave serve` in [`sigkill_twenty_times_under_mixed_writes`].
const KILLS: usize = 20;
/// Concurrent clients, each writing only the comments it created, so that
/// the order of its acknowledged writes is the order they were made in.
const CLIENTS: usize = 16;

/// splitmix64: enough randomness for choosing operations and moments.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    }
}

/// What the server holds for one comment, as far as these writes decide.
#[derive(Debug, Clone, PartialEq)]
enum Stored {
    Absent,
    Present {
        rating: i64,
        body: String,
        status: String,
    },
}

impl Stored {
    fn of(comment: &Value) -> Stored {
        Stored::Present {
            rating: comment["rating"].as_i64().expect("a rating"),
            body: comment["body"].as_str().expect("a body").to_owned(),
            status: comment["status"].as_str().expect("a status").to_owned(),
        }
    }
}

/// One comment of the model: its last acknowledged state, and the state a
/// write whose answer never arrived would have left (either may be found).
struct Tracked {
    id: String,
    acknowledged: Stored,
    unacknowledged: Option<Stored>,
}

#[derive(Default, Debug)]
struct Counts {
    acknowledged: u64,
    unacknowledged: u64,
    unacknowledged_applied: u64,
    lost_creates_without_key: u64,
    replayed_keys: u64,
    states_checked: u64,
}

/// One client's model of what it wrote.
struct Client {
    number: usize,
    rng: Rng,
    comments: Vec<Tracked>,
    /// A create with an Idempotency-Key whose answer never arrived; sent
    /// again after the restart, it must answer 201 exactly as a first try.
    lost_create: Option<(String, Value)>,
    created: u64,
    counts: Counts,
}

/// Sends a request: `None` when the answer never arrived (the server died).
async fn answer(request: reqwest::RequestBuilder) -> Option<(StatusCode, Value)> {
    let response = request.send().await.ok()?;
    let status = response.status();
    let bytes = response.bytes().await.ok()?;
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes).expect("a JSON answer")
    };
    Some((status, body))
}

impl Client {
    fn new(number: usize, seed: u64) -> Client {
        Client {
            number,
            rng: Rng(seed ^ (number as u64).wrapping_mul(0x5851_F42D_4C95_7F2D)),
            comments: Vec::new(),
            lost_create: None,
            created: 0,
            counts: Counts::default(),
        }
    }

    /// After a restart: every comment holds its last acknowledged state or
    /// the one its unanswered write would have left; a lost create with a
    /// key is sent again.
    async fn verify(&mut self, http: &reqwest::Client, base: &str) {
        for comment in &mut self.comments {
            let (status, body) = answer(http.get(format!("{base}/v1/comments/{}", comment.id)))
                .await
                .expect("the restarted server answers");
            let found = match status {
                StatusCode::OK => Stored::of(&body),
                StatusCode::NOT_FOUND => Stored::Absent,
                other => panic!("GET {} answered {other}: {body}", comment.id),
            };
            let unacknowledged = comment.unacknowledged.take();
            if found != comment.acknowledged {
                assert_eq!(
                    Some(&found),
                    unacknowledged.as_ref(),
                    "comment {} lost its acknowledged state {:?}",
                    comment.id,
                    comment.acknowledged
                );
                self.counts.unacknowledged_applied += 1;
            }
            comment.acknowledged = found;
            self.counts.states_checked += 1;
        }
        if let Some((key, body)) = self.lost_create.take() {
            let (status, created) = answer(
                http.post(format!("{base}/v1/products/{}/comments", self.product()))
                    .header("Idempotency-Key", &key)
                    .json(&body),
            )
            .await
            .expect("the restarted server answers");
            assert_eq!(status, StatusCode::CREATED, "replay of {key}: {created}");
            self.track_created(&created);
            self.counts.replayed_keys += 1;
        }
    }

    /// Clients share products, so that statistics items see concurrent
    /// changes from several clients.
    fn product(&self) -> String {
        format!("p{}", self.number % 5)
    }

    fn track_created(&mut self, created: &Value) {
        self.comments.push(Tracked {
            id: created["id"].as_str().expect("an id").to_owned(),
            acknowledged: Stored::of(created),
            unacknowledged: None,
        });
    }

    /// Writes until one answer does not arrive (the server was killed).
    async fn write_until_lost(&mut self, http: &reqwest::Client, base: &str) {
        loop {
            let alive: Vec<usize> = (0..self.comments.len())
                .filter(|&i| self.comments[i].acknowledged != Stored::Absent)
                .collect();
            let roll = self.rng.below(100);
            let answered = if alive.len() < 2 || roll < 30 {
                self.create(http, base).await
            } else {
                let index = alive[self.rng.below(alive.len() as u64) as usize];
                self.change(http, base, index, roll).await
            };
            if !answered {
                self.counts.unacknowledged += 1;
                return;
            }
            self.counts.acknowledged += 1;
        }
    }

    async fn create(&mut self, http: &reqwest::Client, base: &str) -> bool {
        self.created += 1;
        let body = json!({
            "author": format!("client{}", self.number),
            "language": if self.created.is_multiple_of(3) { "de" } else { "en" },
            "rating": 1 + self.rng.below(5),
            "body": format!("client {} comment {}", self.number, self.created),
        });
        let key = (self.rng.below(2) == 0).then(|| format!("c{}-{}", self.number, self.created));
        let mut request = http
            .post(format!("{base}/v1/products/{}/comments", self.product()))
            .json(&body);
        if let Some(key) = &key {
            request = request.header("Idempotency-Key", key);
        }
        match answer(request).await {
            Some((StatusCode::CREATED, created)) => {
                self.track_created(&created);
                true
            }
            Some((status, problem)) => panic!("POST answered {status}: {problem}"),
            None => {
                match key {
                    Some(key) => self.lost_create = Some((key, body)),
                    None => self.counts.lost_creates_without_key += 1,
                }
                false
            }
        }
    }

    /// PATCH, flag, approve or DELETE of comment `index`, which exists.
    async fn change(
        &mut self,
        http: &reqwest::Client,
        base: &str,
        index: usize,
        roll: u64,
    ) -> bool {
        let Stored::Present {
            status: current_status,
            ..
        } = self.comments[index].acknowledged.clone()
        else {
            unreachable!("only existing comments are changed")
        };
        let url = format!("{base}/v1/comments/{}", self.comments[index].id);
        let admin = format!("Bearer {ADMIN_TOKEN}");
        let (request, expected) = if roll < 55 {
            let rating = 1 + self.rng.below(5) as i64;
            let body = format!("client {} edit {}", self.number, self.rng.below(1 << 30));
            let request = http
                .patch(&url)
                .header("Authorization", &admin)
                .json(&json!({"rating": rating, "body": body}));
            let expected = Stored::Present {
                rating,
                body,
                status: current_status,
            };
            (request, expected)
        } else if roll < 90 && current_status == "flagged" {
            let request = http
                .post(format!("{url}/approve"))
                .header("Authorization", &admin);
            (
                request,
                with_status(&self.comments[index].acknowledged, "published"),
            )
        } else if roll < 90 {
            let request = http.post(format!("{url}/flag"));
            (
                request,
                with_status(&self.comments[index].acknowledged, "flagged"),
            )
        } else {
            let request = http.delete(&url).header("Authorization", &admin);
            (request, Stored::Absent)
        };
        let comment = &mut self.comments[index];
        match answer(request).await {
            Some((status, body)) if status.is_success() => {
                let found = if status == StatusCode::NO_CONTENT {
                    Stored::Absent
                } else {
                    Stored::of(&body)
                };
                assert_eq!(found, expected, "the answer for comment {}", comment.id);
                comment.acknowledged = found;
                true
            }
            Some((status, problem)) => {
                panic!("a write of {} answered {status}: {problem}", comment.id)
            }
            None => {
                comment.unacknowledged = Some(expected);
                false
            }
        }
    }
}

fn with_status(stored: &Stored, new_status: &str) -> Stored {
    match stored {
        Stored::Present { rating, body, .. } => Stored::Present {
            rating: *rating,
            body: body.clone(),
            status: new_status.to_owned(),
        },
        Stored::Absent => Stored::Absent,
    }
}

/// Runs `rave <args>` over `data` and returns its standard output.
fn rave_over(data: &Path, args: &[&str]) -> String {
    let out = Command::new(RAVE)
        .args(args)
        .arg("--data")
        .arg(data)
        .output()
        .expect("run rave");
    assert!(
        out.status.success(),
        "rave {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_twenty_times_under_mixed_writes() {
    let dir = tempfile::tempdir().expect("a directory");
    let data = dir.path().join("data");
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    println!("sigkill: seed {seed}");
    let mut moments = Rng(seed);
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("an HTTP client");
    let mut clients: Vec<Client> = (0..CLIENTS).map(|n| Client::new(n, seed)).collect();
    let mut kills = 0;
    let started = Instant::now();
    loop {
        let mut server = serve(&data, &["--admin-token", ADMIN_TOKEN]);
        let base = server.base.clone();
        clients = run_each(clients, |mut client| {
            let (http, base) = (http.clone(), base.clone());
            async move {
                client.verify(&http, &base).await;
                client
            }
        })
        .await;
        if kills == KILLS {
            break;
        }
        let writers_http = http.clone();
        let writing = tokio::spawn(run_each(clients, move |mut client| {
            let (http, base) = (writers_http.clone(), base.clone());
            async move {
                client.write_until_lost(&http, &base).await;
                client
            }
        }));
        tokio::time::sleep(Duration::from_millis(100 + moments.below(500))).await;
        server.kill();
        kills += 1;
        clients = writing.await.expect("the writers");
    }

    let mut total = Counts::default();
    for client in &clients {
        let c = &client.counts;
        total.acknowledged += c.acknowledged;
        total.unacknowledged += c.unacknowledged;
        total.unacknowledged_applied += c.unacknowledged_applied;
        total.lost_creates_without_key += c.lost_creates_without_key;
        total.replayed_keys += c.replayed_keys;
        total.states_checked += c.states_checked;
    }
    // The last server is killed too (dropped); the aggregator catches up
    // offline, then every statistic is recounted from the comments.
    rave_over(&data, &["aggregate", "--until-caught-up"]);
    let report = rave_over(&data, &["reconcile"]);
    let drifted: u64 = report
        .rsplit_once(": ")
        .and_then(|(_, tail)| tail.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("unexpected reconcile report {report:?}"));
    println!(
        "sigkill: {kills} kills in {:?}; {} acknowledged writes, {} acknowledged states checked \
         after restarts; {} unacknowledged writes ({} found applied, {} creates without a key \
         unknown, {} keyed creates replayed as 201); reconcile: {drifted} items drifted",
        started.elapsed(),
        total.acknowledged,
        total.states_checked,
        total.unacknowledged,
        total.unacknowledged_applied,
        total.lost_creates_without_key,
        total.replayed_keys,
    );
    assert_eq!(kills, KILLS);
    assert!(
        total.acknowledged > 0 && total.unacknowledged > 0,
        "{total:?}"
    );
    assert_eq!(drifted, 0, "{report}");
}

/// Runs `work` on every client concurrently and gives the clients back.
async fn run_each<F, Fut>(clients: Vec<Client>, work: F) -> Vec<Client>
where
    F: Fn(Client) -> Fut,
    Fut: std::future::Future<Output = Client> + Send + 'static,
{
    let tasks: Vec<_> = clients.into_iter().map(|c| tokio::spawn(work(c))).collect();
    let mut clients = Vec::with_capacity(tasks.len());
    for task in tasks {
        clients.push(task.await.expect("a client task"));
    }
    clients
}
