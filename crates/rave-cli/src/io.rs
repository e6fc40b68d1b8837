//! `rave import` and `rave export`: comments as NDJSON, one per line, in
//! the API's JSON shape, and shops' CSV exports in (`--from`, `--map`,
//! read by rave-import). Both stream; neither holds the data set in memory.
//! Both imports run through `rave_import::run`: the same batches, the same
//! idempotence (a comment already stored is left alone), the same reports.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, bail};
use rave_comments::{
    AttributeInput, Comments, Email, ImportComment, Language, MAX_PAGE_SIZE, NewComment, NewPhoto,
    PhotoId, PhotoStatus, Reply, Source, Status, Timestamp, VoteCounts,
};
use rave_import::{
    CsvImport, ImportPhotos, ImportRow, Mapping, Options, Platform, ProductMap, RowError,
};
use rave_store::SharedStore;
use serde::Deserialize;

use crate::progress::progress_bar;

/// One line of an NDJSON import: a comment as the API shows it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    #[serde(default)]
    id: Option<String>,
    product_id: String,
    author: String,
    language: String,
    rating: i64,
    #[serde(default)]
    title: Option<String>,
    body: String,
    created_at: String,
    #[serde(default)]
    status: Option<String>,
    /// The merchant's reply; absent or null when there is none.
    #[serde(default)]
    reply: Option<ReplyLine>,
    /// Absent in exports made before purchases were verified.
    #[serde(default)]
    verified_purchase: bool,
    #[serde(default)]
    helpful_votes: u64,
    #[serde(default)]
    unhelpful_votes: u64,
    /// The platform an imported comment came from.
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    image_urls: Vec<String>,
    /// Written for a reward; absent in exports made before it was kept.
    #[serde(default)]
    incentivized: bool,
    /// Only in an author's own export (`export --author`).
    #[serde(default)]
    email: Option<String>,
    /// Answers to the product's attributes (`{"quality": 4, "fit":
    /// "runs_small"}`), checked against its record's declaration.
    #[serde(default)]
    attributes: BTreeMap<String, AttributeInput>,
    /// Photos, as `export` writes them: the media store must hold each.
    #[serde(default)]
    media: Vec<PhotoLine>,
}

/// A photo of an exported comment.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PhotoLine {
    id: String,
    width: u32,
    height: u32,
    status: String,
}

impl PhotoLine {
    /// The photo of a comment that is imported pending or not. The domain
    /// gives an imported comment's photos its state (pending with it,
    /// published otherwise), so a photo still waiting for a moderator on a
    /// shown comment is refused rather than published by the import.
    fn into_photo(self, comment_pending: bool) -> anyhow::Result<NewPhoto> {
        let id = PhotoId::parse(&self.id)?;
        let status = [PhotoStatus::Published, PhotoStatus::Pending]
            .into_iter()
            .find(|status| status.as_str() == self.status);
        match status {
            Some(PhotoStatus::Published) => {}
            Some(PhotoStatus::Pending) if comment_pending => {}
            Some(PhotoStatus::Pending) => bail!(
                "the photo {id} waits for a moderator and its comment does not: importing it would publish the photo"
            ),
            None => bail!(
                "the photo {id}'s status {:?} is not published or pending",
                self.status
            ),
        }
        Ok(NewPhoto {
            id,
            width: self.width,
            height: self.height,
        })
    }
}

/// The merchant's reply, as the API shows it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplyLine {
    body: String,
    created_at: String,
    updated_at: String,
}

impl ReplyLine {
    fn into_reply(self) -> anyhow::Result<Reply> {
        Ok(Reply {
            body: self.body,
            created_at: Timestamp::parse(&self.created_at).context("reply.created_at")?,
            updated_at: Timestamp::parse(&self.updated_at).context("reply.updated_at")?,
        })
    }
}

