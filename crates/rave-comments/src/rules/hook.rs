//! The moderation hook: a verdict from outside, asked about every public
//! comment the rules let pass. The domain only defines what it asks and
//! what it does with the answer; how the question travels (HTTP, in
//! rave-server's `moderation_hook.rs`) is the implementation's.
//!
//! The hook (`Comments::with_moderation_hook`) is shown the comment with
//! its id, time and status, and publishes, holds or refuses it.
//!
//! Whatever goes wrong with the hook, the comment is held: stored
//! `pending`, naming [`MODERATION_HOOK`], so it is never lost and never
//! published unseen.

use std::fmt;

use futures::future::BoxFuture;

use crate::model::Comment;

/// The `held_by` of a comment the hook held (or could not judge), and the
/// rule a hook's refusal names.
pub const MODERATION_HOOK: &str = "moderation_hook";

/// What the hook decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookDecision {
    /// Store the comment as it would be without the hook.
    Publish,
    /// Store it `pending`, held by the hook.
    Hold,
    /// Store nothing: 422 naming the hook.
    Refuse,
}

/// Why the hook gave no decision (unreachable, timed out, answered with an
/// error or with something that is not a decision).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the moderation hook gave no decision: {0}")]
pub struct HookError(pub String);

/// A source of decisions on new comments. Implementations bound the time
/// they take: a create waits for the decision.
pub trait ModerationHook: Send + Sync + fmt::Debug {
    /// The decision on `comment`, as it would be stored without the hook
    /// (id, time and status included).
    fn decide<'a>(&'a self, comment: &'a Comment)
    -> BoxFuture<'a, Result<HookDecision, HookError>>;
}
