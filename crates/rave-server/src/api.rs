//! The JSON shapes of the API (API.md), with their OpenAPI schemas. They
//! mirror the domain types so that the domain stays free of HTTP concerns.
//!
//! The constraints the domain enforces are stated once, as named schemas
//! (`ProductId`, `LanguageCode`, `StarRating`, `PageSize`, `Cursor`, the
//! status enums) that parameters and fields refer to, so the document is
//! precise enough to fuzz. Property tests hold the documented patterns to
//! the domain's own parsers, so the document cannot drift from what is
//! enforced.

use std::collections::BTreeMap;

use rave_comments::{
    Comment, GlobalStats, Leader, ListPage, Photo, Plan, ProductOverview, ProductRecord,
    ProductStats, RatingCounts, Reply,
};
use rave_media::{Encoding, Size};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use utoipa::ToSchema;

use crate::attributes::{
    AttributeAnswerBody, AttributeDeclarationBody, AttributeStatsBody, answer_bodies,
    declaration_bodies, declared, stats_bodies,
};
use crate::media::MediaLinks;

// The constraints the domain enforces (rave-comments' model), stated once
// as schemas that parameters and fields refer to. Only the OpenAPI document
// reads these types; the handlers pass plain strings to the domain, which
// validates them.

/// A product id: 1-64 characters of `A-Z a-z 0-9 _ -`.
#[derive(ToSchema)]
#[schema(value_type = String, pattern = "^[A-Za-z0-9_-]{1,64}$", min_length = 1, max_length = 64, example = "42")]
#[allow(dead_code, reason = "a schema only; never built")]
pub(crate) struct ProductId(String);

/// A voter: the opaque id the shop or the embed gives a person, 1-128
/// characters of `A-Z a-z 0-9 _ -`.
#[derive(ToSchema)]
#[schema(value_type = String, pattern = "^[A-Za-z0-9_-]{1,128}$", min_length = 1, max_length = 128, example = "shopper-42")]
#[allow(dead_code, reason = "a schema only; never built")]
pub(crate) struct VoterId(String);

/// A lowercase ISO 639 code of 2 or 3 letters.
#[derive(ToSchema)]
#[schema(value_type = String, pattern = "^[a-z]{2,3}$", min_length = 2, max_length = 3, example = "en")]
#[allow(dead_code, reason = "a schema only; never built")]
pub(crate) struct LanguageCode(String);

/// A language code, or empty for all languages (what a page's GET form
/// sends when "all" is chosen).
#[derive(ToSchema)]
#[schema(value_type = String, pattern = "^([a-z]{2,3})?$", max_length = 3, example = "en")]
#[allow(dead_code, reason = "a schema only; never built")]
pub(crate) struct LanguageFilter(String);

/// A page's cursor: from its "Older comments" link, or empty for the first
/// page (what a form sends).
#[derive(ToSchema)]
#[schema(value_type = String, pattern = "^[A-Za-z0-9_-]*$")]
#[allow(dead_code, reason = "a schema only; never built")]
pub(crate) struct PageCursor(String);

/// A GTIN (GTIN-8, UPC-A, EAN-13 or GTIN-14): 8, 12, 13 or 14 digits, the
/// last the GS1 check digit (a wrong one is refused, 400).
#[derive(ToSchema)]
#[schema(value_type = String, pattern = "^([0-9]{8}|[0-9]{12,14})$", min_length = 8, max_length = 14, example = "4006381333931")]
#[allow(dead_code, reason = "a schema only; never built")]
pub(crate) struct Gtin(String);

/// A manufacturer part number: 1-70 characters, not only spaces, no
/// control characters.
#[derive(ToSchema)]
#[schema(value_type = String, pattern = r"^[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*$", min_length = 1, max_length = 70, example = "KT-100")]
#[allow(dead_code, reason = "a schema only; never built")]
pub(crate) struct Mpn(String);

/// A stock keeping unit: 1-100 characters, not only spaces, no control
/// characters.
#[derive(ToSchema)]
#[schema(value_type = String, pattern = r"^[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*$", min_length = 1, max_length = 100, example = "kettle-steel-17")]
#[allow(dead_code, reason = "a schema only; never built")]
pub(crate) struct Sku(String);

/// A star rating.
#[derive(ToSchema)]
#[schema(value_type = i64, minimum = 1, maximum = 5, example = 5)]
#[allow(dead_code, reason = "a schema only; never built")]
pub(crate) struct StarRating(i64);

/// A page size.
#[derive(ToSchema)]
#[schema(value_type = i64, minimum = 1, maximum = 100, example = 20)]
#[allow(dead_code, reason = "a schema only; never built")]
pub(crate) struct PageSize(i64);

