//! Executes a plan: runs the sub-queries concurrently, merges them in sort
//! order (newest first for listings, oldest first for the moderation queue
//! and `sort=oldest`) and works out where each sub-query resumes.
//! Sub-queries of a later phase are read only once every earlier phase has
//! run out (highest and lowest first: one rating partition after another).
//!
//! After the page, the executor makes sure something follows before it
//! hands out a cursor, so the last page never points at an empty one:
//! usually a sub-query has read items it did not use, otherwise it asks for
//! one more. Every sub-query is read in chunks; one whose buffer runs dry
//! while it still has items is refilled by its share of what the page
//! still needs.
//!
//! Each sub-query is read with `TableAccess::query_reading`, which turns
//! every entry into a `table::comment::Listed` (its sort key, its key's id
//! and the comment) decoded straight from the store's view of the entry,
//! so a page builds no attribute map; a malformed entry is an error only
//! if the page shows it.
//!
//! **Filters.** A source may carry a FilterExpression (`incentivized=`
//! on a listing, `reason=` on the moderation queue): no index keys either,
//! since the table already has 16 of DynamoDB's 20 global secondary indexes
//! and a copy of every listing index per filter value would need 8 more.
//! The executor keeps reading until the page is full, as it does
//! unfiltered; what a filtered page costs is what it reads, matching or
//! not: `limit / share` entries for a filter that keeps a `share` of them
//! (in read units, DynamoDB charges the entries read before the filter).
//! A filtered source reads its whole first read each time (a small refill
//! would likely come back empty), so a page of a selective filter takes
//! about `1 / share` round trips per sub-query. Measured on the engine
//! (`tests/reports.rs`, 200 comments over five ratings, pages of 10): a
//! whole walk reads every entry about once, whatever the share, plus what
//! each page reads past its end and the next reads again — newest first,
//! 218 entries read for 100 returned (one in two matching) and 210 for 20
//! (one in ten); highest first (one partition per rating), 256 and 202.
//!
//! In a merge by helpfulness, a sub-query whose next comment's helpfulness
//! rank the cursor knows is not read until the merge comes down to that
//! rank: when scores follow the rating (the most helpful comments all
//! 5-star ones, say), the partitions ranked far below the page cost nothing.

use std::collections::VecDeque;

use futures::future::try_join_all;
use rave_store::{AttributeValue, Condition, Item, KeyCondition, QueryInput, SortOp, Store};

use super::cursor::Position;
use crate::access::TableAccess;
use crate::error::Result;
use crate::table::Index;
use crate::table::comment::{self, Listed};

/// One sub-query being read.
pub(crate) struct Source {
    pub(crate) tag: u8,
    pub(crate) index: Index,
    pub(crate) partition: String,
    /// `begins_with` on the sort key (the moderation queue's time prefix).
    pub(crate) sort_prefix: Option<String>,
    /// A FilterExpression on the entries (incentivized or not, a report
    /// reason): entries it drops are read, and paid for, but not returned.
    pub(crate) filter: Option<Condition>,
    /// Items the first read asks for.
    pub(crate) first_limit: usize,
    /// The fraction of the page this source is expected to supply; refills
    /// ask for this share of what the page still needs.
    pub(crate) share: f64,
    /// Where this page starts reading (`Start` or `After`; never `Exhausted`).
    pub(crate) start: Position,
    /// On a `helpful*` index, the helpfulness rank of the comment `After`
    /// names (the cursor's).
    pub(crate) helpfulness: Option<u32>,
    /// On a `helpful*` index, the rank of this sub-query's next comment
    /// after `start` when the previous page read it (the cursor's): nothing
    /// of it ranks higher, so it need not be read before the merge is down
    /// to that rank.
    pub(crate) next_at: Option<u32>,
    /// Sources of one phase are merged; a phase is read after the earlier ones.
    pub(crate) phase: u8,
}

struct Reader {
    source: Source,
    next_start: Option<Item>,
    done: bool,
    buffer: VecDeque<Listed>,
    reads: usize,
}

/// Reads the next chunk of each `(reader, limit)` concurrently; returns the
/// items read and the read units consumed.
async fn fill<S: Store>(
    access: &TableAccess<S>,
    readers: &mut [Reader],
    chunks: &[(usize, usize)],
    forward: bool,
) -> Result<(usize, f64)> {
    let queries = chunks.iter().map(|&(i, limit)| {
        let index = readers[i].source.index;
        access.query_reading(readers[i].query(limit, forward, access), move |entry| {
            Listed::read(entry, index)
        })
    });
    let pages = try_join_all(queries).await?;
    let (mut items_read, mut read_units) = (0, 0.0);
    for (&(i, _), (page, entries)) in chunks.iter().zip(pages) {
        let reader = &mut readers[i];
        reader.reads += 1;
        items_read += page.scanned_count;
        read_units += page.consumed.read_units;
        if reader.buffer.is_empty() {
            // Takes the vector's buffer as it is instead of copying each
            // entry over.
            reader.buffer = entries.into();
        } else {
            reader.buffer.extend(entries);
        }
        reader.next_start = page.last_evaluated_key;
        reader.done = reader.next_start.is_none();
    }
    Ok((items_read, read_units))
}

