//! Reads: each runs on its own redb read transaction, a consistent snapshot
//! that never waits for the writer and that the writer never waits for. A
//! read issued after a write was acknowledged sees it, so every read here is
//! strongly consistent; reads asked for as eventually consistent are only
//! charged as such (half).
//!
//! Where a read runs depends on how much it may read (`Engine`'s `read`): a
//! read of at most 100 items runs inline on the async worker that asked,
//! since a page of 20 costs microseconds, less than a hop to another
//! thread; anything larger (export and reconcile pages, unbounded scans,
//! large batches) takes milliseconds and runs on tokio's blocking pool, so
//! it never holds up the other requests scheduled on that worker.
//!
//! GetItem, BatchGetItem (16 MB per response, the rest unprocessed), Query
//! and Scan, with their ExclusiveStartKey checks, Select and projections.
//! A Query's key condition is bound to the schema it reads
//! (`KeyCondition::bind`) and becomes one range of stored keys
//! (`keys::query_range`). `RangeRead` is the one range walk (limit, 1 MB,
//! LastEvaluatedKey, capacity) under both ways of reading a page: as items
//! (filters, projections, fetches through a local index) or, for
//! `query_visiting` of whole unfiltered items, shown in place through
//! `ItemIndex` with the same capacity and keys (the model test compares the
//! two on every query).
//!
//! A local secondary index fetches from the table what a read asks for and
//! the index does not project (ALL_ATTRIBUTES, a projection naming it), as
//! the developer guide says. A Query of any index refuses a filter on what
//! the index does not project ("Secondary index NAME does not project one or
//! more filter attributes"); a Scan of a local index reads such an attribute
//! from the table for the filter but returns what the index projects.
//!
//! `get_item_viewed` is GetItem's item shown in place through `ItemIndex`,
//! with the same capacity: the DynamoDB API writes a whole item's answer
//! from it (the model test compares it with GetItem on every key).
//!
//! `raw_partition` (`Engine::read_raw_partition`) reads a partition's
//! entries and decodes nothing: the floor the bench times a listing page
//! against.

use std::ops::{Bound, RangeBounds};

use rave_store::{
    AttributeValue, BatchGetItemInput, BatchGetItemOutput, BoundKeyCondition, Condition,
    ConsumedCapacity, GetItemInput, GetItemOutput, Item, ItemView, ItemVisitor, KeySchema,
    MAX_BATCH_GET_BYTES, MAX_BATCH_GET_KEYS, MAX_PAGE_BYTES, Page, Path, Projection, QueryInput,
    Result, ScanInput, Select, StoreError, TableKeys, item_size, project, read_units,
};

use crate::catalog::{IndexState, TableState};
use crate::codec::{Decoded, ItemIndex, KeyStrings, decode_item};
use crate::database::storage;
use crate::entry::{decode_entry, entry_keys};
use crate::keys::{query_range, segment_range};
use crate::layout::bytes_table;
use crate::snapshot::Snapshot;

pub(crate) fn get_item(
    snapshot: &Snapshot,
    table: &TableState,
    input: &GetItemInput,
) -> Result<GetItemOutput> {
    let (consumed, item) = read_stored(snapshot, table, input, |bytes| {
        let item = decode_item(bytes)?;
        Ok((item_size(&item), item))
    })?;
    Ok(GetItemOutput { item, consumed })
}

/// [`get_item`], its item shown to `view` in place: the same key checks,
/// the same capacity (a stored item's size is the size DynamoDB charges).
pub(crate) fn get_item_viewed<R>(
    snapshot: &Snapshot,
    table: &TableState,
    input: &GetItemInput,
    view: impl FnOnce(&dyn ItemView) -> R,
) -> Result<(ConsumedCapacity, Option<R>)> {
    read_stored(snapshot, table, input, |bytes| {
        ItemIndex::default().view(bytes, &[], |item| (item.size, view(item)))
    })
}

