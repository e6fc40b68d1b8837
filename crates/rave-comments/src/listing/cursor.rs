//! Opaque, signed pagination cursors (part 3 of the design, done right).
//!
//! A cursor holds, for each sub-query of a plan, where that sub-query
//! resumes: at its start, after a given comment (the last one the page
//! showed), or nowhere (exhausted). Nothing is re-read to be thrown away
//! and no exhausted sub-query is restarted.
//!
//! Binary layout, then base64url without padding:
//!
//! ```text
//! version (1) │ count n (1) │ n × [ tag (1) │ state (1) │ id (16, only when state = after) ] │ MAC (16)
//! ```
//!
//! A `helpful` cursor is version 2 and carries, right after the version
//! byte, the helpfulness rank (4, big-endian) the page's last comment was
//! listed with: the `helpful*` indexes sort by it before the time and id.
//! Its positions may also be in state *after, next at* (3): the id, then
//! the helpfulness rank (4) of the sub-query's next comment when the page
//! read it, so that the next page leaves the sub-query unread until the
//! merge comes down to that rank.
//!
//! `tag` names the sub-query (the rating, or 0 for a single query); a
//! position is a comment id (a ULID) because the id alone gives the sort key
//! `<created_at>#<id>`: the id's timestamp is the creation time. The MAC is
//! HMAC-SHA256, truncated to 128 bits, with the server's 32-byte secret,
//! over a binding of the query (product, language, rating set, `verified`,
//! `incentivized`, `has_media` and the order; or queue state and time prefix; or the author) followed
//! by the payload, so a cursor is refused if it is altered, truncated,
//! forged, or used for another query. The order is left out of the binding
//! for newest first, so cursors signed before there were other orders stay
//! valid.
//!
//! Every sub-query still running resumes right after the last comment the
//! page showed: everything before it was taken from every sub-query, and a
//! comment imported since with an older time cannot surface behind ones
//! already shown. A sub-query absent from the cursor (it had no comments
//! when the walk began) is treated as exhausted.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use ulid::Ulid;

use super::filter::Filter;
use super::sort::{Reading, Sort};
use crate::error::{CommentsError, Result};
use crate::model::{Language, ProductId, Status};
use crate::reports::ReportReason;

const VERSION: u8 = 1;
/// Version 2: a helpfulness rank follows the version byte.
const VERSION_RANKED: u8 = 2;
const MAC_LEN: usize = 16;
const START: u8 = 0;
const AFTER: u8 = 1;
const EXHAUSTED: u8 = 2;
/// After a comment, with the rank the next one had.
const AFTER_NEXT_AT: u8 = 3;

/// The server's secret for signing cursors (32 random bytes), kept as the
/// HMAC state it keys: keying hashes two blocks, as much as signing a
/// cursor does, so it is done once rather than for every page.
#[derive(Clone)]
pub struct CursorKey(Hmac<Sha256>);

impl CursorKey {
    pub fn new(bytes: [u8; 32]) -> CursorKey {
        // HMAC accepts keys of any length, so this cannot fail.
        CursorKey(
            <Hmac<Sha256> as KeyInit>::new_from_slice(&bytes).expect("HMAC takes any key length"),
        )
    }

    fn mac(&self, binding: &[u8], payload: &[u8]) -> Hmac<Sha256> {
        let mut mac = self.0.clone();
        mac.update(&(binding.len() as u64).to_be_bytes());
        mac.update(binding);
        mac.update(payload);
        mac
    }
}

impl std::fmt::Debug for CursorKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CursorKey(..)")
    }
}

/// What a listing cursor is bound to: the product, language, rating set,
/// whether only verified comments are listed and, when it is not newest
/// first (whose cursors predate sorts), the order.
pub(crate) fn listing_binding(product: &ProductId, filter: &Filter, sort: Sort) -> Vec<u8> {
    let mut binding = format!(
        "list\u{0}{product}\u{0}{}\u{0}{}{}",
        filter.language.as_ref().map_or("", Language::as_str),
        filter.ratings.mask(),
        if filter.verified { "\u{0}verified" } else { "" }
    );
    // Only a listing of comments with photos has this part, so the
    // cursors of the others stay what they were.
    if filter.has_media {
        binding.push_str("\u{0}has_media");
    }
    if let Some(incentivized) = filter.incentivized {
        binding.push_str(if incentivized {
            "\u{0}incentivized"
        } else {
            "\u{0}not incentivized"
        });
    }
    if sort != Sort::Newest {
        binding.push('\u{0}');
        binding.push_str(sort.as_str());
    }
    // Such a listing once merged rating partitions: a cursor of that merge
    // is refused rather than read as one of a single partition.
    if sort == Sort::Helpful && sort.reading(filter) == Reading::OnePartition {
        binding.push_str("\u{0}one partition");
    }
    binding.into_bytes()
}

/// What an author's listing cursor is bound to.
pub(crate) fn author_binding(author: &str) -> Vec<u8> {
    format!("author\u{0}{author}").into_bytes()
}

