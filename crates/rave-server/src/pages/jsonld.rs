//! The structured data of a listing: schema.org `Product` with its
//! `AggregateRating` and the page's comments as `Review`s, as JSON-LD,
//! safe to put inside a `<script>` element.
//!
//! The product's identifiers follow schema.org: each GTIN under the
//! property of its length (`gtin8`, `gtin12`, `gtin13`, `gtin14`; the
//! record accepts no other lengths, so the generic `gtin` is not needed),
//! `mpn`, `sku` (the record's SKUs, or the product id until it has some)
//! and `brand` as a `Brand`. A property with several values is an array,
//! as schema.org allows for any property.
//!
//! A review's published photos are its `image` (schema.org: `Review`
//! inherits `image`, a URL or `ImageObject`, from `Thing`): always an
//! array of the display renditions' URLs (JPEG, a format Google's image
//! guidelines list). Google asks for image URLs it can crawl and index
//! (<https://developers.google.com/search/docs/appearance/structured-data/product-snippet>,
//! the `image` property's guidelines); they are absolute
//! when rave is given its `--public-url` (or a bucket's or CDN's URL), else
//! paths on rave's origin, which JSON-LD readers resolve against the page's
//! URL as extruct does.

use std::fmt::Write as _;

use rave_comments::{ProductOverview, ProductStats};
use serde::Serialize;

use super::shown::Shown;

/// schema.org `Product`, with what a listing page shows of it.
#[derive(Debug, Serialize)]
pub(super) struct Product<'a> {
    #[serde(rename = "@context")]
    context: &'static str,
    #[serde(rename = "@type")]
    kind: &'static str,
    name: &'a str,
    #[serde(serialize_with = "one_or_many")]
    sku: Vec<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "one_or_many")]
    gtin8: Vec<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "one_or_many")]
    gtin12: Vec<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "one_or_many")]
    gtin13: Vec<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "one_or_many")]
    gtin14: Vec<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "one_or_many")]
    mpn: Vec<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    brand: Option<Brand<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    image: Option<&'a str>,
    /// Search engines refuse an AggregateRating over no reviews.
    #[serde(rename = "aggregateRating", skip_serializing_if = "Option::is_none")]
    aggregate_rating: Option<AggregateRating>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    review: Vec<Review<'a>>,
}

/// schema.org `Brand`.
#[derive(Debug, Serialize)]
struct Brand<'a> {
    #[serde(rename = "@type")]
    kind: &'static str,
    name: &'a str,
}

/// One value as itself, several as an array.
fn one_or_many<S: serde::Serializer>(values: &[&str], serializer: S) -> Result<S::Ok, S::Error> {
    match values {
        [one] => serializer.serialize_str(one),
        many => many.serialize(serializer),
    }
}

#[derive(Debug, Serialize)]
pub(super) struct AggregateRating {
    #[serde(rename = "@type")]
    kind: &'static str,
    #[serde(rename = "ratingValue")]
    rating_value: f64,
    #[serde(rename = "reviewCount")]
    review_count: u64,
    #[serde(rename = "bestRating")]
    best_rating: u8,
    #[serde(rename = "worstRating")]
    worst_rating: u8,
}

#[derive(Debug, Serialize)]
pub(super) struct Review<'a> {
    #[serde(rename = "@type")]
    kind: &'static str,
    author: Person<'a>,
    #[serde(rename = "datePublished")]
    date_published: &'a str,
    #[serde(rename = "reviewRating")]
    review_rating: Rating,
    name: &'a str,
    #[serde(rename = "reviewBody")]
    review_body: &'a str,
    #[serde(rename = "inLanguage")]
    in_language: &'a str,
    /// The display size of each published photo (JPEG, which every
    /// crawler reads); absolute when rave knows its public URL.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    image: Vec<&'a str>,
}

#[derive(Debug, Serialize)]
struct Person<'a> {
    #[serde(rename = "@type")]
    kind: &'static str,
    name: &'a str,
}

/// A review's rating: schema.org's scale is 1 to 5 unless said otherwise,
/// which is rave's, so each review need not repeat it.
#[derive(Debug, Serialize)]
struct Rating {
    #[serde(rename = "@type")]
    kind: &'static str,
    #[serde(rename = "ratingValue")]
    rating_value: u8,
}

/// The structured data of a listing page: the product, the statistics the
/// page shows, and the page's comments.
pub(super) fn product<'a>(
    overview: &'a ProductOverview,
    stats: &ProductStats,
    comments: &'a [Shown<'a>],
) -> Product<'a> {
    let record = overview.record.as_ref();
    let gtins = |length: usize| -> Vec<&'a str> {
        record
            .map(|r| {
                r.gtins
                    .iter()
                    .map(String::as_str)
                    .filter(|g| g.len() == length)
                    .collect()
            })
            .unwrap_or_default()
    };
    let skus: Vec<&str> = record
        .map(|r| r.skus.iter().map(String::as_str).collect())
        .unwrap_or_default();
    Product {
        context: "https://schema.org",
        kind: "Product",
        name: overview.name(),
        sku: if skus.is_empty() {
            vec![overview.product_id.as_str()]
        } else {
            skus
        },
        gtin8: gtins(8),
        gtin12: gtins(12),
        gtin13: gtins(13),
        gtin14: gtins(14),
        mpn: record
            .map(|r| r.mpns.iter().map(String::as_str).collect())
            .unwrap_or_default(),
        brand: record.and_then(|r| r.brand.as_deref()).map(|name| Brand {
            kind: "Brand",
            name,
        }),
        url: record.and_then(|r| r.url.as_deref()),
        image: record.and_then(|r| r.image.as_deref()),
        aggregate_rating: aggregate_rating(stats),
        review: comments.iter().map(review).collect(),
    }
}