/// The `next_cursor` of the previous page, as it was: cursors are opaque and
/// signed, so any other text is refused (400).
#[derive(ToSchema)]
#[schema(value_type = String, pattern = "^[A-Za-z0-9_-]+$", min_length = 1)]
#[allow(dead_code, reason = "a schema only; never built")]
pub(crate) struct Cursor(String);

/// An RFC 3339 time in UTC (ending in `Z`) from 1970 to 9999, to the
/// millisecond at most: exactly what the domain's `Timestamp` reads.
#[derive(ToSchema)]
#[schema(
    value_type = String,
    pattern = r"^((19[7-9][0-9]|[2-9][0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])|(19[7-9][0-9]|[2-9][0-9]{3})-(0[13-9]|1[0-2])-(29|30)|(19[7-9][0-9]|[2-9][0-9]{3})-(0[13578]|1[02])-31|(19(7[26]|8[048]|9[26])|[2-9][0-9](0[48]|[2468][048]|[13579][26])|([2468][048]|[3579][26])00)-02-29)T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,3}0{0,6})?Z$",
    example = "2026-11-21T10:00:00.123Z"
)]
#[allow(dead_code, reason = "a schema only; never built")]
pub(crate) struct UtcTime(String);

/// A comment's status.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code, reason = "a schema only; never built")]
pub(crate) enum CommentStatus {
    /// Visible.
    Published,
    /// Awaiting moderation, invisible.
    Pending,
    /// Reported, still visible, in the moderation queue.
    Flagged,
}

/// Which part of the moderation queue to read.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code, reason = "a schema only; never built")]
pub(crate) enum QueueState {
    /// Awaiting approval.
    Pending,
    /// Reported by readers.
    Flagged,
}

/// Whose reviews a product page shows.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code, reason = "a schema only; never built")]
pub(crate) enum PageScope {
    /// The product's own (the default).
    Product,
    /// Every variant's of the product's family.
    Group,
}

/// The order of a listing.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code, reason = "a schema only; never built")]
pub(crate) enum ListingSort {
    /// Newest first (the default).
    Newest,
    /// Oldest first.
    Oldest,
    /// Most stars first, newest first within a rating.
    Highest,
    /// Fewest stars first, newest first within a rating.
    Lowest,
    /// Most helpful first: the lower bound of the 95% Wilson interval of
    /// the helpful share of votes (no votes: 0), newest first among equal
    /// scores.
    Helpful,
}

/// A comment.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CommentBody {
    /// Server-generated, URL-safe, sorts by creation time.
    #[schema(example = "01JD3X5Z8Q9W2E4R6T8Y0U1I3O")]
    pub id: String,
    #[schema(value_type = ProductId)]
    pub product_id: String,
    #[schema(example = "alice")]
    pub author: String,
    #[schema(value_type = LanguageCode)]
    pub language: String,
    #[schema(value_type = StarRating)]
    pub rating: u8,
    #[schema(example = "Great")]
    pub title: String,
    #[schema(example = "Works well.")]
    pub body: String,
    /// RFC 3339, UTC, milliseconds.
    #[schema(format = DateTime, example = "2026-11-21T10:00:00.123Z")]
    pub created_at: String,
    #[schema(value_type = CommentStatus)]
    pub status: String,
    /// The moderation rule that held a pending comment (`too_many_links`,
    /// `blocked_words`, `duplicate`, `too_many_photos`, `too_fast`,
    /// `moderation_hook`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "too_many_links")]
    pub held_by: Option<String>,
    /// The merchant's official reply, or null.
    pub reply: Option<ReplyBody>,
    /// Whether the comment came with a valid purchase proof.
    pub verified_purchase: bool,
    /// Voters who found the comment helpful. Counted from the change
    /// stream, so it trails a vote by the aggregator's lag.
    #[schema(minimum = 0, example = 12)]
    pub helpful_votes: u64,
    /// Voters who did not find it helpful.
    #[schema(minimum = 0, example = 2)]
    pub unhelpful_votes: u64,
    /// The review platform an imported comment came from (`okendo`,
    /// `judgeme`, `yotpo`, `shopify`, `csv`). Shown when the comment is
    /// read by id or by author and in exports; listings leave it out.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "okendo")]
    pub source: Option<String>,
    /// Images that came with an imported review, as references (never
    /// fetched). Shown where `source` is.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schema(example = json!(["https://cdn.example.com/review/1.jpg"]))]
    pub image_urls: Vec<String>,
    /// Whether the review was written for a reward (a free product or a
    /// discount); shops must show that it was.
    pub incentivized: bool,
    /// The answers to the product's attributes, by name: an integer 1-5
    /// for a rating attribute (`quality`), a choice for a choice attribute
    /// (`fit`). Listings show them too.
    #[schema(example = json!({"quality": 4, "fit": "runs_small"}))]
    pub attributes: BTreeMap<String, AttributeAnswerBody>,
    /// The photos posted with the comment, in their order (an empty list
    /// when none). Public reads and listings show the published ones only;
    /// the moderation queue and staff answers show all, with their status.
    pub media: Vec<PhotoBody>,
}

