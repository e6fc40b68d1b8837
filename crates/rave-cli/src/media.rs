//! Where `serve` keeps photos (rave-media): with the embedded store, the
//! data directory's `media/`; with `--store dynamodb`, the S3-compatible
//! bucket `--media-bucket` (at `--media-endpoint`, or Amazon S3 with the
//! usual AWS credentials and `--region`), or none, when no bucket is given,
//! and then `/media/…` answers 404.

use std::path::Path;

use anyhow::{Context, bail};
use clap::Args;
use rave_media::{DiskStore, MediaStore};

/// The embedded store's media store, `<data>/media` (created if missing).
pub(crate) fn embedded_store(data: &Path) -> anyhow::Result<MediaStore> {
    let store = DiskStore::open(data.join("media"))
        .with_context(|| format!("cannot open {}", data.join("media").display()))?;
    Ok(MediaStore::Disk(store))
}

#[derive(Debug, Args)]
pub(crate) struct MediaArgs {
    /// With --store dynamodb: the S3 bucket photos are kept in (without
    /// one, photos are not served). The embedded store keeps them in
    /// <data>/media.
    #[arg(long, env = "RAVE_MEDIA_BUCKET")]
    media_bucket: Option<String>,
    /// With --media-bucket: an S3-compatible endpoint other than AWS's
    /// (MinIO, Ceph, a local emulator); requests then use path-style URLs.
    #[arg(long, env = "RAVE_MEDIA_ENDPOINT")]
    media_endpoint: Option<String>,
}

impl MediaArgs {
    /// The embedded store's media store, `<data>/media`.
    pub(crate) fn embedded(&self, data: &Path) -> anyhow::Result<MediaStore> {
        if self.media_bucket.is_some() || self.media_endpoint.is_some() {
            bail!(
                "--media-bucket and --media-endpoint go with --store dynamodb; the embedded store keeps photos in {}",
                data.join("media").display()
            );
        }
        embedded_store(data)
    }

    /// The bucket's media store, when a bucket is given.
    #[cfg(feature = "dynamodb")]
    pub(crate) async fn bucket(&self, region: Option<&str>) -> anyhow::Result<Option<MediaStore>> {
        let Some(bucket) = &self.media_bucket else {
            if self.media_endpoint.is_some() {
                bail!("--media-endpoint names where --media-bucket is: give both");
            }
            return Ok(None);
        };
        let options = rave_media::S3Options {
            bucket: bucket.clone(),
            endpoint: self.media_endpoint.clone(),
            region: region.map(str::to_owned),
            prefix: String::new(),
        };
        Ok(Some(MediaStore::S3(
            rave_media::S3Store::connect(&options).await,
        )))
    }
}
