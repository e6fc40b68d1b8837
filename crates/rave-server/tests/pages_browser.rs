//! The embed and the fragment on a shop's page, and the web page's fixed
//! defects, in headless Chromium. For the embed, the
//! shop's pages are served from another origin than rave, as they would
//! be. The embed renders, loads more without duplicates, posts, shows
//! errors inline, keeps its styles from the page's and the page's from it,
//! and keeps hostile text inert; CORS lets the allowed origin in and no
//! other. It shows the verified badge and the merchant's reply, orders and
//! filters verified purchases (and "load more" keeps both), and casts and
//! withdraws helpful votes across origins, as a random voter of its own or
//! as the shop's. With `RAVE_SCREENSHOTS=<dir>`, the product page, the fragment in
//! a shop's page and the embed are saved there (that is how `docs/` is
//! made). chromedriver and Chromium as in tests/browser.rs.

#[path = "common/browser.rs"]
mod browser;

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{Path, State};
use axum::response::Html;
use fantoccini::Client;
use rave_access::{Access, AccessConfig};
use rave_comments::{
    Comments, Config, CursorKey, Moderation, NewComment, OrderId, ProductRecord, Timestamp,
};
use rave_engine::{Engine, EngineFeed};
use rave_server::{AllowedOrigin, AppState, ServerConfig};
use rave_store::SharedStore;
use serde_json::{Value, json};

struct Session {
    client: Client,
    /// rave, at 127.0.0.1.
    rave: String,
    /// The shop whose origin is allowed, at `localhost`.
    shop: String,
    /// A shop whose origin is not allowed.
    stranger: String,
    comments: Arc<Comments<SharedStore>>,
    browser: browser::Browser,
    _data: tempfile::TempDir,
}

/// A stylesheet of a shop that restyles everything it can reach.
const HOSTILE_STYLE: &str = "<style>\
* { color: rgb(255, 0, 0) !important; font-family: serif !important; \
    line-height: 3 !important; letter-spacing: 4px !important; }\
p { font-size: 40px !important; margin: 30px !important; display: inline !important; }\
button { background: rgb(0, 255, 0) !important; width: 500px !important; }\
</style>";

/// The shop's pages: the embed with and without the hostile stylesheet,
/// the embed of product `v` (as the shop's customer for `customer`), the
/// embed of variant `tee-red` showing its family `tee` (`family`), and the
/// fragment included server-side.
async fn shop_page(State(rave): State<String>, Path(kind): Path<String>) -> Html<String> {
    let style = if kind == "hostile" { HOSTILE_STYLE } else { "" };
    let (product, voter) = match kind.as_str() {
        "reviews" => ("v", ""),
        "customer" => ("v", " data-rave-voter=\"customer-7\""),
        "family" => ("tee-red", " data-rave-group=\"tee\""),
        _ => ("p", ""),
    };
    let content = if kind == "fragment" {
        let fragment = reqwest::get(format!("{rave}/fragments/products/p"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        format!("<h1>Steel kettle</h1><p>Our best kettle.</p>{fragment}")
    } else {
        format!(
            "<h1>Steel kettle</h1><p>Our best kettle.</p><button>Add to basket</button>\
             <div data-rave-product=\"{product}\"{voter} style=\"--rave-accent: rgb(0, 90, 200)\"></div>\
             <script src=\"{rave}/embed.js\" async></script>"
        )
    };
    Html(format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Shop</title>{style}</head>\
         <body style=\"font-family: sans-serif; max-width: 50rem; margin: 1rem auto\">{content}</body></html>"
    ))
}

impl Session {
    /// Ends the session; every page it showed, rave's and the shops' with
    /// the embed, ran without a content-policy violation.
    async fn close(self) {
        let violations = self.browser.policy_violations(&self.client).await;
        assert!(violations.is_empty(), "{violations:#?}");
        let _ = self.client.close().await;
    }
}

async fn serve_shop(rave: String, host: &str) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let app = axum::Router::new()
        .route("/{kind}", axum::routing::get(shop_page))
        .with_state(rave);
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{host}:{port}")
}