/// What a page read produced.
pub(crate) struct Merged {
    pub(crate) items: Vec<Listed>,
    /// Per source tag, where the next page resumes; `None` on the last page.
    pub(crate) next: Option<Vec<(u8, Position)>>,
    /// The helpfulness rank of the page's last item, when `next` resumes
    /// `helpful*` indexes after it.
    pub(crate) next_helpfulness: Option<u32>,
    /// Per source tag of a helpfulness merge, the rank of its next comment.
    pub(crate) next_ranks: Vec<(u8, u32)>,
    pub(crate) items_read: usize,
    pub(crate) read_units: f64,
}

impl Reader {
    /// Has nothing left to give: read to its end, and its buffer taken.
    fn finished(&self) -> bool {
        self.done && self.buffer.is_empty()
    }

    /// Not read yet on this page, and known to rank nothing above this.
    fn waiting_at(&self) -> Option<u32> {
        (self.reads == 0 && !self.done)
            .then_some(self.source.next_at)
            .flatten()
    }

    fn new(source: Source) -> Result<Reader> {
        let next_start = match source.start {
            Position::After(id) => Some(comment::start_key(
                source.index,
                &source.partition,
                id,
                source.helpfulness,
            )?),
            Position::Start | Position::Exhausted => None,
        };
        Ok(Reader {
            source,
            next_start,
            done: false,
            buffer: VecDeque::new(),
            reads: 0,
        })
    }

    fn query<S: Store>(&self, limit: usize, forward: bool, access: &TableAccess<S>) -> QueryInput {
        let mut condition = KeyCondition::partition(
            self.source.index.partition_attribute(),
            self.source.partition.as_str(),
        );
        if let Some(prefix) = &self.source.sort_prefix {
            condition = condition.with_sort(
                self.source.index.sort_attribute(),
                SortOp::BeginsWith(AttributeValue::s(prefix)),
            );
        }
        let mut input = access.query_input(Some(self.source.index.name()), condition);
        input.scan_index_forward = forward;
        input.limit = Some(limit.max(1));
        input.exclusive_start_key = self.next_start.clone();
        input.filter = self.source.filter.clone();
        input
    }

    /// How many entries a read asks for when `wanted` would do unfiltered:
    /// a filtered source asks for its whole first read every time, since
    /// `Limit` counts entries before the filter and a small read would
    /// likely return nothing and cost a round trip anyway.
    fn read_size(&self, wanted: usize) -> usize {
        match self.source.filter {
            Some(_) => wanted.max(self.source.first_limit),
            None => wanted,
        }
    }
}

/// The earliest phase among readers that still have something to give:
/// the phase the page is reading now.
fn current_phase(readers: &[Reader]) -> Option<u8> {
    readers
        .iter()
        .filter(|r| !r.finished())
        .map(|r| r.source.phase)
        .min()
}

/// The helpfulness rank an entry of a `helpful*` index was listed with.
fn rank_of(entry: &Listed) -> Result<Option<u32>> {
    Ok(entry.helpfulness.clone().transpose()?)
}

/// The waiting readers of `phase` the merge has come down to: those whose
/// next helpfulness rank is at or above the best head read so far (or,
/// with no head, the highest waiting ones).
fn woken(readers: &[Reader], phase: u8) -> Result<Vec<usize>> {
    let mut best: Option<u32> = None;
    for reader in readers.iter().filter(|r| r.source.phase == phase) {
        if let Some(head) = reader.buffer.front().map(rank_of).transpose()?.flatten() {
            best = Some(best.map_or(head, |b| b.max(head)));
        }
    }
    let waiting = || {
        readers
            .iter()
            .enumerate()
            .filter(|(_, r)| r.source.phase == phase)
            .filter_map(|(i, r)| r.waiting_at().map(|at| (i, at)))
    };
    let Some(frontier) = best.or_else(|| waiting().map(|(_, at)| at).max()) else {
        return Ok(Vec::new());
    };
    Ok(waiting()
        .filter(|(_, at)| *at >= frontier)
        .map(|(i, _)| i)
        .collect())
}

