//! A page of comments written as JSON in one pass: the listing routes'
//! answer, written afresh whenever no kept answer serves it (`answers`).
//!
//! serde hands a serializer each field's name to write, and sonic-rs
//! escapes and quotes every name as it would any string: on a page of 20
//! comments that was 38 k of the 80 k instructions its JSON took (about 95
//! a name). Here each run of names and punctuation between two values is
//! one fixed byte string; the values are written as serde writes them
//! (strings escaped by sonic-rs, the rarely filled nested fields through
//! their derived `Serialize`). The tests hold the bytes to what the derived
//! `Serialize` of the same bodies writes.

use serde::Serialize;

use crate::api::{CommentBody, CommentPageBody};
use crate::json::WriteJson;

impl WriteJson for CommentPageBody {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(br#"{"items":["#);
        for (i, comment) in self.items.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_comment(comment, out);
        }
        out.extend_from_slice(br#"],"next_cursor":"#);
        value(out, &self.next_cursor);
        if let Some(plan) = &self.plan {
            out.extend_from_slice(br#","plan":"#);
            value(out, plan);
        }
        out.push(b'}');
    }
}

/// Writes `,"field":value` for each field of `$body` named, the name
/// spelled by the field itself.
macro_rules! fields {
    ($out:ident, $body:ident: $($field:ident),+) => {
        $(
            $out.extend_from_slice(concat!(",\"", stringify!($field), "\":").as_bytes());
            value($out, &$body.$field);
        )+
    };
}

/// One comment, fields in `CommentBody`'s order, skipped where its
/// `skip_serializing_if` skips them.
fn write_comment(c: &CommentBody, out: &mut Vec<u8>) {
    out.extend_from_slice(br#"{"id":"#);
    value(out, &c.id);
    fields!(out, c: product_id, author, language, rating, title, body, created_at, status);
    if c.held_by.is_some() {
        fields!(out, c: held_by);
    }
    fields!(out, c: reply, verified_purchase, helpful_votes, unhelpful_votes);
    if c.source.is_some() {
        fields!(out, c: source);
    }
    if !c.image_urls.is_empty() {
        fields!(out, c: image_urls);
    }
    fields!(out, c: incentivized, attributes, media);
    out.push(b'}');
}

/// One value as serde writes it.
fn value(out: &mut Vec<u8>, value: &impl Serialize) {
    // These values (strings, numbers, booleans, and structs, lists and maps
    // of them with string keys) always serialise, and writing into memory
    // cannot fail.
    let _ = sonic_rs::to_writer(&mut *out, value);
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;
    use crate::api::{PhotoBody, PlanBody, PlannedQueryBody, ReplyBody, SkippedBody};
    use crate::attributes::AttributeAnswerBody;

    /// Text that needs every kind of escape, and text that needs none.
    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z0-9 ]{0,12}",
            "[\u{0}-\u{1f}\"\\\\/<>&\u{7f}\u{2028}é😀a-z]{0,24}",
        ]
    }

    fn photo() -> impl Strategy<Value = PhotoBody> {
        (text(), 1u32..5000, 1u32..5000, text()).prop_map(|(id, width, height, status)| PhotoBody {
            url: format!("/media/{id}/display.webp"),
            thumbnail_url: format!("/media/{id}/thumb.webp"),
            fallback_url: format!("/media/{id}/display.jpg"),
            thumbnail_fallback_url: format!("/media/{id}/thumb.jpg"),
            id,
            width,
            height,
            status,
        })
    }

    fn comment() -> impl Strategy<Value = CommentBody> {
        let strings = proptest::collection::vec(text(), 9);
        let optional = (
            proptest::option::of(text()),
            proptest::option::of((text(), text(), text())),
            proptest::option::of(text()),
            proptest::collection::vec(text(), 0..3),
        );
        let answers = proptest::collection::btree_map(
            text(),
            prop_oneof![
                (1i64..=5).prop_map(AttributeAnswerBody::Rating),
                text().prop_map(AttributeAnswerBody::Choice),
            ],
            0..3,
        );
        let numbers = (
            1u8..=5,
            any::<bool>(),
            any::<u64>(),
            any::<u64>(),
            any::<bool>(),
        );
        let media = proptest::collection::vec(photo(), 0..3);
        (strings, optional, answers, numbers, media).prop_map(
            |(s, (held_by, reply, source, image_urls), attributes, numbers, media)| {
                let (rating, verified_purchase, helpful_votes, unhelpful_votes, incentivized) =
                    numbers;
                CommentBody {
                    id: s[0].clone(),
                    product_id: s[1].clone(),
                    author: s[2].clone(),
                    language: s[3].clone(),
                    rating,
                    title: s[4].clone(),
                    body: s[5].clone(),
                    created_at: s[6].clone(),
                    status: s[7].clone(),
                    held_by,
                    reply: reply.map(|(body, created_at, updated_at)| ReplyBody {
                        body,
                        created_at,
                        updated_at,
                    }),
                    verified_purchase,
                    helpful_votes,
                    unhelpful_votes,
                    source,
                    image_urls,
                    incentivized,
                    attributes: attributes.into_iter().collect::<BTreeMap<_, _>>(),
                    media,
                }
            },
        )
    }

    /// A plan with a sub-query and a skipped one.
    fn plan() -> PlanBody {
        PlanBody {
            strategy: "ratings_fan_out".into(),
            sort: "newest".into(),
            queries: vec![PlannedQueryBody {
                index: "byRating".into(),
                partition_key: "PRODUCT#p1/5".into(),
                limit: 14,
            }],
            skipped: vec![SkippedBody {
                partition_key: "PRODUCT#p1/2".into(),
                reason: "count is 0".into(),
            }],
            sized_by: "comments".into(),
            read_units: 2.5,
            items_read: 21,
        }
    }

    fn written(page: &CommentPageBody) -> String {
        let mut out = Vec::new();
        page.write_json(&mut out);
        String::from_utf8(out).expect("UTF-8")
    }

    proptest! {
        #[test]
        fn a_page_is_written_as_its_derived_serialize_writes_it(
            items in proptest::collection::vec(comment(), 0..4),
            next_cursor in proptest::option::of(text()),
            explained in any::<bool>(),
        ) {
            let page = CommentPageBody {
                items,
                next_cursor,
                plan: explained.then(plan),
            };
            prop_assert_eq!(written(&page), serde_json::to_string(&page).expect("JSON"));
        }
    }
}
