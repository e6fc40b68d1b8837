//! The import jobs of this process: each job's report (its progress, the
//! bad rows by line, its state), at most one running, the last
//! [`KEPT_JOBS`] kept; and how their rows' image URLs are fetched.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use rave_comments::Timestamp;
use rave_import::{ImportPhotos, PhotoOptions, Progress, RowError};
use rave_media::MediaStore;
use serde::Serialize;
use utoipa::ToSchema;

use crate::error::{ApiError, ApiResult};

/// Finished jobs whose reports are kept, newest last.
const KEPT_JOBS: usize = 50;

/// The jobs of this process: their reports, and whether one runs.
#[derive(Debug, Default)]
pub(crate) struct Imports {
    jobs: Mutex<VecDeque<Arc<Mutex<ImportJobBody>>>>,
    /// How rows' image URLs are fetched (public addresses only, 10 s, by
    /// default).
    photos: PhotoOptions,
}

/// Where an import stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum JobState {
    Running,
    /// Every row was read; bad rows skipped (with `skip_bad_lines`).
    Succeeded,
    /// Stopped at a bad row (without `skip_bad_lines`) or by the store;
    /// `error` says which. The batches of 500 rows before the bad row's
    /// were imported: importing the fixed file again creates only the rest.
    Failed,
}

/// A row an import could not take.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct RowErrorBody {
    /// The line the row starts on (the header is line 1).
    #[schema(example = 7)]
    pub line: u64,
    /// The field at fault, when one is.
    #[schema(example = "rating")]
    pub field: Option<String>,
    #[schema(example = "\"9\" is not a whole number from 1 to 5")]
    pub reason: String,
}

impl From<&RowError> for RowErrorBody {
    fn from(error: &RowError) -> RowErrorBody {
        RowErrorBody {
            line: error.line,
            field: error.field.map(str::to_owned),
            reason: error.reason.clone(),
        }
    }
}

/// An import job and its progress.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct ImportJobBody {
    #[schema(example = "01JD3X5Z8Q9W2E4R6T8Y0U1I3O")]
    pub id: String,
    pub state: JobState,
    /// The `source` the comments record (`okendo`, ..., `csv`).
    #[schema(example = "okendo")]
    pub source: String,
    /// Rows read so far, good or bad.
    pub rows_read: u64,
    /// Comments created.
    pub imported: u64,
    /// Photos fetched from the rows' image URLs and stored.
    pub photos: u64,
    /// Rows whose comment an earlier import had stored already.
    pub already_present: u64,
    /// Bad rows skipped.
    pub skipped: u64,
    /// The first bad rows, by line.
    pub errors: Vec<RowErrorBody>,
    /// Why a failed import stopped.
    pub error: Option<String>,
    #[schema(format = DateTime, example = "2026-11-21T10:00:00.123Z")]
    pub started_at: String,
    #[schema(format = DateTime)]
    pub finished_at: Option<String>,
}

impl ImportJobBody {
    pub(super) fn follow(&mut self, progress: &Progress) {
        self.rows_read = progress.rows_read;
        self.imported = progress.imported;
        self.photos = progress.photos;
        self.already_present = progress.already_present;
        self.skipped = progress.skipped;
        self.errors = progress.errors.iter().map(RowErrorBody::from).collect();
    }
}

/// What one job's report is read and written through.
pub(super) type Job = Arc<Mutex<ImportJobBody>>;

pub(super) fn lock(job: &Job) -> std::sync::MutexGuard<'_, ImportJobBody> {
    // A panicked holder leaves a report, not a broken invariant.
    job.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Imports {
    /// Jobs whose rows' image URLs are fetched as `photos` says.
    pub(crate) fn fetching(photos: PhotoOptions) -> Imports {
        Imports {
            jobs: Mutex::default(),
            photos,
        }
    }

    /// The photos of a job importing into `store`, fetching image URLs or
    /// (`fetch` false) keeping them as references.
    pub(super) fn photos(&self, store: MediaStore, fetch: bool) -> ApiResult<ImportPhotos> {
        let options = PhotoOptions {
            fetch,
            ..self.photos.clone()
        };
        ImportPhotos::new(store, &options)
            .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))
    }

    /// Registers a new running job, unless one is running.
    pub(super) fn start(&self, source: &str) -> ApiResult<Job> {
        let mut jobs = self
            .jobs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if jobs.iter().any(|job| lock(job).state == JobState::Running) {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                "an import is running; wait for it to finish (GET /v1/admin/imports/{id})",
            ));
        }
        let job = Arc::new(Mutex::new(ImportJobBody {
            id: ulid::Ulid::generate().to_string(),
            state: JobState::Running,
            source: source.to_owned(),
            rows_read: 0,
            imported: 0,
            photos: 0,
            already_present: 0,
            skipped: 0,
            errors: Vec::new(),
            error: None,
            started_at: Timestamp::now().to_string(),
            finished_at: None,
        }));
        if jobs.len() == KEPT_JOBS {
            jobs.pop_front();
        }
        jobs.push_back(Arc::clone(&job));
        Ok(job)
    }

    pub(super) fn get(&self, id: &str) -> Option<ImportJobBody> {
        let jobs = self
            .jobs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        jobs.iter()
            .map(lock)
            .find(|job| job.id == id)
            .map(|job| job.clone())
    }
}
