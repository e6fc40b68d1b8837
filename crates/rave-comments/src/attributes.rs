//! Sub-ratings and choice attributes: what a product asks a reviewer
//! besides the star rating, and what a review answers.
//!
//! A product record declares its attributes ([`DeclaredAttributes`]): rating
//! attributes (`quality`, `value`: 1–5, like the star rating) and choice
//! attributes (`fit`: one of `runs_small`, `true_to_size`, `runs_large`, in
//! the order a fit scale shows them). The declaration is a type of its own so
//! that any record that asks for attributes (a product's, a product
//! family's) carries the same one. Names and choices are short lowercase
//! identifiers (`[a-z][a-z0-9_]{0,31}`), at most [`MAX_ATTRIBUTES`]
//! attributes and [`MAX_CHOICES`] choices each: what a form and a bar chart
//! can show, and bounded statistics items.
//!
//! A post or an import carries answers by name (`{"quality": 4, "fit":
//! "runs_small"}`, [`AttributeInput`]); [`DeclaredAttributes::check`] turns
//! them into [`AttributeAnswers`] or refuses the first one that does not fit
//! with an error naming it (`attributes.quality`). Every attribute is
//! optional: a review answers what it wants to.
//!
//! **A family's declaration.** A variant of a product family (a record
//! naming its `group`) whose own record declares nothing is asked what the
//! group's record declares; a variant's own non-empty declaration wins
//! whole (the two are never merged, so a variant can ask less than its
//! family). [`DeclaredAttributes::effective`] is that rule, and the only
//! place it is decided: answers are checked against it (posts, edits,
//! imports, the review-request form), and the pages, the embed and the
//! product JSON's `effective_attributes` show it. Families are one level
//! deep, so the group's own declaration is its effective one.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::{CommentsError, Result};
use crate::rating::Rating;

/// Most attributes one record declares.
pub const MAX_ATTRIBUTES: usize = 8;
/// Most choices one choice attribute offers (a choice needs at least two).
pub const MAX_CHOICES: usize = 7;
/// Longest name of an attribute or a choice.
const MAX_NAME_LEN: usize = 32;

/// The field a declaration's errors name.
const DECLARATION_FIELD: &str = "attributes";

