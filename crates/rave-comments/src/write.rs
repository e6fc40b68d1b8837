//! The write path: creating comments (idempotently), reading one back,
//! editing, moderating and replying to them with versioned
//! read-modify-writes, deleting them, and importing many at once.
//!
//! **Concurrency.** Every comment carries a `version`; edits, flags,
//! approvals and replies are read-modify-writes with a condition on the
//! version, read again and retried when another write got in between. A
//! create with an idempotency key is one transaction: the comment and the
//! idempotency record (a fingerprint of the request), each conditional on
//! not existing; a retry loses on the record's condition and returns the
//! comment the record names.
//!
//! **Verified purchases.** rave-server checks a post's purchase proof and
//! hands the domain the order id (`Comments::create_verified`). The comment
//! (`verified_purchase`) and the order verification (`table::order`) are
//! one transaction, the order item conditional on not existing: one order
//! verifies one comment per product, and a second is a conflict that stores
//! nothing. Imports carry `verified_purchase` but no order.
//!
//! **Photo references.** A comment with photos is written in one
//! transaction with a reference per photo (`table::photo`), on create as
//! in every variant above, and in the same batch on import; a write that
//! removes photos from a comment, or deletes it, removes their references
//! in the same transaction, and answers which photos no comment names any
//! more (`references`), so the caller can delete their blobs.
//!
//! **Merchant replies** live on the comment item (`reply`), written by the
//! same versioned read-modify-write as an edit, so a listing shows them with
//! no second read. A reply touches no key attribute: the comment keeps its
//! place, and the aggregator counts nothing for it (it raises the product's
//! revision, as any change of a visible comment does, so pages' ETags
//! follow).

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, UNIX_EPOCH};

use rave_store::{CancellationReason, Store, StoreError, WriteRequest};
use sha2::{Digest, Sha256};
use ulid::Ulid;

use crate::access::TableAccess;
use crate::attributes::{AttributeAnswers, AttributeInput, DeclaredAttributes};
use crate::error::{CommentsError, Result};
use crate::families;
use crate::model::{
    Comment, CommentPatch, Email, NewComment, OrderId, ProductId, Reply, Source, Status, Timestamp,
    VoteCounts, validate_image_urls,
};
use crate::photos::{Photo, PhotoId, PhotoStatus};
use crate::references;
use crate::reports::{Report, Reports};
use crate::rules::{HookDecision, MODERATION_HOOK, ModerationHook, Rules, Verdict};
use crate::table::{comment, idempotency, order, personal, photo, product};

/// Whether new comments need a moderator's approval before they show.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Moderation {
    /// New comments are published at once.
    #[default]
    Off,
    /// New comments are pending until approved.
    Pre,
}

/// The outcome of a create: the comment, and whether an earlier request
/// with the same idempotency key had already created it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Created {
    pub comment: Comment,
    pub replayed: bool,
}

/// A comment to import: its own time, and optionally its id, status and
/// the merchant's reply (as `rave export` writes them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportComment {
    pub product: String,
    pub id: Option<String>,
    pub status: Option<Status>,
    pub comment: NewComment,
    pub reply: Option<Reply>,
    /// As exported; an import writes no order verification (exports carry
    /// no order ids), so it does not use up an order.
    pub verified_purchase: bool,
    /// The vote counts the export showed. The votes themselves are not
    /// exported: into the store they came from, an import keeps the counts
    /// its votes still hold; into another, `reconcile` finds them without
    /// votes.
    pub votes: VoteCounts,
    /// The platform the comment came from (a CSV import's `--from`).
    pub source: Option<Source>,
    /// Written for a reward (the export's `incentivized`, a platform's
    /// own column).
    pub incentivized: bool,
    /// Images that came with the review, kept as references.
    pub image_urls: Vec<String>,
    /// The author's email address: stored apart from the comment
    /// (`table::personal`), never shown.
    pub email: Option<Email>,
}

/// What an import did: the comments' ids in input order, and how many of
/// them it created (the others were there already and were left alone).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportOutcome {
    pub ids: Vec<String>,
    pub created: usize,
}

/// How often a read-modify-write reads again when another write got in
/// between (store failures are retried below this, in [`TableAccess`]).
const MAX_WRITE_ATTEMPTS: usize = 8;

