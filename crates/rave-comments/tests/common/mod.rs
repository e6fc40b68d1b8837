//! Shared set-up for the domain tests: the domain on a fresh embedded engine.

#![allow(dead_code)]

use std::time::Duration;

use rave_comments::{
    Comments, Config, CursorKey, Filter, ListPage, ListRequest, Moderation, NewComment, Sort,
    Timestamp,
};
use rave_engine::{Engine, EngineFeed};
use rave_store::ChangeFeed;

pub struct Fixture {
    pub comments: Comments<Engine>,
    /// The engine under `comments`, for what the domain does not expose.
    pub engine: Engine,
    _dir: tempfile::TempDir,
}

pub async fn fixture(moderation: Moderation) -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = Engine::open(dir.path()).expect("open engine");
    let comments = comments_on(&engine, moderation);
    comments.ensure_table().await.expect("table");
    Fixture {
        comments,
        engine,
        _dir: dir,
    }
}

/// The domain on `engine`, as every fixture has it: a second one on a
/// fixture's engine acts as another process would.
pub fn comments_on(engine: &Engine, moderation: Moderation) -> Comments<Engine> {
    Comments::new(
        engine.clone(),
        Config {
            table: "rave".into(),
            cursor_key: CursorKey::new([9; 32]),
            moderation,
        },
    )
}

pub fn new_comment(language: &str, rating: i64, body: &str) -> NewComment {
    NewComment {
        media: Vec::new(),
        attributes: Default::default(),
        author: "alice".into(),
        language: language.into(),
        rating,
        title: Some("title".into()),
        body: body.into(),
        created_at: None,
    }
}

pub fn at(mut comment: NewComment, created_at: &str) -> NewComment {
    comment.created_at = Some(Timestamp::parse(created_at).expect("time"));
    comment
}

/// The statistics aggregator's consumer of the engine's change stream.
pub async fn stats_feed(engine: &Engine) -> EngineFeed {
    EngineFeed::open(engine.clone(), "rave", "stats")
        .await
        .unwrap()
}

/// Lets the aggregator apply everything written so far.
pub async fn catch_up(comments: &Comments<Engine>, feed: &EngineFeed) {
    loop {
        comments
            .aggregate_once(feed, Duration::from_millis(1))
            .await
            .unwrap();
        if feed.lag().await.unwrap().events == 0 {
            return;
        }
    }
}

/// Walks product `p`'s listing in `sort` under `filter`, pages of `limit`,
/// until its last page or `max_pages`, handing each page (numbered from 1)
/// to `check`. Returns the items read and the items returned.
pub async fn walk(
    comments: &Comments<Engine>,
    filter: &Filter,
    sort: Sort,
    limit: usize,
    max_pages: usize,
    mut check: impl FnMut(usize, &ListPage),
) -> (usize, usize) {
    let (mut read, mut returned, mut cursor) = (0, 0, None::<String>);
    for page_number in 1..=max_pages {
        let page = comments
            .list(&ListRequest {
                sort,
                product: "p",
                filter: filter.clone(),
                limit,
                cursor: cursor.as_deref(),
            })
            .await
            .unwrap();
        check(page_number, &page);
        read += page.plan.items_read;
        returned += page.items.len();
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    (read, returned)
}
