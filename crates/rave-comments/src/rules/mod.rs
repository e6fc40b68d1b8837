//! Moderation rules (`Comments::with_rules`): checked on every public
//! create before anything is stored, each with its own outcome — hold the
//! comment for moderation (it is stored `pending`, naming the rule in
//! `held_by`) or refuse it (`CommentsError::Refused`, a 422).
//!
//! * `too_many_links` — more links (`http://`, `https://`, `www.`) in the
//!   title and body than allowed.
//! * `blocked_words` — a word of a list kept in a file (one word per line,
//!   `#` starts a comment, case-insensitive), re-read when the file changes.
//! * `duplicate` — the same body (trimmed, case-insensitive) from the same
//!   author within a window.
//! * `too_many_photos` — more photos posted with the comment than allowed
//!   (0 holds every comment with photos for a moderator).
//! * `too_fast` — typing speed: the body's characters divided by the
//!   seconds since the same author's previous comment (a person cannot
//!   type a new comment faster than that). An author's first comment
//!   within the horizon is not judged.
//!
//! The memory of recent comments (`duplicate`, `too_fast`) is this
//! process's: bounded, and not shared between servers.
//!
//! A comment the rules let pass may then go to the moderation hook (`hook`),
//! whose failure holds it.

mod hook;
mod words;

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Mutex;
use std::time::Duration;

pub use hook::{HookDecision, HookError, MODERATION_HOOK, ModerationHook};
pub use words::WordList;

use crate::model::Timestamp;

/// What a rule does to a comment it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Stored `pending`, with the rule's name in `held_by`.
    Hold,
    /// Not stored: 422 naming the rule.
    Refuse,
}

