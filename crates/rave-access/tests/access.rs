//! Tokens and the audit trail over the embedded engine.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use rave_access::{
    Access, AccessConfig, AccessError, Actor, AuditQuery, DEFAULT_AUDIT_RETENTION, NewEntry, Scope,
    Scopes, Target,
};
use rave_engine::Engine;

fn open(dir: &tempfile::TempDir, retention: Duration) -> Access<Engine> {
    let engine = Engine::open(dir.path()).unwrap();
    Access::new(
        engine,
        AccessConfig {
            comments_table: "rave".into(),
            audit_retention: retention,
        },
    )
}

fn entry(actor: &str, action: &str, kind: &str, id: &str) -> NewEntry {
    NewEntry {
        actor: Actor {
            name: actor.into(),
            token_id: None,
        },
        action: action.into(),
        target: Target::new(kind, id),
        client: Some(IpAddr::V4(Ipv4Addr::LOCALHOST)),
        detail: None,
    }
}

#[tokio::test]
async fn a_token_authenticates_until_it_is_revoked() {
    let dir = tempfile::tempdir().unwrap();
    let access = open(&dir, DEFAULT_AUDIT_RETENTION);
    access.ensure_table().await.unwrap();
    access.ensure_table().await.unwrap();

    let issued = access
        .create_token("support", Scopes::new([Scope::Moderate]), "admin")
        .await
        .unwrap();
    let presented = issued.token.expose().to_owned();
    let found = access.authenticate(&presented).await.unwrap().unwrap();
    assert_eq!(found, issued.record);
    assert!(found.scopes.allow(Scope::Moderate));
    assert!(!found.scopes.allow(Scope::Erase));
    assert_eq!(access.tokens().await.unwrap(), vec![issued.record.clone()]);

    // A token with the right id and a wrong secret is nobody.
    let forged = format!("{}x", &presented[..presented.len() - 1]);
    assert_eq!(access.authenticate(&forged).await.unwrap(), None);
    assert_eq!(access.authenticate("not-a-token").await.unwrap(), None);

    let revoked = access.revoke_token(&issued.record.id).await.unwrap();
    assert_eq!(revoked.name, "support");
    assert_eq!(access.authenticate(&presented).await.unwrap(), None);
    assert!(access.tokens().await.unwrap().is_empty());
    assert!(matches!(
        access.revoke_token(&issued.record.id).await,
        Err(AccessError::NotFound("token"))
    ));
}

#[tokio::test]
async fn a_token_needs_a_name_and_a_scope() {
    let dir = tempfile::tempdir().unwrap();
    let access = open(&dir, DEFAULT_AUDIT_RETENTION);
    access.ensure_table().await.unwrap();
    let no_scope = access.create_token("x", Scopes::default(), "admin").await;
    assert!(matches!(
        no_scope,
        Err(AccessError::Invalid {
            field: "scopes",
            ..
        })
    ));
    let no_name = access.create_token("", Scopes::everything(), "admin").await;
    assert!(matches!(
        no_name,
        Err(AccessError::Invalid { field: "name", .. })
    ));
    assert!(access.tokens().await.unwrap().is_empty());
}

#[tokio::test]
async fn the_trail_lists_newest_first_with_filters_and_cursors() {
    let dir = tempfile::tempdir().unwrap();
    let access = open(&dir, DEFAULT_AUDIT_RETENTION);
    access.ensure_table().await.unwrap();
    let mut written = Vec::new();
    for i in 0..25 {
        let actor = if i % 2 == 0 { "anna" } else { "ben" };
        let action = if i % 5 == 0 {
            "author.erase"
        } else {
            "comment.approve"
        };
        let target = format!("c{}", i % 3);
        written.push(
            access
                .record(entry(actor, action, "comment", &target))
                .await
                .unwrap(),
        );
    }
    let newest_first: Vec<_> = written.iter().rev().cloned().collect();

    // Every entry once, in pages of 7.
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let page = access
            .audit(&AuditQuery::default(), 7, after.as_deref())
            .await
            .unwrap();
        seen.extend(page.entries);
        match page.next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, newest_first);

    let check = |query: AuditQuery, keep: &dyn Fn(&rave_access::Entry) -> bool| {
        let expected: Vec<_> = newest_first.iter().filter(|e| keep(e)).cloned().collect();
        let access = &access;
        async move {
            let page = access.audit(&query, 100, None).await.unwrap();
            assert_eq!(page.entries, expected, "{query:?}");
            assert_eq!(page.next, None);
        }
    };
    check(
        AuditQuery {
            actor: Some("anna".into()),
            ..AuditQuery::default()
        },
        &|e| e.actor.name == "anna",
    )
    .await;
    check(
        AuditQuery {
            action: Some("author.erase".into()),
            ..AuditQuery::default()
        },
        &|e| e.action == "author.erase",
    )
    .await;
    check(
        AuditQuery {
            target: Some(Target::new("comment", "c1")),
            ..AuditQuery::default()
        },
        &|e| e.target.id == "c1",
    )
    .await;
    check(
        AuditQuery {
            since_ms: Some(1_000),
            until_ms: Some(1_000),
            ..AuditQuery::default()
        },
        &|_| false,
    )
    .await;
    check(
        AuditQuery {
            since_ms: Some(2_000),
            until_ms: Some(1_000),
            ..AuditQuery::default()
        },
        &|_| false,
    )
    .await;
    // Cursors outside a time range: below it, nothing; above it, all of it.
    let lowest = "00000000000000000000000000";
    let highest = "7ZZZZZZZZZZZZZZZZZZZZZZZZZ";
    let ranged = AuditQuery {
        since_ms: Some(written[0].at_ms),
        ..AuditQuery::default()
    };
    let below = access.audit(&ranged, 100, Some(lowest)).await.unwrap();
    assert!(below.entries.is_empty());
    let above = access.audit(&ranged, 100, Some(highest)).await.unwrap();
    assert_eq!(above.entries.len(), 25);
    let middle = written[10].at_ms;
    check(
        AuditQuery {
            since_ms: Some(middle),
            until_ms: Some(middle + 1),
            ..AuditQuery::default()
        },
        &|e| e.at_ms == middle,
    )
    .await;
}

#[tokio::test]
async fn expired_entries_are_not_listed_and_bad_pages_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let access = open(&dir, Duration::ZERO);
    access.ensure_table().await.unwrap();
    access
        .record(entry("anna", "comment.approve", "comment", "c"))
        .await
        .unwrap();
    let page = access
        .audit(&AuditQuery::default(), 10, None)
        .await
        .unwrap();
    assert!(page.entries.is_empty());

    for limit in [0, 101] {
        let refused = access.audit(&AuditQuery::default(), limit, None).await;
        assert!(matches!(
            refused,
            Err(AccessError::Invalid { field: "limit", .. })
        ));
    }
    let refused = access.audit(&AuditQuery::default(), 10, Some("nope")).await;
    assert!(matches!(
        refused,
        Err(AccessError::Invalid {
            field: "cursor",
            ..
        })
    ));
    let empty_action = access.record(entry("anna", "", "comment", "c")).await;
    assert!(matches!(
        empty_action,
        Err(AccessError::Invalid {
            field: "action",
            ..
        })
    ));
}