/// GetItem's lookup: the stored bytes of the item `input` names, if any,
/// go to `read`, which returns the item's size and what it made of them;
/// the read is charged for that size.
fn read_stored<R>(
    snapshot: &Snapshot,
    table: &TableState,
    input: &GetItemInput,
    read: impl FnOnce(&[u8]) -> Decoded<(usize, R)>,
) -> Result<(ConsumedCapacity, Option<R>)> {
    let key = table.key_bytes(&input.key)?;
    let items = snapshot
        .table(bytes_table(&table.items_table))
        .map_err(storage)?;
    let found = match items.get(key.as_slice()).map_err(storage)? {
        Some(bytes) => Some(read(bytes.value()).map_err(|e| table.corrupt_item(&key, e))?),
        None => None,
    };
    let mut consumed = ConsumedCapacity::new(table.name());
    consumed.read_units = read_units(
        found.as_ref().map_or(0, |(size, _)| *size),
        input.consistent_read,
    );
    Ok((consumed, found.map(|(_, made)| made)))
}

pub(crate) fn batch_get(
    snapshot: &Snapshot,
    tables: &[&TableState],
    input: &BatchGetItemInput,
) -> Result<BatchGetItemOutput> {
    let total: usize = input.requests.iter().map(|r| r.keys.len()).sum();
    if total == 0 || total > MAX_BATCH_GET_KEYS {
        return Err(StoreError::validation(
            "Too many items requested for the BatchGetItem call",
        ));
    }
    let mut responses = Vec::with_capacity(input.requests.len());
    let mut consumed = Vec::with_capacity(input.requests.len());
    let mut unprocessed = Vec::new();
    let mut response_bytes = 0;
    for (request, table) in input.requests.iter().zip(tables) {
        let mut seen = Vec::with_capacity(request.keys.len());
        for key in &request.keys {
            let bytes = table.key_bytes(key)?;
            if seen.contains(&bytes) {
                return Err(StoreError::validation(
                    "Provided list of item keys contains duplicates",
                ));
            }
            seen.push(bytes);
        }
        let items = snapshot
            .table(bytes_table(&table.items_table))
            .map_err(storage)?;
        let mut found = Vec::new();
        let mut left = Vec::new();
        let mut units = ConsumedCapacity::new(table.name());
        for (key, bytes_key) in request.keys.iter().zip(seen) {
            if response_bytes > MAX_BATCH_GET_BYTES {
                left.push(key.clone());
                continue;
            }
            let item: Option<Item> = match items.get(bytes_key.as_slice()).map_err(storage)? {
                Some(bytes) => Some(
                    decode_item(bytes.value()).map_err(|e| table.corrupt_item(&bytes_key, e))?,
                ),
                None => None,
            };
            let size = item.as_ref().map_or(0, item_size);
            // The item that would carry the response past 16 MB is left for
            // the caller's next round, like every key after it.
            if response_bytes + size > MAX_BATCH_GET_BYTES {
                response_bytes = MAX_BATCH_GET_BYTES + 1;
                left.push(key.clone());
                continue;
            }
            response_bytes += size;
            // Each key is charged on its own, rounded up to a whole unit.
            units.read_units += read_units(size, request.consistent_read);
            found.extend(item);
        }
        responses.push((table.name().to_owned(), found));
        consumed.push(units);
        if !left.is_empty() {
            unprocessed.push(TableKeys {
                table: request.table.clone(),
                keys: left,
                consistent_read: request.consistent_read,
            });
        }
    }
    Ok(BatchGetItemOutput {
        responses,
        unprocessed,
        consumed,
    })
}

/// The index a Query or Scan reads (`None`: the table); a read of a global
/// secondary index cannot be strongly consistent.
fn index_to_read<'t>(
    table: &'t TableState,
    index: Option<&str>,
    consistent: bool,
) -> Result<Option<&'t IndexState>> {
    let index = index.map(|name| table.index(name)).transpose()?;
    if index.is_some_and(|i| !i.local) && consistent {
        return Err(StoreError::validation(
            "Consistent reads are not supported on global secondary indexes",
        ));
    }
    if let Some(index) = index {
        index.check_readable()?;
    }
    Ok(index)
}

