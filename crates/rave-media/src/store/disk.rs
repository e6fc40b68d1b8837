//! Renditions as files: `<root>/<id>/<size>.<ext>`.
//!
//! A write goes to a hidden temporary file beside its final name
//! (`.<name>.<random>.partial`), is fsync'd, renamed over the final name,
//! and the directory is fsync'd (the rename is only durable once its
//! directory is; a new `<id>` directory likewise needs the root fsync'd).
//! A crash mid-write leaves at most a `.partial` file, which `list` and
//! `get` never see. The file system's blocking calls run on tokio's
//! blocking pool.

use std::fs::File;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::StoreError;
use crate::key::{MediaId, MediaKey};
use crate::store::{Blob, Listed};

/// The files under one directory.
#[derive(Debug, Clone)]
pub struct DiskStore {
    root: PathBuf,
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.display().to_string(),
        source,
    }
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|error| StoreError::Task(error.to_string()))?
}

fn sync_directory(path: &Path) -> Result<(), StoreError> {
    File::open(path)
        .and_then(|directory| directory.sync_all())
        .map_err(io_error(path))
}

impl DiskStore {
    /// The store under `root`, created (with its parents) if missing.
    pub fn open(root: impl Into<PathBuf>) -> Result<DiskStore, StoreError> {
        let root = root.into();
        std::fs::create_dir_all(&root).map_err(io_error(&root))?;
        Ok(DiskStore { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path(&self, key: &MediaKey) -> PathBuf {
        self.root
            .join(key.id.as_str())
            .join(key.rendition.file_name())
    }

    pub(crate) async fn put(&self, key: &MediaKey, bytes: &[u8]) -> Result<(), StoreError> {
        let root = self.root.clone();
        let directory = root.join(key.id.as_str());
        let file_name = key.rendition.file_name();
        let bytes = bytes.to_vec();
        blocking(move || {
            match std::fs::create_dir(&directory) {
                Ok(()) => sync_directory(&root)?,
                Err(error) if error.kind() == ErrorKind::AlreadyExists => {}
                Err(error) => return Err(io_error(&directory)(error)),
            }
            let mut partial = tempfile::Builder::new()
                .prefix(&format!(".{file_name}."))
                .suffix(".partial")
                .tempfile_in(&directory)
                .map_err(io_error(&directory))?;
            let final_path = directory.join(&file_name);
            partial
                .write_all(&bytes)
                .and_then(|()| partial.as_file().sync_all())
                .map_err(io_error(partial.path()))?;
            partial
                .persist(&final_path)
                .map_err(|error| io_error(&final_path)(error.error))?;
            sync_directory(&directory)
        })
        .await
    }

    pub(crate) async fn get(&self, key: &MediaKey) -> Result<Option<Blob>, StoreError> {
        let path = self.path(key);
        let content_type = key.content_type();
        blocking(move || match std::fs::read(&path) {
            Ok(bytes) => Ok(Some(Blob {
                etag: format!("\"{}\"", hex::encode(Sha256::digest(&bytes))),
                bytes,
                content_type,
            })),
            Err(error) if error.kind() == ErrorKind::NotFound => Ok(None),
            Err(error) => Err(io_error(&path)(error)),
        })
        .await
    }

    pub(crate) async fn delete(&self, key: &MediaKey) -> Result<(), StoreError> {
        let path = self.path(key);
        let directory = self.root.join(key.id.as_str());
        let root = self.root.clone();
        blocking(move || {
            match std::fs::remove_file(&path) {
                Ok(()) => sync_directory(&directory)?,
                Err(error) if error.kind() == ErrorKind::NotFound => return Ok(()),
                Err(error) => return Err(io_error(&path)(error)),
            }
            // The photo's directory goes with its last rendition; while
            // others remain the removal fails, which is the point.
            if std::fs::remove_dir(&directory).is_ok() {
                sync_directory(&root)?;
            }
            Ok(())
        })
        .await
    }

    /// Removes a photo's directory whole: its renditions and whatever a
    /// write cut short left beside them (`.partial` files).
    pub(crate) async fn delete_photo(&self, id: &MediaId) -> Result<(), StoreError> {
        let directory = self.root.join(id.as_str());
        let root = self.root.clone();
        blocking(move || match std::fs::remove_dir_all(&directory) {
            Ok(()) => sync_directory(&root),
            Err(error) if error.kind() == ErrorKind::NotFound => Ok(()),
            Err(error) => Err(io_error(&directory)(error)),
        })
        .await
    }

    pub(crate) async fn list(&self) -> Result<Vec<Listed>, StoreError> {
        let root = self.root.clone();
        blocking(move || {
            let mut keys = Vec::new();
            for entry in std::fs::read_dir(&root).map_err(io_error(&root))? {
                let entry = entry.map_err(io_error(&root))?;
                let Some(id) = entry.file_name().to_str().map(str::to_owned) else {
                    continue;
                };
                if !entry.path().is_dir() {
                    continue;
                }
                let Some(photo) = MediaId::parse(&id) else {
                    continue;
                };
                let directory = entry.path();
                let listed_before = keys.len();
                for file in std::fs::read_dir(&directory).map_err(io_error(&directory))? {
                    let file = file.map_err(io_error(&directory))?;
                    let name = format!("{id}/{}", file.file_name().to_string_lossy());
                    let Some(key) = MediaKey::parse(&name) else {
                        continue;
                    };
                    let path = file.path();
                    let modified = file
                        .metadata()
                        .and_then(|metadata| metadata.modified())
                        .map_err(io_error(&path))?;
                    keys.push(Listed {
                        id: key.id,
                        rendition: Some(key.rendition),
                        modified,
                    });
                }
                // A crash before the first rendition's rename leaves a
                // directory without one: listed, so that reconciliation
                // removes it like any photo no comment names.
                if keys.len() == listed_before {
                    let modified = entry
                        .metadata()
                        .and_then(|metadata| metadata.modified())
                        .map_err(io_error(&directory))?;
                    keys.push(Listed {
                        id: photo,
                        rendition: None,
                        modified,
                    });
                }
            }
            Ok(keys)
        })
        .await
    }
}
