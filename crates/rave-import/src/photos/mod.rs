//! The photos of imported reviews: a row's image URLs fetched, checked and
//! re-encoded like an upload, and stored in the media store before the
//! comment naming them is written; a row carrying photos already (the
//! `media` of `rave export`) keeps them when the media store holds them.
//!
//! * `options` — what an import is told: fetch or not, private addresses,
//!   the limits.
//! * `fetch` — one URL fetched within the bounds: safe targets only
//!   (rave-outbound's rules, as webhooks have them), a size limit read
//!   bounded, a time limit.
//!
//! Each fetched file goes through `rave_media::process` on a blocking
//! thread, exactly as an upload does: the same type, container, pixel and
//! memory checks, the same renditions, the same id (the SHA-256 of the
//! fetched bytes). A row whose image cannot be fetched or is refused is
//! refused whole, with its line and the image's position (never its URL:
//! reports name rows by line, not by content).
//!
//! **Nothing fetched twice.** A row whose comment is stored already (its
//! id is the row's import key's) is passed on untouched, before anything is
//! fetched: the domain then leaves the comment alone.
//!
//! **Order of writes.** A few rows are prepared at once (fetched and
//! processed), but their renditions are stored one row after another in
//! file order, by the runner, only once every photo of the row passed:
//! a refused row stores nothing, and an import stopped by a bad row stores
//! no photo of a row after it. A row whose photos were stored and that the
//! domain then refuses (a field only the domain checks) leaves them
//! unreferenced, as a crash between the two would: `rave reconcile --fix`
//! removes such orphans.

mod fetch;
mod options;

use std::sync::Arc;

use futures::{Stream, StreamExt};
use rave_comments::{Comments, CommentsError, NewPhoto, PhotoId};
use rave_media::{CheckOptions, MediaId, MediaKey, MediaStore, ProcessedImage, Rendition};
use rave_store::Store;
use tokio::sync::Semaphore;

use crate::error::{RowError, RunError};
use crate::input::ImportRow;
use fetch::Fetcher;
pub use fetch::FetcherError;
pub use options::{
    DEFAULT_FETCH_TIMEOUT, DEFAULT_MAX_PHOTO_BYTES, DEFAULT_MAX_PHOTOS, PhotoOptions,
};

/// Rows whose photos are fetched and processed at once (each row's one
/// after the other): a few fetches in flight, each holding at most
/// `max_photo_bytes`.
const ROWS_AT_ONCE: usize = 4;
/// Decodes run at once: each may take a second of CPU and up to the
/// check's `max_alloc` (256 MiB) of memory, on a machine that also serves.
const DECODES_AT_ONCE: usize = 2;

/// Where an import's photos go, and how they are fetched.
#[derive(Debug, Clone)]
pub struct ImportPhotos {
    store: MediaStore,
    /// `None`: image URLs stay references.
    fetcher: Option<Fetcher>,
    max_photos: usize,
    check: CheckOptions,
    decodes: Arc<Semaphore>,
}

/// A row whose photos passed, their renditions not stored yet.
#[derive(Debug)]
pub(crate) struct Prepared {
    row: ImportRow,
    images: Vec<ProcessedImage>,
}

impl Prepared {
    fn untouched(row: ImportRow) -> Prepared {
        Prepared {
            row,
            images: Vec::new(),
        }
    }
}

/// One row's photos: ready, refused (the row's error), or a store failure
/// that stops the import.
pub(crate) type Preparation = Result<Result<Prepared, RowError>, RunError>;

impl ImportPhotos {
    pub fn new(store: MediaStore, options: &PhotoOptions) -> Result<ImportPhotos, FetcherError> {
        Ok(ImportPhotos {
            store,
            fetcher: options.fetch.then(|| Fetcher::new(options)).transpose()?,
            max_photos: options.max_photos,
            check: options.check,
            decodes: Arc::new(Semaphore::new(DECODES_AT_ONCE)),
        })
    }

