//! Requests by email: the message in the order's language (a text and an
//! HTML part, the products with their images, the shop's name), with
//! one-click unsubscribe (RFC 8058: `List-Unsubscribe` with an https URL and
//! `List-Unsubscribe-Post: List-Unsubscribe=One-Click`), sent over SMTP by
//! lettre (`smtp://` with STARTTLS when offered or required by
//! `?tls=required`, `smtps://` for implicit TLS, credentials in the URL).
//!
//! The templates are rave's (en, de, fr, es under `templates/`), or the
//! operator's: a directory with the same layout replaces any of them
//! (`<lang>/subject.txt`, `reminder-subject.txt`, `body.txt`, `body.html`).
//! Placeholders: `{shop}`, `{name}`, `{products}`, `{review_url}`,
//! `{unsubscribe_url}`; in the HTML part every value is escaped.

use std::collections::HashMap;
use std::path::Path;

use lettre::message::header::{ContentType, Header, HeaderName, HeaderValue};
use lettre::message::{Mailbox, MultiPart, SinglePart};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use crate::channel::{Channel, RequestMessage, SendError, SendFuture};
use crate::error::{RequestsError, Result};
use crate::model::{LANGUAGES, RequestKind};

const FILES: [&str; 4] = [
    "subject.txt",
    "reminder-subject.txt",
    "body.txt",
    "body.html",
];

/// rave's own templates, by language and file.
const BUILT_IN: [(&str, [&str; 4]); 4] = [
    (
        "en",
        [
            include_str!("../templates/en/subject.txt"),
            include_str!("../templates/en/reminder-subject.txt"),
            include_str!("../templates/en/body.txt"),
            include_str!("../templates/en/body.html"),
        ],
    ),
    (
        "de",
        [
            include_str!("../templates/de/subject.txt"),
            include_str!("../templates/de/reminder-subject.txt"),
            include_str!("../templates/de/body.txt"),
            include_str!("../templates/de/body.html"),
        ],
    ),
    (
        "fr",
        [
            include_str!("../templates/fr/subject.txt"),
            include_str!("../templates/fr/reminder-subject.txt"),
            include_str!("../templates/fr/body.txt"),
            include_str!("../templates/fr/body.html"),
        ],
    ),
    (
        "es",
        [
            include_str!("../templates/es/subject.txt"),
            include_str!("../templates/es/reminder-subject.txt"),
            include_str!("../templates/es/body.txt"),
            include_str!("../templates/es/body.html"),
        ],
    ),
];

/// The four texts of each language.
#[derive(Debug, Clone)]
pub struct Templates(HashMap<(&'static str, &'static str), String>);

impl Default for Templates {
    fn default() -> Templates {
        let mut texts = HashMap::new();
        for (lang, files) in BUILT_IN {
            for (file, text) in FILES.into_iter().zip(files) {
                texts.insert((lang, file), text.to_owned());
            }
        }
        Templates(texts)
    }
}

