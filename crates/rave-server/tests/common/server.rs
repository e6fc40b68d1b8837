//! A rave server on an ephemeral port over a fresh embedded store, with
//! the admin token, optionally a purchase secret, and the domain and engine
//! beneath it for what the API does not show.

#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use rave_access::{Access, AccessConfig};
use rave_comments::{Comments, Config, CursorKey, Moderation};
use rave_engine::{Engine, EngineFeed};
use rave_server::{AppState, ServerConfig};
use rave_store::SharedStore;
use reqwest::{Client, Method, StatusCode};
use serde_json::Value;

use super::client;

pub const TOKEN: &str = "s3cret-admin-token";

pub struct TestServer {
    pub base: String,
    pub client: Client,
    pub comments: Arc<Comments<SharedStore>>,
    pub engine: Engine,
    /// What the state's extras need alive while the server serves (a
    /// background task's stop signal, say).
    _kept: Option<Kept>,
    _dir: tempfile::TempDir,
}

/// Anything [`start_serving`]'s finisher hands back to keep.
pub type Kept = Box<dyn std::any::Any + Send + Sync>;

pub async fn start(purchase_secret: Option<&[u8]>) -> TestServer {
    start_with(
        ServerConfig {
            admin_token: Some(TOKEN.into()),
            rate_limit_per_minute: 0,
        },
        Moderation::Off,
        purchase_secret,
    )
    .await
}

pub async fn start_with(
    config: ServerConfig,
    moderation: Moderation,
    purchase_secret: Option<&[u8]>,
) -> TestServer {
    start_serving(config, moderation, purchase_secret, async |state, _| {
        (state, None)
    })
    .await
}

/// [`start_with`], with the server's state finished by `finish` on the
/// store's engine (an aggregator's status, webhooks with their delivery
/// task, say) before it serves; what `finish` hands back is kept as long as
/// the server.
pub async fn start_serving(
    config: ServerConfig,
    moderation: Moderation,
    purchase_secret: Option<&[u8]>,
    finish: impl AsyncFnOnce(AppState, &Engine) -> (AppState, Option<Kept>),
) -> TestServer {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path()).unwrap();
    let comments = Arc::new(Comments::new(
        SharedStore::new(engine.clone()),
        Config {
            table: "rave".into(),
            cursor_key: CursorKey::new([3; 32]),
            moderation,
        },
    ));
    comments.ensure_table().await.unwrap();
    let access = Arc::new(Access::new(
        SharedStore::new(engine.clone()),
        AccessConfig::for_table("rave"),
    ));
    access.ensure_table().await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let mut state = AppState::new(comments.clone(), access, &config);
    if let Some(secret) = purchase_secret {
        state = state.with_purchase_secret(secret);
    }
    let (state, kept) = finish(state, &engine).await;
    tokio::spawn(rave_server::serve(
        listener,
        state,
        std::future::pending(),
        rave_server::DEFAULT_DRAIN,
    ));
    TestServer {
        base,
        client: Client::new(),
        comments,
        engine,
        _kept: kept,
        _dir: dir,
    }
}

impl TestServer {
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
        admin: bool,
    ) -> (StatusCode, Value) {
        client::call(
            &self.client,
            method,
            format!("{}{path}", self.base),
            body,
            admin.then_some(TOKEN),
        )
        .await
    }

    /// How many comments the store holds, any status.
    pub async fn stored(&self) -> usize {
        self.comments.export_page(0, 1, None).await.unwrap().0.len()
    }

    /// Lets the aggregator apply everything written so far.
    pub async fn catch_up(&self) {
        let feed = EngineFeed::open(self.engine.clone(), "rave", "stats")
            .await
            .unwrap();
        let mut idle = 0;
        while idle < 3 {
            let applied = self
                .comments
                .aggregate_once(&feed, Duration::from_millis(30))
                .await
                .unwrap();
            idle = if applied == 0 { idle + 1 } else { 0 };
        }
    }
}
