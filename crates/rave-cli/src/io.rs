//! `rave import` and `rave export`: comments as NDJSON, one per line, in
//! the API's JSON shape. Both stream; neither holds the data set in memory.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, bail};
use rave_comments::{
    Comments, ImportComment, MAX_PAGE_SIZE, NewComment, Reply, Status, Timestamp, VoteCounts,
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
        Ok(ImportComment {
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

const BATCH: usize = 500;

pub async fn import(
    comments: &Comments<SharedStore>,
    file: &Path,
    skip_bad_lines: bool,
) -> anyhow::Result<()> {
    comments.ensure_table().await?;
    let (reader, size): (Box<dyn BufRead>, Option<u64>) = if file == Path::new("-") {
        (Box::new(BufReader::new(std::io::stdin())), None)
    } else {
        let handle =
            std::fs::File::open(file).with_context(|| format!("cannot open {}", file.display()))?;
        let size = handle.metadata().ok().map(|m| m.len());
        (Box::new(BufReader::new(handle)), size)
    };
    let bar = progress_bar(size, "importing (bytes)");
    let (mut imported, mut skipped) = (0u64, 0u64);
    let mut batch = Vec::with_capacity(BATCH);
    // Lines of the batch, to name the line when the store refuses one.
    let mut batch_lines = Vec::with_capacity(BATCH);
    for (index, line) in reader.lines().enumerate() {
        let number = index + 1;
        let line = line.with_context(|| format!("cannot read line {number}"))?;
        bar.inc(line.len() as u64 + 1);
        if line.trim().is_empty() {
            continue;
        }
        let parsed = serde_json::from_str::<Line>(&line)
            .map_err(anyhow::Error::from)
            .and_then(Line::into_import);
        match parsed {
            Ok(comment) => {
                batch.push(comment);
                batch_lines.push(number);
            }
            Err(error) if skip_bad_lines => {
                bar.suspend(|| eprintln!("line {number}: {error:#} (skipped)"));
                skipped += 1;
            }
            Err(error) => {
                bar.abandon();
                bail!(
                    "line {number}: {error:#} ({imported} comments imported before it; --skip-bad-lines goes on past bad lines)"
                );
            }
        }
        if batch.len() == BATCH {
            imported += flush(
                comments,
                &mut batch,
                &mut batch_lines,
                skip_bad_lines,
                &mut skipped,
            )
            .await?;
        }
    }
    imported += flush(
        comments,
        &mut batch,
        &mut batch_lines,
        skip_bad_lines,
        &mut skipped,
    )
    .await?;
    bar.finish_and_clear();
    println!("imported {imported} comments, skipped {skipped} bad lines");
    Ok(())
}

/// Imports a batch; if the domain refuses it, finds the offending lines one
/// by one so that each is reported with its number.
async fn flush(
    comments: &Comments<SharedStore>,
    batch: &mut Vec<ImportComment>,
    lines: &mut Vec<usize>,
    skip_bad_lines: bool,
    skipped: &mut u64,
) -> anyhow::Result<u64> {
    let entries = std::mem::take(batch);
    let numbers = std::mem::take(lines);
    if entries.is_empty() {
        return Ok(0);
    }
    if comments.import(entries.clone()).await.is_ok() {
        return Ok(entries.len() as u64);
    }
    let mut imported = 0;
    for (entry, number) in entries.into_iter().zip(numbers) {
        match comments.import(vec![entry]).await {
            Ok(_) => imported += 1,
            Err(error) if skip_bad_lines => {
                eprintln!("line {number}: {error} (skipped)");
                *skipped += 1;
            }
            Err(error) => bail!("line {number}: {error}"),
        }
    }
    Ok(imported)
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
            serde_json::to_writer(&mut out, comment)?;
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
