//! Comments' photos in headless Chromium: the product page's thumbnails
//! load and open the display size without script; the embed on a shop's
//! page (another origin than rave, as it would be) shows thumbnails whose
//! viewer opens with Enter, takes the focus, moves between a comment's
//! photos with the arrow keys and closes with Escape, handing the focus
//! back; and a photo posted from the embed's form (a preview first, then
//! `multipart/form-data`) appears as a thumbnail that opens in the viewer.
//! On the web page, the form previews photos before posting, and the
//! moderation view decides each photo of a queued comment on its own.
//! Photos are put into the media store and named by comments through the
//! domain, as an upload does. chromedriver and Chromium as in
//! tests/browser.rs.

#[path = "common/browser.rs"]
mod browser;
#[path = "common/photos.rs"]
mod photos;

use std::sync::Arc;

use axum::extract::State;
use axum::response::Html;
use fantoccini::Client;
use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::elements::{Element, ElementRef};
use fantoccini::key::Key;
use rave_access::{Access, AccessConfig};
use rave_comments::{Comments, Config, CursorKey, Moderation, NewComment, NewPhoto};
use rave_engine::{Engine, EngineFeed};
use rave_media::{DiskStore, MediaStore};
use rave_server::{AllowedOrigin, AppState, ServerConfig};
use rave_store::SharedStore;
use serde_json::Value;

struct Session {
    client: Client,
    /// rave, at 127.0.0.1.
    rave: String,
    /// The shop whose origin is allowed, at `localhost`: its page embeds
    /// product `p`.
    shop: String,
    comments: Arc<Comments<SharedStore>>,
    media: MediaStore,
    browser: browser::Browser,
    data: tempfile::TempDir,
}

async fn shop_page(State(rave): State<String>) -> Html<String> {
    Html(format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Shop</title></head>\
         <body><h1>Linen shirt</h1><div data-rave-product=\"p\"></div>\
         <script src=\"{rave}/embed.js\" async></script></body></html>"
    ))
}

/// The web page's staff token, in sessions that moderate.
const TOKEN: &str = "photos-browser-token";

async fn session() -> Session {
    session_with(Moderation::Off).await
}

