//! The schedule over the embedded engine, with a clock moved by hand and a
//! channel that records what it is asked to send.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rave_engine::Engine;
use rave_requests::{
    Catalog, Channel, Links, LookupFuture, ManualClock, Order, OrderPut, Pass, ProductLine,
    RequestKind, RequestMessage, RequestStatus, Requests, RequestsError, Schedule, Scheduler,
    SendError, SendFuture,
};

const DAY: u64 = 24 * 60 * 60 * 1000;
const T0: u64 = 1_790_000_000_000;

/// Records every message; refuses while `refuse` is set.
#[derive(Debug, Default)]
struct Recorder {
    sent: Mutex<Vec<RequestMessage>>,
    refuse: Mutex<Option<String>>,
}

impl Channel for Recorder {
    fn send<'a>(&'a self, message: &'a RequestMessage) -> SendFuture<'a> {
        Box::pin(async move {
            if let Some(reply) = self.refuse.lock().unwrap().clone() {
                return Err(SendError(reply));
            }
            self.sent.lock().unwrap().push(message.clone());
            Ok(())
        })
    }
}

impl Recorder {
    fn sent(&self) -> Vec<(String, RequestKind)> {
        self.sent
            .lock()
            .unwrap()
            .iter()
            .map(|m| (m.order.id.clone(), m.kind))
            .collect()
    }
}

#[derive(Debug)]
struct Names;

impl Catalog for Names {
    fn product<'a>(&'a self, id: &'a str) -> LookupFuture<'a> {
        Box::pin(async move {
            Some(ProductLine {
                id: id.to_owned(),
                name: format!("The {id}"),
                image_url: None,
            })
        })
    }
}

struct Fixture {
    clock: ManualClock,
    requests: Arc<Requests<Engine>>,
    channel: Arc<Recorder>,
    scheduler: Scheduler<Engine>,
    _dir: tempfile::TempDir,
}

async fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path()).unwrap();
    let clock = ManualClock::at(T0);
    let requests = Arc::new(Requests::new(
        engine,
        "rave",
        Schedule::default(),
        Arc::new(clock.clone()),
    ));
    requests.ensure_table().await.unwrap();
    let channel = Arc::new(Recorder::default());
    let scheduler = scheduler(&requests, channel.clone());
    Fixture {
        clock,
        requests,
        channel,
        scheduler,
        _dir: dir,
    }
}

fn scheduler(requests: &Arc<Requests<Engine>>, channel: Arc<dyn Channel>) -> Scheduler<Engine> {
    Scheduler::new(
        requests.clone(),
        channel,
        Arc::new(Names),
        Links::new([9; 32], "https://reviews.example"),
    )
}

fn order(id: &str, delivered_at_ms: u64) -> Order {
    Order {
        id: id.into(),
        email: format!("{id}@example.com"),
        name: "Anna".into(),
        locale: "fr-CA".into(),
        delivered_at_ms,
        products: vec!["lamp".into(), "cable".into()],
    }
}

async fn status(requests: &Requests<Engine>, status: RequestStatus) -> Vec<(String, RequestKind)> {
    requests
        .requests(status, 100, None)
        .await
        .unwrap()
        .requests
        .into_iter()
        .map(|r| (r.order_id, r.kind))
        .collect()
}

#[tokio::test]
async fn a_request_and_one_reminder_go_out_at_their_times() {
    let f = fixture().await;
    assert_eq!(
        f.requests.put_order(order("A", T0)).await.unwrap(),
        OrderPut::Created
    );
    assert_eq!(
        f.requests.put_order(order("A", T0)).await.unwrap(),
        OrderPut::Unchanged
    );

    f.clock.set(T0 + 7 * DAY - 1);
    assert_eq!(f.scheduler.run_due().await.unwrap(), Pass::default());
    f.clock.set(T0 + 7 * DAY);
    assert_eq!(f.scheduler.run_due().await.unwrap().sent, 1);
    assert_eq!(f.scheduler.run_due().await.unwrap(), Pass::default());
    let first = f.channel.sent.lock().unwrap()[0].clone();
    assert_eq!(first.kind, RequestKind::First);
    assert_eq!(first.order.language(), "fr");
    assert_eq!(first.products.len(), 2);
    assert!(
        first
            .review_url
            .starts_with("https://reviews.example/review/")
    );

    f.clock.set(T0 + 14 * DAY);
    assert_eq!(f.scheduler.run_due().await.unwrap().sent, 1);
    assert_eq!(
        f.channel.sent(),
        [
            ("A".into(), RequestKind::First),
            ("A".into(), RequestKind::Reminder)
        ]
    );
    assert_eq!(status(&f.requests, RequestStatus::Sent).await.len(), 2);
    let figures = f.requests.figures().await.unwrap();
    assert_eq!(figures.len(), 2);
    assert!(figures.iter().all(|p| p.requested == 1 && p.reviewed == 0));
}

