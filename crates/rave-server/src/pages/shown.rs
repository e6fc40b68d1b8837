//! What a listing page and its structured data both show of a comment,
//! worked out once for both.

use std::borrow::Cow;

use rave_comments::Comment;

/// Characters of a body a review without a title is named by.
const NAME_FROM_BODY: usize = 80;

/// A review's name: its title, or the start of its body.
fn review_name(comment: &Comment) -> Cow<'_, str> {
    if !comment.title.trim().is_empty() {
        return Cow::Borrowed(&comment.title);
    }
    match comment.body.char_indices().nth(NAME_FROM_BODY) {
        Some((end, _)) => Cow::Owned(format!("{}…", &comment.body[..end])),
        None => Cow::Borrowed(&comment.body),
    }
}

/// What the page and its structured data both show of a comment, worked
/// out once for both.
pub(super) struct Shown<'a> {
    pub(super) comment: &'a Comment,
    /// Its title, or the start of its body.
    pub(super) name: Cow<'a, str>,
    /// When it was written, as RFC 3339.
    pub(super) published: String,
}

impl<'a> Shown<'a> {
    pub(super) fn new(comment: &'a Comment) -> Shown<'a> {
        Shown {
            comment,
            name: review_name(comment),
            published: comment.created_at.to_string(),
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use rave_comments::{Language, ProductId, Rating, Status, Timestamp};

    use super::*;

    /// A published 4-star comment with `title` and `body`.
    pub(in crate::pages) fn comment(title: &str, body: &str) -> Comment {
        Comment {
            id: "c1".into(),
            product_id: ProductId::parse("p").unwrap(),
            author: "a".into(),
            language: Language::parse("en").unwrap(),
            rating: Rating::new(4).unwrap(),
            title: title.into(),
            body: body.into(),
            created_at: Timestamp::parse("2026-01-02T03:04:05.006Z").unwrap(),
            status: Status::Published,
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
        }
    }

    #[test]
    fn a_review_is_named_by_its_title_or_the_first_80_characters_of_its_body() {
        assert_eq!(review_name(&comment("Good", "x")), "Good");
        let exactly = "é".repeat(NAME_FROM_BODY);
        assert_eq!(review_name(&comment(" ", &exactly)), exactly);
        let longer = format!("{exactly}ü");
        assert_eq!(review_name(&comment("", &longer)), format!("{exactly}…"));
        let unnamed = comment("", &longer);
        let shown = Shown::new(&unnamed);
        assert_eq!(shown.published, "2026-01-02T03:04:05.006Z");
    }
}
