//! Moderation rules on the write path: a held comment is stored pending with
//! the rule's name and no listing shows it; a refused one is not stored.

mod common;

use std::sync::Arc;

use common::{fixture, new_comment};
use rave_comments::rules::{Outcome, Rules};
use rave_comments::{CommentsError, Filter, ListRequest, Moderation, Status};

#[tokio::test]
async fn a_held_comment_is_pending_named_and_unpublished_and_a_refused_one_is_not_stored() {
    let f = fixture(Moderation::Off).await;
    let mut rules = Rules::new();
    rules.max_links = Some((0, Outcome::Hold));
    rules.duplicate_window = Some((std::time::Duration::from_secs(60), Outcome::Refuse));
    let comments = f.comments.with_rules(Arc::new(rules));

    let held = comments
        .create(
            "p1",
            new_comment("en", 5, "visit http://spam.example"),
            None,
        )
        .await
        .unwrap()
        .comment;
    assert_eq!(held.status, Status::Pending);
    assert_eq!(held.held_by.as_deref(), Some("too_many_links"));
    assert_eq!(
        comments.get(&held.id).await.unwrap().held_by.as_deref(),
        Some("too_many_links")
    );

    let refused = comments
        .create(
            "p1",
            new_comment("en", 5, "visit http://spam.example"),
            None,
        )
        .await;
    assert!(
        matches!(refused, Err(CommentsError::Refused { rule: "duplicate" })),
        "{refused:?}"
    );

    let fine = comments
        .create("p1", new_comment("en", 4, "a fine product"), None)
        .await
        .unwrap()
        .comment;
    assert_eq!((fine.status, fine.held_by), (Status::Published, None));

    let request = ListRequest {
        product: "p1",
        filter: Filter::default(),
        limit: 20,
        cursor: None,
    };
    let page = comments.list(&request).await.unwrap();
    let listed: Vec<&str> = page.items.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        listed,
        [fine.id.as_str()],
        "nothing a rule held is published"
    );

    let approved = comments.approve(&held.id).await.unwrap();
    assert_eq!(
        (approved.status, approved.held_by),
        (Status::Published, None)
    );
}