#[tokio::test]
async fn nothing_goes_out_after_a_review_an_opt_out_or_a_cancellation() {
    let f = fixture().await;
    for id in ["reviewed", "unsubscribed", "cancelled", "blocked"] {
        f.requests.put_order(order(id, T0)).await.unwrap();
    }
    f.clock.set(T0 + 7 * DAY);
    assert_eq!(f.scheduler.run_due().await.unwrap().sent, 4);

    f.requests
        .record_review("reviewed", "lamp", "anna", "c1")
        .await
        .unwrap();
    f.requests.unsubscribe("unsubscribed").await.unwrap();
    f.requests.cancel_order("cancelled").await.unwrap();
    f.requests.opt_out("BLOCKED@example.com").await.unwrap();
    assert!(matches!(
        f.requests.cancel_order("cancelled").await,
        Err(RequestsError::NotFound("order"))
    ));

    f.clock.set(T0 + 14 * DAY);
    let pass = f.scheduler.run_due().await.unwrap();
    assert_eq!((pass.sent, pass.skipped), (0, 3));
    assert_eq!(f.channel.sent().len(), 4);
    let skipped = status(&f.requests, RequestStatus::Skipped).await;
    assert_eq!(skipped.len(), 3);
    assert!(f.requests.order("cancelled").await.unwrap().is_none());
    let reviewed = f.requests.figures().await.unwrap();
    assert!(
        reviewed
            .iter()
            .any(|p| p.product == "lamp" && p.reviewed == 1)
    );
}

#[tokio::test]
async fn a_new_delivery_date_reschedules_what_is_not_sent() {
    let f = fixture().await;
    f.requests.put_order(order("A", T0)).await.unwrap();
    let later = order("A", T0 + DAY / 2);
    assert_eq!(
        f.requests.put_order(later).await.unwrap(),
        OrderPut::Rescheduled
    );
    f.clock.set(T0 + 7 * DAY);
    assert_eq!(f.scheduler.run_due().await.unwrap(), Pass::default());
    f.clock.set(T0 + 7 * DAY + DAY / 2);
    assert_eq!(f.scheduler.run_due().await.unwrap().sent, 1);
}

#[tokio::test]
async fn a_refusing_smtp_server_gets_every_request_once_it_recovers() {
    let f = fixture().await;
    f.requests.put_order(order("A", T0)).await.unwrap();
    f.requests.put_order(order("B", T0)).await.unwrap();
    *f.channel.refuse.lock().unwrap() = Some("451 4.3.0 try again later".into());
    f.clock.set(T0 + 7 * DAY);
    assert_eq!(f.scheduler.run_due().await.unwrap().retried, 2);
    // Not again before the backoff ends.
    f.clock.advance(30_000);
    assert_eq!(f.scheduler.run_due().await.unwrap(), Pass::default());
    f.clock.advance(30_000);
    assert_eq!(f.scheduler.run_due().await.unwrap().retried, 2);
    let waiting = f
        .requests
        .requests(RequestStatus::Scheduled, 10, None)
        .await
        .unwrap();
    assert!(
        waiting.requests.iter().any(
            |r| r.attempts == 2 && r.last_error.as_deref() == Some("451 4.3.0 try again later")
        )
    );

    *f.channel.refuse.lock().unwrap() = None;
    f.clock.advance(3 * 60_000);
    assert_eq!(f.scheduler.run_due().await.unwrap().sent, 2);
    assert_eq!(f.channel.sent().len(), 2);
}

