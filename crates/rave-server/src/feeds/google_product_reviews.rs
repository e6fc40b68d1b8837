//! Google's Product Reviews Feed, schema version 2.4
//! (<https://developers.google.com/product-review-feeds/schema>; the tests
//! validate against a copy of the schema, see
//! `tests/fixtures/google-product-reviews/README.md`).
//!
//! What it holds. A full feed replaces everything Google holds of the shop,
//! so it carries every comment a shopper can see — published and flagged —
//! and the ones a moderation rule or the moderation hook held (`pending`
//! with `held_by`), marked `is_spam`. Comments waiting for a person's
//! approval without a rule's verdict (pre-moderation) are not published yet
//! and stay out; rejected and erased comments no longer exist. Each review
//! carries the comment's id, author, time, title, text, rating,
//! `is_verified_purchase`, `collection_method` (`post_fulfillment` for a
//! review posted through a review request's link, else `unsolicited`) and
//! its product: name, identifiers (GTINs, MPNs,
//! SKUs, brand) and page, and `is_incentivized_review` (the comment's
//! `incentivized`, set by staff, an import or the purchase proof; the
//! schema places it right after `is_verified_purchase`), and the
//! comment's published photos as `reviewer_images` (each a
//! `reviewer_image` with its `url`, the display size in JPEG; the schema
//! places them after `review_url` and wants an absolute http(s) URL, so
//! photos are named under the public URL unless a bucket or CDN serves
//! them). The merchant's reply is not part of a review. `review_url` (type `singleton`) is the
//! comment's anchor on rave's product page, `product_url` the record's page
//! in the shop, else rave's product page.
//!
//! Text. Every value goes through quick-xml's escaping (`<`, `>`, `&`, `'`,
//! `"`), so no text can close an element or open markup (`]]>` included).
//! Characters XML 1.0 forbids (`Char` in the XML 1.0 specification: the C0
//! controls other than tab, line feed and carriage return, and U+FFFE,
//! U+FFFF) are stripped; everything else, emoji and bidirectional marks
//! included, is written as UTF-8. A name that is empty once stripped is
//! written as "Anonymous" with `is_anonymous`; a comment whose text is empty
//! once stripped is left out (the schema requires content) and counted.
//!
//! Streaming. The store is scanned a page at a time (as `rave export`
//! does), and each page's XML is handed to the sink before the next page is
//! read, so memory holds one page and the product records read last (at
//! most [`KNOWN_PRODUCTS`]), whatever the number of reviews.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::sync::Arc;

use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use rave_comments::{
    Comment, Comments, CommentsError, ExportPosition, ProductId, ProductOverview, Status,
};
use rave_media::{Encoding, Size};
use rave_store::SharedStore;

use super::site::FeedSite;
use crate::media::MediaLinks;

/// The schema version the feed declares.
const VERSION: &str = "2.4";
const SCHEMA_LOCATION: &str =
    "http://www.google.com/shopping/reviews/schema/product/2.4/product_reviews.xsd";

/// Product overviews kept while the scan runs; past it they are forgotten
/// and read again when needed, so memory stays bounded.
const KNOWN_PRODUCTS: usize = 4096;

/// Where the feed's bytes go, a chunk at a time, in order.
pub trait FeedSink: Send {
    /// Takes the next chunk; an error stops the feed.
    fn write(&mut self, chunk: Vec<u8>) -> impl Future<Output = io::Result<()>> + Send;
}

