//! The single-table layout (part 2 of the design, plus the moderation index
//! of the sparse-index pattern). This module owns every key format: nothing
//! else in rave joins strings with `#` or `/`.
//!
//! | item            | PK                    | SK                | index keys                                             |
//! |-----------------|-----------------------|-------------------|--------------------------------------------------------|
//! | comment         | `COMMENT#<id>`        | `COMMENT#<id>`    | visible: GSIPK, GSI2PK, GSI3PK, GSI4PK; GSISK always   |
//! |                 |                       |                   | pending or flagged: MODPK, MODSK                       |
//! | idempotency key | `IDEMPOTENCY#<key>`   | `IDEMPOTENCY`     | none                                                   |
//! | product stats   | `PRODUCT#<p>`         | `S`, `S#<lang>`   | while 5-star count > 0: GSIPK = `LEADERS[#<lang>]`, GSISK = count (zero-padded) |
//! | author counter  | `AUTHOR#<author>`     | `S`               | none                                                   |
//! | aggregates      | `AGGREGATES`          | `TOTALS`          | none                                                   |
//!
//! `GSISK` is `<created_at>#<id>`: the fixed-width time, then the id, so the
//! sort key orders comments by time with ties broken by id — a total order.

use rave_store::{
    AttributeValue, GlobalSecondaryIndex, Item, KeyAttribute, KeySchema, KeyType, Number,
    Projection, StoreError, TableDefinition,
};

use crate::error::{CommentsError, Result};
use crate::model::{Comment, Language, ProductId, Rating, Status, Timestamp};

pub const PK: &str = "PK";
pub const SK: &str = "SK";
pub const GSISK: &str = "GSISK";
/// Increases with every change of a comment; writes are conditional on it.
pub const VERSION: &str = "version";

/// The four listing indexes of part 2 and the sparse moderation index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Index {
    /// `PRODUCT#<p>/<lang>/<rating>`
    ByLangAndRating,
    /// `PRODUCT#<p>/<lang>`
    ByLang,
    /// `PRODUCT#<p>/<rating>`
    ByRating,
    /// `PRODUCT#<p>`
    All,
    /// `MODERATION#<status>`, sorted by `MODSK` = `<created_at>#<id>`
    Moderation,
}

impl Index {
    pub const LISTINGS: [Index; 4] = [
        Index::ByLangAndRating,
        Index::ByLang,
        Index::ByRating,
        Index::All,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Index::ByLangAndRating => "byLangAndRating",
            Index::ByLang => "byLang",
            Index::ByRating => "byRating",
            Index::All => "all",
            Index::Moderation => "moderation",
        }
    }

    pub fn partition_attribute(self) -> &'static str {
        match self {
            Index::ByLangAndRating => "GSIPK",
            Index::ByLang => "GSI2PK",
            Index::ByRating => "GSI3PK",
            Index::All => "GSI4PK",
            Index::Moderation => "MODPK",
        }
    }

    pub fn sort_attribute(self) -> &'static str {
        match self {
            Index::Moderation => "MODSK",
            _ => GSISK,
        }
    }
}

/// The attributes a listing page shows. Indexes project exactly these (plus
/// keys), so a page is one query with no second read per comment, and the
/// other indexes' keys are not copied into every index.
const LISTED: [&str; 9] = [
    "id",
    "product_id",
    "author",
    "language",
    "rating",
    "title",
    "body",
    "created_at",
    "status",
];

pub fn table_definition(name: &str) -> TableDefinition {
    let index = |index: Index| GlobalSecondaryIndex {
        name: index.name().into(),
        key_schema: KeySchema::new(
            KeyAttribute::new(index.partition_attribute(), KeyType::S),
            Some(KeyAttribute::new(index.sort_attribute(), KeyType::S)),
        ),
        projection: Projection::Include(LISTED.iter().map(|s| s.to_string()).collect()),
    };
    TableDefinition {
        name: name.into(),
        key_schema: KeySchema::new(
            KeyAttribute::new(PK, KeyType::S),
            Some(KeyAttribute::new(SK, KeyType::S)),
        ),
        global_secondary_indexes: Index::LISTINGS
            .iter()
            .chain([&Index::Moderation])
            .map(|i| index(*i))
            .collect(),
        stream_enabled: true,
        time_to_live_attribute: None,
    }
}

pub fn comment_key(id: &str) -> Item {
    let key = format!("COMMENT#{id}");
    Item::from([
        (PK.into(), AttributeValue::S(key.clone())),
        (SK.into(), AttributeValue::S(key)),
    ])
}

