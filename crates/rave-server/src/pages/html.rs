//! The HTML of a product's listing: the whole page for crawlers and
//! readers without JavaScript, and the same listing as a fragment for
//! shops to include. Every piece of user text goes through `Isolated`
//! (or `IsolatedPlain` where no element may go): escaped, and in its own
//! bidirectional isolate, so neither markup nor direction overrides in a
//! comment reach the page around it.
//!
//! For crawlers: canonical links, `noindex` on filtered views, and "Older
//! comments" as keyset links (the cursor), so a crawler walks every comment
//! without offsets.

use std::convert::Infallible;
use std::fmt::{self, Display, Write};

use rave_comments::{Language, ProductOverview, ProductStats, Rating, RatingSet};

use super::family::{self, Family};
use super::jsonld;
use super::shown::Shown;

/// What a listing page shows: its filters and where it starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct View {
    pub(super) language: Option<Language>,
    /// Empty for all ratings (every rating asked for included), so that the
    /// unfiltered listing has one URL.
    pub(super) ratings: RatingSet,
    pub(super) cursor: Option<String>,
    /// The whole family's reviews (`scope=group`), not the product's own.
    pub(super) group: bool,
}

impl View {
    pub(super) fn new(
        language: Option<Language>,
        ratings: RatingSet,
        cursor: Option<String>,
    ) -> View {
        let ratings = if ratings.is_unfiltered() {
            RatingSet::default()
        } else {
            ratings
        };
        View {
            language,
            ratings,
            cursor,
            group: false,
        }
    }

    pub(super) fn filtered(&self) -> bool {
        self.language.is_some() || !self.ratings.is_unfiltered()
    }

    /// This view's URL on `base`, starting at `cursor`.
    pub(super) fn url(&self, base: &str, cursor: Option<&str>) -> String {
        let mut url = String::with_capacity(base.len() + 64);
        url.push_str(base);
        // The query is written straight after the base, joined by the
        // right separator once it turns out to have a pair.
        let start = url.len();
        let mut query = form_urlencoded::Serializer::for_suffix(url, start);
        if self.group {
            query.append_pair("scope", "group");
        }
        if let Some(language) = &self.language {
            query.append_pair("language", language.as_str());
        }
        for rating in self.ratings.ratings() {
            query.append_pair("rating", digit(rating.get()));
        }
        if let Some(cursor) = cursor {
            query.append_pair("cursor", cursor);
        }
        let mut url = query.finish();
        if url.len() > start {
            let joiner = if base.contains('?') { "&" } else { "?" };
            url.insert_str(start, joiner);
        }
        url
    }
}

/// Text escaped for element content and quoted attribute values alike,
/// written straight into the page.
pub(super) struct Text<'a>(pub(super) &'a str);

impl Display for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        escape(self.0, |piece| f.write_str(piece))
    }
}

/// `value` escaped as [`Text`] displays it, appended without the
/// formatting machinery: a page's comments are written this way, where
/// `write!`'s pieces and arguments cost more than the text itself.
fn push_text(out: &mut String, value: &str) {
    let pushed: Result<(), Infallible> = escape(value, |piece| {
        out.push_str(piece);
        Ok(())
    });
    let Ok(()) = pushed;
}

/// A rating's digit (1 to 5) as text.
fn digit(rating: u8) -> &'static str {
    const DIGITS: [&str; 10] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"];
    DIGITS.get(usize::from(rating)).copied().unwrap_or("?")
}

/// `value` in decimal, appended without the formatting machinery.
fn push_count(out: &mut String, value: u64) {
    out.push_str(itoa::Buffer::new().format(value));
}

/// `value` as [`Isolated`] displays it, appended.
fn push_isolated(out: &mut String, value: &str) {
    out.push_str("<bdi>");
    push_text(out, value);
    out.push_str("</bdi>");
}