/// Whether a photo is shown.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code, reason = "a schema only; never built")]
pub(crate) enum PhotoStatusBody {
    /// Shown with its comment.
    Published,
    /// Waiting for a moderator, with its comment or on its own.
    Pending,
}

/// A photo of a comment: its renditions (re-encoded, without metadata),
/// WebP with a JPEG fallback each.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct PhotoBody {
    /// The SHA-256 of the uploaded file.
    #[schema(
        pattern = "^[0-9a-f]{64}$",
        example = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    )]
    pub id: String,
    /// The display rendition (long edge at most 1600 px), WebP.
    #[schema(
        example = "/media/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08/display.webp"
    )]
    pub url: String,
    /// The thumbnail (long edge at most 320 px), WebP.
    pub thumbnail_url: String,
    /// The display rendition as JPEG, for clients without WebP.
    pub fallback_url: String,
    /// The thumbnail as JPEG.
    pub thumbnail_fallback_url: String,
    /// The display rendition's width in pixels.
    #[schema(minimum = 1, example = 1600)]
    pub width: u32,
    /// The display rendition's height in pixels.
    #[schema(minimum = 1, example = 1200)]
    pub height: u32,
    #[schema(value_type = PhotoStatusBody)]
    pub status: String,
}

impl PhotoBody {
    fn new(photo: &Photo, links: &MediaLinks) -> PhotoBody {
        let url = |size, encoding| links.url(&photo.id, size, encoding);
        PhotoBody {
            id: photo.id.to_string(),
            url: url(Size::Display, Encoding::Webp),
            thumbnail_url: url(Size::Thumbnail, Encoding::Webp),
            fallback_url: url(Size::Display, Encoding::Jpeg),
            thumbnail_fallback_url: url(Size::Thumbnail, Encoding::Jpeg),
            width: photo.width,
            height: photo.height,
            status: photo.status.as_str().to_owned(),
        }
    }
}

/// A file posted as a `photo` part.
#[derive(ToSchema)]
#[schema(value_type = String, content_media_type = "application/octet-stream")]
#[allow(dead_code, reason = "a schema only; never built")]
pub(crate) struct PhotoFile(Vec<u8>);

/// A comment posted with photos, as `multipart/form-data` (RFC 7578).
/// Any other part is refused, as an unknown field of the JSON body is.
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code, reason = "a schema only; never built")]
pub(crate) struct CommentUploadBody {
    /// The comment: the JSON this route takes as an `application/json`
    /// body.
    pub comment: CreateCommentBody,
    /// The photos, one part each (repeat the part): at most `--max-photos`
    /// (5 by default), each file at most `--max-photo-bytes` (10 MiB by
    /// default), JPEG, PNG or WebP as their bytes say (the name and the
    /// declared type are ignored). Refusals name the part: `photo[2]`.
    #[schema(max_items = 10)]
    pub photo: Vec<PhotoFile>,
}

/// One voter's vote on a comment.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct VoteBody {
    /// true: helpful; false: not helpful.
    pub helpful: bool,
}

/// The merchant's official reply to a comment.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ReplyBody {
    #[schema(example = "Thank you for the kind words!")]
    pub body: String,
    /// When the reply was first written: RFC 3339, UTC, milliseconds.
    #[schema(format = DateTime, example = "2026-11-22T08:00:00.000Z")]
    pub created_at: String,
    /// When its text was last set.
    #[schema(format = DateTime, example = "2026-11-22T08:00:00.000Z")]
    pub updated_at: String,
}

impl From<Reply> for ReplyBody {
    fn from(r: Reply) -> ReplyBody {
        ReplyBody {
            body: r.body,
            created_at: r.created_at.to_string(),
            updated_at: r.updated_at.to_string(),
        }
    }
}

/// The text of the merchant's reply.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SetReplyBody {
    /// 1-10,000 characters.
    #[schema(
        min_length = 1,
        max_length = 10000,
        example = "Thank you for the kind words!"
    )]
    pub body: String,
}

/// Which photos of a comment an answer shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PhotosShown {
    Published,
    All,
}

