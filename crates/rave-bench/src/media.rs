//! BENCH.md's media row: photo uploads over HTTP (multipart, a 2 MB phone
//! photo), beside what checking and rendering the same photo costs in
//! process; and B7's page GETs on a data set where 30 % of the comments
//! carry photos, beside the trivial route, as B7 is measured.
//!
//! An upload is mostly CPU: the photo is decoded, resized and encoded four
//! times (`rave_media::process`) before anything is stored. The in-process
//! figure is that work alone on one core, so the ratio of the server's CPU
//! per upload to it is what HTTP, multipart parsing, storing the
//! renditions (fsync'd) and writing the comment add.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use rave_media::{CheckOptions, process, sample_photo};

use crate::http::{self, Server};
use crate::measure::{Latencies, show, si};
use crate::report::Row;
use crate::running::run_rave;

/// What the media row runs on.
#[derive(Debug)]
pub struct MediaArgs<'a> {
    pub rave: &'a Path,
    pub dir: &'a Path,
    /// Uploads per client, for each number of clients.
    pub uploads: usize,
    /// The data set B7 runs on, and the share of its comments with photos.
    pub products: u64,
    pub comments: u64,
    pub photo_share: f64,
    pub http_seconds: u64,
    pub seed: u64,
}

pub fn run(args: &MediaArgs) -> anyhow::Result<Vec<Row>> {
    let mut rows = uploads(args)?;
    rows.extend(pages(args)?);
    Ok(rows)
}

/// The same photo as a new file: a JPEG comment segment (COM) after the
/// start-of-image marker names the upload, so each upload is a new photo
/// id (a repeated one would be stored once) with the same pixels.
fn distinct(photo: &[u8], n: usize) -> Vec<u8> {
    let text = format!("rave-bench upload {n}");
    let length = u16::try_from(text.len() + 2).unwrap_or(u16::MAX);
    let mut bytes = Vec::with_capacity(photo.len() + text.len() + 4);
    bytes.extend_from_slice(&photo[..2]);
    bytes.extend_from_slice(&[0xFF, 0xFE]);
    bytes.extend_from_slice(&length.to_be_bytes());
    bytes.extend_from_slice(text.as_bytes());
    bytes.extend_from_slice(&photo[2..]);
    bytes
}

const BOUNDARY: &str = "rave-bench-boundary-7d1f";

/// A comment with one photo, as `multipart/form-data`.
fn multipart(photo: &[u8], n: usize) -> Vec<u8> {
    let comment = serde_json::json!({
        "author": format!("uploader{n}"),
        "language": "en",
        "rating": 5,
        "title": "Fits well",
        "body": "The colour is as shown; photo attached.",
    });
    let mut body = format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"comment\"\r\nContent-Type: application/json\r\n\r\n{comment}\r\n--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"IMG_{n}.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(photo);
    body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
    body
}

fn uploads(args: &MediaArgs) -> anyhow::Result<Vec<Row>> {
    let photo = sample_photo(4000, 3000, args.seed as u32);
    let megabytes = photo.len() as f64 / 1e6;
    println!("media: a {megabytes:.1} MB photo, 4000 × 3000; in process first");
    let mut in_process = Duration::MAX;
    for _ in 0..3 {
        let started = Instant::now();
        process(&photo, &CheckOptions::default()).context("the sample photo is refused")?;
        in_process = in_process.min(started.elapsed());
    }
    let data = args.dir.join("uploads");
    let (server, _) = Server::start(args.rave, &data, &args.dir.join("uploads.log"))?;
    let mut rows = Vec::new();
    let mut sent = 0;
    for clients in [1, 2] {
        println!(
            "media: {} uploads from {clients} client(s)",
            args.uploads * clients
        );
        let cpu_before = server.cpu_time()?;
        let started = Instant::now();
        let bodies: Vec<Vec<Vec<u8>>> = (0..clients)
            .map(|client| {
                (0..args.uploads)
                    .map(|i| {
                        let n = sent + client * args.uploads + i;
                        multipart(&distinct(&photo, n), n)
                    })
                    .collect()
            })
            .collect();
        sent += clients * args.uploads;
        let addr = server.addr;
        let content_type = format!("multipart/form-data; boundary={BOUNDARY}");
        let latencies = std::thread::scope(|scope| {
            let workers: Vec<_> = bodies
                .iter()
                .map(|bodies| {
                    let content_type = &content_type;
                    scope.spawn(move || -> anyhow::Result<Vec<Duration>> {
                        let mut taken = Vec::new();
                        for body in bodies {
                            let started = Instant::now();
                            let (status, answer) = http::post(
                                addr,
                                "/v1/products/photos/comments",
                                content_type,
                                body,
                                Duration::from_secs(120),
                            )?;
                            ensure!(status == 201, "an upload answered {status}: {answer}");
                            taken.push(started.elapsed());
                        }
                        Ok(taken)
                    })
                })
                .collect();
            let mut all = Vec::new();
            for worker in workers {
                all.extend(
                    worker
                        .join()
                        .map_err(|_| anyhow::anyhow!("an upload client panicked"))??,
                );
            }
            anyhow::Ok(Latencies::of(all))
        })?;
        let elapsed = started.elapsed();
        let cpu = server.cpu_time()? - cpu_before;
        let count = clients * args.uploads;
        let cpu_per_upload = cpu / count as u32;
        rows.push(
            Row::new(
                "media",
                format!(
                    "photo uploads (multipart: a comment and a {megabytes:.1} MB 4000 × 3000 JPEG), {clients} client(s), {count} uploads"
                ),
                format!(
                    "{:.2} uploads/s, p50 {}, p99 {}; server CPU {:.2} s per upload",
                    count as f64 / elapsed.as_secs_f64(),
                    show(latencies.p50()),
                    show(latencies.p99()),
                    cpu_per_upload.as_secs_f64()
                ),
            )
            .peers(format!(
                "in process, one thread: check and render the same photo (rave_media::process) {:.2} s",
                in_process.as_secs_f64()
            ))
            .ratio(cpu_per_upload.as_secs_f64() / in_process.as_secs_f64()),
        );
    }
    drop(server);
    Ok(rows)
}

