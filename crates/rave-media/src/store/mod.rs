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
//!
//! **Reconciliation.** [`MediaStore::photos`] lists what is stored photo by
//! photo, with the time its newest rendition was written (the file's
//! modification time, the object's `LastModified`): `rave reconcile` takes
//! as orphans only photos no comment names that are older than a grace
//! period, so the blobs of an upload whose comment is being written are
//! never taken. Writing a rendition again (an identical upload) makes the
//! photo young again.

mod disk;
#[cfg(feature = "s3")]
mod s3;

use std::collections::{BTreeMap, BTreeSet};
use std::time::SystemTime;

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

/// What a store lists: a rendition and when it was written, or (on disk)
/// a photo's directory holding no rendition at all, only what a write cut
/// short left (`rendition: None`, when the directory last changed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Listed {
    pub(crate) id: MediaId,
    pub(crate) rendition: Option<Rendition>,
    pub(crate) modified: SystemTime,
}

/// A photo as the store holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredPhoto {
    pub id: MediaId,
    /// The renditions stored (all of them, unless a write was cut short
    /// or a deletion was).
    pub renditions: BTreeSet<Rendition>,
    /// When the newest of them was written.
    pub modified: SystemTime,
}

impl StoredPhoto {
    /// Whether every rendition of the photo is stored.
    pub fn is_complete(&self) -> bool {
        Rendition::all().all(|rendition| self.renditions.contains(&rendition))
    }
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

    /// Removes every rendition of the photo `id` (on disk its whole
    /// directory, with whatever a write cut short left in it).
    pub async fn delete_image(&self, id: &MediaId) -> Result<(), StoreError> {
        match self {
            MediaStore::Disk(store) => store.delete_photo(id).await,
            #[cfg(feature = "s3")]
            MediaStore::S3(store) => {
                for rendition in Rendition::all() {
                    let key = MediaKey {
                        id: id.clone(),
                        rendition,
                    };
                    store.delete(&key).await?;
                }
                Ok(())
            }
        }
    }

    /// Every stored rendition, sorted: what reconciliation compares with
    /// the photos comments name. Anything in the store that is not a
    /// rendition's key (a partial write, a stranger's file) is left out.
    pub async fn list(&self) -> Result<Vec<MediaKey>, StoreError> {
        let mut keys: Vec<MediaKey> = self
            .listed()
            .await?
            .into_iter()
            .filter_map(|listed| {
                Some(MediaKey {
                    id: listed.id,
                    rendition: listed.rendition?,
                })
            })
            .collect();
        keys.sort();
        Ok(keys)
    }

    /// Every stored photo, by id, with its renditions and when the newest
    /// was written (see the module's documentation).
    pub async fn photos(&self) -> Result<Vec<StoredPhoto>, StoreError> {
        let mut photos: BTreeMap<MediaId, StoredPhoto> = BTreeMap::new();
        for listed in self.listed().await? {
            let photo = photos
                .entry(listed.id.clone())
                .or_insert_with(|| StoredPhoto {
                    id: listed.id.clone(),
                    renditions: BTreeSet::new(),
                    modified: listed.modified,
                });
            photo.renditions.extend(listed.rendition);
            photo.modified = photo.modified.max(listed.modified);
        }
        Ok(photos.into_values().collect())
    }

    async fn listed(&self) -> Result<Vec<Listed>, StoreError> {
        match self {
            MediaStore::Disk(store) => store.list().await,
            #[cfg(feature = "s3")]
            MediaStore::S3(store) => store.list().await,
        }
    }
}
