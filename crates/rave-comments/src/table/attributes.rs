//! How attributes are stored: a record's declaration (product records, and
//! any record that asks for attributes), and a review's answers (in the
//! comment's listed `details` map, so listings show them with no second
//! read).
//!
//! A declaration is a list of maps, in its order: `{name: S, kind: S
//! "rating"}` or `{name: S, kind: S "choice", choices: L of S}`. Answers are
//! a map from name to a number (a rating 1–5) or a string (a choice).

use std::collections::BTreeMap;

use rave_store::{AttributeValue, ItemView, Number};

use super::Malformed;
use crate::attributes::{
    AttributeAnswer, AttributeAnswers, AttributeDeclaration, AttributeKind, AttributeName,
    DeclaredAttributes,
};
use crate::rating::Rating;

const NAME: &str = "name";
const KIND: &str = "kind";
const CHOICES: &str = "choices";
const KIND_RATING: &str = "rating";
const KIND_CHOICE: &str = "choice";

/// A declaration as stored, `None` when it declares nothing.
pub(crate) fn encode_declaration(declared: &DeclaredAttributes) -> Option<AttributeValue> {
    if declared.is_empty() {
        return None;
    }
    let declarations = declared
        .iter()
        .map(|declaration| {
            let mut map = BTreeMap::new();
            map.insert(
                NAME.to_owned(),
                AttributeValue::s(declaration.name.as_str()),
            );
            match &declaration.kind {
                AttributeKind::Rating => {
                    map.insert(KIND.to_owned(), AttributeValue::s(KIND_RATING));
                }
                AttributeKind::Choice(choices) => {
                    map.insert(KIND.to_owned(), AttributeValue::s(KIND_CHOICE));
                    map.insert(
                        CHOICES.to_owned(),
                        AttributeValue::L(choices.iter().map(AttributeValue::s).collect()),
                    );
                }
            }
            AttributeValue::M(map)
        })
        .collect();
    Some(AttributeValue::L(declarations))
}

/// The declaration `item` stores under `attribute` (none when absent);
/// `item` names the record in the error when it does not decode.
pub(crate) fn decode_declaration(
    item: &(impl ItemView + ?Sized),
    value: Option<&AttributeValue>,
    attribute: &str,
) -> Result<DeclaredAttributes, Malformed> {
    let Some(value) = value else {
        return Ok(DeclaredAttributes::default());
    };
    let bad = || Malformed::new(item, format!("{attribute} is not a valid declaration"));
    let AttributeValue::L(declarations) = value else {
        return Err(bad());
    };
    let declarations = declarations
        .iter()
        .map(|declaration| {
            let AttributeValue::M(map) = declaration else {
                return Err(bad());
            };
            let text = |name: &str| map.get(name).and_then(AttributeValue::as_s);
            let name = text(NAME)
                .and_then(|name| AttributeName::parse(name).ok())
                .ok_or_else(bad)?;
            let kind = match text(KIND) {
                Some(KIND_RATING) => AttributeKind::Rating,
                Some(KIND_CHOICE) => match map.get(CHOICES) {
                    Some(AttributeValue::L(choices)) => AttributeKind::Choice(
                        choices
                            .iter()
                            .map(|c| c.as_s().map(str::to_owned).ok_or_else(bad))
                            .collect::<Result<_, _>>()?,
                    ),
                    _ => return Err(bad()),
                },
                _ => return Err(bad()),
            };
            Ok(AttributeDeclaration { name, kind })
        })
        .collect::<Result<Vec<_>, _>>()?;
    DeclaredAttributes::new(declarations).map_err(|_| bad())
}

/// A review's answers as stored, `None` when there are none.
pub(crate) fn encode_answers(answers: &AttributeAnswers) -> Option<AttributeValue> {
    if answers.is_empty() {
        return None;
    }
    Some(AttributeValue::M(
        answers
            .iter()
            .map(|(name, answer)| {
                let value = match answer {
                    AttributeAnswer::Rating(rating) => {
                        AttributeValue::N(Number::from(i64::from(rating.get())))
                    }
                    AttributeAnswer::Choice(choice) => AttributeValue::s(choice),
                };
                (name.as_str().to_owned(), value)
            })
            .collect(),
    ))
}

