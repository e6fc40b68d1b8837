//! `Access`: tokens and the audit trail in the access table.

use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rave_store::{DeleteItemInput, GetItemInput, PutItemInput, QueryInput, ReturnValues, Store};
use ulid::{Generator, Ulid};

use crate::audit::{AuditPage, AuditQuery, Entry, NewEntry};
use crate::error::{AccessError, Result};
use crate::scope::Scopes;
use crate::table::{self, audit, tokens};
use crate::token::{self, AccessToken, IssuedToken};

/// How long audit entries are kept when the operator does not say.
pub const DEFAULT_AUDIT_RETENTION: Duration = Duration::from_secs(365 * 24 * 60 * 60);

/// Most entries one audit page holds.
pub const MAX_AUDIT_PAGE: usize = 100;

/// Most trail entries one listing reads while looking for entries its
/// filters keep: past that it answers what it found with a cursor, as a
/// DynamoDB Query with a filter does, instead of reading the whole trail.
const MAX_ENTRIES_READ: usize = 5_000;

#[derive(Debug, Clone)]
pub struct AccessConfig {
    /// The comments table the access table belongs to.
    pub comments_table: String,
    pub audit_retention: Duration,
}

impl AccessConfig {
    /// The access table of `comments_table`, keeping audit entries for
    /// [`DEFAULT_AUDIT_RETENTION`].
    pub fn for_table(comments_table: &str) -> AccessConfig {
        AccessConfig {
            comments_table: comments_table.to_owned(),
            audit_retention: DEFAULT_AUDIT_RETENTION,
        }
    }
}

#[derive(Debug)]
pub struct Access<S> {
    store: S,
    table: String,
    audit_retention: Duration,
    /// Token and entry ids: monotonic within the process, so the entries
    /// one process writes in one millisecond keep their order.
    ids: Mutex<Generator>,
}

impl<S: Store> Access<S> {
    pub fn new(store: S, config: AccessConfig) -> Access<S> {
        Access {
            store,
            table: table::table_name(&config.comments_table),
            audit_retention: config.audit_retention,
            ids: Mutex::new(Generator::new()),
        }
    }

    /// Creates the access table unless it exists.
    pub async fn ensure_table(&self) -> Result<()> {
        rave_store::ensure_table(&self.store, table::table_definition(&self.table))
            .await
            .map_err(Into::into)
    }

    fn next_id(&self) -> Result<Ulid> {
        let mut ids = self
            .ids
            .lock()
            .map_err(|_| AccessError::Internal("the id generator's lock is poisoned".into()))?;
        ids.generate()
            .map_err(|e| AccessError::Internal(format!("no id: {e}")))
    }

    /// Creates a token; the returned token is the only time it is shown.
    pub async fn create_token(
        &self,
        name: &str,
        scopes: Scopes,
        created_by: &str,
    ) -> Result<IssuedToken> {
        token::check_name(name)?;
        if scopes.is_empty() {
            return Err(AccessError::invalid("scopes", "name at least one scope"));
        }
        let id = self.next_id()?.to_string();
        let secret = token::generate(&id)?;
        let record = AccessToken {
            id,
            name: name.to_owned(),
            scopes,
            created_at_ms: now_ms(),
            created_by: created_by.to_owned(),
        };
        self.store
            .put_item(PutItemInput {
                table: self.table.clone(),
                item: tokens::encode(&record, &token::digest(secret.expose())),
                condition: None,
                return_values: ReturnValues::None,
            })
            .await?;
        Ok(IssuedToken {
            record,
            token: secret,
        })
    }

    /// Every token, oldest first.
    pub async fn tokens(&self) -> Result<Vec<AccessToken>> {
        let mut found = Vec::new();
        let mut start = None;
        loop {
            let mut input = QueryInput::new(self.table.clone(), None, tokens::partition());
            input.exclusive_start_key = start;
            input.consistent_read = true;
            let page = self.store.query(input).await?;
            for item in &page.items {
                found.push(tokens::decode(item)?.0);
            }
            match page.last_evaluated_key {
                Some(key) => start = Some(key),
                None => return Ok(found),
            }
        }
    }

    /// Revokes a token: from now on it authenticates nobody.
    pub async fn revoke_token(&self, id: &str) -> Result<AccessToken> {
        let removed = self
            .store
            .delete_item(DeleteItemInput {
                table: self.table.clone(),
                key: tokens::key(id),
                condition: None,
                return_values: ReturnValues::AllOld,
            })
            .await?;
        match removed.attributes {
            Some(item) => Ok(tokens::decode(&item)?.0),
            None => Err(AccessError::NotFound("token")),
        }
    }