/// Hands `write` the pieces of `value` escaped for element content and
/// quoted attribute values: runs of plain text and the entities between
/// them.
fn escape<E>(value: &str, mut write: impl FnMut(&str) -> Result<(), E>) -> Result<(), E> {
    let bytes = value.as_bytes();
    let mut written = 0;
    let mut at = 0;
    while at < bytes.len() {
        // Most text has nothing to escape: a run of bytes is checked at
        // once (comparisons OR-ed without an early exit, which the
        // compiler turns into a few vector instructions), and only a run
        // with a hit byte by byte.
        if let Some((run, _)) = bytes[at..].split_first_chunk::<RUN>()
            && run
                .iter()
                .fold(0u8, |hits, &byte| hits | u8::from(is_markup(byte)))
                == 0
        {
            at += RUN;
            continue;
        }
        if let Some(entity) = entity(bytes[at]) {
            write(&value[written..at])?;
            write(entity)?;
            written = at + 1;
        }
        at += 1;
    }
    write(&value[written..])
}

/// The bytes [`Text`] checks at once.
const RUN: usize = 16;

/// Whether a byte of text is written as an entity (see [`entity`]). Spelt
/// as OR-ed comparisons, not a `match`: a `match` becomes a bit test that
/// the compiler cannot vectorise.
const fn is_markup(byte: u8) -> bool {
    (byte == b'&') | (byte == b'<') | (byte == b'>') | (byte == b'"') | (byte == b'\'')
}

/// The entity a byte of text is written as, if it is markup.
const fn entity(byte: u8) -> Option<&'static str> {
    match byte {
        b'&' => Some("&amp;"),
        b'<' => Some("&lt;"),
        b'>' => Some("&gt;"),
        b'"' => Some("&quot;"),
        b'\'' => Some("&#39;"),
        _ => None,
    }
}

/// User text in an element of its own direction (`<bdi>`), so an override
/// inside it ends with it.
struct Isolated<'a>(&'a str);

impl Display for Isolated<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<bdi>{}</bdi>", Text(self.0))
    }
}

/// User text where no element may go (`<title>`, attribute values):
/// between first-strong and pop isolates, which bound it the same way.
struct IsolatedPlain<'a>(&'a str);

impl Display for IsolatedPlain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\u{2068}{}\u{2069}", Text(self.0))
    }
}

/// Everything one rendering needs.
pub(super) struct Listing<'a> {
    pub(super) overview: &'a ProductOverview,
    /// The statistics shown: the view's language, or all languages.
    pub(super) stats: &'a ProductStats,
    pub(super) view: &'a View,
    pub(super) comments: &'a [Shown<'a>],
    pub(super) next_cursor: Option<&'a str>,
    /// Where the listing's links point: rave's page, or the shop's.
    pub(super) base: &'a str,
    /// The family whose reviews these are (`scope=group`); `overview` is
    /// then the group's.
    pub(super) family: Option<&'a Family>,
}

fn stars(rating: Rating) -> &'static str {
    const STARS: [&str; 5] = ["★☆☆☆☆", "★★☆☆☆", "★★★☆☆", "★★★★☆", "★★★★★"];
    STARS[usize::from(rating.get() - 1)]
}

fn format_average(stats: &ProductStats) -> String {
    stats
        .average()
        .map_or_else(|| "–".to_owned(), |a| format!("{a:.2}"))
}

