//! Requests through a real SMTP server: Python's aiosmtpd as a sink that
//! keeps what it receives (scripts/test.sh installs it and names its
//! Python in RAVE_SMTP_SINK_PYTHON), read back as a mail client reads it.

#[path = "support/sink.rs"]
mod sink;

use std::sync::Arc;

use rave_engine::Engine;
use rave_requests::{
    Catalog, Links, LookupFuture, ManualClock, Order, ProductLine, Requests, Schedule, Scheduler,
    SmtpChannel, Templates,
};
use sink::{Sink, free_port};

const DAY: u64 = 24 * 60 * 60 * 1000;
const T0: u64 = 1_790_000_000_000;

#[derive(Debug)]
struct Names;

impl Catalog for Names {
    fn product<'a>(&'a self, id: &'a str) -> LookupFuture<'a> {
        Box::pin(async move {
            Some(ProductLine {
                id: id.to_owned(),
                name: "Wasserkocher «Zürich»".into(),
                image_url: Some("https://cdn.shop.example/kettle.jpg".into()),
            })
        })
    }
}

#[tokio::test]
async fn a_request_and_a_reminder_arrive_in_the_orders_language_even_after_an_outage() {
    let dir = tempfile::tempdir().unwrap();
    let maildir = dir.path().join("mail");
    let engine = Engine::open(dir.path().join("store")).unwrap();
    let clock = ManualClock::at(T0);
    let requests = Arc::new(Requests::new(
        engine,
        "rave",
        Schedule::default(),
        Arc::new(clock.clone()),
    ));
    requests.ensure_table().await.unwrap();
    let port = free_port();
    let channel = SmtpChannel::new(
        &format!("smtp://127.0.0.1:{port}"),
        "Kettle & Co. <reviews@shop.example>",
        "Kettle & Co.",
        Templates::default(),
    )
    .unwrap();
    let scheduler = Scheduler::new(
        requests.clone(),
        Arc::new(channel),
        Arc::new(Names),
        Links::new([1; 32], "https://reviews.shop.example"),
    );
    requests
        .put_order(Order {
            id: "A-1".into(),
            email: "jonas@example.de".into(),
            name: "Jonas Müller".into(),
            locale: "de-CH".into(),
            delivered_at_ms: T0,
            products: vec!["kettle".into()],
        })
        .await
        .unwrap();

    // Due, but the SMTP server is down: tried again later.
    clock.set(T0 + 7 * DAY);
    let pass = scheduler.run_due().await.unwrap();
    assert_eq!((pass.sent, pass.retried), (0, 1));

    let sink = Sink::start(port, &maildir);
    clock.advance(60_000);
    assert_eq!(scheduler.run_due().await.unwrap().sent, 1);
    let mail = sink.received();
    assert_eq!(mail.len(), 1);
    let first = &mail[0];
    assert_eq!(first["to"], "Jonas Müller <jonas@example.de>");
    assert_eq!(first["from"], "\"Kettle & Co.\" <reviews@shop.example>");
    assert_eq!(
        first["subject"],
        "Wie gefällt Ihnen Ihre Bestellung bei Kettle & Co.?"
    );
    let text = first["text"].as_str().unwrap();
    assert!(
        text.contains("Hallo Jonas Müller") && text.contains("Wasserkocher «Zürich»"),
        "{text}"
    );
    assert!(text.contains("https://reviews.shop.example/review/"));
    let html = first["html"].as_str().unwrap();
    assert!(
        html.contains("<img src=\"https://cdn.shop.example/kettle.jpg\""),
        "{html}"
    );
    let unsubscribe = first["list_unsubscribe"].as_str().unwrap();
    assert!(
        unsubscribe.starts_with("<https://reviews.shop.example/unsubscribe/"),
        "{unsubscribe}"
    );
    assert_eq!(first["list_unsubscribe_post"], "List-Unsubscribe=One-Click");

    clock.set(T0 + 14 * DAY);
    assert_eq!(scheduler.run_due().await.unwrap().sent, 1);
    let mail = sink.received();
    assert_eq!(mail.len(), 2);
    assert!(
        mail[1]["subject"]
            .as_str()
            .unwrap()
            .starts_with("Erinnerung")
    );
    clock.set(T0 + 30 * DAY);
    assert_eq!(scheduler.run_due().await.unwrap().sent, 0);
    assert_eq!(sink.received().len(), 2);
}
