//! Review requests on DynamoDB (DynamoDB Local): two servers, each with its
//! own client and scheduler, share one requests table; every due request
//! is sent exactly once, by whichever claims it first.

use std::sync::{Arc, Mutex};

use rave_dynamodb::DynamoStore;
use rave_requests::{
    Catalog, Channel, Links, LookupFuture, ManualClock, Order, RequestMessage, RequestStatus,
    Requests, Schedule, Scheduler, SendFuture,
};

const DAY: u64 = 24 * 60 * 60 * 1000;
const T0: u64 = 1_790_000_000_000;

fn endpoint() -> String {
    std::env::var("RAVE_DYNAMODB_ENDPOINT").unwrap_or_else(|_| {
        panic!(
            "RAVE_DYNAMODB_ENDPOINT is not set: run ./scripts/test.sh, which starts DynamoDB Local"
        )
    })
}

#[derive(Debug, Default)]
struct Outbox(Mutex<Vec<String>>);

impl Channel for Outbox {
    fn send<'a>(&'a self, message: &'a RequestMessage) -> SendFuture<'a> {
        Box::pin(async move {
            self.0.lock().unwrap().push(message.order.id.clone());
            Ok(())
        })
    }
}

#[derive(Debug)]
struct NoNames;

impl Catalog for NoNames {
    fn product<'a>(&'a self, _: &'a str) -> LookupFuture<'a> {
        Box::pin(async { None })
    }
}

/// One server: its own client, its own scheduler, the shared table.
fn server(
    table: &str,
    clock: &ManualClock,
    outbox: Arc<Outbox>,
) -> (Arc<Requests<DynamoStore>>, Scheduler<DynamoStore>) {
    let requests = Arc::new(Requests::new(
        DynamoStore::local(&endpoint()),
        table,
        Schedule::default(),
        Arc::new(clock.clone()),
    ));
    let scheduler = Scheduler::new(
        requests.clone(),
        outbox,
        Arc::new(NoNames),
        Links::new([5; 32], "https://reviews.shop.example"),
    );
    (requests, scheduler)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_servers_on_one_table_send_each_due_request_once() {
    let table = format!("requests-{}", std::process::id());
    let clock = ManualClock::at(T0);
    let outbox = Arc::new(Outbox::default());
    let (requests, first) = server(&table, &clock, outbox.clone());
    let (_, second) = server(&table, &clock, outbox.clone());
    requests.ensure_table().await.unwrap();
    for i in 0..30 {
        requests
            .put_order(Order {
                id: format!("O{i}"),
                email: format!("c{i}@example.com"),
                name: "C".into(),
                locale: "en".into(),
                delivered_at_ms: T0,
                products: vec!["kettle".into()],
            })
            .await
            .unwrap();
    }
    clock.set(T0 + 7 * DAY);
    let (a, b) = tokio::join!(first.run_due(), second.run_due());
    assert_eq!(a.unwrap().sent + b.unwrap().sent, 30);
    let mut sent = outbox.0.lock().unwrap().clone();
    assert_eq!(sent.len(), 30);
    sent.sort();
    sent.dedup();
    assert_eq!(sent.len(), 30, "no request was sent twice");
    let (a, b) = tokio::join!(first.run_due(), second.run_due());
    assert_eq!(a.unwrap().sent + b.unwrap().sent, 0);
    let listed = requests
        .requests(RequestStatus::Sent, 100, None)
        .await
        .unwrap();
    assert_eq!(listed.requests.len(), 30);
}
