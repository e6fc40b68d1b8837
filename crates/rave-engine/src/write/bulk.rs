//! Index builds for bulk loads (`rave load`): the
//! load's writes store items with their stream records, collection sizes
//! and TTL queue entries, and leave the table's indexes alone ([`defer`]);
//! when the load ends, every index is built from the items in one pass
//! ([`build`], then [`finish`] makes them ACTIVE): each item's entries are
//! collected per index (two threads, each reading half of the items' hash
//! space), sorted in runs of at most 256 MB in all ([`BuildSizes`]) (spilled to files
//! beside the database when the entries outgrow one run, each index's
//! removed once it is merged: at most about the indexes' own size of disk
//! more), merged on one thread, and appended by another to the emptied
//! index in key order, so every leaf is written once, packed. The appends
//! commit without a sync: [`finish`]'s commit is durable, and until it the
//! indexes are CREATING, so a crash before it only redoes the build.
//!
//! Why: maintained item by item, a comment's entries land in partitions
//! that each receive one or two entries a commit, and redb rewrites a
//! whole leaf for each (BENCHMARKS.md, "B5: what a bulk load writes"). A
//! load of 200,000 comments took 24 s with its index entries and 5 s
//! without them.
//!
//! Deferring empties the indexes and marks them CREATING in the file, each
//! with a backfill record, in one commit: an engine stopped before the
//! build ends backfills them chunk by chunk when it opens again
//! (`backfill`), as it would an index UpdateTable added. Meanwhile a
//! deferred index is unreadable (CREATING) and nothing backfills it. The
//! build holds the writer: it is for a load that has the store to itself.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use rave_store::{Result, StoreError};
use redb::{Durability, WriteTransaction};

use super::backfill::backfilled_entry;
use super::packed::insert_runs;
use super::tables::CatalogUpdate;
use crate::catalog::{Catalog, IndexState, IndexStatus, TableState};
use crate::codec::decode_item;
use crate::database::{SharedDatabase, storage};
use crate::keys::segment_range;
use crate::layout::{INDEX_BUILDS, build_key, bytes_table};

/// How much a build holds in memory and writes at once.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BuildSizes {
    /// Entries (keys, values and their bookkeeping) held in memory, by all
    /// the collecting threads together, before they are sorted and spilled
    /// as runs.
    pub(crate) run_bytes: usize,
    /// Entries one commit of a build appends to an index.
    pub(crate) commit_bytes: usize,
}

impl Default for BuildSizes {
    fn default() -> BuildSizes {
        BuildSizes {
            run_bytes: 256 << 20,
            commit_bytes: 64 << 20,
        }
    }
}

/// An index entry: its key's bytes and its value's.
type Entry = (Vec<u8>, Vec<u8>);
/// What a buffered entry costs beside its bytes: two vectors.
const ENTRY_OVERHEAD: usize = 2 * std::mem::size_of::<Vec<u8>>();

/// Empties `table`'s indexes and defers them until [`build`], inside `txn`.
pub(crate) fn defer(
    txn: &WriteTransaction,
    catalog: &Catalog,
    table: &str,
) -> Result<CatalogUpdate> {
    let state = catalog.get(table)?;
    if state
        .indexes
        .iter()
        .any(|index| index.status == IndexStatus::Creating)
    {
        return Err(StoreError::ResourceInUse(format!(
            "Attempt to change a resource which is still in use: Table is being updated: {table}"
        )));
    }
    let mut builds = txn.open_table(INDEX_BUILDS).map_err(storage)?;
    for index in &state.indexes {
        txn.delete_table(bytes_table(&index.redb_table))
            .map_err(storage)?;
        txn.open_table(bytes_table(&index.redb_table))
            .map_err(storage)?;
        builds
            .insert(build_key(table, &index.index.name).as_str(), [].as_slice())
            .map_err(storage)?;
    }
    Ok(CatalogUpdate::Set(Box::new(state.with_indexes_deferred())))
}

/// Ends a [`build`], inside `txn`: the deferred indexes lose their
/// backfill records and become ACTIVE.
pub(crate) fn finish(
    txn: &WriteTransaction,
    catalog: &Catalog,
    table: &str,
) -> Result<CatalogUpdate> {
    let state = catalog.get(table)?;
    let mut builds = txn.open_table(INDEX_BUILDS).map_err(storage)?;
    for index in state.indexes.iter().filter(|index| index.deferred) {
        builds
            .remove(build_key(table, &index.index.name).as_str())
            .map_err(storage)?;
    }
    Ok(CatalogUpdate::Set(Box::new(
        state.with_deferred_indexes_built(),
    )))
}