impl CommentBody {
    /// The comment as the public sees it: its published photos only.
    pub(crate) fn public(comment: Comment, links: &MediaLinks) -> CommentBody {
        CommentBody::shown(comment, links, PhotosShown::Published)
    }

    /// The comment as staff (and its own poster) see it: every photo, with
    /// its status.
    pub(crate) fn staff(comment: Comment, links: &MediaLinks) -> CommentBody {
        CommentBody::shown(comment, links, PhotosShown::All)
    }

    fn shown(c: Comment, links: &MediaLinks, photos: PhotosShown) -> CommentBody {
        let media = c
            .media
            .iter()
            .filter(|photo| photos == PhotosShown::All || photo.is_published())
            .map(|photo| PhotoBody::new(photo, links))
            .collect();
        CommentBody {
            id: c.id,
            product_id: c.product_id.into_string(),
            author: c.author,
            language: c.language.into_string(),
            rating: c.rating.get(),
            title: c.title,
            body: c.body,
            created_at: c.created_at.to_string(),
            status: c.status.as_str().to_owned(),
            held_by: c.held_by,
            reply: c.reply.map(ReplyBody::from),
            verified_purchase: c.verified_purchase,
            helpful_votes: c.votes.helpful,
            unhelpful_votes: c.votes.unhelpful,
            source: c.source.map(|source| source.to_string()),
            image_urls: c.image_urls,
            incentivized: c.incentivized,
            attributes: answer_bodies(&c.attributes),
            media,
        }
    }
}

/// A new comment.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateCommentBody {
    /// 1-64 characters, no control characters.
    #[schema(
        min_length = 1,
        max_length = 64,
        pattern = r"^[^\x00-\x1f\x7f-\x9f]{1,64}$",
        example = "alice"
    )]
    pub author: String,
    #[schema(value_type = LanguageCode)]
    pub language: String,
    #[serde(deserialize_with = "integral")]
    #[schema(value_type = StarRating)]
    pub rating: i64,
    /// 0-200 characters; absent or null is empty.
    #[serde(default)]
    #[schema(max_length = 200, example = "Great")]
    pub title: Option<String>,
    /// 1-10,000 characters.
    #[schema(min_length = 1, max_length = 10000, example = "Works well.")]
    pub body: String,
    /// Only with the admin token (imports); otherwise set by the server. An
    /// RFC 3339 time in UTC (ending in `Z`) from 1970 to 9999, to the
    /// millisecond at most.
    #[serde(default)]
    #[schema(value_type = Option<UtcTime>)]
    pub created_at: Option<String>,
    /// A JWT the shop issued after an order: signed HS256 with the shop's
    /// purchase secret, with the claims `product_id` (this product),
    /// `order_id` and `exp`, and optionally `incentivized` (true: the shop
    /// rewarded the review, which is then labelled so everywhere). A valid
    /// one makes the comment a verified purchase; one order verifies one
    /// comment per product.
    #[serde(default)]
    #[schema(
        min_length = 1,
        example = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJwcm9kdWN0X2lkIjoicDEiLCJvcmRlcl9pZCI6Im8tMSIsImV4cCI6NDEwMjQ0NDgwMH0.c2lnbmF0dXJl"
    )]
    pub purchase_proof: Option<String>,
    /// Answers to the attributes the product's record declares, by name:
    /// an integer 1-5 for a rating attribute, one of its choices for a
    /// choice attribute; each optional. An undeclared attribute, a rating
    /// out of range or an unknown choice is a 400 naming the field
    /// (`attributes.quality`), and nothing is stored.
    #[serde(default)]
    #[schema(example = json!({"quality": 4, "fit": "runs_small"}))]
    pub attributes: BTreeMap<String, AttributeAnswerBody>,
}

/// An edit: any of these fields.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EditCommentBody {
    #[schema(value_type = Option<LanguageCode>)]
    pub language: Option<String>,
    #[serde(default, deserialize_with = "integral_or_null")]
    #[schema(value_type = Option<StarRating>)]
    pub rating: Option<i64>,
    /// 0-200 characters.
    #[schema(max_length = 200)]
    pub title: Option<String>,
    /// 1-10,000 characters.
    #[schema(min_length = 1, max_length = 10000)]
    pub body: Option<String>,
    /// New answers to the product's attributes, replacing the comment's
    /// (`{}` removes them), checked as a post's are: an undeclared
    /// attribute, a rating out of range or an unknown choice is a 400
    /// naming the field (`attributes.fit`), and nothing changes.
    #[schema(example = json!({"quality": 3, "fit": "true_to_size"}))]
    pub attributes: Option<BTreeMap<String, AttributeAnswerBody>>,
}