/// A comment's fate under the rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Pass,
    Hold(&'static str),
    Refuse(&'static str),
}

pub(crate) const TOO_MANY_LINKS: &str = "too_many_links";
pub const BLOCKED_WORDS: &str = "blocked_words";
pub const DUPLICATE: &str = "duplicate";
pub(crate) const TOO_FAST: &str = "too_fast";
pub(crate) const TOO_MANY_PHOTOS: &str = "too_many_photos";

/// Most authors remembered; past it, the oldest memories are dropped.
const MAX_REMEMBERED_AUTHORS: usize = 65_536;
/// How long an author's last comment counts for `too_fast`.
const TYPING_HORIZON: Duration = Duration::from_secs(600);

#[derive(Debug, Default)]
pub struct Rules {
    pub max_links: Option<(usize, Outcome)>,
    pub blocked_words: Option<(WordList, Outcome)>,
    pub duplicate_window: Option<(Duration, Outcome)>,
    /// Most characters per second since the author's previous comment.
    pub max_typing_speed: Option<(f64, Outcome)>,
    /// Most photos a comment may carry without the rule matching.
    pub max_photos: Option<(usize, Outcome)>,
    recent: Mutex<HashMap<String, Recent>>,
}

#[derive(Debug, Clone, Default)]
struct Recent {
    last_ms: i64,
    /// Body fingerprints with the time they were posted.
    bodies: Vec<(u64, i64)>,
}

fn links(text: &str) -> usize {
    let lower = text.to_lowercase();
    ["http://", "https://", "www."]
        .iter()
        .map(|p| lower.matches(p).count())
        .sum::<usize>()
        // `https://www.` is one link.
        - lower.matches("://www.").count()
}

fn fingerprint(body: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    body.trim().to_lowercase().hash(&mut hasher);
    hasher.finish()
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl Rules {
    pub fn new() -> Rules {
        Rules::default()
    }

    pub fn is_empty(&self) -> bool {
        self.max_links.is_none()
            && self.blocked_words.is_none()
            && self.duplicate_window.is_none()
            && self.max_typing_speed.is_none()
            && self.max_photos.is_none()
    }

    /// Judges a comment `author` posts with `photos` photos at `now`, and
    /// remembers it unless it is refused. A refusal outranks a hold;
    /// otherwise the first rule in the order above names the hold.
    pub(crate) fn check(
        &self,
        author: &str,
        title: &str,
        body: &str,
        photos: usize,
        now: Timestamp,
    ) -> Verdict {
        let now_ms = now.millis();
        let mut matched: Vec<(&'static str, Outcome)> = Vec::new();
        if let Some((max, outcome)) = self.max_links
            && links(title) + links(body) > max
        {
            matched.push((TOO_MANY_LINKS, outcome));
        }
        if let Some((list, outcome)) = &self.blocked_words
            && (list.matches(title) || list.matches(body))
        {
            matched.push((BLOCKED_WORDS, *outcome));
        }
        let print = fingerprint(body);
        let mut recent = match self.recent.lock() {
            Ok(recent) => recent,
            Err(poisoned) => poisoned.into_inner(),
        };
        let previous = recent.get(author).cloned().unwrap_or_default();
        if let Some((window, outcome)) = self.duplicate_window {
            let since = now_ms.saturating_sub(millis(window));
            if previous
                .bodies
                .iter()
                .any(|(p, t)| *p == print && *t >= since)
            {
                matched.push((DUPLICATE, outcome));
            }
        }
        if let Some((max, outcome)) = self.max_photos
            && photos > max
        {
            matched.push((TOO_MANY_PHOTOS, outcome));
        }
        if let Some((max_speed, outcome)) = self.max_typing_speed {
            let elapsed_ms = now_ms.saturating_sub(previous.last_ms);
            if previous.last_ms > 0 && elapsed_ms < millis(TYPING_HORIZON) {
                let chars = body.chars().count() as f64;
                let seconds = (elapsed_ms.max(1) as f64) / 1000.0;
                if chars / seconds > max_speed {
                    matched.push((TOO_FAST, outcome));
                }
            }
        }
        let verdict = match matched.iter().find(|(_, o)| *o == Outcome::Refuse) {
            Some((rule, _)) => Verdict::Refuse(rule),
            None => matched
                .first()
                .map_or(Verdict::Pass, |(rule, _)| Verdict::Hold(rule)),
        };
        if !matches!(verdict, Verdict::Refuse(_)) {
            self.remember(&mut recent, author, print, now_ms);
        }
        verdict
    }

    fn remember(
        &self,
        recent: &mut HashMap<String, Recent>,
        author: &str,
        print: u64,
        now_ms: i64,
    ) {
        let keep_ms = self
            .duplicate_window
            .map_or(0, |(w, _)| millis(w))
            .max(millis(TYPING_HORIZON));
        if recent.len() >= MAX_REMEMBERED_AUTHORS && !recent.contains_key(author) {
            recent.retain(|_, r| now_ms.saturating_sub(r.last_ms) < keep_ms);
            if recent.len() >= MAX_REMEMBERED_AUTHORS {
                // Still full of recent authors: forget them rather than grow.
                recent.clear();
            }
        }
        let entry = recent.entry(author.to_owned()).or_default();
        entry.last_ms = now_ms;
        entry
            .bodies
            .retain(|(_, t)| now_ms.saturating_sub(*t) < keep_ms);
        entry.bodies.push((print, now_ms));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_millis(1_700_000_000_000 + seconds * 1000).unwrap()
    }

    #[test]
    fn links_are_counted_once_each() {
        assert_eq!(
            links("see https://www.a.com and http://b.org or www.c.net"),
            3
        );
        assert_eq!(links("no links here"), 0);
    }

    #[test]
    fn too_many_links_holds_or_refuses_as_configured() {
        let mut rules = Rules::new();
        rules.max_links = Some((1, Outcome::Hold));
        assert_eq!(
            rules.check("a", "", "one http://x.io", 0, at(0)),
            Verdict::Pass
        );
        let two = "http://x.io http://y.io";
        assert_eq!(
            rules.check("b", "", two, 0, at(0)),
            Verdict::Hold(TOO_MANY_LINKS)
        );
        rules.max_links = Some((1, Outcome::Refuse));
        assert_eq!(
            rules.check("c", "", two, 0, at(0)),
            Verdict::Refuse(TOO_MANY_LINKS)
        );
    }

    #[test]
    fn the_same_body_from_the_same_author_within_the_window_is_a_duplicate() {
        let mut rules = Rules::new();
        rules.duplicate_window = Some((Duration::from_secs(60), Outcome::Refuse));
        assert_eq!(rules.check("ann", "", "Buy now", 0, at(0)), Verdict::Pass);
        assert_eq!(
            rules.check("bob", "", "Buy now", 0, at(1)),
            Verdict::Pass,
            "another author"
        );
        assert_eq!(
            rules.check("ann", "", " buy NOW ", 0, at(30)),
            Verdict::Refuse(DUPLICATE)
        );
        assert_eq!(
            rules.check("ann", "", "Buy now", 0, at(61)),
            Verdict::Pass,
            "after the window"
        );
    }

    #[test]
    fn typing_faster_than_a_person_is_too_fast() {
        let mut rules = Rules::new();
        rules.max_typing_speed = Some((10.0, Outcome::Hold));
        let body = "x".repeat(100);
        assert_eq!(
            rules.check("ann", "", &body, 0, at(0)),
            Verdict::Pass,
            "first comment"
        );
        assert_eq!(
            rules.check("ann", "", &body, 0, at(5)),
            Verdict::Hold(TOO_FAST),
            "20 chars/s"
        );
        assert_eq!(
            rules.check("ann", "", &body, 0, at(20)),
            Verdict::Pass,
            "6.7 chars/s"
        );
    }

    #[test]
    fn more_photos_than_allowed_match_too_many_photos() {
        let rules = Rules {
            max_photos: Some((0, Outcome::Hold)),
            ..Rules::default()
        };
        assert_eq!(rules.check("ann", "", "text only", 0, at(0)), Verdict::Pass);
        assert_eq!(
            rules.check("bob", "", "with a photo", 1, at(0)),
            Verdict::Hold(TOO_MANY_PHOTOS)
        );
        let rules = Rules {
            max_photos: Some((2, Outcome::Refuse)),
            ..Rules::default()
        };
        assert_eq!(rules.check("cid", "", "two", 2, at(0)), Verdict::Pass);
        assert_eq!(
            rules.check("dan", "", "three", 3, at(0)),
            Verdict::Refuse(TOO_MANY_PHOTOS)
        );
    }

    #[test]
    fn a_refusal_outranks_a_hold_and_is_not_remembered() {
        let mut rules = Rules::new();
        rules.max_links = Some((0, Outcome::Hold));
        rules.duplicate_window = Some((Duration::from_secs(60), Outcome::Refuse));
        assert_eq!(
            rules.check("ann", "", "http://a.io", 0, at(0)),
            Verdict::Hold(TOO_MANY_LINKS)
        );
        assert_eq!(
            rules.check("ann", "", "http://a.io", 0, at(1)),
            Verdict::Refuse(DUPLICATE)
        );
        rules.max_typing_speed = Some((0.001, Outcome::Refuse));
        assert_eq!(rules.check("bob", "", "hi", 0, at(0)), Verdict::Pass);
        assert_eq!(
            rules.check("bob", "", "hello", 0, at(1)),
            Verdict::Refuse(TOO_FAST)
        );
        // The refused comment did not count as bob's latest.
        rules.max_typing_speed = Some((1.0, Outcome::Refuse));
        assert_eq!(rules.check("bob", "", "hey", 0, at(10)), Verdict::Pass);
    }
}