pub(crate) fn query(snapshot: &Snapshot, table: &TableState, input: &QueryInput) -> Result<Page> {
    query_with(snapshot, table, input, None)
}

/// A Query whose kept items go to `visit` (the page holds none). A page
/// that keeps whole items, unfiltered and without fetches, shows `visit`
/// each stored item in place, never building it.
pub(crate) fn query_visiting(
    snapshot: &Snapshot,
    table: &TableState,
    input: &QueryInput,
    visit: &mut ItemVisitor,
) -> Result<Page> {
    query_with(snapshot, table, input, Some(visit))
}

fn query_with(
    snapshot: &Snapshot,
    table: &TableState,
    input: &QueryInput,
    visit: Option<&mut ItemVisitor>,
) -> Result<Page> {
    let index = index_to_read(table, input.index.as_deref(), input.consistent_read)?;
    let schema = index.map_or(table.schema(), |i| &i.index.key_schema);
    let condition = input
        .key_condition
        .bind(schema, index.map(|i| i.index.name.as_str()))
        .map_err(StoreError::Validation)?;
    if let Some(filter) = &input.filter {
        check_filter_on_non_keys(schema, filter)?;
    }
    let partition_len = schema.partition_attributes().count();
    let values: Vec<&AttributeValue> = condition.equalities.iter().map(|(_, v)| *v).collect();
    let (partition, sort_equalities) = values.split_at(partition_len);
    let (mut lower, mut upper) = query_range(
        partition,
        sort_equalities,
        condition.range.map(|(_, op)| op),
    );
    if let Some(start) = &input.exclusive_start_key {
        let start = query_start_key(table, index, &condition, start)?;
        if input.scan_index_forward {
            lower = tighter_lower(lower, Bound::Excluded(start));
        } else {
            upper = tighter_upper(upper, Bound::Excluded(start));
        }
    }
    if let (Some(index), Some(filter)) = (index, &input.filter) {
        check_filter_projected(table, index, filter)?;
    }
    let shape = Shape::new(
        Reading::Query,
        index,
        input.select,
        input.projection.as_deref(),
    )?;
    let fetch = fetches(table, index, input.select, input.projection.as_deref());
    let read = RangeRead {
        table,
        index,
        range: (lower, upper),
        forward: input.scan_index_forward,
        limit: input.limit,
        consistent: input.consistent_read,
    };
    match visit {
        Some(visit) if matches!(shape, Shape::Whole) && !fetch && input.filter.is_none() => {
            read.visit(snapshot, visit)
        }
        Some(visit) => {
            let mut page = shape.apply(read.items(snapshot, input.filter.as_ref(), fetch)?);
            for item in page.items.drain(..) {
                visit(&item);
            }
            Ok(page)
        }
        None => Ok(shape.apply(read.items(snapshot, input.filter.as_ref(), fetch)?)),
    }
}

/// The developer guide (Query, "Filter expressions for Query"): "A filter
/// expression cannot contain partition key or sort key attributes."
fn check_filter_on_non_keys(schema: &KeySchema, filter: &Condition) -> Result<()> {
    match filter
        .paths()
        .into_iter()
        .filter_map(|p| p.top())
        .find(|top| schema.attributes().any(|a| a.name == *top))
    {
        Some(key_attribute) => Err(StoreError::validation(format!(
            "Filter Expression can only contain non-primary key attributes: Primary key attribute: {key_attribute}"
        ))),
        None => Ok(()),
    }
}

/// The stored key a Query resumes after, from its ExclusiveStartKey.
fn query_start_key(
    table: &TableState,
    index: Option<&IndexState>,
    condition: &BoundKeyCondition<'_>,
    start: &Item,
) -> Result<Vec<u8>> {
    // A Query names no detail of a start key that is no key at all
    // (Scan does).
    let start_bytes = table
        .start_key_bytes(index, start)
        .map_err(|_| StoreError::validation("The provided starting key is invalid"))?;
    // A Query resumes only inside what its key condition selects.
    if !condition.matches(start) {
        return Err(StoreError::validation(
            "The provided starting key does not match the range key predicate",
        ));
    }
    Ok(start_bytes)
}

