//! The structured data of a listing: schema.org `Product` with its
//! `AggregateRating` and the page's comments as `Review`s, as JSON-LD,
//! safe to put inside a `<script>` element.

use std::fmt::Write;

use rave_comments::{Comment, ProductOverview, ProductStats};
use serde::Serialize;

use super::html::review_name;

/// schema.org `Product`, with what a listing page shows of it.
#[derive(Debug, Serialize)]
pub struct Product<'a> {
    #[serde(rename = "@context")]
    context: &'static str,
    #[serde(rename = "@type")]
    kind: &'static str,
    name: &'a str,
    sku: &'a str,
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

#[derive(Debug, Serialize)]
struct AggregateRating {
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
struct Review<'a> {
    #[serde(rename = "@type")]
    kind: &'static str,
    author: Person<'a>,
    #[serde(rename = "datePublished")]
    date_published: String,
    #[serde(rename = "reviewRating")]
    review_rating: Rating,
    name: String,
    #[serde(rename = "reviewBody")]
    review_body: &'a str,
    #[serde(rename = "inLanguage")]
    in_language: &'a str,
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
pub fn product<'a>(
    overview: &'a ProductOverview,
    stats: &ProductStats,
    comments: &'a [Comment],
) -> Product<'a> {
    let record = overview.record.as_ref();
    Product {
        context: "https://schema.org",
        kind: "Product",
        name: overview.name(),
        sku: overview.product_id.as_str(),
        url: record.and_then(|r| r.url.as_deref()),
        image: record.and_then(|r| r.image.as_deref()),
        aggregate_rating: stats.average().map(|average| AggregateRating {
            kind: "AggregateRating",
            rating_value: average,
            review_count: stats.total,
            best_rating: 5,
            worst_rating: 1,
        }),
        review: comments.iter().map(review).collect(),
    }
}

fn review(comment: &Comment) -> Review<'_> {
    Review {
        kind: "Review",
        author: Person {
            kind: "Person",
            name: &comment.author,
        },
        date_published: comment.created_at.to_string(),
        review_rating: Rating {
            kind: "Rating",
            rating_value: comment.rating.get(),
        },
        name: review_name(comment),
        review_body: &comment.body,
        in_language: comment.language.as_str(),
    }
}

/// JSON that cannot end or confuse the `<script>` element it sits in: `<`,
/// `>` and `&` as `\u` escapes (so no `</script>` or `<!--`), and the line
/// and bidirectional-control characters as escapes too. The JSON means the
/// same after parsing.
pub fn script_safe(value: &impl Serialize) -> String {
    let text = serde_json::to_string(value).unwrap_or_else(|_| "{}".to_owned());
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut written = 0;
    let mut at = 0;
    // Every character escaped is `<`, `>`, `&`, or three bytes from 0xE2.
    while at < bytes.len() {
        let escaped = match bytes[at] {
            b'<' | b'>' | b'&' => Some((u32::from(bytes[at]), 1)),
            0xE2 => text[at..].chars().next().and_then(|c| {
                matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
                    .then(|| (u32::from(c), c.len_utf8()))
            }),
            _ => None,
        };
        match escaped {
            Some((code, len)) => {
                if out.is_empty() {
                    out.reserve(text.len() + 64);
                }
                out.push_str(&text[written..at]);
                let _ = write!(out, "\\u{code:04x}");
                at += len;
                written = at;
            }
            None => at += 1,
        }
    }
    if written == 0 {
        return text;
    }
    out.push_str(&text[written..]);
    out
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    #[test]
    fn script_safe_json_cannot_close_its_script_and_parses_back() {
        let value = json!({"body": "</script><script>alert(1)</script> & <!-- \u{202e}x \u{2028}"});
        let text = script_safe(&value);
        assert!(!text.contains('<') && !text.contains('>') && !text.contains('&'));
        assert!(!text.contains('\u{202e}') && !text.contains('\u{2028}'));
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), value);
    }
}