impl Listing<'_> {
    /// The JSON-LD `<script>` of the listing.
    fn structured_data(&self, out: &mut String) {
        out.push_str("<script type=\"application/ld+json\">");
        match self.family {
            Some(family) => {
                let data = family::product_group(family, self.stats);
                jsonld::write_script_safe(&data, self.comments, out);
            }
            None => {
                let data = jsonld::product(self.overview, self.stats);
                jsonld::write_script_safe(&data, self.comments, out);
            }
        }
        out.push_str("</script>");
    }

    /// Room for the whole listing, so it is written without regrowing.
    fn capacity(&self) -> usize {
        let text: usize = self
            .comments
            .iter()
            .map(|s| s.comment.title.len() + s.comment.body.len() + s.comment.author.len())
            .sum();
        8192 + 2 * text + self.comments.len() * 900
    }

    fn summary(&self, out: &mut String) {
        let stats = self.stats;
        let _ = write!(
            out,
            "<p class=\"rave-summary\"><span class=\"rave-average\">{}</span> out of 5 · \
             <span class=\"rave-count\">{}</span> {}</p>",
            format_average(stats),
            stats.total,
            if stats.total == 1 {
                "review"
            } else {
                "reviews"
            },
        );
        out.push_str("<table class=\"rave-histogram\"><caption>Ratings</caption><tbody>");
        for rating in Rating::ALL.into_iter().rev() {
            let count = stats.counts.of(rating);
            let only = View::new(
                self.view.language.clone(),
                RatingSet::from_ratings([rating]),
                None,
            );
            // Five rows a page: written piece by piece, not by `write!`.
            out.push_str("<tr><th scope=\"row\"><a href=\"");
            push_text(out, &only.url(self.base, None));
            out.push_str("\">");
            out.push_str(digit(rating.get()));
            out.push_str(if rating.get() == 1 { " star" } else { " stars" });
            out.push_str("</a></th><td><meter min=\"0\" max=\"");
            push_count(out, stats.total.max(1));
            out.push_str("\" value=\"");
            push_count(out, count);
            out.push_str("\">");
            push_count(out, count);
            out.push_str("</meter></td><td class=\"rave-histogram-count\">");
            push_count(out, count);
            out.push_str("</td></tr>");
        }
        out.push_str("</tbody></table>");
    }

    fn filters(&self, out: &mut String) {
        let _ = write!(
            out,
            "<form class=\"rave-filters\" method=\"get\" action=\"{}\">\
             <label>Language <select name=\"language\"><option value=\"\">All languages</option>",
            Text(self.base)
        );
        let mut languages: Vec<&Language> = self
            .overview
            .languages
            .iter()
            .filter_map(|s| s.language.as_ref())
            .collect();
        if let Some(chosen) = &self.view.language
            && !languages.contains(&chosen)
        {
            languages.push(chosen);
        }
        for language in languages {
            let selected = self.view.language.as_ref() == Some(language);
            out.push_str("<option value=\"");
            push_text(out, language.as_str());
            out.push_str(if selected { "\" selected>" } else { "\">" });
            push_text(out, language.as_str());
            out.push_str("</option>");
        }
        out.push_str("</select></label><fieldset><legend>Ratings</legend>");
        for rating in Rating::ALL.into_iter().rev() {
            let checked = self.view.ratings.contains(rating);
            out.push_str("<label><input type=\"checkbox\" name=\"rating\" value=\"");
            out.push_str(digit(rating.get()));
            out.push_str(if checked { "\" checked> " } else { "\"> " });
            out.push_str(digit(rating.get()));
            out.push_str("</label>");
        }
        let _ = write!(
            out,
            "</fieldset><button type=\"submit\">Filter</button> \
             <a href=\"{}\">All comments</a></form>",
            Text(self.base)
        );
    }

    fn comment(&self, shown: &Shown<'_>, out: &mut String) {
        let comment = shown.comment;
        let rating = comment.rating;
        let created = &shown.published;
        out.push_str("<li class=\"rave-comment\" id=\"comment-");
        push_text(out, &comment.id);
        out.push_str("\" lang=\"");
        push_text(out, comment.language.as_str());
        out.push_str("\"><article><h3 class=\"rave-title\">");
        push_isolated(out, &shown.name);
        out.push_str(
            "</h3><p class=\"rave-meta\"><span class=\"rave-rating\" role=\"img\" aria-label=\"",
        );
        out.push_str(digit(rating.get()));
        out.push_str(" of 5 stars\">");
        out.push_str(stars(rating));
        out.push_str("</span> by <span class=\"rave-author\">");
        push_isolated(out, &comment.author);
        out.push_str("</span> on <time datetime=\"");
        push_text(out, created);
        out.push_str("\">");
        push_text(out, created.get(..10).unwrap_or(created));
        out.push_str("</time></p><p class=\"rave-body\" dir=\"auto\">");
        push_isolated(out, &comment.body);
        out.push_str("</p>");
        photos(shown, out);
        if comment.verified_purchase {
            out.push_str("<p class=\"rave-verified\">✓ Verified purchase</p>");
        }
        // On a family's page, what the comment's variant asks.
        let asked = self
            .family
            .and_then(|family| family.variant(&comment.product_id))
            .map_or(&self.overview.asked, |variant| &variant.asked);
        super::attributes::answers(asked, comment, out);
        if comment.incentivized {
            out.push_str("<p class=\"rave-incentivized\">");
            out.push_str(INCENTIVE_LABEL);
            out.push_str("</p>");
        }
        let votes = comment.votes;
        if votes.helpful + votes.unhelpful > 0 {
            let _ = write!(
                out,
                "<p class=\"rave-votes\">{} of {} found this helpful</p>",
                votes.helpful,
                votes.helpful + votes.unhelpful
            );
        }
        if let Some(reply) = &comment.reply {
            out.push_str(
                "<div class=\"rave-reply\"><p class=\"rave-meta\">Reply from the shop</p>\
                 <p class=\"rave-body\" dir=\"auto\">",
            );
            push_isolated(out, &reply.body);
            out.push_str("</p></div>");
        }
        out.push_str("</article></li>");
    }

    /// The listing itself: summary, histogram, filters, comments, pages.
    fn section(&self, out: &mut String) {
        let _ = write!(
            out,
            "<section class=\"rave\" data-rave-product=\"{}\"><h2>Customer reviews</h2>",
            Text(self.overview.product_id.as_str())
        );
        self.summary(out);
        super::attributes::summary(&self.overview.asked, self.stats, out);
        self.filters(out);
        if self.comments.is_empty() {
            out.push_str("<p class=\"rave-empty\">No comments here yet.</p>");
        } else {
            out.push_str("<ol class=\"rave-comments\">");
            for comment in self.comments {
                self.comment(comment, out);
            }
            out.push_str("</ol>");
        }
        out.push_str("<nav class=\"rave-pages\">");
        if let Some(next) = self.next_cursor {
            let _ = write!(
                out,
                "<a rel=\"next\" href=\"{}\">Older comments</a>",
                Text(&self.view.url(self.base, Some(next)))
            );
        }
        if self.view.cursor.is_some() {
            let _ = write!(
                out,
                " <a href=\"{}\">Newest comments</a>",
                Text(&self.view.url(self.base, None))
            );
        }
        out.push_str("</nav></section>");
    }

    /// The listing for a shop's page, with its structured data.
    pub(super) fn fragment(&self) -> String {
        let mut out = String::with_capacity(self.capacity());
        self.section(&mut out);
        self.structured_data(&mut out);
        out
    }

    /// The whole page. Filtered views point crawlers at the unfiltered
    /// listing and ask not to be indexed, so the combinations of filters
    /// are not indexed one by one; keyset pages of the unfiltered listing
    /// are their own canonical URL.
    pub(super) fn page(&self, page_path: &str) -> String {
        let name = self.overview.name();
        let canonical = if self.view.filtered() {
            page_path.to_owned()
        } else {
            self.view.url(page_path, self.view.cursor.as_deref())
        };
        let robots = if self.view.filtered() {
            "<meta name=\"robots\" content=\"noindex, follow\">"
        } else {
            ""
        };
        let older = if self.view.cursor.is_some() {
            " (older comments)"
        } else {
            ""
        };
        let description = match self.stats.average() {
            Some(_) => format!(
                "{} customer reviews of {}, rated {} out of 5.",
                self.stats.total,
                IsolatedPlain(name),
                format_average(self.stats)
            ),
            None => format!("Customer reviews of {}.", IsolatedPlain(name)),
        };
        let mut out = String::with_capacity(self.capacity() + STYLE.len());
        let _ = write!(
            out,
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>{title}: customer reviews{older}</title>\
             <meta name=\"description\" content=\"{description}\">\
             <link rel=\"canonical\" href=\"{canonical}\">{robots}\
             <style>{STYLE}</style>",
            title = IsolatedPlain(name),
            canonical = Text(&canonical),
        );
        self.structured_data(&mut out);
        let _ = write!(out, "</head><body><main><h1>{}</h1>", Isolated(name));
        self.section(&mut out);
        out.push_str("</main></body></html>\n");
        out
    }
}