async fn session() -> Session {
    let data = tempfile::tempdir().unwrap();
    let engine = Engine::open(data.path()).unwrap();
    let comments = Arc::new(Comments::new(
        SharedStore::new(engine.clone()),
        Config {
            table: "rave".into(),
            cursor_key: CursorKey::new([6; 32]),
            moderation: Moderation::Off,
        },
    ));
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
    let rave = format!("http://{}", listener.local_addr().unwrap());
    // `localhost` and 127.0.0.1 are different origins to the browser.
    let shop = serve_shop(rave.clone(), "localhost").await;
    let stranger = serve_shop(rave.clone(), "127.0.0.1").await;
    let config = ServerConfig {
        admin_token: None,
        rate_limit_per_minute: 0,
    };
    let state = AppState::new(comments.clone(), access, &config)
        .with_allowed_origins(vec![shop.parse::<AllowedOrigin>().unwrap()]);
    tokio::spawn(rave_server::serve(
        listener,
        state,
        std::future::pending(),
        rave_server::DEFAULT_DRAIN,
    ));

    let (client, browser) = browser::start("1000,1400").await;
    Session {
        client,
        rave,
        shop,
        stranger,
        comments,
        browser,
        _data: data,
    }
}

/// The widget's shadow root, in page scripts.
const ROOT: &str = "document.querySelector('[data-rave-product]').shadowRoot";

impl Session {
    async fn goto(&self, url: &str) {
        self.client.goto(url).await.unwrap();
    }

    async fn eval(&self, expression: &str) -> Value {
        browser::eval(&self.client, expression).await
    }

    async fn run(&self, statements: &str) {
        self.client.execute(statements, vec![]).await.unwrap();
    }

    /// Waits until a JavaScript expression is true.
    async fn until(&self, condition: &str) {
        browser::until(&self.client, condition).await
    }

    /// Changes the embed's select `name` (a filter or the order).
    async fn choose(&self, name: &str, value: &str) {
        self.run(&format!(
            "const f = {ROOT}.querySelector('.filters select[name={name}]'); f.value = '{value}'; \
             f.dispatchEvent(new Event('change'));"
        ))
        .await;
    }

    /// The titles of the comments the embed shows, in order.
    async fn titles(&self) -> Vec<String> {
        serde_json::from_value(
            self.eval(&format!(
                "[...{ITEMS}].map(li => li.querySelector('.title').textContent)"
            ))
            .await,
        )
        .unwrap()
    }

