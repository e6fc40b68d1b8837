//! The admin API of imports: a shop's CSV export uploaded as the body of
//! `POST /v1/admin/imports` (with `rave import`'s options in the query)
//! runs as a background job through `rave_import::run`, the runner
//! `rave import` uses; `GET /v1/admin/imports/{id}` reports its progress.
//!
//! The header is read before the job starts, so a file the mapping cannot
//! read is refused with a 400 that names the column, and nothing is
//! written. What a job holds is bounded: the body (at most
//! [`MAX_UPLOAD_BYTES`]), one job running at a time, the last
//! 50 jobs' reports, each with at most
//! `rave_import::MAX_REPORTED_ERRORS` row errors. Reports and log lines
//! name rows by line, never by their content: an export's emails stay in
//! the personal-data items the import writes.
//!
//! Rows' image URLs are fetched into the server's media store as `rave
//! import` fetches them (rave-import's `photos`: safe targets only unless
//! the server runs with `--import-allow-private`, size and time limits,
//! the upload's checks), unless the query says `fetch_images=false`. A
//! server without a media store keeps them as references.

mod jobs;

use std::io::Cursor;
use std::sync::Arc;

use crate::json::Json;
use axum::body::{Body, Bytes};
use axum::extract::{RawQuery, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use rave_comments::{Language, ProductId, Timestamp};
use rave_import::{CsvImport, Mapping, Options, Platform, ProductMap, Progress};

use crate::AppState;
use crate::callers::{Authorized, Import};
use crate::error::{ApiError, ApiResult};
use crate::responses::{BadRequest, Conflict, NotFound, TokenRefused, Unavailable};
use crate::routes::Segment;
use crate::routes::query::{Dialect, Params};
pub(crate) use jobs::Imports;
use jobs::{ImportJobBody, JobState, lock};
use rave_access::Target;

/// The largest upload: a few hundred thousand reviews.
pub(crate) const MAX_UPLOAD_BYTES: usize = 128 << 20;

/// The import options of the query: `from`, `map` (repeated), `language`,
/// `product` (repeated `IDENTIFIER=PRODUCT_ID`, the product map's lines),
/// `skip_bad_lines`, `fetch_images`.
fn options(raw: Option<&str>) -> ApiResult<(Options, Switches)> {
    let params = Params::new(
        raw,
        &[
            "from",
            "map",
            "language",
            "product",
            "skip_bad_lines",
            "fetch_images",
        ],
        Dialect::Api,
    )?;
    let mut mapping = match params.value("from")? {
        Some(name) => Platform::parse(name)
            .ok_or_else(|| {
                let names: Vec<_> = Platform::ALL.iter().map(|p| p.name()).collect();
                ApiError::bad_request(format!("from: must be one of {}", names.join(", ")))
            })?
            .mapping(),
        None => Mapping::generic(),
    };
    for assignment in params.all("map") {
        mapping
            .add(assignment)
            .map_err(|e| ApiError::bad_request(format!("map: {e}")))?;
    }
    let mut products = ProductMap::default();
    for entry in params.all("product") {
        let (identifier, product) = entry.split_once('=').ok_or_else(|| {
            ApiError::bad_request(format!("product: {entry:?} is not IDENTIFIER=PRODUCT_ID"))
        })?;
        let product = ProductId::parse(product)
            .map_err(|e| ApiError::bad_request(format!("product: {entry:?}: {e}")))?;
        products.insert(identifier, product);
    }
    let default_language = params.value("language")?.map(Language::parse).transpose()?;
    Ok((
        Options {
            mapping,
            default_language,
            products,
        },
        Switches {
            skip_bad_lines: params.flag("skip_bad_lines")?,
            fetch_images: params.optional_flag("fetch_images")?.unwrap_or(true),
        },
    ))
}

/// The yes/no options of an import.
#[derive(Debug, Clone, Copy)]
struct Switches {
    skip_bad_lines: bool,
    /// Fetch image URLs into the media store (else keep them as
    /// references).
    fetch_images: bool,
}

#[utoipa::path(
    post,
    path = "/v1/admin/imports",
    tag = "admin",
    summary = "Import a review platform's CSV export (scope import)",
    description = "The body is the CSV file as the platform exported it (UTF-8, with or without a byte order mark; `,`, `;` or tab separators). The import runs in the background; the answer names the job to follow. Importing the same file again creates nothing and fetches nothing: each row's comment id is derived from the row, and a row already stored is passed over before its images are fetched. Each row's image URLs (http or https, at most 5) are fetched into the media store, each at most 10 MiB within 10 s from a public address (private ones only when the server runs with `--import-allow-private`, redirects re-checked), and checked as uploads are; a row whose image cannot be fetched or is refused is a bad row (`field` `image_urls`, the image's position and why). A server without a media store keeps the URLs as references. A header the mapping cannot read is refused before anything is written (400, `detail` starting with `body:`). Reviewers' emails are kept apart from the comments and never shown.",
    params(
        ("from" = Option<String>, Query, pattern = r"^(okendo|judgeme|yotpo|shopify)$", description = "The platform: okendo, judgeme, yotpo or shopify; absent: a generic CSV mapped by `map`"),
        ("map" = Option<Vec<String>>, Query, description = "COLUMN=FIELD, repeatable: author, email, rating, title, body, date, language, product_id, handle, sku, reply, reply_date, published, hidden, state, verified, image_urls, review_id"),
        ("language" = Option<String>, Query, pattern = r"^[a-z]{2,3}$", description = "The language of rows that name none and whose text gives none reliably"),
        ("product" = Option<Vec<String>>, Query, description = "IDENTIFIER=PRODUCT_ID, repeatable: the rave product of an export's product id, handle or SKU"),
        ("skip_bad_lines" = Option<bool>, Query, description = "Skip bad rows (reported by line) instead of stopping at the first"),
        ("fetch_images" = Option<bool>, Query, description = "Fetch rows' image URLs into the media store (default true); false keeps them on the comments as references only"),
    ),
    request_body(content = String, content_type = "text/csv", description = "The CSV export"),
    security(("access_token" = ["import"])),
    responses(
        (status = 202, description = "The import started; follow it at the Location", body = ImportJobBody),
        BadRequest,
        TokenRefused,
        Conflict,
        (status = 413, description = "The body is over 128 MiB", content_type = "application/problem+json"),
        Unavailable,
    )
)]
pub(crate) async fn start_import(
    Authorized(staff, ..): Authorized<Import>,
    State(state): State<AppState>,
    RawQuery(raw): RawQuery,
    body: Body,
) -> ApiResult<Response> {
    let (options, switches) = options(raw.as_deref())?;
    let upload: Bytes = axum::body::to_bytes(body, MAX_UPLOAD_BYTES)
        .await
        .map_err(|_| {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the upload must be at most {MAX_UPLOAD_BYTES} bytes"),
            )
        })?;
    let source = options.mapping.source.clone();
    let rows = CsvImport::new(Cursor::new(upload), options)
        .map_err(|e| ApiError::bad_request(format!("body: {e}")))?;
    let photos = state
        .media
        .clone()
        .map(|store| state.imports.photos(store, switches.fetch_images))
        .transpose()?;
    state.comments.ensure_table().await?;
    let job = state.imports.start(&source)?;
    let job_id = lock(&job).id.clone();
    staff
        .record(
            &state,
            "import.start",
            Target::new("import", &job_id),
            Some(format!("from {source}")),
        )
        .await;
    let report = lock(&job).clone();
    let comments = Arc::clone(&state.comments);
    tokio::spawn(async move {
        let mut follow = |progress: &Progress| lock(&job).follow(progress);
        let outcome = rave_import::run(
            &comments,
            rows,
            switches.skip_bad_lines,
            photos.as_ref(),
            &mut follow,
        )
        .await;
        let mut report = lock(&job);
        match outcome {
            Ok(progress) => {
                report.follow(&progress);
                report.state = JobState::Succeeded;
            }
            Err((error, progress)) => {
                report.follow(&progress);
                report.state = JobState::Failed;
                report.error = Some(error.to_string());
            }
        }
        report.finished_at = Some(Timestamp::now().to_string());
        tracing::info!(
            job = %report.id,
            source = %report.source,
            state = ?report.state,
            rows = report.rows_read,
            imported = report.imported,
            photos = report.photos,
            already_present = report.already_present,
            skipped = report.skipped,
            "import finished"
        );
    });
    let location = format!("/v1/admin/imports/{}", report.id);
    Ok((
        StatusCode::ACCEPTED,
        [(header::LOCATION, location)],
        Json(report),
    )
        .into_response())
}

#[utoipa::path(
    get,
    path = "/v1/admin/imports/{id}",
    tag = "admin",
    summary = "An import's progress (scope import)",
    params(("id" = String, Path, description = "The job's id, from the upload's answer")),
    security(("access_token" = ["import"])),
    responses(
        (status = 200, description = "Rows read, imported, already present and skipped; the bad rows by line; the state", body = ImportJobBody),
        TokenRefused,
        NotFound,
    )
)]
pub(crate) async fn import_progress(
    _staff: Authorized<Import>,
    State(state): State<AppState>,
    Segment(id): Segment,
) -> ApiResult<Json<ImportJobBody>> {
    state
        .imports
        .get(&id)
        .map(Json)
        .ok_or_else(|| ApiError::not_found("no such import (this server keeps the last 50)"))
}
