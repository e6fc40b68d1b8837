//! Renditions as objects in an S3-compatible bucket, keyed `<id>/<size>.<ext>`
//! like the files of the disk store (an optional prefix before them lets a
//! bucket be shared).
//!
//! An object store acknowledges a PUT only once the object is durable, so
//! `put` returning is the same promise the disk store's fsync gives. The
//! `ETag` served is the bucket's own (an MD5 for a single-part PUT).
//! With an endpoint (MinIO, moto, a local emulator) requests use path-style
//! addressing (`endpoint/bucket/key`), since such servers rarely have the
//! per-bucket DNS names virtual-hosted addressing needs.

use std::time::SystemTime;

use aws_sdk_s3::Client;
use aws_sdk_s3::error::DisplayErrorContext;
use aws_sdk_s3::primitives::ByteStream;

use crate::error::StoreError;
use crate::key::MediaKey;
use crate::store::{Blob, Listed};

/// Where the bucket is (`--media-bucket`, `--media-endpoint`).
#[derive(Debug, Clone, Default)]
pub struct S3Options {
    pub bucket: String,
    /// An S3-compatible endpoint; Amazon S3 itself when `None`.
    pub endpoint: Option<String>,
    /// The region; by default from the environment or profile.
    pub region: Option<String>,
    /// Prepended to every key, e.g. `media/`.
    pub prefix: String,
}

/// A bucket as a media store.
#[derive(Debug, Clone)]
pub struct S3Store {
    client: Client,
    bucket: String,
    prefix: String,
}

fn bucket_error(operation: &'static str, key: &str, error: &dyn std::error::Error) -> StoreError {
    StoreError::Bucket {
        operation,
        key: key.to_owned(),
        message: DisplayErrorContext(error).to_string(),
    }
}

impl S3Store {
    /// Connects with credentials and region from the usual AWS sources
    /// (environment, profile, instance role).
    pub async fn connect(options: &S3Options) -> S3Store {
        let mut loader = aws_config::defaults(aws_config::BehaviorVersion::latest());
        if let Some(region) = &options.region {
            loader = loader.region(aws_config::Region::new(region.clone()));
        }
        if let Some(endpoint) = &options.endpoint {
            loader = loader.endpoint_url(endpoint);
        }
        S3Store::with_config(&loader.load().await, options)
    }

    /// For a local S3-compatible server: fixed dummy credentials, region
    /// us-east-1, no look-ups of the environment.
    pub fn local(endpoint: &str, bucket: &str) -> S3Store {
        let config = aws_config::SdkConfig::builder()
            .behavior_version(aws_config::BehaviorVersion::latest())
            .region(aws_config::Region::new("us-east-1"))
            .endpoint_url(endpoint)
            .credentials_provider(aws_sdk_s3::config::SharedCredentialsProvider::new(
                aws_sdk_s3::config::Credentials::new("local", "local", None, None, "rave"),
            ))
            .build();
        let options = S3Options {
            bucket: bucket.to_owned(),
            endpoint: Some(endpoint.to_owned()),
            ..S3Options::default()
        };
        S3Store::with_config(&config, &options)
    }

    fn with_config(config: &aws_config::SdkConfig, options: &S3Options) -> S3Store {
        let s3_config = aws_sdk_s3::config::Builder::from(config)
            .force_path_style(options.endpoint.is_some())
            .build();
        S3Store {
            client: Client::from_conf(s3_config),
            bucket: options.bucket.clone(),
            prefix: options.prefix.clone(),
        }
    }

    /// Creates the bucket; one that exists already and is ours is fine.
    pub async fn create_bucket(&self) -> Result<(), StoreError> {
        match self
            .client
            .create_bucket()
            .bucket(&self.bucket)
            .send()
            .await
        {
            Ok(_) => Ok(()),
            Err(error)
                if error.as_service_error().is_some_and(|service| {
                    service.is_bucket_already_owned_by_you() || service.is_bucket_already_exists()
                }) =>
            {
                Ok(())
            }
            Err(error) => Err(bucket_error("CreateBucket", &self.bucket, &error)),
        }
    }

    fn object_key(&self, key: &MediaKey) -> String {
        format!("{}{key}", self.prefix)
    }

    pub(crate) async fn put(&self, key: &MediaKey, bytes: &[u8]) -> Result<(), StoreError> {
        let object_key = self.object_key(key);
        self.client
            .put_object()
            .bucket(&self.bucket)
            .key(&object_key)
            .content_type(key.content_type())
            .cache_control("public, max-age=31536000, immutable")
            .body(ByteStream::from(bytes.to_vec()))
            .send()
            .await
            .map_err(|error| bucket_error("PutObject", &object_key, &error))?;
        Ok(())
    }

    pub(crate) async fn get(&self, key: &MediaKey) -> Result<Option<Blob>, StoreError> {
        let object_key = self.object_key(key);
        let output = match self
            .client
            .get_object()
            .bucket(&self.bucket)
            .key(&object_key)
            .send()
            .await
        {
            Ok(output) => output,
            Err(error)
                if error
                    .as_service_error()
                    .is_some_and(|service| service.is_no_such_key()) =>
            {
                return Ok(None);
            }
            Err(error) => return Err(bucket_error("GetObject", &object_key, &error)),
        };
        let etag = output.e_tag().unwrap_or_default().to_owned();
        let bytes = output
            .body
            .collect()
            .await
            .map_err(|error| bucket_error("GetObject", &object_key, &error))?
            .into_bytes()
            .to_vec();
        Ok(Some(Blob {
            bytes,
            content_type: key.content_type(),
            etag,
        }))
    }

    pub(crate) async fn delete(&self, key: &MediaKey) -> Result<(), StoreError> {
        let object_key = self.object_key(key);
        // DeleteObject answers success for a missing key.
        self.client
            .delete_object()
            .bucket(&self.bucket)
            .key(&object_key)
            .send()
            .await
            .map_err(|error| bucket_error("DeleteObject", &object_key, &error))?;
        Ok(())
    }

    pub(crate) async fn list(&self) -> Result<Vec<Listed>, StoreError> {
        let mut keys = Vec::new();
        let mut pages = self
            .client
            .list_objects_v2()
            .bucket(&self.bucket)
            .prefix(&self.prefix)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|error| bucket_error("ListObjectsV2", &self.prefix, &error))?;
            for object in page.contents() {
                let parsed = object
                    .key()
                    .and_then(|key| key.strip_prefix(self.prefix.as_str()))
                    .and_then(MediaKey::parse);
                let Some(key) = parsed else {
                    continue;
                };
                // An object without a time it was written at is taken as
                // written now: never old enough to be taken for an orphan.
                let modified = object
                    .last_modified()
                    .and_then(|at| SystemTime::try_from(*at).ok())
                    .unwrap_or_else(SystemTime::now);
                keys.push(Listed {
                    id: key.id,
                    rendition: Some(key.rendition),
                    modified,
                });
            }
        }
        Ok(keys)
    }
}