impl Templates {
    /// rave's templates, with each file found under `dir` in their stead.
    pub fn with_overrides(dir: &Path) -> Result<Templates> {
        let mut templates = Templates::default();
        if !dir.is_dir() {
            return Err(RequestsError::invalid(
                "templates",
                format!("{} is not a directory", dir.display()),
            ));
        }
        for lang in LANGUAGES {
            for file in FILES {
                let path = dir.join(lang).join(file);
                match std::fs::read_to_string(&path) {
                    Ok(text) => {
                        templates.0.insert((lang, file), text);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => {
                        return Err(RequestsError::invalid(
                            "templates",
                            format!("cannot read {}: {e}", path.display()),
                        ));
                    }
                }
            }
        }
        Ok(templates)
    }

    fn text(&self, lang: &'static str, file: &'static str) -> &str {
        self.0.get(&(lang, file)).map_or("", String::as_str)
    }

    /// Subject, text part and HTML part of `message` for the shop `shop`.
    pub fn render(&self, shop: &str, message: &RequestMessage) -> (String, String, String) {
        let lang = message.order.language();
        let subject_file = match message.kind {
            RequestKind::First => "subject.txt",
            RequestKind::Reminder => "reminder-subject.txt",
        };
        let text_products: String = message
            .products
            .iter()
            .map(|p| format!("- {}\n", p.name))
            .collect();
        let html_products: String = message
            .products
            .iter()
            .map(|p| {
                let image = p.image_url.as_deref().map_or(String::new(), |url| {
                    format!(
                        "<img src=\"{}\" alt=\"\" width=\"64\" height=\"64\"> ",
                        escape_html(url)
                    )
                });
                format!("<li>{image}{}</li>", escape_html(&p.name))
            })
            .collect();
        let fill = |template: &str, products: &str, escape: fn(&str) -> String| {
            template
                .replace("{shop}", &escape(shop))
                .replace("{name}", &escape(&message.order.name))
                .replace("{review_url}", &escape(&message.review_url))
                .replace("{unsubscribe_url}", &escape(&message.unsubscribe_url))
                .replace("{products}", products)
        };
        let keep = |s: &str| s.to_owned();
        let subject = fill(self.text(lang, subject_file), "", keep)
            .trim()
            .to_owned();
        let text = fill(self.text(lang, "body.txt"), &text_products, keep);
        let html = fill(self.text(lang, "body.html"), &html_products, escape_html);
        (subject, text, html)
    }
}

fn escape_html(value: &str) -> String {
    let mut escaped = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            c => escaped.push(c),
        }
    }
    escaped
}

/// `List-Unsubscribe: <url>` (RFC 2369).
#[derive(Debug, Clone)]
struct ListUnsubscribe(String);

impl Header for ListUnsubscribe {
    fn name() -> HeaderName {
        HeaderName::new_from_ascii_str("List-Unsubscribe")
    }

    fn parse(s: &str) -> Result<Self, Box<dyn std::error::Error + Send + Sync>> {
        Ok(ListUnsubscribe(s.trim_matches(['<', '>']).to_owned()))
    }

    fn display(&self) -> HeaderValue {
        HeaderValue::new(Self::name(), format!("<{}>", self.0))
    }
}

/// `List-Unsubscribe-Post: List-Unsubscribe=One-Click` (RFC 8058).
#[derive(Debug, Clone)]
struct ListUnsubscribePost;

impl Header for ListUnsubscribePost {
    fn name() -> HeaderName {
        HeaderName::new_from_ascii_str("List-Unsubscribe-Post")
    }

    fn parse(_: &str) -> Result<Self, Box<dyn std::error::Error + Send + Sync>> {
        Ok(ListUnsubscribePost)
    }

    fn display(&self) -> HeaderValue {
        HeaderValue::new(Self::name(), "List-Unsubscribe=One-Click".into())
    }
}

/// Sends requests through one SMTP server.
pub struct SmtpChannel {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    shop: String,
    templates: Templates,
}

impl std::fmt::Debug for SmtpChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL may hold credentials: only the sender is shown.
        write!(f, "SmtpChannel(from {})", self.from)
    }
}

impl SmtpChannel {
    /// `url`: `smtp://[user:password@]host[:port][?tls=required]` or
    /// `smtps://…`; `from`: the sender, such as `Lamps & Co <shop@example.com>`.
    pub fn new(url: &str, from: &str, shop: &str, templates: Templates) -> Result<SmtpChannel> {
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            .map_err(|e| RequestsError::invalid("smtp_url", e.to_string()))?
            .build();
        let from = from
            .parse::<Mailbox>()
            .map_err(|e| RequestsError::invalid("smtp_from", e.to_string()))?;
        Ok(SmtpChannel {
            transport,
            from,
            shop: shop.to_owned(),
            templates,
        })
    }

