//! The comment item: its key, its index keys (which make a comment visible
//! to exactly the listings and queue its status allows), and its listed
//! attributes.
//!
//! Visibility is by construction: a pending comment has no listing-index
//! keys, so no listing can return it; a flagged one keeps them (it is still
//! shown) and also carries the moderation keys. A status change rewrites the
//! item, and the indexes follow in the same write.
//!
//! **The listing copy of a comment with photos.** A visible comment with at
//! least one published photo has a second item in its own partition
//! (`COMMENT#<id>` / `MEDIA`): its listed attributes and the same listing
//! keys (`GSIPK`…`GSI4PK`, the verified `VGSI*` ones when verified, `GSISK`,
//! `HELPSK`) naming the partitions `MEDIA#<p>…` in place of `PRODUCT#<p>…`,
//! and no author or moderation keys (the author index and the queue see
//! the comment once). So `has_media=true` reads the same indexes under
//! the other prefix, in every order and under every filter, and reads only
//! comments it shows: no new index, no filter expression. [`writes`] is
//! the one place that knows of it: every writer of a comment stores (or
//! removes) the copy in the same store write as the comment, at the price
//! of one more item written per change of a comment with photos.

use rave_store::{
    AttributeRef, AttributeValue, Comparator, Condition, Item, ItemView, Number, Operand, Path,
    WriteRequest,
};
use ulid::Ulid;

use super::keys::HELPFUL_SORT;
use super::{GSISK, Index, Malformed, PK, text};
use crate::attributes::AttributeAnswers;
use crate::model::{
    Comment, Language, ProductId, Rating, Reply, Source, Status, Timestamp, VoteCounts,
};
use crate::photos::{Photo, PhotoId, PhotoStatus};
use crate::reports::{Report, ReportReason, Reports};

pub(super) const PREFIX: &str = "COMMENT#";
/// The sort keys of a comment's listing copies, in the comment's
/// partition: one per kind of listing partitions (`Partitions`).
const MEDIA_COPY: &str = "MEDIA";
const FAMILY_COPY: &str = "FAMILY";
const FAMILY_MEDIA_COPY: &str = "FAMILYMEDIA";
/// Increases with every change of a comment; writes are conditional on it.
const VERSION: &str = "version";

/// The id and creation time are stored on the item for readers outside
/// rave (exports by the AWS CLI, PartiQL); rave reads both from the key
/// (`COMMENT#<id>`, whose ULID holds the creation time), so no index
/// projects them.
const ID: &str = "id";
const PRODUCT_ID: &str = "product_id";
const AUTHOR: &str = "author";
const LANGUAGE: &str = "language";
const RATING: &str = "rating";
const TITLE: &str = "title";
const BODY: &str = "body";
const CREATED_AT: &str = "created_at";
const STATUS: &str = "status";
/// The moderation rule that held the comment; only while it is held.
const HELD_BY: &str = "held_by";
/// The merchant's reply: a map of `body`, `created_at` and `updated_at`,
/// on the comment item so that listings show it without a second read.
const REPLY: &str = "reply";
const REPLY_BODY: &str = "body";
const REPLY_CREATED_AT: &str = "created_at";
const REPLY_UPDATED_AT: &str = "updated_at";
/// `true` on a comment a purchase proof verified; absent otherwise (and on
/// comments stored before verification existed).
const VERIFIED_PURCHASE: &str = "verified_purchase";
/// The partition of the `byAuthor` index: `AUTHOR#<author>`, on every
/// comment whatever its status. Nothing follows the author, so any
/// character it holds (`#` and `/` too) keys only its own partition.
const AUTHOR_PARTITION_PREFIX: &str = "AUTHOR#";
/// The vote counts, written by the aggregator; absent means zero.
const HELPFUL_VOTES: &str = "helpful_votes";
const UNHELPFUL_VOTES: &str = "unhelpful_votes";
/// The platform an imported comment came from; absent on comments posted
/// here. Not `LISTED`: a page does not show it.
const SOURCE: &str = "source";
/// An imported comment's image references, a list of strings; absent when
/// there are none. Not `LISTED`, like `source`.
const IMAGE_URLS: &str = "image_urls";
/// The sort key of the `helpful*` indexes: `<rank>#<created_at>#<id>`.
/// Digits of a helpfulness rank: `round(score × 10⁹)` is at most 10⁹.
const RANK_DIGITS: usize = 10;
const RANK_SCALE: f64 = 1e9;

/// What a listing shows of a comment beyond the fields above, added after
/// the indexes' quota of included attributes ran low: one map, so a new
/// listed field costs no more of the quota. Absent when every field in it
/// has its default.
const DETAILS: &str = "details";
/// `true` on a review written for a reward (a free product, a discount).
const DETAILS_INCENTIVIZED: &str = "incentivized";
/// The review's answers to its product's attributes (`table::attributes`).
const DETAILS_ATTRIBUTES: &str = "attributes";
/// Readers' reports since the last decision: a map of reason to count
/// (`spam`, `offensive`, `off_topic`, `fake`, `other`; absent reasons are
/// zero), and the latest notes, a list of maps of `reason` and `note`.
const DETAILS_REPORTS: &str = "reports";
const DETAILS_REPORT_NOTES: &str = "report_notes";
/// When the comment last entered the moderation queue (a timestamp).
const DETAILS_QUEUED_AT: &str = "queued_at";
/// The product family (group id) the comment's product was a variant of
/// when the comment was last written: where its family copies are. In
/// `details`, so index entries and copies carry it for no more of the
/// projection quota.
const DETAILS_FAMILY: &str = "family";
/// The comment's photos, in order: a list of maps of `id` (the image's
/// hash), `w` and `h` (the display size) and `pending` (`true` while a
/// moderator has to look at it; absent once published).
const DETAILS_MEDIA: &str = "media";
const PHOTO_ID: &str = "id";
const PHOTO_WIDTH: &str = "w";
const PHOTO_HEIGHT: &str = "h";
const PHOTO_PENDING: &str = "pending";
const NOTE_REASON: &str = "reason";
const NOTE_TEXT: &str = "note";

/// The attributes a listing page shows. Indexes project exactly these (plus
/// keys, which give the id and creation time), so a page is one query with
/// no second read per comment, and the other indexes' keys are not copied
/// into every index.
pub(super) const LISTED: [&str; 13] = [
    PRODUCT_ID,
    AUTHOR,
    LANGUAGE,
    RATING,
    TITLE,
    BODY,
    STATUS,
    HELD_BY,
    REPLY,
    VERIFIED_PURCHASE,
    HELPFUL_VOTES,
    UNHELPFUL_VOTES,
    DETAILS,
];

pub(crate) fn key(id: &str) -> Item {
    let pk = format!("{PREFIX}{id}");
    super::key(pk.clone(), pk)
}

/// The key of comment `id`'s listing copy of kind `copy` (see the
/// module's doc).
pub(crate) fn copy_key(id: &str, copy: Partitions) -> Item {
    match copy.copy_sort_key() {
        Some(sort) => super::key(format!("{PREFIX}{id}"), sort.to_owned()),
        None => key(id),
    }
}

/// Which comments a listing partition holds: every visible comment of the
/// product (`PRODUCT#<p>…`, the comment items), only those with a
/// published photo (`MEDIA#<p>…`, their media copies), every visible
/// comment of the product family (`FAMILY#<g>…`, their family copies) or
/// only the family's with a published photo (`FAMILYMEDIA#<g>…`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Partitions {
    #[default]
    Product,
    Media,
    Family,
    FamilyMedia,
}

impl Partitions {
    /// The kinds held by listing copies, each beside its comment under its
    /// own sort key.
    pub(crate) const COPIES: [Partitions; 3] = [
        Partitions::Media,
        Partitions::Family,
        Partitions::FamilyMedia,
    ];