impl Line {
    fn into_import(self) -> anyhow::Result<ImportComment> {
        let status = self
            .status
            .map(|s| {
                Status::parse(&s)
                    .with_context(|| format!("status {s:?} is not published, pending or flagged"))
            })
            .transpose()?;
        let reply = self.reply.map(ReplyLine::into_reply).transpose()?;
        let source = self.source.as_deref().map(Source::parse).transpose()?;
        let email = self.email.as_deref().map(Email::parse).transpose()?;
        let pending = status == Some(Status::Pending);
        let media = self
            .media
            .into_iter()
            .map(|photo| photo.into_photo(pending))
            .collect::<anyhow::Result<Vec<_>>>()
            .context("media")?;
        Ok(ImportComment {
            source,
            image_urls: self.image_urls,
            incentivized: self.incentivized,
            email,
            product: self.product_id,
            id: self.id,
            status,
            reply,
            verified_purchase: self.verified_purchase,
            votes: VoteCounts {
                helpful: self.helpful_votes,
                unhelpful: self.unhelpful_votes,
            },
            comment: NewComment {
                media,
                attributes: self.attributes,
                author: self.author,
                language: self.language,
                rating: self.rating,
                title: self.title,
                body: self.body,
                created_at: Some(Timestamp::parse(&self.created_at)?),
            },
        })
    }
}

/// Where an import reads from, and how.
#[derive(Debug)]
pub struct ImportFrom<'a> {
    /// A file, or `-` for standard input.
    pub file: &'a Path,
    /// `--from`: the platform whose CSV export the file is.
    pub platform: Option<&'a str>,
    /// `--map COLUMN=FIELD`: columns of a CSV (added to `--from`'s).
    pub map: &'a [String],
    pub language: Option<&'a str>,
    pub product_map: Option<&'a Path>,
    pub skip_bad_lines: bool,
    /// Where rows' photos go, and whether image URLs are fetched.
    pub photos: &'a ImportPhotos,
}

impl ImportFrom<'_> {
    fn is_csv(&self) -> bool {
        self.platform.is_some() || !self.map.is_empty()
    }

    /// The CSV options `--from`, `--map`, `--language` and `--product-map`
    /// make.
    fn csv_options(&self) -> anyhow::Result<Options> {
        let mut mapping = match self.platform {
            Some(name) => Platform::parse(name)
                .with_context(|| {
                    let names: Vec<_> = Platform::ALL.iter().map(|p| p.name()).collect();
                    format!("--from {name:?}: not one of {}", names.join(", "))
                })?
                .mapping(),
            None => Mapping::generic(),
        };
        for assignment in self.map {
            mapping.add(assignment)?;
        }
        let products = match self.product_map {
            Some(path) => ProductMap::read(
                std::fs::File::open(path)
                    .with_context(|| format!("cannot open {}", path.display()))?,
            )?,
            None => ProductMap::default(),
        };
        Ok(Options {
            mapping,
            default_language: self
                .language
                .map(Language::parse)
                .transpose()
                .context("--language")?,
            products,
        })
    }
}

/// Rows `rave import` stores per call of the domain: 800 BatchWriteItems
/// in flight, which the writer commits together (a server's import takes
/// 500 rows at a time, see `rave_import::BATCH`). 200 k comments: 3.7 k/s
/// in batches of 500, 6.3 k/s in batches of 20,000 (BENCHMARKS.md, B5).
const OFFLINE_IMPORT_BATCH: usize = 20_000;

pub async fn import(comments: &Comments<SharedStore>, from: &ImportFrom<'_>) -> anyhow::Result<()> {
    comments.ensure_table().await?;
    let reader: Box<dyn BufRead + Send> = if from.file == Path::new("-") {
        Box::new(BufReader::new(std::io::stdin()))
    } else {
        let handle = std::fs::File::open(from.file)
            .with_context(|| format!("cannot open {}", from.file.display()))?;
        Box::new(BufReader::new(handle))
    };
    let rows: Box<dyn Iterator<Item = Result<ImportRow, RowError>> + Send> = if from.is_csv() {
        Box::new(CsvImport::new(reader, from.csv_options()?)?)
    } else {
        Box::new(ndjson_rows(reader))
    };
    let bar = progress_bar(None, "importing (rows)");
    let mut report = |progress: &rave_import::Progress| {
        bar.set_position(progress.rows_read);
        for error in &progress.latest_errors {
            bar.suspend(|| eprintln!("{error} (skipped)"));
        }
    };
    let run = rave_import::run_in_batches(
        comments,
        rows,
        OFFLINE_IMPORT_BATCH,
        from.skip_bad_lines,
        Some(from.photos),
        &mut report,
    );
    let progress = match run.await {
        Ok(progress) => progress,
        Err((error, progress)) => {
            bar.abandon();
            bail!(
                "{error} ({} comments imported before it)",
                progress.imported
            );
        }
    };
    bar.finish_and_clear();
    println!(
        "imported {} comments, skipped {} bad lines, {} already there, {} photos stored",
        progress.imported, progress.skipped, progress.already_present, progress.photos
    );
    Ok(())
}

