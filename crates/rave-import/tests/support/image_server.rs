//! A local HTTP server of the images an import fetches, good and bad,
//! counting the requests of each path: written on a bare TCP socket so each
//! answer can be exactly as bad as the case needs (a body that stalls, one
//! that runs past its limit without saying its length). Shared by the
//! import tests of rave-import, rave-server and rave-cli (`#[path]`).

#![allow(dead_code)] // each test file uses its own share of these

use std::collections::HashMap;
use std::io::Cursor;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the server answers, by path:
/// * `/good.jpg`, `/other.jpg` — two different JPEGs (640 × 480);
/// * `/page.jpg` — an HTML page named `.jpg`, served as `image/jpeg`;
/// * `/slow.jpg` — a JPEG's headers and a first few bytes, then nothing
///   for a minute;
/// * `/large.jpg` — 11 MiB without a `Content-Length` (the body ends
///   when the connection closes);
/// * `/declared-large.jpg` — a `Content-Length` of 11 MiB;
/// * `/to-good.jpg` — a redirect to `/good.jpg`;
/// * `/to-file.jpg` — a redirect to `file:///etc/passwd`;
/// * `/to-metadata.jpg` — a redirect to the cloud metadata address;
/// * `/to-loopback.jpg`, `/to-localhost.jpg` — redirects to `/good.jpg` on
///   this server by its loopback address and by the name `localhost`;
/// * anything else — 404.
#[derive(Debug, Clone)]
pub struct ImageServer {
    pub addr: SocketAddr,
    requests: Arc<Mutex<HashMap<String, usize>>>,
}

pub const LARGE: usize = 11 << 20;

/// A JPEG of `width` × `height` whose pixels depend on `seed`.
pub fn jpeg(width: u32, height: u32, seed: u8) -> Vec<u8> {
    let pixels = image::RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([
            (x % 256) as u8 ^ seed,
            (y % 256) as u8,
            ((x + y) % 256) as u8,
        ])
    });
    let mut bytes = Vec::new();
    image::DynamicImage::ImageRgb8(pixels)
        .write_to(&mut Cursor::new(&mut bytes), image::ImageFormat::Jpeg)
        .expect("encoding a test JPEG");
    bytes
}

impl ImageServer {
    pub async fn start() -> ImageServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let server = ImageServer {
            addr: listener.local_addr().unwrap(),
            requests: Arc::default(),
        };
        let images = Arc::new([jpeg(640, 480, 0), jpeg(640, 480, 0x5a)]);
        let requests = Arc::clone(&server.requests);
        let port = server.addr.port();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (images, requests) = (Arc::clone(&images), Arc::clone(&requests));
                tokio::spawn(async move {
                    // A client that hung up is no failure of the server.
                    let _ = answer(stream, port, &images, &requests).await;
                });
            }
        });
        server
    }

    /// The URL of `path` on this server.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// How many requests `path` got.
    pub fn requests(&self, path: &str) -> usize {
        self.requests
            .lock()
            .unwrap()
            .get(path)
            .copied()
            .unwrap_or(0)
    }

    /// How many requests the server got in all.
    pub fn all_requests(&self) -> usize {
        self.requests.lock().unwrap().values().sum()
    }

    /// The JPEG `/good.jpg` serves.
    pub fn good() -> Vec<u8> {
        jpeg(640, 480, 0)
    }
}

async fn answer(
    mut stream: TcpStream,
    port: u16,
    images: &[Vec<u8>; 2],
    requests: &Mutex<HashMap<String, usize>>,
) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).await? == 0 {
            return Ok(());
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head);
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
    *requests.lock().unwrap().entry(path.clone()).or_default() += 1;
    let ok = |length: Option<usize>| {
        let length = length.map_or(String::new(), |n| format!("content-length: {n}\r\n"));
        format!("HTTP/1.1 200 OK\r\ncontent-type: image/jpeg\r\n{length}connection: close\r\n\r\n")
    };
    let redirect = |to: &str| {
        format!(
            "HTTP/1.1 302 Found\r\nlocation: {to}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
        )
    };
    match path.as_str() {
        "/good.jpg" | "/other.jpg" => {
            let image = &images[usize::from(path == "/other.jpg")];
            stream.write_all(ok(Some(image.len())).as_bytes()).await?;
            stream.write_all(image).await?;
        }
        "/page.jpg" => {
            let page = b"<!doctype html><html><body><script>alert(1)</script></body></html>";
            stream.write_all(ok(Some(page.len())).as_bytes()).await?;
            stream.write_all(page).await?;
        }
        "/slow.jpg" => {
            stream
                .write_all(ok(Some(images[0].len())).as_bytes())
                .await?;
            stream.write_all(&images[0][..16]).await?;
            stream.flush().await?;
            tokio::time::sleep(Duration::from_secs(60)).await;
        }
        "/large.jpg" => {
            stream.write_all(ok(None).as_bytes()).await?;
            let chunk = vec![0xffu8; 64 << 10];
            for _ in 0..LARGE / chunk.len() {
                stream.write_all(&chunk).await?;
            }
        }
        "/declared-large.jpg" => {
            stream.write_all(ok(Some(LARGE)).as_bytes()).await?;
        }
        "/to-good.jpg" => stream.write_all(redirect("/good.jpg").as_bytes()).await?,
        "/to-file.jpg" => {
            stream
                .write_all(redirect("file:///etc/passwd").as_bytes())
                .await?
        }
        "/to-loopback.jpg" => {
            let to = format!("http://127.0.0.1:{port}/good.jpg");
            stream.write_all(redirect(&to).as_bytes()).await?
        }
        "/to-localhost.jpg" => {
            let to = format!("http://localhost:{port}/good.jpg");
            stream.write_all(redirect(&to).as_bytes()).await?
        }
        "/to-metadata.jpg" => {
            stream
                .write_all(redirect("http://169.254.169.254/latest/meta-data/").as_bytes())
                .await?
        }
        _ => {
            stream
                .write_all(
                    b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                )
                .await?
        }
    }
    stream.shutdown().await
}