    /// The partitions of a listing of a product's (or, `family`, a
    /// group's) comments, all of them or only those with photos.
    pub(crate) fn of_listing(family: bool, has_media: bool) -> Partitions {
        match (family, has_media) {
            (false, false) => Partitions::Product,
            (false, true) => Partitions::Media,
            (true, false) => Partitions::Family,
            (true, true) => Partitions::FamilyMedia,
        }
    }

    /// Distinct, and none a prefix of another's partitions
    /// (`MEDIA#` vs `FAMILYMEDIA#` differ at the start).
    fn prefix(self) -> &'static str {
        match self {
            Partitions::Product => "PRODUCT#",
            Partitions::Media => "MEDIA#",
            Partitions::Family => "FAMILY#",
            Partitions::FamilyMedia => "FAMILYMEDIA#",
        }
    }

    /// The sort key of the copy whose entries these partitions hold (none
    /// for `Product`, which holds the comment items).
    fn copy_sort_key(self) -> Option<&'static str> {
        match self {
            Partitions::Product => None,
            Partitions::Media => Some(MEDIA_COPY),
            Partitions::Family => Some(FAMILY_COPY),
            Partitions::FamilyMedia => Some(FAMILY_MEDIA_COPY),
        }
    }

    /// Whose id names the partitions holding `comment`, if any: its
    /// product's, or its family's.
    fn owner(self, comment: &Comment) -> Option<&ProductId> {
        match self {
            Partitions::Product | Partitions::Media => Some(&comment.product_id),
            Partitions::Family | Partitions::FamilyMedia => comment.group.as_ref(),
        }
    }

    /// Whether listings of these partitions show `comment`.
    pub(crate) fn hold(self, comment: &Comment) -> bool {
        let with_media = match self {
            Partitions::Product | Partitions::Family => true,
            Partitions::Media | Partitions::FamilyMedia => {
                comment.media.iter().any(Photo::is_published)
            }
        };
        comment.status.is_visible() && with_media && self.owner(comment).is_some()
    }

    /// The kind of partitions a listing partition key names.
    fn of_partition(partition: &str) -> Partitions {
        Partitions::COPIES
            .into_iter()
            .find(|kind| partition.starts_with(kind.prefix()))
            .unwrap_or(Partitions::Product)
    }
}

/// A put of a new comment must not overwrite anything.
pub(crate) fn absent() -> Condition {
    Condition::not_exists(PK)
}

/// The comment exists and listings show it (published or flagged): what a
/// vote needs.
pub(crate) fn listed() -> Condition {
    Condition::exists(Index::All.partition_attribute())
}

/// The comment is still at the version it was read at.
pub(crate) fn at_version(version: u64) -> Condition {
    Condition::eq(VERSION, version as i64)
}

/// `<created_at>#<id>`: the sort key of listings and of the moderation queue.
fn sort_key(created_at: Timestamp, id: &str) -> String {
    format!("{created_at}#{id}")
}

/// A comment's helpfulness as a whole number that sorts as the score does
/// (equal counts give equal ranks, so equal scores tie exactly).
pub(crate) fn helpfulness_rank(votes: &VoteCounts) -> u32 {
    (votes.helpfulness() * RANK_SCALE).round() as u32
}

/// `<rank>#<created_at>#<id>`: read descending, most helpful first, then
/// newest first, then by id.
fn helpful_sort_key(rank: u32, created_at: Timestamp, id: &str) -> String {
    format!(
        "{rank:0width$}#{}",
        sort_key(created_at, id),
        width = RANK_DIGITS
    )
}

/// The helpfulness rank an entry of a `helpful*` index sorts by.
pub(crate) fn helpfulness_rank_of(item: &(impl ItemView + ?Sized)) -> Result<u32, Malformed> {
    text(item, HELPFUL_SORT)?
        .get(..RANK_DIGITS)
        .and_then(|digits| digits.parse().ok())
        .ok_or_else(|| Malformed::new(item, format!("{HELPFUL_SORT} has no rank")))
}

/// Whether a stored comment lacks the `helpful` sort key its counts give
/// (it was stored before the key existed, or was written by hand).
pub(crate) fn helpful_key_is_stale(item: &Item) -> Result<bool, Malformed> {
    let comment = decode(item)?;
    let expected = helpful_sort_key(
        helpfulness_rank(&comment.votes),
        comment.created_at,
        &comment.id,
    );
    Ok(item.get(HELPFUL_SORT).and_then(AttributeValue::as_s) != Some(expected.as_str()))
}

/// The partition of one listing index for a product or a family (and
/// language and rating), among all its comments or only those with photos.
pub(crate) fn listing_partition(
    index: Index,
    partitions: Partitions,
    owner: &ProductId,
    language: Option<&Language>,
    rating: Option<Rating>,
) -> String {
    let prefix = partitions.prefix();
    match (index.unverified(), language, rating) {
        (Index::ByLangAndRating, Some(l), Some(r)) => format!("{prefix}{owner}/{l}/{r}"),
        (Index::ByLang, Some(l), _) => format!("{prefix}{owner}/{l}"),
        (Index::ByRating, _, Some(r)) => format!("{prefix}{owner}/{r}"),
        _ => format!("{prefix}{owner}"),
    }
}

/// The partition of the `byAuthor` index holding an author's comments.
pub(crate) fn author_partition(author: &str) -> String {
    format!("{AUTHOR_PARTITION_PREFIX}{author}")
}

/// Every item of a comment's partition: the comment and whatever lives
/// beside it (votes).
pub(crate) fn partition(id: &str) -> rave_store::KeyCondition {
    rave_store::KeyCondition::partition(PK, format!("{PREFIX}{id}"))
}

/// Whether an item of a comment's partition is the comment itself.
pub(crate) fn is_comment_item(item: &Item) -> bool {
    item.get(PK) == item.get(super::SK)
}

/// Whether an item of a comment's partition is one of the comment's
/// listing copies (of any kind).
pub(crate) fn is_listing_copy(item: &Item) -> bool {
    let sort = item.get(super::SK).and_then(AttributeValue::as_s);
    Partitions::COPIES
        .iter()
        .any(|kind| sort.is_some() && sort == kind.copy_sort_key())
}

/// Whether a comment has a media copy: listings show it, and at least one
/// of its photos (what the product's `has_media` counts count).
pub(crate) fn has_media_copy(comment: &Comment) -> bool {
    Partitions::Media.hold(comment)
}

/// Every comment of `product` that listings show (published or flagged):
/// its partition of the `all` index.
pub(crate) fn visible_of(product: &ProductId) -> rave_store::KeyCondition {
    rave_store::KeyCondition::partition(
        Index::All.partition_attribute(),
        listing_partition(Index::All, Partitions::Product, product, None, None),
    )
}

/// Every comment in the moderation queue with `status` (pending or
/// flagged): its partition of the `moderation` index.
pub(crate) fn queued(status: Status) -> rave_store::KeyCondition {
    rave_store::KeyCondition::partition(
        Index::Moderation.partition_attribute(),
        moderation_partition(status),
    )
}

/// The filter to the comments of `product`.
pub(crate) fn of_product(product: &ProductId) -> Condition {
    Condition::eq(PRODUCT_ID, AttributeValue::s(product.as_str()))
}

pub(crate) fn moderation_partition(status: Status) -> String {
    format!("MODERATION#{}", status.as_str())
}

