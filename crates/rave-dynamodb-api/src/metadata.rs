//! What DynamoDB describes about a table beyond its definition: when it was
//! created, how it is billed, its tags and its stream's view type. The engine stores only what its semantics
//! need, so these live beside its database, in `dynamodb-tables.json`:
//! creation time, billing (mode, provisioned units per table and index),
//! tags, `TableId` and settings, the stream's view type and, for a stream
//! UpdateTable enabled, when and after which sequence number it began. The
//! file is replaced atomically on change, and every field defaults, so
//! older files still read.
//!
//! A table created some other way (by `rave serve`) has no entry; it is
//! described as on-demand, without a creation time, with a
//! NEW_AND_OLD_IMAGES stream.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::settings::TableSettings;

/// File name of the metadata inside the data directory.
pub const METADATA_FILE: &str = "dynamodb-tables.json";

/// Read and write capacity units, as provisioned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Throughput {
    pub(crate) read: i64,
    pub(crate) write: i64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Billing {
    #[default]
    PayPerRequest,
    /// With the table's own throughput.
    Provisioned(Throughput),
}

/// What a stream record carries of the item (DynamoDB's `StreamViewType`).
/// The engine records both images; the view is applied when read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum StreamViewType {
    KeysOnly,
    NewImage,
    OldImage,
    #[default]
    NewAndOldImages,
}

impl StreamViewType {
    pub(crate) fn named(name: &str) -> Option<StreamViewType> {
        Some(match name {
            "KEYS_ONLY" => StreamViewType::KeysOnly,
            "NEW_IMAGE" => StreamViewType::NewImage,
            "OLD_IMAGE" => StreamViewType::OldImage,
            "NEW_AND_OLD_IMAGES" => StreamViewType::NewAndOldImages,
            _ => return None,
        })
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            StreamViewType::KeysOnly => "KEYS_ONLY",
            StreamViewType::NewImage => "NEW_IMAGE",
            StreamViewType::OldImage => "OLD_IMAGE",
            StreamViewType::NewAndOldImages => "NEW_AND_OLD_IMAGES",
        }
    }
}

/// Every field defaults, so that a table created some other way (by `rave
/// serve`) gets an entry when it is first tagged, and entries written
/// before a field existed still read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct TableMetadata {
    /// Seconds since the Unix epoch, as DynamoDB's `CreationDateTime`;
    /// unknown for a table created some other way.
    #[serde(default)]
    pub(crate) created: Option<f64>,
    #[serde(default)]
    pub(crate) billing: Billing,
    /// Each index's throughput on a provisioned table.
    #[serde(default)]
    pub(crate) index_throughput: BTreeMap<String, Throughput>,
    /// TagResource's tags, by key.
    #[serde(default)]
    pub(crate) tags: BTreeMap<String, String>,
    /// The stream's view type, when the table has a stream.
    #[serde(default)]
    pub(crate) stream_view_type: StreamViewType,
    /// When UpdateTable last enabled the stream (seconds since the Unix
    /// epoch): the label of that stream. Unset, the stream is the one the
    /// table was created with, labelled by `created`.
    #[serde(default)]
    pub(crate) stream_enabled_at: Option<f64>,
    /// The engine's last sequence number before UpdateTable enabled the
    /// stream: a new stream starts empty, so records up to this one belong
    /// to an earlier stream of the table.
    #[serde(default)]
    pub(crate) stream_starts_after: u64,
    /// DynamoDB's `TableId`, given at creation; a table created some other
    /// way has one derived from its name.
    #[serde(default)]
    pub(crate) table_id: Option<String>,
    #[serde(default)]
    pub(crate) settings: TableSettings,
}

#[derive(Debug, thiserror::Error)]
pub enum MetadataError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is damaged: {source}")]
    Damaged {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the table metadata lock is poisoned")]
    Poisoned,
}

/// The metadata of every table, kept in memory and written through.
#[derive(Debug)]
pub(crate) struct MetadataStore {
    path: PathBuf,
    tables: Mutex<BTreeMap<String, TableMetadata>>,
}