async fn session_with(moderation: Moderation) -> Session {
    let data = tempfile::tempdir().unwrap();
    let engine = Engine::open(data.path()).unwrap();
    let comments = Arc::new(Comments::new(
        SharedStore::new(engine.clone()),
        Config {
            table: "rave".into(),
            cursor_key: CursorKey::new([8; 32]),
            moderation,
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
    let media = MediaStore::Disk(DiskStore::open(data.path().join("media")).unwrap());

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let rave = format!("http://{}", listener.local_addr().unwrap());
    let shop_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    // `localhost` and 127.0.0.1 are different origins to the browser.
    let shop = format!(
        "http://localhost:{}",
        shop_listener.local_addr().unwrap().port()
    );
    let app = axum::Router::new()
        .route("/", axum::routing::get(shop_page))
        .with_state(rave.clone());
    tokio::spawn(async move { axum::serve(shop_listener, app).await });
    let config = ServerConfig {
        admin_token: Some(TOKEN.into()),
        rate_limit_per_minute: 0,
    };
    let state = AppState::new(comments.clone(), access, &config)
        .with_allowed_origins(vec![shop.parse::<AllowedOrigin>().unwrap()])
        .with_media(media.clone());
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
        comments,
        media,
        browser,
        data,
    }
}

/// The embed's shadow root, in page scripts.
const ROOT: &str = "document.querySelector('[data-rave-product]').shadowRoot";

impl Session {
    async fn eval(&self, expression: &str) -> Value {
        browser::eval(&self.client, expression).await
    }

    /// Waits until a JavaScript expression is true.
    async fn until(&self, condition: &str) {
        browser::until(&self.client, condition).await
    }

    /// Presses `key` wherever the focus is, as a person at the keyboard
    /// does (no element is focused for it).
    async fn press(&self, key: Key) {
        let key = char::from(key);
        self.client
            .perform_actions(
                KeyActions::new("keyboard".into())
                    .then(KeyAction::Down { value: key })
                    .then(KeyAction::Up { value: key }),
            )
            .await
            .unwrap();
    }

    /// The element a script expression names, to drive through WebDriver.
    async fn element(&self, expression: &str) -> Element {
        let found = self.eval(expression).await;
        let id = found
            .as_object()
            .and_then(|reference| reference.values().next())
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("`{expression}` is no element: {found}"));
        Element::from_element_id(self.client.clone(), ElementRef::from(id.to_owned()))
    }

    async fn comment_with_photos(&self, author: &str, media: Vec<NewPhoto>) -> String {
        self.comments
            .create(
                "p",
                NewComment {
                    author: author.into(),
                    language: "en".into(),
                    rating: 5,
                    title: Some("True to size".into()),
                    body: "Photos of the fit.".into(),
                    created_at: None,
                    attributes: Default::default(),
                    media,
                },
                None,
            )
            .await
            .unwrap()
            .comment
            .id
    }

    /// The embed reads photos from the listing's `media` (PHOTOS.md's API
    /// shape, written by the API's part): say so plainly when it is not
    /// there, rather than time out waiting for thumbnails.
    async fn assert_listings_carry_media(&self) {
        let listing: Value = reqwest::get(format!("{}/v1/products/p/comments", self.rave))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert!(
            listing["items"][0]["media"].is_array(),
            "the listing's comments carry no `media` (the API's photos, PHOTOS.md): {listing}"
        );
    }

    /// What the viewer shows: whether it is open, its accessible name, and
    /// whether the focus is inside it.
    async fn viewer(&self) -> Value {
        self.eval(&format!(
            "(() => {{ const root = {ROOT}; const dialog = root.querySelector('dialog'); \
             return [dialog.open, dialog.getAttribute('aria-label'), dialog.contains(root.activeElement)]; }})()"
        ))
        .await
    }

    /// Ends the session; every page it showed ran without a
    /// content-policy violation.
    async fn close(self) {
        let violations = self.browser.policy_violations(&self.client).await;
        assert!(violations.is_empty(), "{violations:#?}");
        let _ = self.client.close().await;
    }
}

/// Each thumbnail of the embed has loaded a real image.
const THUMBNAILS_LOADED: &str = "(() => { const images = [...document.querySelector('[data-rave-product]').shadowRoot.querySelectorAll('.comments .photo img')]; \
     return images.length > 0 && images.every((img) => img.complete && img.naturalWidth > 0) ? images.length : 0; })()";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_product_page_shows_thumbnails_that_open_the_display_size_without_script() {
    let s = session().await;
    let photo = photos::stored(&s.media, 1200, 900, 21).await;
    s.comment_with_photos("Ann", vec![photo.clone()]).await;
    s.client
        .goto(&format!("{}/products/p", s.rave))
        .await
        .unwrap();
    s.until(
        "[...document.querySelectorAll('.rave-photos img')].every((img) => img.complete && img.naturalWidth > 0) \
         && document.querySelectorAll('.rave-photos img').length === 1",
    )
    .await;
    // The room kept for it has the photo's shape (4:3), before and after.
    assert_eq!(
        s.eval("(() => { const img = document.querySelector('.rave-photos img'); return [img.getAttribute('width'), img.getAttribute('height'), img.alt, img.currentSrc.endsWith('/thumb.webp')]; })()")
            .await,
        serde_json::json!(["320", "240", "Photo 1 of 1 by \u{2068}Ann\u{2069}", true])
    );
    s.client
        .find(fantoccini::Locator::Css(".rave-photos a"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    s.until("location.pathname.endsWith('/display.jpg')").await;
    assert_eq!(
        s.eval("location.pathname").await,
        format!("/media/{}/display.jpg", photo.id)
    );
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_comments_photos_open_in_a_viewer_that_the_keyboard_drives() {
    let s = session().await;
    let mut media = Vec::new();
    for seed in 1..=3 {
        media.push(photos::stored(&s.media, 800, 600, seed).await);
    }
    s.comment_with_photos("Ann", media).await;
    s.assert_listings_carry_media().await;
    s.client.goto(&format!("{}/", s.shop)).await.unwrap();
    s.until(&format!("{THUMBNAILS_LOADED} === 3")).await;
    assert_eq!(
        s.eval(&format!(
            "[...{ROOT}.querySelectorAll('.comments .photo img')].map((img) => img.alt)"
        ))
        .await,
        serde_json::json!([
            "Photo 1 of 3 by Ann",
            "Photo 2 of 3 by Ann",
            "Photo 3 of 3 by Ann"
        ])
    );
    // Enter on the first thumbnail opens the viewer, focus inside it.
    s.client
        .execute(
            &format!("{ROOT}.querySelector('.comments .photo').focus();"),
            vec![],
        )
        .await
        .unwrap();
    s.press(Key::Enter).await;
    s.until(&format!("{ROOT}.querySelector('dialog').open"))
        .await;
    assert_eq!(
        s.viewer().await,
        serde_json::json!([true, "Photo 1 of 3 by Ann", true])
    );
    s.until(&format!(
        "{ROOT}.querySelector('dialog img').complete && {ROOT}.querySelector('dialog img').naturalWidth === 800"
    ))
    .await;
    // The arrow keys move between the comment's photos, round the ends.
    s.press(Key::Right).await;
    assert_eq!(
        s.viewer().await,
        serde_json::json!([true, "Photo 2 of 3 by Ann", true])
    );
    s.press(Key::Left).await;
    s.press(Key::Left).await;
    assert_eq!(
        s.viewer().await,
        serde_json::json!([true, "Photo 3 of 3 by Ann", true])
    );
    // Escape closes it, and the focus is back on the thumbnail.
    s.press(Key::Escape).await;
    s.until(&format!("!{ROOT}.querySelector('dialog').open"))
        .await;
    assert_eq!(
        s.eval(&format!(
            "{ROOT}.activeElement === {ROOT}.querySelector('.comments .photo')"
        ))
        .await,
        true
    );
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_photo_posted_from_the_embed_appears_as_a_thumbnail_and_opens_in_the_viewer() {
    let s = session().await;
    let file = s.data.path().join("shirt.jpg");
    std::fs::write(&file, photos::jpeg(900, 1200, 42)).unwrap();
    s.client.goto(&format!("{}/", s.shop)).await.unwrap();
    s.until(&format!("{ROOT}.querySelector('form input[type=file]')"))
        .await;
    s.element(&format!("{ROOT}.querySelector('form input[type=file]')"))
        .await
        .send_keys(file.to_str().unwrap())
        .await
        .unwrap();
    // The preview is the file itself, from an object URL, before any post.
    s.until(&format!(
        "{ROOT}.querySelector('form .photos img') && {ROOT}.querySelector('form .photos img').naturalWidth === 900"
    ))
    .await;
    assert_eq!(
        s.eval(&format!(
            "{ROOT}.querySelector('form .photos img').src.startsWith('blob:')"
        ))
        .await,
        true
    );
    s.client
        .execute(
            &format!(
                "const form = {ROOT}.querySelector('form'); \
                 form.querySelector('[name=author]').value = 'Bea'; \
                 form.querySelector('[name=body]').value = 'Here is how it fits.'; \
                 form.querySelector('button[type=submit]').click();"
            ),
            vec![],
        )
        .await
        .unwrap();
    // The post is multipart/form-data (PHOTOS.md): a server that does not
    // take it answers 415, which the form shows.
    s.until(&format!(
        "{ROOT}.querySelector('.comments .photo') || !{ROOT}.querySelector('form > .error').hidden"
    ))
    .await;
    assert_eq!(
        s.eval(&format!(
            "{ROOT}.querySelector('form > .error').hidden || {ROOT}.querySelector('form > .error').textContent"
        ))
        .await,
        true,
        "the post with a photo was refused"
    );
    s.until(&format!("{THUMBNAILS_LOADED} === 1")).await;
    assert_eq!(
        s.eval(&format!(
            "[{ROOT}.querySelectorAll('form .photos img').length, {ROOT}.querySelector('.comments .photo img').alt]"
        ))
        .await,
        serde_json::json!([0, "Photo 1 of 1 by Bea"])
    );
    // The photo was stored and the comment names it.
    let posted = s
        .comments
        .export_page(0, 1, None)
        .await
        .unwrap()
        .0
        .into_iter()
        .find(|comment| comment.author == "Bea")
        .expect("the posted comment");
    assert_eq!(posted.media.len(), 1);
    assert_eq!((posted.media[0].width, posted.media[0].height), (900, 1200));
    s.client
        .execute(
            &format!("{ROOT}.querySelector('.comments .photo').focus();"),
            vec![],
        )
        .await
        .unwrap();
    s.press(Key::Enter).await;
    s.until(&format!(
        "{ROOT}.querySelector('dialog').open && {ROOT}.querySelector('dialog img').naturalWidth === 900"
    ))
    .await;
    assert_eq!(
        s.viewer().await,
        serde_json::json!([true, "Photo 1 of 1 by Bea", true])
    );
    s.press(Key::Escape).await;
    s.until(&format!("!{ROOT}.querySelector('dialog').open"))
        .await;
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_pages_form_previews_up_to_five_photos_before_posting() {
    let s = session().await;
    let mut files = Vec::new();
    for seed in 1..=6u8 {
        let file = s.data.path().join(format!("photo-{seed}.jpg"));
        std::fs::write(&file, photos::jpeg(400, 300, seed)).unwrap();
        files.push(file.to_str().unwrap().to_owned());
    }
    s.client
        .goto(&format!("{}/?view=product&product=p", s.rave))
        .await
        .unwrap();
    s.until("document.querySelector('#post-photos')").await;
    let input = s.element("document.querySelector('#post-photos')").await;
    input.send_keys(&files[..2].join("\n")).await.unwrap();
    const PREVIEWS: &str = "[...document.querySelectorAll('#post-previews img')]";
    s.until(&format!(
        "{PREVIEWS}.length === 2 && {PREVIEWS}.every((img) => img.src.startsWith('blob:') && img.naturalWidth === 400)"
    ))
    .await;
    // More are added to those chosen, up to five, saying so past them.
    input.send_keys(&files[2..].join("\n")).await.unwrap();
    s.until(&format!("{PREVIEWS}.length === 5")).await;
    assert_eq!(
        s.eval("document.querySelector('#error-photo').textContent")
            .await,
        "At most 5 photos."
    );
    // Each is removable, by a button named after it.
    s.client
        .execute(
            "document.querySelector('#post-previews button[aria-label^=\"Remove photo 1,\"]').click();",
            vec![],
        )
        .await
        .unwrap();
    s.until(&format!("{PREVIEWS}.length === 4")).await;
    assert_eq!(
        s.eval(&format!("{PREVIEWS}.map((img) => img.alt)")).await,
        serde_json::json!([
            "Photo 1, photo-2.jpg",
            "Photo 2, photo-3.jpg",
            "Photo 3, photo-4.jpg",
            "Photo 4, photo-5.jpg"
        ])
    );
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_moderation_view_approves_and_rejects_each_photo_on_its_own() {
    let s = session_with(Moderation::Pre).await;
    let kept = photos::stored(&s.media, 640, 480, 31).await;
    let refused = photos::stored(&s.media, 480, 640, 32).await;
    let id = s
        .comment_with_photos("Ann", vec![kept.clone(), refused.clone()])
        .await;
    s.client
        .goto(&format!("{}/?view=moderation", s.rave))
        .await
        .unwrap();
    s.element("document.querySelector('#admin-token')")
        .await
        .send_keys(TOKEN)
        .await
        .unwrap();
    s.client
        .execute(
            "document.querySelector('#token-form button[type=submit]').click();",
            vec![],
        )
        .await
        .unwrap();
    s.until("document.querySelectorAll('#queue li').length === 1")
        .await;
    // The moderation queue's comments carry their photos with their status
    // (PHOTOS.md's API shape, written by the API's part).
    let queue: Value = reqwest::Client::new()
        .get(format!("{}/v1/moderation/queue?state=pending", s.rave))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        queue["items"][0]["media"].is_array(),
        "the queue's comments carry no `media` (the API's photos, PHOTOS.md): {queue}"
    );
    const FIGURES: &str = "[...document.querySelectorAll('#queue li figure')]";
    s.until(&format!(
        "{FIGURES}.length === 2 && {FIGURES}.every((f) => f.querySelector('img').complete && f.querySelector('img').naturalWidth > 0)"
    ))
    .await;
    assert_eq!(
        s.eval(&format!(
            "{FIGURES}.map((f) => [f.dataset.photo, f.querySelector('.status').textContent, \
             [...f.querySelectorAll('button')].map((b) => b.getAttribute('aria-label'))])"
        ))
        .await,
        serde_json::json!([
            [
                kept.id.as_str(),
                "pending",
                ["Approve photo 1", "Reject photo 1"]
            ],
            [
                refused.id.as_str(),
                "pending",
                ["Approve photo 2", "Reject photo 2"]
            ],
        ])
    );
    s.client
        .execute(
            "document.querySelector('#queue button[aria-label=\"Reject photo 2\"]').click();",
            vec![],
        )
        .await
        .unwrap();
    // The decisions are the per-photo moderation routes (PHOTOS.md); a
    // server without them answers 404, which the page shows.
    s.until(&format!(
        "{FIGURES}.length === 1 || !document.querySelector('#notice').hidden"
    ))
    .await;
    assert_eq!(
        s.eval("document.querySelector('#notice').hidden || document.querySelector('#notice').textContent")
            .await,
        true,
        "rejecting a photo failed"
    );
    s.client
        .execute(
            "document.querySelector('#queue button[aria-label=\"Approve photo 1\"]').click();",
            vec![],
        )
        .await
        .unwrap();
    s.until(&format!(
        "{FIGURES}[0].querySelector('.status').textContent === 'published'"
    ))
    .await;
    assert_eq!(
        s.eval("document.querySelector('#notice').hidden || document.querySelector('#notice').textContent")
            .await,
        true,
        "approving a photo failed"
    );
    // The text still waits; the photos were decided one by one.
    let comment = s.comments.get(&id).await.unwrap();
    assert_eq!(comment.status, rave_comments::Status::Pending);
    assert_eq!(
        comment
            .media
            .iter()
            .map(|photo| (photo.id.clone(), photo.status))
            .collect::<Vec<_>>(),
        [(kept.id.clone(), rave_comments::PhotoStatus::Published)]
    );
    s.close().await;
}