/// The stored item of a comment; `version` increases with every change.
pub(crate) fn encode(comment: &Comment, version: u64) -> Item {
    let mut item = key(&comment.id);
    if comment.status.is_visible() {
        insert_listing_keys(&mut item, comment, Partitions::Product);
    }
    item.insert(
        Index::ByAuthor.partition_attribute().into(),
        AttributeValue::S(author_partition(&comment.author)),
    );
    if comment.status != Status::Published {
        item.insert(
            Index::Moderation.partition_attribute().into(),
            AttributeValue::S(moderation_partition(comment.status)),
        );
        item.insert(
            Index::Moderation.sort_attribute().into(),
            AttributeValue::S(sort_key(comment.created_at, &comment.id)),
        );
    }
    insert_sort_keys(&mut item, comment);
    insert_listed(&mut item, comment);
    let mut set = |name: &str, value: AttributeValue| {
        item.insert(name.into(), value);
    };
    set(ID, AttributeValue::s(&comment.id));
    set(
        CREATED_AT,
        AttributeValue::S(comment.created_at.to_string()),
    );
    if let Some(source) = &comment.source {
        set(SOURCE, AttributeValue::s(source.as_str()));
    }
    if !comment.image_urls.is_empty() {
        set(
            IMAGE_URLS,
            AttributeValue::L(comment.image_urls.iter().map(AttributeValue::s).collect()),
        );
    }
    set(VERSION, AttributeValue::N(Number::from(version)));
    item
}

/// The [`LISTED`] attributes: what a listing shows of a comment.
fn insert_listed(item: &mut Item, comment: &Comment) {
    let mut set = |name: &str, value: AttributeValue| {
        item.insert(name.into(), value);
    };
    set(PRODUCT_ID, AttributeValue::s(comment.product_id.as_str()));
    set(AUTHOR, AttributeValue::s(&comment.author));
    set(LANGUAGE, AttributeValue::s(comment.language.as_str()));
    set(
        RATING,
        AttributeValue::N(Number::from(i64::from(comment.rating.get()))),
    );
    set(TITLE, AttributeValue::s(&comment.title));
    set(BODY, AttributeValue::s(&comment.body));
    set(STATUS, AttributeValue::s(comment.status.as_str()));
    if let Some(rule) = &comment.held_by {
        set(HELD_BY, AttributeValue::s(rule));
    }
    if let Some(reply) = &comment.reply {
        set(REPLY, encode_reply(reply));
    }
    if comment.verified_purchase {
        set(VERIFIED_PURCHASE, AttributeValue::Bool(true));
    }
    for (name, count) in [
        (HELPFUL_VOTES, comment.votes.helpful),
        (UNHELPFUL_VOTES, comment.votes.unhelpful),
    ] {
        if count > 0 {
            set(name, AttributeValue::N(Number::from(count)));
        }
    }
    if let Some(details) = encode_details(comment) {
        set(DETAILS, details);
    }
}

/// The partition keys of the listing indexes (and of their verified
/// copies, which hold nothing else, when the comment is verified).
fn insert_listing_keys(item: &mut Item, comment: &Comment, partitions: Partitions) {
    let Some(owner) = partitions.owner(comment) else {
        return;
    };
    let verified: &[Index] = if comment.verified_purchase {
        &Index::VERIFIED_LISTINGS
    } else {
        &[]
    };
    for index in Index::LISTINGS.iter().chain(verified).copied() {
        let partition = listing_partition(
            index,
            partitions,
            owner,
            Some(&comment.language),
            Some(comment.rating),
        );
        item.insert(
            index.partition_attribute().into(),
            AttributeValue::S(partition),
        );
    }
}

/// The sort keys every listing entry of a comment has: by time, and by
/// helpfulness.
fn insert_sort_keys(item: &mut Item, comment: &Comment) {
    item.insert(
        HELPFUL_SORT.into(),
        AttributeValue::S(helpful_sort_key(
            helpfulness_rank(&comment.votes),
            comment.created_at,
            &comment.id,
        )),
    );
    item.insert(
        GSISK.into(),
        AttributeValue::S(sort_key(comment.created_at, &comment.id)),
    );
}

/// The listing copy of kind `copy` of a comment, when it has one
/// ([`Partitions::hold`]): what the listing indexes show of it, keyed
/// into that kind's partitions.
pub(crate) fn listing_copy(comment: &Comment, copy: Partitions) -> Option<Item> {
    if copy == Partitions::Product || !copy.hold(comment) {
        return None;
    }
    let mut item = copy_key(&comment.id, copy);
    insert_listing_keys(&mut item, comment, copy);
    insert_sort_keys(&mut item, comment);
    insert_listed(&mut item, comment);
    Some(item)
}

/// Every write that takes a comment from `before` (as stored; `None` when
/// it is new) to `after` at `version` (`None` when it goes), the comment's
/// own write first: the comment item, then each listing copy written, kept
/// or removed with it (in [`Partitions::COPIES`] order). Every writer of a
/// comment writes these in one store write (a transaction when there are
/// several), so a copy never outlives, lags or misses its comment; a
/// comment whose group changes keeps its one family copy's key, which the
/// put moves to the new family's partitions.
pub(crate) fn writes(
    before: Option<&Comment>,
    after: Option<&Comment>,
    version: u64,
) -> Vec<WriteRequest> {
    let Some(id) = after.or(before).map(|comment| comment.id.as_str()) else {
        return Vec::new();
    };
    let mut writes = vec![match after {
        Some(after) => WriteRequest::Put(encode(after, version)),
        None => WriteRequest::Delete(key(id)),
    }];
    for kind in Partitions::COPIES {
        let had = before.is_some_and(|before| kind.hold(before));
        match after.and_then(|after| listing_copy(after, kind)) {
            Some(copy) => writes.push(WriteRequest::Put(copy)),
            None if had => writes.push(WriteRequest::Delete(copy_key(id, kind))),
            None => {}
        }
    }
    writes
}

/// The image references a comment item carries (none on an index entry,
/// which does not project them).
fn decode_image_urls(item: &(impl ItemView + ?Sized)) -> Result<Vec<String>, Malformed> {
    match item.attribute(IMAGE_URLS) {
        None => Ok(Vec::new()),
        Some(AttributeRef::Other(AttributeValue::L(urls))) => urls
            .iter()
            .map(|url| url.as_s().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| Malformed::new(item, format!("{IMAGE_URLS} holds a non-string"))),
        Some(_) => Err(Malformed::new(item, format!("{IMAGE_URLS} is not a list"))),
    }
}

fn encode_reply(reply: &Reply) -> AttributeValue {
    AttributeValue::M(
        [
            (REPLY_BODY, AttributeValue::s(&reply.body)),
            (
                REPLY_CREATED_AT,
                AttributeValue::S(reply.created_at.to_string()),
            ),
            (
                REPLY_UPDATED_AT,
                AttributeValue::S(reply.updated_at.to_string()),
            ),
        ]
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value))
        .collect(),
    )
}

/// The reply a comment item carries, if any; `item` names the comment in
/// the error when the reply does not decode.
fn decode_reply(item: &(impl ItemView + ?Sized)) -> Result<Option<Reply>, Malformed> {
    let Some(value) = item.attribute(REPLY) else {
        return Ok(None);
    };
    let bad = |what: &str| Malformed::new(item, format!("{REPLY}.{what} is not valid"));
    let AttributeRef::Other(AttributeValue::M(reply)) = value else {
        return Err(bad("map"));
    };
    let field = |name: &str| {
        reply
            .get(name)
            .and_then(AttributeValue::as_s)
            .ok_or_else(|| bad(name))
    };
    let time = |name: &str| Timestamp::parse(field(name)?).map_err(|_| bad(name));
    Ok(Some(Reply {
        body: field(REPLY_BODY)?.to_owned(),
        created_at: time(REPLY_CREATED_AT)?,
        updated_at: time(REPLY_UPDATED_AT)?,
    }))
}

