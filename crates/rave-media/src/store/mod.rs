//! Where renditions are kept: one interface, two backends.
//!
//! [`MediaStore`] is an enum rather than a trait object so the server holds
//! one concrete type and the S3 variant exists only with the `s3` feature.
//! Every operation is keyed by [`MediaKey`] (`<id>/<size>.<ext>`), whose
//! parser admits nothing else, so no caller can reach outside the store.
//!
//! **Durability.** `put` returns only once the bytes are durable: on disk,
//! written to a temporary file, fsync'd, renamed over the final name and
//! the directory fsync'd; in a bucket, once the object store acknowledged
//! the PUT. A caller writes the comment naming a photo only after `put`
//! returned, so a crash leaves at worst an orphan blob (found by `list`),
//! never a comment naming a missing one.
//!
//! Renditions are immutable: a key's bytes never change once written, so
//! they can be served with an immutable `Cache-Control`.

mod disk;
#[cfg(feature = "s3")]
mod s3;

pub use disk::DiskStore;
#[cfg(feature = "s3")]
pub use s3::{S3Options, S3Store};

use crate::error::StoreError;
use crate::key::{MediaId, MediaKey, Rendition};
use crate::render::ProcessedImage;

/// A stored rendition as read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob {
    pub bytes: Vec<u8>,
    pub content_type: &'static str,
    /// A strong validator for `ETag`, quotes included.
    pub etag: String,
}

/// The media store of a rave deployment.
#[derive(Debug, Clone)]
pub enum MediaStore {
    /// Files under a directory (the data directory's `media/`).
    Disk(DiskStore),
    /// Objects in an S3-compatible bucket.
    #[cfg(feature = "s3")]
    S3(S3Store),
}

impl MediaStore {
    /// Stores `bytes` under `key`, durably (see the module's documentation).
    pub async fn put(&self, key: &MediaKey, bytes: &[u8]) -> Result<(), StoreError> {
        match self {
            MediaStore::Disk(store) => store.put(key, bytes).await,
            #[cfg(feature = "s3")]
            MediaStore::S3(store) => store.put(key, bytes).await,
        }
    }

    /// Stores every rendition of `image`; returns once all are durable.
    pub async fn put_image(&self, image: &ProcessedImage) -> Result<(), StoreError> {
        for encoded in &image.renditions {
            let key = MediaKey {
                id: image.id.clone(),
                rendition: encoded.rendition,
            };
            self.put(&key, &encoded.bytes).await?;
        }
        Ok(())
    }

    /// The rendition under `key`, or `None` when there is none.
    pub async fn get(&self, key: &MediaKey) -> Result<Option<Blob>, StoreError> {
        match self {
            MediaStore::Disk(store) => store.get(key).await,
            #[cfg(feature = "s3")]
            MediaStore::S3(store) => store.get(key).await,
        }
    }

    /// Removes the rendition under `key`; removing a missing one is no error.
    pub async fn delete(&self, key: &MediaKey) -> Result<(), StoreError> {
        match self {
            MediaStore::Disk(store) => store.delete(key).await,
            #[cfg(feature = "s3")]
            MediaStore::S3(store) => store.delete(key).await,
        }
    }

    /// Removes every rendition of the photo `id`.
    pub async fn delete_image(&self, id: &MediaId) -> Result<(), StoreError> {
        for rendition in Rendition::all() {
            let key = MediaKey {
                id: id.clone(),
                rendition,
            };
            self.delete(&key).await?;
        }
        Ok(())
    }

    /// Every stored rendition, sorted: what reconciliation compares with
    /// the photos comments name. Anything in the store that is not a
    /// rendition's key (a partial write, a stranger's file) is left out.
    pub async fn list(&self) -> Result<Vec<MediaKey>, StoreError> {
        let mut keys = match self {
            MediaStore::Disk(store) => store.list().await,
            #[cfg(feature = "s3")]
            MediaStore::S3(store) => store.list().await,
        }?;
        keys.sort();
        Ok(keys)
    }
}