/// Writes the entries of `table`'s deferred indexes from its items,
/// appending each index in commits of its own; [`finish`] then makes them
/// ACTIVE.
///
/// Both cores work: [`COLLECTORS`] threads each read a segment of the
/// items' hash space and sort its entries into runs of their own, then one
/// thread merges each index's runs while this one appends what it merged.
pub(crate) fn build(
    db: &SharedDatabase,
    catalog: &Catalog,
    table: &str,
    sizes: BuildSizes,
) -> Result<()> {
    let started = std::time::Instant::now();
    let state = catalog.get(table)?;
    let deferred: Vec<&IndexState> = state.indexes.iter().filter(|i| i.deferred).collect();
    if deferred.is_empty() {
        return Ok(());
    }
    let beside = db.path().parent().unwrap_or(Path::new("."));
    let spill = tempfile::Builder::new()
        .prefix("index-runs")
        .tempdir_in(beside)
        .map_err(build_failed)?;
    let collect = Collect {
        db,
        state: &state,
        deferred: &deferred,
        spill: spill.path(),
        run_bytes: sizes.run_bytes / COLLECTORS as usize,
    };
    let collected = std::thread::scope(|scope| {
        let collectors: Vec<_> = (0..COLLECTORS)
            .map(|segment| scope.spawn(move || collect.segment(segment)))
            .collect();
        collectors
            .into_iter()
            .map(|collector| collector.join().map_err(|_| thread_panicked())?)
            .collect::<Result<Vec<_>>>()
    })?;
    let collected_in = started.elapsed();
    let entries: u64 = collected.iter().map(|(entries, _)| entries).sum();
    // Per index, the runs every collector sorted.
    let mut runs: Vec<Vec<SortedRuns>> = deferred.iter().map(|_| Vec::new()).collect();
    for (_, runs_by_index) in collected {
        for (index_runs, sorted) in runs.iter_mut().zip(runs_by_index) {
            index_runs.push(sorted);
        }
    }
    let spilled: usize = runs.iter().flatten().map(|runs| runs.spilled.len()).sum();
    std::thread::scope(|scope| {
        // One merged chunk waits while the one before it is appended.
        let (chunks, merged) = std::sync::mpsc::sync_channel(1);
        let merger = scope.spawn(move || merge_in_chunks(runs, sizes.commit_bytes, chunks));
        let appended = merged
            .into_iter()
            .try_for_each(|(index, chunk)| append(db, deferred[index], &chunk));
        // An append that failed dropped the receiver: the merger stops at
        // its next chunk.
        let merged = merger.join().map_err(|_| thread_panicked())?;
        appended.and(merged)
    })?;
    tracing::info!(
        table,
        indexes = deferred.len(),
        entries,
        spilled_runs = spilled,
        collected_ms = collected_in.as_millis() as u64,
        total_ms = started.elapsed().as_millis() as u64,
        "built the deferred indexes"
    );
    Ok(())
}

/// How many threads read the items while a build collects entries: one per
/// core of the machines rave is measured on.
const COLLECTORS: u32 = 2;

/// What every collecting thread of a build shares.
#[derive(Clone, Copy)]
struct Collect<'a> {
    db: &'a SharedDatabase,
    state: &'a TableState,
    deferred: &'a [&'a IndexState],
    spill: &'a Path,
    /// Entries one thread holds in memory before it spills them.
    run_bytes: usize,
}

impl Collect<'_> {
    /// The entries of the items in `segment` of [`COLLECTORS`], per deferred
    /// index, sorted in runs; and how many there are.
    fn segment(self, segment: u32) -> Result<(u64, Vec<SortedRuns>)> {
        let mut runs: Vec<SortedRuns> = (0..self.deferred.len())
            .map(|n| SortedRuns::new(format!("index{n}-segment{segment}")))
            .collect();
        let (lower, upper) = segment_range(segment, COLLECTORS);
        let bounds = (
            lower.as_ref().map(Vec::as_slice),
            upper.as_ref().map(Vec::as_slice),
        );
        let txn = self.db.begin_read().map_err(storage)?;
        let items = txn
            .open_table(bytes_table(&self.state.items_table))
            .map_err(storage)?;
        let mut buffered = 0;
        let mut entries = 0;
        for stored in items.range::<&[u8]>(bounds).map_err(storage)? {
            let (key, value) = stored.map_err(storage)?;
            let item =
                decode_item(value.value()).map_err(|e| self.state.corrupt_item(key.value(), e))?;
            for (index, runs) in self.deferred.iter().zip(&mut runs) {
                if let Some(entry) = backfilled_entry(self.state, index, &item) {
                    let value = entry.stored_value(index);
                    buffered += entry.key.len() + value.len() + ENTRY_OVERHEAD;
                    entries += 1;
                    runs.buffer.push((entry.key, value));
                }
            }
            if buffered >= self.run_bytes {
                for runs in &mut runs {
                    runs.spill(self.spill)?;
                }
                buffered = 0;
            }
        }
        Ok((entries, runs))
    }
}

