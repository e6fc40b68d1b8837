//! The two deployments a photo test runs `rave` on, behind one type, so a
//! scenario is written once and run on both: the embedded store with
//! `<data>/media`, and `--store dynamodb` on DynamoDB Local with the photos
//! in a bucket of the S3-compatible server (`RAVE_DYNAMODB_ENDPOINT`,
//! `RAVE_S3_ENDPOINT`, which `./scripts/test.sh` starts; a test on them
//! fails without them, in CI as anywhere).

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use rave_media::{DiskStore, MediaStore};
use reqwest::multipart::{Form, Part};
use serde_json::Value;

use super::{RAVE, Server};

/// Where `rave` keeps comments and photos in a test.
pub enum Backend {
    /// The embedded store in `data`, photos in `data/media`.
    Embedded { data: PathBuf },
    /// A table of its own on DynamoDB Local and a bucket of its own on the
    /// S3-compatible server; `data` holds only the cursor secret.
    #[cfg(feature = "dynamodb")]
    Dynamodb {
        data: PathBuf,
        table: String,
        bucket: String,
        s3: String,
        dynamodb: String,
    },
}

impl Backend {
    pub fn embedded(data: &Path) -> Backend {
        Backend::Embedded { data: data.into() }
    }

    /// A new table and a new, empty bucket, both named after `name` and
    /// the time (a bucket name is at most 63 characters: keep `name` short).
    #[cfg(feature = "dynamodb")]
    pub async fn dynamodb(data: &Path, name: &str) -> Backend {
        let unique = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let backend = Backend::Dynamodb {
            data: data.into(),
            table: format!("rave-cli-{name}-{unique}"),
            bucket: format!("rave-cli-{name}-{unique}"),
            s3: variable("RAVE_S3_ENDPOINT"),
            dynamodb: variable("RAVE_DYNAMODB_ENDPOINT"),
        };
        if let Backend::Dynamodb { bucket, s3, .. } = &backend {
            rave_media::S3Store::local(s3, bucket)
                .create_bucket()
                .await
                .expect("create the bucket");
        }
        backend
    }

    /// The media store `rave` keeps this backend's photos in, opened by the
    /// test itself: what is really on disk or in the bucket.
    pub fn media(&self) -> MediaStore {
        match self {
            Backend::Embedded { data } => {
                MediaStore::Disk(DiskStore::open(data.join("media")).expect("open <data>/media"))
            }
            #[cfg(feature = "dynamodb")]
            Backend::Dynamodb { bucket, s3, .. } => {
                MediaStore::S3(rave_media::S3Store::local(s3, bucket))
            }
        }
    }

    /// The ids of the photos the media store holds (whole or not).
    pub async fn stored_photos(&self) -> BTreeSet<String> {
        self.media()
            .photos()
            .await
            .expect("list the media store")
            .into_iter()
            .map(|photo| photo.id.as_str().to_owned())
            .collect()
    }

    /// How many renditions of photo `id` the media store holds.
    pub async fn renditions_of(&self, id: &str) -> usize {
        self.media()
            .list()
            .await
            .expect("list the media store")
            .iter()
            .filter(|key| key.id.as_str() == id)
            .count()
    }

    /// `rave <command>` on this backend: its data directory, and on
    /// DynamoDB the table, the bucket and their endpoints (options and
    /// environment as an operator gives them), then `extra`.
    pub fn command(&self, command: &str, extra: &[&str]) -> Command {
        let mut run = Command::new(RAVE);
        run.arg(command);
        match self {
            Backend::Embedded { data } => {
                run.arg("--data").arg(data);
            }
            #[cfg(feature = "dynamodb")]
            Backend::Dynamodb {
                data,
                table,
                bucket,
                s3,
                dynamodb,
            } => {
                run.arg("--data")
                    .arg(data)
                    .args(["--store", "dynamodb", "--table", table])
                    .args(["--media-bucket", bucket, "--media-endpoint", s3])
                    .env("AWS_ACCESS_KEY_ID", "local")
                    .env("AWS_SECRET_ACCESS_KEY", "local")
                    .env("AWS_EC2_METADATA_DISABLED", "true")
                    .env("RAVE_REGION", "us-east-1")
                    .env("RAVE_ENDPOINT", dynamodb);
            }
        }
        run.args(extra);
        run
    }

    /// `rave serve` on this backend, on a free port, without a rate limit.
    pub fn serve(&self, extra: &[&str]) -> Server {
        let mut args: Vec<OsString> = ["--addr", "127.0.0.1:0", "--rate-limit-per-minute", "0"]
            .iter()
            .map(Into::into)
            .collect();
        args.extend(extra.iter().map(Into::into));
        let mut command = self.command("serve", &[]);
        command.args(args);
        Server::start(command)
    }

    /// `rave reconcile` on this backend, which must succeed; its output.
    pub fn reconcile(&self, extra: &[&str]) -> String {
        let out = self
            .command("reconcile", extra)
            .output()
            .expect("run rave reconcile");
        assert!(
            out.status.success(),
            "rave reconcile {extra:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

/// An environment variable the DynamoDB tests need.
#[cfg(feature = "dynamodb")]
pub fn variable(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: run ./scripts/test.sh, which starts the servers")
    })
}

/// A comment post with photos (`multipart/form-data`): the `comment` part
/// holding its JSON, one `photo` part per file (name, bytes).
pub fn photo_form(comment: &Value, photos: &[(&str, Vec<u8>)]) -> Form {
    let mut form = Form::new().part(
        "comment",
        Part::text(comment.to_string())
            .mime_str("application/json")
            .expect("a media type"),
    );
    for (name, bytes) in photos {
        form = form.part(
            "photo",
            Part::bytes(bytes.clone())
                .file_name(name.to_string())
                .mime_str("image/jpeg")
                .expect("a media type"),
        );
    }
    form
}
