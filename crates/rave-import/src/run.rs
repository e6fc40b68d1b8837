//! Running an import: rows in batches into the domain, bad rows reported
//! by line (fatal, or skipped), progress after every batch. The CSV import
//! and rave's NDJSON import run through it alike. Rows whose product only
//! a SKU names get it from the product records: each batch's SKUs are
//! looked up together, and the answers kept for the batches after it.

use std::collections::{BTreeSet, HashMap};

use futures::StreamExt;

use rave_comments::{Comments, ImportComment, ProductId};
use rave_store::Store;

use crate::error::{RowError, RunError};
use crate::input::ImportRow;
use crate::photos::{ImportPhotos, without_store};

/// Rows stored per call of the domain by [`run`]: a server's import,
/// whose commits share the writer with shoppers' single writes.
pub const BATCH: usize = 500;
/// Batches read ahead of the one being stored.
const READ_AHEAD: usize = 2;
/// Row errors a report keeps (the count goes on past them).
pub const MAX_REPORTED_ERRORS: usize = 100;
/// SKUs whose product an import keeps knowing between batches; past this
/// many it forgets them, so a file of ever new SKUs holds bounded memory.
const REMEMBERED_SKUS: usize = 10_000;

/// How far an import is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Progress {
    /// Rows read from the input, good or bad.
    pub rows_read: u64,
    /// Comments created.
    pub imported: u64,
    /// Photos fetched and stored for the rows (a file carried by two rows
    /// counts twice).
    pub photos: u64,
    /// Rows whose comment was stored already (an earlier import of them).
    pub already_present: u64,
    /// Bad rows skipped.
    pub skipped: u64,
    /// The first [`MAX_REPORTED_ERRORS`] bad rows.
    pub errors: Vec<RowError>,
    /// Every bad row skipped since the last report (for a caller that
    /// prints each).
    pub latest_errors: Vec<RowError>,
}

/// Imports `rows` into `comments`, calling `report` after every batch.
/// A fatal bad row stops the import before its batch is stored: the
/// batches before it are (importing the file again once the row is fixed
/// creates only the rest). A row refused for its photos stops it after the
/// rows before it in its batch are stored, so that every photo stored has
/// its comment.
///
/// With `photos`, rows' image URLs are fetched and the photos rows carry
/// checked (see `photos`); without (a server with no media store), image
/// URLs stay references and a row naming photos is refused.
///
/// The rows are read and mapped on a blocking thread one batch ahead of
/// the batch being stored, so reading a CSV (language detection included)
/// overlaps the store's writes instead of adding to them.
pub async fn run<S: Store>(
    comments: &Comments<S>,
    rows: impl Iterator<Item = Result<ImportRow, RowError>> + Send + 'static,
    skip_bad_lines: bool,
    photos: Option<&ImportPhotos>,
    report: &mut (dyn FnMut(&Progress) + Send),
) -> Result<Progress, (RunError, Progress)> {
    run_in_batches(comments, rows, BATCH, skip_bad_lines, photos, report).await
}

/// [`run`] in batches of `batch_rows` rows. An import that has the store to
/// itself (`rave import`) takes bigger batches: each is stored as one
/// commit, and a bigger commit writes fewer pages a comment.
pub async fn run_in_batches<S: Store>(
    comments: &Comments<S>,
    rows: impl Iterator<Item = Result<ImportRow, RowError>> + Send + 'static,
    batch_rows: usize,
    skip_bad_lines: bool,
    photos: Option<&ImportPhotos>,
    report: &mut (dyn FnMut(&Progress) + Send),
) -> Result<Progress, (RunError, Progress)> {
    let batch_rows = batch_rows.max(1);
    let (batches, mut read) = tokio::sync::mpsc::channel(READ_AHEAD);
    let reader = tokio::task::spawn_blocking(move || {
        let mut rows = rows.peekable();
        while rows.peek().is_some() {
            let batch: Vec<_> = rows.by_ref().take(batch_rows).collect();
            // The receiver is gone when the import stopped: so does reading.
            if batches.blocking_send(batch).is_err() {
                return;
            }
        }
    });
    let mut progress = Progress::default();
    let mut skus = SkuProducts::default();
    let outcome = async {
        while let Some(batch) = read.recv().await {
            progress.latest_errors.clear();
            skus.learn(comments, &batch).await?;
            let mut good = Vec::with_capacity(batch.len());
            for row in batch {
                progress.rows_read += 1;
                let row = row.and_then(|row| {
                    let product = row.sku_to_resolve().and_then(|sku| skus.product(sku));
                    let product = product.cloned();
                    row.resolved(product.as_ref())
                });
                match row {
                    Ok(row) => good.push(row),
                    Err(error) => bad_row(&mut progress, error, skip_bad_lines)?,
                }
            }
            let good = match photos {
                Some(photos) => {
                    with_photos(comments, photos, good, skip_bad_lines, &mut progress).await?
                }
                None => {
                    let mut kept = Vec::with_capacity(good.len());
                    for row in good {
                        match without_store(row) {
                            Ok(row) => kept.push(row),
                            Err(error) => bad_row(&mut progress, error, skip_bad_lines)?,
                        }
                    }
                    kept
                }
            };
            flush(comments, good, skip_bad_lines, &mut progress).await?;
            report(&progress);
        }
        Ok(())
    }
    .await;
    drop(read);
    // Reading stopped with the channel; a panic there is a bug to show.
    if let Err(panic) = reader.await
        && panic.is_panic()
    {
        std::panic::resume_unwind(panic.into_panic());
    }
    match outcome {
        Ok(()) => Ok(progress),
        Err(stop) => Err((stop, progress)),
    }
}