#[tokio::test]
async fn a_request_refused_for_a_day_fails_with_the_servers_reply() {
    let f = fixture().await;
    f.requests.put_order(order("A", T0)).await.unwrap();
    *f.channel.refuse.lock().unwrap() = Some("550 5.1.1 no such user".into());
    f.clock.set(T0 + 7 * DAY);
    let mut failed = 0;
    for _ in 0..60 {
        failed += f.scheduler.run_due().await.unwrap().failed;
        f.clock.advance(60 * 60_000);
    }
    assert_eq!(failed, 1);
    let page = f
        .requests
        .requests(RequestStatus::Failed, 10, None)
        .await
        .unwrap();
    assert_eq!(page.requests.len(), 1);
    assert_eq!(page.requests[0].kind, RequestKind::First);
    assert_eq!(
        page.requests[0].last_error.as_deref(),
        Some("550 5.1.1 no such user")
    );
    assert!(f.channel.sent().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_schedulers_send_each_due_request_once() {
    let f = fixture().await;
    for i in 0..40 {
        f.requests
            .put_order(order(&format!("O{i}"), T0))
            .await
            .unwrap();
    }
    f.clock.set(T0 + 7 * DAY);
    let other = scheduler(&f.requests, f.channel.clone());
    let (a, b) = tokio::join!(f.scheduler.run_due(), other.run_due());
    assert_eq!(a.unwrap().sent + b.unwrap().sent, 40);
    let mut sent = f.channel.sent();
    sent.sort();
    sent.dedup();
    assert_eq!(sent.len(), 40);
    assert_eq!(f.channel.sent().len(), 40);
}

/// Accepts each message, then hangs before the outcome is recorded: a
/// server killed in the middle of its pass.
#[derive(Debug, Default)]
struct HangsAfterAccepting(Mutex<Vec<String>>);

impl Channel for HangsAfterAccepting {
    fn send<'a>(&'a self, message: &'a RequestMessage) -> SendFuture<'a> {
        Box::pin(async move {
            self.0.lock().unwrap().push(message.order.id.clone());
            std::future::pending::<()>().await;
            Ok(())
        })
    }
}

#[tokio::test]
async fn a_server_killed_while_sending_loses_nothing() {
    let f = fixture().await;
    for i in 0..5 {
        f.requests
            .put_order(order(&format!("O{i}"), T0))
            .await
            .unwrap();
    }
    f.clock.set(T0 + 7 * DAY);
    let accepted = Arc::new(HangsAfterAccepting::default());
    let dying = scheduler(&f.requests, accepted.clone());
    let killed = tokio::time::timeout(Duration::from_millis(200), dying.run_due()).await;
    assert!(killed.is_err(), "the pass hangs in its first send");
    assert_eq!(accepted.0.lock().unwrap().len(), 1);

    // Another server: the claimed one waits for its lease, the rest go now.
    assert_eq!(f.scheduler.run_due().await.unwrap().sent, 4);
    f.clock.advance(5 * 60_000);
    assert_eq!(f.scheduler.run_due().await.unwrap().sent, 1);
    let mut delivered = f.channel.sent();
    delivered.sort();
    assert_eq!(
        delivered.len(),
        5,
        "every request once more only where the dead server's SMTP accepted"
    );
    let duplicate = &accepted.0.lock().unwrap()[0];
    assert!(delivered.iter().any(|(id, _)| id == duplicate));
}

#[tokio::test]
async fn erasing_an_author_erases_their_orders_and_addresses() {
    let f = fixture().await;
    f.requests.put_order(order("A", T0)).await.unwrap();
    f.requests.put_order(order("B", T0)).await.unwrap();
    f.requests
        .record_review("A", "lamp", "anna", "c1")
        .await
        .unwrap();
    assert_eq!(f.requests.erase_author("anna").await.unwrap(), 1);
    assert!(f.requests.order("A").await.unwrap().is_none());
    assert!(f.requests.order("B").await.unwrap().is_some());
    assert_eq!(f.requests.erase_author("anna").await.unwrap(), 0);
    f.clock.set(T0 + 7 * DAY);
    assert_eq!(f.scheduler.run_due().await.unwrap().sent, 1);
}

#[tokio::test]
async fn bad_orders_store_nothing() {
    let f = fixture().await;
    let mut bad = order("A", T0);
    bad.email = "not-an-address".into();
    assert!(matches!(
        f.requests.put_order(bad).await,
        Err(RequestsError::Invalid { field: "email", .. })
    ));
    let far = order("B", T0 + 30 * DAY);
    assert!(matches!(
        f.requests.put_order(far).await,
        Err(RequestsError::Invalid {
            field: "delivered_at",
            ..
        })
    ));
    assert!(f.requests.order("A").await.unwrap().is_none());
    assert!(
        status(&f.requests, RequestStatus::Scheduled)
            .await
            .is_empty()
    );
}
