//! `rave import`'s photos through the binary, from a local image server:
//! a row's image becomes its comment's photo in `<data>/media` (the
//! export shows it as `media`); a page named `.jpg`, a stalled body and
//! one past 10 MiB refuse their rows by line, fatal or skipped; a second
//! import fetches and creates nothing; loopback is refused without
//! `--import-allow-private`; `--no-fetch-images` keeps the URLs; an
//! export's photos import back into a store that holds them, and are
//! refused row by row by one that does not; `rave serve
//! --import-allow-private` fetches an uploaded import's photos into its
//! data directory.

mod common;
#[path = "../../rave-import/tests/support/image_server.rs"]
mod image_server;

use std::path::Path;
use std::process::{Command, Output};

use common::RAVE;
use image_server::ImageServer;
use rave_media::MediaId;
use serde_json::Value;

/// Runs rave off the async threads, so the image server keeps serving.
async fn rave(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || Command::new(RAVE).args(&args).output().expect("run rave"))
        .await
        .unwrap()
}

async fn import(data: &Path, file: &Path, extra: &[&str]) -> Output {
    let mut args: Vec<String> = ["import", "--data", data.to_str().unwrap()]
        .map(str::to_owned)
        .to_vec();
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    args.push(file.to_str().unwrap().to_owned());
    rave(args).await
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The store's comments as `rave export` writes them, by author.
async fn exported(data: &Path) -> Vec<Value> {
    let out = rave(vec![
        "export".into(),
        "--data".into(),
        data.to_str().unwrap().into(),
    ])
    .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut comments: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    comments.sort_by_key(|c| c["author"].as_str().unwrap().to_owned());
    comments
}

const FROM_OKENDO: [&str; 4] = ["--from", "okendo", "--language", "en"];
const ALLOW_LOOPBACK: [&str; 3] = ["--import-allow-private", "--import-fetch-timeout", "1"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_fetches_good_photos_once_and_refuses_bad_rows_by_line() {
    let images = ImageServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("store");
    let file = dir.path().join("reviews.csv");
    std::fs::write(
        &file,
        format!(
            "name,body,handle,rating,dateCreated,imageUrls\n\
             Ann,Fine.,mug,5,2024-03-01,{}\n\
             Bo,A page.,mug,4,2024-03-02,{}\n\
             Cy,Slow.,mug,3,2024-03-03,{}\n\
             Di,Large.,mug,2,2024-03-04,{}\n\
             Ed,Moved.,mug,5,2024-03-05,{}\n",
            images.url("/good.jpg"),
            images.url("/page.jpg"),
            images.url("/slow.jpg"),
            images.url("/large.jpg"),
            images.url("/to-good.jpg"),
        ),
    )
    .unwrap();
    let fetching = [&FROM_OKENDO[..], &ALLOW_LOOPBACK[..]].concat();

    // Fatal: the rows before the bad one are imported, and only theirs.
    let out = import(&data, &file, &fetching).await;
    let stderr = text(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("line 3: image_urls: image 1 of 1: the file is markup"),
        "{stderr}"
    );
    assert!(
        stderr.contains("(1 comments imported before it)"),
        "{stderr}"
    );

    // Skipping: each bad row reported by line, the good ones imported.
    let skipping = [&fetching[..], &["--skip-bad-lines"]].concat();
    let out = import(&data, &file, &skipping).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout
            .contains("imported 1 comments, skipped 3 bad lines, 1 already there, 1 photos stored"),
        "{stdout}"
    );
    let stderr = text(&out.stderr);
    for reported in [
        "line 3: image_urls: image 1 of 1: the file is markup",
        "line 4: image_urls: image 1 of 1: took longer than 1 s",
        "line 5: image_urls: image 1 of 1: runs past the 10485760 bytes accepted",
    ] {
        assert!(stderr.contains(reported), "{reported}: {stderr}");
    }

    let photo = MediaId::of_upload(&ImageServer::good());
    let comments = exported(&data).await;
    let shown: Vec<(&str, &Value)> = comments
        .iter()
        .map(|c| (c["author"].as_str().unwrap(), &c["media"]))
        .collect();
    let expected = serde_json::json!([{
        "id": photo.as_str(), "width": 640, "height": 480, "status": "published"
    }]);
    assert_eq!(shown, [("Ann", &expected), ("Ed", &expected)]);
    assert!(comments.iter().all(|c| c.get("image_urls").is_none()));
    for rendition in ["display.webp", "display.jpg", "thumb.webp", "thumb.jpg"] {
        let path = data.join("media").join(photo.as_str()).join(rendition);
        assert!(path.is_file(), "{}", path.display());
    }

    // Again: nothing fetched for the stored rows, nothing created.
    let fetched = ["/good.jpg", "/to-good.jpg"].map(|path| images.requests(path));
    let out = import(&data, &file, &skipping).await;
    assert!(
        text(&out.stdout)
            .contains("imported 0 comments, skipped 3 bad lines, 2 already there, 0 photos stored"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(
        ["/good.jpg", "/to-good.jpg"].map(|path| images.requests(path)),
        fetched
    );
    assert_eq!(exported(&data).await, comments);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loopback_is_refused_without_the_flag_and_no_fetch_keeps_the_url() {
    let images = ImageServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("store");
    let file = dir.path().join("reviews.csv");
    std::fs::write(
        &file,
        format!(
            "name,body,handle,rating,dateCreated,imageUrls\n\
             Ann,Fine.,mug,5,2024-03-01,{}\n",
            images.url("/good.jpg"),
        ),
    )
    .unwrap();
    let out = import(&data, &file, &FROM_OKENDO).await;
    let stderr = text(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains(
            "line 2: image_urls: image 1 of 1: 127.0.0.1 resolves to 127.0.0.1, a loopback"
        ),
        "{stderr}"
    );
    assert_eq!(images.all_requests(), 0);

    let keeping = [&FROM_OKENDO[..], &["--no-fetch-images"]].concat();
    let out = import(&data, &file, &keeping).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let comments = exported(&data).await;
    assert_eq!(comments[0]["image_urls"][0], images.url("/good.jpg"));
    assert!(comments[0].get("media").is_none(), "{}", comments[0]);
    assert_eq!(images.all_requests(), 0);
}

/// Copies the renditions under `from` to `to` (a store's `media/`).
fn copy_media(from: &Path, to: &Path) {
    for photo in std::fs::read_dir(from).unwrap() {
        let photo = photo.unwrap();
        let target = to.join(photo.file_name());
        std::fs::create_dir_all(&target).unwrap();
        for rendition in std::fs::read_dir(photo.path()).unwrap() {
            let rendition = rendition.unwrap();
            std::fs::copy(rendition.path(), target.join(rendition.file_name())).unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exported_photos_import_back_only_where_the_store_holds_them() {
    let images = ImageServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (dir.path().join("first"), dir.path().join("second"));
    let file = dir.path().join("reviews.csv");
    std::fs::write(
        &file,
        format!(
            "name,body,handle,rating,dateCreated,imageUrls\n\
             Ann,Fine.,mug,5,2024-03-01,{}\n",
            images.url("/good.jpg"),
        ),
    )
    .unwrap();
    let fetching = [&FROM_OKENDO[..], &ALLOW_LOOPBACK[..]].concat();
    let out = import(&first, &file, &fetching).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let export = dir.path().join("export.ndjson");
    let out = rave(vec![
        "export".into(),
        "--data".into(),
        first.to_str().unwrap().into(),
        "--output".into(),
        export.to_str().unwrap().into(),
    ])
    .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let line = std::fs::read_to_string(&export).unwrap();
    let photo = MediaId::of_upload(&ImageServer::good());
    assert!(line.contains(photo.as_str()), "{line}");
    // A second line: the same photo still waiting for a moderator on a
    // shown comment, which an import would publish.
    let mut waiting: Value = serde_json::from_str(line.trim()).unwrap();
    waiting["id"] = Value::Null;
    waiting["author"] = "Bo".into();
    waiting["media"][0]["status"] = "pending".into();
    std::fs::write(&export, format!("{}{}\n", line, waiting)).unwrap();

    // A store without the photo refuses the row, with the reason.
    let out = import(&second, &export, &["--skip-bad-lines"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "line 1: media: the photo {} is not in this server's media store",
            photo.as_str()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("line 2: media: the photo")
            && stderr.contains("importing it would publish the photo"),
        "{stderr}"
    );
    assert!(exported(&second).await.is_empty());

    // Once the store holds it, the comment imports with its photo.
    copy_media(&first.join("media"), &second.join("media"));
    let out = import(&second, &export, &["--skip-bad-lines"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("imported 1 comments, skipped 1 bad lines"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(exported(&second).await, exported(&first).await);
    assert_eq!(images.requests("/good.jpg"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_fetches_an_uploaded_imports_photos_when_allowed() {
    const TOKEN: &str = "import-photos-token";
    let images = ImageServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("store");
    let mut server = common::serve(
        &data,
        &[
            "--admin-token",
            TOKEN,
            "--import-allow-private",
            "--import-fetch-timeout",
            "1",
        ],
    );
    let client = reqwest::Client::new();
    let csv = format!(
        "name,body,handle,rating,dateCreated,imageUrls\n\
         Ann,Fine.,mug,5,2024-03-01,{}\n\
         Bo,A page.,mug,4,2024-03-02,{}\n",
        images.url("/good.jpg"),
        images.url("/page.jpg"),
    );
    let started = client
        .post(format!(
            "{}/v1/admin/imports?from=okendo&language=en&skip_bad_lines=true",
            server.base
        ))
        .bearer_auth(TOKEN)
        .header("content-type", "text/csv")
        .body(csv)
        .send()
        .await
        .unwrap();
    assert_eq!(started.status(), reqwest::StatusCode::ACCEPTED);
    let location = started.headers()["location"].to_str().unwrap().to_owned();
    let job = loop {
        let job: Value = client
            .get(format!("{}{location}", server.base))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if job["state"] != "running" {
            break job;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(
        (&job["imported"], &job["skipped"], &job["photos"]),
        (&1.into(), &1.into(), &1.into()),
        "{job}"
    );
    assert_eq!(job["errors"][0]["line"], 3, "{job}");
    let photo = MediaId::of_upload(&ImageServer::good());
    let served = client
        .get(format!(
            "{}/media/{}/thumb.webp",
            server.base,
            photo.as_str()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(served.status(), reqwest::StatusCode::OK);
    assert_eq!(server.terminate().code(), Some(0));
    assert!(
        data.join("media")
            .join(photo.as_str())
            .join("display.jpg")
            .is_file()
    );
}