/// An integer as JSON Schema has it: `4.0` is the integer 4, as `4` is.
fn integral<'de, D: Deserializer<'de>>(deserializer: D) -> Result<i64, D::Error> {
    let number = serde_json::Number::deserialize(deserializer)?;
    as_integer(&number).ok_or_else(|| {
        D::Error::invalid_value(
            serde::de::Unexpected::Other(&number.to_string()),
            &"an integer",
        )
    })
}

fn integral_or_null<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<i64>, D::Error> {
    #[derive(Deserialize)]
    struct Integral(#[serde(deserialize_with = "integral")] i64);
    Ok(Option::<Integral>::deserialize(deserializer)?.map(|Integral(n)| n))
}

/// The integer `number` is, if it is one that an `f64` holds exactly.
fn as_integer(number: &serde_json::Number) -> Option<i64> {
    /// 2^53: past it, not every integer has an `f64`.
    const EXACT: f64 = 9_007_199_254_740_992.0;
    number.as_i64().or_else(|| {
        number
            .as_f64()
            .filter(|f| f.fract() == 0.0 && f.abs() <= EXACT)
            .map(|f| f as i64)
    })
}

/// One sub-query of a plan.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct PlannedQueryBody {
    pub index: String,
    pub partition_key: String,
    pub limit: usize,
}

/// A sub-query the plan did not run.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct SkippedBody {
    pub partition_key: String,
    pub reason: String,
}

/// How a listing was answered (`explain=true`).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct PlanBody {
    /// `all`, `language`, `rating`, `language_rating`, `ratings_fan_out`,
    /// `language_ratings_fan_out`, `ratings_in_order`,
    /// `language_ratings_in_order`, `helpful_all`, `helpful_language`,
    /// `helpful_ratings`, `helpful_language_ratings` or `empty`.
    pub strategy: String,
    /// The order the page was read in.
    #[schema(value_type = ListingSort)]
    pub sort: String,
    pub queries: Vec<PlannedQueryBody>,
    pub skipped: Vec<SkippedBody>,
    /// Which per-rating counts of the product sized the sub-queries' limits
    /// and skipped ratings: `nothing` (one query), `comments` (all its
    /// comments), `verified_comments` (its verified ones, for
    /// `verified=true`; statistics written before those were counted by
    /// rating size by all comments until `rave reconcile --fix`) or
    /// `media_comments` (those with a published photo, for `has_media=true`;
    /// with `verified=true` too, per rating the lesser of that and the
    /// verified count).
    pub sized_by: String,
    /// Read capacity units the page consumed.
    pub read_units: f64,
    /// Items read from the store for this page.
    pub items_read: usize,
}

impl From<Plan> for PlanBody {
    fn from(plan: Plan) -> PlanBody {
        let name = |value: serde_json::Result<serde_json::Value>| {
            value
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default()
        };
        let strategy = name(serde_json::to_value(plan.strategy));
        let sized_by = name(serde_json::to_value(plan.sized_by));
        PlanBody {
            strategy,
            sort: plan.sort.as_str().to_owned(),
            queries: plan
                .queries
                .into_iter()
                .map(|q| PlannedQueryBody {
                    index: q.index.to_owned(),
                    partition_key: q.partition_key,
                    limit: q.limit,
                })
                .collect(),
            skipped: plan
                .skipped
                .into_iter()
                .map(|s| SkippedBody {
                    partition_key: s.partition_key,
                    reason: s.reason.to_owned(),
                })
                .collect(),
            sized_by,
            read_units: plan.read_units,
            items_read: plan.items_read,
        }
    }
}

/// A page of comments. It writes its own JSON (`comment_json`); its
/// derived `Serialize`, which writes the same bytes, is the tests' measure.
#[derive(Debug, ToSchema)]
#[cfg_attr(test, derive(Serialize))]
pub(crate) struct CommentPageBody {
    pub items: Vec<CommentBody>,
    /// Pass as `cursor` for the next page; `null` on the last page.
    pub next_cursor: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanBody>,
}

impl CommentPageBody {
    /// A listing's page as the public sees it, with its plan when the
    /// request asked for it (`explain`).
    pub(crate) fn public(page: ListPage, explain: bool, links: &MediaLinks) -> CommentPageBody {
        CommentPageBody {
            items: page
                .items
                .into_iter()
                .map(|comment| CommentBody::public(comment, links))
                .collect(),
            next_cursor: page.next_cursor,
            plan: explain.then(|| PlanBody::from(page.plan)),
        }
    }
}

/// What erasing an author's data did.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ErasedBody {
    /// Comments erased (0 when the author had none left).
    pub erased: u64,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct HealthBody {
    pub status: String,
}