/// Why a feed stopped before its end.
#[derive(Debug, thiserror::Error)]
pub enum FeedError {
    #[error(transparent)]
    Comments(#[from] CommentsError),
    /// The sink refused a chunk (a closed connection, a full disk).
    #[error("cannot write the feed: {0}")]
    Write(#[from] io::Error),
}

/// What a written feed holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FeedSummary {
    pub reviews: u64,
    /// Held by a rule or the hook: in the feed with `is_spam`.
    pub spam: u64,
    /// Left out because their text is empty once the characters XML
    /// forbids are stripped.
    pub without_text: u64,
}

/// Writes the whole feed of every comment in the store to `sink`, naming
/// photos by `links` (absolute: a feed is read elsewhere).
pub async fn write_feed(
    comments: &Comments<SharedStore>,
    site: &FeedSite,
    links: &MediaLinks,
    sink: &mut impl FeedSink,
) -> Result<FeedSummary, FeedError> {
    let mut xml = Writer::new(Vec::new());
    head(&mut xml, site)?;
    let mut products = Products::default();
    let mut summary = FeedSummary::default();
    let mut reviews_open = false;
    let mut start: Option<ExportPosition> = None;
    loop {
        let (page, next) = comments.export_page(0, 1, start.take()).await?;
        for comment in &page {
            let Some(spam) = in_feed(comment) else {
                continue;
            };
            let Some(content) = text_of(&comment.body) else {
                summary.without_text += 1;
                continue;
            };
            // The schema wants at least one review inside <reviews>, so it
            // opens with the first.
            if !reviews_open {
                xml.write_event(Event::Start(BytesStart::new("reviews")))?;
                reviews_open = true;
            }
            let product = products.get(comments, &comment.product_id).await?;
            review(&mut xml, site, links, comment, &content, spam, &product)?;
            summary.reviews += 1;
            summary.spam += u64::from(spam);
        }
        sink.write(std::mem::take(xml.get_mut())).await?;
        match next {
            Some(position) => start = Some(position),
            None => break,
        }
    }
    if reviews_open {
        xml.write_event(Event::End(BytesEnd::new("reviews")))?;
    }
    xml.write_event(Event::End(BytesEnd::new("feed")))?;
    xml.get_mut().push(b'\n');
    sink.write(std::mem::take(xml.get_mut())).await?;
    Ok(summary)
}

/// Whether a comment belongs in the feed, and if so whether it is spam.
fn in_feed(comment: &Comment) -> Option<bool> {
    match comment.status {
        Status::Published | Status::Flagged => Some(false),
        Status::Pending if comment.held_by.is_some() => Some(true),
        Status::Pending => None,
    }
}

/// Whether XML 1.0 allows `c` in a document (its `Char` production; a Rust
/// `char` is never a surrogate).
fn allowed_in_xml(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// `text` without the characters XML forbids, or `None` when nothing but
/// XML white space is left (the schema's `nonEmptyStringType`).
fn text_of(text: &str) -> Option<String> {
    let kept: String = text.chars().filter(|&c| allowed_in_xml(c)).collect();
    kept.chars()
        .any(|c| !matches!(c, ' ' | '\t' | '\n' | '\r'))
        .then_some(kept)
}

fn head(xml: &mut Writer<Vec<u8>>, site: &FeedSite) -> io::Result<()> {
    xml.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    xml.get_mut().push(b'\n');
    xml.write_event(Event::Start(BytesStart::new("feed").with_attributes([
        ("xmlns:vc", "http://www.w3.org/2007/XMLSchema-versioning"),
        ("xmlns:xsi", "http://www.w3.org/2001/XMLSchema-instance"),
        ("xsi:noNamespaceSchemaLocation", SCHEMA_LOCATION),
    ])))?;
    element(xml, "version", VERSION)?;
    xml.create_element("publisher")
        .write_inner_content(|xml| element(xml, "name", &site.publisher))?;
    Ok(())
}

fn element(xml: &mut Writer<Vec<u8>>, name: &str, text: &str) -> io::Result<()> {
    xml.create_element(name)
        .write_text_content(BytesText::new(text))?;
    Ok(())
}

fn review(
    xml: &mut Writer<Vec<u8>>,
    site: &FeedSite,
    links: &MediaLinks,
    comment: &Comment,
    content: &str,
    spam: bool,
    product: &ProductOverview,
) -> io::Result<()> {
    xml.create_element("review").write_inner_content(|xml| {
        element(xml, "review_id", &comment.id)?;
        xml.create_element("reviewer").write_inner_content(|xml| {
            match text_of(&comment.author) {
                Some(name) => element(xml, "name", &name),
                None => {
                    xml.create_element("name")
                        .with_attribute(("is_anonymous", "true"))
                        .write_text_content(BytesText::new("Anonymous"))?;
                    Ok(())
                }
            }
        })?;
        element(
            xml,
            "is_verified_purchase",
            bool_text(comment.verified_purchase),
        )?;
        element(
            xml,
            "is_incentivized_review",
            bool_text(comment.incentivized),
        )?;
        element(xml, "review_timestamp", &comment.created_at.to_string())?;
        if let Some(title) = text_of(&comment.title) {
            element(xml, "title", &title)?;
        }
        element(xml, "content", content)?;
        xml.create_element("review_url")
            .with_attribute(("type", "singleton"))
            .write_text_content(BytesText::new(&site.comment_url(comment)))?;
        reviewer_images(xml, links, comment)?;
        xml.create_element("ratings").write_inner_content(|xml| {
            xml.create_element("overall")
                .with_attributes([("min", "1"), ("max", "5")])
                .write_text_content(BytesText::new(&comment.rating.to_string()))?;
            Ok(())
        })?;
        xml.create_element("products").write_inner_content(|xml| {
            xml.create_element("product")
                .write_inner_content(|xml| product_element(xml, site, product))?;
            Ok(())
        })?;
        element(xml, "is_spam", bool_text(spam))?;
        let collected = match &comment.source {
            Some(source) if source.is_review_request() => "post_fulfillment",
            _ => "unsolicited",
        };
        element(xml, "collection_method", collected)
    })?;
    Ok(())
}

/// The comment's published photos, if it has any (the schema wants at
/// least one `reviewer_image` inside `reviewer_images`).
fn reviewer_images(
    xml: &mut Writer<Vec<u8>>,
    links: &MediaLinks,
    comment: &Comment,
) -> io::Result<()> {
    let mut published = comment.media.iter().filter(|p| p.is_published()).peekable();
    if published.peek().is_none() {
        return Ok(());
    }
    xml.create_element("reviewer_images")
        .write_inner_content(|xml| {
            published.try_for_each(|photo| {
                xml.create_element("reviewer_image")
                    .write_inner_content(|xml| {
                        element(
                            xml,
                            "url",
                            &links.url(&photo.id, Size::Display, Encoding::Jpeg),
                        )
                    })?;
                Ok(())
            })
        })?;
    Ok(())
}

fn product_element(
    xml: &mut Writer<Vec<u8>>,
    site: &FeedSite,
    product: &ProductOverview,
) -> io::Result<()> {
    let record = product.record.clone().unwrap_or_default();
    let brands: Vec<String> = record.brand.into_iter().collect();
    let lists = [
        ("gtins", "gtin", &record.gtins),
        ("mpns", "mpn", &record.mpns),
        ("skus", "sku", &record.skus),
        ("brands", "brand", &brands),
    ];
    if lists.iter().any(|(_, _, values)| !values.is_empty()) {
        xml.create_element("product_ids")
            .write_inner_content(|xml| {
                for (list, item, values) in lists {
                    if values.is_empty() {
                        continue;
                    }
                    xml.create_element(list).write_inner_content(|xml| {
                        values
                            .iter()
                            .try_for_each(|value| element(xml, item, value))
                    })?;
                }
                Ok(())
            })?;
    }
    if let Some(name) = text_of(product.name()) {
        element(xml, "product_name", &name)?;
    }
    let url = match record.url {
        Some(url) => url,
        None => site.product_url(&product.product_id),
    };
    element(xml, "product_url", &url)
}

fn bool_text(value: bool) -> &'static str {
    if value { "true" } else { "false" }
}

/// The product overviews read during one feed, at most [`KNOWN_PRODUCTS`].
#[derive(Default)]
struct Products(HashMap<ProductId, Arc<ProductOverview>>);

impl Products {
    async fn get(
        &mut self,
        comments: &Comments<SharedStore>,
        product: &ProductId,
    ) -> Result<Arc<ProductOverview>, CommentsError> {
        if let Some(known) = self.0.get(product) {
            return Ok(Arc::clone(known));
        }
        let overview = comments.product_overview(product.as_str()).await?;
        if self.0.len() >= KNOWN_PRODUCTS {
            self.0.clear();
        }
        self.0.insert(product.clone(), Arc::clone(&overview));
        Ok(overview)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters_xml_forbids_are_stripped_and_the_rest_kept() {
        assert_eq!(
            text_of("a\u{0}b\u{1}c\u{8}d\u{B}e\u{C}f\u{1F}g\u{FFFE}h\u{FFFF}i").as_deref(),
            Some("abcdefghi")
        );
        let kept = "tab\there\nline\r\u{7F}\u{85}\u{200F}\u{202E}\u{1F600}\u{E000}\u{FFFD}";
        assert_eq!(text_of(kept).as_deref(), Some(kept));
        assert_eq!(text_of("\u{0}\u{1} \t\n"), None, "only white space left");
        assert_eq!(
            text_of("\u{A0}").as_deref(),
            Some("\u{A0}"),
            "not XML white space"
        );
    }
}
