//! The moderation hook over HTTP (`HttpModerationHook`, the domain's
//! `ModerationHook`): each public comment the rules let pass is POSTed to
//! the operator's URL, which answers with a decision. It uses rave-webhooks'
//! client: no redirects, no proxies, connect and response timeouts.
//!
//! The contract: the request is `POST <url>` with
//! `{"comment": <the comment as the API shows it to staff>}`: its `media`
//! lists every photo posted with it (with the status it gets if the hook
//! lets it through), each with the URLs of its renditions
//! (`url`, `thumbnail_url`, `fallback_url`, `thumbnail_fallback_url`), so
//! the hook can count and look at them. The URLs are those every answer
//! gives (`media::links`): absolute under `--public-url` or `--media-url`,
//! else paths on rave's own origin. The photos are stored before the hook
//! is asked, so they can be fetched while it decides. A 2xx answer whose
//! JSON body is `{"decision": "publish" | "hold" | "refuse", "reason": "…"}`
//! (`reason` optional, logged) decides. Anything else — no connection, no
//! answer within the timeout, another status (redirects are not followed),
//! a body that is not such a decision — is no decision, and the domain
//! holds the comment.
//!
//! Unlike a webhook's, the hook's address is not checked against private
//! ranges: the operator configures it, and a moderation service beside
//! rave on loopback or a private network is the common case.

use std::error::Error as _;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use rave_comments::Comment;
use rave_comments::rules::{HookDecision, HookError, ModerationHook};
use rave_webhooks::{TargetPolicy, Timeouts};
use serde::Deserialize;

use crate::api::CommentBody;
use crate::media::MediaLinks;

/// Why a hook cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum HookSetupError {
    #[error("moderation hook: {0} is not a URL: {1}")]
    Invalid(String, String),
    #[error("moderation hook: only http and https URLs are allowed, not {0}")]
    Scheme(String),
    #[error("moderation hook: {0}")]
    Client(String),
}

/// The moderation hook at an HTTP URL.
#[derive(Debug)]
pub struct HttpModerationHook {
    url: reqwest::Url,
    client: reqwest::Client,
    /// How the photos' URLs in the request are made.
    media_links: MediaLinks,
}

#[derive(Deserialize)]
struct Answer {
    decision: String,
    reason: Option<String>,
}

impl HttpModerationHook {
    /// A hook at `url` that must answer within `timeout` (connecting
    /// included).
    pub fn new(url: &str, timeout: Duration) -> Result<HttpModerationHook, HookSetupError> {
        let parsed = reqwest::Url::parse(url)
            .map_err(|e| HookSetupError::Invalid(url.into(), e.to_string()))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(HookSetupError::Scheme(parsed.scheme().to_owned()));
        }
        // The webhooks' client: no redirects, no proxies, both timeouts;
        // private addresses allowed, as said above.
        let client = rave_webhooks::http_client(
            TargetPolicy {
                allow_private: true,
            },
            Timeouts {
                connect: timeout,
                response: timeout,
            },
        )
        .map_err(|e| HookSetupError::Client(e.to_string()))?;
        Ok(HttpModerationHook {
            url: parsed,
            client,
            media_links: MediaLinks::default(),
        })
    }

    /// Gives the photos' URLs under `links`, as the server's answers do.
    pub fn with_media_links(mut self, links: MediaLinks) -> HttpModerationHook {
        self.media_links = links;
        self
    }

    async fn ask(&self, comment: &Comment) -> Result<HookDecision, HookError> {
        let body = serde_json::json!({
            "comment": CommentBody::staff(comment.clone(), &self.media_links)
        });
        let response = self
            .client
            .post(self.url.clone())
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| HookError(describe(&e)))?;
        let status = response.status();
        if !status.is_success() {
            return Err(HookError(format!("HTTP {status}")));
        }
        let bytes = response
            .bytes()
            .await
            .map_err(|e| HookError(describe(&e)))?;
        decision(&bytes, &comment.id)
    }
}

/// The decision in a hook's answer.
fn decision(body: &[u8], comment_id: &str) -> Result<HookDecision, HookError> {
    let answer: Answer = serde_json::from_slice(body)
        .map_err(|e| HookError(format!("the answer is not a decision: {e}")))?;
    let decision = match answer.decision.as_str() {
        "publish" => HookDecision::Publish,
        "hold" => HookDecision::Hold,
        "refuse" => HookDecision::Refuse,
        other => {
            return Err(HookError(format!(
                "unknown decision {other:?} (publish, hold or refuse)"
            )));
        }
    };
    tracing::info!(
        comment = %comment_id,
        decision = %answer.decision,
        reason = answer.reason.as_deref().unwrap_or(""),
        "moderation hook decided"
    );
    Ok(decision)
}

/// An error with its causes (reqwest keeps the reason in them).
fn describe(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        return "timed out".to_owned();
    }
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

impl ModerationHook for HttpModerationHook {
    fn decide<'a>(
        &'a self,
        comment: &'a Comment,
    ) -> Pin<Box<dyn Future<Output = Result<HookDecision, HookError>> + Send + 'a>> {
        Box::pin(async move {
            let decided = self.ask(comment).await;
            if let Err(error) = &decided {
                tracing::warn!(comment = %comment.id, %error, "moderation hook failed: holding the comment");
            }
            decided
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_three_decisions_are_decisions() {
        assert_eq!(
            decision(br#"{"decision":"publish"}"#, "c"),
            Ok(HookDecision::Publish)
        );
        assert_eq!(
            decision(br#"{"decision":"hold","reason":"new account"}"#, "c"),
            Ok(HookDecision::Hold)
        );
        assert_eq!(
            decision(br#"{"decision":"refuse"}"#, "c"),
            Ok(HookDecision::Refuse)
        );
        for garbage in [
            &b"publish"[..],
            b"{}",
            br#"{"decision":"Publish"}"#,
            br#"{"decision":1}"#,
            b"",
        ] {
            assert!(
                decision(garbage, "c").is_err(),
                "{}",
                String::from_utf8_lossy(garbage)
            );
        }
    }

    #[test]
    fn only_http_and_https_hooks_are_set_up() {
        let second = Duration::from_secs(1);
        assert!(HttpModerationHook::new("http://127.0.0.1:9/hook", second).is_ok());
        assert!(matches!(
            HttpModerationHook::new("ftp://example.com/hook", second),
            Err(HookSetupError::Scheme(_))
        ));
        assert!(matches!(
            HttpModerationHook::new("not a url", second),
            Err(HookSetupError::Invalid(..))
        ));
    }
}
