//! Where photos are kept (rave-media), for `serve` and for `reconcile`'s
//! photo check: with the embedded store, the data directory's `media/`;
//! with `--store dynamodb`, the S3-compatible bucket `--media-bucket` (at
//! `--media-endpoint`, or Amazon S3 with the usual AWS credentials and
//! `--region`), or none, when no bucket is given, and then `/media/…`
//! answers 404 and posts with photos are refused.
//!
//! Also how many photos a post may carry and how large (`--max-photos`,
//! `--max-photo-bytes`), and where the photos' URLs point (`--media-url`, a
//! bucket's or CDN's; else rave's own `/media` under `--public-url` when it
//! is set, else paths on rave's own origin).

use std::path::Path;

use anyhow::{Context, bail};
use clap::Args;
use rave_comments::{NewPhoto, PhotoId};
use rave_media::{CheckOptions, DiskStore, MediaStore};
use rave_server::feeds::FeedSite;
use rave_server::{MediaLinks, UploadLimits};

/// Photos `rave load --photos` stores for its comments to carry.
const SAMPLE_PHOTOS: u32 = 8;

/// The embedded store's media store, `<data>/media` (created if missing).
pub(crate) fn embedded_store(data: &Path) -> anyhow::Result<MediaStore> {
    let store = DiskStore::open(data.join("media"))
        .with_context(|| format!("cannot open {}", data.join("media").display()))?;
    Ok(MediaStore::Disk(store))
}

/// Where the cloud deployment's photos are (`--media-bucket`,
/// `--media-endpoint`): `serve`'s options, which `reconcile` takes too.
#[derive(Debug, Args)]
pub(crate) struct BucketArgs {
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

impl BucketArgs {
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

#[derive(Debug, Args)]
pub(crate) struct MediaArgs {
    #[command(flatten)]
    pub(crate) store: BucketArgs,
    /// Where the photos' renditions are reached from outside when not
    /// through rave: the bucket's own URL or a CDN in front of it (the
    /// store keys renditions <id>/<rendition> under it). Without it, photo
    /// URLs are rave's own /media, under --public-url when that is set.
    #[arg(long, env = "RAVE_MEDIA_URL", value_name = "URL")]
    media_url: Option<String>,
    /// Most photos one post may carry (1 to 10).
    #[arg(long, env = "RAVE_MAX_PHOTOS", value_name = "N", default_value_t = rave_server::DEFAULT_MAX_PHOTOS)]
    max_photos: usize,
    /// The largest photo file accepted, in bytes.
    #[arg(long, env = "RAVE_MAX_PHOTO_BYTES", value_name = "BYTES", default_value_t = rave_server::DEFAULT_MAX_PHOTO_BYTES)]
    max_photo_bytes: usize,
}

impl MediaArgs {
    /// Where photo URLs point, given where the public reaches rave.
    pub(crate) fn links(&self, site: Option<&FeedSite>) -> anyhow::Result<MediaLinks> {
        Ok(match (&self.media_url, site) {
            (Some(url), _) => MediaLinks::external(url)?,
            (None, Some(site)) => MediaLinks::served_at(site.public_url()),
            (None, None) => MediaLinks::default(),
        })
    }

    /// How many photos a post may carry, and how large.
    pub(crate) fn upload_limits(&self) -> anyhow::Result<UploadLimits> {
        Ok(UploadLimits::new(self.max_photos, self.max_photo_bytes)?)
    }
}

/// Stores a few synthetic photos in `<data>/media` (demo and benchmark
/// data: `rave load --photos`), each checked and rendered as an upload is,
/// and gives them as a data set's comments name them.
pub(crate) async fn store_sample_photos(data: &Path, seed: u64) -> anyhow::Result<Vec<NewPhoto>> {
    let store = DiskStore::open(data.join("media"))
        .with_context(|| format!("cannot open {}", data.join("media").display()))?;
    let store = MediaStore::Disk(store);
    let mut photos = Vec::new();
    for n in 0..SAMPLE_PHOTOS {
        let photo_seed = (seed as u32).wrapping_mul(SAMPLE_PHOTOS).wrapping_add(n);
        let processed = tokio::task::spawn_blocking(move || {
            rave_media::process(
                &rave_media::sample_photo(1200, 900, photo_seed),
                &CheckOptions::default(),
            )
        })
        .await?
        .context("rendering a sample photo")?;
        store
            .put_image(&processed)
            .await
            .context("storing a sample photo")?;
        let (width, height) = processed
            .display_dimensions()
            .context("a rendered photo has a display size")?;
        photos.push(NewPhoto {
            id: PhotoId::parse(processed.id.as_str())?,
            width,
            height,
        });
    }
    Ok(photos)
}
