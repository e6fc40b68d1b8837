//! Sub-ratings and fit in the API's bodies: a product record's declaration
//! (`attributes` of `PUT /v1/products/{id}` and the product body), a post's
//! answers (`attributes` of a new comment), a comment's answers and the
//! statistics of each attribute. The rules are the domain's
//! (`rave_comments::DeclaredAttributes`); this module only shapes them as
//! JSON and states them in the OpenAPI document.

use std::collections::BTreeMap;

use rave_comments::{
    AttributeAnswer, AttributeAnswers, AttributeDeclaration, AttributeInput, AttributeKind,
    AttributeName, AttributeStats, CommentsError, DeclaredAttributes,
};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// What kind of answer an attribute asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AttributeKindBody {
    /// A rating from 1 to 5, like the star rating.
    Rating,
    /// One of `choices`.
    Choice,
}

/// One attribute a product's reviews are asked for.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AttributeDeclarationBody {
    /// 1-32 characters of a-z, 0-9 and `_`, starting with a letter.
    #[schema(pattern = r"^[a-z][a-z0-9_]{0,31}$", example = "fit")]
    pub name: String,
    pub kind: AttributeKindBody,
    /// A choice attribute's choices (2-7, each like a name), in the order a
    /// scale shows them; absent for a rating attribute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(
        min_items = 2,
        max_items = 7,
        value_type = Option<Vec<AttributeChoice>>,
        example = json!(["runs_small", "true_to_size", "runs_large"])
    )]
    pub choices: Option<Vec<String>>,
}

/// A rating attribute's answer: an integer from 1 to 5.
#[derive(ToSchema)]
#[schema(value_type = i64, minimum = 1, maximum = 5, example = 4)]
#[allow(dead_code, reason = "a schema only; never built")]
pub(crate) struct AttributeRating(i64);

/// A choice of a choice attribute: 1-32 characters of a-z, 0-9 and `_`,
/// starting with a letter.
#[derive(ToSchema)]
#[schema(value_type = String, pattern = r"^[a-z][a-z0-9_]{0,31}$", example = "true_to_size")]
#[allow(dead_code, reason = "a schema only; never built")]
pub(crate) struct AttributeChoice(String);

/// The attributes a record declares: at most 8, names distinct.
pub(crate) fn declared(
    bodies: Vec<AttributeDeclarationBody>,
) -> rave_comments::Result<DeclaredAttributes> {
    let declarations = bodies
        .into_iter()
        .map(|body| {
            let kind = match (body.kind, body.choices) {
                (AttributeKindBody::Rating, None) => AttributeKind::Rating,
                (AttributeKindBody::Choice, Some(choices)) => AttributeKind::Choice(choices),
                (AttributeKindBody::Rating, Some(_)) => {
                    return Err(CommentsError::Invalid {
                        field: "attributes",
                        message: format!("{}: a rating attribute offers no choices", body.name),
                    });
                }
                (AttributeKindBody::Choice, None) => {
                    return Err(CommentsError::Invalid {
                        field: "attributes",
                        message: format!("{}: a choice attribute needs its choices", body.name),
                    });
                }
            };
            Ok(AttributeDeclaration {
                name: AttributeName::parse(&body.name)?,
                kind,
            })
        })
        .collect::<rave_comments::Result<Vec<_>>>()?;
    DeclaredAttributes::new(declarations)
}

/// A declaration as a record's body shows it.
pub(crate) fn declaration_bodies(declared: &DeclaredAttributes) -> Vec<AttributeDeclarationBody> {
    declared
        .iter()
        .map(|declaration| {
            let (kind, choices) = match &declaration.kind {
                AttributeKind::Rating => (AttributeKindBody::Rating, None),
                AttributeKind::Choice(choices) => {
                    (AttributeKindBody::Choice, Some(choices.clone()))
                }
            };
            AttributeDeclarationBody {
                name: declaration.name.to_string(),
                kind,
                choices,
            }
        })
        .collect()
}

/// An answer: an integer 1-5 for a rating attribute, one of its choices for
/// a choice attribute.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(untagged)]
pub(crate) enum AttributeAnswerBody {
    #[schema(value_type = AttributeRating)]
    Rating(i64),
    #[schema(value_type = AttributeChoice)]
    Choice(String),
}

/// A post's answers, by attribute name.
pub(crate) fn inputs(
    answers: BTreeMap<String, AttributeAnswerBody>,
) -> BTreeMap<String, AttributeInput> {
    answers
        .into_iter()
        .map(|(name, answer)| {
            let input = match answer {
                AttributeAnswerBody::Rating(value) => AttributeInput::Integer(value),
                AttributeAnswerBody::Choice(choice) => AttributeInput::Text(choice),
            };
            (name, input)
        })
        .collect()
}

/// A comment's answers as its body shows them.
pub(crate) fn answer_bodies(answers: &AttributeAnswers) -> BTreeMap<String, AttributeAnswerBody> {
    answers
        .iter()
        .map(|(name, answer)| {
            let body = match answer {
                AttributeAnswer::Rating(rating) => {
                    AttributeAnswerBody::Rating(i64::from(rating.get()))
                }
                AttributeAnswer::Choice(choice) => AttributeAnswerBody::Choice(choice.clone()),
            };
            (name.to_string(), body)
        })
        .collect()
}

/// How the counted comments answered one attribute.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct AttributeStatsBody {
    /// Counted comments that answered it.
    #[schema(minimum = 0, example = 12)]
    pub count: u64,
    /// A rating attribute's mean, rounded to two decimals as the star
    /// rating's; null for a choice attribute.
    #[schema(example = 4.25)]
    pub average: Option<f64>,
    /// Answers and how many gave each: a rating attribute's keys "1" to "5"
    /// (zeros included), a choice attribute's the choices given.
    #[schema(example = json!({"runs_small": 3, "true_to_size": 8, "runs_large": 1}))]
    pub distribution: BTreeMap<String, u64>,
}

/// Every attribute's statistics, by name.
pub(crate) fn stats_bodies(
    stats: &BTreeMap<AttributeName, AttributeStats>,
) -> BTreeMap<String, AttributeStatsBody> {
    stats
        .iter()
        .map(|(name, stats)| {
            let body = AttributeStatsBody {
                count: stats.count(),
                average: stats.average(),
                distribution: stats.distribution.clone(),
            };
            (name.to_string(), body)
        })
        .collect()
}
