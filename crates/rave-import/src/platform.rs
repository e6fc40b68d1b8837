//! The column mappings: one per platform, each taken from the format that
//! platform publishes for its exports or imports, and the generic
//! `column=field` mapping for any other CSV.
//!
//! A mapping names, for each field, the columns that may hold it (the
//! first one the header has is read). A column the header lacks leaves its
//! field unset; the fields every comment needs (author, rating, body, date
//! and a product) must each have a column, or the file is refused before
//! any row is read.

use std::fmt;

use rave_comments::AttributeName;

use crate::error::ImportError;

/// What a column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    /// The reviewer's display name.
    Author,
    /// The reviewer's email: kept apart, never shown.
    Email,
    Rating,
    Title,
    Body,
    /// When the review was written.
    Date,
    /// An ISO 639 code; when absent, the language is detected.
    Language,
    /// The product, by the shop's product id.
    ProductId,
    /// The product, by its handle (the last part of its page's URL).
    Handle,
    /// The product, by SKU (through `--product-map`, else the product
    /// records' SKUs).
    Sku,
    /// The merchant's public reply.
    Reply,
    ReplyDate,
    /// A yes/no flag: the review is shown.
    Published,
    /// A yes/no flag: the review is hidden.
    Hidden,
    /// A moderation state: `published` or `approved` is shown, any other
    /// value hidden.
    State,
    /// A yes/no flag: a verified buyer wrote it.
    Verified,
    /// Image URLs, separated by commas, semicolons, `|` or spaces.
    ImageUrls,
    /// The platform's own id of the review: when mapped, the import key.
    ReviewId,
    /// A yes/no flag: the review was written for a reward (a free product
    /// or a discount). None of the four platforms' exports has such a
    /// column (their templates, cited below, list none): `--map` names it.
    Incentivized,
}

impl Field {
    const ALL: [Field; 19] = [
        Field::Author,
        Field::Email,
        Field::Rating,
        Field::Title,
        Field::Body,
        Field::Date,
        Field::Language,
        Field::ProductId,
        Field::Handle,
        Field::Sku,
        Field::Reply,
        Field::ReplyDate,
        Field::Published,
        Field::Hidden,
        Field::State,
        Field::Verified,
        Field::ImageUrls,
        Field::ReviewId,
        Field::Incentivized,
    ];

    /// The field's name in `--map COLUMN=FIELD` and in error messages.
    pub fn name(self) -> &'static str {
        match self {
            Field::Author => "author",
            Field::Email => "email",
            Field::Rating => "rating",
            Field::Title => "title",
            Field::Body => "body",
            Field::Date => "date",
            Field::Language => "language",
            Field::ProductId => "product_id",
            Field::Handle => "handle",
            Field::Sku => "sku",
            Field::Reply => "reply",
            Field::ReplyDate => "reply_date",
            Field::Published => "published",
            Field::Hidden => "hidden",
            Field::State => "state",
            Field::Verified => "verified",
            Field::ImageUrls => "image_urls",
            Field::ReviewId => "review_id",
            Field::Incentivized => "incentivized",
        }
    }

    pub fn parse(name: &str) -> Option<Field> {
        Field::ALL.into_iter().find(|field| field.name() == name)
    }
}

/// A platform whose export rave reads as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    Okendo,
    JudgeMe,
    Yotpo,
    Shopify,
}

impl Platform {
    pub const ALL: [Platform; 4] = [
        Platform::Okendo,
        Platform::JudgeMe,
        Platform::Yotpo,
        Platform::Shopify,
    ];

