//! Review requests through the real binary: `rave serve` with an SMTP
//! server (aiosmtpd, from RAVE_SMTP_SINK_PYTHON) takes an order, mails the
//! request when it is due, takes the review its link leads to as a
//! verified purchase, and honours one-click unsubscribe.

mod common;
#[path = "../../rave-requests/tests/support/sink.rs"]
mod sink;

use std::process::Command;
use std::time::{Duration, Instant};

use common::{RAVE, Server};
use serde_json::{Value, json};
use sink::{Sink, free_port};

async fn wait_for_mail(sink: &Sink, count: usize) -> Vec<Value> {
    let started = Instant::now();
    loop {
        let found = sink.received();
        if found.len() >= count {
            return found;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{} of {count} messages",
            found.len()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn now_rfc3339() -> String {
    let out = Command::new("date")
        .args(["-u", "+%Y-%m-%dT%H:%M:%SZ"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

fn link_after<'a>(text: &'a str, prefix: &str) -> &'a str {
    let start = text
        .find(prefix)
        .unwrap_or_else(|| panic!("no {prefix} in {text}"));
    text[start..].split_whitespace().next().unwrap()
}

#[tokio::test]
async fn an_order_is_mailed_its_link_posts_a_verified_review_and_unsubscribe_holds() {
    let dir = tempfile::tempdir().unwrap();
    let maildir = dir.path().join("mail");
    let smtp_port = free_port();
    let sink = Sink::start(smtp_port, &maildir);
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let mut command = Command::new(RAVE);
    command
        .args(["serve", "--addr", &format!("127.0.0.1:{port}"), "--data"])
        .arg(dir.path().join("data"))
        .args(["--admin-token", "let-me-in", "--public-url", &base])
        .args(["--smtp-url", &format!("smtp://127.0.0.1:{smtp_port}")])
        .args(["--smtp-from", "Kettle & Co. <reviews@shop.example>"])
        .args(["--request-delay-days", "0", "--request-poll-seconds", "1"])
        .env("RAVE_LOG", "debug");
    let log_path = dir.path().join("rave.log");
    let server = Server::start_logging(command, std::fs::File::create(&log_path).unwrap());
    let client = reqwest::Client::new();
    let admin = |request: reqwest::RequestBuilder| request.bearer_auth("let-me-in");

    let put = admin(client.put(format!("{base}/v1/products/kettle")))
        .json(&json!({"name": "Kettle"}))
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), 200);
    let order = |id: &str| {
        json!({"order_id": id, "email": "ana@example.es", "name": "Ana", "locale": "es",
               "delivered_at": now_rfc3339(), "products": ["kettle"]})
    };
    let posted = admin(client.post(format!("{base}/v1/admin/orders")))
        .json(&order("A-1"))
        .send()
        .await
        .unwrap();
    assert_eq!(posted.status(), 201);

    let mail_one = wait_for_mail(&sink, 1).await;
    let text = mail_one[0]["text"].as_str().unwrap().to_owned();
    assert!(text.contains("Hola, Ana"), "{text}");
    let review_url = link_after(&text, &format!("{base}/review/")).to_owned();
    let page = client.get(&review_url).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let form = "product=kettle&language=es&rating=5&title=Bien&body=Hierve+r%C3%A1pido.&author=Ana";
    let review = client
        .post(&review_url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await
        .unwrap();
    assert_eq!(review.status(), 201);
    let listing: Value = client
        .get(format!("{base}/v1/products/kettle/comments"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listing["items"][0]["verified_purchase"], true);

    // One-click unsubscribe, as a mail client sends it.
    let header = mail_one[0]["list_unsubscribe"].as_str().unwrap();
    let unsubscribe_url = header.trim_matches(['<', '>']);
    let unsubscribed = client
        .post(unsubscribe_url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("List-Unsubscribe=One-Click")
        .send()
        .await
        .unwrap();
    assert_eq!(unsubscribed.status(), 200);
    let posted = admin(client.post(format!("{base}/v1/admin/orders")))
        .json(&order("A-2"))
        .send()
        .await
        .unwrap();
    assert_eq!(posted.status(), 201);
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(sink.received().len(), 1, "nothing after the unsubscribe");
    let skipped: Value = admin(client.get(format!("{base}/v1/admin/requests?status=skipped")))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(skipped["requests"][0]["order_id"], "A-2", "{skipped}");
    assert!(!skipped.to_string().contains("ana@example.es"));
    let metrics = client
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("rave_review_requests_total{outcome=\"sent\"} 1"),
        "{metrics}"
    );
    assert!(metrics.contains("rave_review_requests_total{outcome=\"skipped\"} 1"));
    drop(server);
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(log.contains("rave is listening"), "the log was kept");
    assert!(!log.contains("ana@example.es"), "no address in the log");
}

#[tokio::test]
async fn past_orders_import_from_csv_once_with_bad_rows_named_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let serve = || {
        let mut command = Command::new(RAVE);
        command
            .args(["serve", "--addr", &format!("127.0.0.1:{port}"), "--data"])
            .arg(&data)
            .args(["--admin-token", "let-me-in", "--public-url", &base]);
        Server::start(command)
    };
    let client = reqwest::Client::new();
    {
        let _server = serve();
        let put = client
            .put(format!("{base}/v1/products/kettle"))
            .bearer_auth("let-me-in")
            .json(&json!({"name": "Kettle"}))
            .send()
            .await
            .unwrap();
        assert_eq!(put.status(), 200);
    }
    let today = now_rfc3339();
    let csv = dir.path().join("orders.csv");
    std::fs::write(
        &csv,
        format!(
            "order_id,email,name,locale,delivered_at,products\r\n\
             1001,ana@example.es,Ana,es,{today},kettle\r\n\
             1002,bo@example.com,\"Bo, Jr.\",en,{today},sofa\r\n\
             1003,cy@example.fr,Cy,fr,{today},kettle\r\n"
        ),
    )
    .unwrap();
    let orders = |extra: &[&str]| {
        Command::new(RAVE)
            .args(["orders", "--data"])
            .arg(&data)
            .arg(&csv)
            .args(extra)
            .output()
            .unwrap()
    };
    let refused = orders(&[]);
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("line 3") && said.contains("sofa"), "{said}");
    let skipped = orders(&["--skip-bad-lines"]);
    assert!(skipped.status.success(), "{skipped:?}");
    let said = String::from_utf8_lossy(&skipped.stderr);
    assert!(
        said.contains("1 new, 0 changed, 1 unchanged, 1 skipped"),
        "{said}"
    );
    let again = orders(&["--skip-bad-lines"]);
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(
        said.contains("0 new, 0 changed, 2 unchanged, 1 skipped"),
        "{said}"
    );

    let _server = serve();
    // A new client: the old one's kept connection went with the old server.
    let scheduled: Value = reqwest::Client::new()
        .get(format!("{base}/v1/admin/requests?status=scheduled"))
        .bearer_auth("let-me-in")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut ids: Vec<&str> = scheduled["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["order_id"].as_str().unwrap())
        .collect();
    ids.sort();
    assert_eq!(ids, ["1001", "1001", "1003", "1003"], "{scheduled}");
}
