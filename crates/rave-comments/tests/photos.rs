//! Photo references: written with the comment that names a photo, removed
//! with it, and what tells the caller a blob may go.

mod common;

use common::{fixture, new_comment};
use rave_comments::*;
use rave_store::{AttributeValue, Item, PutItemInput, ReturnValues, Store};

fn photo_id(fill: char) -> PhotoId {
    PhotoId::parse(&fill.to_string().repeat(64)).unwrap()
}

fn photo(fill: char) -> NewPhoto {
    NewPhoto {
        id: photo_id(fill),
        width: 800,
        height: 600,
    }
}

fn with_photos(body: &str, photos: &[char]) -> NewComment {
    NewComment {
        media: photos.iter().map(|fill| photo(*fill)).collect(),
        ..new_comment("en", 5, body)
    }
}

fn ids(photos: &[Photo]) -> Vec<PhotoId> {
    photos.iter().map(|p| p.id.clone()).collect()
}

async fn referenced(comments: &Comments<rave_engine::Engine>, fill: char) -> bool {
    comments.photo_referenced(&photo_id(fill)).await.unwrap()
}

#[tokio::test]
async fn every_create_variant_writes_the_references_with_the_comment() {
    let f = fixture(Moderation::Off).await;
    f.comments
        .create("p", with_photos("plain", &['a']), None)
        .await
        .unwrap();
    f.comments
        .create("p", with_photos("keyed", &['b']), Some("key-1"))
        .await
        .unwrap();
    let order = OrderId::parse("o-1").unwrap();
    f.comments
        .create_verified("p", with_photos("bought", &['c']), None, &order)
        .await
        .unwrap();
    f.comments
        .create_verified(
            "p",
            with_photos("bought, keyed", &['d']),
            Some("key-2"),
            &OrderId::parse("o-2").unwrap(),
        )
        .await
        .unwrap();
    for fill in ['a', 'b', 'c', 'd'] {
        assert!(referenced(&f.comments, fill).await, "{fill}");
    }
    // A create refused in its transaction (the order is used) writes no
    // reference either: they are one write.
    let refused = f
        .comments
        .create_verified("p", with_photos("again", &['e']), None, &order)
        .await;
    assert!(matches!(refused, Err(CommentsError::Conflict(_))));
    assert!(!referenced(&f.comments, 'e').await);
    assert!(!referenced(&f.comments, 'f').await, "never named");

    let inventory = f.comments.photo_inventory(2).await.unwrap();
    assert_eq!(inventory.named.len(), 4);
    assert!(inventory.missing_references.is_empty());
    assert!(inventory.stale_references.is_empty());
}

#[tokio::test]
async fn an_import_writes_the_references_with_its_comments() {
    let f = fixture(Moderation::Off).await;
    let id = "01JD3X0000000000000000000A";
    let entry = ImportComment {
        product: "p".into(),
        id: Some(id.into()),
        status: None,
        comment: NewComment {
            created_at: Some(
                Timestamp::from_millis(ulid::Ulid::from_string(id).unwrap().timestamp_ms() as i64)
                    .unwrap(),
            ),
            ..with_photos("imported", &['a', 'b'])
        },
        reply: None,
        verified_purchase: false,
        votes: VoteCounts::default(),
        source: None,
        incentivized: false,
        image_urls: Vec::new(),
        email: None,
    };
    let outcome = f.comments.import(vec![entry.clone()]).await.unwrap();
    assert_eq!(outcome.created, 1);
    assert!(referenced(&f.comments, 'a').await);
    assert!(referenced(&f.comments, 'b').await);
    // Importing it again creates nothing, references included.
    assert_eq!(f.comments.import(vec![entry]).await.unwrap().created, 0);
    assert_eq!(
        f.comments.delete(id).await.unwrap(),
        vec![photo_id('a'), photo_id('b')]
    );
    assert!(!referenced(&f.comments, 'a').await);
}

#[tokio::test]
async fn a_shared_photo_is_unreferenced_only_when_its_last_comment_goes() {
    let f = fixture(Moderation::Off).await;
    let first = f
        .comments
        .create("p", with_photos("one", &['a', 'b']), None)
        .await
        .unwrap()
        .comment;
    let second = f
        .comments
        .create("q", with_photos("two", &['a']), None)
        .await
        .unwrap()
        .comment;
    // `a` is still named by the second comment: only `b` may go.
    assert_eq!(
        f.comments.delete(&first.id).await.unwrap(),
        vec![photo_id('b')]
    );
    assert!(referenced(&f.comments, 'a').await);
    assert!(!referenced(&f.comments, 'b').await);
    assert_eq!(
        f.comments.delete(&second.id).await.unwrap(),
        vec![photo_id('a')]
    );
    assert!(!referenced(&f.comments, 'a').await);
    // A comment without photos deletes as before, and only once.
    let plain = f
        .comments
        .create("p", new_comment("en", 3, "plain"), None)
        .await
        .unwrap()
        .comment;
    assert!(f.comments.delete(&plain.id).await.unwrap().is_empty());
    assert!(matches!(
        f.comments.delete(&plain.id).await,
        Err(CommentsError::NotFound)
    ));
}