    /// Waits until the aggregator has counted `id`'s helpful votes to `n`.
    async fn until_helpful(&self, id: &str, n: u64) {
        let started = Instant::now();
        while self.comments.get(id).await.unwrap().votes.helpful != n {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the helpful votes of {id} never became {n}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn create(&self, author: &str, rating: i64, title: &str, body: &str) -> String {
        self.create_in("p", "en", author, rating, title, body).await
    }

    async fn create_in(
        &self,
        product: &str,
        language: &str,
        author: &str,
        rating: i64,
        title: &str,
        body: &str,
    ) -> String {
        self.comments
            .create(
                product,
                NewComment {
                    media: Vec::new(),
                    attributes: Default::default(),
                    author: author.into(),
                    language: language.into(),
                    rating,
                    title: Some(title.into()),
                    body: body.into(),
                    created_at: None,
                },
                None,
            )
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

    /// Computed styles of the widget's parts that a page could try to change.
    async fn widget_styles(&self) -> Value {
        self.eval(&format!(
            "(() => {{ const root = {ROOT}; const pick = (e) => {{ const s = getComputedStyle(e); \
             return [s.color, s.fontFamily, s.fontSize, s.lineHeight, s.letterSpacing, s.margin, s.display, s.backgroundColor, s.width]; }}; \
             return [pick(root.querySelector('.summary')), pick(root.querySelector('button.more')), \
                     pick(root.querySelector('.comment .body')), pick(root.querySelector('h2'))]; }})()"
        ))
        .await
    }
}

const ITEMS: &str =
    "document.querySelector('[data-rave-product]').shadowRoot.querySelectorAll('li.comment')";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_embed_of_a_variant_with_data_rave_group_shows_its_whole_family() {
    use rave_comments::{AttributeDeclaration, AttributeKind, AttributeName, DeclaredAttributes};
    let s = session().await;
    // The family asks for quality; its variants declare nothing of their own.
    let quality = DeclaredAttributes::new(vec![AttributeDeclaration {
        name: AttributeName::parse("quality").unwrap(),
        kind: AttributeKind::Rating,
    }])
    .unwrap();
    s.comments
        .put_product(
            "tee",
            ProductRecord {
                name: "Tee".into(),
                attributes: quality,
                ..ProductRecord::default()
            },
        )
        .await
        .unwrap();
    for colour in ["red", "blue"] {
        s.comments
            .put_product(
                &format!("tee-{colour}"),
                ProductRecord {
                    name: format!("Tee, {colour}"),
                    group: Some("tee".into()),
                    ..ProductRecord::default()
                },
            )
            .await
            .unwrap();
    }
    s.create_in("tee-red", "en", "ann", 5, "Red is bright", "fine")
        .await;
    s.create_in("tee-red", "en", "bob", 4, "Runs small", "fine")
        .await;
    s.create_in("tee-blue", "en", "cy", 2, "Blue faded", "meh")
        .await;
    s.create_in("shoe", "en", "dee", 1, "Not in the family", "no")
        .await;

    s.goto(&format!("{}/family", s.shop)).await;
    s.until(&format!("{ITEMS}.length === 3")).await;
    let titles = s
        .eval(&format!(
            "Array.from({ITEMS}, li => li.querySelector('.title').textContent).join('|')"
        ))
        .await;
    let titles = titles.as_str().unwrap_or_default().to_owned();
    for title in ["Red is bright", "Runs small", "Blue faded"] {
        assert!(titles.contains(title), "{titles}");
    }
    assert!(!titles.contains("Not in the family"), "{titles}");
    // The family's statistics: every variant counted, nothing else.
    s.until(&format!(
        "{ROOT}.querySelector('.count').textContent === '3'"
    ))
    .await;
    // The form asks what the variant asks (its family's quality), and the
    // answer posted shows on the new comment.
    s.run(&format!(
        "const root = {ROOT}; root.querySelector('input[name=author]').value = 'eve'; \
         root.querySelector('textarea[name=body]').value = 'Soft cotton'; \
         root.querySelector('select[name=\"attributes.quality\"]').value = '4'; \
         root.querySelector('form').requestSubmit();"
    ))
    .await;
    s.until(&format!("{ITEMS}.length === 4")).await;
    let answers = s
        .eval(&format!(
            "[...{ROOT}.querySelectorAll('li .meta')].map((n) => n.textContent)"
        ))
        .await;
    assert!(
        answers.as_array().unwrap().contains(&json!("Quality: 4/5")),
        "{answers}"
    );
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_embed_on_a_shops_page() {
    let s = session().await;
    s.comments
        .put_product(
            "p",
            ProductRecord {
                name: "Steel kettle".into(),
                ..ProductRecord::default()
            },
        )
        .await
        .unwrap();
    for i in 0..24 {
        s.create(
            &format!("buyer{i}"),
            1 + i % 5,
            &format!("title {i}"),
            "fine",
        )
        .await;
    }
    let hostile = s
        .create(
            "</script><img src=x onerror=\"window.pwned=1\">",
            5,
            "<script>window.pwned=2</script>\u{202e}gnp.exe",
            "<img src=x onerror=\"window.pwned=3\"> \" ' </p>",
        )
        .await;
    let reply = "<img src=x onerror=\"window.pwned=4\"> Thanks!";
    s.comments.set_reply(&hostile, reply).await.unwrap();

    // Renders: the newest 20, the statistics once the aggregator has them.
    s.goto(&format!("{}/plain", s.shop)).await;
    s.until(&format!("{ITEMS}.length === 20")).await;
    s.until(&format!(
        "{ROOT}.querySelector('.count').textContent === '25'"
    ))
    .await;
    let average = s
        .eval(&format!("{ROOT}.querySelector('.average').textContent"))
        .await;
    let stats = s.comments.product_stats("p", None).await.unwrap();
    assert_eq!(average, format!("{:.2}", stats.average().unwrap()));
    assert_eq!(
        s.eval(&format!(
            "{ROOT}.querySelectorAll('.histogram .bar').length"
        ))
        .await,
        5
    );

    // Hostile text is text: no element, no script ran (the photo viewer's
    // own image is the embed's).
    assert_eq!(
        s.eval(&format!(
            "{ROOT}.querySelectorAll('img:not(dialog img), script').length"
        ))
        .await,
        0
    );
    assert_eq!(s.eval("window.pwned === undefined").await, true);
    let author = s
        .eval(&format!(
            "{ROOT}.querySelector('.comment .author').textContent"
        ))
        .await;
    assert_eq!(author, "</script><img src=x onerror=\"window.pwned=1\">");
    assert_eq!(
        s.eval(&format!(
            "{ROOT}.querySelector('.comment .reply bdi').textContent"
        ))
        .await,
        reply,
        "the merchant's reply shows under its comment, as text"
    );
    assert_eq!(
        s.eval(&format!("{ROOT}.querySelectorAll('.reply').length"))
            .await,
        1
    );
    assert_eq!(
        s.eval(&format!(
            "{ROOT}.querySelector('.comment .title bdi').textContent.includes('\\u202e')"
        ))
        .await,
        true,
        "the override stays inside its isolate"
    );
    s.screenshot("embed.png").await;

    // Two clicks in a row load one page: 25 comments, none twice.
    s.run(&format!(
        "const more = {ROOT}.querySelector('button.more'); more.click(); more.click();"
    ))
    .await;
    s.until(&format!("{ITEMS}.length === 25")).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let ids = s
        .eval(&format!(
            "[...{ITEMS}].map(li => li.querySelector('.title').textContent + li.querySelector('.author').textContent)"
        ))
        .await;
    let ids = ids.as_array().unwrap();
    assert_eq!(ids.len(), 25);
    let unique: std::collections::BTreeSet<String> =
        ids.iter().map(|v| v.as_str().unwrap().to_owned()).collect();
    assert_eq!(unique.len(), 25, "no duplicates");
    assert_eq!(
        s.eval(&format!("{ROOT}.querySelector('button.more').hidden"))
            .await,
        true
    );

    // A filter replaces the list.
    s.run(&format!(
        "const f = {ROOT}.querySelector('.filters select[name=rating]'); f.value = '5'; f.dispatchEvent(new Event('change'));"
    ))
    .await;
    s.until(&format!("{ITEMS}.length === 5")).await;
    s.run(&format!(
        "const f = {ROOT}.querySelector('.filters select[name=rating]'); f.value = ''; f.dispatchEvent(new Event('change'));"
    ))
    .await;
    s.until(&format!("{ITEMS}.length === 20")).await;

    // Errors show beside their field, from the problem's field member.
    let fill = |author: &str, body: &str| {
        format!(
            "const root = {ROOT}; root.querySelector('input[name=author]').value = {author}; \
             root.querySelector('textarea[name=body]').value = {body}; \
             root.querySelector('form select[name=rating]').value = '4'; \
             root.querySelector('form').requestSubmit();",
            author = json!(author),
            body = json!(body),
        )
    };
    s.run(&fill("carol", "")).await;
    s.until(&format!(
        "!{ROOT}.querySelector('.error[data-field=body]').hidden"
    ))
    .await;
    assert_eq!(
        s.eval(&format!(
            "{ROOT}.querySelector('.error[data-field=author]').hidden"
        ))
        .await,
        true
    );
    // Posting puts the comment first.
    s.run(&fill("carol", "Posted from the shop")).await;
    s.until(&format!(
        "{ITEMS}[0].querySelector('.body').textContent === 'Posted from the shop'"
    ))
    .await;
    assert_eq!(
        s.eval(&format!(
            "{ROOT}.querySelector('.error[data-field=body]').hidden"
        ))
        .await,
        true
    );

    // The shop's stylesheet does not reach the widget.
    let plain = s.widget_styles().await;
    s.goto(&format!("{}/hostile", s.shop)).await;
    s.until(&format!("{ITEMS}.length === 20")).await;
    s.until(&format!("!{ROOT}.querySelector('button.more').hidden"))
        .await;
    let hostile = s.widget_styles().await;
    assert_eq!(plain, hostile, "the page's styles leaked in");
    // And the widget's styles stay in it: the shop's own button is the
    // shop's.
    let shop_button = s
        .eval("getComputedStyle(document.querySelector('body > button')).backgroundColor")
        .await;
    assert_eq!(shop_button, "rgb(0, 255, 0)");
    // Themable from the page: the accent comes from the host's property.
    let accent = s
        .eval(&format!(
            "getComputedStyle({ROOT}.querySelector('button.more')).backgroundColor"
        ))
        .await;
    assert_eq!(accent, "rgb(0, 90, 200)");

    // CORS from the browser: the allowed origin may post (a preflighted
    // request), another origin may not.
    let post = format!(
        "return await fetch('{}/v1/products/p/comments', {{method: 'POST', \
         headers: {{'Content-Type': 'application/json', 'Idempotency-Key': 'k-' + Math.random()}}, \
         body: JSON.stringify({{author: 'x', language: 'en', rating: 3, body: 'cors'}})}}) \
         .then(r => r.status, e => 'blocked');",
        s.rave
    );
    assert_eq!(s.client.execute(&post, vec![]).await.unwrap(), 201);
    s.goto(&format!("{}/plain", s.stranger)).await;
    s.until(&format!("!{ROOT}.querySelector('.rave .error').hidden"))
        .await;
    assert_eq!(s.eval(&format!("{ITEMS}.length")).await, 0);
    assert_eq!(s.client.execute(&post, vec![]).await.unwrap(), "blocked");

    // The fragment in a shop's page, and rave's own page: screenshots.
    s.goto(&format!("{}/fragment", s.shop)).await;
    s.until("document.querySelectorAll('.rave-comment').length === 20")
        .await;
    assert_eq!(s.eval("window.pwned === undefined").await, true);
    s.screenshot("fragment.png").await;
    s.goto(&format!("{}/products/p", s.rave)).await;
    s.until("document.querySelectorAll('.rave-comment').length === 20")
        .await;
    assert_eq!(s.eval("window.pwned === undefined").await, true);
    s.screenshot("product-page.png").await;
    s.close().await;
}

const PAGE_ITEMS: &str = "document.querySelectorAll('#comments li')";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_pages_known_defects_are_gone() {
    let s = session().await;
    for i in 0..45 {
        let language = if i % 2 == 0 { "en" } else { "de" };
        s.create_in(
            "w",
            language,
            "ann",
            1 + i % 5,
            "t",
            &format!("comment {i}"),
        )
        .await;
    }
    s.create_in("w", "sv", "sven", 5, "t", "på svenska").await;

    // A fresh page opens on a product (the leaderboard's first) by itself.
    s.goto(&format!("{}/", s.rave)).await;
    s.until(&format!("{PAGE_ITEMS}.length === 20")).await;
    assert_eq!(
        s.eval("document.querySelector('#product').value").await,
        "w"
    );
    assert!(
        s.eval("location.search")
            .await
            .as_str()
            .unwrap()
            .contains("product=w")
    );

    // The language filter offers the product's languages, from one list.
    s.until("[...document.querySelectorAll('#language option')].some(o => o.value === 'sv')")
        .await;
    for select in ["#language", "#post-language", "#leaderboard-language"] {
        let has_english = s
            .eval(&format!(
                "[...document.querySelectorAll('{select} option')].some(o => o.value === 'en')"
            ))
            .await;
        assert_eq!(has_english, true, "{select}");
    }

    // Listings ask for their plan only while its panel is open.
    s.run(
        "window.requested = []; const original = window.fetch; \
         window.fetch = (url, options) => { window.requested.push(String(url)); \
           const delay = String(url).includes('language=de') ? 700 : 0; \
           return new Promise((resolve) => setTimeout(resolve, delay)).then(() => original(url, options)); };",
    )
    .await;
    s.run("const b = document.querySelector('input[name=rating][value=\"5\"]'); b.click();")
        .await;
    s.until(&format!("{PAGE_ITEMS}.length === 10")).await;
    s.run("const b = document.querySelector('input[name=rating][value=\"5\"]'); b.click();")
        .await;
    s.until(&format!("{PAGE_ITEMS}.length === 20")).await;
    let explained = s
        .eval("window.requested.filter(u => u.includes('/comments') && u.includes('explain=true')).length")
        .await;
    assert_eq!(explained, 0, "the plan was asked for with its panel closed");
    s.run("document.querySelector('#plan-panel summary').click();")
        .await;
    s.until("window.requested.some(u => u.includes('explain=true'))")
        .await;
    s.until("document.querySelector('#plan').textContent.includes('Strategy')")
        .await;
    s.run("document.querySelector('#plan-panel summary').click();")
        .await;

    // An older filter's answer arriving last does not replace the newer's.
    s.run(
        "const l = document.querySelector('#language'); \
         l.value = 'de'; l.dispatchEvent(new Event('change')); \
         l.value = 'en'; l.dispatchEvent(new Event('change'));",
    )
    .await;
    s.until(&format!("{PAGE_ITEMS}.length === 20")).await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let languages = s
        .eval(&format!(
            "[...new Set([...{PAGE_ITEMS}].map(li => li.querySelector('span[lang]').lang))]"
        ))
        .await;
    assert_eq!(languages, json!(["en"]), "the late German answer won");

    // Two clicks on "Load more" load one page, without duplicates.
    s.run("const l = document.querySelector('#language'); l.value = ''; l.dispatchEvent(new Event('change'));")
        .await;
    // The unfiltered page has arrived (the English one had 20 items too).
    s.until(&format!(
        "{PAGE_ITEMS}.length === 20 && !document.querySelector('#load-more').hidden \
         && [...{PAGE_ITEMS}].some(li => li.querySelector('span[lang]').lang === 'de')"
    ))
    .await;
    s.run("const more = document.querySelector('#load-more'); more.click(); more.click();")
        .await;
    s.until(&format!("{PAGE_ITEMS}.length >= 40")).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let ids = s
        .eval(&format!("[...{PAGE_ITEMS}].map(li => li.dataset.id)"))
        .await;
    let ids = ids.as_array().unwrap();
    assert_eq!(ids.len(), 40);
    let unique: std::collections::BTreeSet<&str> =
        ids.iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(unique.len(), 40);

    // A field error lands beside the field the problem's `field` names.
    s.run("document.querySelector('#post-body').value = 'no name'; document.querySelector('#post-form').requestSubmit();")
        .await;
    s.until("document.querySelector('#error-author').textContent !== ''")
        .await;
    assert_eq!(
        s.eval("document.querySelector('#error-form').textContent")
            .await,
        ""
    );
    s.close().await;
}

/// The vote button of the comment titled `title` (`true`: "Helpful").
fn vote_button(title: &str, helpful: bool) -> String {
    format!(
        "[...{ITEMS}].find(li => li.querySelector('.title').textContent === {title}) \
         .querySelector('.votes button[data-helpful={helpful}]')",
        title = json!(title)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_embed_shows_orders_verified_purchases_replies_and_votes() {
    let s = session().await;
    let new = |title: &str, rating: i64, second: i64| NewComment {
        media: Vec::new(),
        attributes: Default::default(),
        author: "ann".into(),
        language: "en".into(),
        rating,
        title: Some(title.into()),
        body: "b".into(),
        created_at: Some(Timestamp::from_millis(1_780_000_000_000 + second * 1000).unwrap()),
    };
    // Oldest first: low, filler 0..19, verified, newest.
    s.comments
        .create("v", new("low", 1, 0), None)
        .await
        .unwrap();
    let mut oldest_first = vec!["low".to_owned()];
    for i in 0..20 {
        let title = format!("filler {i:02}");
        s.comments
            .create("v", new(&title, 3, 1 + i), None)
            .await
            .unwrap();
        oldest_first.push(title);
    }
    let verified = s
        .comments
        .create_verified(
            "v",
            new("verified", 5, 30),
            None,
            &OrderId::parse("o-1").unwrap(),
        )
        .await
        .unwrap()
        .comment
        .id;
    let newest = s
        .comments
        .create("v", new("newest", 4, 40), None)
        .await
        .unwrap()
        .comment
        .id;
    oldest_first.extend(["verified".to_owned(), "newest".to_owned()]);
    let reply = s
        .comments
        .set_reply(&verified, "<b>Glad</b> it works")
        .await
        .unwrap()
        .reply
        .unwrap();

    s.goto(&format!("{}/reviews", s.shop)).await;
    s.until(&format!("{ITEMS}.length === 20")).await;
    let mut newest_first = oldest_first.clone();
    newest_first.reverse();
    assert_eq!(s.titles().await, newest_first[..20]);

    // The badge only on the verified purchase; the reply, as text, with its
    // date, under its comment.
    let badges = s
        .eval(&format!(
            "[...{ITEMS}].filter(li => li.querySelector('.verified')).map(li => li.querySelector('.title').textContent)"
        ))
        .await;
    assert_eq!(badges, json!(["verified"]));
    let replied = format!("{ITEMS}[1].querySelector('.reply')");
    assert_eq!(
        s.eval(&format!("{replied}.querySelector('bdi').textContent"))
            .await,
        "<b>Glad</b> it works"
    );
    assert_eq!(
        s.eval(&format!("{replied}.querySelectorAll('b').length"))
            .await,
        0
    );
    let updated = reply.updated_at.to_string();
    assert_eq!(
        s.eval(&format!("{replied}.querySelector('time').dateTime"))
            .await,
        updated.as_str()
    );
    assert_eq!(
        s.eval(&format!("{replied}.querySelector('time').textContent"))
            .await,
        &updated[..10]
    );
    assert_eq!(
        s.eval(&format!("{ROOT}.querySelectorAll('.reply').length"))
            .await,
        1
    );

    // Verified purchases only, and back.
    s.run(&format!(
        "const v = {ROOT}.querySelector('input[name=verified]'); v.click();"
    ))
    .await;
    s.until(&format!("{ITEMS}.length === 1")).await;
    assert_eq!(s.titles().await, ["verified"]);
    assert_eq!(
        s.eval(&format!("{ROOT}.querySelector('button.more').hidden"))
            .await,
        true
    );
    s.run(&format!(
        "const v = {ROOT}.querySelector('input[name=verified]'); v.click();"
    ))
    .await;
    s.until(&format!("{ITEMS}.length === 20")).await;

    // The orders: the choice replaces the list, "Load more" keeps it.
    let options = s
        .eval(&format!(
            "[...{ROOT}.querySelectorAll('select[name=sort] option')].map(o => o.value)"
        ))
        .await;
    assert_eq!(
        options,
        json!(["newest", "oldest", "highest", "lowest", "helpful"])
    );
    s.choose("sort", "oldest").await;
    s.until(&format!(
        "{ITEMS}.length === 20 && {ITEMS}[0].querySelector('.title').textContent === 'low'"
    ))
    .await;
    s.run(&format!("{ROOT}.querySelector('button.more').click();"))
        .await;
    s.until(&format!("{ITEMS}.length === 23")).await;
    assert_eq!(s.titles().await, oldest_first);
    s.choose("sort", "highest").await;
    s.until(&format!(
        "{ITEMS}.length === 20 && {ITEMS}[0].querySelector('.title').textContent === 'verified'"
    ))
    .await;
    assert_eq!(s.titles().await[..3], ["verified", "newest", "filler 19"]);
    s.choose("sort", "lowest").await;
    s.until(&format!(
        "{ITEMS}.length === 20 && {ITEMS}[0].querySelector('.title').textContent === 'low'"
    ))
    .await;
    assert_eq!(s.titles().await[1], "filler 19");
    // The verified filter combines with the order.
    s.run(&format!(
        "const v = {ROOT}.querySelector('input[name=verified]'); v.click();"
    ))
    .await;
    s.until(&format!("{ITEMS}.length === 1")).await;
    assert_eq!(s.titles().await, ["verified"]);
    s.run(&format!(
        "const v = {ROOT}.querySelector('input[name=verified]'); v.click();"
    ))
    .await;
    s.choose("sort", "newest").await;
    s.until(&format!(
        "{ITEMS}.length === 20 && {ITEMS}[0].querySelector('.title').textContent === 'newest'"
    ))
    .await;

    // A vote, across origins (a preflighted PUT): the button counts it at
    // once, the aggregator counts it, and the most helpful order then puts
    // the comment first with the server's count.
    let helpful = vote_button("newest", true);
    assert_eq!(
        s.eval(&format!("{helpful}.textContent")).await,
        "Helpful (0)"
    );
    s.run(&format!("{helpful}.click();")).await;
    s.until(&format!(
        "{helpful}.getAttribute('aria-pressed') === 'true'"
    ))
    .await;
    assert_eq!(
        s.eval(&format!("{helpful}.textContent")).await,
        "Helpful (1)"
    );
    assert_eq!(
        s.eval(&format!("{ROOT}.querySelector('.rave .error').hidden"))
            .await,
        true
    );
    s.until_helpful(&newest, 1).await;
    s.choose("sort", "helpful").await;
    s.until(&format!(
        "{ITEMS}[0].querySelector('.title').textContent === 'newest'"
    ))
    .await;
    let helpful = vote_button("newest", true);
    assert_eq!(
        s.eval(&format!("{helpful}.textContent")).await,
        "Helpful (1)"
    );
    assert_eq!(
        s.eval(&format!("{helpful}.getAttribute('aria-pressed')"))
            .await,
        "true"
    );
    // The voter is the random id this browser keeps for the shop: rave knows
    // the vote by it.
    let voter = s.eval("localStorage.getItem('rave-voter')").await;
    let voter = voter.as_str().unwrap();
    assert_eq!(voter.len(), 32, "{voter}");
    s.comments.withdraw_vote(&newest, voter).await.unwrap();
    s.until_helpful(&newest, 0).await;
    // Pressing it again withdraws it (a preflighted DELETE) ...
    s.comments.vote(&newest, voter, true).await.unwrap();
    s.until_helpful(&newest, 1).await;
    s.run(&format!("{helpful}.click();")).await;
    s.until(&format!(
        "{helpful}.getAttribute('aria-pressed') === 'false'"
    ))
    .await;
    assert_eq!(
        s.eval(&format!("{helpful}.textContent")).await,
        "Helpful (0)"
    );
    s.until_helpful(&newest, 0).await;
    // ... and the other button casts the other vote.
    let unhelpful = vote_button("newest", false);
    s.run(&format!("{unhelpful}.click();")).await;
    s.until(&format!("{unhelpful}.textContent === 'Not helpful (1)'"))
        .await;
    let started = Instant::now();
    while s.comments.get(&newest).await.unwrap().votes.unhelpful != 1 {
        assert!(started.elapsed() < Duration::from_secs(10));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // A shop that knows its customer votes as that customer.
    s.goto(&format!("{}/customer", s.shop)).await;
    s.until(&format!("{ITEMS}.length === 20")).await;
    let helpful = vote_button("verified", true);
    s.run(&format!("{helpful}.click();")).await;
    s.until(&format!(
        "{helpful}.getAttribute('aria-pressed') === 'true'"
    ))
    .await;
    s.until_helpful(&verified, 1).await;
    s.comments
        .withdraw_vote(&verified, "customer-7")
        .await
        .unwrap();
    s.until_helpful(&verified, 0).await;

    // A comment posted while another order is chosen is not put first: the
    // embed says it is posted.
    s.choose("sort", "oldest").await;
    s.until(&format!(
        "{ITEMS}[0].querySelector('.title').textContent === 'low'"
    ))
    .await;
    s.run(&format!(
        "const root = {ROOT}; root.querySelector('input[name=author]').value = 'dan'; \
         root.querySelector('input[name=title]').value = 'posted'; \
         root.querySelector('textarea[name=body]').value = 'from the shop'; \
         root.querySelector('form').requestSubmit();"
    ))
    .await;
    s.until(&format!("!{ROOT}.querySelector('.form .notice').hidden"))
        .await;
    assert_eq!(s.titles().await[0], "low");
    assert!(!s.titles().await.contains(&"posted".to_owned()));
    s.close().await;
}

#[tokio::test]
async fn the_embed_shows_sub_ratings_as_bars_and_fit_as_a_scale() {
    use rave_comments::{
        AttributeDeclaration, AttributeInput, AttributeKind, AttributeName, DeclaredAttributes,
    };
    let s = session().await;
    let attributes = DeclaredAttributes::new(vec![
        AttributeDeclaration {
            name: AttributeName::parse("quality").unwrap(),
            kind: AttributeKind::Rating,
        },
        AttributeDeclaration {
            name: AttributeName::parse("fit").unwrap(),
            kind: AttributeKind::Choice(vec![
                "runs_small".into(),
                "true_to_size".into(),
                "runs_large".into(),
            ]),
        },
    ])
    .unwrap();
    s.comments
        .put_product(
            "p",
            ProductRecord {
                name: "Linen shirt".into(),
                attributes,
                ..ProductRecord::default()
            },
        )
        .await
        .unwrap();
    for (author, quality, fit) in [
        ("ann", 5, "runs_small"),
        ("bo", 2, "runs_small"),
        ("cy", 4, "runs_large"),
    ] {
        let answers = [
            ("quality".to_owned(), AttributeInput::Integer(quality)),
            ("fit".to_owned(), AttributeInput::Text(fit.into())),
        ]
        .into();
        s.comments
            .create(
                "p",
                NewComment {
                    media: Vec::new(),
                    attributes: answers,
                    author: author.into(),
                    language: "en".into(),
                    rating: 4,
                    title: Some(format!("by {author}")),
                    body: "fine".into(),
                    created_at: None,
                },
                None,
            )
            .await
            .unwrap();
    }
    s.goto(&format!("{}/plain", s.shop)).await;
    s.until(&format!("{ITEMS}.length === 3")).await;
    // The statistics' grid after the star histogram: quality's bar, then
    // fit's scale in the declared order.
    let rows = format!("[...{ROOT}.querySelectorAll('.histogram')[1].children]");
    s.until(&format!("{rows}.length === 12")).await;
    let shown = s
        .eval(&format!(
            "{rows}.map((n) => n.classList.contains('bar') ? Math.round(parseFloat(n.firstChild.style.width)) + '%' : n.textContent)"
        ))
        .await;
    let expected: Vec<String> = [
        "Quality",
        "73%",
        "3.7",
        "Fit: Runs small",
        "67%",
        "2",
        "Fit: True to size",
        "0%",
        "0",
        "Fit: Runs large",
        "33%",
        "1",
    ]
    .map(str::to_owned)
    .to_vec();
    assert_eq!(shown, json!(expected));
    // The list and the statistics' grid render apart: wait for the list's
    // answers before reading them.
    let answer_lines = format!("[...{ROOT}.querySelectorAll('li .meta + .meta')]");
    s.until(&format!("{answer_lines}.length > 0")).await;
    let answers = s
        .eval(&format!("{answer_lines}.map((n) => n.textContent)"))
        .await;
    assert!(
        answers
            .as_array()
            .unwrap()
            .contains(&json!("Quality: 5/5 · Fit: Runs small")),
        "{answers}"
    );

    // The form asks for them, each optional; a post carries the answers.
    s.run(&format!(
        "const root = {ROOT}; root.querySelector('input[name=author]').value = 'dee'; \
         root.querySelector('textarea[name=body]').value = 'Lovely linen'; \
         root.querySelector('select[name=\"attributes.quality\"]').value = '3'; \
         root.querySelector('select[name=\"attributes.fit\"]').value = 'true_to_size'; \
         root.querySelector('form').requestSubmit();"
    ))
    .await;
    s.until(&format!("{ITEMS}.length === 4")).await;
    // The comment shown is the server's answer to the post.
    let answers = s
        .eval(&format!(
            "[...{ROOT}.querySelectorAll('li .meta + .meta')].map((n) => n.textContent)"
        ))
        .await;
    assert!(
        answers
            .as_array()
            .unwrap()
            .contains(&json!("Quality: 3/5 · Fit: True to size")),
        "{answers}"
    );
    s.close().await;
}