/// The statistics item of a product, overall (`S`) or in one language (`S#<lang>`).
pub fn stats_key(product: &str, language: Option<&str>) -> Item {
    Item::from([
        (PK.into(), AttributeValue::S(format!("PRODUCT#{product}"))),
        (
            SK.into(),
            AttributeValue::S(match language {
                Some(l) => format!("S#{l}"),
                None => "S".to_owned(),
            }),
        ),
    ])
}

/// The counter of an author's counted comments.
pub fn author_key(author: &str) -> Item {
    Item::from([
        (PK.into(), AttributeValue::S(format!("AUTHOR#{author}"))),
        (SK.into(), AttributeValue::s("S")),
    ])
}

/// The global aggregates item.
pub fn totals_key() -> Item {
    Item::from([
        (PK.into(), AttributeValue::s("AGGREGATES")),
        (SK.into(), AttributeValue::s("TOTALS")),
    ])
}

/// The leaderboard partition of the overloaded `byLangAndRating` index.
pub fn leaderboard_partition(language: Option<&str>) -> String {
    match language {
        Some(l) => format!("LEADERS#{l}"),
        None => "LEADERS".to_owned(),
    }
}

/// A 5-star count as a leaderboard sort key: `GSISK` holds strings (dates
/// on comments), so counts are zero-padded to sort as text.
pub fn leaderboard_sort_key(five_star: u64) -> String {
    format!("{five_star:012}")
}

/// What kind of item a table item is, from its partition key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    Comment,
    ProductStats,
    Author,
    Totals,
    Other,
}

pub fn kind_of(item: &Item) -> ItemKind {
    let pk = item.get(PK).and_then(AttributeValue::as_s).unwrap_or("");
    if pk.starts_with("COMMENT#") {
        ItemKind::Comment
    } else if pk.starts_with("PRODUCT#") {
        ItemKind::ProductStats
    } else if pk.starts_with("AUTHOR#") {
        ItemKind::Author
    } else if pk == "AGGREGATES" {
        ItemKind::Totals
    } else {
        ItemKind::Other
    }
}

/// Whether a table item is a comment (and not a record of another kind).
pub fn is_comment(item: &Item) -> bool {
    kind_of(item) == ItemKind::Comment
}

pub fn idempotency_key(key: &str) -> Item {
    Item::from([
        (PK.into(), AttributeValue::S(format!("IDEMPOTENCY#{key}"))),
        (SK.into(), AttributeValue::s("IDEMPOTENCY")),
    ])
}

/// `<created_at>#<id>`: the sort key of listings and of the moderation queue.
pub fn sort_key(created_at: Timestamp, id: &str) -> String {
    format!("{created_at}#{id}")
}

/// The partition of one listing index for a product (and language and rating).
pub fn listing_partition(
    index: Index,
    product: &ProductId,
    language: Option<&Language>,
    rating: Option<Rating>,
) -> String {
    match (index, language, rating) {
        (Index::ByLangAndRating, Some(l), Some(r)) => format!("PRODUCT#{product}/{l}/{r}"),
        (Index::ByLang, Some(l), _) => format!("PRODUCT#{product}/{l}"),
        (Index::ByRating, _, Some(r)) => format!("PRODUCT#{product}/{r}"),
        _ => format!("PRODUCT#{product}"),
    }
}

pub fn moderation_partition(status: Status) -> String {
    format!("MODERATION#{}", status.as_str())
}

/// The stored item of a comment; `version` increases with every change.
pub fn comment_item(comment: &Comment, version: u64) -> Item {
    let mut item = comment_key(&comment.id);
    let sort = sort_key(comment.created_at, &comment.id);
    let product = &comment.product_id;
    if comment.status.is_visible() {
        for index in Index::LISTINGS {
            let partition = listing_partition(
                index,
                product,
                Some(&comment.language),
                Some(comment.rating),
            );
            item.insert(
                index.partition_attribute().into(),
                AttributeValue::S(partition),
            );
        }
    }
    if comment.status != Status::Published {
        item.insert(
            Index::Moderation.partition_attribute().into(),
            AttributeValue::S(moderation_partition(comment.status)),
        );
        item.insert(
            Index::Moderation.sort_attribute().into(),
            AttributeValue::S(sort.clone()),
        );
    }
    item.insert(GSISK.into(), AttributeValue::S(sort));
    item.insert("id".into(), AttributeValue::s(&comment.id));
    item.insert("product_id".into(), AttributeValue::s(product.as_str()));
    item.insert("author".into(), AttributeValue::s(&comment.author));
    item.insert(
        "language".into(),
        AttributeValue::s(comment.language.as_str()),
    );
    item.insert(
        "rating".into(),
        AttributeValue::N(Number::from(i64::from(comment.rating.get()))),
    );
    item.insert("title".into(), AttributeValue::s(&comment.title));
    item.insert("body".into(), AttributeValue::s(&comment.body));
    item.insert(
        "created_at".into(),
        AttributeValue::S(comment.created_at.to_string()),
    );
    item.insert("status".into(), AttributeValue::s(comment.status.as_str()));
    item.insert(VERSION.into(), AttributeValue::N(Number::from(version)));
    item
}

