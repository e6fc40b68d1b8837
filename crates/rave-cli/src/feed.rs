//! The feeds' settings (`--public-url`, `--feed-publisher`, shared by
//! `serve` and `export`) and `rave export --format google-product-reviews`:
//! the document `GET /v1/feeds/google-product-reviews.xml` answers, from
//! the same generator (`rave_server::feeds`), written as the store is read.

use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::Context;
use clap::Args;
use rave_comments::Comments;
use rave_server::MediaLinks;
use rave_server::feeds::{FeedSink, FeedSite, write_feed};
use rave_store::SharedStore;

#[derive(Debug, Args)]
pub struct FeedArgs {
    /// The address the public reaches rave at (such as
    /// https://reviews.shop.example): feeds name rave's product pages and
    /// comment anchors under it. Without it `serve` answers the feeds 404.
    #[arg(long, env = "RAVE_PUBLIC_URL", value_name = "URL")]
    public_url: Option<String>,
    /// The publisher a feed names (the shop); the public URL's host by
    /// default.
    #[arg(long, env = "RAVE_FEED_PUBLISHER", value_name = "NAME")]
    feed_publisher: Option<String>,
}

impl FeedArgs {
    /// The feeds' site, when `--public-url` is given.
    pub fn site(&self) -> anyhow::Result<Option<FeedSite>> {
        self.public_url
            .as_deref()
            .map(|url| FeedSite::new(url, self.feed_publisher.as_deref()))
            .transpose()
            .map_err(anyhow::Error::from)
    }

    /// Where webhook payloads name photos: rave's own `/media` under the
    /// public URL, when one is given (a relative path means nothing to a
    /// receiver).
    pub fn media_links(&self) -> anyhow::Result<Option<MediaLinks>> {
        Ok(self
            .site()?
            .map(|site| site.media_links(&MediaLinks::default())))
    }
}

/// A file or standard output, written chunk by chunk.
struct WriterSink(BufWriter<Box<dyn Write + Send>>);

impl FeedSink for WriterSink {
    async fn write(&mut self, chunk: Vec<u8>) -> std::io::Result<()> {
        self.0.write_all(&chunk)
    }
}

/// Writes Google's Product Reviews Feed of every comment to `output`
/// (standard output by default).
pub async fn export_google_product_reviews(
    comments: &Comments<SharedStore>,
    feed: &FeedArgs,
    output: Option<&Path>,
) -> anyhow::Result<()> {
    let site = feed.site()?.context(
        "--format google-product-reviews needs --public-url (the address the public reaches rave at): the feed links to rave's product pages",
    )?;
    let out: Box<dyn Write + Send> = match output {
        Some(path) => Box::new(
            std::fs::File::create(path)
                .with_context(|| format!("cannot create {}", path.display()))?,
        ),
        None => Box::new(std::io::stdout()),
    };
    let mut sink = WriterSink(BufWriter::new(out));
    // Photos under rave's own /media at the public URL: `--media-url` is a
    // `serve` option, so a feed naming a bucket's or CDN's URLs is the
    // served one.
    let links = site.media_links(&MediaLinks::default());
    let summary = write_feed(comments, &site, &links, &mut sink).await?;
    sink.0.flush()?;
    eprintln!(
        "exported {} reviews ({} held as spam); left out {} whose text is only characters XML forbids",
        summary.reviews, summary.spam, summary.without_text
    );
    Ok(())
}
