//! One CSV record as one comment: its fields by the mapping's columns, its
//! language (given, detected from its text, or the default), its product,
//! its state, and the import key that makes its id the same on every
//! import of the same file.

use std::collections::HashMap;

use rave_comments::{
    AttributeInput, AttributeName, Email, ImportComment, Language, NewComment, ProductId, Reply,
    Source, Status, Timestamp, VoteCounts,
};
use sha2::{Digest, Sha256};
use ulid::Ulid;

use crate::error::{ImportError, RowError};
use crate::options::Options;
use crate::platform::{Field, Mapping};
use crate::product::{ProductRef, Resolution};
use crate::values;

/// Where each mapped field is in the header.
#[derive(Debug, Clone)]
pub(crate) struct Columns {
    at: HashMap<Field, usize>,
    /// Each mapped attribute's column (a column the header lacks answers
    /// nothing, like an optional field's).
    attributes: Vec<(AttributeName, usize)>,
}

impl Columns {
    /// For each field, the first of its mapped columns the header has.
    pub(crate) fn resolve(
        header: &csv::StringRecord,
        mapping: &Mapping,
    ) -> Result<Columns, ImportError> {
        let position = |column: &str| header.iter().position(|h| h.trim() == column);
        let mut at = HashMap::new();
        for (column, field) in &mapping.columns {
            if let Some(index) = position(column) {
                at.entry(*field).or_insert(index);
            }
        }
        for field in [Field::Author, Field::Rating, Field::Body, Field::Date] {
            if !at.contains_key(&field) {
                return Err(missing(mapping, field));
            }
        }
        if ![Field::ProductId, Field::Handle, Field::Sku]
            .iter()
            .any(|field| at.contains_key(field))
        {
            return Err(missing(mapping, Field::ProductId));
        }
        let attributes = mapping
            .attributes
            .iter()
            .filter_map(|(column, name)| Some((name.clone(), position(column)?)))
            .collect();
        Ok(Columns { at, attributes })
    }
}

fn missing(mapping: &Mapping, field: Field) -> ImportError {
    match mapping.columns.iter().find(|(_, mapped)| *mapped == field) {
        Some((column, _)) => ImportError::MissingColumn {
            column: column.clone(),
            field: field.name(),
            mapping: mapping.to_string(),
        },
        None => ImportError::Unmapped(field.name()),
    }
}

/// A row whose product is the one whose record lists its SKU: its comment
/// gets its product and id once the runner has looked the SKU up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BySku {
    pub(crate) sku: String,
    /// The row's error when no product record lists the SKU.
    unknown: String,
    review: Option<String>,
    source: Source,
    created_at: Timestamp,
}

impl BySku {
    /// `comment` as the review of `product` (the one whose record lists
    /// the SKU, if one does).
    pub(crate) fn resolve(
        &self,
        comment: &mut ImportComment,
        product: Option<&ProductId>,
        line: u64,
    ) -> Result<(), RowError> {
        let product = product.ok_or_else(|| RowError {
            line,
            field: Some(Field::Sku.name()),
            reason: self.unknown.clone(),
        })?;
        identify(
            comment,
            product,
            self.review.as_deref(),
            &self.source,
            self.created_at,
        );
        Ok(())
    }
}

/// The comment of one record (on `line`), and the SKU its product is
/// still to be found by when nothing else names it.
pub(crate) fn comment_of(
    record: &csv::StringRecord,
    columns: &Columns,
    options: &Options,
    source: &Source,
    line: u64,
) -> Result<(ImportComment, Option<BySku>), RowError> {
    let fail = |field: Field, reason: String| RowError {
        line,
        field: Some(field.name()),
        reason,
    };
    let cell = |field: Field| -> Option<&str> {
        let index = *columns.at.get(&field)?;
        record.get(index).map(str::trim).filter(|v| !v.is_empty())
    };
    let required = |field: Field| cell(field).ok_or_else(|| fail(field, "is empty".into()));

    let author = required(Field::Author)?.to_owned();
    let body = required(Field::Body)?.to_owned();
    let rating = values::rating(required(Field::Rating)?).map_err(|e| fail(Field::Rating, e))?;
    let created_at = values::date(required(Field::Date)?).map_err(|e| fail(Field::Date, e))?;
    let title = cell(Field::Title).map(str::to_owned);
    let resolution = options
        .products
        .resolve(&ProductRef {
            id: cell(Field::ProductId),
            handle: cell(Field::Handle),
            sku: cell(Field::Sku),
        })
        .map_err(|e| fail(Field::ProductId, e))?;
    let email = cell(Field::Email)
        .map(Email::parse)
        .transpose()
        .map_err(|_| fail(Field::Email, "is not an email address".into()))?;
    let language = language(cell(Field::Language), title.as_deref(), &body, options)
        .map_err(|e| fail(Field::Language, e))?;
    let shown = shown(&cell).map_err(|(field, e)| fail(field, e))?;
    let incentivized = match cell(Field::Incentivized) {
        Some(text) => values::flag(text)
            .map_err(|e| fail(Field::Incentivized, e))?
            .unwrap_or(false),
        None => false,
    };
    let reply = match cell(Field::Reply) {
        Some(text) => {
            let at = match cell(Field::ReplyDate) {
                Some(date) => values::date(date).map_err(|e| fail(Field::ReplyDate, e))?,
                None => created_at,
            };
            Some(Reply {
                body: text.to_owned(),
                created_at: at,
                updated_at: at,
            })
        }
        None => None,
    };
    let image_urls = cell(Field::ImageUrls)
        .map(values::image_urls)
        .unwrap_or_default();
    let mut comment = ImportComment {
        product: String::new(),
        id: None,
        status: Some(if shown {
            Status::Published
        } else {
            Status::Pending
        }),
        comment: NewComment {
            media: Vec::new(),
            attributes: columns
                .attributes
                .iter()
                .filter_map(|(name, index)| {
                    let text = record
                        .get(*index)
                        .map(str::trim)
                        .filter(|v| !v.is_empty())?;
                    Some((name.as_str().to_owned(), AttributeInput::from_text(text)))
                })
                .collect(),
            author,
            language: language.as_str().to_owned(),
            rating,
            title,
            body,
            created_at: Some(created_at),
        },
        reply,
        verified_purchase: cell(Field::Verified).is_some_and(values::verified),
        votes: VoteCounts::default(),
        source: Some(source.clone()),
        incentivized,
        image_urls,
        email,
    };
    let review = cell(Field::ReviewId);
    match resolution {
        Resolution::Product(product) => {
            identify(&mut comment, &product, review, source, created_at);
            Ok((comment, None))
        }
        Resolution::BySku { sku, unknown } => Ok((
            comment,
            Some(BySku {
                sku,
                unknown,
                review: review.map(str::to_owned),
                source: source.clone(),
                created_at,
            }),
        )),
    }
}