/// Whether `value` is a short lowercase identifier: `[a-z][a-z0-9_]{0,31}`.
fn is_identifier(value: &str) -> bool {
    let mut bytes = value.bytes();
    value.len() <= MAX_NAME_LEN
        && bytes.next().is_some_and(|b| b.is_ascii_lowercase())
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

fn declaration_error(message: impl Into<String>) -> CommentsError {
    CommentsError::Invalid {
        field: DECLARATION_FIELD,
        message: message.into(),
    }
}

/// The name of an attribute: a short lowercase identifier, so it can name a
/// field of an error, a map key of a stored item and a CSS-free label key.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct AttributeName(String);

impl AttributeName {
    pub fn parse(value: &str) -> Result<AttributeName> {
        if is_identifier(value) {
            Ok(AttributeName(value.to_owned()))
        } else {
            Err(declaration_error(format!(
                "{value:?} is not a name: 1-{MAX_NAME_LEN} characters of a-z, 0-9 and '_', \
                 starting with a letter"
            )))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for AttributeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What an attribute asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttributeKind {
    /// A rating from 1 to 5.
    Rating,
    /// One of these choices, in the order a scale shows them.
    Choice(Vec<String>),
}

/// One attribute a record asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttributeDeclaration {
    pub name: AttributeName,
    pub kind: AttributeKind,
}

/// The attributes a record asks for, in the order pages show them; valid by
/// construction (see [`DeclaredAttributes::new`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeclaredAttributes(Vec<AttributeDeclaration>);

impl DeclaredAttributes {
    /// At most [`MAX_ATTRIBUTES`], names distinct; a choice attribute offers
    /// 2 to [`MAX_CHOICES`] distinct choices, each an identifier.
    pub fn new(declarations: Vec<AttributeDeclaration>) -> Result<DeclaredAttributes> {
        if declarations.len() > MAX_ATTRIBUTES {
            return Err(declaration_error(format!(
                "must declare at most {MAX_ATTRIBUTES} attributes"
            )));
        }
        for (position, declaration) in declarations.iter().enumerate() {
            let name = &declaration.name;
            if declarations[..position].iter().any(|d| &d.name == name) {
                return Err(declaration_error(format!("{name} is declared twice")));
            }
            if let AttributeKind::Choice(choices) = &declaration.kind {
                if !(2..=MAX_CHOICES).contains(&choices.len()) {
                    return Err(declaration_error(format!(
                        "{name} must offer 2-{MAX_CHOICES} choices"
                    )));
                }
                for (at, choice) in choices.iter().enumerate() {
                    if !is_identifier(choice) {
                        return Err(declaration_error(format!(
                            "{name}: choice {choice:?} is not 1-{MAX_NAME_LEN} characters of \
                             a-z, 0-9 and '_', starting with a letter"
                        )));
                    }
                    if choices[..at].contains(choice) {
                        return Err(declaration_error(format!(
                            "{name}: choice {choice} is offered twice"
                        )));
                    }
                }
            }
        }
        Ok(DeclaredAttributes(declarations))
    }

    pub fn iter(&self) -> impl Iterator<Item = &AttributeDeclaration> {
        self.0.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn get(&self, name: &str) -> Option<&AttributeDeclaration> {
        self.0.iter().find(|d| d.name.as_str() == name)
    }

    /// What a product's reviews are asked: its record's own declaration
    /// (`own`), or when that declares nothing, its family's (`group`, the
    /// declaration of the group its record names; `None` for a product in
    /// no family or a group without a record).
    pub fn effective<'a>(
        own: &'a DeclaredAttributes,
        group: Option<&'a DeclaredAttributes>,
    ) -> &'a DeclaredAttributes {
        match (own.is_empty(), group) {
            (true, Some(group)) => group,
            _ => own,
        }
    }

    /// The answers `given` holds, checked against this declaration: every
    /// name declared, a rating attribute's value an integer 1–5, a choice
    /// attribute's one of its choices. The first that breaks a rule is an
    /// error naming it (`attributes.<name>`).
    pub fn check(&self, given: &BTreeMap<String, AttributeInput>) -> Result<AttributeAnswers> {
        let mut answers = BTreeMap::new();
        for (name, input) in given {
            let bad = |message: String| CommentsError::InvalidAttribute {
                // A name that is no identifier is not echoed into a field.
                field: if is_identifier(name) {
                    format!("{DECLARATION_FIELD}.{name}")
                } else {
                    DECLARATION_FIELD.to_owned()
                },
                message,
            };
            let Some(declaration) = self.get(name) else {
                let declared: Vec<&str> = self.iter().map(|d| d.name.as_str()).collect();
                return Err(bad(match declared.is_empty() {
                    true => "this product asks for no attributes".to_owned(),
                    false => format!(
                        "is not an attribute of this product (it asks for {})",
                        declared.join(", ")
                    ),
                }));
            };
            let answer = match (&declaration.kind, input) {
                (AttributeKind::Rating, AttributeInput::Integer(value)) => AttributeAnswer::Rating(
                    Rating::new(*value)
                        .map_err(|_| bad("must be an integer from 1 to 5".into()))?,
                ),
                (AttributeKind::Rating, AttributeInput::Text(_)) => {
                    return Err(bad("must be an integer from 1 to 5".into()));
                }
                (AttributeKind::Choice(choices), AttributeInput::Text(choice))
                    if choices.contains(choice) =>
                {
                    AttributeAnswer::Choice(choice.clone())
                }
                (AttributeKind::Choice(choices), _) => {
                    return Err(bad(format!("must be one of {}", choices.join(", "))));
                }
            };
            answers.insert(declaration.name.clone(), answer);
        }
        Ok(AttributeAnswers(answers))
    }
}

/// An answer as a client sends it, before it is checked: a JSON number or
/// string (a form's or a CSV cell's text that is a whole number counts as
/// a number, see [`AttributeInput::from_text`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AttributeInput {
    Integer(i64),
    Text(String),
}

impl AttributeInput {
    /// A form field's or CSV cell's text: a whole number is a rating.
    pub fn from_text(text: &str) -> AttributeInput {
        match text.trim().parse() {
            Ok(number) => AttributeInput::Integer(number),
            Err(_) => AttributeInput::Text(text.trim().to_owned()),
        }
    }
}

/// One checked answer.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(untagged)]
pub enum AttributeAnswer {
    Rating(Rating),
    /// One of the attribute's choices (an identifier).
    Choice(String),
}

impl AttributeAnswer {
    /// The answer as text: a rating's digit, a choice's name. The two never
    /// look alike (a choice starts with a letter), so it reads back alone.
    pub fn key(&self) -> String {
        match self {
            AttributeAnswer::Rating(rating) => rating.to_string(),
            AttributeAnswer::Choice(choice) => choice.clone(),
        }
    }

    /// The answer [`AttributeAnswer::key`] wrote.
    pub fn from_key(key: &str) -> Option<AttributeAnswer> {
        match key.parse::<i64>() {
            Ok(value) => Rating::new(value).ok().map(AttributeAnswer::Rating),
            Err(_) => is_identifier(key).then(|| AttributeAnswer::Choice(key.to_owned())),
        }
    }
}

/// A review's answers, by attribute name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct AttributeAnswers(BTreeMap<AttributeName, AttributeAnswer>);

impl AttributeAnswers {
    /// Answers read back from storage, whose names and values were checked
    /// when they were written.
    pub(crate) fn from_stored(answers: BTreeMap<AttributeName, AttributeAnswer>) -> Self {
        AttributeAnswers(answers)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&AttributeName, &AttributeAnswer)> {
        self.0.iter()
    }

    pub fn get(&self, name: &str) -> Option<&AttributeAnswer> {
        self.0
            .iter()
            .find(|(n, _)| n.as_str() == name)
            .map(|(_, a)| a)
    }
}

/// How a product's counted comments answered one attribute: the exact
/// distribution (a rating attribute's by `1`–`5`, zeros included; a choice
/// attribute's by choice, only those given) and, for a rating, the average.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttributeStats {
    pub distribution: BTreeMap<String, u64>,
}