/// The `details` map of a comment, `None` when every field has its default.
fn encode_details(comment: &Comment) -> Option<AttributeValue> {
    let mut details = std::collections::BTreeMap::new();
    if comment.incentivized {
        details.insert(DETAILS_INCENTIVIZED.to_owned(), AttributeValue::Bool(true));
    }
    if let Some(answers) = super::attributes::encode_answers(&comment.attributes) {
        details.insert(DETAILS_ATTRIBUTES.to_owned(), answers);
    }
    if !comment.reports.is_empty() {
        let counts = comment
            .reports
            .counts
            .iter()
            .map(|(reason, count)| {
                (
                    reason.as_str().to_owned(),
                    AttributeValue::N(Number::from(*count)),
                )
            })
            .collect();
        details.insert(DETAILS_REPORTS.to_owned(), AttributeValue::M(counts));
    }
    if !comment.reports.notes.is_empty() {
        let notes = comment
            .reports
            .notes
            .iter()
            .map(|report| {
                let mut note = std::collections::BTreeMap::new();
                note.insert(
                    NOTE_REASON.to_owned(),
                    AttributeValue::s(report.reason.as_str()),
                );
                if let Some(text) = &report.note {
                    note.insert(NOTE_TEXT.to_owned(), AttributeValue::s(text));
                }
                AttributeValue::M(note)
            })
            .collect();
        details.insert(DETAILS_REPORT_NOTES.to_owned(), AttributeValue::L(notes));
    }
    if let Some(queued_at) = comment.queued_at {
        details.insert(
            DETAILS_QUEUED_AT.to_owned(),
            AttributeValue::S(queued_at.to_string()),
        );
    }
    if !comment.media.is_empty() {
        let photos = comment.media.iter().map(encode_photo).collect();
        details.insert(DETAILS_MEDIA.to_owned(), AttributeValue::L(photos));
    }
    if let Some(group) = &comment.group {
        details.insert(DETAILS_FAMILY.to_owned(), AttributeValue::s(group.as_str()));
    }
    (!details.is_empty()).then_some(AttributeValue::M(details))
}

fn encode_photo(photo: &Photo) -> AttributeValue {
    let mut map = std::collections::BTreeMap::new();
    map.insert(PHOTO_ID.to_owned(), AttributeValue::s(photo.id.as_str()));
    map.insert(
        PHOTO_WIDTH.to_owned(),
        AttributeValue::N(Number::from(u64::from(photo.width))),
    );
    map.insert(
        PHOTO_HEIGHT.to_owned(),
        AttributeValue::N(Number::from(u64::from(photo.height))),
    );
    if photo.status == PhotoStatus::Pending {
        map.insert(PHOTO_PENDING.to_owned(), AttributeValue::Bool(true));
    }
    AttributeValue::M(map)
}

fn decode_photos(
    item: &(impl ItemView + ?Sized),
    value: Option<&AttributeValue>,
) -> Result<Vec<Photo>, Malformed> {
    let bad = || Malformed::new(item, format!("{DETAILS}.{DETAILS_MEDIA} is not valid"));
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    let AttributeValue::L(photos) = value else {
        return Err(bad());
    };
    photos
        .iter()
        .map(|photo| {
            let AttributeValue::M(photo) = photo else {
                return Err(bad());
            };
            let edge = |name: &str| {
                photo
                    .get(name)
                    .and_then(AttributeValue::as_n)
                    .and_then(|n| n.to_i64())
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(bad)
            };
            Ok(Photo {
                id: photo
                    .get(PHOTO_ID)
                    .and_then(AttributeValue::as_s)
                    .and_then(|id| PhotoId::parse(id).ok())
                    .ok_or_else(bad)?,
                width: edge(PHOTO_WIDTH)?,
                height: edge(PHOTO_HEIGHT)?,
                status: match photo.get(PHOTO_PENDING) {
                    None => PhotoStatus::Published,
                    Some(AttributeValue::Bool(true)) => PhotoStatus::Pending,
                    Some(_) => return Err(bad()),
                },
            })
        })
        .collect()
}

/// The attribute path of a report count in a comment item: what the
/// moderation queue filters on to show only comments reported for `reason`.
pub(crate) fn reported_for(reason: ReportReason) -> Condition {
    Condition::AttributeExists(
        Path::attr(DETAILS)
            .key(DETAILS_REPORTS)
            .key(reason.as_str()),
    )
}

/// The filter of a listing by incentive: a comment is incentivized iff its
/// `details.incentivized` is `true` (absent is `false`).
pub(crate) fn incentivized_is(incentivized: bool) -> Condition {
    let flag = Condition::compare(
        Operand::Path(Path::attr(DETAILS).key(DETAILS_INCENTIVIZED)),
        Comparator::Eq,
        Operand::value(AttributeValue::Bool(true)),
    );
    if incentivized { flag } else { flag.not() }
}

fn decode_reports(
    item: &(impl ItemView + ?Sized),
    details: &std::collections::BTreeMap<String, AttributeValue>,
) -> Result<Reports, Malformed> {
    let bad = |what: &str| Malformed::new(item, format!("{DETAILS}.{what} is not valid"));
    let mut reports = Reports::default();
    match details.get(DETAILS_REPORTS) {
        None => {}
        Some(AttributeValue::M(counts)) => {
            for (name, count) in counts {
                let reason = ReportReason::parse(name).map_err(|_| bad(DETAILS_REPORTS))?;
                let count = count
                    .as_n()
                    .and_then(|n| n.to_i64())
                    .and_then(|n| u64::try_from(n).ok())
                    .ok_or_else(|| bad(DETAILS_REPORTS))?;
                reports.counts.insert(reason, count);
            }
        }
        Some(_) => return Err(bad(DETAILS_REPORTS)),
    }
    match details.get(DETAILS_REPORT_NOTES) {
        None => {}
        Some(AttributeValue::L(notes)) => {
            for note in notes {
                let AttributeValue::M(note) = note else {
                    return Err(bad(DETAILS_REPORT_NOTES));
                };
                let reason = note
                    .get(NOTE_REASON)
                    .and_then(AttributeValue::as_s)
                    .and_then(|reason| ReportReason::parse(reason).ok())
                    .ok_or_else(|| bad(DETAILS_REPORT_NOTES))?;
                let text = match note.get(NOTE_TEXT) {
                    None => None,
                    Some(text) => Some(
                        text.as_s()
                            .ok_or_else(|| bad(DETAILS_REPORT_NOTES))?
                            .to_owned(),
                    ),
                };
                reports.notes.push(Report { reason, note: text });
            }
        }
        Some(_) => return Err(bad(DETAILS_REPORT_NOTES)),
    }
    Ok(reports)
}

/// The fields a comment item's `details` map holds (their defaults when it
/// has none).
struct Details {
    incentivized: bool,
    attributes: AttributeAnswers,
    reports: Reports,
    queued_at: Option<Timestamp>,
    media: Vec<Photo>,
    group: Option<ProductId>,
}

fn decode_details(item: &(impl ItemView + ?Sized)) -> Result<Details, Malformed> {
    let bad = |what: &str| Malformed::new(item, format!("{DETAILS}.{what} is not valid"));
    let details = match item.attribute(DETAILS) {
        None => {
            return Ok(Details {
                incentivized: false,
                attributes: AttributeAnswers::default(),
                reports: Default::default(),
                queued_at: None,
                media: Vec::new(),
                group: None,
            });
        }
        Some(AttributeRef::Other(AttributeValue::M(details))) => details,
        Some(_) => return Err(bad("map")),
    };
    Ok(Details {
        incentivized: match details.get(DETAILS_INCENTIVIZED) {
            None => false,
            Some(AttributeValue::Bool(incentivized)) => *incentivized,
            Some(_) => return Err(bad(DETAILS_INCENTIVIZED)),
        },
        attributes: super::attributes::decode_answers(
            item,
            details.get(DETAILS_ATTRIBUTES),
            &format!("{DETAILS}.{DETAILS_ATTRIBUTES}"),
        )?,
        reports: decode_reports(item, details)?,
        queued_at: match details.get(DETAILS_QUEUED_AT) {
            None => None,
            Some(value) => Some(
                value
                    .as_s()
                    .and_then(|text| Timestamp::parse(text).ok())
                    .ok_or_else(|| bad(DETAILS_QUEUED_AT))?,
            ),
        },
        media: decode_photos(item, details.get(DETAILS_MEDIA))?,
        group: match details.get(DETAILS_FAMILY) {
            None => None,
            Some(value) => Some(
                value
                    .as_s()
                    .and_then(|text| ProductId::parse(text).ok())
                    .ok_or_else(|| bad(DETAILS_FAMILY))?,
            ),
        },
    })
}