/// Merges each index's runs (`runs[n]`: the sorted runs of deferred index
/// `n`, from every collector) and sends its entries in key order, in chunks
/// of about `commit_bytes`, each with its index's number. Each index's run
/// files go once it is merged: the runs of all the indexes together take
/// about what the indexes will.
fn merge_in_chunks(
    runs: Vec<Vec<SortedRuns>>,
    commit_bytes: usize,
    chunks: std::sync::mpsc::SyncSender<(usize, Chunk)>,
) -> Result<()> {
    for (index, runs) in runs.into_iter().enumerate() {
        let files: Vec<PathBuf> = runs.iter().flat_map(|r| r.spilled.clone()).collect();
        let mut merged = SortedRuns::merge(runs)?;
        let mut chunk = Chunk::with_capacity(commit_bytes);
        while merged.next_into(&mut chunk)? {
            if chunk.bytes.len() >= commit_bytes {
                let full = std::mem::replace(&mut chunk, Chunk::with_capacity(commit_bytes));
                if chunks.send((index, full)).is_err() {
                    return Ok(());
                }
            }
        }
        if !chunk.ends.is_empty() && chunks.send((index, chunk)).is_err() {
            return Ok(());
        }
        drop(merged);
        for file in files {
            std::fs::remove_file(file).map_err(build_failed)?;
        }
    }
    Ok(())
}

/// Merged entries of one index on their way to be appended: their keys'
/// and values' bytes one after another in one buffer, so that a chunk is
/// one allocation to make and to free, not two an entry.
struct Chunk {
    bytes: Vec<u8>,
    /// Where each entry's key ends and its value ends, in `bytes`.
    ends: Vec<(usize, usize)>,
}

impl Chunk {
    fn with_capacity(bytes: usize) -> Chunk {
        Chunk {
            bytes: Vec::with_capacity(bytes + bytes / 8),
            ends: Vec::new(),
        }
    }

    fn push(&mut self, key: &[u8], value: &[u8]) {
        self.bytes.extend_from_slice(key);
        let key_end = self.bytes.len();
        self.bytes.extend_from_slice(value);
        self.ends.push((key_end, self.bytes.len()));
    }

    fn entries(&self) -> Vec<(&[u8], &[u8])> {
        let mut start = 0;
        self.ends
            .iter()
            .map(|&(key_end, value_end)| {
                let entry = (&self.bytes[start..key_end], &self.bytes[key_end..value_end]);
                start = value_end;
                entry
            })
            .collect()
    }
}

fn thread_panicked() -> StoreError {
    StoreError::Internal("a thread building an index panicked".into())
}

/// Appends `chunk` (ascending, after every stored key) to `index` in a
/// commit of its own. It need not be durable: the index stays CREATING
/// until [`finish`] commits durably, and an engine that stops before then
/// builds it again from the items.
fn append(db: &SharedDatabase, index: &IndexState, chunk: &Chunk) -> Result<()> {
    db.commit_alone_with(Durability::None, |txn| {
        let mut table = txn
            .open_table(bytes_table(&index.redb_table))
            .map_err(storage)?;
        insert_runs(&mut table, &chunk.entries()).map_err(storage)
    })
}

fn build_failed(error: std::io::Error) -> StoreError {
    StoreError::Unavailable(format!("building an index: {error}"))
}

/// One index's entries: those still in memory, and the sorted runs spilled
/// to files.
struct SortedRuns {
    /// What its run files are called (`<name>-<n>`), apart from other
    /// indexes' in the same directory.
    name: String,
    buffer: Vec<Entry>,
    spilled: Vec<PathBuf>,
}

impl SortedRuns {
    fn new(name: String) -> SortedRuns {
        SortedRuns {
            name,
            buffer: Vec::new(),
            spilled: Vec::new(),
        }
    }