/// Counts by rating of a product (AP7-AP10).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ProductStatsBody {
    pub product_id: String,
    /// The language counted, or null for all languages.
    pub language: Option<String>,
    /// Published and flagged comments per rating, keys "1" to "5".
    #[schema(example = json!({"1": 0, "2": 3, "3": 1, "4": 0, "5": 10}))]
    pub counts: BTreeMap<String, u64>,
    pub total: u64,
    /// How many of the counted comments are verified purchases.
    pub verified_total: u64,
    /// The verified purchases among the counted comments per rating, keys
    /// "1" to "5" (they add up to `verified_total`).
    #[schema(example = json!({"1": 0, "2": 1, "3": 0, "4": 0, "5": 4}))]
    pub verified_counts: BTreeMap<String, u64>,
    /// How many of the counted comments show at least one published photo
    /// (what `has_media=true` lists).
    pub media_total: u64,
    /// Those per rating, keys "1" to "5" (they add up to `media_total`).
    #[schema(example = json!({"1": 0, "2": 0, "3": 1, "4": 0, "5": 2}))]
    pub media_counts: BTreeMap<String, u64>,
    /// The mean rating of the counted comments, rounded to two decimals;
    /// null without any.
    #[schema(example = 4.25)]
    pub average: Option<f64>,
    /// How the counted comments answered each of the product's attributes,
    /// by name (only attributes some comment answered).
    pub attributes: BTreeMap<String, AttributeStatsBody>,
}

impl From<ProductStats> for ProductStatsBody {
    fn from(stats: ProductStats) -> ProductStatsBody {
        let average = stats.average();
        let by_rating = |counts: &RatingCounts| -> BTreeMap<String, u64> {
            (1..=5).map(|r| (r.to_string(), counts.0[r - 1])).collect()
        };
        ProductStatsBody {
            product_id: stats.product_id.to_string(),
            language: stats.language.map(|l| l.to_string()),
            counts: by_rating(&stats.counts),
            total: stats.total,
            verified_total: stats.verified_total,
            verified_counts: by_rating(&stats.verified_counts),
            media_total: stats.media_total,
            media_counts: by_rating(&stats.media_counts),
            average,
            attributes: stats_bodies(&stats.attributes),
        }
    }
}

/// One product on the leaderboard.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct LeaderBody {
    pub product_id: String,
    pub five_star: u64,
}

/// The products with the most 5-star comments, most first (AP11).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct LeaderboardBody {
    pub items: Vec<LeaderBody>,
}

impl From<Vec<Leader>> for LeaderboardBody {
    fn from(leaders: Vec<Leader>) -> LeaderboardBody {
        LeaderboardBody {
            items: leaders
                .into_iter()
                .map(|l| LeaderBody {
                    product_id: l.product_id,
                    five_star: l.five_star,
                })
                .collect(),
        }
    }
}

/// Global aggregates over counted (published and flagged) comments.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct GlobalStatsBody {
    pub comments_total: u64,
    /// Products with at least one counted comment.
    pub products_total: u64,
    /// Authors with at least one counted comment.
    pub authors_total: u64,
    /// How many authors have exactly k counted comments, k = "1".."9", and "10+".
    #[schema(example = json!({"1": 40, "2": 12, "3": 5, "4": 2, "5": 1, "6": 0, "7": 0, "8": 0, "9": 0, "10+": 1}))]
    pub authors_by_comment_count: BTreeMap<String, u64>,
}

impl From<GlobalStats> for GlobalStatsBody {
    fn from(stats: GlobalStats) -> GlobalStatsBody {
        GlobalStatsBody {
            comments_total: stats.comments_total,
            products_total: stats.products_total,
            authors_total: stats.authors_total,
            authors_by_comment_count: stats
                .authors_by_comment_count
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    (
                        if i == 9 {
                            "10+".to_owned()
                        } else {
                            (i + 1).to_string()
                        },
                        *n,
                    )
                })
                .collect(),
        }
    }
}

/// Where the stream aggregator stands.
#[derive(Debug, Clone, Copy, Default, Serialize, ToSchema)]
pub struct AggregatorStatus {
    /// The last stream position applied.
    pub position: u64,
    /// The newest position committed.
    pub latest: u64,
    /// Changes committed but not applied yet.
    pub lag_events: u64,
    /// Age of the oldest change not applied yet, in milliseconds.
    pub lag_ms: u64,
    /// Changes applied since this process started.
    pub applied: u64,
    /// When the aggregator last finished a step (for `/readyz`: an
    /// aggregator that goes silent is stuck).
    #[serde(skip)]
    pub published: Option<std::time::Instant>,
}