    /// The photo work of `rows`, a few rows at once, answered in their
    /// order.
    pub(crate) fn prepare<'a, S: Store>(
        &'a self,
        comments: &'a Comments<S>,
        rows: Vec<ImportRow>,
    ) -> impl Stream<Item = Preparation> + 'a {
        futures::stream::iter(rows)
            .map(move |row| self.prepare_row(comments, row))
            .buffered(ROWS_AT_ONCE)
    }

    /// Stores a prepared row's renditions (durably, before its comment is
    /// written); the row, and how many photos were stored for it.
    pub(crate) async fn store(&self, prepared: Prepared) -> Result<(ImportRow, u64), RunError> {
        for image in &prepared.images {
            self.store.put_image(image).await?;
        }
        Ok((prepared.row, prepared.images.len() as u64))
    }

    async fn prepare_row<S: Store>(&self, comments: &Comments<S>, row: ImportRow) -> Preparation {
        let fetches = self.fetcher.is_some() && !row.comment.image_urls.is_empty();
        if !fetches && row.comment.comment.media.is_empty() {
            return Ok(Ok(Prepared::untouched(row)));
        }
        if already_stored(comments, &row).await? {
            return Ok(Ok(Prepared::untouched(row)));
        }
        if let Some(refused) = self.missing_photo(&row).await? {
            return Ok(Err(refused));
        }
        match &self.fetcher {
            Some(fetcher) if fetches => Ok(self.fetch_photos(fetcher, row).await),
            _ => Ok(Ok(Prepared::untouched(row))),
        }
    }

    /// The error of a row naming a photo the media store lacks (any of its
    /// renditions: each is served).
    async fn missing_photo(&self, row: &ImportRow) -> Result<Option<RowError>, RunError> {
        for photo in &row.comment.comment.media {
            let refused = |reason: String| RowError {
                line: row.line,
                field: Some("media"),
                reason,
            };
            let Some(id) = MediaId::parse(photo.id.as_str()) else {
                return Ok(Some(refused(format!("{} is not a photo id", photo.id))));
            };
            for rendition in Rendition::all() {
                let key = MediaKey {
                    id: id.clone(),
                    rendition,
                };
                if self.store.get(&key).await?.is_none() {
                    return Ok(Some(refused(format!(
                        "the photo {id} is not in this server's media store"
                    ))));
                }
            }
        }
        Ok(None)
    }

    /// Fetches and processes every image of `row`; the row with its photos
    /// (its URLs replaced by them), or the first image's refusal.
    async fn fetch_photos(
        &self,
        fetcher: &Fetcher,
        mut row: ImportRow,
    ) -> Result<Prepared, RowError> {
        let urls = std::mem::take(&mut row.comment.image_urls);
        let refused = |reason: String| RowError {
            line: row.line,
            field: Some("image_urls"),
            reason,
        };
        if urls.len() > self.max_photos {
            return Err(refused(format!(
                "{} images, at most {} per review",
                urls.len(),
                self.max_photos
            )));
        }
        let mut images: Vec<ProcessedImage> = Vec::with_capacity(urls.len());
        let mut photos: Vec<NewPhoto> = Vec::with_capacity(urls.len());
        for (at, url) in urls.iter().enumerate() {
            let image_refused =
                |reason: String| refused(format!("image {} of {}: {reason}", at + 1, urls.len()));
            let bytes = fetcher.fetch(url).await.map_err(image_refused)?;
            let check = self.check;
            let image = {
                // The semaphore lives as long as `self`: it is never closed.
                let _decoding = self.decodes.acquire().await.ok();
                tokio::task::spawn_blocking(move || rave_media::process(&bytes, &check))
                    .await
                    .unwrap_or_else(|stopped| std::panic::resume_unwind(stopped.into_panic()))
            }
            .map_err(|e| image_refused(e.to_string()))?;
            let photo = new_photo(&image).map_err(image_refused)?;
            // The same file twice (two URLs of one image) is one photo.
            let named = row.comment.comment.media.iter().chain(&photos);
            if named.clone().any(|earlier| earlier.id == photo.id) {
                continue;
            }
            photos.push(photo);
            images.push(image);
        }
        row.comment.comment.media.extend(photos);
        Ok(Prepared { row, images })
    }
}

/// The domain's reference to a processed image.
fn new_photo(image: &ProcessedImage) -> Result<NewPhoto, String> {
    let (width, height) = image
        .display_dimensions()
        .ok_or("no display rendition was made")?;
    let id = PhotoId::parse(image.id.as_str()).map_err(|e| e.to_string())?;
    Ok(NewPhoto { id, width, height })
}

/// Whether the row's comment is stored already (an earlier import of the
/// same row). A row without an id gets a new one: never stored.
async fn already_stored<S: Store>(
    comments: &Comments<S>,
    row: &ImportRow,
) -> Result<bool, RunError> {
    let Some(id) = &row.comment.id else {
        return Ok(false);
    };
    match comments.get(id).await {
        Ok(_) => Ok(true),
        // A malformed id is the domain's to refuse, with the row.
        Err(CommentsError::NotFound | CommentsError::Invalid { .. }) => Ok(false),
        Err(error) => Err(error.into()),
    }
}

/// A row of an import that keeps no photos (a server without a media
/// store): its image URLs stay references; photos it names are refused.
pub(crate) fn without_store(row: ImportRow) -> Result<ImportRow, RowError> {
    if row.comment.comment.media.is_empty() {
        return Ok(row);
    }
    Err(RowError {
        line: row.line,
        field: Some("media"),
        reason: "this server keeps no photos (it has no media store)".into(),
    })
}