    /// Sorts the buffered entries and writes them to a new run file in
    /// `dir`: each entry as its key's and its value's lengths (u32, little
    /// endian) and bytes.
    fn spill(&mut self, dir: &Path) -> Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        self.buffer.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let path = dir.join(format!("{}-{}", self.name, self.spilled.len()));
        let mut out = BufWriter::with_capacity(1 << 20, File::create(&path).map_err(build_failed)?);
        for (key, value) in self.buffer.drain(..) {
            for bytes in [&key, &value] {
                let len = u32::try_from(bytes.len())
                    .map_err(|_| StoreError::Internal("an index entry over 4 GB".into()))?;
                out.write_all(&len.to_le_bytes()).map_err(build_failed)?;
                out.write_all(bytes).map_err(build_failed)?;
            }
        }
        out.flush().map_err(build_failed)?;
        self.spilled.push(path);
        Ok(())
    }

    /// The entries of all of `runs` (one index's, from every collector),
    /// in key order.
    fn merge(runs: Vec<SortedRuns>) -> Result<Merged> {
        let mut sources = Vec::new();
        for mut runs in runs {
            runs.buffer.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            sources.push(Source::Memory(runs.buffer.into_iter()));
            for path in &runs.spilled {
                let file = File::open(path).map_err(build_failed)?;
                sources.push(Source::File(BufReader::with_capacity(1 << 20, file)));
            }
        }
        let mut merged = Merged {
            sources,
            heads: BinaryHeap::new(),
        };
        for source in 0..merged.sources.len() {
            merged.refill(Head {
                key: Vec::new(),
                value: Vec::new(),
                source,
            })?;
        }
        Ok(merged)
    }
}

/// Where a merge takes entries from: the sorted buffer, or a run file.
enum Source {
    Memory(std::vec::IntoIter<Entry>),
    File(BufReader<File>),
}

impl Source {
    /// Reads the next entry into `key` and `value`, whose buffers a run
    /// file's entries reuse; false at the end.
    fn next_into(&mut self, key: &mut Vec<u8>, value: &mut Vec<u8>) -> Result<bool> {
        match self {
            Source::Memory(entries) => {
                Ok(entries.next().map(|entry| (*key, *value) = entry).is_some())
            }
            Source::File(file) => {
                if !read_bytes(file, key, true)? {
                    return Ok(false);
                }
                if !read_bytes(file, value, false)? {
                    return Err(StoreError::Internal("a truncated index run".into()));
                }
                Ok(true)
            }
        }
    }
}

/// Reads the next length-prefixed bytes of a run into `bytes`; false at
/// its end, where an entry may end (`at_entry`).
fn read_bytes(file: &mut BufReader<File>, bytes: &mut Vec<u8>, at_entry: bool) -> Result<bool> {
    let mut len = [0; 4];
    match file.read_exact(&mut len) {
        Ok(()) => {}
        Err(error) if at_entry && error.kind() == std::io::ErrorKind::UnexpectedEof => {
            return Ok(false);
        }
        Err(error) => return Err(build_failed(error)),
    }
    bytes.clear();
    bytes.resize(u32::from_le_bytes(len) as usize, 0);
    file.read_exact(bytes).map_err(build_failed)?;
    Ok(true)
}

/// The next entry of each source, the least on top.
struct Merged {
    sources: Vec<Source>,
    heads: BinaryHeap<Head>,
}

struct Head {
    key: Vec<u8>,
    value: Vec<u8>,
    source: usize,
}

impl Ord for Head {
    /// Reversed: `BinaryHeap` keeps the greatest on top.
    fn cmp(&self, other: &Head) -> Ordering {
        other
            .key
            .cmp(&self.key)
            .then(other.source.cmp(&self.source))
    }
}

impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Head) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Head {
    fn eq(&self, other: &Head) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Head {}

impl Merged {
    /// Puts `source`'s next entry among the heads, in `head`'s buffers.
    fn refill(&mut self, mut head: Head) -> Result<()> {
        if self.sources[head.source].next_into(&mut head.key, &mut head.value)? {
            self.heads.push(head);
        }
        Ok(())
    }

    /// Moves the least entry into `chunk`; false when every source is done.
    fn next_into(&mut self, chunk: &mut Chunk) -> Result<bool> {
        let Some(head) = self.heads.pop() else {
            return Ok(false);
        };
        chunk.push(&head.key, &head.value);
        self.refill(head)?;
        Ok(true)
    }
}