/// What a moderation queue cursor is bound to: the state, time prefix and
/// report reason.
pub(crate) fn queue_binding(
    state: Status,
    since: Option<&str>,
    reason: Option<ReportReason>,
) -> Vec<u8> {
    let mut binding = format!("queue\u{0}{}\u{0}{}", state.as_str(), since.unwrap_or(""));
    // Unfiltered cursors stay what they were.
    if let Some(reason) = reason {
        binding.push_str("\u{0}reason=");
        binding.push_str(reason.as_str());
    }
    binding.into_bytes()
}

/// Where one sub-query resumes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Position {
    Start,
    After(Ulid),
    Exhausted,
}

/// One position per sub-query, each named by a tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cursor {
    pub(crate) positions: Vec<(u8, Position)>,
    /// The helpfulness rank of the comment the `After` positions name
    /// (`helpful` listings only).
    pub(crate) rank: Option<u32>,
    /// Per tag, the helpfulness rank of that sub-query's next comment after
    /// its `After` position, as the page read it (`helpful` listings only):
    /// nothing of the sub-query ranks above it, save comments whose score
    /// has changed since.
    pub(crate) next_ranks: Vec<(u8, u32)>,
}

impl Cursor {
    pub(crate) fn position(&self, tag: u8) -> Option<Position> {
        self.positions
            .iter()
            .find(|(t, _)| *t == tag)
            .map(|(_, p)| *p)
    }

    pub(crate) fn next_rank(&self, tag: u8) -> Option<u32> {
        self.next_ranks
            .iter()
            .find(|(t, _)| *t == tag)
            .map(|(_, rank)| *rank)
    }

    pub(crate) fn encode(&self, key: &CursorKey, binding: &[u8]) -> String {
        let mut payload = Vec::with_capacity(6 + self.positions.len() * 22 + MAC_LEN);
        match self.rank {
            None => payload.push(VERSION),
            Some(rank) => {
                payload.push(VERSION_RANKED);
                payload.extend_from_slice(&rank.to_be_bytes());
            }
        }
        payload.push(self.positions.len() as u8);
        for (tag, position) in &self.positions {
            payload.push(*tag);
            match position {
                Position::Start => payload.push(START),
                Position::After(id) => match self.next_rank(*tag) {
                    None => {
                        payload.push(AFTER);
                        payload.extend_from_slice(&id.to_bytes());
                    }
                    Some(next) => {
                        payload.push(AFTER_NEXT_AT);
                        payload.extend_from_slice(&id.to_bytes());
                        payload.extend_from_slice(&next.to_be_bytes());
                    }
                },
                Position::Exhausted => payload.push(EXHAUSTED),
            }
        }
        let tag = key.mac(binding, &payload).finalize().into_bytes();
        payload.extend_from_slice(&tag[..MAC_LEN]);
        URL_SAFE_NO_PAD.encode(payload)
    }

