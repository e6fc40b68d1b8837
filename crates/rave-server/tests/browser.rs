//! The web page in a real browser: headless Chromium driven through
//! chromedriver (WebDriver). The test command installs both from Debian's
//! packages; `RAVE_CHROMEDRIVER` and `RAVE_CHROMIUM` point elsewhere.
//! With `RAVE_SCREENSHOTS=<dir>`, the main views are saved as PNGs there
//! (that is how `docs/` is made).

#[path = "common/browser.rs"]
mod browser;

use std::sync::Arc;
use std::time::{Duration, Instant};

use fantoccini::{Client, Locator};
use rave_access::{Access, AccessConfig};
use rave_comments::rules::{Outcome, Rules};
use rave_comments::{Comments, Config, CursorKey, Moderation};
use rave_engine::{Engine, EngineFeed};
use rave_server::{AppState, ServerConfig};
use rave_store::SharedStore;
use serde_json::{Value, json};

const TOKEN: &str = "browser-admin-token";

struct Session {
    client: Client,
    base: String,
    comments: Arc<Comments<SharedStore>>,
    browser: browser::Browser,
    _data: tempfile::TempDir,
}

async fn session(moderation: Moderation) -> Session {
    session_with_rules(moderation, None).await
}

async fn session_with_rules(moderation: Moderation, rules: Option<Rules>) -> Session {
    // The server, with its statistics kept current by an aggregator task.
    let data = tempfile::tempdir().unwrap();
    let engine = Engine::open(data.path()).unwrap();
    let mut comments = Comments::new(
        SharedStore::new(engine.clone()),
        Config {
            table: "rave".into(),
            cursor_key: CursorKey::new([5; 32]),
            moderation,
        },
    );
    if let Some(rules) = rules {
        comments = comments.with_rules(Arc::new(rules));
    }
    let comments = Arc::new(comments);
    comments.ensure_table().await.unwrap();
    let access = Arc::new(Access::new(
        SharedStore::new(engine.clone()),
        AccessConfig::for_table("rave"),
    ));
    access.ensure_table().await.unwrap();
    let feed = EngineFeed::open(engine, "rave", "statistics")
        .await
        .unwrap();
    browser::spawn_aggregator(comments.clone(), feed);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let config = ServerConfig {
        admin_token: Some(TOKEN.into()),
        rate_limit_per_minute: 0,
    };
    tokio::spawn(rave_server::serve(
        listener,
        AppState::new(comments.clone(), access, &config),
        std::future::pending(),
        rave_server::DEFAULT_DRAIN,
    ));

    let (client, browser) = browser::start("1200,1000").await;
    Session {
        client,
        base,
        comments,
        browser,
        _data: data,
    }
}

impl Session {
    async fn goto(&self, path: &str) {
        self.client
            .goto(&format!("{}{path}", self.base))
            .await
            .unwrap();
    }

    /// Waits until a JavaScript expression is true.
    async fn until(&self, condition: &str) {
        browser::until(&self.client, condition).await
    }

    async fn eval(&self, expression: &str) -> Value {
        browser::eval(&self.client, expression).await
    }

    async fn click(&self, css: &str) {
        self.client
            .find(Locator::Css(css))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
    }

    async fn url(&self) -> String {
        self.client.current_url().await.unwrap().to_string()
    }

    async fn create(&self, product: &str, language: &str, rating: i64, body: &str) -> String {
        let new = rave_comments::NewComment {
            media: Vec::new(),
            attributes: Default::default(),
            author: "alice".into(),
            language: language.into(),
            rating,
            title: Some("A title".into()),
            body: body.into(),
            created_at: None,
        };
        self.comments
            .create(product, new, None)
            .await
            .unwrap()
            .comment
            .id
    }

    async fn screenshot(&self, name: &str) {
        if let Ok(dir) = std::env::var("RAVE_SCREENSHOTS") {
            let png = self.client.screenshot().await.unwrap();
            std::fs::write(std::path::Path::new(&dir).join(name), png).unwrap();
        }
    }

    /// Ends the session; every page it showed ran under rave's content
    /// policy without a violation.
    async fn close(self) {
        let violations = self.browser.policy_violations(&self.client).await;
        assert!(violations.is_empty(), "{violations:#?}");
        let _ = self.client.close().await;
    }
}

