//! Comments and the rules every field follows (API.md), as validated types:
//! a value of `ProductId`, `Language` or `Rating` is valid by construction,
//! so nothing unchecked can reach a key (a value of these cannot carry a key
//! delimiter). `GlobalStats` is here too, and the one page-size check
//! (`check_page_size`) that every listing and the HTTP layer use, so the two
//! cannot disagree on it.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::attributes::{AttributeAnswers, AttributeInput, DeclaredAttributes};
use crate::error::{CommentsError, Result};
use crate::photos::{self, NewPhoto, Photo, PhotoStatus};
pub use crate::rating::Rating;
use crate::reports::Reports;

fn invalid(field: &'static str, message: impl Into<String>) -> CommentsError {
    CommentsError::Invalid {
        field,
        message: message.into(),
    }
}

/// 1–64 characters of `A-Z a-z 0-9 _ -`: nothing that could split a key.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct ProductId(String);

impl ProductId {
    pub fn parse(value: &str) -> Result<ProductId> {
        let ok = (1..=64).contains(&value.len())
            && value
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if ok {
            Ok(ProductId(value.to_owned()))
        } else {
            Err(invalid(
                "product_id",
                "must be 1-64 characters of A-Z, a-z, 0-9, '_' and '-'",
            ))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl fmt::Display for ProductId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A lowercase ISO 639-1/639-2 code: 2 or 3 letters `a-z`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct Language(String);

impl Language {
    pub fn parse(value: &str) -> Result<Language> {
        if (2..=3).contains(&value.len()) && value.bytes().all(|b| b.is_ascii_lowercase()) {
            Ok(Language(value.to_owned()))
        } else {
            Err(invalid(
                "language",
                "must be a lowercase ISO 639 code of 2 or 3 letters a-z, such as en, de or fil",
            ))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where a comment stands in moderation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Visible.
    Published,
    /// Awaiting moderation; invisible in listings and statistics.
    Pending,
    /// Reported by a reader; still visible, and in the moderation queue.
    Flagged,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Published => "published",
            Status::Pending => "pending",
            Status::Flagged => "flagged",
        }
    }

    pub fn parse(value: &str) -> Option<Status> {
        match value {
            "published" => Some(Status::Published),
            "pending" => Some(Status::Pending),
            "flagged" => Some(Status::Flagged),
            _ => None,
        }
    }

    /// Whether listings, statistics and the leaderboard count the comment.
    pub fn is_visible(self) -> bool {
        matches!(self, Status::Published | Status::Flagged)
    }
}

/// A point in time with millisecond precision, in UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Timestamp(i64);

impl Timestamp {
    /// Earliest and latest times that keep the text form fixed-width.
    const MIN_MS: i64 = 0;
    const MAX_MS: i64 = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z

    pub fn now() -> Timestamp {
        let ms = (OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000) as i64;
        Timestamp(ms)
    }

    pub fn from_millis(ms: i64) -> Result<Timestamp> {
        if (Self::MIN_MS..=Self::MAX_MS).contains(&ms) {
            Ok(Timestamp(ms))
        } else {
            Err(invalid("created_at", "must be between 1970 and 9999"))
        }
    }

    pub fn millis(self) -> i64 {
        self.0
    }

    /// Parses RFC 3339 in UTC with millisecond precision (`2026-11-21T10:00:00.123Z`).
    pub fn parse(value: &str) -> Result<Timestamp> {
        let parsed = OffsetDateTime::parse(value, &time::format_description::well_known::Rfc3339)
            .map_err(|_| {
            invalid(
                "created_at",
                "must be an RFC 3339 time such as 2026-11-21T10:00:00.123Z",
            )
        })?;
        if parsed.offset() != time::UtcOffset::UTC || !value.ends_with('Z') {
            return Err(invalid("created_at", "must be in UTC (ending in Z)"));
        }
        let nanos = parsed.unix_timestamp_nanos();
        if nanos % 1_000_000 != 0 {
            return Err(invalid(
                "created_at",
                "must have at most millisecond precision",
            ));
        }
        Timestamp::from_millis((nanos / 1_000_000) as i64)
    }
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ`: fixed width (the year has four digits in
/// the range a `Timestamp` holds), so it sorts as text. Written digit by
/// digit into one buffer: every listed comment is shown with its time, and
/// both `time`'s formatter and `write!` with seven padded integers cost
/// several times as much (56 k instructions of a fresh page of 20).
impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Whole seconds and milliseconds apart: the nanosecond form would
        // divide 128-bit numbers, several times the cost of the rest.
        let time = OffsetDateTime::from_unix_timestamp(self.0.div_euclid(1_000))
            .map_err(|_| fmt::Error)?;
        let (hour, minute, second) = time.to_hms();
        let milli = self.0.rem_euclid(1_000) as u32;
        let year = u32::try_from(time.year()).map_err(|_| fmt::Error)?;
        let mut text = *b"0000-00-00T00:00:00.000Z";
        let mut put = |at: usize, width: usize, mut value: u32| {
            for digit in text[at..at + width].iter_mut().rev() {
                *digit = b'0' + (value % 10) as u8;
                value /= 10;
            }
        };
        put(0, 4, year);
        put(5, 2, u32::from(u8::from(time.month())));
        put(8, 2, u32::from(time.day()));
        put(11, 2, u32::from(hour));
        put(14, 2, u32::from(minute));
        put(17, 2, u32::from(second));
        put(20, 3, milli);
        f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// A comment as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Comment {
    pub id: String,
    pub product_id: ProductId,
    pub author: String,
    pub language: Language,
    pub rating: Rating,
    pub title: String,
    pub body: String,
    pub created_at: Timestamp,
    pub status: Status,
    /// The moderation rule that held the comment for moderation, until it
    /// is approved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held_by: Option<String>,
    /// The merchant's one official reply, if any.
    pub reply: Option<Reply>,
    /// Whether a purchase proof the shop signed came with the comment.
    pub verified_purchase: bool,
    /// The helpful and unhelpful votes counted so far (by the aggregator).
    #[serde(flatten)]
    pub votes: VoteCounts,
    /// Where the comment came from: an import's platform, or
    /// `review-request`; `None` for a comment posted through the API or a
    /// page. Not in the listing indexes' projection, so listings leave it
    /// out; a comment
    /// read by id, an export and the change stream carry it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    /// Images that came with an imported review, kept as references
    /// (absolute http(s) URLs, never fetched). Like `source`, not listed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub image_urls: Vec<String>,
    /// Whether the review was written for a reward (a free product, a
    /// discount), which every surface must disclose (16 CFR 465).
    pub incentivized: bool,
    /// The answers to the product's attributes (sub-ratings, fit), by name.
    pub attributes: AttributeAnswers,
    /// The photos the comment carries, in the order they were posted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<Photo>,
    /// Readers' reports since the last moderator's decision: moderation
    /// state, shown in the moderation queue, never in the comment's JSON
    /// (exports, webhooks), which an import must read back.
    #[serde(skip)]
    pub reports: Reports,
    /// When the comment last entered the moderation queue (held, or
    /// flagged from published); `None` while published, and on comments
    /// queued before it was kept. Decision times are measured from it.
    #[serde(skip)]
    pub queued_at: Option<Timestamp>,
    /// The product family the comment's product was a variant of when the
    /// comment was last written: which group's listing holds it (see
    /// `families`). Bookkeeping, not shown: the group's page names it.
    #[serde(skip)]
    pub group: Option<ProductId>,
}

/// Where a comment came from, when not from rave's own form: an import's
/// platform, by its short name, 1–32 characters of `a-z 0-9 -` (`okendo`,
/// `judgeme`, `csv`, ...), or `review-request` for a review posted through
/// the link of a review request.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct Source(String);

impl Source {
    pub fn parse(value: &str) -> Result<Source> {
        let ok = (1..=32).contains(&value.len())
            && value
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if ok {
            Ok(Source(value.to_owned()))
        } else {
            Err(invalid(
                "source",
                "must be 1-32 characters of a-z, 0-9 and '-'",
            ))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A review posted through the link a review request carried.
    pub fn review_request() -> Source {
        Source("review-request".to_owned())
    }

    pub fn is_review_request(&self) -> bool {
        self.0 == "review-request"
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// How many image references one comment keeps.
pub const MAX_IMAGE_URLS: usize = 10;

/// Checks an imported comment's image references: at most
/// [`MAX_IMAGE_URLS`], each an absolute http(s) URL.
pub(crate) fn validate_image_urls(urls: &[String]) -> Result<()> {
    if urls.len() > MAX_IMAGE_URLS {
        return Err(invalid(
            "image_urls",
            format!("at most {MAX_IMAGE_URLS} images per comment"),
        ));
    }
    for url in urls {
        validate_link(Some(url), "image_urls")?;
    }
    Ok(())
}

/// An email address kept for the author of an imported comment (to verify
/// them and ask them for reviews), never shown: it lives in its own item
/// (`table::personal`), apart from the comment. 3–254 characters with one
/// `@` between non-empty parts, no spaces or control characters.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Email(String);

impl Email {
    pub fn parse(value: &str) -> Result<Email> {
        let value = value.trim();
        let well_formed = matches!(
            value.split_once('@'),
            Some((local, domain)) if !local.is_empty() && !domain.is_empty() && !domain.contains('@')
        );
        if (3..=254).contains(&value.chars().count())
            && well_formed
            && !value.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            Ok(Email(value.to_owned()))
        } else {
            Err(invalid(
                "email",
                "must be an email address such as ann@example.com",
            ))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Never printed by accident: a log line or an error that debug-prints a
/// value holding an address shows this instead.
impl fmt::Debug for Email {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Email(<redacted>)")
    }
}

/// How many voters found a comment helpful, and how many did not. The
/// aggregator keeps these from the change stream, so they trail a vote by
/// the aggregator's lag.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct VoteCounts {
    #[serde(rename = "helpful_votes")]
    pub helpful: u64,
    #[serde(rename = "unhelpful_votes")]
    pub unhelpful: u64,
}

/// The z of a two-sided 95% confidence interval.
const WILSON_Z: f64 = 1.96;

impl VoteCounts {
    /// How helpful voters found a comment, for the `helpful` sort: the lower
    /// bound of the 95% Wilson score interval of helpful ÷ all votes. A few
    /// votes, all helpful, rank below many votes, mostly helpful; no votes
    /// score 0.
    pub fn helpfulness(&self) -> f64 {
        // Without a helpful vote the bound is 0 (computed, a hair off it).
        if self.helpful == 0 {
            return 0.0;
        }
        let total = self.helpful + self.unhelpful;
        let n = total as f64;
        let p = self.helpful as f64 / n;
        let z2 = WILSON_Z * WILSON_Z;
        let centre = p + z2 / (2.0 * n);
        let spread = WILSON_Z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
        ((centre - spread) / (1.0 + z2 / n)).clamp(0.0, 1.0)
    }
}

/// Who voted: an opaque id of 1–128 characters of `A-Z a-z 0-9 _ -` that the
/// shop or the embed chooses, so one voter holds one vote per comment.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Voter(String);

impl Voter {
    pub fn parse(value: &str) -> Result<Voter> {
        let ok = (1..=128).contains(&value.len())
            && value
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if ok {
            Ok(Voter(value.to_owned()))
        } else {
            Err(invalid(
                "voter",
                "must be 1-128 characters of A-Z, a-z, 0-9, '_' and '-'",
            ))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The merchant's official reply to a comment. It changes neither where
/// the comment sorts nor what it counts for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reply {
    pub body: String,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Reply {
    /// The reply `body` makes at `now`: a first reply, or an edit of
    /// `earlier` that keeps its creation time.
    pub(crate) fn write(earlier: Option<&Reply>, body: &str, now: Timestamp) -> Result<Reply> {
        Ok(Reply {
            body: validate_body(body)?,
            created_at: earlier.map_or(now, |r| r.created_at),
            updated_at: now,
        })
    }

    /// Checks a reply that comes whole (an import) by the rules a written
    /// one follows.
    pub(crate) fn validate(self) -> Result<Reply> {
        validate_body(&self.body)?;
        if self.updated_at < self.created_at {
            return Err(invalid("reply", "updated_at must not be before created_at"));
        }
        Ok(self)
    }
}

/// The shop's id of an order whose purchase verified a comment: 1-128
/// characters, no control characters. It keys the order's one verification
/// per product (see `table::order`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OrderId(String);

impl OrderId {
    pub fn parse(value: &str) -> Result<OrderId> {
        char_count_between(value, "order_id", 1, 128)?;
        if value.chars().any(char::is_control) {
            return Err(invalid("order_id", "must not contain control characters"));
        }
        Ok(OrderId(value.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What a shop's purchase proof vouches for: the order, and whether the
/// review it allows is written for a reward (the shop's own claim, when it
/// gave the buyer a free product or a discount for reviewing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Purchase {
    pub order: OrderId,
    pub incentivized: bool,
}

/// A new comment, before it is stored.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NewComment {
    pub author: String,
    pub language: String,
    pub rating: i64,
    pub title: Option<String>,
    pub body: String,
    /// Only trusted callers (imports) may set it; `None` means now.
    pub created_at: Option<Timestamp>,
    /// Answers to the product's attributes, checked against its record's
    /// declaration when the comment is stored.
    pub attributes: BTreeMap<String, AttributeInput>,
    /// Photos already stored for the comment (see `photos`).
    pub media: Vec<NewPhoto>,
}

/// A validated [`NewComment`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ValidNewComment {
    pub author: String,
    pub language: Language,
    pub rating: Rating,
    pub title: String,
    pub body: String,
    pub created_at: Option<Timestamp>,
    pub media: Vec<NewPhoto>,
}

impl ValidNewComment {
    /// The comment this becomes once it has its id, time and status.
    pub(crate) fn into_comment(
        self,
        id: String,
        product_id: ProductId,
        created_at: Timestamp,
        status: Status,
    ) -> Comment {
        // A new photo waits when its comment does.
        let photo_status = if status == Status::Pending {
            PhotoStatus::Pending
        } else {
            PhotoStatus::Published
        };
        Comment {
            id,
            product_id,
            author: self.author,
            language: self.language,
            rating: self.rating,
            title: self.title,
            body: self.body,
            created_at,
            status,
            held_by: None,
            reply: None,
            verified_purchase: false,
            votes: VoteCounts::default(),
            source: None,
            image_urls: Vec::new(),
            incentivized: false,
            attributes: AttributeAnswers::default(),
            media: self
                .media
                .iter()
                .map(|photo| photo.with_status(photo_status))
                .collect(),
            reports: Default::default(),
            queued_at: None,
            group: None,
        }
    }
}

impl NewComment {
    /// Checks what can be checked without the store (every field but the
    /// attributes, which the product's record judges): a caller with work
    /// to do before the create, such as storing photos, refuses a bad
    /// comment first.
    pub fn check(&self) -> Result<()> {
        self.validate().map(|_| ())
    }

    pub(crate) fn validate(&self) -> Result<ValidNewComment> {
        Ok(ValidNewComment {
            author: validate_author(&self.author)?,
            language: Language::parse(&self.language)?,
            rating: Rating::new(self.rating)?,
            title: validate_title(self.title.as_deref().unwrap_or(""))?,
            body: validate_body(&self.body)?,
            created_at: self.created_at,
            media: {
                photos::validate(&self.media)?;
                self.media.clone()
            },
        })
    }
}

/// What an edit may change; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommentPatch {
    pub language: Option<String>,
    pub rating: Option<i64>,
    pub title: Option<String>,
    pub body: Option<String>,
    /// New answers to the product's attributes, replacing the comment's
    /// (an empty map removes them), checked against the product's record
    /// as a post's are.
    pub attributes: Option<BTreeMap<String, AttributeInput>>,
}

impl CommentPatch {
    /// Applies the patch to `comment`, validating every given field.
    pub(crate) fn apply(&self, comment: &Comment) -> Result<Comment> {
        let mut next = comment.clone();
        if let Some(language) = &self.language {
            next.language = Language::parse(language)?;
        }
        if let Some(rating) = self.rating {
            next.rating = Rating::new(rating)?;
        }
        if let Some(title) = &self.title {
            next.title = validate_title(title)?;
        }
        if let Some(body) = &self.body {
            next.body = validate_body(body)?;
        }
        Ok(next)
    }
}

fn char_count_between(value: &str, field: &'static str, min: usize, max: usize) -> Result<()> {
    let count = value.chars().count();
    if count < min || count > max {
        return Err(invalid(
            field,
            format!("must be {min}-{max} characters long (is {count})"),
        ));
    }
    Ok(())
}

pub(crate) fn validate_author(author: &str) -> Result<String> {
    char_count_between(author, "author", 1, 64)?;
    if author.chars().any(char::is_control) {
        return Err(invalid("author", "must not contain control characters"));
    }
    Ok(author.to_owned())
}

fn validate_title(title: &str) -> Result<String> {
    char_count_between(title, "title", 0, 200)?;
    Ok(title.to_owned())
}

fn validate_body(body: &str) -> Result<String> {
    char_count_between(body, "body", 1, 10_000)?;
    Ok(body.to_owned())
}

/// What an admin says about a product: its display name, optionally its
/// page and an image (absolute http(s) URLs), and the identifiers search
/// engines and Google's Product Reviews Feed match reviews to a product
/// by: GTINs (checked by their GS1 check digit), MPNs, SKUs and the brand.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProductRecord {
    pub name: String,
    pub url: Option<String>,
    pub image: Option<String>,
    /// Global Trade Item Numbers: 8, 12, 13 or 14 digits (GTIN-8, UPC-A,
    /// EAN-13, GTIN-14), each with a correct check digit.
    pub gtins: Vec<String>,
    /// Manufacturer part numbers.
    pub mpns: Vec<String>,
    /// The shop's stock keeping units.
    pub skus: Vec<String>,
    pub brand: Option<String>,
    /// The product family this product is a variant of (a product id that
    /// is not itself a variant; see `Comments::put_product`).
    pub group: Option<String>,
    /// The sub-ratings and choices its reviews are asked for.
    pub attributes: DeclaredAttributes,
}

/// Most identifiers of one kind a product record keeps.
const MAX_IDENTIFIERS: usize = 20;

impl ProductRecord {
    /// The group whose record's declaration this product asks, when it
    /// declares no attributes itself (`DeclaredAttributes::effective`).
    pub(crate) fn declaration_group(&self) -> Result<Option<ProductId>> {
        match (self.attributes.is_empty(), self.group.as_deref()) {
            (true, Some(group)) => Ok(Some(ProductId::parse(group)?)),
            _ => Ok(None),
        }
    }

    pub(crate) fn validate(self) -> Result<ProductRecord> {
        char_count_between(&self.name, "name", 1, 200)?;
        if self.name.chars().any(char::is_control) {
            return Err(invalid("name", "must not contain control characters"));
        }
        validate_link(self.url.as_deref(), "url")?;
        validate_link(self.image.as_deref(), "image")?;
        validate_identifiers(&self.gtins, "gtins", |gtin| {
            gtin_check(gtin).map_err(|problem| format!("{gtin:?} {problem}"))
        })?;
        validate_identifiers(&self.mpns, "mpns", |mpn| identifier_text(mpn, 70))?;
        validate_identifiers(&self.skus, "skus", |sku| identifier_text(sku, MAX_SKU))?;
        if let Some(brand) = &self.brand {
            identifier_text(brand, 70).map_err(|message| invalid("brand", message))?;
        }
        if let Some(group) = &self.group {
            ProductId::parse(group).map_err(|_| {
                invalid(
                    "group",
                    "must be 1-64 characters of A-Z, a-z, 0-9, '_' and '-'",
                )
            })?;
        }
        Ok(self)
    }
}

/// At most [`MAX_IDENTIFIERS`] values, each passing `check`; an error names
/// the field and the value's position.
fn validate_identifiers(
    values: &[String],
    field: &'static str,
    check: impl Fn(&str) -> std::result::Result<(), String>,
) -> Result<()> {
    if values.len() > MAX_IDENTIFIERS {
        return Err(invalid(
            field,
            format!("must hold at most {MAX_IDENTIFIERS} values"),
        ));
    }
    for (index, value) in values.iter().enumerate() {
        check(value).map_err(|message| invalid(field, format!("[{index}]: {message}")))?;
    }
    Ok(())
}

/// 1 to `max` characters, not only spaces, without control characters:
/// what a feed can carry as a non-empty string.
fn identifier_text(value: &str, max: usize) -> std::result::Result<(), String> {
    let count = value.chars().count();
    if count == 0 || count > max || value.trim().is_empty() {
        return Err(format!(
            "must be 1-{max} characters long and not only spaces"
        ));
    }
    if value.chars().any(char::is_control) {
        return Err("must not contain control characters".into());
    }
    Ok(())
}

/// Checks a GTIN: 8, 12, 13 or 14 digits whose last is the GS1 check
/// digit. From the digit left of the check digit leftwards, digits are
/// weighted 3, 1, 3, …; the check digit brings the weighted sum up to the
/// nearest equal or higher multiple of ten (GS1's check digit calculation,
/// the same for every GTIN length:
/// <http://www.gs1.org/barcodes/support/check_digit_calculator>).
pub(crate) fn gtin_check(gtin: &str) -> std::result::Result<(), &'static str> {
    if !matches!(gtin.len(), 8 | 12 | 13 | 14) || !gtin.bytes().all(|b| b.is_ascii_digit()) {
        return Err("must be 8, 12, 13 or 14 digits");
    }
    let digits: Vec<u32> = gtin.bytes().map(|b| u32::from(b - b'0')).collect();
    let (body, check) = digits.split_at(digits.len() - 1);
    let weighted: u32 = body
        .iter()
        .rev()
        .enumerate()
        .map(|(position, digit)| if position % 2 == 0 { digit * 3 } else { *digit })
        .sum();
    if (10 - weighted % 10) % 10 == check[0] {
        Ok(())
    } else {
        Err("has a wrong check digit")
    }
}

/// An absolute http(s) URL of at most 2048 characters, without spaces.
fn validate_link(link: Option<&str>, field: &'static str) -> Result<()> {
    let Some(link) = link else {
        return Ok(());
    };
    char_count_between(link, field, 1, 2048)?;
    let rest = link
        .strip_prefix("https://")
        .or_else(|| link.strip_prefix("http://"));
    match rest {
        Some(rest)
            if !rest.is_empty() && !link.chars().any(|c| c.is_whitespace() || c.is_control()) =>
        {
            Ok(())
        }
        _ => Err(invalid(
            field,
            "must be an absolute http or https URL without spaces",
        )),
    }
}

/// Longest SKU a product record keeps.
const MAX_SKU: usize = 100;

/// A SKU as a product record's `skus` holds it: what names its lookup
/// item (`table::sku`), whichever way it came in.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Sku(String);

impl Sku {
    /// `None` for a value no product record can hold as a SKU.
    pub(crate) fn parse(value: &str) -> Option<Sku> {
        identifier_text(value, MAX_SKU)
            .ok()
            .map(|()| Sku(value.to_owned()))
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Sku {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A whole comment for the crate's unit tests (a `Comment` has no
/// default: every field is a decision).
#[cfg(test)]
pub(crate) fn sample_comment(status: Status) -> Comment {
    Comment {
        id: "01M7YRRTBV000000000000000A".into(),
        product_id: ProductId::parse("42").unwrap(),
        author: "alice".into(),
        language: Language::parse("en").unwrap(),
        rating: Rating::new(5).unwrap(),
        title: "Great".into(),
        body: "Works well.".into(),
        created_at: Timestamp::parse("2026-11-21T10:00:00.123Z").unwrap(),
        status,
        held_by: None,
        reply: None,
        verified_purchase: false,
        votes: VoteCounts::default(),
        source: None,
        image_urls: Vec::new(),
        media: Vec::new(),
        incentivized: false,
        attributes: AttributeAnswers::default(),
        reports: Default::default(),
        queued_at: None,
        group: None,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use time::macros::format_description;

    use super::*;

    fn votes(helpful: u64, unhelpful: u64) -> VoteCounts {
        VoteCounts { helpful, unhelpful }
    }

    #[test]
    fn helpfulness_is_the_wilson_lower_bound() {
        // References computed apart from this code, from the closed form
        // (p + z²/2n − z·√(p(1−p)/n + z²/4n²)) ÷ (1 + z²/n), z = 1.96.
        for (counts, expected) in [
            (votes(0, 0), 0.0),
            (votes(1, 0), 0.206_543_291_473_893),
            (votes(10, 0), 0.722_459_831_233_383),
            (votes(50, 50), 0.403_829_828_590_147),
            (votes(9, 1), 0.595_843_614_502_428),
            (votes(90, 10), 0.825_632_695_632_335),
            (votes(0, 5), 0.0),
        ] {
            let score = counts.helpfulness();
            assert!((score - expected).abs() < 1e-12, "{counts:?}: {score}");
        }
        assert!(votes(90, 10).helpfulness() > votes(9, 1).helpfulness());
        assert!(votes(1, 0).helpfulness() < votes(10, 10).helpfulness());
    }

    proptest! {
        /// A score is a fraction, and one more helpful vote never lowers it.
        #[test]
        fn helpfulness_is_a_fraction_that_helpful_votes_raise(
            helpful in 0u64..100_000,
            unhelpful in 0u64..100_000,
        ) {
            let score = votes(helpful, unhelpful).helpfulness();
            prop_assert!((0.0..=1.0).contains(&score));
            prop_assert!(votes(helpful + 1, unhelpful).helpfulness() >= score);
        }
    }

    proptest! {
        /// The hand-written text form is `time`'s, and parses back.
        #[test]
        fn timestamps_are_written_as_rfc_3339_with_milliseconds(
            ms in Timestamp::MIN_MS..=Timestamp::MAX_MS
        ) {
            let timestamp = Timestamp(ms);
            let by_time = OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
                .unwrap()
                .format(format_description!(
                    "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
                ))
                .unwrap();
            prop_assert_eq!(timestamp.to_string(), by_time);
            prop_assert_eq!(Timestamp::parse(&timestamp.to_string()).unwrap(), timestamp);
        }
    }

    fn field_of<T: fmt::Debug>(result: Result<T>) -> &'static str {
        match result {
            Err(CommentsError::Invalid { field, .. }) => field,
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    #[test]
    fn product_ids_cannot_carry_delimiters() {
        for bad in ["", "a#b", "a/b", "a~b", "a b", "ü", &"x".repeat(65)] {
            assert_eq!(field_of(ProductId::parse(bad)), "product_id", "{bad:?}");
        }
        assert!(ProductId::parse("Abc_9-x").is_ok());
        assert!(ProductId::parse(&"x".repeat(64)).is_ok());
    }

    #[test]
    fn voters_are_opaque_ids_without_delimiters() {
        for bad in ["", "a#b", "a/b", "a b", "ü", &"v".repeat(129)] {
            assert_eq!(field_of(Voter::parse(bad)), "voter", "{bad:?}");
        }
        assert!(Voter::parse("Shop_user-42").is_ok());
        assert!(Voter::parse(&"v".repeat(128)).is_ok());
    }

    #[test]
    fn languages_are_two_or_three_lowercase_letters() {
        for bad in ["", "e", "EN", "engl", "e1", "en#", "e/"] {
            assert_eq!(field_of(Language::parse(bad)), "language", "{bad:?}");
        }
        for good in ["en", "de", "fil"] {
            assert!(Language::parse(good).is_ok());
        }
    }

    #[test]
    fn ratings_are_one_to_five() {
        for bad in [0, 6, -1, 256] {
            assert_eq!(field_of(Rating::new(bad)), "rating");
        }
        assert_eq!(Rating::new(5).unwrap().get(), 5);
    }

    #[test]
    fn product_records_take_a_name_and_absolute_links() {
        let record = |name: &str, url: Option<&str>| ProductRecord {
            name: name.into(),
            url: url.map(str::to_owned),
            ..ProductRecord::default()
        };
        assert!(
            record("Kettle", Some("https://shop.example/k"))
                .validate()
                .is_ok()
        );
        assert_eq!(field_of(record("", None).validate()), "name");
        assert_eq!(field_of(record("a\u{7}b", None).validate()), "name");
        assert_eq!(
            field_of(record("K", Some("javascript:alert(1)")).validate()),
            "url"
        );
        assert_eq!(field_of(record("K", Some("https://a b")).validate()), "url");
        assert_eq!(field_of(record("K", Some("https://")).validate()), "url");
    }

    #[test]
    fn gtin_check_digits_follow_gs1() {
        // The worked examples of GS1 UK, GS1 India and GS1 Sweden, and
        // numbers of each length computed by hand.
        for good in [
            "5012345678900",
            "5012345674216",
            "8904000210037",
            "7300011000017",
            "96385074",       // GTIN-8
            "036000291452",   // UPC-A
            "4006381333931",  // EAN-13
            "9780306406157",  // ISBN-13
            "10614141000415", // GTIN-14
            "00000000",
        ] {
            assert_eq!(gtin_check(good), Ok(()), "{good}");
        }
        for bad_digit in [
            "96385075",
            "036000291453",
            "4006381333932",
            "10614141000416",
        ] {
            assert_eq!(
                gtin_check(bad_digit),
                Err("has a wrong check digit"),
                "{bad_digit}"
            );
        }
        for bad_shape in [
            "",
            "1234567",
            "123456789",
            "400638133393111",
            "400638133393x",
            " 4006381333931",
            "４００６３８１３３３９３１",
        ] {
            assert_eq!(
                gtin_check(bad_shape),
                Err("must be 8, 12, 13 or 14 digits"),
                "{bad_shape:?}"
            );
        }
    }

    proptest! {
        /// Every body has exactly one check digit that makes a GTIN.
        #[test]
        fn exactly_one_check_digit_fits(body in "[0-9]{12}") {
            let fitting = (0..10)
                .filter(|d| gtin_check(&format!("{body}{d}")).is_ok())
                .count();
            prop_assert_eq!(fitting, 1);
        }
    }

    #[test]
    fn product_identifiers_are_checked_and_errors_name_the_field() {
        let with = |edit: &dyn Fn(&mut ProductRecord)| {
            let mut record = ProductRecord {
                name: "Kettle".into(),
                ..ProductRecord::default()
            };
            edit(&mut record);
            record.validate()
        };
        assert!(
            with(&|r| {
                r.gtins = vec!["4006381333931".into(), "036000291452".into()];
                r.mpns = vec!["KT-100".into()];
                r.skus = vec!["kettle-red".into()];
                r.brand = Some("Acme".into());
            })
            .is_ok()
        );
        assert_eq!(
            field_of(with(&|r| r.gtins = vec!["4006381333932".into()])),
            "gtins"
        );
        assert_eq!(field_of(with(&|r| r.gtins = vec!["abc".into()])), "gtins");
        assert_eq!(
            field_of(with(&|r| r.gtins = vec!["96385074".into(); 21])),
            "gtins"
        );
        assert_eq!(field_of(with(&|r| r.mpns = vec![" ".into()])), "mpns");
        assert_eq!(field_of(with(&|r| r.skus = vec!["a\u{0}b".into()])), "skus");
        assert_eq!(field_of(with(&|r| r.skus = vec!["s".repeat(101)])), "skus");
        assert_eq!(field_of(with(&|r| r.brand = Some(String::new()))), "brand");
        assert_eq!(field_of(with(&|r| r.brand = Some("b".repeat(71)))), "brand");
        match with(&|r| r.gtins = vec!["96385074".into(), "96385075".into()]) {
            Err(CommentsError::Invalid { message, .. }) => {
                assert!(
                    message.contains("[1]") && message.contains("96385075"),
                    "{message}"
                )
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn text_fields_follow_the_contract() {
        let new = |author: &str, title: Option<&str>, body: &str| NewComment {
            media: Vec::new(),
            attributes: Default::default(),
            author: author.into(),
            language: "en".into(),
            rating: 3,
            title: title.map(Into::into),
            body: body.into(),
            created_at: None,
        };
        assert!(new("alice", None, "ok").validate().is_ok());
        assert_eq!(field_of(new("", None, "ok").validate()), "author");
        assert_eq!(field_of(new("a\u{7}", None, "ok").validate()), "author");
        assert_eq!(
            field_of(new("alice", Some(&"t".repeat(201)), "ok").validate()),
            "title"
        );
        assert_eq!(field_of(new("alice", None, "").validate()), "body");
        assert_eq!(
            field_of(new("alice", None, &"b".repeat(10_001)).validate()),
            "body"
        );
        // Characters, not bytes: 10,000 two-byte characters are fine.
        assert!(new("alice", None, &"é".repeat(10_000)).validate().is_ok());
    }

    #[test]
    fn a_reply_keeps_its_creation_time_and_follows_the_body_rules() {
        let at = |ms| Timestamp::from_millis(ms).unwrap();
        let first = Reply::write(None, "Thanks!", at(1_000)).unwrap();
        assert_eq!((first.created_at, first.updated_at), (at(1_000), at(1_000)));
        let edited = Reply::write(Some(&first), "Thank you!", at(2_000)).unwrap();
        assert_eq!(
            (edited.body.as_str(), edited.created_at, edited.updated_at),
            ("Thank you!", at(1_000), at(2_000))
        );
        assert_eq!(field_of(Reply::write(None, "", at(1))), "body");
        assert_eq!(
            field_of(Reply::write(None, &"r".repeat(10_001), at(1))),
            "body"
        );
    }

    #[test]
    fn timestamps_are_utc_milliseconds_and_fixed_width() {
        let t = Timestamp::parse("2026-11-21T10:00:00.123Z").unwrap();
        assert_eq!(t.to_string(), "2026-11-21T10:00:00.123Z");
        assert_eq!(
            Timestamp::parse("2026-11-21T10:00:00Z")
                .unwrap()
                .to_string(),
            "2026-11-21T10:00:00.000Z"
        );
        assert_eq!(
            field_of(Timestamp::parse("2026-11-21T10:00:00.123+01:00")),
            "created_at"
        );
        assert_eq!(
            field_of(Timestamp::parse("2026-11-21T10:00:00.1234Z")),
            "created_at"
        );
        assert_eq!(field_of(Timestamp::parse("yesterday")), "created_at");
        assert_eq!(
            Timestamp::from_millis(0).unwrap().to_string(),
            "1970-01-01T00:00:00.000Z"
        );
    }
}

/// Authors are bucketed by their number of counted comments: 1..9 and 10+.
pub(crate) const AUTHOR_BUCKETS: usize = 10;

/// The global aggregates.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GlobalStats {
    pub comments_total: u64,
    pub products_total: u64,
    pub authors_total: u64,
    /// `[k - 1]` is the number of authors with exactly k counted comments;
    /// the last entry counts those with 10 or more.
    pub authors_by_comment_count: [u64; AUTHOR_BUCKETS],
}

/// Most items one page of any listing holds.
pub const MAX_PAGE_SIZE: usize = 100;
/// Items a page holds when the request does not say.
pub const DEFAULT_PAGE_SIZE: usize = 20;

/// Checks the size a request asks a page of any listing to have.
pub fn check_page_size(limit: usize) -> Result<usize> {
    if (1..=MAX_PAGE_SIZE).contains(&limit) {
        Ok(limit)
    } else {
        Err(invalid(
            "limit",
            format!("must be from 1 to {MAX_PAGE_SIZE}"),
        ))
    }
}