    pub(crate) fn decode(text: &str, key: &CursorKey, binding: &[u8]) -> Result<Cursor> {
        let bad = CommentsError::BadCursor;
        if text.is_empty() || text.len() > 4096 {
            return Err(bad("the cursor is empty or too long"));
        }
        let bytes = URL_SAFE_NO_PAD
            .decode(text)
            .map_err(|_| bad("the cursor is not valid base64url"))?;
        if bytes.len() < 2 + MAC_LEN {
            return Err(bad("the cursor is truncated"));
        }
        let (payload, tag) = bytes.split_at(bytes.len() - MAC_LEN);
        key.mac(binding, payload)
            .verify_truncated_left(tag)
            .map_err(|_| bad("the cursor was altered or belongs to another query"))?;
        // Signed by us, but still parsed defensively.
        let (rank, payload) = match payload {
            [VERSION, rest @ ..] => (None, rest),
            [VERSION_RANKED, a, b, c, d, rest @ ..] => {
                (Some(u32::from_be_bytes([*a, *b, *c, *d])), rest)
            }
            [VERSION_RANKED, ..] => return Err(bad("the cursor is truncated")),
            _ => return Err(bad("the cursor has an unknown version")),
        };
        let [count, rest @ ..] = payload else {
            return Err(bad("the cursor is truncated"));
        };
        let count = usize::from(*count);
        let mut positions = Vec::with_capacity(count);
        let mut next_ranks = Vec::new();
        let mut rest = rest;
        for _ in 0..count {
            let [tag, state, tail @ ..] = rest else {
                return Err(bad("the cursor is truncated"));
            };
            let position = match *state {
                START => Position::Start,
                EXHAUSTED => Position::Exhausted,
                AFTER | AFTER_NEXT_AT => {
                    let id: [u8; 16] = tail
                        .get(..16)
                        .and_then(|s| s.try_into().ok())
                        .ok_or(bad("the cursor is truncated"))?;
                    rest = &tail[16..];
                    positions.push((*tag, Position::After(Ulid::from_bytes(id))));
                    if *state == AFTER_NEXT_AT {
                        let next: [u8; 4] = rest
                            .get(..4)
                            .and_then(|s| s.try_into().ok())
                            .ok_or(bad("the cursor is truncated"))?;
                        rest = &rest[4..];
                        next_ranks.push((*tag, u32::from_be_bytes(next)));
                    }
                    continue;
                }
                _ => return Err(bad("the cursor is malformed")),
            };
            rest = tail;
            positions.push((*tag, position));
        }
        if !rest.is_empty() {
            return Err(bad("the cursor is malformed"));
        }
        Ok(Cursor {
            positions,
            rank,
            next_ranks,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Cursor {
        Cursor {
            positions: vec![
                (1, Position::After(Ulid::from_parts(1_700_000_000_000, 42))),
                (3, Position::Exhausted),
                (5, Position::Start),
            ],
            rank: None,
            next_ranks: Vec::new(),
        }
    }

    #[test]
    fn round_trips() {
        let key = CursorKey::new([7; 32]);
        let text = sample().encode(&key, b"product 42");
        assert_eq!(
            Cursor::decode(&text, &key, b"product 42").unwrap(),
            sample()
        );
        assert!(text.len() < 80, "compact: {text}");
    }

    #[test]
    fn a_ranked_cursor_round_trips_and_refuses_tampering() {
        let key = CursorKey::new([7; 32]);
        let ranked = Cursor {
            rank: Some(722_459_831),
            next_ranks: vec![(1, 12_345)],
            ..sample()
        };
        let text = ranked.encode(&key, b"helpful");
        assert_eq!(Cursor::decode(&text, &key, b"helpful").unwrap(), ranked);
        let bytes = URL_SAFE_NO_PAD.decode(&text).unwrap();
        for i in 0..bytes.len() {
            let mut flipped = bytes.clone();
            flipped[i] ^= 0x01;
            let altered = URL_SAFE_NO_PAD.encode(&flipped);
            assert!(
                Cursor::decode(&altered, &key, b"helpful").is_err(),
                "byte {i}"
            );
        }
    }

    #[test]
    fn refuses_tampering_truncation_other_queries_and_other_keys() {
        let key = CursorKey::new([7; 32]);
        let text = sample().encode(&key, b"product 42");
        let bytes = URL_SAFE_NO_PAD.decode(&text).unwrap();
        for i in 0..bytes.len() {
            let mut flipped = bytes.clone();
            flipped[i] ^= 0x01;
            let altered = URL_SAFE_NO_PAD.encode(&flipped);
            assert!(
                Cursor::decode(&altered, &key, b"product 42").is_err(),
                "flipped byte {i}"
            );
        }
        for cut in 0..text.len() {
            assert!(
                Cursor::decode(&text[..cut], &key, b"product 42").is_err(),
                "cut at {cut}"
            );
        }
        assert!(Cursor::decode(&text, &key, b"product 43").is_err());
        assert!(Cursor::decode(&text, &CursorKey::new([8; 32]), b"product 42").is_err());
        assert!(Cursor::decode("not base64 !", &key, b"product 42").is_err());
    }

    #[test]
    fn a_cursor_is_bound_to_its_sort_and_newest_keeps_its_binding() {
        let product = ProductId::parse("42").unwrap();
        let filter = Filter::default();
        assert_eq!(
            listing_binding(&product, &filter, Sort::Newest),
            b"list\x0042\x00\x000".to_vec(),
            "cursors handed out before sorts existed stay valid"
        );
        let key = CursorKey::new([7; 32]);
        let text = sample().encode(&key, &listing_binding(&product, &filter, Sort::Highest));
        for other in [Sort::Newest, Sort::Oldest, Sort::Lowest, Sort::Helpful] {
            assert!(
                Cursor::decode(&text, &key, &listing_binding(&product, &filter, other)).is_err(),
                "{other:?}"
            );
        }
    }

    #[test]
    fn a_cursor_of_comments_with_photos_serves_no_other_listing() {
        let product = ProductId::parse("42").unwrap();
        let key = CursorKey::new([7; 32]);
        for sort in Sort::ALL {
            let with_media = Filter {
                has_media: true,
                ..Filter::default()
            };
            let text = sample().encode(&key, &listing_binding(&product, &with_media, sort));
            assert!(
                Cursor::decode(&text, &key, &listing_binding(&product, &with_media, sort)).is_ok()
            );
            let all = Filter::default();
            assert!(
                Cursor::decode(&text, &key, &listing_binding(&product, &all, sort)).is_err(),
                "{sort:?}"
            );
            let all_text = sample().encode(&key, &listing_binding(&product, &all, sort));
            assert!(
                Cursor::decode(
                    &all_text,
                    &key,
                    &listing_binding(&product, &with_media, sort)
                )
                .is_err(),
                "{sort:?}"
            );
        }
    }
}
