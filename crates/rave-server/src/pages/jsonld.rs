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
use std::io::Write as _;

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

/// The structured data of a listing page but its reviews: the product and
/// the statistics the page shows ([`write_script_safe`] adds the reviews).
pub(super) fn product<'a>(overview: &'a ProductOverview, stats: &ProductStats) -> Product<'a> {
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

/// Writes `head` (a `Product` or `ProductGroup`) with `reviews` as its
/// `review` property, as JSON that cannot end or confuse the `<script>`
/// element it sits in: `<`, `>` and `&` as `\u` escapes (so no
/// `</script>` or `<!--`), and the line and bidirectional-control
/// characters as escapes too. The JSON means the same after parsing.
pub(super) fn write_script_safe(head: &impl Serialize, reviews: &[Shown<'_>], out: &mut String) {
    let mut json = Vec::with_capacity(room(reviews));
    // Serialising these types into memory cannot fail: the fallback is
    // never taken.
    if sonic_rs::to_writer(&mut json, head).is_err() {
        json.clear();
        json.extend_from_slice(b"{}");
    }
    // The reviews go last, in place of the object's closing brace.
    if !reviews.is_empty() && json.pop_if(|last| *last == b'}').is_some() {
        json.extend_from_slice(b",\"review\":[");
        for (i, shown) in reviews.iter().enumerate() {
            if i > 0 {
                json.push(b',');
            }
            write_review(shown, &mut json);
        }
        json.extend_from_slice(b"]}");
    }
    // Every piece written is UTF-8, so the check cannot fail.
    let json = String::from_utf8(json).unwrap_or_else(|_| "{}".to_owned());
    push_script_safe(&json, out);
}

/// Room for the structured data of a page with `reviews`, so that it is
/// written without regrowing: sonic-rs reserves six bytes a byte of a
/// string before escaping it (the most an escape takes), so the widest
/// string needs that much to spare.
fn room(reviews: &[Shown<'_>]) -> usize {
    const HEAD: usize = 2048;
    const REVIEW: usize = 256;
    const PHOTO: usize = 128;
    let texts = |shown: &Shown<'_>| {
        [
            shown.comment.body.len(),
            shown.name.len(),
            shown.comment.author.len(),
        ]
    };
    let written: usize = reviews
        .iter()
        .map(|shown| REVIEW + PHOTO * shown.photos.len() + texts(shown).iter().sum::<usize>())
        .sum();
    let widest = reviews.iter().flat_map(texts).max().unwrap_or(0);
    HEAD + written + 6 * widest
}

/// Writes one comment as a schema.org `Review`. A page has twenty of them
/// and they are most of its structured data: written as fixed runs of
/// bytes around escaped strings, a review costs less than half of what
/// serde's field-by-field writing did (each key escaped and quoted on its
/// own).
fn write_review(shown: &Shown<'_>, json: &mut Vec<u8>) {
    let comment = shown.comment;
    json.extend_from_slice(br#"{"@type":"Review","author":{"@type":"Person","name":"#);
    write_str(json, &comment.author);
    json.extend_from_slice(br#"},"datePublished":"#);
    write_str(json, &shown.published);
    // schema.org's rating scale is 1 to 5 unless said otherwise, which is
    // rave's, so a review need not repeat it.
    json.extend_from_slice(br#","reviewRating":{"@type":"Rating","ratingValue":"#);
    // Writing into memory cannot fail.
    let _ = write!(json, "{}", comment.rating.get());
    json.extend_from_slice(br#"},"name":"#);
    write_str(json, &shown.name);
    json.extend_from_slice(br#","reviewBody":"#);
    write_str(json, &comment.body);
    json.extend_from_slice(br#","inLanguage":"#);
    write_str(json, comment.language.as_str());
    // The display size of each published photo (JPEG, which every
    // crawler reads); absolute when rave knows its public URL.
    if !shown.photos.is_empty() {
        json.extend_from_slice(br#","image":["#);
        for (i, photo) in shown.photos.iter().enumerate() {
            if i > 0 {
                json.push(b',');
            }
            write_str(json, &photo.display_jpeg);
        }
        json.push(b']');
    }
    json.push(b'}');
}

/// `text` as a JSON string, escaped as serde writes it.
fn write_str(json: &mut Vec<u8>, text: &str) {
    // Writing a string into memory cannot fail.
    let _ = sonic_rs::to_writer(&mut *json, text);
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
        write_script_safe(value, &[], &mut text);
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

    /// The script's JSON of `head` with `reviews`, parsed back.
    fn written(head: &Value, reviews: &[Shown<'_>]) -> Value {
        let mut text = String::new();
        write_script_safe(head, reviews, &mut text);
        assert!(!text.contains(['<', '>', '&']), "{text}");
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn reviews_are_written_as_schema_org_reviews_after_the_head() {
        use crate::media::MediaLinks;
        use crate::pages::shown::tests::{comment, photo};
        use rave_comments::PhotoStatus;

        let hostile = "</script><!-- \"quoted\" \\ \n line\u{2028}é & \u{1}";
        let mut first = comment(hostile, hostile);
        first.author = hostile.into();
        first.media = vec![
            photo("a", 1600, 1200, PhotoStatus::Published),
            photo("b", 800, 600, PhotoStatus::Pending),
            photo("c", 900, 1600, PhotoStatus::Published),
        ];
        let second = comment("", "Plain");
        let links = MediaLinks::served_at("https://r.example");
        let shown = [Shown::new(&first, &links), Shown::new(&second, &links)];
        let head = json!({"@context": "https://schema.org", "@type": "Product", "name": "P"});
        let review = |shown: &Shown<'_>, image: Option<Vec<&str>>| {
            let mut review = json!({
                "@type": "Review",
                "author": {"@type": "Person", "name": shown.comment.author},
                "datePublished": "2026-01-02T03:04:05.006Z",
                "reviewRating": {"@type": "Rating", "ratingValue": 4},
                "name": shown.name,
                "reviewBody": shown.comment.body,
                "inLanguage": "en",
            });
            if let Some(image) = image {
                review["image"] = json!(image);
            }
            review
        };
        let (a, c) = ("a".repeat(64), "c".repeat(64));
        let images = [
            format!("https://r.example/media/{a}/display.jpg"),
            format!("https://r.example/media/{c}/display.jpg"),
        ];
        let mut expected = head.clone();
        expected["review"] = json!([
            review(&shown[0], Some(images.iter().map(String::as_str).collect())),
            review(&shown[1], None),
        ]);
        assert_eq!(written(&head, &shown), expected);
        assert_eq!(written(&head, &[]), head);
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