pub(crate) fn scan(snapshot: &Snapshot, table: &TableState, input: &ScanInput) -> Result<Page> {
    let index = index_to_read(table, input.index.as_deref(), input.consistent_read)?;
    let (mut lower, upper) = match input.segment {
        Some(segment) => {
            if segment.total_segments == 0
                || segment.total_segments > 1_000_000
                || segment.segment >= segment.total_segments
            {
                return Err(StoreError::validation(
                    "Segment must be less than TotalSegments, and TotalSegments between 1 and 1000000",
                ));
            }
            segment_range(segment.segment, segment.total_segments)
        }
        None => (Bound::Unbounded, Bound::Unbounded),
    };
    if let Some(start) = &input.exclusive_start_key {
        let start = table.start_key_bytes(index, start)?;
        if let Some(segment) = input.segment
            && !(lower.clone(), upper.clone()).contains(&start)
        {
            return Err(StoreError::validation(format!(
                "The provided starting key is invalid: Invalid ExclusiveStartKey. Please use ExclusiveStartKey with correct Segment. TotalSegments: {} Segment: {}",
                segment.total_segments, segment.segment
            )));
        }
        lower = tighter_lower(lower, Bound::Excluded(start));
    }
    let shape = Shape::new(
        Reading::Scan,
        index,
        input.select,
        input.projection.as_deref(),
    )?;
    let read = RangeRead {
        table,
        index,
        range: (lower, upper),
        forward: true,
        limit: input.limit,
        consistent: input.consistent_read,
    };
    let requested = fetches(table, index, input.select, input.projection.as_deref());
    // A Scan of a local index reads what its filter names and the index does
    // not project from the table; its items still hold what the index
    // projects, unless more was asked for.
    let filter_reads_table = index.filter(|i| i.local).filter(|i| {
        !requested
            && input
                .filter
                .as_ref()
                .is_some_and(|f| !unprojected(table, i, f).is_empty())
    });
    let mut page = read.items(
        snapshot,
        input.filter.as_ref(),
        requested || filter_reads_table.is_some(),
    )?;
    if let Some(index) = filter_reads_table {
        for item in &mut page.items {
            item.retain(|attribute, _| table.projects(index, attribute));
        }
    }
    Ok(shape.apply(page))
}

/// The stored bytes (keys and values) of the first `limit` entries of one
/// partition of a table or of one of its indexes, in key order or
/// reversed, decoding nothing: the floor under a Query of that page.
pub(crate) fn raw_partition(
    snapshot: &Snapshot,
    table: &TableState,
    index: Option<&str>,
    partition: &AttributeValue,
    forward: bool,
    limit: usize,
) -> Result<usize> {
    let read = RangeRead {
        table,
        index: index_to_read(table, index, false)?,
        range: query_range(&[partition], &[], None),
        forward,
        limit: Some(limit),
        consistent: false,
    };
    let (mut entries, mut bytes) = (0, 0);
    read.walk(snapshot, |key, value| {
        entries += 1;
        bytes += key.len() + value.len();
        Ok(entries >= limit)
    })?;
    Ok(bytes)
}

/// Whether a read of `index` must fetch each item from the table: it is a
/// local secondary index, which DynamoDB reads through to the table for the
/// attributes requested that it does not project (ALL_ATTRIBUTES, or a
/// projection naming one); a global one returns only what it holds. A
/// filter is evaluated on what the index holds.
fn fetches(
    table: &TableState,
    index: Option<&IndexState>,
    select: Option<Select>,
    projection: Option<&[Path]>,
) -> bool {
    let Some(index) = index.filter(|i| i.local && i.index.projection != Projection::All) else {
        return false;
    };
    select == Some(Select::AllAttributes)
        || projection
            .into_iter()
            .flatten()
            .filter_map(Path::top)
            .any(|attribute| !table.projects(index, attribute))
}

