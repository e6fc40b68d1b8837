//! The structured data of a listing: schema.org `Product` with its
//! `AggregateRating` and the page's comments as `Review`s, as JSON-LD,
//! safe to put inside a `<script>` element.

use rave_comments::{Comment, ProductOverview, ProductStats};
use serde_json::{Value, json};

use super::html::review_name;

/// The JSON-LD of a listing page: the product, the statistics the page
/// shows, and the page's comments.
pub fn product(overview: &ProductOverview, stats: &ProductStats, comments: &[Comment]) -> Value {
    let mut product = json!({
        "@context": "https://schema.org",
        "@type": "Product",
        "name": overview.name(),
        "sku": overview.product_id.as_str(),
    });
    if let Some(record) = &overview.record {
        if let Some(url) = &record.url {
            product["url"] = json!(url);
        }
        if let Some(image) = &record.image {
            product["image"] = json!(image);
        }
    }
    // Search engines refuse an AggregateRating over no reviews.
    if let Some(average) = stats.average() {
        product["aggregateRating"] = json!({
            "@type": "AggregateRating",
            "ratingValue": average,
            "reviewCount": stats.total,
            "bestRating": 5,
            "worstRating": 1,
        });
    }
    if !comments.is_empty() {
        product["review"] = comments.iter().map(review).collect();
    }
    product
}

fn review(comment: &Comment) -> Value {
    json!({
        "@type": "Review",
        "author": {"@type": "Person", "name": comment.author},
        "datePublished": comment.created_at.to_string(),
        "reviewRating": {
            "@type": "Rating",
            "ratingValue": comment.rating.get(),
            "bestRating": 5,
            "worstRating": 1,
        },
        "name": review_name(comment),
        "reviewBody": comment.body,
        "inLanguage": comment.language.as_str(),
    })
}

/// JSON that cannot end or confuse the `<script>` element it sits in: `<`,
/// `>` and `&` as `\u` escapes (so no `</script>` or `<!--`), and the line
/// and bidirectional-control characters as escapes too. The JSON means the
/// same after parsing.
pub fn script_safe(value: &Value) -> String {
    let text = serde_json::to_string(value).unwrap_or_else(|_| "{}".to_owned());
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<'
            | '>'
            | '&'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}' => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
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
