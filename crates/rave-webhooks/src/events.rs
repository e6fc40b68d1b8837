//! What a change of the comments table means to a webhook receiver.
//!
//! The change stream carries images of items; rave-comments decodes them
//! into comments (`comment_change`), and this module names what happened:
//!
//! | change                                    | events                                   |
//! |-------------------------------------------|------------------------------------------|
//! | a comment appears                         | `comment.created`, then `comment.published` or `comment.flagged` if it arrived in that state |
//! | its status becomes published (approval)   | `comment.published`                      |
//! | its status becomes flagged                | `comment.flagged`                        |
//! | its text, title, rating or language change, it is marked incentivized or not, or it goes back to pending | `comment.updated` |
//! | its merchant reply is set, changed or removed | `comment.replied` (`reply` is null after a removal) |
//! | its helpful or unhelpful vote count changes | `comment.voted` (once the aggregator has counted the vote) |
//! | it is removed                             | `comment.deleted` (carrying the last image) |
//!
//! Items that are not comments mean nothing here; a rewrite that changes
//! none of the above (a version bump) means nothing either.

use std::fmt;
use std::str::FromStr;

use rave_comments::{Comment, CommentChange, Status};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum EventType {
    #[serde(rename = "comment.created")]
    Created,
    #[serde(rename = "comment.published")]
    Published,
    #[serde(rename = "comment.flagged")]
    Flagged,
    #[serde(rename = "comment.updated")]
    Updated,
    #[serde(rename = "comment.deleted")]
    Deleted,
    #[serde(rename = "comment.replied")]
    Replied,
    #[serde(rename = "comment.voted")]
    Voted,
    /// A review request fell due (not from the change stream: the
    /// requests' scheduler publishes it, for shops that send their own
    /// mail).
    #[serde(rename = "review.requested")]
    ReviewRequested,
}

impl EventType {
    pub const ALL: [EventType; 8] = [
        EventType::Created,
        EventType::Published,
        EventType::Flagged,
        EventType::Updated,
        EventType::Deleted,
        EventType::Replied,
        EventType::Voted,
        EventType::ReviewRequested,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Created => "comment.created",
            EventType::Published => "comment.published",
            EventType::Flagged => "comment.flagged",
            EventType::Updated => "comment.updated",
            EventType::Deleted => "comment.deleted",
            EventType::Replied => "comment.replied",
            EventType::Voted => "comment.voted",
            EventType::ReviewRequested => "review.requested",
        }
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown event type {0:?}; known: comment.created, comment.published, comment.flagged, comment.updated, comment.deleted, comment.replied, comment.voted, review.requested"
)]
pub struct UnknownEvent(pub String);

impl FromStr for EventType {
    type Err = UnknownEvent;

    fn from_str(text: &str) -> Result<EventType, UnknownEvent> {
        EventType::ALL
            .into_iter()
            .find(|e| e.as_str() == text)
            .ok_or_else(|| UnknownEvent(text.to_owned()))
    }
}

/// One event: its type and the comment as it stands after the change (as
/// it stood before, for a deletion).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub kind: EventType,
    pub comment: Comment,
}

fn content_changed(before: &Comment, after: &Comment) -> bool {
    before.title != after.title
        || before.body != after.body
        || before.rating != after.rating
        || before.language != after.language
        || before.author != after.author
        || before.incentivized != after.incentivized
}