impl AttributeStats {
    /// The distribution of `counts` (answers by their key).
    pub(crate) fn of(counts: &BTreeMap<AttributeAnswer, u64>) -> AttributeStats {
        let mut distribution: BTreeMap<String, u64> = counts
            .iter()
            .map(|(answer, count)| (answer.key(), *count))
            .collect();
        if counts
            .keys()
            .any(|answer| matches!(answer, AttributeAnswer::Rating(_)))
        {
            for rating in Rating::ALL {
                distribution.entry(rating.to_string()).or_default();
            }
        }
        AttributeStats { distribution }
    }

    /// How many counted comments answered.
    pub fn count(&self) -> u64 {
        self.distribution.values().sum()
    }

    /// Per rating 1–5, how many gave it (all zero for a choice attribute).
    pub fn ratings(&self) -> [u64; 5] {
        Rating::ALL.map(|rating| {
            self.distribution
                .get(&rating.to_string())
                .copied()
                .unwrap_or(0)
        })
    }

    /// Whether the answers are ratings.
    pub fn is_rating(&self) -> bool {
        self.ratings().iter().sum::<u64>() > 0
    }
}

/// A declaration of `quality` (a rating) and `fit` (three choices), for
/// the codecs' tests.
#[cfg(test)]
pub(crate) fn test_declaration() -> DeclaredAttributes {
    let name = |value: &str| AttributeName(value.to_owned());
    DeclaredAttributes(vec![
        AttributeDeclaration {
            name: name("quality"),
            kind: AttributeKind::Rating,
        },
        AttributeDeclaration {
            name: name("fit"),
            kind: AttributeKind::Choice(vec![
                "runs_small".into(),
                "true_to_size".into(),
                "runs_large".into(),
            ]),
        },
    ])
}