/// Reads one page of `page_size` items merged across `sources`, and finds
/// out whether anything follows it.
pub(crate) async fn read_page<S: Store>(
    access: &TableAccess<S>,
    sources: Vec<Source>,
    page_size: usize,
    forward: bool,
) -> Result<Merged> {
    let mut readers = sources
        .into_iter()
        .map(Reader::new)
        .collect::<Result<Vec<_>>>()?;
    let mut items_read = 0;
    let mut read_units = 0.0;
    let mut taken: Vec<(usize, Listed)> = Vec::with_capacity(page_size);
    let merging_helpfulness = readers.iter().all(|r| r.source.index.is_helpful());
    while taken.len() < page_size {
        let Some(phase) = current_phase(&readers) else {
            break;
        };
        // Fill every reader of the current phase that is dry but not done,
        // all at once.
        let still_needed = page_size - taken.len();
        let mut dry: Vec<usize> = (0..readers.len())
            .filter(|&i| {
                let reader = &readers[i];
                reader.source.phase == phase
                    && reader.buffer.is_empty()
                    && !reader.done
                    && reader.waiting_at().is_none()
            })
            .collect();
        if dry.is_empty() && merging_helpfulness {
            dry = woken(&readers, phase)?;
        }
        if !dry.is_empty() {
            let limits = dry.iter().map(|&i| {
                let reader = &readers[i];
                if reader.reads == 0 {
                    // A phase started mid-page needs only the rest of it
                    // (and one more, to know what follows).
                    reader.source.first_limit.min(still_needed + 1)
                } else {
                    // Small refills keep what is read but not used (and so
                    // read again on the next page) small.
                    reader.read_size(
                        ((still_needed as f64 * reader.source.share).ceil() as usize)
                            .clamp(1, still_needed),
                    )
                }
            });
            let dry_limits: Vec<(usize, usize)> = dry.iter().copied().zip(limits).collect();
            let (read, units) = fill(access, &mut readers, &dry_limits, forward).await?;
            items_read += read;
            read_units += units;
            continue;
        }
        // Every reader of the phase now has a head or is finished: take
        // the best head.
        let best = (0..readers.len())
            .filter(|&i| readers[i].source.phase == phase)
            .filter_map(|i| {
                readers[i]
                    .buffer
                    .front()
                    .map(|entry| (i, entry.sort.as_str()))
            })
            .reduce(|a, b| {
                let b_first = if forward { b.1 < a.1 } else { b.1 > a.1 };
                if b_first { b } else { a }
            })
            .map(|(i, _)| i);
        let Some(i) = best else {
            break;
        };
        if let Some(item) = readers[i].buffer.pop_front() {
            taken.push((i, item));
        }
    }
    // Is there a next page? Usually some reader has items left over; only
    // when none has, ask the unfinished ones of the earliest phase for a
    // single item, then those of the next phase if they had none, and so on.
    while taken.len() == page_size && readers.iter().all(|r| r.buffer.is_empty()) {
        let Some(phase) = current_phase(&readers) else {
            break;
        };
        // Readers waiting at a lower helpfulness rank are asked only when no other has
        // anything: they probably have, but it may have been deleted.
        let unfinished = |waiting: bool| -> Vec<(usize, usize)> {
            (0..readers.len())
                .filter(|&i| readers[i].source.phase == phase && !readers[i].done)
                .filter(|&i| readers[i].waiting_at().is_some() == waiting)
                .map(|i| (i, readers[i].read_size(1)))
                .collect()
        };
        let mut probes = unfinished(false);
        if probes.is_empty() {
            probes = unfinished(true);
        }
        let (read, units) = fill(access, &mut readers, &probes, forward).await?;
        items_read += read;
        read_units += units;
    }
    let has_more = taken.len() == page_size && readers.iter().any(|r| !r.buffer.is_empty());
    // Every sub-query still running resumes right after the page's last
    // item, not after the last item it supplied itself: everything that
    // sorted before that item has been taken from every sub-query, and a
    // comment written since with an older time (an import) must not
    // surface behind comments already shown. A reader of a later phase has
    // given nothing yet and starts from its beginning.
    let next_helpfulness = match taken.last() {
        Some((from, last)) if has_more && readers[*from].source.index.is_helpful() => {
            last.helpfulness.clone().transpose()?
        }
        _ => None,
    };
    // Where each sub-query of a helpfulness merge has its next comment: the
    // head of what it read and the page did not take, or, unread, what the
    // cursor said.
    let mut next_ranks = Vec::new();
    if has_more && merging_helpfulness {
        for reader in &readers {
            let next = match reader.buffer.front() {
                Some(entry) => rank_of(entry)?,
                None => reader.waiting_at(),
            };
            if let Some(next) = next {
                next_ranks.push((reader.source.tag, next));
            }
        }
    }
    let next = match taken.last() {
        Some((from, last)) if has_more => {
            let last_phase = readers[*from].source.phase;
            let last = last.id.clone()?;
            Some(
                readers
                    .iter()
                    .map(|r| {
                        let position = if r.finished() {
                            Position::Exhausted
                        } else if r.source.phase > last_phase {
                            Position::Start
                        } else {
                            Position::After(last)
                        };
                        (r.source.tag, position)
                    })
                    .collect(),
            )
        }
        _ => None,
    };
    Ok(Merged {
        items: taken.into_iter().map(|(_, item)| item).collect(),
        next,
        next_helpfulness,
        next_ranks,
        items_read,
        read_units,
    })
}
