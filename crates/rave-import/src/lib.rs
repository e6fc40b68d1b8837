//! Shops' review exports as comments to import: a CSV file from a review
//! platform (or any CSV with a column mapping) read row by row into
//! [`rave_comments::ImportComment`]s, each with the line it came from.
//!
//! Turning CSV into comments is its job; storing them is the domain's
//! (`Comments::import`), which `run` calls in batches for both callers,
//! `rave import` and the admin endpoint.
//!
//! * `platform` — one column mapping per platform, each from the format the
//!   platform publishes (the source is cited beside it), and the generic
//!   `column=field` mapping.
//! * `input` — CSV as shops produce it: UTF-8 with or without a byte order
//!   mark, CRLF or LF, quoted separators, quotes and newlines, and `,`, `;`
//!   or tab separators (detected from the header line).
//! * `values` — the cells' forms: dates, yes/no flags, image lists, emails.
//! * `product` — which rave product a row is about (`--product-map`, the
//!   row's product id or handle, or a SKU the runner looks up in the
//!   product records).
//! * `row` — one record as one comment: the fields, the detected language,
//!   and the import key that makes its id deterministic.
//! * `photos` — the rows' image URLs fetched (safe targets, size and time
//!   limits), checked and stored like uploads; photos a row carries
//!   checked against the media store.
//! * `run` — rows in batches into the domain, each batch's SKUs looked up
//!   in the product records together, bad rows by line (fatal or
//!   skipped), progress: the one runner of `rave import` (CSV and NDJSON)
//!   and of the admin endpoint.
//!
//! **Idempotence.** A row's comment id is a ULID whose time is the review's
//! date and whose random part is a hash of the row's import key (the
//! platform and the review's fields), so reading the same file again gives
//! the same ids, and the domain leaves a comment that is already stored
//! alone: a second import, or a run after an interrupted one, creates only
//! what is missing.

mod error;
mod input;
mod options;
mod photos;
mod platform;
mod product;
mod row;
mod run;
mod values;

pub use error::{ImportError, RowError, RunError};
pub use input::{CsvImport, ImportRow};
pub use options::Options;
pub use photos::{
    DEFAULT_FETCH_TIMEOUT, DEFAULT_MAX_PHOTO_BYTES, DEFAULT_MAX_PHOTOS, FetcherError, ImportPhotos,
    PhotoOptions,
};
pub use platform::{Field, Mapping, Platform};
pub use product::ProductMap;
pub use run::{BATCH, MAX_REPORTED_ERRORS, Progress, run, run_in_batches};