/// The answers stored in `value` (none when absent); `item` names the
/// comment in the error, `field` the attribute's place in it.
pub(crate) fn decode_answers(
    item: &(impl ItemView + ?Sized),
    value: Option<&AttributeValue>,
    field: &str,
) -> Result<AttributeAnswers, Malformed> {
    let Some(value) = value else {
        return Ok(AttributeAnswers::default());
    };
    let bad = |what: &str| Malformed::new(item, format!("{field}{what} is not valid"));
    let AttributeValue::M(map) = value else {
        return Err(bad(""));
    };
    let mut answers = BTreeMap::new();
    for (name, value) in map {
        let at = format!(".{name}");
        let parsed = AttributeName::parse(name).map_err(|_| bad(&at))?;
        let answer = match value {
            AttributeValue::N(number) => number
                .to_i64()
                .and_then(|n| Rating::new(n).ok())
                .map(AttributeAnswer::Rating),
            AttributeValue::S(choice) => AttributeAnswer::from_key(choice)
                .filter(|answer| matches!(answer, AttributeAnswer::Choice(_))),
            _ => None,
        }
        .ok_or_else(|| bad(&at))?;
        answers.insert(parsed, answer);
    }
    Ok(AttributeAnswers::from_stored(answers))
}

#[cfg(test)]
mod tests {
    use rave_store::Item;

    use super::*;
    use crate::attributes::AttributeInput;

    fn declared() -> DeclaredAttributes {
        DeclaredAttributes::new(vec![
            AttributeDeclaration {
                name: AttributeName::parse("quality").unwrap(),
                kind: AttributeKind::Rating,
            },
            AttributeDeclaration {
                name: AttributeName::parse("fit").unwrap(),
                kind: AttributeKind::Choice(vec!["runs_small".into(), "runs_large".into()]),
            },
        ])
        .unwrap()
    }

    #[test]
    fn a_declaration_round_trips_in_its_order_and_a_broken_one_names_the_item() {
        let item = Item::new();
        let stored = encode_declaration(&declared()).unwrap();
        assert_eq!(
            decode_declaration(&item, Some(&stored), "attributes").unwrap(),
            declared()
        );
        assert_eq!(encode_declaration(&DeclaredAttributes::default()), None);
        assert!(
            decode_declaration(&item, None, "attributes")
                .unwrap()
                .is_empty()
        );
        let AttributeValue::L(mut list) = stored else {
            unreachable!("a declaration is a list")
        };
        list.push(list[0].clone());
        let error =
            decode_declaration(&item, Some(&AttributeValue::L(list)), "attributes").unwrap_err();
        assert!(error.what.contains("attributes"), "{error}");
    }

    #[test]
    fn answers_round_trip_and_a_broken_one_names_its_field() {
        let given = [
            ("quality".to_owned(), AttributeInput::Integer(2)),
            ("fit".to_owned(), AttributeInput::Text("runs_large".into())),
        ]
        .into();
        let answers = declared().check(&given).unwrap();
        let stored = encode_answers(&answers).unwrap();
        let item = Item::new();
        assert_eq!(
            decode_answers(&item, Some(&stored), "details.attributes").unwrap(),
            answers
        );
        assert_eq!(encode_answers(&AttributeAnswers::default()), None);
        let AttributeValue::M(mut map) = stored else {
            unreachable!("answers are a map")
        };
        map.insert("quality".into(), AttributeValue::N(Number::from(9i64)));
        let error =
            decode_answers(&item, Some(&AttributeValue::M(map)), "details.attributes").unwrap_err();
        assert!(error.what.contains("details.attributes.quality"), "{error}");
    }
}