/// The statistics' `AggregateRating`; none over no reviews, which search
/// engines refuse.
pub(super) fn aggregate_rating(stats: &ProductStats) -> Option<AggregateRating> {
    stats.average().map(|average| AggregateRating {
        kind: "AggregateRating",
        rating_value: average,
        review_count: stats.total,
        best_rating: 5,
        worst_rating: 1,
    })
}

pub(super) fn review<'a>(shown: &'a Shown<'a>) -> Review<'a> {
    let comment = shown.comment;
    Review {
        kind: "Review",
        author: Person {
            kind: "Person",
            name: &comment.author,
        },
        date_published: &shown.published,
        review_rating: Rating {
            kind: "Rating",
            rating_value: comment.rating.get(),
        },
        name: &shown.name,
        review_body: &comment.body,
        in_language: comment.language.as_str(),
        image: shown
            .photos
            .iter()
            .map(|photo| photo.display_jpeg.as_str())
            .collect(),
    }
}

/// Writes `value` as JSON that cannot end or confuse the `<script>` element
/// it sits in: `<`, `>` and `&` as `\u` escapes (so no `</script>` or
/// `<!--`), and the line and bidirectional-control characters as escapes
/// too. The JSON means the same after parsing.
pub(super) fn write_script_safe(value: &impl Serialize, out: &mut String) {
    // Serialising these types into memory cannot fail: the fallback is
    // never taken.
    let json = sonic_rs::to_string(value).unwrap_or_else(|_| "{}".to_owned());
    push_script_safe(&json, out);
}

/// Appends compact `json` with the escapes of [`write_script_safe`].
/// Outside its strings compact JSON is ASCII punctuation, digits and
/// keywords, so every character escaped here stands inside a string, where
/// a `\u` escape means the same: the whole text is scanned once, after
/// serialising, instead of every piece serde hands over.
fn push_script_safe(json: &str, out: &mut String) {
    out.reserve(json.len());
    let bytes = json.as_bytes();
    // Every character escaped is `<`, `>`, `&`, or three bytes from 0xE2:
    // two vectorised scans, each resumed only once passed, so the text is
    // read about twice however many it holds.
    let markup_from =
        |from: usize| memchr::memchr3(b'<', b'>', b'&', &bytes[from..]).map(|at| from + at);
    let lead_from = |from: usize| memchr::memchr(0xE2, &bytes[from..]).map(|at| from + at);
    let mut next_markup = markup_from(0);
    let mut next_lead = lead_from(0);
    let mut written = 0;
    loop {
        let at = match (next_markup, next_lead) {
            (Some(m), Some(l)) => m.min(l),
            (Some(found), None) | (None, Some(found)) => found,
            (None, None) => break,
        };
        let escaped = match bytes[at] {
            0xE2 => json[at..].chars().next().filter(|c| {
                matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
            }),
            byte => Some(char::from(byte)),
        };
        let after = match escaped {
            Some(c) => {
                out.push_str(&json[written..at]);
                // Writing into a String cannot fail.
                let _ = write!(out, "\\u{:04x}", u32::from(c));
                written = at + c.len_utf8();
                written
            }
            None => at + 1,
        };
        if next_markup == Some(at) {
            next_markup = markup_from(after);
        } else {
            next_lead = lead_from(after);
        }
    }
    out.push_str(&json[written..]);
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::*;

    fn script_safe(value: &Value) -> String {
        let mut text = String::new();
        write_script_safe(value, &mut text);
        text
    }

    fn assert_inert_and_equal(value: &Value) {
        let text = script_safe(value);
        assert!(!text.contains(['<', '>', '&']), "{text}");
        assert!(
            !text.contains([
                '\u{2028}', '\u{2029}', '\u{202a}', '\u{202e}', '\u{2066}', '\u{2069}'
            ]),
            "{text}"
        );
        assert_eq!(&serde_json::from_str::<Value>(&text).unwrap(), value);
    }

    #[test]
    fn script_safe_json_cannot_close_its_script_and_parses_back() {
        assert_inert_and_equal(&json!({
            "body": "</script><script>alert(1)</script> & <!-- \u{202e}x \u{2028}",
            "name": "…a<b>c…\u{2066}d&&\u{2069}…",
        }));
    }

    proptest! {
        #[test]
        fn any_text_is_inert_and_parses_back(
            text in "[a-z<>&\"\\\n…★\u{2028}\u{2029}\u{202a}-\u{202e}\u{2066}-\u{2069}]{0,40}"
        ) {
            assert_inert_and_equal(&json!({ "body": text.clone(), text: 1 }));
        }
    }
}
