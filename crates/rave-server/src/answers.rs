//! A product's JSON answers (its listings, statistics and record) kept by
//! their entity tag, so an answer nothing has changed since it was last
//! given costs what its 304 costs.
//!
//! Such an answer's `ETag` names the product's revision with the request
//! (`caching`), and a client holding that tag is already told by a 304
//! that its copy is current. An answer kept under the same tag is that
//! copy, so serving it says nothing a 304 would not. Two more rules keep
//! it from ever being older than that:
//!
//! - Every write through this server (any request that is not GET, HEAD or
//!   OPTIONS) starts a new *generation* once it has answered, and an
//!   answer is served only in the generation it was read in. A reader of
//!   its own write therefore never gets an answer read before the write,
//!   even before the aggregator raises the revision.
//! - Writes that do not come through this server (another process on a
//!   DynamoDB table, the DynamoDB-compatible endpoint) are seen when the
//!   aggregator raises the product's revision, as 304s see them.
//!
//! The memory is bounded by entries and bytes (4,096 answers, 32 MB); when
//! a new answer does not fit, arbitrary older ones make room.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue};

/// Most answers kept.
const MAX_ANSWERS: usize = 4_096;
/// Most bytes of bodies kept.
const MAX_BYTES: usize = 32 << 20;

/// A kept answer: the handler's headers and body.
#[derive(Debug, Clone)]
pub(crate) struct Answer {
    pub headers: HeaderMap,
    pub body: Bytes,
}

#[derive(Debug, Default)]
struct Kept {
    /// The generation every kept answer was read in.
    generation: u64,
    answers: HashMap<HeaderValue, Answer>,
    bytes: usize,
}

/// The answers of the current generation, by entity tag.
#[derive(Debug, Default)]
pub(crate) struct Answers {
    generation: AtomicU64,
    kept: Mutex<Kept>,
}

impl Answers {
    /// The generation a read starting now belongs to: take it before
    /// reading anything the answer shows.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The answer kept under `tag`, if it was read in `generation`.
    pub(crate) fn get(&self, tag: &HeaderValue, generation: u64) -> Option<Answer> {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.generation != generation {
            return None;
        }
        kept.answers.get(tag).cloned()
    }

    /// Keeps `answer` under `tag` if `generation` is still the current one.
    pub(crate) fn keep(&self, tag: HeaderValue, generation: u64, answer: Answer) {
        if answer.body.len() > MAX_BYTES / 16 || generation != self.generation() {
            return;
        }
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.generation != generation {
            if kept.generation > generation {
                return;
            }
            // Everything kept was read before a write: none of it is served again.
            *kept = Kept {
                generation,
                ..Kept::default()
            };
        }
        while kept.answers.len() >= MAX_ANSWERS || kept.bytes + answer.body.len() > MAX_BYTES {
            let Some(evicted) = kept.answers.keys().next().cloned() else {
                break;
            };
            if let Some(gone) = kept.answers.remove(&evicted) {
                kept.bytes -= gone.body.len();
            }
        }
        kept.bytes += answer.body.len();
        if let Some(replaced) = kept.answers.insert(tag, answer) {
            kept.bytes -= replaced.body.len();
        }
    }

    /// Starts a new generation: nothing kept so far is served again.
    pub(crate) fn written(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(body: &'static str) -> Answer {
        Answer {
            headers: HeaderMap::new(),
            body: Bytes::from_static(body.as_bytes()),
        }
    }

    fn tag(n: usize) -> HeaderValue {
        HeaderValue::from_str(&format!("\"{n}\"")).unwrap()
    }

    #[test]
    fn an_answer_is_served_only_in_the_generation_it_was_read_in() {
        let answers = Answers::default();
        let read_in = answers.generation();
        answers.keep(tag(1), read_in, answer("one"));
        assert_eq!(answers.get(&tag(1), read_in).unwrap().body, "one");
        assert!(answers.get(&tag(2), read_in).is_none());
        answers.written();
        let now = answers.generation();
        assert!(answers.get(&tag(1), now).is_none());
        // The first answer of the new generation drops the old ones.
        answers.keep(tag(2), now, answer("two"));
        assert!(answers.get(&tag(1), read_in).is_none());
        assert_eq!(answers.get(&tag(2), now).unwrap().body, "two");
    }

    #[test]
    fn an_answer_read_before_a_write_is_not_kept_after_it() {
        let answers = Answers::default();
        let read_in = answers.generation();
        answers.written();
        answers.keep(tag(1), read_in, answer("stale"));
        assert!(answers.get(&tag(1), read_in).is_none());
        assert!(answers.get(&tag(1), answers.generation()).is_none());
    }

    #[test]
    fn memory_stays_bounded_by_entries_and_bytes() {
        let answers = Answers::default();
        let now = answers.generation();
        for n in 0..MAX_ANSWERS + 10 {
            answers.keep(tag(n), now, answer("x"));
        }
        let kept = answers.kept.lock().unwrap();
        assert_eq!(kept.answers.len(), MAX_ANSWERS);
        assert_eq!(kept.bytes, MAX_ANSWERS);
        drop(kept);
        let big = Bytes::from(vec![b'y'; MAX_BYTES / 16]);
        for n in 0..40 {
            answers.keep(
                tag(n),
                now,
                Answer {
                    headers: HeaderMap::new(),
                    body: big.clone(),
                },
            );
        }
        let kept = answers.kept.lock().unwrap();
        assert!(kept.bytes <= MAX_BYTES, "{}", kept.bytes);
        assert_eq!(
            kept.bytes,
            kept.answers.values().map(|a| a.body.len()).sum::<usize>()
        );
    }
}