/// The attributes `filter` names that `index` does not project, sorted.
fn unprojected<'f>(
    table: &TableState,
    index: &IndexState,
    filter: &'f rave_store::Condition,
) -> Vec<&'f str> {
    let mut missing: Vec<&str> = filter
        .paths()
        .into_iter()
        .filter_map(Path::top)
        .filter(|attribute| !table.projects(index, attribute))
        .collect();
    missing.sort_unstable();
    missing.dedup();
    missing
}

/// A Query of an index refuses a filter on attributes the index does not
/// project, global or local.
fn check_filter_projected(
    table: &TableState,
    index: &IndexState,
    filter: &rave_store::Condition,
) -> Result<()> {
    let missing = unprojected(table, index, filter);
    if missing.is_empty() {
        return Ok(());
    }
    Err(StoreError::validation(format!(
        "One or more parameter values were invalid: Secondary index {} does not project one or more filter attributes: [{}]",
        index.index.name,
        missing.join(", ")
    )))
}

/// What a Query or Scan returns of the items it keeps, from its Select and
/// ProjectionExpression, checked as DynamoDB checks them.
enum Shape<'a> {
    Whole,
    Paths(&'a [Path]),
    Count,
}

/// Which operation reads: their messages differ in places.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reading {
    Query,
    Scan,
}

impl<'a> Shape<'a> {
    fn new(
        reading: Reading,
        index: Option<&IndexState>,
        select: Option<Select>,
        projection: Option<&'a [Path]>,
    ) -> Result<Shape<'a>> {
        let named = |select: &str| {
            StoreError::validation(format!(
                "Cannot specify the ProjectionExpression when choosing to get {select}"
            ))
        };
        match (select, projection) {
            (None | Some(Select::SpecificAttributes), Some(paths)) => Ok(Shape::Paths(paths)),
            (Some(Select::SpecificAttributes), None) => Err(StoreError::validation(format!(
                // Query's answer comes in the validation framework's
                // envelope, Scan's without it.
                "{}Must specify the AttributesToGet or ProjectionExpression when choosing to get SPECIFIC_ATTRIBUTES",
                match reading {
                    Reading::Query => "1 validation error detected: ",
                    Reading::Scan => "",
                }
            ))),
            (Some(Select::AllAttributes), Some(_)) => Err(named("ALL_ATTRIBUTES")),
            (Some(Select::AllProjectedAttributes), Some(_)) => {
                Err(named("ALL_PROJECTED_ATTRIBUTES"))
            }
            (Some(Select::Count), Some(_)) => Err(named("only the Count")),
            (Some(Select::Count), None) => Ok(Shape::Count),
            (Some(Select::AllProjectedAttributes), None) if index.is_none() => {
                // DynamoDB says so of a Scan too.
                Err(StoreError::validation(
                    "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName",
                ))
            }
            (Some(Select::AllAttributes), None) => match index {
                // A global secondary index holds only what it projects.
                Some(index) if !index.local && index.index.projection != Projection::All => {
                    Err(StoreError::validation(format!(
                        "One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not supported for global secondary index {} because its projection type is not ALL",
                        index.index.name
                    )))
                }
                _ => Ok(Shape::Whole),
            },
            (None | Some(Select::AllProjectedAttributes), None) => Ok(Shape::Whole),
        }
    }

    fn apply(&self, mut page: Page) -> Page {
        match self {
            Shape::Whole => {}
            Shape::Paths(paths) => {
                for item in &mut page.items {
                    *item = project(item, paths);
                }
            }
            Shape::Count => page.items.clear(),
        }
        page
    }
}

/// One entry of a redb range over byte keys and byte values.
type RangeEntry<'a> = std::result::Result<
    (
        redb::AccessGuard<'a, &'static [u8]>,
        redb::AccessGuard<'a, &'static [u8]>,
    ),
    redb::StorageError,
>;

