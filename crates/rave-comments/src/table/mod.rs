//! The single-table layout: part 2 of the design, the moderation index of
//! the sparse-index pattern, and the statistics items of part 4.
//!
//! This module is the only place in rave that names an attribute or builds
//! a key. Each item kind has one codec (a submodule) that owns its key
//! format, its attribute names, how it is written and how it is read back;
//! every reader decodes through the codec, and a malformed item is an error
//! that names its key ([`Malformed`]), never silently skipped.
//!
//! | item               | PK                    | SK                | index keys                                             |
//! |--------------------|-----------------------|-------------------|--------------------------------------------------------|
//! | comment            | `COMMENT#<id>`        | `COMMENT#<id>`    | visible: GSIPK, GSI2PK, GSI3PK, GSI4PK; GSISK always   |
//! |                    |                       |                   | pending or flagged: MODPK, MODSK                       |
//! |                    |                       |                   | visible and verified: VGSIPK, VGSI2PK, VGSI3PK, VGSI4PK |
//! |                    |                       |                   | always: AUTHORPK = `AUTHOR#<author>`                   |
//! |                    |                       |                   | always: HELPSK (the `helpful` sort key, see below)     |
//! | listing copy       | `COMMENT#<id>`        | `MEDIA`           | visible with a published photo: the comment's listing keys (GSIPK…GSI4PK, VGSI* when verified, GSISK, HELPSK) in `MEDIA#<p>…` partitions; no AUTHORPK, MODPK (see `comment`) |
//! | family copy        | `COMMENT#<id>`        | `FAMILY`          | visible, of a grouped product: the same keys in `FAMILY#<g>…` partitions (`g` the comment's `details.family`) |
//! | family media copy  | `COMMENT#<id>`        | `FAMILYMEDIA`     | both of the above: the same keys in `FAMILYMEDIA#<g>…` partitions |
//! | vote               | `COMMENT#<id>`        | `VOTE#<voter>`    | none                                                   |
//! | idempotency record | `IDEMPOTENCY#<key>`   | `IDEMPOTENCY`     | none; expires (TTL attribute `expires_at`)             |
//! | order verification | `ORDER#<p>#<order>`   | `ORDER`           | none                                                   |
//! | personal data      | `PERSONAL#<id>`       | `PERSONAL`        | none (an imported author's email, never shown)         |
//! | photo reference    | `PHOTO#<photo id>`    | `COMMENT#<id>`    | none (one per comment naming the photo, see `photo`)    |
//! | product statistics | `PRODUCT#<p>`         | `S`, `S#<lang>`   | while 5-star count > 0 (its leaderboard entry): GSIPK = `LEADERS[#<lang>]#<shard>`, GSISK = count (zero-padded) |
//! | product record     | `PRODUCT#<p>`         | `PRODUCT`         | none (`group` names the family it is a variant of)      |
//! | SKU lookup         | `SKU#<sku>`           | `SKU`             | none (the product whose record lists the SKU)          |
//! | group head         | `GROUP#<g>`           | `GROUP`           | none (`members`: how many variants, see `group`)       |
//! | group member       | `GROUP#<g>`           | `MEMBER#<p>`      | none                                                   |
//! | author statistics  | `AUTHOR#<author>`     | `S`               | none                                                   |
//! | partial totals     | `AGGREGATES#<slot>`   | `TOTALS`          | none (summed on read; `AGGREGATES` alone: old layout)  |
//! | aggregator position| `AGGREGATOR#<name>`   | `SHARD#<shard>`   | none (DynamoDB Streams only)                           |
//!
//! Every statistics item also carries a `version` token, new with each write,
//! which the aggregator's writes are conditional on. The statistics codecs
//! are under `stats`, one per kind; a product's partition (its record and
//! its statistics items) is keyed by `product_partition`.
//!
//! | index | partition key | sort key | answers |
//! |---|---|---|---|
//! | `byLangAndRating` | `GSIPK` = `PRODUCT#<p>/<lang>/<rating>` | `GSISK` | a listing with a language and ratings (and the leaderboard) |
//! | `byLang` | `GSI2PK` = `PRODUCT#<p>/<lang>` | `GSISK` | a listing with a language |
//! | `byRating` | `GSI3PK` = `PRODUCT#<p>/<rating>` | `GSISK` | a listing with ratings, any language |
//! | `all` | `GSI4PK` = `PRODUCT#<p>` | `GSISK` | a product's listing |
//! | `moderation` | `MODPK` = `MODERATION#<status>` | `MODSK` = `<created_at>#<id>` | the moderation queue, by time prefix (`begins_with`) |
//! | `verifiedByLangAndRating`, `verifiedByLang`, `verifiedByRating`, `verifiedAll` | `VGSIPK` … `VGSI4PK` | `GSISK` | the same listings with `verified=true` (sparse: verified comments only) |
//! | `byAuthor` | `AUTHORPK` | `GSISK` | an author's comments, any status (the admin's listing, erasure) |
//! | `helpfulByLangAndRating`, `helpfulByRating` | `GSIPK`, `GSI3PK` | `HELPSK` | `sort=helpful` with ratings (one partition per rating, merged) |
//! | `helpfulByLang`, `helpfulAll` | `GSI2PK`, `GSI4PK` | `HELPSK` | `sort=helpful` without ratings (one partition) |
//!
//! Every listing index above also holds, under `MEDIA#<p>…` in place of
//! `PRODUCT#<p>…`, the listing copies of the comments with a published
//! photo: `has_media=true` reads the same plan there; and under
//! `FAMILY#<g>…` / `FAMILYMEDIA#<g>…` the family copies of the comments
//! of group `g`'s variants: a group's listing reads the same plan there.
//! | `verifiedHelpfulByLangAndRating`, `verifiedHelpfulByRating` | `VGSIPK`, `VGSI3PK` | `HELPSK` | the same with `verified=true` |
//!
//! **Projections.** The listing, `helpful*` per-rating and moderation
//! indexes project exactly what a listing shows (13 attributes: the
//! comment's fields, the merchant's reply as one map, `verified_purchase`,
//! the vote counts and `details`, one map of the listed fields added later,
//! so a new one spends none of the quota) with INCLUDE. The id and creation
//! time are not projected: every entry carries the table key
//! `COMMENT#<id>`, and the ULID holds the time. A page is then one Query per
//! sub-query with no BatchGetItem per comment (which charges a whole read
//! unit per item), and no index stores the other indexes' keys or the
//! `version` counter: KEYS_ONLY would force that second read, and ALL would
//! copy every index key into every entry for nothing. The exceptions are
//! forced by DynamoDB's quota of 100 INCLUDE-projected attributes summed
//! over a table's indexes (the seven INCLUDE indexes use 91; a unit test
//! holds the definition to the quota): the verified copies project ALL
//! (they hold only verified comments, so the extra keys cost little),
//! `helpfulByLang` and `helpfulAll` project ALL (every comment's keys
//! copied twice more: the price of one-partition pages), and `byAuthor`
//! projects KEYS_ONLY (erasure and the admin's listing read each comment
//! by key, never on a shop's page).
//!
//! **Ids and time.** An id is a ULID whose timestamp is the comment's
//! creation time (ids made now come from a monotonic generator; an imported
//! comment's id is made from its `created_at`). `GSISK` is
//! `<created_at>#<id>`: the fixed-width time, then the id, so the sort key
//! orders comments by time with ties broken by id — a total order — and a
//! comment's id alone rebuilds its sort key, which keeps cursors small.
//!
//! `HELPSK` is `<rank>#<created_at>#<id>`: the Wilson lower bound of the
//! comment's votes as ten digits (`round(score × 10⁹)`, zero-padded), then
//! `GSISK`. The `helpful*` indexes, keyed by the partitions of
//! `byLangAndRating` and `byRating` (and of their verified copies), read it
//! descending: most helpful first, newest first among equal scores, ties by
//! id. Every write of a comment writes it (so the aggregator's rewrite of
//! the counts moves the entry in the same commit, under the same version
//! condition); comments stored before it existed carry none and are listed
//! by no `helpful*` index until `rave reconcile --fix` (which reports the
//! missing key as drift) or any later write of the comment adds it.
//!
//! `S` also carries the product's revision, which the aggregator raises with
//! every change to a visible comment of the product; it is kept (with zero
//! counts) when the last comment goes, so a revision never repeats.