const LIST_LEN: &str = "document.querySelectorAll('#comments li').length";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_change_the_list_and_the_url_and_back_works() {
    let s = session(Moderation::Off).await;
    for i in 0..30 {
        s.create(
            "p",
            if i % 2 == 0 { "en" } else { "de" },
            1 + i % 5,
            &format!("comment {i}"),
        )
        .await;
    }
    s.goto("/?view=product&product=p").await;
    s.until(&format!("{LIST_LEN} === 20")).await;
    // The histogram shows the statistics once the aggregator has them.
    s.until("document.querySelector('#histogram-total').textContent.startsWith('30 comments')")
        .await;
    s.screenshot("product.png").await;

    s.click("input[name=rating][value='5']").await;
    s.until(&format!("{LIST_LEN} === 6")).await;
    let all_five = s
        .eval("[...document.querySelectorAll('#comments .stars')].every(e => e.getAttribute('aria-label').startsWith('5 '))")
        .await;
    assert_eq!(all_five, Value::Bool(true));
    assert!(s.url().await.contains("rating=5"), "{}", s.url().await);

    s.client.execute("document.querySelector('#language').value = 'de'; document.querySelector('#language').dispatchEvent(new Event('change'));", vec![]).await.unwrap();
    s.until(&format!("{LIST_LEN} === 3")).await;
    assert!(s.url().await.contains("language=de"));
    // The plan is asked for once its panel opens.
    s.click("#plan-panel summary").await;
    s.until("document.querySelector('#plan').textContent.includes('PRODUCT#p/de/5')")
        .await;

    // Back restores the previous filters, from the URL.
    s.client.back().await.unwrap();
    s.until(&format!("{LIST_LEN} === 6")).await;
    assert!(!s.url().await.contains("language=de"));
    assert_eq!(
        s.eval("document.querySelector('#language').value").await,
        json!("")
    );
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_more_appends_the_next_page_without_duplicates() {
    let s = session(Moderation::Off).await;
    for i in 0..45 {
        s.create("m", "en", 1 + i % 5, &format!("comment {i}"))
            .await;
    }
    s.goto("/?view=product&product=m").await;
    s.until(&format!("{LIST_LEN} === 20")).await;
    s.click("#load-more").await;
    s.until(&format!("{LIST_LEN} === 40")).await;
    s.click("#load-more").await;
    s.until(&format!("{LIST_LEN} === 45")).await;
    s.until("document.querySelector('#load-more').hidden").await;
    let unique = s
        .eval(
            "new Set([...document.querySelectorAll('#comments li')].map(li => li.dataset.id)).size",
        )
        .await;
    assert_eq!(unique, json!(45));
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn posting_shows_the_comment_and_problems_next_to_their_fields() {
    let s = session(Moderation::Off).await;
    s.create("q", "en", 4, "already here").await;
    s.goto("/?view=product&product=q").await;
    s.until(&format!("{LIST_LEN} === 1")).await;
    // The server's problem detail lands next to the field it names.
    s.client
        .find(Locator::Css("#post-body"))
        .await
        .unwrap()
        .send_keys("No name given")
        .await
        .unwrap();
    s.click("#post-form button[type=submit]").await;
    s.until("document.querySelector('#error-author').textContent.includes('author')")
        .await;

    s.client
        .find(Locator::Css("#post-author"))
        .await
        .unwrap()
        .send_keys("bea")
        .await
        .unwrap();
    s.click("#post-form button[type=submit]").await;
    s.until(&format!("{LIST_LEN} === 2")).await;
    let first = s
        .eval("document.querySelector('#comments li .body').textContent")
        .await;
    assert_eq!(
        first,
        json!("No name given"),
        "the new comment is listed first"
    );
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_in_a_comment_is_shown_as_text() {
    let s = session(Moderation::Off).await;
    let hostile = "<script>window.__pwned = 1</script><img src=x onerror=\"window.__pwned = 2\">";
    s.create("x", "en", 1, hostile).await;
    s.goto("/?view=product&product=x").await;
    s.until(&format!("{LIST_LEN} === 1")).await;
    assert_eq!(
        s.eval("document.querySelector('#comments .body').textContent")
            .await,
        json!(hostile)
    );
    assert_eq!(
        s.eval("document.querySelectorAll('#comments img, #comments script').length")
            .await,
        json!(0)
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(s.eval("window.__pwned === undefined").await, json!(true));
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_merchants_reply_shows_under_its_comment_as_text() {
    let s = session(Moderation::Off).await;
    let replied = s.create("r", "en", 2, "It broke.").await;
    s.create("r", "en", 5, "Lovely.").await;
    let reply = "Sorry! <b>We</b> sent a new one.";
    s.comments.set_reply(&replied, reply).await.unwrap();
    s.goto("/?view=product&product=r").await;
    s.until(&format!("{LIST_LEN} === 2")).await;
    assert_eq!(
        s.eval(&format!(
            "document.querySelector('#comments li[data-id=\"{replied}\"] .reply .body').textContent"
        ))
        .await,
        json!(reply)
    );
    assert_eq!(
        s.eval("document.querySelectorAll('#comments .reply').length")
            .await,
        json!(1),
        "only the replied comment has a reply, and no markup was made of it"
    );
    assert_eq!(
        s.eval("document.querySelectorAll('#comments .reply b').length")
            .await,
        json!(0)
    );
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approving_a_pending_comment_makes_it_appear() {
    let s = session(Moderation::Pre).await;
    let id = s.create("mod", "en", 5, "waiting for a moderator").await;
    s.goto("/?view=product&product=mod").await;
    s.until("document.querySelector('#list-status').textContent === 'No comments match.'")
        .await;

    s.goto("/?view=moderation").await;
    s.client
        .find(Locator::Css("#admin-token"))
        .await
        .unwrap()
        .send_keys(TOKEN)
        .await
        .unwrap();
    s.click("#token-form button[type=submit]").await;
    s.until("document.querySelectorAll('#queue li').length === 1")
        .await;
    assert_eq!(
        s.eval("document.querySelector('#queue li').dataset.id")
            .await,
        json!(id)
    );
    assert_eq!(
        s.eval("[sessionStorage.length, localStorage.length, document.cookie]")
            .await,
        json!([0, 0, ""]),
        "the token is kept in no storage and no cookie"
    );
    s.screenshot("moderation.png").await;
    s.click("#queue li button").await;
    s.until("document.querySelectorAll('#queue li').length === 0")
        .await;

    // A reload forgets the token.
    s.goto("/?view=moderation").await;
    s.until("document.querySelector('#queue-status').textContent.includes('Enter a token')")
        .await;

    s.goto("/?view=product&product=mod").await;
    s.until(&format!("{LIST_LEN} === 1")).await;
    s.goto("/?view=leaderboard").await;
    s.until("document.querySelectorAll('#leaderboard tr a').length === 1")
        .await;
    s.screenshot("leaderboard.png").await;
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_queue_shows_which_rule_held_a_comment() {
    let mut rules = Rules::new();
    rules.max_links = Some((0, Outcome::Hold));
    let s = session_with_rules(Moderation::Off, Some(rules)).await;
    let held = s.create("mod", "en", 1, "buy at http://spam.example").await;
    s.goto("/?view=moderation").await;
    s.client
        .find(Locator::Css("#admin-token"))
        .await
        .unwrap()
        .send_keys(TOKEN)
        .await
        .unwrap();
    s.click("#token-form button[type=submit]").await;
    s.until("document.querySelectorAll('#queue li').length === 1")
        .await;
    assert_eq!(
        s.eval("document.querySelector('#queue li').dataset.id")
            .await,
        json!(held)
    );
    let shown = s
        .eval(
            "(() => { const h = document.querySelector('#queue li .held-by'); \
             return h && [h.textContent, h.children.length]; })()",
        )
        .await;
    assert_eq!(shown, json!(["held by too_many_links", 0]), "shown as text");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_admin_token_is_reported() {
    let s = session(Moderation::Pre).await;
    s.goto("/?view=moderation").await;
    s.client
        .find(Locator::Css("#admin-token"))
        .await
        .unwrap()
        .send_keys("wrong")
        .await
        .unwrap();
    s.click("#token-form button[type=submit]").await;
    s.until("document.querySelector('#notice').textContent.includes('refused')")
        .await;
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sort_is_kept_in_the_url_and_votes_are_cast_and_withdrawn() {
    let s = session(Moderation::Off).await;
    for (rating, body) in [(2, "two"), (5, "five"), (3, "three")] {
        s.create("v", "en", rating, body).await;
    }
    let first_stars =
        "document.querySelector('#comments li .stars')?.getAttribute('aria-label') || ''";
    s.goto("/?view=product&product=v&sort=highest").await;
    s.until(&format!("{LIST_LEN} === 3")).await;
    s.until(&format!("{first_stars}.startsWith('5 ')")).await;
    assert_eq!(
        s.eval("document.querySelector('#sort').value").await,
        json!("highest")
    );
    s.client.execute("document.querySelector('#sort').value = 'lowest'; document.querySelector('#sort').dispatchEvent(new Event('change'));", vec![]).await.unwrap();
    s.until(&format!("{first_stars}.startsWith('2 ')")).await;
    assert!(s.url().await.contains("sort=lowest"), "{}", s.url().await);

    // Voting on the first comment: pressed, counted by the server, still
    // pressed after a reload, and withdrawn by pressing it again.
    let helpful = "#comments li:first-child button[data-vote='true']";
    let text = |css: &str| format!("document.querySelector(\"{css}\").textContent");
    s.until(&format!("{} === 'Helpful (0)'", text(helpful)))
        .await;
    s.click(helpful).await;
    s.until(&format!("{} === 'Helpful (1)'", text(helpful)))
        .await;
    assert_eq!(
        s.eval(&format!(
            "document.querySelector(\"{helpful}\").getAttribute('aria-pressed')"
        ))
        .await,
        json!("true")
    );
    let id = s
        .eval("document.querySelector('#comments li').dataset.id")
        .await;
    let id = id.as_str().unwrap().to_owned();
    let started = Instant::now();
    while s.comments.get(&id).await.unwrap().votes.helpful != 1 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the vote was never counted"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    s.client.refresh().await.unwrap();
    s.until(&format!("{} === 'Helpful (1)'", text(helpful)))
        .await;
    s.click(helpful).await;
    s.until(&format!("{} === 'Helpful (0)'", text(helpful)))
        .await;
    let started = Instant::now();
    while s.comments.get(&id).await.unwrap().votes.helpful != 0 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the withdrawal was never counted"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    s.close().await;
}
