//! The photos of imports (rave-import's `photos`): `rave import` fetches
//! rows' image URLs into the media store `serve` uses (`<data>/media`;
//! `rave import` runs on the embedded store only), and `serve` lets the
//! admin import endpoint do the same into its own. Both take the address
//! rule and the time limit from here.

use anyhow::Context;
use clap::Args;
use rave_import::{ImportPhotos, PhotoOptions};
use rave_media::MediaStore;

use crate::options::seconds;

/// How an import reaches image URLs.
#[derive(Debug, Args)]
pub(crate) struct FetchArgs {
    /// Let imported reviews' image URLs reach loopback, private,
    /// link-local and metadata addresses (refused by default, as webhook
    /// targets are).
    #[arg(long, env = "RAVE_IMPORT_ALLOW_PRIVATE")]
    import_allow_private: bool,
    /// The longest one image fetch of an import may take, connecting and
    /// reading included, in seconds.
    #[arg(long, env = "RAVE_IMPORT_FETCH_TIMEOUT", default_value_t = 10.0)]
    import_fetch_timeout: f64,
}

impl FetchArgs {
    /// The photo options of an import that fetches (`fetch`) or keeps
    /// image URLs as references.
    pub(crate) fn options(&self, fetch: bool) -> anyhow::Result<PhotoOptions> {
        Ok(PhotoOptions {
            fetch,
            allow_private: self.import_allow_private,
            fetch_timeout: seconds(self.import_fetch_timeout, "--import-fetch-timeout")?,
            ..PhotoOptions::default()
        })
    }

    /// The photos of an import into `store`.
    pub(crate) fn photos(&self, store: MediaStore, fetch: bool) -> anyhow::Result<ImportPhotos> {
        ImportPhotos::new(store, &self.options(fetch)?).context("cannot fetch imported photos")
    }
}