/// Answers to [`test_declaration`]: quality 4, fit runs small.
#[cfg(test)]
pub(crate) fn test_answers() -> AttributeAnswers {
    let name = |value: &str| AttributeName(value.to_owned());
    AttributeAnswers(
        [
            (
                name("quality"),
                AttributeAnswer::Rating(Rating::new(4).expect("a rating")),
            ),
            (name("fit"), AttributeAnswer::Choice("runs_small".into())),
        ]
        .into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(value: &str) -> AttributeName {
        AttributeName::parse(value).unwrap()
    }

    fn declared() -> DeclaredAttributes {
        DeclaredAttributes::new(test_declaration().0).unwrap()
    }

    fn given(pairs: &[(&str, AttributeInput)]) -> BTreeMap<String, AttributeInput> {
        pairs
            .iter()
            .map(|(name, input)| (name.to_string(), input.clone()))
            .collect()
    }

    fn field_of(result: Result<AttributeAnswers>) -> String {
        match result {
            Err(CommentsError::InvalidAttribute { field, .. }) => field,
            other => panic!("expected an attribute error, got {other:?}"),
        }
    }

    #[test]
    fn names_are_short_lowercase_identifiers() {
        for good in ["fit", "quality", "a", "size_2", &"x".repeat(32)] {
            assert!(AttributeName::parse(good).is_ok(), "{good:?}");
        }
        for bad in [
            "",
            "Fit",
            "2fit",
            "_fit",
            "fit-x",
            "fit.x",
            "ü",
            &"x".repeat(33),
        ] {
            assert!(AttributeName::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_declaration_is_bounded_and_distinct() {
        let rating = |n: &str| AttributeDeclaration {
            name: name(n),
            kind: AttributeKind::Rating,
        };
        let too_many: Vec<_> = (0..=MAX_ATTRIBUTES)
            .map(|i| rating(&format!("a{i}")))
            .collect();
        assert!(DeclaredAttributes::new(too_many).is_err());
        assert!(DeclaredAttributes::new(vec![rating("q"), rating("q")]).is_err());
        let choices = |choices: &[&str]| {
            DeclaredAttributes::new(vec![AttributeDeclaration {
                name: name("fit"),
                kind: AttributeKind::Choice(choices.iter().map(|c| c.to_string()).collect()),
            }])
        };
        assert!(choices(&["one"]).is_err(), "a choice needs two");
        assert!(choices(&["a", "a"]).is_err());
        assert!(choices(&["a", "B"]).is_err());
        assert!(choices(&["a", "b", "c", "d", "e", "f", "g", "h"]).is_err());
        assert!(choices(&["a", "b"]).is_ok());
        assert!(matches!(
            choices(&["a", "a"]),
            Err(CommentsError::Invalid {
                field: "attributes",
                ..
            })
        ));
    }

    #[test]
    fn answers_are_checked_against_the_declaration_and_name_the_field() {
        let declared = declared();
        let answers = declared
            .check(&given(&[
                ("quality", AttributeInput::Integer(4)),
                ("fit", AttributeInput::Text("runs_small".into())),
            ]))
            .unwrap();
        assert_eq!(
            answers.get("quality"),
            Some(&AttributeAnswer::Rating(Rating::new(4).unwrap()))
        );
        assert_eq!(
            answers.get("fit"),
            Some(&AttributeAnswer::Choice("runs_small".into()))
        );
        for (bad, field) in [
            (
                ("quality", AttributeInput::Integer(6)),
                "attributes.quality",
            ),
            (
                ("quality", AttributeInput::Integer(0)),
                "attributes.quality",
            ),
            (
                ("quality", AttributeInput::Text("4".into())),
                "attributes.quality",
            ),
            (
                ("fit", AttributeInput::Text("huge".into())),
                "attributes.fit",
            ),
            (("fit", AttributeInput::Integer(2)), "attributes.fit"),
            (("colour", AttributeInput::Integer(2)), "attributes.colour"),
            (("Not A Name", AttributeInput::Integer(2)), "attributes"),
        ] {
            assert_eq!(
                field_of(declared.check(&given(std::slice::from_ref(&bad)))),
                field,
                "{bad:?}"
            );
        }
        assert_eq!(
            field_of(
                DeclaredAttributes::default()
                    .check(&given(&[("quality", AttributeInput::Integer(4))]))
            ),
            "attributes.quality"
        );
        assert!(declared.check(&BTreeMap::new()).unwrap().is_empty());
    }

    #[test]
    fn a_variant_declaring_nothing_asks_its_familys_and_its_own_wins_whole() {
        let family = declared();
        let none = DeclaredAttributes::default();
        let own = DeclaredAttributes::new(vec![AttributeDeclaration {
            name: name("value"),
            kind: AttributeKind::Rating,
        }])
        .unwrap();
        assert_eq!(DeclaredAttributes::effective(&none, Some(&family)), &family);
        assert_eq!(DeclaredAttributes::effective(&own, Some(&family)), &own);
        assert_eq!(DeclaredAttributes::effective(&own, None), &own);
        assert_eq!(DeclaredAttributes::effective(&none, None), &none);
    }

    #[test]
    fn form_text_reads_as_a_number_or_a_choice_and_keys_read_back() {
        assert_eq!(AttributeInput::from_text(" 3 "), AttributeInput::Integer(3));
        assert_eq!(
            AttributeInput::from_text("runs_large"),
            AttributeInput::Text("runs_large".into())
        );
        for answer in [
            AttributeAnswer::Rating(Rating::new(1).unwrap()),
            AttributeAnswer::Choice("true_to_size".into()),
        ] {
            assert_eq!(AttributeAnswer::from_key(&answer.key()), Some(answer));
        }
        assert_eq!(AttributeAnswer::from_key("9"), None);
        assert_eq!(AttributeAnswer::from_key("Bad"), None);
    }
}