fn tighter_lower(a: Bound<Vec<u8>>, b: Bound<Vec<u8>>) -> Bound<Vec<u8>> {
    match (&a, &b) {
        (Bound::Unbounded, _) => b,
        (_, Bound::Unbounded) => a,
        (Bound::Included(x) | Bound::Excluded(x), Bound::Included(y) | Bound::Excluded(y)) => {
            if y > x || (y == x && matches!(b, Bound::Excluded(_))) {
                b
            } else {
                a
            }
        }
    }
}

fn tighter_upper(a: Bound<Vec<u8>>, b: Bound<Vec<u8>>) -> Bound<Vec<u8>> {
    match (&a, &b) {
        (Bound::Unbounded, _) => b,
        (_, Bound::Unbounded) => a,
        (Bound::Included(x) | Bound::Excluded(x), Bound::Included(y) | Bound::Excluded(y)) => {
            if y < x || (y == x && matches!(b, Bound::Excluded(_))) {
                b
            } else {
                a
            }
        }
    }
}

fn is_empty_range(range: &(Bound<Vec<u8>>, Bound<Vec<u8>>)) -> bool {
    match range {
        (Bound::Included(lo), Bound::Included(hi)) => lo > hi,
        (Bound::Included(lo) | Bound::Excluded(lo), Bound::Excluded(hi))
        | (Bound::Excluded(lo), Bound::Included(hi)) => lo >= hi,
        _ => false,
    }
}

/// A read of a key range of the table or of one of its indexes, in one
/// direction, which stops at `limit` items or 1 MB. The page's
/// LastEvaluatedKey is the last item read when it stopped early.
struct RangeRead<'t> {
    table: &'t TableState,
    index: Option<&'t IndexState>,
    range: (Bound<Vec<u8>>, Bound<Vec<u8>>),
    forward: bool,
    limit: Option<usize>,
    consistent: bool,
}

/// What a range read has read so far.
#[derive(Default)]
struct Progress {
    scanned: usize,
    bytes_read: usize,
    fetched_units: f64,
    kept: usize,
    last_evaluated_key: Option<Item>,
}

impl Progress {
    /// Counts one more item of `size` bytes read; whether the read stops
    /// after it.
    fn read_one(&mut self, size: usize, limit: Option<usize>) -> bool {
        self.scanned += 1;
        self.bytes_read += size;
        limit.is_some_and(|l| self.scanned >= l) || self.bytes_read >= MAX_PAGE_BYTES
    }
}