/// How long a create's idempotency record is kept by default.
pub const DEFAULT_IDEMPOTENCY_TTL: Duration = Duration::from_secs(24 * 60 * 60);

#[derive(Debug)]
pub(crate) struct Writes<S> {
    access: Arc<TableAccess<S>>,
    moderation: Moderation,
    idempotency_ttl: Duration,
    ids: Mutex<ulid::Generator>,
    /// Checked on every create that is not an import (see `rules`).
    rules: Option<Arc<Rules>>,
    /// Asked about every create the rules let pass, imports excepted.
    hook: Option<Arc<dyn ModerationHook>>,
}

impl<S: Store> Writes<S> {
    pub(crate) fn new(access: Arc<TableAccess<S>>, moderation: Moderation) -> Writes<S> {
        Writes {
            access,
            moderation,
            idempotency_ttl: DEFAULT_IDEMPOTENCY_TTL,
            ids: Mutex::new(ulid::Generator::new()),
            rules: None,
            hook: None,
        }
    }

    pub(crate) fn set_rules(&mut self, rules: Arc<Rules>) {
        self.rules = Some(rules);
    }

    pub(crate) fn set_moderation_hook(&mut self, hook: Arc<dyn ModerationHook>) {
        self.hook = Some(hook);
    }

    pub(crate) fn set_idempotency_ttl(&mut self, ttl: Duration) {
        self.idempotency_ttl = ttl;
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
                    .map_err(|_| CommentsError::Internal("id generator lock poisoned".into()))?;
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

    /// Creates a comment; with `purchase`, a verified one, in one
    /// transaction with the order's verification (see `table::order`);
    /// `incentivized` as the purchase proof claims.
    pub(crate) async fn create(
        &self,
        product: &str,
        new: NewComment,
        idempotency_key: Option<&str>,
        purchase: Option<&OrderId>,
        source: Option<Source>,
        incentivized: bool,
    ) -> Result<Created> {
        let product = ProductId::parse(product)?;
        let valid = new.validate()?;
        let answers = self.checked_answers(&product, &new.attributes).await?;
        if let Some(key) = idempotency_key
            && !(1..=128).contains(&key.chars().count())
        {
            return Err(CommentsError::Invalid {
                field: "Idempotency-Key",
                message: "must be 1-128 characters long".into(),
            });
        }
        // A created_at only a trusted import sets: the rules and the hook
        // judge posts.
        let public = valid.created_at.is_none();
        let verdict = match &self.rules {
            Some(rules) if public => rules.check(
                &valid.author,
                &valid.title,
                &valid.body,
                valid.media.len(),
                Timestamp::now(),
            ),
            _ => Verdict::Pass,
        };
        if let Verdict::Refuse(rule) = verdict {
            return self
                .refuse(rule, &product, &new, idempotency_key, purchase)
                .await;
        }
        let (id, created_at) = self.new_id(valid.created_at)?;
        let status = match self.moderation {
            Moderation::Pre => Status::Pending,
            Moderation::Off => Status::Published,
        };
        let mut comment = valid.into_comment(id.to_string(), product.clone(), created_at, status);
        comment.attributes = answers;
        comment.verified_purchase = purchase.is_some();
        comment.source = source;
        comment.incentivized = incentivized;
        let verdict = match (&self.hook, verdict) {
            (Some(hook), Verdict::Pass) if public => match hook.decide(&comment).await {
                Ok(HookDecision::Publish) => Verdict::Pass,
                Ok(HookDecision::Refuse) => Verdict::Refuse(MODERATION_HOOK),
                // No decision is no permission: the comment waits for a person.
                Ok(HookDecision::Hold) | Err(_) => Verdict::Hold(MODERATION_HOOK),
            },
            _ => verdict,
        };
        match verdict {
            Verdict::Pass => {}
            Verdict::Hold(rule) => {
                comment.status = Status::Pending;
                comment.held_by = Some(rule.to_owned());
                for photo in &mut comment.media {
                    photo.status = PhotoStatus::Pending;
                }
            }
            Verdict::Refuse(rule) => {
                return self
                    .refuse(rule, &product, &new, idempotency_key, purchase)
                    .await;
            }
        }
        keep_queue_time(None, &mut comment, Timestamp::now());
        let record = idempotency_key.map(|key| {
            let fingerprint = fingerprint(&product, &new, purchase);
            let record = idempotency::Record {
                fingerprint,
                comment_id: comment.id.clone(),
                expires_at: (Timestamp::now().millis().max(0) as u64 / 1000)
                    .saturating_add(self.idempotency_ttl.as_secs()),
            };
            (key, record)
        });
        // The comment joins its product's family as the record names it
        // when the transaction commits (a move in between cancels it, and
        // the record is read again), so no move's job can miss it.
        for _ in 0..MAX_WRITE_ATTEMPTS {
            comment.group = families::family_of(&self.access, &product).await?;
            let mut writes = comment::writes(None, Some(&comment), 1);
            writes.extend(reference_puts(&comment));
            let mut actions = self.access.write_actions(writes, Some(comment::absent()));
            let family_at = actions.len();
            actions.push(families::still_of_family(
                &self.access,
                &product,
                comment.group.as_ref(),
            ));
            let record_at = actions.len();
            if let Some((key, record)) = &record {
                actions.push(self.access.put_action(
                    idempotency::encode(key, record),
                    Some(idempotency::absent()),
                ));
            }
            let order_at = actions.len();
            actions.extend(purchase.map(|order| {
                self.access
                    .put_action(order::encode(&product, order), Some(order::unused()))
            }));
            let cancelled_at = |reasons: &[CancellationReason], at: usize| {
                reasons.get(at) == Some(&CancellationReason::ConditionalCheckFailed)
            };
            match self.access.transact(actions).await {
                Ok(()) => {
                    return Ok(Created {
                        comment,
                        replayed: false,
                    });
                }
                Err(StoreError::TransactionCanceled(reasons)) => {
                    if cancelled_at(&reasons, family_at) {
                        continue;
                    }
                    if let Some((key, record)) = &record
                        && cancelled_at(&reasons, record_at)
                    {
                        return self.replay(key, &record.fingerprint).await;
                    }
                    return Err(order_used(
                        StoreError::TransactionCanceled(reasons),
                        order_at,
                    ));
                }
                Err(e) => return Err(e.into()),
            }
        }
        Err(CommentsError::Conflict(
            "the product's group kept changing; try again".into(),
        ))
    }

    /// A create `rule` refused, unless it retries one that was accepted:
    /// that one is replayed.
    async fn refuse(
        &self,
        rule: &'static str,
        product: &ProductId,
        new: &NewComment,
        idempotency_key: Option<&str>,
        purchase: Option<&OrderId>,
    ) -> Result<Created> {
        if let Some(key) = idempotency_key
            && let Ok(created) = self.replay(key, &fingerprint(product, new, purchase)).await
        {
            return Ok(created);
        }
        Err(CommentsError::Refused { rule })
    }

    async fn replay(&self, key: &str, fingerprint: &str) -> Result<Created> {
        let (item, _) = self.access.get(idempotency::key(key), true).await?;
        let item = item.ok_or_else(|| {
            CommentsError::Conflict(
                "the Idempotency-Key is being used by a concurrent request".into(),
            )
        })?;
        let record = idempotency::decode(&item)?;
        if record.fingerprint != fingerprint {
            return Err(CommentsError::Conflict(
                "the Idempotency-Key was already used with a different request".into(),
            ));
        }
        match self.get(&record.comment_id).await {
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

    /// `inputs` checked against what `product` asks (its records are read
    /// only when there are answers).
    async fn checked_answers(
        &self,
        product: &ProductId,
        inputs: &BTreeMap<String, AttributeInput>,
    ) -> Result<AttributeAnswers> {
        if inputs.is_empty() {
            return Ok(AttributeAnswers::default());
        }
        let declared = self.declarations(std::slice::from_ref(product)).await?;
        declared
            .get(product)
            .cloned()
            .unwrap_or_default()
            .check(inputs)
    }

    /// What each of `products` asks its reviewers
    /// (`DeclaredAttributes::effective`; a product without a record asks
    /// nothing): one batch read of their records, and one of the records
    /// of the groups named by those that declare nothing themselves.
    async fn declarations(
        &self,
        products: &[ProductId],
    ) -> Result<BTreeMap<ProductId, DeclaredAttributes>> {
        let keys: Vec<_> = products.iter().map(product::key).collect();
        // Each product's own declaration, and the group whose it falls back on.
        let mut own = Vec::new();
        for item in self.access.get_many(&keys).await? {
            let (record, _) = product::decode(&item)?;
            let group = record.declaration_group()?;
            own.push((product::product_of(&item)?, record.attributes, group));
        }
        let groups: BTreeSet<&ProductId> = own.iter().filter_map(|(.., g)| g.as_ref()).collect();
        let mut group_declared = BTreeMap::new();
        if !groups.is_empty() {
            let keys: Vec<_> = groups.into_iter().map(product::key).collect();
            for item in self.access.get_many(&keys).await? {
                let (record, _) = product::decode(&item)?;
                group_declared.insert(product::product_of(&item)?, record.attributes);
            }
        }
        Ok(own
            .into_iter()
            .map(|(product, declared, group)| {
                let group = group.and_then(|group| group_declared.get(&group));
                let asked = DeclaredAttributes::effective(&declared, group).clone();
                (product, asked)
            })
            .collect())
    }

    pub(crate) async fn get(&self, id: &str) -> Result<Comment> {
        let id = parse_id(id)?;
        let (item, _) = self.access.get(comment::key(&id.to_string()), true).await?;
        Ok(comment::decode(&item.ok_or(CommentsError::NotFound)?)?)
    }

    /// Reads a comment, lets `change` decide its next state, and writes it
    /// back only if nobody changed it in between (reading again if someone
    /// did). `change` returning `None` means there is nothing to write.
    async fn modify(
        &self,
        id: &str,
        change: impl Fn(&Comment) -> Result<Option<Comment>>,
    ) -> Result<Comment> {
        let id = parse_id(id)?.to_string();
        for _ in 0..MAX_WRITE_ATTEMPTS {
            let (item, _) = self.access.get(comment::key(&id), true).await?;
            let item = item.ok_or(CommentsError::NotFound)?;
            let current = comment::decode(&item)?;
            let version = comment::version(&item)?;
            let Some(mut next) = change(&current)? else {
                return Ok(current);
            };
            keep_queue_time(Some(&current), &mut next, Timestamp::now());
            if next == current {
                return Ok(current);
            }
            let written = self
                .access
                .write_together(
                    {
                        let mut writes = comment::writes(Some(&current), Some(&next), version + 1);
                        writes.extend(reference_deletes(&current, Some(&next)));
                        writes
                    },
                    Some(comment::at_version(version)),
                )
                .await;
            match written {
                Ok(()) => return Ok(next),
                // Changed (or deleted) since we read it: read again.
                Err(e) if comment_changed(&e) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(CommentsError::Conflict(
            "the comment kept changing; try again".into(),
        ))
    }

    /// Puts comment `id` in product family `group` (its product's move job
    /// does, see `families`): its family copies move with it.
    pub(crate) async fn set_group(&self, id: &str, group: Option<&ProductId>) -> Result<Comment> {
        self.modify(id, |current| {
            Ok((current.group.as_ref() != group).then(|| Comment {
                group: group.cloned(),
                ..current.clone()
            }))
        })
        .await
    }

    /// Edits a comment; new attribute answers are checked against what its
    /// product asks first (the product is the comment's: an edit never
    /// moves it).
    pub(crate) async fn edit(&self, id: &str, patch: &CommentPatch) -> Result<Comment> {
        let answers = match &patch.attributes {
            None => None,
            Some(inputs) => {
                let product = self.get(id).await?.product_id;
                Some(self.checked_answers(&product, inputs).await?)
            }
        };
        self.modify(id, |current| {
            let mut next = patch.apply(current)?;
            if let Some(answers) = &answers {
                next.attributes = answers.clone();
            }
            Ok(Some(next))
        })
        .await
    }

    /// Counts a reader's report on the comment, whatever its status; a
    /// published comment becomes flagged (visible, and in the queue).
    pub(crate) async fn flag(&self, id: &str, report: &Report) -> Result<Comment> {
        self.modify(id, |current| {
            let mut flagged = current.clone();
            flagged.reports.record(report.clone());
            if current.status == Status::Published {
                flagged.status = Status::Flagged;
            }
            Ok(Some(flagged))
        })
        .await
    }

    /// Publishes a pending or flagged comment with its photos still
    /// pending; the reports it had are judged, so they go (the moderation
    /// figures keep their totals).
    pub(crate) async fn approve(&self, id: &str) -> Result<Comment> {
        self.modify(id, |current| {
            Ok((current.status != Status::Published).then(|| Comment {
                status: Status::Published,
                held_by: None,
                reports: Reports::default(),
                media: current
                    .media
                    .iter()
                    .map(|photo| Photo {
                        status: PhotoStatus::Published,
                        ..photo.clone()
                    })
                    .collect(),
                ..current.clone()
            }))
        })
        .await
    }

    /// Publishes one photo of a comment without touching the rest of it;
    /// a published photo stays as it is. An unknown comment or photo is
    /// not found.
    pub(crate) async fn approve_photo(&self, id: &str, photo: &PhotoId) -> Result<Comment> {
        self.modify(id, |current| {
            let named = named_photo(current, photo)?;
            Ok((!named.is_published()).then(|| {
                let mut next = current.clone();
                for named in next.media.iter_mut().filter(|named| &named.id == photo) {
                    named.status = PhotoStatus::Published;
                }
                next
            }))
        })
        .await
    }

    /// Removes one photo from a comment, with its reference, in one write,
    /// leaving the rest of the comment as it is. Returns the comment and
    /// the photo if no comment names it any more (its blob may go). An
    /// unknown comment or photo is not found.
    pub(crate) async fn reject_photo(
        &self,
        id: &str,
        photo: &PhotoId,
    ) -> Result<(Comment, Vec<PhotoId>)> {
        let comment = self
            .modify(id, |current| {
                named_photo(current, photo)?;
                let mut next = current.clone();
                next.media.retain(|named| &named.id != photo);
                Ok(Some(next))
            })
            .await?;
        let unreferenced = references::unreferenced(&self.access, [photo.clone()]).await?;
        Ok((comment, unreferenced))
    }

    /// Marks whether the review was written for a reward: a staff
    /// decision that moves no key (the comment keeps its place everywhere).
    pub(crate) async fn set_incentivized(&self, id: &str, incentivized: bool) -> Result<Comment> {
        self.modify(id, |current| {
            Ok(Some(Comment {
                incentivized,
                ..current.clone()
            }))
        })
        .await
    }

    /// Sets the merchant's reply (a first one, or a new text for it).
    pub(crate) async fn set_reply(&self, id: &str, body: &str) -> Result<Comment> {
        self.modify(id, |current| {
            let reply = Reply::write(current.reply.as_ref(), body, Timestamp::now())?;
            Ok(Some(Comment {
                reply: Some(reply),
                ..current.clone()
            }))
        })
        .await
    }

    /// Removes the merchant's reply; a comment without one stays as it is.
    pub(crate) async fn delete_reply(&self, id: &str) -> Result<Comment> {
        self.modify(id, |current| {
            Ok(current.reply.is_some().then(|| Comment {
                reply: None,
                ..current.clone()
            }))
        })
        .await
    }

    /// Deletes a comment with its photos' references, in one write, and
    /// returns its photos that no comment names any more.
    pub(crate) async fn delete(&self, id: &str) -> Result<Vec<PhotoId>> {
        let id = parse_id(id)?.to_string();
        for _ in 0..MAX_WRITE_ATTEMPTS {
            let (item, _) = self.access.get(comment::key(&id), true).await?;
            let item = item.ok_or(CommentsError::NotFound)?;
            let current = comment::decode(&item)?;
            let version = comment::version(&item)?;
            let mut writes = comment::writes(Some(&current), None, version);
            writes.extend(reference_deletes(&current, None));
            match self
                .access
                .write_together(writes, Some(comment::at_version(version)))
                .await
            {
                Ok(()) => {
                    let photos = current.media.into_iter().map(|named| named.id);
                    return references::unreferenced(&self.access, photos).await;
                }
                // Changed or deleted since we read it: read again.
                Err(e) if comment_changed(&e) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(CommentsError::Conflict(
            "the comment kept changing; try again".into(),
        ))
    }

    /// Whether any comment names `photo`.
    pub(crate) async fn photo_referenced(&self, photo: &PhotoId) -> Result<bool> {
        references::is_referenced(&self.access, photo).await
    }

    /// Writes the comments of `batch` that are not stored yet, and leaves
    /// alone those that are (an import of an existing id changes nothing, so
    /// importing the same file twice, or again after an interrupted run,
    /// creates only what is missing). The batch is checked whole before
    /// anything is written. An author's email is written before the
    /// comment, so no comment is ever stored without it (a crash in
    /// between leaves the email alone, and the next run writes the comment).
    ///
    /// Which ids are stored is read (BatchGetItem, consistent) before the
    /// batch is written (BatchWriteItem, which takes no conditions): a
    /// comment created by someone else between the two is written over,
    /// which only a second import of the same rows racing this one can do,
    /// and it writes the same items.
    pub(crate) async fn import(&self, batch: Vec<ImportComment>) -> Result<ImportOutcome> {
        let answering: BTreeSet<ProductId> = batch
            .iter()
            .filter(|entry| !entry.comment.attributes.is_empty())
            .map(|entry| ProductId::parse(&entry.product))
            .collect::<Result<_>>()?;
        let declared = self
            .declarations(&answering.into_iter().collect::<Vec<_>>())
            .await?;
        let mut comments = Vec::with_capacity(batch.len());
        for entry in batch {
            let product = ProductId::parse(&entry.product)?;
            let answers = match entry.comment.attributes.is_empty() {
                true => AttributeAnswers::default(),
                false => declared
                    .get(&product)
                    .cloned()
                    .unwrap_or_default()
                    .check(&entry.comment.attributes)?,
            };
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
            validate_image_urls(&entry.image_urls)?;
            let status = entry.status.unwrap_or(Status::Published);
            let mut comment = valid.into_comment(id.to_string(), product, created_at, status);
            comment.reply = entry.reply.map(Reply::validate).transpose()?;
            comment.verified_purchase = entry.verified_purchase;
            comment.votes = entry.votes;
            comment.source = entry.source;
            comment.incentivized = entry.incentivized;
            comment.image_urls = entry.image_urls;
            comment.attributes = answers;
            keep_queue_time(None, &mut comment, Timestamp::now());
            comments.push((comment, entry.email));
        }
        // Each comment joins its product's family as the records name it
        // now (a move racing the import can leave one behind: `reconcile`
        // finds and mends it, see `families`).
        let products: BTreeSet<ProductId> =
            comments.iter().map(|(c, _)| c.product_id.clone()).collect();
        let families =
            families::families_of(&self.access, &products.into_iter().collect::<Vec<_>>()).await?;
        for (comment, _) in &mut comments {
            comment.group = families.get(&comment.product_id).cloned();
        }
        let ids: Vec<String> = comments.iter().map(|(c, _)| c.id.clone()).collect();
        let distinct: HashSet<&String> = ids.iter().collect();
        let keys: Vec<_> = distinct.into_iter().map(|id| comment::key(id)).collect();
        let mut present: HashSet<String> = HashSet::new();
        for item in self.access.get_many(&keys).await? {
            present.insert(comment::id_of_key(&item)?.to_string());
        }
        // A comment listed twice (a file holding the same review twice)
        // is written once: the second is there already by then.
        let (mut emails, mut writes, mut created) = (Vec::new(), Vec::new(), 0);
        for (comment, email) in &comments {
            if !present.insert(comment.id.clone()) {
                continue;
            }
            if let Some(email) = email {
                emails.push(WriteRequest::Put(personal::encode(&comment.id, email)));
            }
            // The references before their comment: a batch cut short
            // leaves at worst a reference that keeps a blob, never a
            // comment naming a photo no reference protects.
            writes.extend(reference_puts(comment));
            writes.extend(comment::writes(None, Some(comment), 1));
            created += 1;
        }
        self.access.write_many(emails).await?;
        self.access.write_many(writes).await?;
        Ok(ImportOutcome { ids, created })
    }

    /// The personal data kept for comment `id`'s author, if any.
    pub(crate) async fn email(&self, id: &str) -> Result<Option<Email>> {
        let id = parse_id(id)?.to_string();
        let (item, _) = self.access.get(personal::key(&id), true).await?;
        Ok(item.as_ref().map(personal::decode).transpose()?)
    }
}

/// When `next` entered the moderation queue: `now` if it enters it now
/// (`current` is the comment before, if any), the time it had if it stays,
/// none once it is published. The moderation figures time decisions by it.
fn keep_queue_time(current: Option<&Comment>, next: &mut Comment, now: Timestamp) {
    next.queued_at = match (next.status, current) {
        (Status::Published, _) => None,
        (_, Some(before)) if before.status != Status::Published => before.queued_at,
        _ => Some(now),
    };
}

/// Whether a conditional write of a comment failed because the comment
/// changed (or went) since it was read: its own condition, alone or as the
/// first action of a transaction.
/// The puts of `comment`'s photo references, written with its create
/// (unconditional: a reference holds only its key).
fn reference_puts(comment: &Comment) -> impl Iterator<Item = WriteRequest> + '_ {
    comment
        .media
        .iter()
        .map(|named| WriteRequest::Put(photo::encode(&named.id, &comment.id)))
}

/// The reference deletions that follow a change of a comment's photos
/// from `current` to `next` (`None`: the comment goes): each photo removed
/// loses its reference (no write adds a photo to a stored comment).
fn reference_deletes<'a>(
    current: &'a Comment,
    next: Option<&'a Comment>,
) -> impl Iterator<Item = WriteRequest> + 'a {
    current
        .media
        .iter()
        .filter(move |named| {
            next.is_none_or(|next| !next.media.iter().any(|kept| kept.id == named.id))
        })
        .map(|named| WriteRequest::Delete(photo::encode(&named.id, &current.id)))
}

fn comment_changed(error: &StoreError) -> bool {
    match error {
        StoreError::ConditionalCheckFailed => true,
        StoreError::TransactionCanceled(reasons) => {
            reasons.first() == Some(&CancellationReason::ConditionalCheckFailed)
        }
        _ => false,
    }
}

/// The photo `photo` of `comment`; not found when the comment has none
/// by that id.
fn named_photo<'a>(comment: &'a Comment, photo: &PhotoId) -> Result<&'a Photo> {
    comment
        .media
        .iter()
        .find(|named| &named.id == photo)
        .ok_or(CommentsError::NotFound)
}

/// Ids are ULIDs; anything else cannot name a comment (and never reaches a key).
fn parse_id(id: &str) -> Result<Ulid> {
    Ulid::from_string(id).map_err(|_| CommentsError::NotFound)
}

/// A create's transaction failure, as the caller sees it: the order
/// verification (the transaction's write at `order_at`, as its refusals
/// count) already existing is a conflict.
fn order_used(error: StoreError, order_at: usize) -> CommentsError {
    match error {
        StoreError::TransactionCanceled(reasons)
            if reasons.get(order_at) == Some(&CancellationReason::ConditionalCheckFailed) =>
        {
            CommentsError::Conflict(
                "this order has already verified a comment on this product".into(),
            )
        }
        e => e.into(),
    }
}

/// What makes two create requests "the same request" for idempotency.
fn fingerprint(product: &ProductId, new: &NewComment, purchase: Option<&OrderId>) -> String {
    let mut hash = Sha256::new();
    // Only a create with answers has their part, for the same reason.
    let answers = (!new.attributes.is_empty()).then(|| {
        new.attributes
            .iter()
            .map(|(name, input)| match input {
                AttributeInput::Integer(value) => format!("{name}={value}\n"),
                AttributeInput::Text(text) => format!("{name}:{text:?}\n"),
            })
            .collect::<String>()
    });
    // Only a create with photos has their part, for the same reason.
    let photos = (!new.media.is_empty()).then(|| {
        new.media
            .iter()
            .map(|photo| format!("photo={}\n", photo.id))
            .collect::<String>()
    });
    // Only a verified create has the order part, so the fingerprints of
    // other creates stay what they were.
    for part in [
        product.as_str(),
        &new.author,
        &new.language,
        &new.rating.to_string(),
        new.title.as_deref().unwrap_or(""),
        &new.body,
        &new.created_at.map(|t| t.to_string()).unwrap_or_default(),
    ]
    .into_iter()
    .chain(purchase.map(OrderId::as_str))
    .chain(answers.as_deref())
    .chain(photos.as_deref())
    {
        hash.update((part.len() as u64).to_be_bytes());
        hash.update(part.as_bytes());
    }
    hex::encode(hash.finalize())
}