/// Reads a comment back from a table item, an index entry or a stream image.
pub(crate) fn decode(item: &(impl ItemView + ?Sized)) -> Result<Comment, Malformed> {
    decode_with_id(item, id_of_key(item)?)
}

/// [`decode`], with the id its key holds already read.
fn decode_with_id(item: &(impl ItemView + ?Sized), id: Ulid) -> Result<Comment, Malformed> {
    let bad = |what: &str| Malformed::new(item, format!("{what} is not valid"));
    let rating = item
        .attribute(RATING)
        .and_then(|value| value.as_n())
        .and_then(|n| n.to_i64())
        .ok_or_else(|| bad(RATING))?;
    let created_at = Timestamp::from_millis(id.timestamp_ms() as i64)
        .map_err(|_| bad("the id's creation time"))?;
    let details = decode_details(item)?;
    Ok(Comment {
        id: id.to_string(),
        product_id: ProductId::parse(text(item, PRODUCT_ID)?).map_err(|_| bad(PRODUCT_ID))?,
        author: text(item, AUTHOR)?.to_owned(),
        language: Language::parse(text(item, LANGUAGE)?).map_err(|_| bad(LANGUAGE))?,
        rating: Rating::new(rating).map_err(|_| bad(RATING))?,
        title: text(item, TITLE)?.to_owned(),
        body: text(item, BODY)?.to_owned(),
        created_at,
        status: Status::parse(text(item, STATUS)?).ok_or_else(|| bad(STATUS))?,
        held_by: match item.attribute(HELD_BY) {
            Some(value) => Some(value.as_s().ok_or_else(|| bad(HELD_BY))?.to_owned()),
            None => None,
        },
        reply: decode_reply(item)?,
        verified_purchase: match item.attribute(VERIFIED_PURCHASE) {
            None => false,
            Some(AttributeRef::Bool(verified)) => verified,
            Some(_) => return Err(bad(VERIFIED_PURCHASE)),
        },
        votes: VoteCounts {
            helpful: vote_count(item, HELPFUL_VOTES)?,
            unhelpful: vote_count(item, UNHELPFUL_VOTES)?,
        },
        source: match item.attribute(SOURCE) {
            Some(value) => Some(
                value
                    .as_s()
                    .and_then(|s| Source::parse(s).ok())
                    .ok_or_else(|| bad(SOURCE))?,
            ),
            None => None,
        },
        image_urls: decode_image_urls(item)?,
        incentivized: details.incentivized,
        attributes: details.attributes,
        media: details.media,
        reports: details.reports,
        queued_at: details.queued_at,
        group: details.group,
    })
}

/// A vote count of a comment; comments nobody voted on carry none.
fn vote_count(item: &(impl ItemView + ?Sized), name: &str) -> Result<u64, Malformed> {
    match item.attribute(name) {
        None => Ok(0),
        Some(_) => super::count(item, name),
    }
}

/// The version a stored comment carries.
pub(crate) fn version(item: &Item) -> Result<u64, Malformed> {
    super::count(item, VERSION)
}

/// The id of the comment whose key `item` carries: a table item, a stream
/// image or an entry of any index.
pub(crate) fn id_of_key(item: &(impl ItemView + ?Sized)) -> Result<Ulid, Malformed> {
    text(item, PK)?
        .strip_prefix(PREFIX)
        .and_then(|id| Ulid::from_string(id).ok())
        .ok_or_else(|| Malformed::new(item, "not a comment's key"))
}

/// Where an index entry sorts within its partition.
pub(crate) fn sort_value(item: &(impl ItemView + ?Sized), index: Index) -> &str {
    item.attribute(index.sort_attribute())
        .and_then(|value| value.as_s())
        .unwrap_or("")
}

/// An entry of a listing index, read as it is shown: where it sorts, the
/// comment its key names and, from an index that holds them, the listed
/// attributes as a comment. Whether the key and the comment decode is
/// kept, not raised: only the entries a page shows must.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Listed {
    pub sort: String,
    pub id: Result<Ulid, Malformed>,
    /// On a `helpful*` index, the rank the entry sorts by.
    pub helpfulness: Option<Result<u32, Malformed>>,
    pub shown: Shown,
}

/// Unboxed: nearly every entry is a comment, and boxing it would cost an
/// allocation per entry to spare a few moves of a buffered one.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Shown {
    Comment(Result<Comment, Malformed>),
    /// The primary key, from a KEYS_ONLY index: the comment is read by it.
    Key(Item),
}

impl Listed {
    pub(crate) fn read(entry: &(impl ItemView + ?Sized), index: Index) -> Listed {
        let id = id_of_key(entry);
        Listed {
            sort: sort_value(entry, index).to_owned(),
            helpfulness: index.is_helpful().then(|| helpfulness_rank_of(entry)),
            shown: if index.holds_comments() {
                Shown::Comment(id.clone().and_then(|id| decode_with_id(entry, id)))
            } else {
                Shown::Key(super::primary_key(entry))
            },
            id,
        }
    }

    /// The comment the entry shows.
    pub(crate) fn into_comment(self) -> Result<Comment, Malformed> {
        match self.shown {
            Shown::Comment(comment) => comment,
            Shown::Key(key) => Err(Malformed::new(&key, "a keys-only entry holds no comment")),
        }
    }

    /// The primary key of the comment the entry names.
    pub(crate) fn into_key(self) -> Result<Item, Malformed> {
        match self.shown {
            Shown::Comment(comment) => Ok(key(&comment?.id)),
            Shown::Key(key) => Ok(key),
        }
    }
}