    /// The token `presented` is, if it is a live one. Read consistently
    /// each time, so a revoked token stops working at once.
    pub async fn authenticate(&self, presented: &str) -> Result<Option<AccessToken>> {
        let Some(id) = token::id_of(presented) else {
            return Ok(None);
        };
        let found = self
            .store
            .get_item(GetItemInput {
                table: self.table.clone(),
                key: tokens::key(id),
                consistent_read: true,
            })
            .await?;
        let Some(item) = found.item else {
            return Ok(None);
        };
        let (record, digest) = tokens::decode(&item)?;
        Ok(token::matches(&digest, presented).then_some(record))
    }

    /// Appends an entry to the trail.
    pub async fn record(&self, entry: NewEntry) -> Result<Entry> {
        entry.check()?;
        let at_ms = now_ms();
        let entry = Entry {
            id: self.next_id()?.to_string(),
            at_ms,
            actor: entry.actor,
            action: entry.action,
            target: entry.target,
            client: entry.client,
            detail: entry.detail,
        };
        let expires_at = (at_ms / 1000).saturating_add(self.audit_retention.as_secs());
        self.store
            .put_item(PutItemInput {
                table: self.table.clone(),
                item: audit::encode(&entry, expires_at),
                condition: None,
                return_values: ReturnValues::None,
            })
            .await?;
        Ok(entry)
    }

    /// A page of the trail, newest first, continuing after the entry `after`.
    pub async fn audit(
        &self,
        query: &AuditQuery,
        limit: usize,
        after: Option<&str>,
    ) -> Result<AuditPage> {
        if !(1..=MAX_AUDIT_PAGE).contains(&limit) {
            return Err(AccessError::invalid(
                "limit",
                format!("must be 1-{MAX_AUDIT_PAGE}"),
            ));
        }
        if after.is_some_and(|id| Ulid::from_string(id).is_err()) {
            return Err(AccessError::invalid(
                "cursor",
                "is not a cursor this listing gave",
            ));
        }
        if let (Some(since), Some(until)) = (query.since_ms, query.until_ms)
            && since >= until
        {
            // An empty range: a key condition cannot state it (its bounds
            // would cross), and nothing is in it.
            return Ok(AuditPage {
                entries: Vec::new(),
                next: None,
            });
        }
        let (lowest, highest) = (lowest_id(query), highest_id(query));
        let mut after = after;
        if query.target.is_none()
            && let Some(id) = after
        {
            // A cursor outside the time range: nothing is older than one
            // below it, and everything is older than one above it.
            if lowest.as_deref().is_some_and(|lowest| id <= lowest) {
                return Ok(AuditPage {
                    entries: Vec::new(),
                    next: None,
                });
            }
            if highest.as_deref().is_some_and(|highest| id > highest) {
                after = None;
            }
        }
        let (index, key_condition) = match &query.target {
            Some(target) => (Some(table::TARGET_INDEX), audit::of_target(target)),
            None => (None, audit::range(lowest, highest)),
        };
        let now_secs = now_ms() / 1000;
        let mut entries = Vec::new();
        let mut start = after.map(|id| audit::start_after(id, query.target.as_ref()));
        let mut read = 0;
        loop {
            let mut input = QueryInput::new(self.table.clone(), index, key_condition.clone());
            input.scan_index_forward = false;
            input.exclusive_start_key = start;
            input.limit = Some(MAX_AUDIT_PAGE);
            let page = self.store.query(input).await?;
            for item in &page.items {
                read += 1;
                let (entry, expires_at) = audit::decode(item)?;
                // Time to Live deletes expired items late (DynamoDB: within
                // days), so an expired entry is dropped on read too.
                if expires_at > now_secs && keeps(query, &entry) {
                    entries.push(entry);
                }
                if entries.len() == limit || read == MAX_ENTRIES_READ {
                    let last = audit::decode(item)?.0.id;
                    return Ok(AuditPage {
                        entries,
                        next: Some(last),
                    });
                }
            }
            match page.last_evaluated_key {
                Some(key) => start = Some(key),
                None => {
                    return Ok(AuditPage {
                        entries,
                        next: None,
                    });
                }
            }
        }
    }
}

/// What the key condition cannot say: the filters on other attributes
/// (and, in `byTarget`, the time range).
fn keeps(query: &AuditQuery, entry: &Entry) -> bool {
    query.actor.as_ref().is_none_or(|a| *a == entry.actor.name)
        && query.action.as_ref().is_none_or(|a| *a == entry.action)
        && query.since_ms.is_none_or(|since| entry.at_ms >= since)
        && query.until_ms.is_none_or(|until| entry.at_ms < until)
}

/// The smallest id an entry written at `since` can have.
fn lowest_id(query: &AuditQuery) -> Option<String> {
    query
        .since_ms
        .map(|since| Ulid::from_parts(since, 0).to_string())
}

/// The largest id an entry written before `until` can have.
fn highest_id(query: &AuditQuery) -> Option<String> {
    query
        .until_ms
        .map(|until| Ulid::from_parts(until.saturating_sub(1), u128::MAX).to_string())
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
