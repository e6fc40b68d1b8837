//! One imported photo fetched over HTTP, within bounds: the webhooks'
//! address rules (rave-outbound: the URL's host resolved and every address
//! checked, the resolver checking again on connection, each redirect hop
//! re-checked), at most `max_bytes` read (a `Content-Length` above it is
//! refused before the body is read, a body that runs past it when it
//! does), and one time limit over the whole fetch.

use std::time::Duration;

use rave_outbound::{TargetPolicy, Timeouts};

use super::options::PhotoOptions;

/// Redirects a fetch follows (each re-checked): a CDN's `http` → `https`
/// and a move or two; more is a loop or a trick.
const MAX_REDIRECTS: usize = 5;

/// The HTTP client of an import's photo fetches, and its bounds.
#[derive(Debug, Clone)]
pub(super) struct Fetcher {
    client: reqwest::Client,
    policy: TargetPolicy,
    max_bytes: u64,
    timeout: Duration,
}

/// Why a fetcher cannot be made (its TLS set-up failed).
#[derive(Debug, thiserror::Error)]
#[error("the HTTP client for photo fetches does not build: {0}")]
pub struct FetcherError(String);

impl Fetcher {
    pub(super) fn new(options: &PhotoOptions) -> Result<Fetcher, FetcherError> {
        let policy = TargetPolicy {
            allow_private: options.allow_private,
        };
        let timeouts = Timeouts {
            connect: options.fetch_timeout,
            response: options.fetch_timeout,
        };
        let client = rave_outbound::guarded(policy, timeouts)
            .redirect(rave_outbound::rechecked_redirects(policy, MAX_REDIRECTS))
            .user_agent(concat!("rave-import/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| FetcherError(rave_outbound::describe(&e)))?;
        Ok(Fetcher {
            client,
            policy,
            max_bytes: options.max_photo_bytes,
            timeout: options.fetch_timeout,
        })
    }

    /// The bytes at `url`, or why not (in words for the import's report).
    pub(super) async fn fetch(&self, url: &str) -> Result<Vec<u8>, String> {
        let too_slow = || format!("took longer than {} s", self.timeout.as_secs_f64());
        let fetching = async {
            let url = self
                .policy
                .check_url(url)
                .await
                .map_err(|e| e.to_string())?;
            let mut response = self.client.get(url).send().await.map_err(|e| {
                if e.is_timeout() {
                    too_slow()
                } else {
                    rave_outbound::describe(&e.without_url())
                }
            })?;
            let status = response.status();
            if !status.is_success() {
                return Err(format!("answered HTTP {status}"));
            }
            if let Some(length) = response.content_length()
                && length > self.max_bytes
            {
                return Err(format!(
                    "is {length} bytes, more than the {} accepted",
                    self.max_bytes
                ));
            }
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(|e| {
                if e.is_timeout() {
                    too_slow()
                } else {
                    rave_outbound::describe(&e.without_url())
                }
            })? {
                body.extend_from_slice(&chunk);
                if body.len() as u64 > self.max_bytes {
                    return Err(format!("runs past the {} bytes accepted", self.max_bytes));
                }
            }
            Ok(body)
        };
        tokio::time::timeout(self.timeout, fetching)
            .await
            .unwrap_or_else(|_| Err(too_slow()))
    }
}