/// Gives `comment` its product and its id, from the row's import key: the
/// platform and the review's own id when the export has one, else the
/// platform, the product and the review's fields.
fn identify(
    comment: &mut ImportComment,
    product: &ProductId,
    review: Option<&str>,
    source: &Source,
    created_at: Timestamp,
) {
    let stars = comment.comment.rating.to_string();
    let key_parts: Vec<&str> = match review {
        Some(review) => vec![source.as_str(), "review", review],
        None => vec![
            source.as_str(),
            product.as_str(),
            &comment.comment.author,
            comment.email.as_ref().map_or("", Email::as_str),
            &comment.comment.body,
            comment.comment.title.as_deref().unwrap_or(""),
            &stars,
        ],
    };
    let id = deterministic_id(created_at, &key_parts);
    comment.id = Some(id.to_string());
    comment.product = product.as_str().to_owned();
}

/// Whether the review is shown: a published flag, a hidden flag or a
/// moderation state, whichever the export has; shown when it has none. A
/// hidden review is imported pending: kept, counted nowhere, in the
/// moderation queue.
fn shown<'a>(cell: &impl Fn(Field) -> Option<&'a str>) -> Result<bool, (Field, String)> {
    if let Some(published) = cell(Field::Published) {
        return values::flag(published)
            .map(|flag| flag.unwrap_or(true))
            .map_err(|e| (Field::Published, e));
    }
    if let Some(hidden) = cell(Field::Hidden) {
        return values::flag(hidden)
            .map(|flag| !flag.unwrap_or(false))
            .map_err(|e| (Field::Hidden, e));
    }
    Ok(cell(Field::State).is_none_or(|state| {
        matches!(
            state.to_ascii_lowercase().as_str(),
            "published" | "approved"
        )
    }))
}

/// The row's language: the cell's (`en`, `en-US`, `pt_BR` read as their
/// language), else the one detected reliably from the title and body, else
/// `--language`.
fn language(
    given: Option<&str>,
    title: Option<&str>,
    body: &str,
    options: &Options,
) -> Result<Language, String> {
    if let Some(given) = given {
        let code = given
            .split(['-', '_'])
            .next()
            .unwrap_or(given)
            .to_ascii_lowercase();
        return Language::parse(&code).map_err(|e| format!("{given:?}: {e}"));
    }
    let text = match title {
        Some(title) => format!("{title}. {body}"),
        None => body.to_owned(),
    };
    let detected = whatlang::detect(&text)
        .filter(whatlang::Info::is_reliable)
        .and_then(|info| isolang::Language::from_639_3(info.lang().code()))
        .and_then(|language| language.to_639_1())
        .and_then(|code| Language::parse(code).ok());
    detected
        .or_else(|| options.default_language.clone())
        .ok_or_else(|| {
            "none given and none detected reliably from the text (give --language)".to_owned()
        })
}

/// A ULID whose time is the review's and whose random part is a hash of
/// the row's import key: the same row always gets the same id. The key is
/// the platform and the review's own id when the export has one, else the
/// platform and the review's fields.
fn deterministic_id(created_at: Timestamp, key: &[&str]) -> Ulid {
    let mut hash = Sha256::new();
    for part in key {
        hash.update((part.len() as u64).to_be_bytes());
        hash.update(part.as_bytes());
    }
    let digest = hash.finalize();
    let mut random = [0u8; 16];
    random[6..].copy_from_slice(&digest[..10]);
    Ulid::from_parts(created_at.millis() as u64, u128::from_be_bytes(random))
}