/// The products of the SKUs rows named (`None`: no record lists it).
#[derive(Debug, Default)]
struct SkuProducts(HashMap<String, Option<ProductId>>);

impl SkuProducts {
    /// Looks up the SKUs of `batch` not known yet, in one request.
    async fn learn<S: Store>(
        &mut self,
        comments: &Comments<S>,
        batch: &[Result<ImportRow, RowError>],
    ) -> Result<(), RunError> {
        let wanted: BTreeSet<&str> = batch
            .iter()
            .flatten()
            .filter_map(ImportRow::sku_to_resolve)
            .collect();
        if self.0.len() + wanted.len() > REMEMBERED_SKUS {
            self.0.clear();
        }
        let unknown: Vec<&str> = wanted
            .into_iter()
            .filter(|sku| !self.0.contains_key(*sku))
            .collect();
        if unknown.is_empty() {
            return Ok(());
        }
        let found = comments.products_by_sku(&unknown).await?;
        for sku in unknown {
            self.0.insert(sku.to_owned(), found.get(sku).cloned());
        }
        Ok(())
    }

    fn product(&self, sku: &str) -> Option<&ProductId> {
        self.0.get(sku).and_then(Option::as_ref)
    }
}

/// The rows of a batch with their photos stored, in file order; a refused
/// row is skipped, or stops the import once the rows before it are stored.
async fn with_photos<S: Store>(
    comments: &Comments<S>,
    photos: &ImportPhotos,
    rows: Vec<ImportRow>,
    skip: bool,
    progress: &mut Progress,
) -> Result<Vec<ImportRow>, RunError> {
    let mut ready = Vec::with_capacity(rows.len());
    let mut prepared = std::pin::pin!(photos.prepare(comments, rows));
    while let Some(row) = prepared.next().await {
        match row? {
            Ok(row) => {
                let (row, stored) = photos.store(row).await?;
                progress.photos += stored;
                ready.push(row);
            }
            Err(error) => {
                if let Err(stop) = bad_row(progress, error, skip) {
                    flush(comments, ready, skip, progress).await?;
                    return Err(stop);
                }
            }
        }
    }
    Ok(ready)
}

fn bad_row(progress: &mut Progress, error: RowError, skip: bool) -> Result<(), RunError> {
    if !skip {
        return Err(RunError::BadRow(error));
    }
    progress.skipped += 1;
    if progress.errors.len() < MAX_REPORTED_ERRORS {
        progress.errors.push(error.clone());
    }
    progress.latest_errors.push(error);
    Ok(())
}

/// Stores a batch; when the domain refuses it (a field it checks and the
/// reading did not), stores its rows one by one so that each refused row
/// is reported with its line.
async fn flush<S: Store>(
    comments: &Comments<S>,
    rows: Vec<ImportRow>,
    skip: bool,
    progress: &mut Progress,
) -> Result<(), RunError> {
    if rows.is_empty() {
        return Ok(());
    }
    let entries: Vec<ImportComment> = rows.iter().map(|row| row.comment.clone()).collect();
    match comments.import(entries).await {
        Ok(outcome) => {
            count(progress, rows.len(), outcome.created);
            return Ok(());
        }
        Err(
            rave_comments::CommentsError::Invalid { .. }
            | rave_comments::CommentsError::InvalidAttribute { .. },
        ) => {}
        Err(error) => return Err(error.into()),
    }
    for row in rows {
        match comments.import(vec![row.comment]).await {
            Ok(outcome) => count(progress, 1, outcome.created),
            Err(rave_comments::CommentsError::Invalid { field, message }) => bad_row(
                progress,
                RowError {
                    line: row.line,
                    field: Some(field),
                    reason: message,
                },
                skip,
            )?,
            // A row's field names are fixed; the attribute's is in the reason.
            Err(rave_comments::CommentsError::InvalidAttribute { field, message }) => bad_row(
                progress,
                RowError {
                    line: row.line,
                    field: Some("attributes"),
                    reason: format!("{}: {message}", field.trim_start_matches("attributes.")),
                },
                skip,
            )?,
            Err(error) => return Err(error.into()),
        }
    }
    Ok(())
}

fn count(progress: &mut Progress, rows: usize, created: usize) {
    progress.imported += created as u64;
    progress.already_present += (rows - created) as u64;
}