/// The events of one change, in the order a receiver should see them.
pub fn events_of(change: CommentChange) -> Vec<Event> {
    let event = |kind, comment: &Comment| Event {
        kind,
        comment: comment.clone(),
    };
    match (change.before, change.after) {
        (None, Some(after)) => {
            let mut events = vec![event(EventType::Created, &after)];
            match after.status {
                Status::Published => events.push(event(EventType::Published, &after)),
                Status::Flagged => events.push(event(EventType::Flagged, &after)),
                Status::Pending => {}
            }
            events
        }
        (Some(before), Some(after)) => {
            let mut events = Vec::new();
            let status_moved = before.status != after.status;
            if content_changed(&before, &after) || (status_moved && after.status == Status::Pending)
            {
                events.push(event(EventType::Updated, &after));
            }
            if status_moved {
                match after.status {
                    Status::Published => events.push(event(EventType::Published, &after)),
                    Status::Flagged => events.push(event(EventType::Flagged, &after)),
                    Status::Pending => {}
                }
            }
            if before.reply != after.reply {
                events.push(event(EventType::Replied, &after));
            }
            if before.votes != after.votes {
                events.push(event(EventType::Voted, &after));
            }
            events
        }
        (Some(before), None) => vec![event(EventType::Deleted, &before)],
        (None, None) => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rave_comments::{Language, ProductId, Rating, Timestamp};

    fn comment(status: Status) -> Comment {
        Comment {
            id: "01HZY3Q0000000000000000000".into(),
            product_id: ProductId::parse("p1").unwrap(),
            author: "ann".into(),
            language: Language::parse("en").unwrap(),
            rating: Rating::new(4).unwrap(),
            title: "t".into(),
            body: "b".into(),
            created_at: Timestamp::from_millis(1_700_000_000_000).unwrap(),
            status,
            held_by: None,
            reply: None,
            verified_purchase: false,
            votes: Default::default(),
            source: None,
            image_urls: Vec::new(),
            media: Vec::new(),
            incentivized: false,
            attributes: Default::default(),
            reports: Default::default(),
            queued_at: None,
            group: None,
        }
    }

    fn kinds(before: Option<Comment>, after: Option<Comment>) -> Vec<EventType> {
        events_of(CommentChange { before, after })
            .into_iter()
            .map(|e| e.kind)
            .collect()
    }

    use EventType::*;

    #[test]
    fn marking_a_review_incentivized_is_an_update_carrying_the_mark() {
        let before = comment(Status::Published);
        let after = Comment {
            incentivized: true,
            ..before.clone()
        };
        let events = events_of(CommentChange {
            before: Some(before),
            after: Some(after),
        });
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].kind, Updated);
        assert!(events[0].comment.incentivized);
    }

    #[test]
    fn a_new_comment_is_created_then_in_its_state() {
        assert_eq!(kinds(None, Some(comment(Status::Pending))), [Created]);
        assert_eq!(
            kinds(None, Some(comment(Status::Published))),
            [Created, Published]
        );
        assert_eq!(
            kinds(None, Some(comment(Status::Flagged))),
            [Created, Flagged]
        );
    }

    #[test]
    fn status_moves_are_published_and_flagged() {
        let k = |a, b| kinds(Some(comment(a)), Some(comment(b)));
        assert_eq!(k(Status::Pending, Status::Published), [Published]);
        assert_eq!(k(Status::Published, Status::Flagged), [Flagged]);
        assert_eq!(k(Status::Flagged, Status::Published), [Published]);
        assert_eq!(k(Status::Published, Status::Pending), [Updated]);
        assert_eq!(k(Status::Published, Status::Published), []);
    }

    #[test]
    fn an_edit_is_updated_and_a_removal_deleted() {
        let before = comment(Status::Published);
        let mut after = before.clone();
        after.body = "edited".into();
        assert_eq!(kinds(Some(before.clone()), Some(after)), [Updated]);
        let deleted = events_of(CommentChange {
            before: Some(before.clone()),
            after: None,
        });
        assert_eq!(
            deleted,
            [Event {
                kind: Deleted,
                comment: before
            }]
        );
    }

    #[test]
    fn setting_changing_or_removing_the_reply_is_replied() {
        let before = comment(Status::Published);
        let mut replied = before.clone();
        replied.reply = Some(rave_comments::Reply {
            body: "Thanks!".into(),
            created_at: Timestamp::from_millis(1_700_000_001_000).unwrap(),
            updated_at: Timestamp::from_millis(1_700_000_001_000).unwrap(),
        });
        assert_eq!(
            kinds(Some(before.clone()), Some(replied.clone())),
            [Replied]
        );
        let mut changed = replied.clone();
        if let Some(reply) = &mut changed.reply {
            reply.body = "Thank you!".into();
        }
        assert_eq!(kinds(Some(replied.clone()), Some(changed)), [Replied]);
        assert_eq!(kinds(Some(replied), Some(before)), [Replied]);
    }

    #[test]
    fn a_counted_vote_is_voted_and_nothing_else() {
        let before = comment(Status::Published);
        let mut voted = before.clone();
        voted.votes.helpful = 1;
        assert_eq!(kinds(Some(before), Some(voted)), [Voted]);
    }

    #[test]
    fn event_names_round_trip() {
        for kind in EventType::ALL {
            assert_eq!(kind.as_str().parse::<EventType>(), Ok(kind));
            assert_eq!(
                serde_json::to_string(&kind).unwrap(),
                format!("\"{}\"", kind.as_str())
            );
        }
        assert!("comment.liked".parse::<EventType>().is_err());
    }
}