/// A comment's published photos as thumbnails, each a link to its display
/// size, so they open without script: `<picture>` offers the WebP
/// thumbnail with the JPEG one as the fallback, `width` and `height` keep
/// the room before the image arrives, and thumbnails below the fold are
/// fetched only when scrolled to.
fn photos(shown: &Shown<'_>, out: &mut String) {
    if shown.photos.is_empty() {
        return;
    }
    out.push_str("<ul class=\"rave-photos\">");
    let count = shown.photos.len();
    for (at, photo) in shown.photos.iter().enumerate() {
        let _ = write!(
            out,
            "<li><a href=\"{display}\"><picture>\
             <source type=\"image/webp\" srcset=\"{webp}\">\
             <img src=\"{jpeg}\" width=\"{width}\" height=\"{height}\" loading=\"lazy\" decoding=\"async\" \
             alt=\"Photo {n} of {count} by {author}\"></picture></a></li>",
            display = Text(&photo.display_jpeg),
            webp = Text(&photo.thumbnail_webp),
            jpeg = Text(&photo.thumbnail_jpeg),
            width = photo.thumbnail_width,
            height = photo.thumbnail_height,
            n = at + 1,
            author = IsolatedPlain(&shown.comment.author),
        );
    }
    out.push_str("</ul>");
}

