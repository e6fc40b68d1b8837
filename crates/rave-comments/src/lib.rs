//! rave's comments domain: the single-table design of the articles, as a
//! library that knows nothing of HTTP and nothing of which backend stores
//! the data — it speaks to a [`rave_store::Store`].
//!
//! * [`keys`] — the table layout; the one place key strings are built.
//! * [`model`] — comments and the validated types their fields use.
//! * [`planner`] — which index and partitions answer a filter.
//! * `listing` — runs a plan: concurrent sub-queries, k-way merge, look-ahead.
//! * [`cursor`] — signed cursors holding each sub-query's own position.

pub mod cursor;
pub mod dataset;
mod error;
pub mod keys;
mod listing;
pub mod model;
pub mod planner;
pub mod stats;

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, UNIX_EPOCH};

use rave_store::{
    AttributeValue, BatchWriteItemInput, CancellationReason, Condition, ConsumedCapacity,
    DeleteItemInput, GetItemInput, Item, MAX_BATCH_WRITE_REQUESTS, PutItemInput, ReturnValues,
    ScanInput, Segment, Store, StoreError, TransactWriteAction, TransactWriteItemsInput,
    WriteRequest,
};
use sha2::{Digest, Sha256};
use ulid::Ulid;

pub use cursor::CursorKey;
pub use error::{CommentsError, Result};
pub use model::{
    Comment, CommentPatch, Language, NewComment, ProductId, Rating, Status, Timestamp,
};
pub use planner::{Filter, Plan, RatingCounts, RatingSet, Strategy};
pub use stats::{Drift, GlobalStats, Leader, ProductStats, ReconcileReport};

use cursor::{Cursor, Position};
use keys::Index;
use listing::{Source, read_page};

/// Whether new comments need a moderator's approval before they show.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Moderation {
    /// New comments are published at once.
    #[default]
    Off,
    /// New comments are pending until approved.
    Pre,
}

/// How the domain is set up.
#[derive(Debug, Clone)]
pub struct Config {
    pub table: String,
    pub cursor_key: CursorKey,
    pub moderation: Moderation,
}

/// The outcome of a create: the comment, and whether an earlier request
/// with the same idempotency key had already created it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Created {
    pub comment: Comment,
    pub replayed: bool,
}

/// One page of a product's comments.
#[derive(Debug, Clone, PartialEq)]
pub struct ListPage {
    pub items: Vec<Comment>,
    pub next_cursor: Option<String>,
    /// The plan used, with what executing it cost.
    pub plan: Plan,
}

/// One page of the moderation queue.
#[derive(Debug, Clone, PartialEq)]
pub struct QueuePage {
    pub items: Vec<Comment>,
    pub next_cursor: Option<String>,
    pub items_read: usize,
    pub read_units: f64,
}

/// A listing request as the API receives it.
#[derive(Debug, Clone, Default)]
pub struct ListRequest<'a> {
    pub product: &'a str,
    pub filter: Filter,
    pub limit: usize,
    pub cursor: Option<&'a str>,
}

/// Capacity consumed since start, for metrics.
#[derive(Debug, Default)]
pub struct Usage {
    /// Counted in half units, the smallest DynamoDB charges.
    read_half_units: AtomicU64,
    write_half_units: AtomicU64,
    items_read: AtomicU64,
}

impl Usage {
    fn add_read(&self, units: f64, items: usize) {
        self.read_half_units
            .fetch_add((units * 2.0).round() as u64, Ordering::Relaxed);
        self.items_read.fetch_add(items as u64, Ordering::Relaxed);
    }

    fn add_write(&self, consumed: &[ConsumedCapacity]) {
        let units: f64 = consumed.iter().map(|c| c.write_units).sum();
        self.write_half_units
            .fetch_add((units * 2.0).round() as u64, Ordering::Relaxed);
    }

    pub fn read_units(&self) -> f64 {
        self.read_half_units.load(Ordering::Relaxed) as f64 / 2.0
    }

    pub fn write_units(&self) -> f64 {
        self.write_half_units.load(Ordering::Relaxed) as f64 / 2.0
    }

    pub fn items_read(&self) -> u64 {
        self.items_read.load(Ordering::Relaxed)
    }
}