#[tokio::test]
async fn one_photo_is_approved_or_rejected_without_touching_the_rest() {
    let f = fixture(Moderation::Pre).await;
    let created = f
        .comments
        .create("p", with_photos("held", &['a', 'b', 'c']), None)
        .await
        .unwrap()
        .comment;
    assert!(
        created
            .media
            .iter()
            .all(|p| p.status == PhotoStatus::Pending)
    );

    let approved = f
        .comments
        .approve_photo(&created.id, &photo_id('a'))
        .await
        .unwrap();
    assert_eq!(approved.status, Status::Pending, "the text still waits");
    assert_eq!(approved.body, created.body);
    let statuses: Vec<_> = approved.media.iter().map(|p| p.status).collect();
    assert_eq!(
        statuses,
        [
            PhotoStatus::Published,
            PhotoStatus::Pending,
            PhotoStatus::Pending
        ]
    );
    // Approving a published photo is a no-op.
    assert_eq!(
        f.comments
            .approve_photo(&created.id, &photo_id('a'))
            .await
            .unwrap(),
        approved
    );

    let (rejected, unreferenced) = f
        .comments
        .reject_photo(&created.id, &photo_id('b'))
        .await
        .unwrap();
    assert_eq!(unreferenced, vec![photo_id('b')]);
    assert_eq!(ids(&rejected.media), vec![photo_id('a'), photo_id('c')]);
    assert_eq!(rejected.status, Status::Pending);
    assert_eq!(rejected.body, created.body);
    assert!(!referenced(&f.comments, 'b').await);
    assert!(referenced(&f.comments, 'c').await);
    assert_eq!(f.comments.get(&created.id).await.unwrap(), rejected);

    // Unknown photos and comments are not found, and change nothing.
    for (comment, fill) in [
        (created.id.as_str(), 'b'),
        (created.id.as_str(), 'f'),
        ("01JD3X0000000000000000000Z", 'a'),
        ("not-an-id", 'a'),
    ] {
        assert!(matches!(
            f.comments.approve_photo(comment, &photo_id(fill)).await,
            Err(CommentsError::NotFound)
        ));
        assert!(matches!(
            f.comments.reject_photo(comment, &photo_id(fill)).await,
            Err(CommentsError::NotFound)
        ));
    }
    assert_eq!(f.comments.get(&created.id).await.unwrap(), rejected);
}

#[tokio::test]
async fn an_erasure_removes_the_references_and_names_the_photos_left_unnamed() {
    let f = fixture(Moderation::Off).await;
    f.comments
        .create("p", with_photos("one", &['a', 'b']), None)
        .await
        .unwrap();
    f.comments
        .create("q", with_photos("two", &['b', 'c']), None)
        .await
        .unwrap();
    f.comments
        .create("p", new_comment("en", 2, "no photos"), None)
        .await
        .unwrap();
    let kept = f
        .comments
        .create(
            "p",
            NewComment {
                author: "bob".into(),
                ..with_photos("bob's", &['c'])
            },
            None,
        )
        .await
        .unwrap()
        .comment;

    let erased = f.comments.erase_author("alice").await.unwrap();
    assert_eq!(erased.comments, 3);
    // `c` is bob's too.
    assert_eq!(
        erased.unreferenced_photos,
        vec![photo_id('a'), photo_id('b')]
    );
    assert!(!referenced(&f.comments, 'a').await);
    assert!(!referenced(&f.comments, 'b').await);
    assert!(referenced(&f.comments, 'c').await);
    assert_eq!(f.comments.get(&kept.id).await.unwrap().media.len(), 1);
    assert_eq!(
        f.comments.erase_author("alice").await.unwrap(),
        Erased::default()
    );
}

#[tokio::test]
async fn the_inventory_finds_and_repairs_references_that_disagree_with_comments() {
    let f = fixture(Moderation::Off).await;
    let named = f
        .comments
        .create("p", with_photos("one", &['a']), None)
        .await
        .unwrap()
        .comment;
    // A reference whose comment never was, and one deleted behind the
    // domain's back: what a batch cut short could leave.
    let stale_id = "01JD3X0000000000000000000Z";
    let reference = |fill: char, comment: &str| -> Item {
        Item::from([
            (
                "PK".to_owned(),
                AttributeValue::S(format!("PHOTO#{}", photo_id(fill))),
            ),
            (
                "SK".to_owned(),
                AttributeValue::S(format!("COMMENT#{comment}")),
            ),
        ])
    };
    f.engine
        .put_item(PutItemInput {
            table: "rave".into(),
            item: reference('e', stale_id),
            condition: None,
            return_values: ReturnValues::None,
        })
        .await
        .unwrap();
    f.engine
        .delete_item(rave_store::DeleteItemInput {
            table: "rave".into(),
            key: reference('a', &named.id),
            condition: None,
            return_values: ReturnValues::None,
        })
        .await
        .unwrap();
    assert!(!referenced(&f.comments, 'a').await);

    let inventory = f.comments.photo_inventory(1).await.unwrap();
    assert!(inventory.names(&photo_id('a')));
    assert!(!inventory.names(&photo_id('e')));
    assert_eq!(
        inventory.missing_references.iter().collect::<Vec<_>>(),
        [&(photo_id('a'), named.id.clone())]
    );
    assert_eq!(
        inventory.stale_references.iter().collect::<Vec<_>>(),
        [&(photo_id('e'), stale_id.to_owned())]
    );
    f.comments
        .repair_photo_references(&inventory)
        .await
        .unwrap();
    assert!(referenced(&f.comments, 'a').await);
    assert!(!referenced(&f.comments, 'e').await);
    let again = f.comments.photo_inventory(1).await.unwrap();
    assert!(again.missing_references.is_empty() && again.stale_references.is_empty());
}