/// The disclosure an incentivized review carries on every page (16 CFR
/// 465 asks that a review written for a reward say so); the same words as
/// `web/embed.js` and `web/index.html` show.
const INCENTIVE_LABEL: &str = "Received a free product or discount for this review";

/// The page's own styles: readable without any of the shop's.
pub(crate) const STYLE: &str = "body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1d1d1f;background:#fff}\
main{max-width:46rem;margin:0 auto;padding:1rem}\
.rave-summary{font-size:1.2rem}.rave-average{font-weight:700}\
.rave-histogram th{text-align:left;font-weight:400;padding-right:.5rem}\
.rave-histogram meter{width:12rem}\
.rave-attributes th{text-align:left;font-weight:400;padding-right:.5rem}\
.rave-attributes meter{width:12rem}\
.rave-scale{list-style:none;padding:0;margin:0;display:flex;gap:1rem;flex-wrap:wrap}\
.rave-scale meter{display:block;width:7rem}.rave-answers{color:#555;margin:0}\
.rave-filters{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;margin:1rem 0}\
.rave-filters fieldset{border:0;margin:0;padding:0;display:flex;gap:.5rem}\
.rave-filters legend{float:left;margin-right:.5rem}\
.rave-comments{list-style:none;padding:0}\
.rave-comment{border-top:1px solid #ddd;padding:.5rem 0}\
.rave-comment h3{font-size:1rem;margin:.25rem 0}\
.rave-meta{color:#555;margin:0}.rave-rating{color:#b36b00}\
.rave-verified{color:#1a7f37;margin:0}.rave-votes{color:#555;margin:0}\
.rave-incentivized{color:#555;font-style:italic;margin:0}\
.rave-body{white-space:pre-line}\
.rave-photos{list-style:none;padding:0;margin:.5rem 0;display:flex;flex-wrap:wrap;gap:.5rem}\
.rave-photos img{display:block;width:auto;height:6rem;max-width:100%;border-radius:4px}\
.rave-reply{margin-left:1rem;padding-left:.75rem;border-left:3px solid #ddd}\
.rave-pages a{margin-right:1rem}";

#[cfg(test)]
mod tests {
    use rave_comments::{Comment, PhotoStatus};

    use super::*;
    use crate::media::MediaLinks;
    use crate::pages::shown::tests::{comment, photo};

    #[test]
    fn text_escapes_everything_markup_or_attributes_could_use() {
        assert_eq!(
            Text("<a href=\"x\" onclick='y'>&</a>").to_string(),
            "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;"
        );
    }

    #[test]
    fn the_run_check_and_the_entities_name_the_same_bytes() {
        for byte in 0..=u8::MAX {
            assert_eq!(is_markup(byte), entity(byte).is_some(), "byte {byte:#04x}");
        }
    }

    proptest::proptest! {
        #[test]
        fn text_escapes_as_a_byte_by_byte_reference_does(
            text in "[a-z &<>\"'…★\n]{0,70}"
        ) {
            let reference: String = text
                .chars()
                .map(|c| match c {
                    '&' => "&amp;".to_owned(),
                    '<' => "&lt;".to_owned(),
                    '>' => "&gt;".to_owned(),
                    '"' => "&quot;".to_owned(),
                    '\'' => "&#39;".to_owned(),
                    other => other.to_string(),
                })
                .collect();
            proptest::prop_assert_eq!(Text(&text).to_string(), reference.clone());
            let mut pushed = String::from("x");
            push_text(&mut pushed, &text);
            proptest::prop_assert_eq!(pushed, format!("x{reference}"));
            let mut isolated = String::new();
            push_isolated(&mut isolated, &text);
            proptest::prop_assert_eq!(isolated, Isolated(&text).to_string());
        }
    }