pub(crate) mod attributes;
pub(crate) mod comment;
pub(crate) mod group;
pub(crate) mod idempotency;
pub(crate) mod index;
pub(crate) mod keys;
pub(crate) mod order;
pub(crate) mod personal;
pub(crate) mod photo;
pub(crate) mod position;
pub(crate) mod product;
pub(crate) mod product_partition;
pub(crate) mod sku;
pub(crate) mod stats;
pub(crate) mod vote;

use rave_store::{
    AttributeValue, GlobalSecondaryIndex, Item, KeyAttribute, KeySchema, KeyType, Projection,
    TableDefinition,
};

pub(crate) use crate::error::Malformed;
pub(crate) use index::Index;
pub(crate) use keys::{GSISK, PK, SK, count, describe_key, key, number, primary_key, signed, text};

/// What the index copies of a comment. The four listing indexes, the
/// moderation index and the two per-rating `helpful` indexes project
/// what a page shows (13 attributes each: 91 of DynamoDB's quota of 100
/// included attributes, summed over the indexes). The others project
/// ALL, which does not count against that quota: the verified copies
/// hold only verified comments, so the few attributes they copy for
/// nothing cost little, and `helpfulByLang` / `helpfulAll` copy the
/// comment's keys and bookkeeping besides what a page shows. The author
/// index is KEYS_ONLY: it is read for erasures and an admin's listing,
/// which fetch the comments themselves, while every comment has an
/// entry.
fn projection(index: Index) -> Projection {
    match index {
        Index::VerifiedByLangAndRating
        | Index::VerifiedByLang
        | Index::VerifiedByRating
        | Index::VerifiedAll
        | Index::VerifiedHelpfulByLangAndRating
        | Index::VerifiedHelpfulByRating
        | Index::HelpfulByLang
        | Index::HelpfulAll => Projection::All,
        Index::ByAuthor => Projection::KeysOnly,
        _ => Projection::Include(comment::LISTED.iter().map(|s| s.to_string()).collect()),
    }
}