/// What an admin says about a product.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PutProductBody {
    /// The display name: 1-200 characters, no control characters.
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\x00-\x1f\x7f-\x9f]{1,200}$",
        example = "Stainless kettle, 1.7 l"
    )]
    pub name: String,
    /// The product's page in the shop: an absolute http(s) URL of at most
    /// 2048 characters, without spaces.
    #[serde(default)]
    #[schema(
        max_length = 2048,
        pattern = r"^https?://[^\s\x00-\x1f\x7f-\x9f]+$",
        example = "https://shop.example/kettle"
    )]
    pub url: Option<String>,
    /// An image of the product: an absolute http(s) URL of at most 2048
    /// characters, without spaces.
    #[serde(default)]
    #[schema(max_length = 2048, pattern = r"^https?://[^\s\x00-\x1f\x7f-\x9f]+$")]
    pub image: Option<String>,
    /// Global Trade Item Numbers (GTIN-8, UPC-A, EAN-13, GTIN-14): at most
    /// 20, each 8, 12, 13 or 14 digits whose last is the correct GS1 check
    /// digit.
    #[serde(default)]
    #[schema(max_items = 20, value_type = Vec<Gtin>)]
    pub gtins: Vec<String>,
    /// Manufacturer part numbers: at most 20, each 1-70 characters, not
    /// only spaces, no control characters.
    #[serde(default)]
    #[schema(max_items = 20, value_type = Vec<Mpn>)]
    pub mpns: Vec<String>,
    /// The shop's stock keeping units: at most 20, each 1-100 characters,
    /// not only spaces, no control characters. A SKU names one product
    /// (imports find the product by it): one that another product's record
    /// lists is refused (409, naming the product).
    #[serde(default)]
    #[schema(max_items = 20, value_type = Vec<Sku>)]
    pub skus: Vec<String>,
    /// The brand: 1-70 characters, not only spaces, no control characters.
    #[serde(default)]
    #[schema(
        min_length = 1,
        max_length = 70,
        pattern = r"^[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*$",
        example = "Acme"
    )]
    pub brand: Option<String>,
    /// The product family this product is a variant of: a group id (shaped
    /// like a product id) that is not itself a variant, and not this
    /// product. Absent or null: a variant of no group. Setting it moves the
    /// product, its comments and its counts to that group at once.
    #[serde(default)]
    #[schema(value_type = Option<ProductId>)]
    pub group: Option<String>,
    /// What its reviews are asked for besides the star rating: at most 8
    /// attributes, names distinct (docs/sub-ratings.md).
    #[serde(default)]
    #[schema(max_items = 8)]
    pub attributes: Vec<AttributeDeclarationBody>,
}

impl TryFrom<PutProductBody> for ProductRecord {
    type Error = rave_comments::CommentsError;

    fn try_from(body: PutProductBody) -> rave_comments::Result<ProductRecord> {
        Ok(ProductRecord {
            name: body.name,
            url: body.url,
            image: body.image,
            gtins: body.gtins,
            mpns: body.mpns,
            skus: body.skus,
            brand: body.brand,
            group: body.group,
            attributes: declared(body.attributes)?,
        })
    }
}

/// A product as its pages show it.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ProductBody {
    pub product_id: String,
    /// The record's name, or the id until an admin sets one.
    pub name: String,
    pub url: Option<String>,
    pub image: Option<String>,
    /// GTINs, MPNs and SKUs as the record gives them (empty until an admin
    /// sets them).
    #[schema(value_type = Vec<Gtin>)]
    pub gtins: Vec<String>,
    #[schema(value_type = Vec<Mpn>)]
    pub mpns: Vec<String>,
    #[schema(value_type = Vec<Sku>)]
    pub skus: Vec<String>,
    pub brand: Option<String>,
    /// The product family it is a variant of, if any.
    #[schema(value_type = Option<ProductId>)]
    pub group: Option<String>,
    /// What its record declares its reviews are asked for, as stored
    /// (empty until an admin declares it).
    pub attributes: Vec<AttributeDeclarationBody>,
    /// What its reviews are asked for: `attributes` when it declares any,
    /// else what the record of its `group` declares (a variant declaring
    /// nothing asks its family's). Posts' answers are checked against
    /// this; the embed's form asks it.
    pub effective_attributes: Vec<AttributeDeclarationBody>,
    /// All languages.
    pub stats: ProductStatsBody,
    /// Each language with counted comments.
    pub languages: Vec<ProductStatsBody>,
}