    #[test]
    fn ratings_show_as_stars() {
        assert_eq!(stars(Rating::new(4).unwrap()), "★★★★☆");
        assert_eq!(stars(Rating::new(1).unwrap()), "★☆☆☆☆");
    }

    #[test]
    fn comments_show_their_verified_badge_and_vote_counts_only_when_they_have_them() {
        let product_id = rave_comments::ProductId::parse("p").unwrap();
        let stats = ProductStats {
            product_id: product_id.clone(),
            language: None,
            counts: Default::default(),
            total: 0,
            verified_total: 0,
            verified_counts: Default::default(),
            media_total: 0,
            media_counts: Default::default(),
            attributes: Default::default(),
        };
        let overview = ProductOverview {
            product_id,
            record: None,
            asked: Default::default(),
            overall: stats.clone(),
            languages: Vec::new(),
            revision: "1".into(),
        };
        let render = |comment: &Comment| {
            let shown = [Shown::new(comment, &MediaLinks::default())];
            let mut out = String::new();
            Listing {
                overview: &overview,
                stats: &stats,
                view: &View::default(),
                comments: &shown,
                next_cursor: None,
                base: "/products/p",
                family: None,
            }
            .comment(&shown[0], &mut out);
            out
        };
        let plain = render(&comment("t", "b"));
        assert!(!plain.contains("rave-verified") && !plain.contains("rave-votes"));
        assert!(!plain.contains(INCENTIVE_LABEL));
        let mut incentivized = comment("t", "b");
        incentivized.incentivized = true;
        assert!(render(&incentivized).contains(
            "<p class=\"rave-incentivized\">Received a free product or discount for this review</p>"
        ));
        let mut voted = comment("t", "b");
        voted.verified_purchase = true;
        voted.votes.helpful = 3;
        voted.votes.unhelpful = 1;
        let shown = render(&voted);
        assert!(shown.contains("<p class=\"rave-verified\">✓ Verified purchase</p>"));
        assert!(shown.contains("<p class=\"rave-votes\">3 of 4 found this helpful</p>"));
    }

    #[test]
    fn published_photos_show_as_linked_thumbnails_and_pending_ones_not_at_all() {
        let mut with_photos = comment("t", "b");
        with_photos.author = "Ann <b>".into();
        with_photos.media = vec![
            photo("a", 1600, 1200, PhotoStatus::Published),
            photo("b", 800, 600, PhotoStatus::Pending),
        ];
        let links = MediaLinks::served_at("https://r.example");
        let shown = Shown::new(&with_photos, &links);
        let mut out = String::new();
        photos(&shown, &mut out);
        let a = "a".repeat(64);
        assert_eq!(
            out,
            format!(
                "<ul class=\"rave-photos\"><li><a href=\"https://r.example/media/{a}/display.jpg\"><picture>\
                 <source type=\"image/webp\" srcset=\"https://r.example/media/{a}/thumb.webp\">\
                 <img src=\"https://r.example/media/{a}/thumb.jpg\" width=\"320\" height=\"240\" loading=\"lazy\" \
                 decoding=\"async\" alt=\"Photo 1 of 1 by \u{2068}Ann &lt;b&gt;\u{2069}\"></picture></a></li></ul>"
            )
        );
        assert!(!out.contains(&"b".repeat(64)));
        let mut none = String::new();
        photos(&Shown::new(&comment("t", "b"), &links), &mut none);
        assert_eq!(none, "");
    }

    #[test]
    fn view_urls_keep_filters_and_encode_cursors() {
        let view = View::new(
            Some(Language::parse("en").unwrap()),
            RatingSet::from_ratings([Rating::new(5).unwrap(), Rating::new(1).unwrap()]),
            None,
        );
        assert_eq!(
            view.url("/products/p", Some("a+b/c=")),
            "/products/p?language=en&rating=1&rating=5&cursor=a%2Bb%2Fc%3D"
        );
        assert_eq!(View::default().url("/products/p", None), "/products/p");
        assert_eq!(
            View::default().url("https://shop.example/p?id=3", Some("c")),
            "https://shop.example/p?id=3&cursor=c"
        );
    }
}