/// The table: string keys, the indexes, a change stream.
pub fn table_definition(name: &str) -> TableDefinition {
    let index = |index: Index| GlobalSecondaryIndex {
        name: index.name().into(),
        key_schema: KeySchema::new(
            KeyAttribute::new(index.partition_attribute(), KeyType::S),
            Some(KeyAttribute::new(index.sort_attribute(), KeyType::S)),
        ),
        projection: projection(index),
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
            .chain(&Index::VERIFIED_LISTINGS)
            .chain([&Index::ByAuthor])
            .chain(&Index::HELPFUL)
            .map(|i| index(*i))
            .collect(),
        stream_enabled: true,
        time_to_live_attribute: Some(idempotency::EXPIRES_AT.to_owned()),
        local_secondary_indexes: Vec::new(),
    }
}

/// What kind of item a table item is, from its partition key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ItemKind {
    Comment,
    /// A voter's vote, in its comment's partition.
    Vote,
    /// One of a comment's listing copies, in its partition
    /// (`comment::listing_copy`): what `has_media` and group listings
    /// read. Nothing counts or reports it; it is written and removed with
    /// its comment.
    ListingCopy,
    ProductStats,
    AuthorStats,
    Totals,
    /// A product's record (`product`): what `reconcile` compares families
    /// with.
    ProductRecord,
    /// A group's head or member item (`group`).
    Group,
    /// Idempotency records, aggregator positions, SKU lookups, move
    /// markers, personal data and photo references: no statistic counts
    /// them, no webhook reports them.
    Other,
}

impl ItemKind {
    pub(crate) fn of(item: &Item) -> ItemKind {
        let pk = item.get(PK).and_then(AttributeValue::as_s).unwrap_or("");
        if pk.starts_with(comment::PREFIX) {
            if comment::is_comment_item(item) {
                ItemKind::Comment
            } else if vote::is_vote(item) {
                ItemKind::Vote
            } else if comment::is_listing_copy(item) {
                ItemKind::ListingCopy
            } else {
                ItemKind::Other
            }
        } else if pk.starts_with(product_partition::PREFIX) {
            let sk = item.get(SK).and_then(AttributeValue::as_s);
            if sk == Some(product_partition::RECORD) {
                ItemKind::ProductRecord
            } else {
                ItemKind::ProductStats
            }
        } else if group::is_group_item(item) {
            ItemKind::Group
        } else if pk.starts_with(stats::author::PREFIX) {
            ItemKind::AuthorStats
        } else if pk.split('#').next() == Some(stats::totals::PK_PREFIX) {
            ItemKind::Totals
        } else {
            ItemKind::Other
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// DynamoDB's quota on the attributes INCLUDE projections name, summed
    /// over a table's indexes (an attribute projected into two indexes
    /// counts twice); ALL and KEYS_ONLY projections do not count.
    const MAX_INCLUDED_ATTRIBUTES: usize = 100;

    #[test]
    fn the_indexes_stay_within_dynamodbs_quota_of_included_attributes() {
        let definition = table_definition("rave");
        let included: usize = definition
            .global_secondary_indexes
            .iter()
            .map(|index| match &index.projection {
                Projection::Include(attributes) => attributes.len(),
                Projection::All | Projection::KeysOnly => 0,
            })
            .sum();
        assert!(included <= MAX_INCLUDED_ATTRIBUTES, "{included} included");
        assert!(
            definition.global_secondary_indexes.len() <= 20,
            "DynamoDB's GSI quota"
        );
    }
}