/// The lines of an NDJSON import as rows (blank lines are no rows).
fn ndjson_rows(
    reader: impl BufRead + Send,
) -> impl Iterator<Item = Result<ImportRow, RowError>> + Send {
    reader
        .lines()
        .enumerate()
        .filter(|(_, line)| line.as_ref().map_or(true, |l| !l.trim().is_empty()))
        .map(|(index, line)| {
            let line_number = index as u64 + 1;
            let failed = |error: anyhow::Error| RowError {
                line: line_number,
                field: None,
                reason: format!("{error:#}"),
            };
            let text = line.map_err(|e| failed(e.into()))?;
            serde_json::from_str::<Line>(&text)
                .map_err(anyhow::Error::from)
                .and_then(Line::into_import)
                .map(|comment| ImportRow::new(line_number, comment))
                .map_err(failed)
        })
}

/// Where an export writes: the file, or standard output.
fn export_output(output: Option<&Path>) -> anyhow::Result<Box<dyn Write>> {
    Ok(match output {
        Some(path) => Box::new(BufWriter::new(
            std::fs::File::create(path)
                .with_context(|| format!("cannot create {}", path.display()))?,
        )),
        None => Box::new(BufWriter::new(std::io::stdout().lock())),
    })
}

/// Exports every comment of `author` (exactly that value, any status),
/// newest first, from the author index: a person's data, as `export`
/// writes comments.
pub async fn export_author(
    comments: &Comments<SharedStore>,
    author: &str,
    output: Option<&Path>,
) -> anyhow::Result<()> {
    let mut out = export_output(output)?;
    let mut cursor = None;
    let mut count = 0u64;
    loop {
        let page = comments
            .author_comments(author, MAX_PAGE_SIZE, cursor.as_deref())
            .await?;
        for comment in &page.items {
            // The data subject's own export is the one place their email
            // (kept apart from the comment) is written.
            let mut line = serde_json::to_value(comment)?;
            if let (Some(email), Some(fields)) = (
                comments.author_email(&comment.id).await?,
                line.as_object_mut(),
            ) {
                fields.insert("email".into(), email.as_str().into());
            }
            serde_json::to_writer(&mut out, &line)?;
            out.write_all(b"\n")?;
            count += 1;
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    out.flush()?;
    eprintln!("exported {count} comments of {author:?}");
    Ok(())
}

pub async fn export(
    comments: &Arc<Comments<SharedStore>>,
    output: Option<&Path>,
) -> anyhow::Result<()> {
    let mut out = export_output(output)?;
    let bar = progress_bar(None, "exporting");
    const SEGMENTS: u32 = 4;
    // Scan the segments in parallel; one writer keeps lines whole.
    let (sender, mut receiver) = tokio::sync::mpsc::channel::<Vec<rave_comments::Comment>>(16);
    let mut scanners = Vec::new();
    for segment in 0..SEGMENTS {
        let sender = sender.clone();
        let comments = comments.clone();
        scanners.push(tokio::spawn(async move {
            let mut start = None;
            loop {
                let (page, next) = comments.export_page(segment, SEGMENTS, start).await?;
                if sender.send(page).await.is_err() {
                    return anyhow::Ok(());
                }
                match next {
                    Some(position) => start = Some(position),
                    None => return Ok(()),
                }
            }
        }));
    }
    drop(sender);
    let mut count = 0u64;
    while let Some(page) = receiver.recv().await {
        for comment in page {
            serde_json::to_writer(&mut out, &comment)?;
            out.write_all(b"\n")?;
            count += 1;
        }
        bar.set_position(count);
    }
    for scanner in scanners {
        scanner.await??;
    }
    out.flush()?;
    bar.finish_and_clear();
    eprintln!("exported {count} comments");
    Ok(())
}