/// B7 on the same data set twice, the second time with `photo_share` of
/// its comments carrying photos (the same comments, `rave load`'s photos
/// drawn from their own random stream): what photos cost a page.
fn pages(args: &MediaArgs) -> anyhow::Result<Vec<Row>> {
    let (pages_script, _) = http::write_scripts(args.dir)?;
    let mut rows = Vec::new();
    for share in [0.0, args.photo_share] {
        let data = args.dir.join(format!("pages-{share}"));
        let data_arg = data.to_string_lossy().into_owned();
        println!(
            "media: loading {} comments, {share} of them with photos",
            args.comments
        );
        run_rave(
            args.rave,
            &[
                "load",
                "--data",
                &data_arg,
                "--products",
                &args.products.to_string(),
                "--comments",
                &args.comments.to_string(),
                "--seed",
                &args.seed.to_string(),
                "--photos",
                &share.to_string(),
            ]
            .map(std::ffi::OsStr::new),
        )?;
        run_rave(
            args.rave,
            &["aggregate", "--data", &data_arg, "--until-caught-up"].map(std::ffi::OsStr::new),
        )?;
        let log = args.dir.join(format!("pages-{share}.log"));
        let (server, _) = Server::start(args.rave, &data, &log)?;
        let url = server.base_url();
        let ceiling = http::wrk(&format!("{url}/healthz"), None, args.http_seconds, 64)?;
        let b7 = http::wrk(&url, Some(&pages_script), args.http_seconds, 64)?;
        ensure!(b7.errors == 0, "B7 saw {} failed requests", b7.errors);
        let percent = (share * 100.0).round();
        rows.push(Row::new(
            "media",
            "the machine's ceiling: trivial route (/healthz), 64 connections",
            format!(
                "{} req/s, p99 {}",
                si(ceiling.requests_per_second),
                show(ceiling.p99)
            ),
        ));
        rows.push(
            Row::new(
                "media",
                format!(
                    "B7: page GETs, mixed filters (AP1–AP3, limit 20/50), 64 connections, {percent} % of comments carrying 1–3 photos"
                ),
                format!(
                    "{} req/s, p50 {}, p99 {}",
                    si(b7.requests_per_second),
                    show(b7.p50),
                    show(b7.p99)
                ),
            )
            .ratio(b7.requests_per_second / ceiling.requests_per_second)
            .target(
                "B7's: ≥ 0.5 of the trivial route's rate, p99 ≤ 2× its p99",
                b7.requests_per_second >= 0.5 * ceiling.requests_per_second
                    && b7.p99 <= 2 * ceiling.p99,
            ),
        );
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_upload_is_a_new_photo_of_the_same_pixels() {
        let photo = sample_photo(64, 48, 1);
        let (a, b) = (distinct(&photo, 1), distinct(&photo, 2));
        assert_ne!(
            rave_media::MediaId::of_upload(&a),
            rave_media::MediaId::of_upload(&b)
        );
        let options = CheckOptions::default();
        let checked = rave_media::check(&a, &options).expect("a comment segment is accepted");
        let original = rave_media::check(&photo, &options).unwrap();
        assert_eq!(checked.pixels, original.pixels);
    }
}