    /// The message as it is sent (for the tests and `rave` to show).
    pub fn message(&self, request: &RequestMessage) -> Result<Message, SendError> {
        let (subject, text, html) = self.templates.render(&self.shop, request);
        let to = Mailbox::new(
            Some(request.order.name.clone()),
            request
                .order
                .email
                .parse()
                .map_err(|e| SendError(format!("the order's address: {e}")))?,
        );
        Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(subject)
            .header(ListUnsubscribe(request.unsubscribe_url.clone()))
            .header(ListUnsubscribePost)
            .multipart(
                MultiPart::alternative()
                    .singlepart(
                        SinglePart::builder()
                            .header(ContentType::TEXT_PLAIN)
                            .body(text),
                    )
                    .singlepart(
                        SinglePart::builder()
                            .header(ContentType::TEXT_HTML)
                            .body(html),
                    ),
            )
            .map_err(|e| SendError(format!("cannot build the message: {e}")))
    }
}

impl Channel for SmtpChannel {
    fn send<'a>(&'a self, request: &'a RequestMessage) -> SendFuture<'a> {
        Box::pin(async move {
            let message = self.message(request)?;
            self.transport
                .send(message)
                .await
                .map(drop)
                .map_err(|e| SendError(format!("SMTP: {e}")))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channel::ProductLine;
    use crate::model::Order;

    fn request(locale: &str, name: &str) -> RequestMessage {
        RequestMessage {
            order: Order {
                id: "A-1".into(),
                email: "anna@example.com".into(),
                name: name.into(),
                locale: locale.into(),
                delivered_at_ms: 0,
                products: vec!["lamp".into()],
            },
            kind: RequestKind::First,
            products: vec![ProductLine {
                id: "lamp".into(),
                name: "Desk <lamp> & shade".into(),
                image_url: Some("https://cdn.example/lamp.jpg?a=1&b=2".into()),
            }],
            review_url: "https://r.example/review/t".into(),
            unsubscribe_url: "https://r.example/unsubscribe/u".into(),
        }
    }

    #[test]
    fn every_language_renders_with_escaped_html() {
        let templates = Templates::default();
        for (locale, word) in [
            ("en", "review"),
            ("de-DE", "Bewertung"),
            ("fr", "avis"),
            ("es", "opinión"),
        ] {
            let (subject, text, html) =
                templates.render("Lamps & Co", &request(locale, "<b>Anna</b>"));
            assert!(subject.contains("Lamps & Co"), "{subject}");
            assert!(
                text.contains(word) && text.contains("- Desk <lamp> & shade"),
                "{text}"
            );
            assert!(text.contains("https://r.example/review/t"));
            assert!(html.contains("&lt;b&gt;Anna&lt;/b&gt;"), "{html}");
            assert!(html.contains("Desk &lt;lamp&gt; &amp; shade"));
            assert!(html.contains("lamp.jpg?a=1&amp;b=2"));
            assert!(!html.contains("<b>"));
        }
    }

    #[test]
    fn a_message_carries_one_click_unsubscribe_and_both_parts() {
        let channel = SmtpChannel::new(
            "smtp://127.0.0.1:2525",
            "Lamps & Co <shop@example.com>",
            "Lamps & Co",
            Templates::default(),
        )
        .unwrap();
        let raw = String::from_utf8(channel.message(&request("en", "Anna")).unwrap().formatted())
            .unwrap();
        assert!(
            raw.contains("List-Unsubscribe: <https://r.example/unsubscribe/u>"),
            "{raw}"
        );
        assert!(raw.contains("List-Unsubscribe-Post: List-Unsubscribe=One-Click"));
        assert!(raw.contains("multipart/alternative"));
        assert!(raw.contains("text/plain") && raw.contains("text/html"));
        assert!(raw.contains("To: Anna <anna@example.com>"));
    }

    #[test]
    fn operator_templates_replace_rave_s() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("de")).unwrap();
        std::fs::write(dir.path().join("de/subject.txt"), "Hallo von {shop}").unwrap();
        let templates = Templates::with_overrides(dir.path()).unwrap();
        let (subject, text, _) = templates.render("Shop", &request("de", "Anna"));
        assert_eq!(subject, "Hallo von Shop");
        assert!(text.contains("Bewertung"), "the other files stay rave's");
        assert!(Templates::with_overrides(&dir.path().join("missing")).is_err());
    }
}