fn corrupt(what: &str) -> CommentsError {
    CommentsError::Store(StoreError::Internal(format!(
        "stored comment is malformed: {what}"
    )))
}

fn text<'a>(item: &'a Item, name: &'static str) -> Result<&'a str> {
    item.get(name)
        .and_then(AttributeValue::as_s)
        .ok_or_else(|| corrupt(name))
}

/// Reads a comment back from a table item or an index entry.
pub fn comment_from_item(item: &Item) -> Result<Comment> {
    let rating = item
        .get("rating")
        .and_then(AttributeValue::as_n)
        .and_then(Number::to_i64)
        .ok_or_else(|| corrupt("rating"))?;
    Ok(Comment {
        id: text(item, "id")?.to_owned(),
        product_id: ProductId::parse(text(item, "product_id")?)
            .map_err(|_| corrupt("product_id"))?,
        author: text(item, "author")?.to_owned(),
        language: Language::parse(text(item, "language")?).map_err(|_| corrupt("language"))?,
        rating: Rating::new(rating).map_err(|_| corrupt("rating"))?,
        title: text(item, "title")?.to_owned(),
        body: text(item, "body")?.to_owned(),
        created_at: Timestamp::parse(text(item, "created_at")?)
            .map_err(|_| corrupt("created_at"))?,
        status: Status::parse(text(item, "status")?).ok_or_else(|| corrupt("status"))?,
    })
}

/// The version a stored comment carries (0 for none).
pub fn version_of(item: &Item) -> u64 {
    item.get(VERSION)
        .and_then(AttributeValue::as_n)
        .and_then(Number::to_i64)
        .map_or(0, |v| v as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comment(status: Status) -> Comment {
        Comment {
            id: "01JD3X0000000000000000000A".into(),
            product_id: ProductId::parse("42").unwrap(),
            author: "alice".into(),
            language: Language::parse("en").unwrap(),
            rating: Rating::new(5).unwrap(),
            title: "Great".into(),
            body: "Works well.".into(),
            created_at: Timestamp::parse("2026-11-21T10:00:00.123Z").unwrap(),
            status,
        }
    }

    #[test]
    fn published_comments_carry_every_listing_key_and_no_moderation_key() {
        let item = comment_item(&comment(Status::Published), 1);
        assert_eq!(item["GSIPK"], AttributeValue::s("PRODUCT#42/en/5"));
        assert_eq!(item["GSI2PK"], AttributeValue::s("PRODUCT#42/en"));
        assert_eq!(item["GSI3PK"], AttributeValue::s("PRODUCT#42/5"));
        assert_eq!(item["GSI4PK"], AttributeValue::s("PRODUCT#42"));
        assert_eq!(
            item["GSISK"],
            AttributeValue::s("2026-11-21T10:00:00.123Z#01JD3X0000000000000000000A")
        );
        assert!(!item.contains_key("MODPK") && !item.contains_key("MODSK"));
        assert_eq!(
            comment_from_item(&item).unwrap(),
            comment(Status::Published)
        );
    }

    #[test]
    fn pending_comments_are_invisible_by_construction() {
        let item = comment_item(&comment(Status::Pending), 1);
        for index in Index::LISTINGS {
            assert!(!item.contains_key(index.partition_attribute()), "{index:?}");
        }
        assert_eq!(item["MODPK"], AttributeValue::s("MODERATION#pending"));
    }

    #[test]
    fn flagged_comments_are_listed_and_queued() {
        let item = comment_item(&comment(Status::Flagged), 1);
        assert!(item.contains_key("GSI4PK"));
        assert_eq!(item["MODPK"], AttributeValue::s("MODERATION#flagged"));
    }
}