impl From<&ProductOverview> for ProductBody {
    fn from(overview: &ProductOverview) -> ProductBody {
        let name = overview.name().to_owned();
        let record = overview.record.clone().unwrap_or_default();
        ProductBody {
            product_id: overview.product_id.to_string(),
            name,
            url: record.url,
            image: record.image,
            gtins: record.gtins,
            mpns: record.mpns,
            skus: record.skus,
            brand: record.brand,
            group: record.group,
            attributes: declaration_bodies(&record.attributes),
            effective_attributes: declaration_bodies(&overview.asked),
            stats: overview.overall.clone().into(),
            languages: overview.languages.iter().cloned().map(Into::into).collect(),
        }
    }
}

/// A time kept in milliseconds, as the API shows times: RFC 3339 in UTC.
pub(crate) fn rfc3339(ms: u64) -> String {
    i64::try_from(ms)
        .ok()
        .and_then(|ms| rave_comments::Timestamp::from_millis(ms).ok())
        .map_or_else(|| ms.to_string(), |time| time.to_string())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use regex::Regex;
    use utoipa::PartialSchema;

    use super::*;

    /// The `pattern` the document states for `schema`, compiled.
    fn pattern_of(schema: serde_json::Value) -> Regex {
        let pattern = schema["pattern"]
            .as_str()
            .expect("the schema states a pattern");
        Regex::new(pattern).expect("the pattern compiles")
    }

    fn to_json(schema: impl serde::Serialize) -> serde_json::Value {
        serde_json::to_value(schema).expect("a schema serializes")
    }

    fn create_body(rating: &str) -> Result<CreateCommentBody, serde_json::Error> {
        serde_json::from_str(&format!(
            r#"{{"author": "a", "language": "en", "rating": {rating}, "body": "b"}}"#
        ))
    }

    #[test]
    fn a_rating_is_an_integer_as_json_schema_counts_them() {
        assert_eq!(create_body("4").map(|b| b.rating).ok(), Some(4));
        assert_eq!(create_body("4.0").map(|b| b.rating).ok(), Some(4));
        assert_eq!(create_body("-2e0").map(|b| b.rating).ok(), Some(-2));
        for refused in ["4.5", "\"4\"", "null", "1e300", "true"] {
            assert!(create_body(refused).is_err(), "{refused}");
        }
        let edit = |text: &str| serde_json::from_str::<EditCommentBody>(text).map(|b| b.rating);
        assert_eq!(edit(r#"{"rating": 5.0}"#).ok(), Some(Some(5)));
        assert_eq!(edit(r#"{"rating": null}"#).ok(), Some(None));
        assert_eq!(edit("{}").ok(), Some(None));
        assert!(edit(r#"{"rating": 0.5}"#).is_err());
    }

    /// Text shaped like an RFC 3339 time, near and across every boundary
    /// the domain checks.
    fn time_like() -> impl Strategy<Value = String> {
        (
            1965u32..=10_001,
            0u32..=13,
            0u32..=32,
            0u32..=24,
            0u32..=60,
            0u32..=61,
            prop::option::of("[0-9]{0,10}"),
            prop::sample::select(vec!["Z", "z", "+00:00", "-01:00", ""]),
        )
            .prop_map(|(y, mo, d, h, mi, s, fraction, zone)| {
                let fraction = fraction.map(|f| format!(".{f}")).unwrap_or_default();
                format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}{fraction}{zone}")
            })
    }

    proptest! {
        #[test]
        fn the_documented_created_at_is_what_the_domain_accepts(text in time_like()) {
            let pattern = pattern_of(to_json(UtcTime::schema()));
            prop_assert_eq!(pattern.is_match(&text), rave_comments::Timestamp::parse(&text).is_ok());
        }

        #[test]
        fn the_documented_product_id_is_what_the_domain_accepts(text in "[A-Za-z0-9_/ #ü-]{0,66}") {
            let pattern = pattern_of(to_json(ProductId::schema()));
            prop_assert_eq!(pattern.is_match(&text), rave_comments::ProductId::parse(&text).is_ok());
        }

        #[test]
        fn the_documented_voter_is_what_the_domain_accepts(text in "[A-Za-z0-9_/ #ü-]{0,130}") {
            let pattern = pattern_of(to_json(VoterId::schema()));
            prop_assert_eq!(pattern.is_match(&text), rave_comments::Voter::parse(&text).is_ok());
        }

        #[test]
        fn the_documented_language_is_what_the_domain_accepts(text in "[a-zA-Z0-9é]{0,4}") {
            let pattern = pattern_of(to_json(LanguageCode::schema()));
            prop_assert_eq!(pattern.is_match(&text), rave_comments::Language::parse(&text).is_ok());
        }
    }
}
