//! Feeds for other services, streamed from the store: Google's Product
//! Reviews Feed (`google_product_reviews`, also what `rave export --format
//! google-product-reviews` writes, through the same generator).
//!
//! A feed names rave's own pages (a review's anchor, a product's page when
//! its record has none), so it needs the address the public reaches rave
//! at: [`FeedSite`], from `--public-url`. Without it the route answers 404.
//!
//! The route streams: the generator runs in a task and hands each store
//! page's XML to the response body through a small channel, so a slow
//! reader slows the scan instead of filling memory. A failure halfway
//! aborts the body, so a client never takes a cut feed for a whole one.

mod google_product_reviews;
mod site;

use std::io;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use tokio::sync::mpsc;

pub use google_product_reviews::{FeedError, FeedSink, FeedSummary, write_feed};
pub use site::{FeedSite, InvalidFeedSite};

use crate::callers::{Authorized, Feed};
use crate::error::{ApiError, ApiResult};
use crate::responses::{NoFeed, TokenRefused};
use crate::state::AppState;

/// Chunks in flight between the generator and the response body.
const CHUNKS_IN_FLIGHT: usize = 4;

/// The response body's end of the channel.
struct BodySink(mpsc::Sender<io::Result<Bytes>>);

impl FeedSink for BodySink {
    async fn write(&mut self, chunk: Vec<u8>) -> io::Result<()> {
        self.0
            .send(Ok(Bytes::from(chunk)))
            .await
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the client went away"))
    }
}

#[utoipa::path(
    get,
    path = "/v1/feeds/google-product-reviews.xml",
    tag = "admin",
    summary = "Google's Product Reviews Feed (scope feed)",
    description = "Every published and flagged comment, and the ones a moderation rule or the moderation hook held (with is_spam), in Google's Product Reviews Feed schema 2.4, for Merchant Center to fetch. Pre-moderated comments awaiting approval, rejected and erased ones are absent (a full feed replaces what Google holds); merchant replies are not included. Streamed as the store is read; a failure halfway aborts the body. Needs rave serve --public-url. Merchant Center fetches it with a token of scope feed (`--feed-token`, or one from /v1/admin/tokens) as the password of HTTP Basic authentication (any user name), or as a bearer token.",
    security(("access_token" = ["feed"])),
    responses(
        (status = 200, description = "The feed", body = String, content_type = "application/xml"),
        TokenRefused,
        NoFeed,
    )
)]
pub(crate) async fn google_product_reviews(
    State(state): State<AppState>,
    _staff: Authorized<Feed>,
) -> ApiResult<Response> {
    let Some(site) = state.feed_site.clone() else {
        return Err(ApiError::not_found(
            "feeds are off: start rave serve with --public-url (the address the public reaches rave at)",
        ));
    };
    let (sender, mut receiver) = mpsc::channel(CHUNKS_IN_FLIGHT);
    let comments = state.comments.clone();
    let links = site.media_links(&state.media_links);
    tokio::spawn(async move {
        let mut sink = BodySink(sender);
        if let Err(error) = write_feed(&comments, &site, &links, &mut sink).await {
            tracing::warn!(%error, "the Google Product Reviews feed stopped");
            let _ = sink.0.send(Err(io::Error::other(error.to_string()))).await;
        }
    });
    let chunks = futures::stream::poll_fn(move |context| receiver.poll_recv(context));
    Ok((
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/xml; charset=utf-8")],
        Body::from_stream(chunks),
    )
        .into_response())
}
