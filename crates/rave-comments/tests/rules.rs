//! Moderation rules and the moderation hook on the write path: a held
//! comment is stored pending with the rule's name and no listing shows it;
//! a refused one is not stored.

mod common;

use std::sync::Arc;

use common::{fixture, new_comment};
use futures::future::BoxFuture;
use rave_comments::rules::{
    HookDecision, HookError, MODERATION_HOOK, ModerationHook, Outcome, Rules,
};
use rave_comments::{Comment, CommentsError, Filter, ListRequest, Moderation, Status};

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
        sort: Default::default(),
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

/// A hook that answers what the comment's body asks for, and remembers what
/// it was asked.
#[derive(Debug, Default)]
struct ScriptedHook {
    asked: std::sync::Mutex<Vec<String>>,
}

impl ModerationHook for ScriptedHook {
    fn decide<'a>(
        &'a self,
        comment: &'a Comment,
    ) -> BoxFuture<'a, Result<HookDecision, HookError>> {
        self.asked.lock().unwrap().push(comment.body.clone());
        let answer = match comment.body.as_str() {
            "publish me" => Ok(HookDecision::Publish),
            "hold me" => Ok(HookDecision::Hold),
            "refuse me" => Ok(HookDecision::Refuse),
            _ => Err(HookError("unreachable".into())),
        };
        Box::pin(async move { answer })
    }
}

#[tokio::test]
async fn the_hook_publishes_holds_or_refuses_and_a_hook_without_a_decision_holds() {
    let f = fixture(Moderation::Off).await;
    let mut rules = Rules::new();
    rules.max_links = Some((0, Outcome::Hold));
    let hook = Arc::new(ScriptedHook::default());
    let comments = f
        .comments
        .with_rules(Arc::new(rules))
        .with_moderation_hook(hook.clone());
    let create = |body: &'static str| comments.create("p1", new_comment("en", 4, body), None);

    let published = create("publish me").await.unwrap().comment;
    assert_eq!(
        (published.status, published.held_by),
        (Status::Published, None)
    );
    let held = create("hold me").await.unwrap().comment;
    assert_eq!(
        (held.status, held.held_by.as_deref()),
        (Status::Pending, Some(MODERATION_HOOK))
    );
    let refused = create("refuse me").await;
    assert!(
        matches!(
            refused,
            Err(CommentsError::Refused {
                rule: MODERATION_HOOK
            })
        ),
        "{refused:?}"
    );
    let unjudged = create("the hook is down").await.unwrap().comment;
    assert_eq!(
        (unjudged.status, unjudged.held_by.as_deref()),
        (Status::Pending, Some(MODERATION_HOOK))
    );
    let by_rule = create("publish me at http://spam.example")
        .await
        .unwrap()
        .comment;
    assert_eq!(by_rule.held_by.as_deref(), Some("too_many_links"));
    assert_eq!(
        *hook.asked.lock().unwrap(),
        ["publish me", "hold me", "refuse me", "the hook is down"],
        "a comment a rule held is not sent to the hook"
    );
    assert_eq!(
        comments.get(&unjudged.id).await.unwrap().held_by.as_deref(),
        Some(MODERATION_HOOK)
    );
    let request = ListRequest {
        sort: Default::default(),
        product: "p1",
        filter: Filter::default(),
        limit: 20,
        cursor: None,
    };
    let listed: Vec<String> = comments
        .list(&request)
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(
        listed,
        [published.id],
        "only what the hook published is listed"
    );
}