pub const MAX_PAGE_SIZE: usize = 100;
pub const DEFAULT_PAGE_SIZE: usize = 20;
/// How often a read-modify-write retries when another write got in between.
const MAX_WRITE_ATTEMPTS: usize = 8;

/// Tells whether the statistics have applied every write so far.
type Freshness = Box<dyn Fn() -> bool + Send + Sync>;

/// The comments service over any [`Store`].
pub struct Comments<S> {
    store: S,
    config: Config,
    ids: Mutex<ulid::Generator>,
    usage: Usage,
    stats_fresh: Option<Freshness>,
}

impl<S: std::fmt::Debug> std::fmt::Debug for Comments<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Comments")
            .field("store", &self.store)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl<S: Store> Comments<S> {
    pub fn new(store: S, config: Config) -> Comments<S> {
        Comments {
            store,
            config,
            ids: Mutex::new(ulid::Generator::new()),
            usage: Usage::default(),
            stats_fresh: None,
        }
    }

    /// Lets the planner trust zero counts (and skip those sub-queries)
    /// whenever `fresh` says the statistics have applied every write.
    pub fn with_stats_freshness(
        mut self,
        fresh: impl Fn() -> bool + Send + Sync + 'static,
    ) -> Comments<S> {
        self.stats_fresh = Some(Box::new(fresh));
        self
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn store(&self) -> &S {
        &self.store
    }

    pub fn usage(&self) -> &Usage {
        &self.usage
    }

    pub fn table(&self) -> &str {
        &self.config.table
    }

    /// Creates the table if it does not exist (the embedded store's set-up).
    pub async fn ensure_table(&self) -> Result<()> {
        match self.store.describe_table(&self.config.table).await {
            Ok(_) => Ok(()),
            Err(StoreError::ResourceNotFound(_)) => {
                match self
                    .store
                    .create_table(keys::table_definition(&self.config.table))
                    .await
                {
                    Ok(()) | Err(StoreError::ResourceInUse(_)) => Ok(()),
                    Err(e) => Err(e.into()),
                }
            }
            Err(e) => Err(e.into()),
        }
    }

    /// A new id, and the creation time it encodes. Ids of comments created
    /// now come from a monotonic generator, so they also sort by creation
    /// order within a millisecond; an imported comment's id takes its time.
    fn new_id(&self, created_at: Option<Timestamp>) -> Result<(Ulid, Timestamp)> {
        let id = match created_at {
            Some(t) => Ulid::from_datetime(UNIX_EPOCH + Duration::from_millis(t.millis() as u64)),
            None => {
                let mut ids = self
                    .ids
                    .lock()
                    .map_err(|_| StoreError::Internal("id generator lock poisoned".into()))?;
                match ids.generate() {
                    Ok(id) => id,
                    // Over 2^80 ids in one millisecond: take the next one.
                    Err(overflow) => overflow.commit_overflow_increment(),
                }
            }
        };
        let created_at = Timestamp::from_millis(id.timestamp_ms() as i64)?;
        Ok((id, created_at))
    }

    /// Creates a comment on `product`. With an idempotency key, a retry of
    /// the same request returns the first result and creates nothing; the
    /// same key with a different request is a conflict.
    pub async fn create(
        &self,
        product: &str,
        new: NewComment,
        idempotency_key: Option<&str>,
    ) -> Result<Created> {
        let product = ProductId::parse(product)?;
        let valid = new.validate()?;
        if let Some(key) = idempotency_key
            && !(1..=128).contains(&key.chars().count())
        {
            return Err(CommentsError::Invalid {
                field: "Idempotency-Key",
                message: "must be 1-128 characters long".into(),
            });
        }
        let (id, created_at) = self.new_id(valid.created_at)?;
        let comment = Comment {
            id: id.to_string(),
            product_id: product.clone(),
            author: valid.author,
            language: valid.language,
            rating: valid.rating,
            title: valid.title,
            body: valid.body,
            created_at,
            status: match self.config.moderation {
                Moderation::Off => Status::Published,
                Moderation::Pre => Status::Pending,
            },
        };
        let comment_put = PutItemInput {
            table: self.config.table.clone(),
            item: keys::comment_item(&comment, 1),
            condition: Some(Condition::not_exists(keys::PK)),
            return_values: ReturnValues::None,
        };
        let Some(key) = idempotency_key else {
            let out = self.store.put_item(comment_put).await?;
            self.usage.add_write(&[out.consumed]);
            return Ok(Created {
                comment,
                replayed: false,
            });
        };
        let fingerprint = fingerprint(&product, &new);
        let mut record = keys::idempotency_key(key);
        record.insert("fingerprint".into(), AttributeValue::s(&fingerprint));
        record.insert("comment_id".into(), AttributeValue::s(&comment.id));
        let input = TransactWriteItemsInput {
            actions: vec![
                TransactWriteAction::Put {
                    table: comment_put.table,
                    item: comment_put.item,
                    condition: comment_put.condition,
                },
                TransactWriteAction::Put {
                    table: self.config.table.clone(),
                    item: record,
                    condition: Some(Condition::not_exists(keys::PK)),
                },
            ],
        };
        match self.store.transact_write_items(input).await {
            Ok(out) => {
                self.usage.add_write(&out.consumed);
                Ok(Created {
                    comment,
                    replayed: false,
                })
            }
            Err(StoreError::TransactionCanceled(reasons))
                if reasons.get(1) == Some(&CancellationReason::ConditionalCheckFailed) =>
            {
                self.replay(key, &fingerprint).await
            }
            Err(e) => Err(e.into()),
        }
    }

    async fn replay(&self, key: &str, fingerprint: &str) -> Result<Created> {
        let record = self
            .get_item(keys::idempotency_key(key))
            .await?
            .ok_or_else(|| {
                CommentsError::Conflict(
                    "the Idempotency-Key is being used by a concurrent request".into(),
                )
            })?;
        if record.get("fingerprint").and_then(AttributeValue::as_s) != Some(fingerprint) {
            return Err(CommentsError::Conflict(
                "the Idempotency-Key was already used with a different request".into(),
            ));
        }
        let id = record
            .get("comment_id")
            .and_then(AttributeValue::as_s)
            .ok_or_else(|| {
                StoreError::Internal("idempotency record without a comment id".into())
            })?;
        match self.get(id).await {
            Ok(comment) => Ok(Created {
                comment,
                replayed: true,
            }),
            Err(CommentsError::NotFound) => Err(CommentsError::Conflict(
                "the comment created with this Idempotency-Key has since been deleted".into(),
            )),
            Err(e) => Err(e),
        }
    }

    async fn get_item(&self, key: Item) -> Result<Option<Item>> {
        let out = self
            .store
            .get_item(GetItemInput {
                table: self.config.table.clone(),
                key,
                consistent_read: true,
            })
            .await?;
        self.usage
            .add_read(out.consumed.read_units, usize::from(out.item.is_some()));
        Ok(out.item)
    }

    /// A comment by id, whatever its status.
    pub async fn get(&self, id: &str) -> Result<Comment> {
        let id = parse_id(id)?;
        let item = self
            .get_item(keys::comment_key(&id.to_string()))
            .await?
            .ok_or(CommentsError::NotFound)?;
        keys::comment_from_item(&item)
    }

    /// Reads a comment, lets `change` decide its next state, and writes it
    /// back only if nobody changed it in between (retrying if someone did).
    /// `change` returning `None` means there is nothing to write.
    async fn modify(
        &self,
        id: &str,
        change: impl Fn(&Comment) -> Result<Option<Comment>>,
    ) -> Result<Comment> {
        let id = parse_id(id)?.to_string();
        for _ in 0..MAX_WRITE_ATTEMPTS {
            let item = self
                .get_item(keys::comment_key(&id))
                .await?
                .ok_or(CommentsError::NotFound)?;
            let current = keys::comment_from_item(&item)?;
            let version = keys::version_of(&item);
            let Some(next) = change(&current)? else {
                return Ok(current);
            };
            if next == current {
                return Ok(current);
            }
            let put = PutItemInput {
                table: self.config.table.clone(),
                item: keys::comment_item(&next, version + 1),
                condition: Some(Condition::eq(keys::VERSION, version as i64)),
                return_values: ReturnValues::None,
            };
            match self.store.put_item(put).await {
                Ok(out) => {
                    self.usage.add_write(&[out.consumed]);
                    return Ok(next);
                }
                // Changed (or deleted) since we read it: read again.
                Err(StoreError::ConditionalCheckFailed) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(CommentsError::Conflict(
            "the comment kept changing; try again".into(),
        ))
    }

    /// Changes language, rating, title or body; index keys move with them.
    pub async fn edit(&self, id: &str, patch: &CommentPatch) -> Result<Comment> {
        self.modify(id, |current| patch.apply(current).map(Some))
            .await
    }

    /// Reports a published comment: it stays visible and enters the queue.
    pub async fn flag(&self, id: &str) -> Result<Comment> {
        self.modify(id, |current| {
            Ok((current.status == Status::Published).then(|| Comment {
                status: Status::Flagged,
                ..current.clone()
            }))
        })
        .await
    }

    /// Publishes a pending or flagged comment; it leaves the queue.
    pub async fn approve(&self, id: &str) -> Result<Comment> {
        self.modify(id, |current| {
            Ok((current.status != Status::Published).then(|| Comment {
                status: Status::Published,
                ..current.clone()
            }))
        })
        .await
    }

    /// Deletes a comment; its index entries go with it.
    pub async fn delete(&self, id: &str) -> Result<()> {
        let id = parse_id(id)?.to_string();
        let input = DeleteItemInput {
            table: self.config.table.clone(),
            key: keys::comment_key(&id),
            condition: Some(Condition::exists(keys::PK)),
            return_values: ReturnValues::None,
        };
        match self.store.delete_item(input).await {
            Ok(out) => {
                self.usage.add_write(&[out.consumed]);
                Ok(())
            }
            Err(StoreError::ConditionalCheckFailed) => Err(CommentsError::NotFound),
            Err(e) => Err(e.into()),
        }
    }

    /// A page of a product's visible comments, newest first. A fan-out over
    /// several ratings reads the product's statistics first, to size (and,
    /// when they are current, skip) its sub-queries.
    pub async fn list(&self, request: &ListRequest<'_>) -> Result<ListPage> {
        let product = ProductId::parse(request.product)?;
        let ratings = request.filter.ratings;
        if ratings.is_unfiltered() || ratings.ratings().len() < 2 {
            return self.list_planned(request, &product, None, false, 0.0).await;
        }
        let exact = self.stats_fresh.as_ref().is_some_and(|fresh| fresh());
        let (counts, units) = self
            .rating_counts(&product, request.filter.language.as_ref())
            .await?;
        self.list_planned(request, &product, Some(&counts), exact, units)
            .await
    }

    /// [`Comments::list`] with the given exact per-rating counts.
    pub async fn list_with_counts(
        &self,
        request: &ListRequest<'_>,
        counts: Option<&RatingCounts>,
    ) -> Result<ListPage> {
        let product = ProductId::parse(request.product)?;
        self.list_planned(request, &product, counts, true, 0.0)
            .await
    }

    /// Plans and reads a page; `counts_units` is what reading the counts cost.
    async fn list_planned(
        &self,
        request: &ListRequest<'_>,
        product: &ProductId,
        counts: Option<&RatingCounts>,
        exact: bool,
        counts_units: f64,
    ) -> Result<ListPage> {
        let limit = check_limit(request.limit)?;
        let filter = &request.filter;
        let binding = format!(
            "list\u{0}{product}\u{0}{}\u{0}{}",
            filter.language.as_ref().map_or("", Language::as_str),
            filter.ratings.mask()
        );
        let cursor = request
            .cursor
            .map(|text| Cursor::decode(text, &self.config.cursor_key, binding.as_bytes()))
            .transpose()?;
        let mut plan = planner::plan(product, filter, limit, counts, exact);
        let mut sources = Vec::with_capacity(plan.queries.len());
        let mut exhausted = Vec::new();
        for query in &plan.queries {
            // A sub-query missing from the cursor had no comments when the
            // walk began; comments added since may be left out.
            let start = cursor.as_ref().map_or(Position::Start, |c| {
                c.position(query.tag).unwrap_or(Position::Exhausted)
            });
            if start == Position::Exhausted {
                exhausted.push(query.partition_key.clone());
                continue;
            }
            sources.push(Source {
                tag: query.tag,
                index: query.index_kind,
                partition: query.partition_key.clone(),
                sort_prefix: None,
                first_limit: query.limit,
                share: query.share,
                start,
            });
        }
        plan.queries
            .retain(|q| !exhausted.contains(&q.partition_key));
        plan.skipped
            .extend(exhausted.into_iter().map(|partition_key| planner::Skipped {
                partition_key,
                reason: "exhausted on an earlier page",
            }));
        let merged = read_page(&self.store, &self.config.table, sources, limit, false).await?;
        plan.read_units = merged.read_units + counts_units;
        plan.items_read = merged.items_read;
        self.usage.add_read(merged.read_units, merged.items_read);
        let next_cursor = merged.next.map(|positions| {
            Cursor { positions }.encode(&self.config.cursor_key, binding.as_bytes())
        });
        let items = merged
            .items
            .iter()
            .map(keys::comment_from_item)
            .collect::<Result<_>>()?;
        Ok(ListPage {
            items,
            next_cursor,
            plan,
        })
    }

    /// The moderation queue: pending or flagged comments, oldest first,
    /// optionally only those whose creation time starts with `since`
    /// (`2026`, `2026-11`, `2026-11-21`, `2026-11-21T08`).
    pub async fn moderation_queue(
        &self,
        state: Status,
        since: Option<&str>,
        limit: usize,
        cursor: Option<&str>,
    ) -> Result<QueuePage> {
        if state == Status::Published {
            return Err(CommentsError::Invalid {
                field: "state",
                message: "must be pending or flagged".into(),
            });
        }
        if let Some(prefix) = since {
            check_time_prefix(prefix)?;
        }
        let limit = check_limit(limit)?;
        let binding = format!("queue\u{0}{}\u{0}{}", state.as_str(), since.unwrap_or(""));
        let start = match cursor {
            Some(text) => Cursor::decode(text, &self.config.cursor_key, binding.as_bytes())?
                .position(0)
                .ok_or(CommentsError::BadCursor("the cursor is malformed"))?,
            None => Position::Start,
        };
        if start == Position::Exhausted {
            return Ok(QueuePage {
                items: Vec::new(),
                next_cursor: None,
                items_read: 0,
                read_units: 0.0,
            });
        }
        let source = Source {
            tag: 0,
            index: Index::Moderation,
            partition: keys::moderation_partition(state),
            sort_prefix: since.map(str::to_owned),
            first_limit: limit + 1,
            share: 1.0,
            start,
        };
        let merged = read_page(&self.store, &self.config.table, vec![source], limit, true).await?;
        self.usage.add_read(merged.read_units, merged.items_read);
        Ok(QueuePage {
            items: merged
                .items
                .iter()
                .map(keys::comment_from_item)
                .collect::<Result<_>>()?,
            next_cursor: merged.next.map(|positions| {
                Cursor { positions }.encode(&self.config.cursor_key, binding.as_bytes())
            }),
            items_read: merged.items_read,
            read_units: merged.read_units,
        })
    }
}

/// A comment to import: its own time, and optionally its id and status
/// (as `rave export` writes them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportComment {
    pub product: String,
    pub id: Option<String>,
    pub status: Option<Status>,
    pub comment: NewComment,
}

/// Where a parallel export scan resumes.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportPosition(Item);

impl<S: Store> Comments<S> {
    /// Writes many comments at once (BatchWriteItem, 25 per request), for
    /// loads and imports. An imported comment keeps its id when it has one,
    /// so importing the same export twice writes the same items again.
    /// Returns the ids, in input order.
    pub async fn import(&self, batch: Vec<ImportComment>) -> Result<Vec<String>> {
        let mut items = Vec::with_capacity(batch.len());
        let mut ids = Vec::with_capacity(batch.len());
        for entry in batch {
            let product = ProductId::parse(&entry.product)?;
            let valid = entry.comment.validate()?;
            let created_at = valid.created_at.ok_or(CommentsError::Invalid {
                field: "created_at",
                message: "an imported comment needs its creation time".into(),
            })?;
            let id = match &entry.id {
                Some(text) => {
                    let id = Ulid::from_string(text).map_err(|_| CommentsError::Invalid {
                        field: "id",
                        message: "must be a comment id (a ULID)".into(),
                    })?;
                    if id.timestamp_ms() as i64 != created_at.millis() {
                        return Err(CommentsError::Invalid {
                            field: "id",
                            message: "does not match created_at".into(),
                        });
                    }
                    id
                }
                None => self.new_id(Some(created_at))?.0,
            };
            let comment = Comment {
                id: id.to_string(),
                product_id: product,
                author: valid.author,
                language: valid.language,
                rating: valid.rating,
                title: valid.title,
                body: valid.body,
                created_at,
                status: entry.status.unwrap_or(Status::Published),
            };
            items.push(keys::comment_item(&comment, 1));
            ids.push(comment.id);
        }
        let mut unique = ids.clone();
        unique.sort();
        unique.dedup();
        if unique.len() != ids.len() {
            return Err(CommentsError::Invalid {
                field: "id",
                message: "the same id appears twice in one batch".into(),
            });
        }
        // The batches go out together: a store that groups concurrent
        // writes into one commit (the embedded engine does) writes them at once.
        let batches = items
            .chunks(MAX_BATCH_WRITE_REQUESTS)
            .map(|chunk| async move {
                let mut requests: Vec<(String, WriteRequest)> = chunk
                    .iter()
                    .map(|item| (self.config.table.clone(), WriteRequest::Put(item.clone())))
                    .collect();
                while !requests.is_empty() {
                    let out = self
                        .store
                        .batch_write_item(BatchWriteItemInput { requests })
                        .await?;
                    self.usage.add_write(&out.consumed);
                    requests = out.unprocessed;
                }
                Ok::<_, CommentsError>(())
            });
        futures::future::try_join_all(batches).await?;
        Ok(ids)
    }

    /// One page of segment `segment` of `total` of a parallel scan over all
    /// comments (any status), for exports and recounts.
    pub async fn export_page(
        &self,
        segment: u32,
        total: u32,
        start: Option<ExportPosition>,
    ) -> Result<(Vec<Comment>, Option<ExportPosition>)> {
        let mut input = ScanInput::new(self.config.table.clone());
        input.segment = Some(Segment {
            segment,
            total_segments: total,
        });
        input.limit = Some(500);
        input.exclusive_start_key = start.map(|p| p.0);
        let page = self.store.scan(input).await?;
        self.usage
            .add_read(page.consumed.read_units, page.scanned_count);
        let comments = page
            .items
            .iter()
            .filter(|item| keys::is_comment(item))
            .map(keys::comment_from_item)
            .collect::<Result<_>>()?;
        Ok((comments, page.last_evaluated_key.map(ExportPosition)))
    }
}

/// Ids are ULIDs; anything else cannot name a comment (and never reaches a key).
fn parse_id(id: &str) -> Result<Ulid> {
    Ulid::from_string(id).map_err(|_| CommentsError::NotFound)
}

fn check_limit(limit: usize) -> Result<usize> {
    if (1..=MAX_PAGE_SIZE).contains(&limit) {
        Ok(limit)
    } else {
        Err(CommentsError::Invalid {
            field: "limit",
            message: format!("must be from 1 to {MAX_PAGE_SIZE}"),
        })
    }
}

/// Accepts `YYYY`, `YYYY-MM`, `YYYY-MM-DD` and `YYYY-MM-DDTHH`.
fn check_time_prefix(prefix: &str) -> Result<()> {
    let shape_ok = match prefix.len() {
        4 | 7 | 10 | 13 => prefix.bytes().enumerate().all(|(i, b)| match i {
            4 | 7 => b == b'-',
            10 => b == b'T',
            _ => b.is_ascii_digit(),
        }),
        _ => false,
    };
    if shape_ok {
        Ok(())
    } else {
        Err(CommentsError::Invalid {
            field: "since",
            message: "must be a time prefix: 2026, 2026-11, 2026-11-21 or 2026-11-21T08".into(),
        })
    }
}

/// What makes two create requests "the same request" for idempotency.
fn fingerprint(product: &ProductId, new: &NewComment) -> String {
    let mut hash = Sha256::new();
    for part in [
        product.as_str(),
        &new.author,
        &new.language,
        &new.rating.to_string(),
        new.title.as_deref().unwrap_or(""),
        &new.body,
        &new.created_at.map(|t| t.to_string()).unwrap_or_default(),
    ] {
        hash.update((part.len() as u64).to_be_bytes());
        hash.update(part.as_bytes());
    }
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}