impl MetadataStore {
    pub(crate) fn open(data_dir: &Path) -> Result<MetadataStore, MetadataError> {
        let path = data_dir.join(METADATA_FILE);
        let tables = match std::fs::read(&path) {
            Ok(bytes) => {
                serde_json::from_slice(&bytes).map_err(|source| MetadataError::Damaged {
                    path: path.clone(),
                    source,
                })?
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(source) => return Err(MetadataError::Read { path, source }),
        };
        Ok(MetadataStore {
            path,
            tables: Mutex::new(tables),
        })
    }

    pub(crate) fn get(&self, table: &str) -> Result<Option<TableMetadata>, MetadataError> {
        let tables = self.tables.lock().map_err(|_| MetadataError::Poisoned)?;
        Ok(tables.get(table).cloned())
    }

    pub(crate) fn insert(&self, table: &str, metadata: TableMetadata) -> Result<(), MetadataError> {
        self.change(|tables| {
            tables.insert(table.to_owned(), metadata);
        })
    }

    /// Edits `table`'s entry, starting from the defaults if it has none.
    pub(crate) fn update(
        &self,
        table: &str,
        edit: impl FnOnce(&mut TableMetadata),
    ) -> Result<(), MetadataError> {
        self.change(|tables| edit(tables.entry(table.to_owned()).or_default()))
    }

    pub(crate) fn remove(&self, table: &str) -> Result<(), MetadataError> {
        self.change(|tables| {
            tables.remove(table);
        })
    }

    /// Applies `edit` and writes the result: to a temporary file first,
    /// renamed over the old one, so a crash leaves one version or the other.
    fn change(
        &self,
        edit: impl FnOnce(&mut BTreeMap<String, TableMetadata>),
    ) -> Result<(), MetadataError> {
        let mut tables = self.tables.lock().map_err(|_| MetadataError::Poisoned)?;
        let mut edited = tables.clone();
        edit(&mut edited);
        let write_error = |source| MetadataError::Write {
            path: self.path.clone(),
            source,
        };
        let bytes = serde_json::to_vec_pretty(&edited)
            .map_err(|e| write_error(std::io::Error::other(e)))?;
        let temporary = self.path.with_extension("json.tmp");
        let mut file = std::fs::File::create(&temporary).map_err(write_error)?;
        file.write_all(&bytes).map_err(write_error)?;
        file.sync_all().map_err(write_error)?;
        std::fs::rename(&temporary, &self.path).map_err(write_error)?;
        *tables = edited;
        Ok(())
    }
}

impl From<MetadataError> for ApiError {
    fn from(error: MetadataError) -> ApiError {
        ApiError::from(rave_store::StoreError::Internal(error.to_string()))
    }
}

/// Now, in seconds since the Unix epoch: how metadata keeps its times.
pub(crate) fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |elapsed| (elapsed.as_millis() as f64) / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_survives_reopening() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = MetadataStore::open(dir.path()).expect("opens empty");
        let metadata = TableMetadata {
            created: Some(1_700_000_000.5),
            billing: Billing::Provisioned(Throughput { read: 5, write: 7 }),
            index_throughput: BTreeMap::from([(
                "byX".to_owned(),
                Throughput { read: 1, write: 2 },
            )]),
            tags: BTreeMap::from([("team".to_owned(), "rave".to_owned())]),
            stream_view_type: StreamViewType::KeysOnly,
            stream_enabled_at: Some(1_700_000_100.25),
            stream_starts_after: 42,
            table_id: Some("0190c5a6-7f3e-4b2a-9c1d-2e3f4a5b6c7d".to_owned()),
            settings: TableSettings {
                deletion_protection: true,
                ..TableSettings::default()
            },
        };
        store.insert("t1", metadata.clone()).expect("written");
        store
            .insert(
                "t2",
                TableMetadata {
                    billing: Billing::PayPerRequest,
                    ..metadata.clone()
                },
            )
            .expect("written");
        store.remove("t2").expect("written");
        let reopened = MetadataStore::open(dir.path()).expect("reopens");
        assert_eq!(reopened.get("t1").expect("readable"), Some(metadata));
        assert_eq!(reopened.get("t2").expect("readable"), None);
    }

    #[test]
    fn a_damaged_file_is_reported_not_ignored() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        std::fs::write(dir.path().join(METADATA_FILE), b"{not json").expect("written");
        assert!(matches!(
            MetadataStore::open(dir.path()),
            Err(MetadataError::Damaged { .. })
        ));
    }

    #[test]
    fn entries_written_before_tags_and_streams_still_read() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let older =
            r#"{"t": {"created": 1.5, "billing": "PayPerRequest", "index_throughput": {}}}"#;
        std::fs::write(dir.path().join(METADATA_FILE), older).expect("written");
        let store = MetadataStore::open(dir.path()).expect("opens");
        let read = store.get("t").expect("readable").expect("present");
        assert_eq!(read.created, Some(1.5));
        assert!(read.tags.is_empty());
        assert_eq!(read.stream_view_type, StreamViewType::NewAndOldImages);
    }
}