/// The ExclusiveStartKey that resumes a query of `index` in `partition`
/// right after comment `id` (whose id gives its creation time) and, on a
/// `helpful*` index, the helpfulness `rank` it had when it was listed.
pub(crate) fn start_key(
    index: Index,
    partition: &str,
    id: Ulid,
    rank: Option<u32>,
) -> Result<Item, crate::error::CommentsError> {
    let created_at = Timestamp::from_millis(id.timestamp_ms() as i64)?;
    let id = id.to_string();
    let sort = match (index.is_helpful(), rank) {
        (false, _) => sort_key(created_at, &id),
        (true, Some(rank)) => helpful_sort_key(rank, created_at, &id),
        (true, None) => {
            return Err(crate::error::CommentsError::BadCursor(
                "the cursor does not say where the helpful order resumes",
            ));
        }
    };
    // The entry's table key: the comment's own, or that of the copy whose
    // kind's partitions these are.
    let mut key = copy_key(&id, Partitions::of_partition(partition));
    key.insert(
        index.partition_attribute().into(),
        AttributeValue::s(partition),
    );
    key.insert(index.sort_attribute().into(), AttributeValue::S(sort));
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::model::sample_comment as comment;

    #[test]
    fn published_comments_carry_every_listing_key_and_no_moderation_key() {
        let item = encode(&comment(Status::Published), 1);
        assert_eq!(item["GSIPK"], AttributeValue::s("PRODUCT#42/en/5"));
        assert_eq!(item["GSI2PK"], AttributeValue::s("PRODUCT#42/en"));
        assert_eq!(item["GSI3PK"], AttributeValue::s("PRODUCT#42/5"));
        assert_eq!(item["GSI4PK"], AttributeValue::s("PRODUCT#42"));
        assert_eq!(
            item["GSISK"],
            AttributeValue::s("2026-11-21T10:00:00.123Z#01M7YRRTBV000000000000000A")
        );
        assert!(!item.contains_key("MODPK") && !item.contains_key("MODSK"));
        assert_eq!(decode(&item).unwrap(), comment(Status::Published));
        assert_eq!(version(&item).unwrap(), 1);
    }

    #[test]
    fn verified_comments_also_enter_the_verified_copies() {
        let mut verified = comment(Status::Flagged);
        verified.verified_purchase = true;
        let item = encode(&verified, 1);
        for (copy, original) in Index::VERIFIED_LISTINGS.iter().zip(Index::LISTINGS) {
            assert_eq!(
                item[copy.partition_attribute()],
                item[original.partition_attribute()]
            );
        }
        assert_eq!(item[VERIFIED_PURCHASE], AttributeValue::Bool(true));
        assert_eq!(decode(&item).unwrap(), verified);
        let plain = encode(&comment(Status::Published), 1);
        for copy in Index::VERIFIED_LISTINGS {
            assert!(!plain.contains_key(copy.partition_attribute()), "{copy:?}");
        }
        assert!(!plain.contains_key(VERIFIED_PURCHASE));
        let mut hidden = verified.clone();
        hidden.status = Status::Pending;
        let item = encode(&hidden, 1);
        for copy in Index::VERIFIED_LISTINGS {
            assert!(!item.contains_key(copy.partition_attribute()), "{copy:?}");
        }
    }

    #[test]
    fn every_comment_is_in_its_authors_partition() {
        let mut odd = comment(Status::Pending);
        odd.author = "Ann #1/x".into();
        let item = encode(&odd, 1);
        assert_eq!(item["AUTHORPK"], AttributeValue::s("AUTHOR#Ann #1/x"));
        assert!(is_comment_item(&item));
    }

    #[test]
    fn pending_comments_are_invisible_by_construction() {
        let item = encode(&comment(Status::Pending), 1);
        for index in Index::LISTINGS {
            assert!(!item.contains_key(index.partition_attribute()), "{index:?}");
        }
        assert_eq!(item["MODPK"], AttributeValue::s("MODERATION#pending"));
    }

    #[test]
    fn flagged_comments_are_listed_and_queued() {
        let item = encode(&comment(Status::Flagged), 1);
        assert!(item.contains_key("GSI4PK"));
        assert_eq!(item["MODPK"], AttributeValue::s("MODERATION#flagged"));
    }

    #[test]
    fn a_malformed_comment_names_its_key_and_field() {
        let mut item = encode(&comment(Status::Published), 1);
        item.insert(RATING.into(), AttributeValue::s("five"));
        let error = decode(&item).unwrap_err();
        assert_eq!(
            error.key,
            "COMMENT#01M7YRRTBV000000000000000A/COMMENT#01M7YRRTBV000000000000000A"
        );
        assert!(error.what.contains("rating"), "{error}");
        item.remove(VERSION);
        assert!(version(&item).is_err());
    }

    #[test]
    fn a_reply_is_listed_and_round_trips() {
        let time = |t| Timestamp::parse(t).unwrap();
        let replied = Comment {
            reply: Some(Reply {
                body: "Thank you!".into(),
                created_at: time("2026-11-22T08:00:00.000Z"),
                updated_at: time("2026-11-22T09:30:00.500Z"),
            }),
            ..comment(Status::Published)
        };
        let item = encode(&replied, 2);
        assert!(LISTED.contains(&REPLY));
        assert_eq!(decode(&item).unwrap(), replied);
        assert!(!encode(&comment(Status::Published), 1).contains_key(REPLY));
    }

    #[test]
    fn source_and_image_references_round_trip_and_stay_out_of_listings() {
        let imported = Comment {
            source: Some(Source::parse("okendo").unwrap()),
            image_urls: vec![
                "https://cdn.example.com/a.jpg".into(),
                "https://cdn.example.com/b.jpg".into(),
            ],
            ..comment(Status::Published)
        };
        let item = encode(&imported, 1);
        assert_eq!(decode(&item).unwrap(), imported);
        assert!(!LISTED.contains(&SOURCE) && !LISTED.contains(&IMAGE_URLS));
        let plain = encode(&comment(Status::Published), 1);
        assert!(!plain.contains_key(SOURCE) && !plain.contains_key(IMAGE_URLS));
        let mut broken = item.clone();
        broken.insert(IMAGE_URLS.into(), AttributeValue::s("https://x"));
        assert!(decode(&broken).unwrap_err().what.contains(IMAGE_URLS));
    }

    #[test]
    fn photos_round_trip_in_the_listed_details() {
        let photo = |hex: &str, status| Photo {
            id: PhotoId::parse(&hex.repeat(64)).unwrap(),
            width: 1600,
            height: 900,
            status,
        };
        let with_photos = Comment {
            media: vec![
                photo("a", PhotoStatus::Published),
                photo("b", PhotoStatus::Pending),
            ],
            ..comment(Status::Published)
        };
        let item = encode(&with_photos, 1);
        assert!(LISTED.contains(&DETAILS));
        assert_eq!(decode(&item).unwrap(), with_photos);
        let Some(AttributeValue::M(details)) = item.get(DETAILS) else {
            panic!("no details map");
        };
        let Some(AttributeValue::L(photos)) = details.get(DETAILS_MEDIA) else {
            panic!("no photos");
        };
        let AttributeValue::M(published) = &photos[0] else {
            panic!("a photo is a map");
        };
        assert!(!published.contains_key(PHOTO_PENDING));
        let mut broken = item.clone();
        let mut details = details.clone();
        details.insert(DETAILS_MEDIA.into(), AttributeValue::s("a"));
        broken.insert(DETAILS.into(), AttributeValue::M(details));
        assert!(decode(&broken).unwrap_err().what.contains(DETAILS_MEDIA));
    }

    #[test]
    fn vote_counts_are_listed_and_absent_while_zero() {
        let voted = Comment {
            votes: VoteCounts {
                helpful: 3,
                unhelpful: 1,
            },
            ..comment(Status::Published)
        };
        let item = encode(&voted, 2);
        assert!(LISTED.contains(&HELPFUL_VOTES) && LISTED.contains(&UNHELPFUL_VOTES));
        assert_eq!(decode(&item).unwrap(), voted);
        let unvoted = encode(&comment(Status::Published), 1);
        assert!(!unvoted.contains_key(HELPFUL_VOTES) && !unvoted.contains_key(UNHELPFUL_VOTES));
        assert!(listed().evaluate(&unvoted));
        assert!(!listed().evaluate(&encode(&comment(Status::Pending), 1)));
    }

    #[test]
    fn details_are_listed_absent_while_default_and_round_trip() {
        assert!(LISTED.contains(&DETAILS));
        assert!(!LISTED.contains(&ID) && !LISTED.contains(&CREATED_AT));
        let plain = encode(&comment(Status::Published), 1);
        assert!(!plain.contains_key(DETAILS));
        let incentivized = Comment {
            incentivized: true,
            ..comment(Status::Published)
        };
        let item = encode(&incentivized, 1);
        assert_eq!(decode(&item).unwrap(), incentivized);
        let mut listed_entry: Item = item
            .iter()
            .filter(|(name, _)| {
                LISTED.contains(&name.as_str()) || [PK, super::super::SK].contains(&name.as_str())
            })
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect();
        assert_eq!(decode(&listed_entry).unwrap(), incentivized);
        let answered = Comment {
            attributes: crate::attributes::test_answers(),
            ..incentivized.clone()
        };
        let item = encode(&answered, 1);
        let entry: Item = item
            .iter()
            .filter(|(name, _)| LISTED.contains(&name.as_str()) || name.as_str() == PK)
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect();
        assert_eq!(
            decode(&entry).unwrap(),
            answered,
            "listings show the answers"
        );
        listed_entry.insert(DETAILS.into(), AttributeValue::s("yes"));
        let error = decode(&listed_entry).unwrap_err();
        assert!(error.what.contains("details.map"), "{error}");
    }

    #[test]
    fn a_malformed_reply_names_the_comment_and_the_field() {
        let mut item = encode(&comment(Status::Published), 1);
        item.insert(REPLY.into(), AttributeValue::s("thanks"));
        let error = decode(&item).unwrap_err();
        assert!(error.key.starts_with("COMMENT#01M7YRRTBV"), "{error}");
        item.insert(
            REPLY.into(),
            AttributeValue::M([("body".to_owned(), AttributeValue::s("x"))].into()),
        );
        let error = decode(&item).unwrap_err();
        assert!(error.what.contains("reply.created_at"), "{error}");
    }

    #[test]
    fn every_comment_carries_its_helpful_key_and_a_count_moves_it() {
        let item = encode(&comment(Status::Published), 1);
        assert_eq!(
            item[HELPFUL_SORT],
            AttributeValue::s("0000000000#2026-11-21T10:00:00.123Z#01M7YRRTBV000000000000000A")
        );
        assert!(!helpful_key_is_stale(&item).unwrap());
        let created_at = comment(Status::Published).created_at;
        // An id whose time is the creation time, as every stored id's is.
        let id = Ulid::from_parts(created_at.millis() as u64, 7);
        let voted = Comment {
            id: id.to_string(),
            votes: VoteCounts {
                helpful: 1,
                unhelpful: 0,
            },
            ..comment(Status::Published)
        };
        let moved = encode(&voted, 2);
        assert_eq!(helpfulness_rank_of(&moved).unwrap(), 206_543_291);
        let mut old = moved.clone();
        old.remove(HELPFUL_SORT);
        assert!(helpful_key_is_stale(&old).unwrap(), "stored before the key");
        old.insert(HELPFUL_SORT.into(), item[HELPFUL_SORT].clone());
        assert!(helpful_key_is_stale(&old).unwrap(), "counts moved, key not");
        let resume = start_key(
            Index::HelpfulByRating,
            "PRODUCT#42/5",
            id,
            Some(206_543_291),
        );
        assert_eq!(
            sort_value(&resume.unwrap(), Index::HelpfulByRating),
            sort_value(&moved, Index::HelpfulByRating)
        );
        assert!(start_key(Index::HelpfulByRating, "PRODUCT#42/5", id, None).is_err());
    }

    proptest::proptest! {
        /// Read descending, the key orders comments by score (descending),
        /// then creation time (newest first), then id, as a brute-force
        /// sort of the same comments does.
        #[test]
        fn the_helpful_key_orders_by_score_then_time_then_id(
            comments in proptest::collection::vec(
                (0u64..30, 0u64..30, 0i64..5, 0u8..4), 1..40),
        ) {
            let ids = ["01JD3X0000000000000000000A", "01JD3X0000000000000000000B",
                       "01JD3X0000000000000000000C", "01JD3X0000000000000000000D"];
            let base = Timestamp::parse("2026-11-21T10:00:00.000Z").unwrap();
            let entries: Vec<(f64, Timestamp, &str, String)> = comments
                .iter()
                .map(|&(helpful, unhelpful, ms, id)| {
                    let votes = VoteCounts { helpful, unhelpful };
                    let created_at = Timestamp::from_millis(base.millis() + ms).unwrap();
                    let id = ids[usize::from(id)];
                    let key = helpful_sort_key(helpfulness_rank(&votes), created_at, id);
                    (votes.helpfulness(), created_at, id, key)
                })
                .collect();
            let mut by_key = entries.clone();
            by_key.sort_by(|a, b| b.3.cmp(&a.3));
            let mut by_model = entries;
            by_model.sort_by(|a, b| {
                b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)).then(b.2.cmp(a.2))
            });
            let order = |v: &[(f64, Timestamp, &str, String)]| {
                v.iter().map(|e| e.3.clone()).collect::<Vec<_>>()
            };
            proptest::prop_assert_eq!(order(&by_key), order(&by_model));
        }
    }

    #[test]
    fn a_listed_entry_shows_its_comment_or_its_key_and_keeps_its_faults() {
        let voted = Comment {
            votes: VoteCounts {
                helpful: 2,
                unhelpful: 1,
            },
            ..comment(Status::Published)
        };
        let item = encode(&voted, 3);
        let id = Ulid::from_string(&voted.id).unwrap();
        let listed = Listed::read(&item, Index::HelpfulByRating);
        assert_eq!(listed.sort, sort_value(&item, Index::HelpfulByRating));
        assert_eq!(listed.id, Ok(id));
        assert_eq!(listed.helpfulness, Some(helpfulness_rank_of(&item)));
        assert_eq!(listed.into_comment(), Ok(voted.clone()));
        let by_author = Listed::read(&item, Index::ByAuthor);
        assert_eq!(by_author.helpfulness, None);
        assert_eq!(by_author.clone().into_key(), Ok(key(&voted.id)));
        assert!(by_author.into_comment().is_err());
        // A fault stays with the entry until the entry is shown.
        let mut broken = item.clone();
        broken.insert(RATING.into(), AttributeValue::s("five"));
        broken.remove(HELPFUL_SORT);
        let listed = Listed::read(&broken, Index::HelpfulByRating);
        assert_eq!(listed.id, Ok(id));
        assert!(matches!(listed.helpfulness, Some(Err(_))));
        assert_eq!(listed.into_comment(), Err(decode(&broken).unwrap_err()));
    }

    fn with_photos(status: Status, photos: &[PhotoStatus]) -> Comment {
        let media = photos
            .iter()
            .zip(["a", "b", "c"])
            .map(|(status, hex)| Photo {
                id: PhotoId::parse(&hex.repeat(64)).unwrap(),
                width: 800,
                height: 600,
                status: *status,
            })
            .collect();
        Comment {
            media,
            ..comment(status)
        }
    }

    #[test]
    fn a_comment_with_a_published_photo_has_a_listing_copy_under_media_partitions() {
        let mut shown = with_photos(
            Status::Published,
            &[PhotoStatus::Pending, PhotoStatus::Published],
        );
        shown.verified_purchase = true;
        shown.votes = VoteCounts {
            helpful: 2,
            unhelpful: 0,
        };
        let item = encode(&shown, 3);
        let copy = listing_copy(&shown, Partitions::Media).expect("a copy");
        assert_eq!(copy[PK], item[PK]);
        assert_eq!(copy[super::super::SK], AttributeValue::s("MEDIA"));
        assert!(is_listing_copy(&copy) && !is_comment_item(&copy));
        assert_eq!(
            super::super::ItemKind::of(&copy),
            super::super::ItemKind::ListingCopy
        );
        for index in Index::LISTINGS.iter().chain(&Index::VERIFIED_LISTINGS) {
            let attribute = index.partition_attribute();
            let AttributeValue::S(original) = &item[attribute] else {
                panic!("{attribute} is a string");
            };
            assert_eq!(
                copy[attribute],
                AttributeValue::S(original.replacen("PRODUCT#", "MEDIA#", 1)),
                "{index:?}"
            );
        }
        assert_eq!(copy["GSIPK"], AttributeValue::s("MEDIA#42/en/5"));
        assert_eq!(copy[GSISK], item[GSISK]);
        assert_eq!(copy[HELPFUL_SORT], item[HELPFUL_SORT]);
        for name in LISTED {
            assert_eq!(copy.get(name), item.get(name), "{name}");
        }
        for absent in ["AUTHORPK", "MODPK", "MODSK", VERSION, SOURCE, ID] {
            assert!(!copy.contains_key(absent), "{absent}");
        }
        assert_eq!(decode(&copy).unwrap(), shown, "listings show the copy");
        let flagged = Comment {
            status: Status::Flagged,
            ..shown.clone()
        };
        let copy = listing_copy(&flagged, Partitions::Media).expect("flagged comments are listed");
        assert!(
            !copy.contains_key("MODPK"),
            "the queue sees the comment once"
        );
        let plain = listing_copy(
            &Comment {
                verified_purchase: false,
                ..shown
            },
            Partitions::Media,
        )
        .unwrap();
        for index in Index::VERIFIED_LISTINGS {
            assert!(!plain.contains_key(index.partition_attribute()));
        }
    }

    #[test]
    fn no_copy_without_a_published_photo_on_a_visible_comment() {
        for comment in [
            comment(Status::Published),
            with_photos(Status::Published, &[PhotoStatus::Pending]),
            with_photos(Status::Pending, &[PhotoStatus::Published]),
        ] {
            assert!(
                !has_media_copy(&comment) && listing_copy(&comment, Partitions::Media).is_none()
            );
            assert_eq!(
                writes(None, Some(&comment), 1),
                vec![WriteRequest::Put(encode(&comment, 1))]
            );
        }
    }

    #[test]
    fn the_copy_is_written_with_its_comment_and_goes_with_its_last_published_photo() {
        let shown = with_photos(Status::Published, &[PhotoStatus::Published]);
        let copy = listing_copy(&shown, Partitions::Media).unwrap();
        let copy_key = copy_key(&shown.id, Partitions::Media);
        assert_eq!(
            writes(None, Some(&shown), 1),
            vec![
                WriteRequest::Put(encode(&shown, 1)),
                WriteRequest::Put(copy.clone())
            ]
        );
        // An edit rewrites the copy beside the comment.
        let edited = Comment {
            title: "Better".into(),
            ..shown.clone()
        };
        assert_eq!(
            writes(Some(&shown), Some(&edited), 2),
            vec![
                WriteRequest::Put(encode(&edited, 2)),
                WriteRequest::Put(listing_copy(&edited, Partitions::Media).unwrap())
            ]
        );
        // The last published photo goes, the comment is hidden: the copy goes.
        let unpublished = Comment {
            media: Vec::new(),
            ..shown.clone()
        };
        let hidden = Comment {
            status: Status::Pending,
            ..shown.clone()
        };
        for after in [unpublished, hidden] {
            assert_eq!(
                writes(Some(&shown), Some(&after), 2),
                vec![
                    WriteRequest::Put(encode(&after, 2)),
                    WriteRequest::Delete(copy_key.clone())
                ]
            );
        }
        // Deleted: both go; a comment without a copy is one delete.
        assert_eq!(
            writes(Some(&shown), None, 2),
            vec![
                WriteRequest::Delete(key(&shown.id)),
                WriteRequest::Delete(copy_key)
            ]
        );
        let plain = comment(Status::Published);
        assert_eq!(
            writes(Some(&plain), None, 2),
            vec![WriteRequest::Delete(key(&plain.id))]
        );
    }

    #[test]
    fn a_start_key_in_a_media_partition_names_the_copy() {
        let id = Ulid::from_string("01M7YRRTBV000000000000000A").unwrap();
        let key = start_key(Index::ByRating, "MEDIA#42/5", id, None).unwrap();
        assert_eq!(key[super::super::SK], AttributeValue::s("MEDIA"));
        assert_eq!(key["GSI3PK"], AttributeValue::s("MEDIA#42/5"));
        let shown = Comment {
            id: id.to_string(),
            ..with_photos(Status::Published, &[PhotoStatus::Published])
        };
        let copy = listing_copy(&shown, Partitions::Media).unwrap();
        assert_eq!(
            sort_value(&key, Index::ByRating),
            sort_value(&copy, Index::ByRating)
        );
    }

    #[test]
    fn a_grouped_comment_has_family_copies_that_follow_its_group() {
        let tee = ProductId::parse("tee").unwrap();
        let mut shown = with_photos(Status::Published, &[PhotoStatus::Published]);
        shown.group = Some(tee.clone());
        shown.verified_purchase = true;
        let item = encode(&shown, 1);
        assert_eq!(decode(&item).unwrap(), shown, "the family round-trips");
        let family = listing_copy(&shown, Partitions::Family).expect("a family copy");
        let family_media = listing_copy(&shown, Partitions::FamilyMedia).expect("and one of media");
        assert_eq!(family[super::super::SK], AttributeValue::s("FAMILY"));
        assert_eq!(
            family_media[super::super::SK],
            AttributeValue::s("FAMILYMEDIA")
        );
        assert!(is_listing_copy(&family) && is_listing_copy(&family_media));
        for index in Index::LISTINGS.iter().chain(&Index::VERIFIED_LISTINGS) {
            let attribute = index.partition_attribute();
            let AttributeValue::S(original) = &item[attribute] else {
                panic!("{attribute} is a string");
            };
            let family_partition = original.replacen("PRODUCT#42", "FAMILY#tee", 1);
            assert_eq!(family[attribute], AttributeValue::S(family_partition));
            let media_partition = original.replacen("PRODUCT#42", "FAMILYMEDIA#tee", 1);
            assert_eq!(family_media[attribute], AttributeValue::S(media_partition));
        }
        assert_eq!(decode(&family).unwrap(), shown, "shows its variant");
        // Created: the comment and its three copies, in one write.
        let written = writes(None, Some(&shown), 1);
        assert_eq!(written.len(), 4);
        // Moved to another group: the same keys, put in the new partitions.
        let moved = Comment {
            group: Some(ProductId::parse("shirt").unwrap()),
            ..shown.clone()
        };
        let rewritten = writes(Some(&shown), Some(&moved), 2);
        assert_eq!(
            rewritten[2],
            WriteRequest::Put(listing_copy(&moved, Partitions::Family).unwrap())
        );
        let WriteRequest::Put(copy) = &rewritten[2] else {
            unreachable!()
        };
        assert_eq!(copy["GSI4PK"], AttributeValue::s("FAMILY#shirt"));
        // Out of every group: its family copies go, the media copy stays.
        let alone = Comment {
            group: None,
            ..shown.clone()
        };
        assert_eq!(
            writes(Some(&shown), Some(&alone), 2),
            vec![
                WriteRequest::Put(encode(&alone, 2)),
                WriteRequest::Put(listing_copy(&alone, Partitions::Media).unwrap()),
                WriteRequest::Delete(copy_key(&shown.id, Partitions::Family)),
                WriteRequest::Delete(copy_key(&shown.id, Partitions::FamilyMedia)),
            ]
        );
        // Held: no listing shows it, so no copy of any kind.
        let held = Comment {
            status: Status::Pending,
            ..shown.clone()
        };
        for kind in Partitions::COPIES {
            assert!(listing_copy(&held, kind).is_none(), "{kind:?}");
        }
        assert_eq!(writes(Some(&shown), None, 2).len(), 4, "deleted: all go");
        // A walk of a family partition resumes at the copy.
        let id = Ulid::from_string(&shown.id).unwrap();
        for (partition, sort) in [
            ("FAMILY#tee/5", "FAMILY"),
            ("FAMILYMEDIA#tee/5", "FAMILYMEDIA"),
        ] {
            let key = start_key(Index::ByRating, partition, id, None).unwrap();
            assert_eq!(key[super::super::SK], AttributeValue::s(sort));
        }
        let key = start_key(Index::ByRating, "PRODUCT#tee/5", id, None).unwrap();
        assert_eq!(key[super::super::SK], item[super::super::SK]);
    }

    /// What `families` says a family copy costs: under 1 KB (one write
    /// unit) for a comment of the usual length, the sample's size here.
    #[test]
    fn a_family_copy_of_a_short_comment_is_one_write_unit() {
        let grouped = Comment {
            group: Some(ProductId::parse("tee").unwrap()),
            ..comment(Status::Published)
        };
        let copy = listing_copy(&grouped, Partitions::Family).unwrap();
        let size = rave_store::item_size(&copy);
        println!("family copy: {size} bytes");
        assert!(size < 1024, "{size} bytes");
    }

    #[test]
    fn a_start_key_resumes_after_the_comment() {
        let id = Ulid::from_string("01M7YRRTBV000000000000000A").unwrap();
        let key = start_key(Index::All, "PRODUCT#42", id, None).unwrap();
        assert_eq!(key["GSI4PK"], AttributeValue::s("PRODUCT#42"));
        assert_eq!(
            sort_value(&key, Index::All),
            format!(
                "{}#{id}",
                Timestamp::from_millis(id.timestamp_ms() as i64).unwrap()
            )
        );
    }
}
