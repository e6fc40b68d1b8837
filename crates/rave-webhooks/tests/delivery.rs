//! Deliveries on the embedded engine to a receiver on loopback: every event
//! arrives signed, in order per endpoint; a receiver answering 500 gets the
//! same messages later; a dead endpoint holds back only itself; failed
//! deliveries are sent again on request; deleting an endpoint deletes its
//! deliveries.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use rave_comments::{Comments, Config, CursorKey, Moderation, NewComment};
use rave_engine::{Engine, EngineFeed};
use rave_store::{AttributeValue, ScanInput, Store};
use rave_webhooks::{
    DeliveryStatus, Endpoint, EventType, RetryPolicy, TargetPolicy, Timeouts, WebhookConfig,
    Webhooks,
};
use tokio::net::TcpListener;
use tokio::sync::watch;

#[derive(Debug, Clone)]
struct Received {
    id: String,
    timestamp: String,
    signature: String,
    body: String,
}

#[derive(Clone, Default)]
struct Receiver {
    received: Arc<Mutex<Vec<Received>>>,
    /// Answer 500 to this many requests first.
    failures_left: Arc<Mutex<usize>>,
}

async fn receive(State(receiver): State<Receiver>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    receiver.received.lock().unwrap().push(Received {
        id: header("webhook-id"),
        timestamp: header("webhook-timestamp"),
        signature: header("webhook-signature"),
        body: String::from_utf8(body.to_vec()).unwrap(),
    });
    let mut failures = receiver.failures_left.lock().unwrap();
    if *failures > 0 {
        *failures -= 1;
        return StatusCode::INTERNAL_SERVER_ERROR;
    }
    StatusCode::NO_CONTENT
}

async fn start_receiver(receiver: Receiver) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = Router::new()
        .route("/hook", post(receive))
        .route(
            "/moved",
            post(|| async { (StatusCode::FOUND, [("location", "/hook")]) }),
        )
        .with_state(receiver);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

struct World {
    comments: Comments<Engine>,
    webhooks: Arc<Webhooks<Engine>>,
    engine: Engine,
    stop: watch::Sender<bool>,
    _dir: tempfile::TempDir,
}

const FAST_RETRY: RetryPolicy = RetryPolicy {
    first_wait: Duration::from_millis(50),
    longest_wait: Duration::from_millis(200),
    retry_for: Duration::from_secs(60),
};

async fn world(retry: RetryPolicy) -> World {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path()).unwrap();
    let comments = Comments::new(
        engine.clone(),
        Config {
            table: "rave".into(),
            cursor_key: CursorKey::new([1; 32]),
            moderation: Moderation::Pre,
        },
    );
    comments.ensure_table().await.unwrap();
    let webhooks = Arc::new(Webhooks::new(
        engine.clone(),
        WebhookConfig {
            comments_table: "rave".into(),
            targets: TargetPolicy {
                allow_private: true,
            },
            retry,
            photo_links: None,
        },
    ));
    webhooks.ensure_table().await.unwrap();
    let (stop, _) = watch::channel(false);
    World {
        comments,
        webhooks,
        engine,
        stop,
        _dir: dir,
    }
}

impl World {
    /// A receiver on loopback and an endpoint for every event posting to it.
    async fn subscribed_receiver(&self) -> (Receiver, Endpoint) {
        let receiver = Receiver::default();
        let base = start_receiver(receiver.clone()).await;
        let endpoint = self
            .webhooks
            .create_endpoint(&format!("{base}/hook"), &EventType::ALL)
            .await
            .unwrap();
        (receiver, endpoint)
    }

    async fn start_delivering(&self) {
        let feed = EngineFeed::open(self.engine.clone(), "rave", rave_webhooks::CONSUMER)
            .await
            .unwrap();
        let stopped = self.stop.subscribe();
        tokio::spawn(rave_webhooks::run(
            self.webhooks.clone(),
            feed,
            Timeouts {
                connect: Duration::from_secs(1),
                response: Duration::from_secs(2),
            },
            stopped,
            tokio::sync::watch::channel(Default::default()).0,
        ));
    }
}

fn comment(body: &str) -> NewComment {
    NewComment {
        media: Vec::new(),
        attributes: Default::default(),
        author: "ann".into(),
        language: "en".into(),
        rating: 5,
        title: Some("t".into()),
        body: body.into(),
        created_at: None,
    }
}

async fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..200 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}");
}

fn parsed(received: &Received) -> serde_json::Value {
    serde_json::from_str(&received.body).unwrap()
}

/// Each distinct message once, in the order first received.
fn distinct(received: &[Received]) -> Vec<Received> {
    let mut seen = std::collections::HashSet::new();
    received
        .iter()
        .filter(|r| seen.insert(r.id.clone()))
        .cloned()
        .collect()
}

#[tokio::test]
async fn every_event_arrives_signed_and_in_order() {
    let w = world(FAST_RETRY).await;
    let (receiver, endpoint) = w.subscribed_receiver().await;
    w.start_delivering().await;

    let a = w
        .comments
        .create("p1", comment("first"), None)
        .await
        .unwrap()
        .comment;
    w.comments.approve(&a.id).await.unwrap();
    w.comments
        .flag(
            &a.id,
            &rave_comments::Report::new(rave_comments::ReportReason::Other, None).unwrap(),
        )
        .await
        .unwrap();
    let b = w
        .comments
        .create("p1", comment("second"), None)
        .await
        .unwrap()
        .comment;
    w.comments.set_reply(&b.id, "Thanks!").await.unwrap();
    w.comments.set_incentivized(&b.id, true).await.unwrap();
    w.comments.delete(&a.id).await.unwrap();

    let expected = [
        ("comment.created", &a.id),
        ("comment.published", &a.id),
        ("comment.flagged", &a.id),
        ("comment.created", &b.id),
        ("comment.replied", &b.id),
        ("comment.updated", &b.id),
        ("comment.deleted", &a.id),
    ];
    wait_for("seven deliveries", || {
        receiver.received.lock().unwrap().len() >= 7
    })
    .await;
    let received = receiver.received.lock().unwrap().clone();
    let got: Vec<(String, String)> = received
        .iter()
        .map(|r| {
            let v = parsed(r);
            (
                v["type"].as_str().unwrap().to_owned(),
                v["data"]["id"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let want: Vec<(String, String)> = expected
        .iter()
        .map(|(t, id)| (t.to_string(), id.to_string()))
        .collect();
    assert_eq!(got, want);
    let incentivized: Vec<bool> = received
        .iter()
        .map(|r| parsed(r)["data"]["incentivized"].as_bool().unwrap())
        .collect();
    assert_eq!(
        incentivized,
        [false, false, false, false, false, true, false],
        "every payload carries the mark; the update sets it"
    );
    for r in &received {
        let timestamp: i64 = r.timestamp.parse().unwrap();
        assert_eq!(
            r.signature,
            endpoint.secret.sign(&r.id, timestamp, r.body.as_bytes())
        );
        assert!(r.id.starts_with("msg_"));
    }
    let history = w.webhooks.deliveries(&endpoint.id, 10).await.unwrap();
    assert_eq!(history.len(), 7);
    w.stop.send(true).unwrap();
}

/// Changes made while no endpoint is registered are passed over (by their
/// keys alone); an endpoint registered afterwards gets what follows, and
/// nothing from before it.
#[tokio::test]
async fn changes_before_any_endpoint_are_passed_over_and_later_ones_delivered() {
    use rave_store::ChangeFeed;
    let w = world(FAST_RETRY).await;
    w.start_delivering().await;
    for body in ["one", "two", "three"] {
        w.comments.create("p1", comment(body), None).await.unwrap();
    }
    let lag = EngineFeed::open(w.engine.clone(), "rave", rave_webhooks::CONSUMER)
        .await
        .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while lag.lag().await.unwrap().events > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the consumer did not pass the changes"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (receiver, endpoint) = w.subscribed_receiver().await;
    let after = w
        .comments
        .create("p1", comment("after"), None)
        .await
        .unwrap()
        .comment;
    wait_for("one delivery", || {
        !receiver.received.lock().unwrap().is_empty()
    })
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let received = distinct(&receiver.received.lock().unwrap());
    assert_eq!(received.len(), 1, "{received:?}");
    let event = parsed(&received[0]);
    assert_eq!(event["type"], "comment.created");
    assert_eq!(event["data"]["id"], after.id.as_str());
    assert_eq!(
        w.webhooks.deliveries(&endpoint.id, 10).await.unwrap().len(),
        1
    );
    w.stop.send(true).unwrap();
}

/// The fan-out chooses between passing records by their keys and reading
/// their images from the endpoints it last saw; an endpoint it has not seen
/// yet, registered before the batch was read, still gets the batch.
#[tokio::test]
async fn an_endpoint_the_fan_out_has_not_seen_yet_gets_the_batch_it_was_registered_before() {
    let w = world(FAST_RETRY).await;
    let feed = EngineFeed::open(w.engine.clone(), "rave", rave_webhooks::CONSUMER)
        .await
        .unwrap();
    for body in ["one", "two"] {
        w.comments.create("p1", comment(body), None).await.unwrap();
    }
    let (_receiver, endpoint) = w.subscribed_receiver().await;
    let wait = Duration::from_millis(10);
    let mut known = Vec::new();
    assert_eq!(
        w.webhooks
            .fan_out_once(&feed, wait, &mut known)
            .await
            .unwrap(),
        0,
        "a batch read by its keys alone delivers nothing"
    );
    assert_eq!(known, std::slice::from_ref(&endpoint));
    assert_eq!(
        w.webhooks
            .fan_out_once(&feed, wait, &mut known)
            .await
            .unwrap(),
        2,
        "the same batch, read again with its images, makes a delivery per change"
    );
    assert_eq!(
        w.webhooks.deliveries(&endpoint.id, 10).await.unwrap().len(),
        2
    );
    w.webhooks.delete_endpoint(&endpoint.id).await.unwrap();
    w.comments
        .create("p1", comment("three"), None)
        .await
        .unwrap();
    assert_eq!(
        w.webhooks
            .fan_out_once(&feed, wait, &mut known)
            .await
            .unwrap(),
        0,
        "an endpoint deleted before the batch was read gets nothing"
    );
    assert!(known.is_empty());
}

#[tokio::test]
async fn a_failing_receiver_gets_the_same_messages_later_and_holds_back_only_itself() {
    let w = world(FAST_RETRY).await;
    let failing = Receiver {
        failures_left: Arc::new(Mutex::new(usize::MAX)),
        ..Receiver::default()
    };
    let healthy = Receiver::default();
    let failing_base = start_receiver(failing.clone()).await;
    let healthy_base = start_receiver(healthy.clone()).await;
    w.webhooks
        .create_endpoint(&format!("{failing_base}/hook"), &[EventType::Created])
        .await
        .unwrap();
    w.webhooks
        .create_endpoint(&format!("{healthy_base}/hook"), &[EventType::Created])
        .await
        .unwrap();
    w.start_delivering().await;
    let mut ids = Vec::new();
    for n in 0..3 {
        let created = w
            .comments
            .create("p1", comment(&format!("c{n}")), None)
            .await
            .unwrap();
        ids.push(created.comment.id);
    }
    wait_for("the healthy endpoint's three", || {
        healthy.received.lock().unwrap().len() == 3
    })
    .await;
    wait_for("retries at the failing endpoint", || {
        failing.received.lock().unwrap().len() >= 3
    })
    .await;
    {
        // While it fails, the failing endpoint sees only its first message, again.
        let received = failing.received.lock().unwrap();
        assert!(
            received.iter().all(|r| r.id == received[0].id),
            "{received:?}"
        );
        *failing.failures_left.lock().unwrap() = 0;
    }
    wait_for("the failing endpoint's three, later", || {
        distinct(&failing.received.lock().unwrap()).len() == 3
    })
    .await;
    let received = failing.received.lock().unwrap().clone();
    let order: Vec<String> = distinct(&received)
        .iter()
        .map(|r| parsed(r)["data"]["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(order, ids, "order per endpoint holds across retries");
    w.stop.send(true).unwrap();
}

#[tokio::test]
async fn deliveries_fail_after_their_deadline_and_can_be_sent_again() {
    let w = world(RetryPolicy {
        first_wait: Duration::from_millis(20),
        longest_wait: Duration::from_millis(50),
        retry_for: Duration::from_millis(300),
    })
    .await;
    let receiver = Receiver {
        failures_left: Arc::new(Mutex::new(usize::MAX)),
        ..Receiver::default()
    };
    let base = start_receiver(receiver.clone()).await;
    let endpoint = w
        .webhooks
        .create_endpoint(&format!("{base}/hook"), &[EventType::Created])
        .await
        .unwrap();
    w.start_delivering().await;
    w.comments.create("p1", comment("x"), None).await.unwrap();
    let mut failed = None;
    for _ in 0..100 {
        let history = w.webhooks.deliveries(&endpoint.id, 10).await.unwrap();
        if let Some(d) = history.iter().find(|d| d.status == DeliveryStatus::Failed) {
            failed = Some(d.clone());
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let failed = failed.expect("the delivery fails after its deadline");
    assert!(failed.attempts >= 2);
    assert_eq!(
        failed.last_error.as_deref(),
        Some("HTTP 500 Internal Server Error")
    );
    assert!(
        w.webhooks
            .retry_delivery(&endpoint.id, "01J00000000000000000000000")
            .await
            .is_err(),
        "an unknown delivery is not found"
    );
    *receiver.failures_left.lock().unwrap() = 0;
    let resent = w
        .webhooks
        .retry_delivery(&endpoint.id, &failed.id)
        .await
        .unwrap();
    assert_eq!(resent.status, DeliveryStatus::Pending);
    wait_for("the resent delivery", || {
        receiver
            .received
            .lock()
            .unwrap()
            .last()
            .is_some_and(|r| r.id == failed.message_id())
            && *receiver.failures_left.lock().unwrap() == 0
    })
    .await;
    for _ in 0..100 {
        let history = w.webhooks.deliveries(&endpoint.id, 10).await.unwrap();
        if history[0].status == DeliveryStatus::Delivered {
            assert!(
                w.webhooks
                    .retry_delivery(&endpoint.id, &failed.id)
                    .await
                    .is_err(),
                "only a failed delivery is sent again"
            );
            w.stop.send(true).unwrap();
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the resent delivery was not recorded delivered");
}

#[tokio::test]
async fn redirects_are_not_followed() {
    let w = world(RetryPolicy {
        first_wait: Duration::from_millis(20),
        longest_wait: Duration::from_millis(20),
        retry_for: Duration::from_millis(100),
    })
    .await;
    let receiver = Receiver::default();
    let base = start_receiver(receiver.clone()).await;
    let endpoint = w
        .webhooks
        .create_endpoint(&format!("{base}/moved"), &[EventType::Created])
        .await
        .unwrap();
    w.start_delivering().await;
    w.comments.create("p1", comment("x"), None).await.unwrap();
    for _ in 0..100 {
        let history = w.webhooks.deliveries(&endpoint.id, 10).await.unwrap();
        if let Some(d) = history
            .first()
            .filter(|d| d.status == DeliveryStatus::Failed)
        {
            assert!(d.last_error.as_deref().unwrap().contains("302"), "{d:?}");
            assert!(
                receiver.received.lock().unwrap().is_empty(),
                "the redirect target got nothing"
            );
            w.stop.send(true).unwrap();
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the redirected delivery did not fail");
}

#[tokio::test]
async fn loopback_is_refused_at_registration_and_at_delivery_without_the_flag() {
    let w = world(FAST_RETRY).await;
    let receiver = Receiver::default();
    let base = start_receiver(receiver.clone()).await;
    let strict = Webhooks::new(
        w.engine.clone(),
        WebhookConfig {
            comments_table: "rave".into(),
            targets: TargetPolicy::default(),
            retry: FAST_RETRY,
            photo_links: None,
        },
    );
    let refused = strict
        .create_endpoint(&format!("{base}/hook"), &[EventType::Created])
        .await;
    assert!(refused.unwrap_err().to_string().contains("127.0.0.1"));
    // Registered while allowed, sent by a server that does not allow it.
    let endpoint = w
        .webhooks
        .create_endpoint(&format!("{base}/hook"), &[EventType::Created])
        .await
        .unwrap();
    let client = rave_webhooks::http_client(TargetPolicy::default(), Timeouts::default()).unwrap();
    let delivery = rave_webhooks::Delivery {
        endpoint_id: endpoint.id.clone(),
        id: "01J00000000000000000000000".into(),
        event: EventType::Created,
        body: "{}".into(),
        status: DeliveryStatus::Pending,
        attempts: 0,
        last_error: None,
        created_at_ms: 0,
        next_attempt_at_ms: 0,
        give_up_at_ms: 0,
        finished_at_ms: None,
    };
    let error = rave_webhooks::attempt(&client, TargetPolicy::default(), &endpoint, &delivery)
        .await
        .unwrap_err();
    assert!(error.contains("loopback"), "{error}");
    let named = rave_webhooks::Endpoint {
        url: endpoint.url.replace("127.0.0.1", "localhost"),
        ..endpoint
    };
    let error = rave_webhooks::attempt(&client, TargetPolicy::default(), &named, &delivery)
        .await
        .unwrap_err();
    assert!(error.contains("loopback"), "{error}");
    assert!(receiver.received.lock().unwrap().is_empty());
}

/// The partition keys of every item in the webhooks table.
async fn webhook_partitions(engine: &Engine) -> Vec<String> {
    let mut partitions = Vec::new();
    let mut start = None;
    loop {
        let mut input = ScanInput::new(rave_webhooks::table_name("rave"));
        input.consistent_read = true;
        input.exclusive_start_key = start;
        let page = Store::scan(engine, input).await.unwrap();
        for item in &page.items {
            match item.get("PK") {
                Some(AttributeValue::S(pk)) => partitions.push(pk.clone()),
                other => panic!("no PK: {other:?}"),
            }
        }
        start = page.last_evaluated_key;
        if start.is_none() {
            return partitions;
        }
    }
}

#[tokio::test]
async fn deleting_an_endpoint_deletes_its_deliveries_and_its_queue() {
    let w = world(FAST_RETRY).await;
    let dead = Receiver {
        failures_left: Arc::new(Mutex::new(usize::MAX)),
        ..Receiver::default()
    };
    let healthy = Receiver::default();
    let dead_base = start_receiver(dead.clone()).await;
    let healthy_base = start_receiver(healthy.clone()).await;
    let gone = w
        .webhooks
        .create_endpoint(&format!("{dead_base}/hook"), &[EventType::Created])
        .await
        .unwrap();
    let kept = w
        .webhooks
        .create_endpoint(&format!("{healthy_base}/hook"), &[EventType::Created])
        .await
        .unwrap();
    w.start_delivering().await;
    // More than one batch write's worth of deliveries.
    for n in 0..30 {
        w.comments
            .create("p1", comment(&format!("c{n}")), None)
            .await
            .unwrap();
    }
    wait_for("the healthy endpoint's thirty", || {
        healthy.received.lock().unwrap().len() == 30
    })
    .await;
    let gone_partition = format!("DELIVERIES#{}", gone.id);
    let count = |partitions: &[String], pk: &str| partitions.iter().filter(|p| *p == pk).count();
    let before = webhook_partitions(&w.engine).await;
    assert_eq!(
        count(&before, &gone_partition),
        30,
        "the dead endpoint's queue"
    );

    w.webhooks.delete_endpoint(&gone.id).await.unwrap();

    let after = webhook_partitions(&w.engine).await;
    assert_eq!(count(&after, &gone_partition), 0, "{after:?}");
    assert_eq!(
        count(&after, &format!("DELIVERIES#{}", kept.id)),
        30,
        "another endpoint's deliveries stay"
    );
    assert!(matches!(
        w.webhooks.deliveries(&gone.id, 10).await,
        Err(rave_webhooks::WebhookError::NotFound(_))
    ));
    w.stop.send(true).unwrap();
}

#[tokio::test]
async fn a_published_event_reaches_only_its_subscribers_signed() {
    let w = world(FAST_RETRY).await;
    let (receiver, endpoint) = w.subscribed_receiver().await;
    let others = Receiver::default();
    let other_base = start_receiver(others.clone()).await;
    w.webhooks
        .create_endpoint(&format!("{other_base}/hook"), &[EventType::Created])
        .await
        .unwrap();
    w.start_delivering().await;

    let data = serde_json::json!({"order_id": "A-1", "review_url": "https://r.example/review/x"});
    let written = w
        .webhooks
        .publish(EventType::ReviewRequested, &data)
        .await
        .unwrap();
    assert_eq!(written, 1);
    wait_for("the published event", || {
        !receiver.received.lock().unwrap().is_empty()
    })
    .await;
    let received = receiver.received.lock().unwrap()[0].clone();
    let body = parsed(&received);
    assert_eq!(body["type"], "review.requested");
    assert_eq!(body["data"], data);
    assert!(!received.signature.is_empty());
    let expected = endpoint.secret.sign(
        &received.id,
        received.timestamp.parse().unwrap(),
        received.body.as_bytes(),
    );
    assert!(received.signature.split(' ').any(|s| s == expected));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(others.received.lock().unwrap().is_empty());
}
