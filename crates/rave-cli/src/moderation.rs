//! Moderation in the binary: the `serve` options that turn on each
//! moderation rule with its outcome, and the moderation hook.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, ValueEnum};
use rave_comments::Comments;
use rave_comments::rules::{Outcome, Rules, WordList};

/// What a rule does to a comment it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutcomeArg {
    /// Store it `pending`, naming the rule in `held_by`.
    Hold,
    /// Answer 422 naming the rule, and store nothing.
    Refuse,
}

impl From<OutcomeArg> for Outcome {
    fn from(outcome: OutcomeArg) -> Outcome {
        match outcome {
            OutcomeArg::Hold => Outcome::Hold,
            OutcomeArg::Refuse => Outcome::Refuse,
        }
    }
}

/// Each rule is off until its own option is given.
#[derive(Debug, Clone, Args)]
pub struct ModerationArgs {
    /// Rule `too_many_links`: most links (http://, https://, www.) in a
    /// comment's title and body.
    #[arg(long, env = "RAVE_MAX_LINKS", value_name = "N")]
    pub max_links: Option<usize>,
    /// What `too_many_links` does.
    #[arg(long, env = "RAVE_MAX_LINKS_OUTCOME", value_enum, default_value_t = OutcomeArg::Hold)]
    pub max_links_outcome: OutcomeArg,
    /// Rule `blocked_words`: a file of words (one per line, `#` starts a
    /// comment, case-insensitive), read again whenever it changes.
    #[arg(long, env = "RAVE_BLOCKED_WORDS", value_name = "FILE")]
    pub blocked_words: Option<PathBuf>,
    /// What `blocked_words` does.
    #[arg(long, env = "RAVE_BLOCKED_WORDS_OUTCOME", value_enum, default_value_t = OutcomeArg::Hold)]
    pub blocked_words_outcome: OutcomeArg,
    /// Rule `duplicate`: the same body from the same author within this
    /// many seconds.
    #[arg(long, env = "RAVE_DUPLICATE_WINDOW", value_name = "SECONDS")]
    pub duplicate_window: Option<u64>,
    /// What `duplicate` does.
    #[arg(long, env = "RAVE_DUPLICATE_WINDOW_OUTCOME", value_enum, default_value_t = OutcomeArg::Hold)]
    pub duplicate_window_outcome: OutcomeArg,
    /// Rule `too_fast`: most characters per second since the same author's
    /// previous comment (a person types perhaps 5-10).
    #[arg(long, env = "RAVE_MAX_TYPING_SPEED", value_name = "CHARS_PER_SECOND")]
    pub max_typing_speed: Option<f64>,
    /// What `too_fast` does.
    #[arg(long, env = "RAVE_MAX_TYPING_SPEED_OUTCOME", value_enum, default_value_t = OutcomeArg::Hold)]
    pub max_typing_speed_outcome: OutcomeArg,
    /// Rule `too_many_photos`: most photos a comment may carry without the
    /// rule matching; 0 holds every comment with photos for a moderator.
    #[arg(long, env = "RAVE_MAX_PHOTOS_UNMODERATED", value_name = "N")]
    pub max_photos_unmoderated: Option<usize>,
    /// What `too_many_photos` does.
    #[arg(long, env = "RAVE_MAX_PHOTOS_UNMODERATED_OUTCOME", value_enum, default_value_t = OutcomeArg::Hold)]
    pub max_photos_unmoderated_outcome: OutcomeArg,
    /// A service asked about every public comment the rules let pass: it
    /// receives `{"comment": …}` (with its photos' URLs in `media`) and answers `{"decision": "publish" |
    /// "hold" | "refuse"}`; without an answer the comment is held.
    #[arg(long, env = "RAVE_MODERATION_HOOK", value_name = "URL")]
    pub moderation_hook: Option<String>,
    /// How long the moderation hook may take to answer, in seconds.
    #[arg(long, env = "RAVE_MODERATION_HOOK_TIMEOUT", default_value_t = 2.0)]
    pub moderation_hook_timeout: f64,
}

impl ModerationArgs {
    /// The rules these options turn on (none by default).
    fn rules(&self) -> anyhow::Result<Rules> {
        let mut rules = Rules::new();
        rules.max_links = self.max_links.map(|n| (n, self.max_links_outcome.into()));
        if let Some(path) = &self.blocked_words {
            let list = WordList::open(path)
                .with_context(|| format!("cannot read the blocked words in {}", path.display()))?;
            rules.blocked_words = Some((list, self.blocked_words_outcome.into()));
        }
        rules.duplicate_window = self
            .duplicate_window
            .map(|s| (Duration::from_secs(s), self.duplicate_window_outcome.into()));
        rules.max_photos = self
            .max_photos_unmoderated
            .map(|n| (n, self.max_photos_unmoderated_outcome.into()));
        if let Some(speed) = self.max_typing_speed {
            anyhow::ensure!(
                speed.is_finite() && speed > 0.0,
                "--max-typing-speed must be a positive number"
            );
            rules.max_typing_speed = Some((speed, self.max_typing_speed_outcome.into()));
        }
        Ok(rules)
    }

    /// `comments`, checking public creates against the rules turned on and
    /// the moderation hook (which gets photo URLs under `media_links`).
    pub fn apply<S: rave_store::Store>(
        &self,
        comments: Comments<S>,
        media_links: &rave_server::MediaLinks,
    ) -> anyhow::Result<Comments<S>> {
        let rules = self.rules()?;
        let mut comments = match rules.is_empty() {
            true => comments,
            false => comments.with_rules(Arc::new(rules)),
        };
        if let Some(url) = &self.moderation_hook {
            let timeout = Duration::try_from_secs_f64(self.moderation_hook_timeout)
                .ok()
                .filter(|t| !t.is_zero())
                .context("--moderation-hook-timeout must be a positive number of seconds")?;
            let hook = rave_server::HttpModerationHook::new(url, timeout)?
                .with_media_links(media_links.clone());
            comments = comments.with_moderation_hook(Arc::new(hook));
        }
        Ok(comments)
    }
}