    /// Its name in `--from` and as the comments' `source`.
    pub fn name(self) -> &'static str {
        match self {
            Platform::Okendo => "okendo",
            Platform::JudgeMe => "judgeme",
            Platform::Yotpo => "yotpo",
            Platform::Shopify => "shopify",
        }
    }

    pub fn parse(name: &str) -> Option<Platform> {
        Platform::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The platform's columns, in the order its format lists them.
    pub fn mapping(self) -> Mapping {
        let columns: &[(&str, Field)] = match self {
            // Okendo's import template ("Importing Reviews Using The Okendo
            // Import Template", support.okendo.io/en/articles/2057320):
            // name, body, handle / productId / sku (one at least), rating,
            // dateCreated; additional fields countryCode (not kept), email,
            // imageUrls.
            Platform::Okendo => &[
                ("name", Field::Author),
                ("body", Field::Body),
                ("handle", Field::Handle),
                ("productId", Field::ProductId),
                ("rating", Field::Rating),
                ("sku", Field::Sku),
                ("dateCreated", Field::Date),
                ("email", Field::Email),
                ("imageUrls", Field::ImageUrls),
            ],
            // Judge.me's review CSV as its importer takes it, in the
            // header order of the public conversion script
            // gist.github.com/mergado-com/75cc3ac76a9af2a2a024fe790adc00fe:
            // product_handle, review_title, body, reviewer_name,
            // reviewer_email, rating, review_date, reply, reply_date,
            // featured (not kept), verified, hidden. Judge.me's own export
            // names the title `title` and adds `product_id` and
            // `picture_urls`; those are read when present.
            Platform::JudgeMe => &[
                ("product_handle", Field::Handle),
                ("review_title", Field::Title),
                ("title", Field::Title),
                ("body", Field::Body),
                ("reviewer_name", Field::Author),
                ("reviewer_email", Field::Email),
                ("rating", Field::Rating),
                ("review_date", Field::Date),
                ("reply", Field::Reply),
                ("reply_date", Field::ReplyDate),
                ("verified", Field::Verified),
                ("hidden", Field::Hidden),
                ("product_id", Field::ProductId),
                ("picture_urls", Field::ImageUrls),
            ],
            // Yotpo's review import template, in the header order of the
            // public migration script
            // gist.github.com/johanlantz/943a15e9c19d700055dbdb7fa70db060:
            // published, review_title, review_content, review_score, date,
            // product_id, display_name, email, comment_content (the
            // store's public comment: the reply).
            Platform::Yotpo => &[
                ("published", Field::Published),
                ("review_title", Field::Title),
                ("review_content", Field::Body),
                ("review_score", Field::Rating),
                ("date", Field::Date),
                ("product_id", Field::ProductId),
                ("display_name", Field::Author),
                ("email", Field::Email),
                ("comment_content", Field::Reply),
            ],
            // Shopify Product Reviews' import and export CSV ("Importing
            // and exporting reviews with Product Reviews",
            // help.shopify.com/manual/products/product-reviews/import-export-reviews):
            // product_handle, state, rating, title, author, email,
            // location (not kept), body, reply, created_at, replied_at.
            Platform::Shopify => &[
                ("product_handle", Field::Handle),
                ("state", Field::State),
                ("rating", Field::Rating),
                ("title", Field::Title),
                ("author", Field::Author),
                ("email", Field::Email),
                ("body", Field::Body),
                ("reply", Field::Reply),
                ("created_at", Field::Date),
                ("replied_at", Field::ReplyDate),
            ],
        };
        Mapping {
            source: self.name().to_owned(),
            columns: columns
                .iter()
                .map(|(column, field)| ((*column).to_owned(), *field))
                .collect(),
            attributes: Vec::new(),
        }
    }
}

/// Which columns hold which fields, and the `source` the comments record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    pub source: String,
    pub columns: Vec<(String, Field)>,
    /// Columns holding answers to the product's attributes
    /// (`--map COLUMN=attributes.NAME`): a whole number is a rating, other
    /// text a choice; an empty cell answers nothing.
    pub attributes: Vec<(String, AttributeName)>,
}

/// The `source` of comments imported by a generic mapping alone.
pub const GENERIC_SOURCE: &str = "csv";

/// Before an attribute's name in `--map COLUMN=attributes.NAME`.
const ATTRIBUTE_PREFIX: &str = "attributes.";

impl Mapping {
    /// The mapping of a CSV no platform made (`source` = `csv`).
    pub fn generic() -> Mapping {
        Mapping {
            source: GENERIC_SOURCE.to_owned(),
            columns: Vec::new(),
            attributes: Vec::new(),
        }
    }

    /// Adds `COLUMN=FIELD` (`--map`); a column mapped this way is read
    /// before the platform's own column for the same field.
    pub fn add(&mut self, assignment: &str) -> Result<(), ImportError> {
        let (column, field) = assignment.split_once('=').ok_or_else(|| {
            ImportError::Mapping(format!("--map {assignment:?} is not COLUMN=FIELD"))
        })?;
        if column.is_empty() {
            return Err(ImportError::Mapping(format!(
                "--map {assignment:?} names no column"
            )));
        }
        if let Some(name) = field.trim().strip_prefix(ATTRIBUTE_PREFIX) {
            let name = AttributeName::parse(name)
                .map_err(|e| ImportError::Mapping(format!("--map {assignment:?}: {e}")))?;
            self.attributes.push((column.to_owned(), name));
            return Ok(());
        }
        let field = Field::parse(field.trim()).ok_or_else(|| {
            let names: Vec<_> = Field::ALL.iter().map(|f| f.name()).collect();
            ImportError::Mapping(format!(
                "--map {assignment:?}: {field:?} is not a field (one of {})",
                names.join(", ")
            ))
        })?;
        if column.is_empty() {
            return Err(ImportError::Mapping(format!(
                "--map {assignment:?} names no column"
            )));
        }
        self.columns.insert(0, (column.to_owned(), field));
        Ok(())
    }
}

impl fmt::Display for Mapping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_platform_maps_what_a_comment_needs() {
        for platform in Platform::ALL {
            let mapping = platform.mapping();
            let has = |field| mapping.columns.iter().any(|(_, f)| *f == field);
            for field in [Field::Author, Field::Rating, Field::Body, Field::Date] {
                assert!(has(field), "{platform:?} {field:?}");
            }
            assert!(has(Field::ProductId) || has(Field::Handle), "{platform:?}");
            assert_eq!(Platform::parse(platform.name()), Some(platform));
        }
    }

    #[test]
    fn a_generic_mapping_names_known_fields_only() {
        let mut mapping = Mapping::generic();
        mapping.add("Stars=rating").unwrap();
        assert_eq!(mapping.columns, [("Stars".to_owned(), Field::Rating)]);
        for bad in ["Stars", "Stars=stars", "=rating"] {
            assert!(mapping.add(bad).is_err(), "{bad}");
        }
    }
}