impl RangeRead<'_> {
    fn redb_name(&self) -> &str {
        self.index
            .map_or(&self.table.items_table, |i| &i.redb_table)
    }

    fn corrupt(&self, key: &[u8], why: crate::codec::Undecodable) -> StoreError {
        match self.index {
            Some(index) => self.table.corrupt_index_entry(index, why),
            None => self.table.corrupt_item(key, why),
        }
    }

    /// Calls `step` with each entry's key and value until it says stop.
    fn walk(
        &self,
        snapshot: &Snapshot,
        mut step: impl FnMut(&[u8], &[u8]) -> Result<bool>,
    ) -> Result<()> {
        if self.limit == Some(0) {
            return Err(StoreError::validation(
                "1 validation error detected: Value at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1",
            ));
        }
        if is_empty_range(&self.range) {
            return Ok(());
        }
        let entries = snapshot
            .table(bytes_table(self.redb_name()))
            .map_err(storage)?;
        let bounds = (
            self.range.0.as_ref().map(Vec::as_slice),
            self.range.1.as_ref().map(Vec::as_slice),
        );
        let iter = entries.range::<&[u8]>(bounds).map_err(storage)?;
        let mut step = |entry: RangeEntry<'_>| -> Result<bool> {
            let (key, value) = entry.map_err(storage)?;
            step(key.value(), value.value())
        };
        if self.forward {
            for entry in iter {
                if step(entry)? {
                    break;
                }
            }
        } else {
            for entry in iter.rev() {
                if step(entry)? {
                    break;
                }
            }
        }
        Ok(())
    }

    /// The page of what was read, items aside.
    fn page(&self, progress: Progress, items: Vec<Item>) -> Page {
        let mut consumed = ConsumedCapacity::new(self.table.name());
        consumed.read_units = read_units(progress.bytes_read, self.consistent);
        if let Some(index) = self.index {
            let charged = if index.local {
                &mut consumed.local_index_units
            } else {
                &mut consumed.index_units
            };
            charged.insert(index.index.name.clone(), consumed.read_units);
        }
        consumed.read_units += progress.fetched_units;
        Page {
            count: progress.kept,
            items,
            scanned_count: progress.scanned,
            last_evaluated_key: progress.last_evaluated_key,
            consumed,
        }
    }

    /// Shows `visit` each item read, in place.
    fn visit(&self, snapshot: &Snapshot, visit: &mut ItemVisitor) -> Result<Page> {
        let mut progress = Progress::default();
        let mut index = ItemIndex::default();
        let key_names: Vec<&str> = self
            .table
            .schema()
            .attributes()
            .chain(
                self.index
                    .into_iter()
                    .flat_map(|i| i.index.key_schema.attributes()),
            )
            .map(|a| a.name.as_str())
            .collect();
        self.walk(snapshot, |key, value| {
            let keys = match self.index {
                Some(entries) => entry_keys(key, &entries.entry_key),
                None => Ok(KeyStrings::new()),
            };
            keys.and_then(|keys| {
                index.view(value, &keys, |item| {
                    let stop = progress.read_one(item.size, self.limit);
                    if stop {
                        progress.last_evaluated_key = Some(item.pick(key_names.iter().copied()));
                    }
                    progress.kept += 1;
                    visit(item);
                    stop
                })
            })
            .map_err(|e| self.corrupt(key, e))
        })?;
        Ok(self.page(progress, Vec::new()))
    }

    /// Reads the items, then applies the filter. With `fetch`, each index
    /// entry is replaced by the table's item, each fetch charged as a read
    /// of its own.
    fn items(
        &self,
        snapshot: &Snapshot,
        filter: Option<&rave_store::Condition>,
        fetch: bool,
    ) -> Result<Page> {
        let table = self.table;
        let mut progress = Progress::default();
        let mut items = Vec::new();
        let table_items = if fetch {
            Some(
                snapshot
                    .table(bytes_table(&table.items_table))
                    .map_err(storage)?,
            )
        } else {
            None
        };
        self.walk(snapshot, |key, value| {
            let item = match self.index {
                Some(entries) => decode_entry(key, value, &entries.entry_key),
                None => decode_item(value),
            }
            .map_err(|e| self.corrupt(key, e))?;
            let stop = progress.read_one(item_size(&item), self.limit);
            let item = match &table_items {
                Some(table_items) => {
                    let key = table.key_bytes(&table.schema().key_of(&item))?;
                    match table_items.get(key.as_slice()).map_err(storage)? {
                        Some(bytes) => {
                            let whole = decode_item(bytes.value())
                                .map_err(|e| table.corrupt_item(&key, e))?;
                            progress.fetched_units +=
                                read_units(item_size(&whole), self.consistent);
                            whole
                        }
                        // The snapshot holds the entry's item: an index entry
                        // without one is the index's damage, not the item's.
                        None => {
                            return Err(StoreError::corrupt(
                                format!(
                                    "an entry of index {} of table {}",
                                    self.redb_name(),
                                    table.name()
                                ),
                                "it has no item in the table",
                            ));
                        }
                    }
                }
                None => item,
            };
            if stop {
                progress.last_evaluated_key = Some(match self.index {
                    Some(index) => table.keys_for_index(index, &item),
                    None => table.schema().key_of(&item),
                });
            }
            if filter.is_none_or(|f| f.evaluate(&item)) {
                items.push(item);
            }
            Ok(stop)
        })?;
        progress.kept = items.len();
        Ok(self.page(progress, items))
    }
}
