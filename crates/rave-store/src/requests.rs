//! The typed operations as DynamoDB's request format carries them, for the
//! backends that send real requests (the AWS SDK client, and dynoxide in the
//! bench): which expressions each operation sends, rendered through one
//! [`Renderer`] so they share one set of placeholders, and the names its
//! enum members have on the wire.
//!
//! Each client then only moves these fields into its own request type and
//! converts the placeholder values into its own attribute value type; the
//! rules (an update without actions sends no `UpdateExpression`, the order
//! the expressions are rendered in and so their placeholders' numbers) are
//! written here once.

use std::collections::HashMap;

use crate::ops::{
    DeleteItemInput, PutItemInput, QueryInput, ReturnValues, ScanInput, Select,
    TransactWriteAction, UpdateItemInput,
};
use crate::render::Renderer;
use crate::value::AttributeValue;

/// One request's expressions in DynamoDB's syntax, and the placeholder maps
/// they share. Each is `None` when the request has none: DynamoDB refuses
/// empty expressions and empty maps.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestExpressions {
    pub key_condition: Option<String>,
    pub update: Option<String>,
    /// A write's `ConditionExpression`.
    pub condition: Option<String>,
    /// A read's `FilterExpression`.
    pub filter: Option<String>,
    pub projection: Option<String>,
    pub names: Option<HashMap<String, String>>,
    pub values: Option<HashMap<String, AttributeValue>>,
}

impl RequestExpressions {
    fn with_placeholders(self, renderer: Renderer) -> RequestExpressions {
        let (names, values) = renderer.finish();
        RequestExpressions {
            names,
            values,
            ..self
        }
    }

    /// The placeholder values in a client's own attribute value type.
    pub fn values_as<T>(
        &self,
        convert: impl Fn(&AttributeValue) -> T,
    ) -> Option<HashMap<String, T>> {
        self.values.as_ref().map(|values| {
            values
                .iter()
                .map(|(placeholder, value)| (placeholder.clone(), convert(value)))
                .collect()
        })
    }
}

impl PutItemInput {
    pub fn expressions(&self) -> RequestExpressions {
        let mut renderer = Renderer::default();
        RequestExpressions {
            condition: self.condition.as_ref().map(|c| renderer.condition(c)),
            ..RequestExpressions::default()
        }
        .with_placeholders(renderer)
    }
}

impl UpdateItemInput {
    pub fn expressions(&self) -> RequestExpressions {
        let mut renderer = Renderer::default();
        // An update without actions is UpdateItem without an expression.
        let update = Some(renderer.update(&self.update)).filter(|_| !self.update.is_empty());
        RequestExpressions {
            update,
            condition: self.condition.as_ref().map(|c| renderer.condition(c)),
            ..RequestExpressions::default()
        }
        .with_placeholders(renderer)
    }
}

impl DeleteItemInput {
    pub fn expressions(&self) -> RequestExpressions {
        let mut renderer = Renderer::default();
        RequestExpressions {
            condition: self.condition.as_ref().map(|c| renderer.condition(c)),
            ..RequestExpressions::default()
        }
        .with_placeholders(renderer)
    }
}

impl QueryInput {
    pub fn expressions(&self) -> RequestExpressions {
        let mut renderer = Renderer::default();
        RequestExpressions {
            key_condition: Some(renderer.key_condition(&self.key_condition)),
            filter: self.filter.as_ref().map(|c| renderer.condition(c)),
            projection: self.projection.as_ref().map(|p| renderer.projection(p)),
            ..RequestExpressions::default()
        }
        .with_placeholders(renderer)
    }
}

impl ScanInput {
    pub fn expressions(&self) -> RequestExpressions {
        let mut renderer = Renderer::default();
        RequestExpressions {
            filter: self.filter.as_ref().map(|c| renderer.condition(c)),
            projection: self.projection.as_ref().map(|p| renderer.projection(p)),
            ..RequestExpressions::default()
        }
        .with_placeholders(renderer)
    }
}

impl TransactWriteAction {
    /// The action's expressions; a transaction's Update always sends its
    /// `UpdateExpression`, which DynamoDB requires there.
    pub fn expressions(&self) -> RequestExpressions {
        let mut renderer = Renderer::default();
        let expressions = match self {
            TransactWriteAction::Put { condition, .. }
            | TransactWriteAction::Delete { condition, .. } => RequestExpressions {
                condition: condition.as_ref().map(|c| renderer.condition(c)),
                ..RequestExpressions::default()
            },
            TransactWriteAction::Update {
                update, condition, ..
            } => RequestExpressions {
                update: Some(renderer.update(update)),
                condition: condition.as_ref().map(|c| renderer.condition(c)),
                ..RequestExpressions::default()
            },
            TransactWriteAction::ConditionCheck { condition, .. } => RequestExpressions {
                condition: Some(renderer.condition(condition)),
                ..RequestExpressions::default()
            },
        };
        expressions.with_placeholders(renderer)
    }
}

impl ReturnValues {
    /// The member's value on the wire (`ALL_OLD`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ReturnValues::None => "NONE",
            ReturnValues::AllOld => "ALL_OLD",
            ReturnValues::AllNew => "ALL_NEW",
            ReturnValues::UpdatedOld => "UPDATED_OLD",
            ReturnValues::UpdatedNew => "UPDATED_NEW",
        }
    }

    /// The choice the wire value `name` stands for.
    pub fn from_wire(name: &str) -> Option<ReturnValues> {
        [
            ReturnValues::None,
            ReturnValues::AllOld,
            ReturnValues::AllNew,
            ReturnValues::UpdatedOld,
            ReturnValues::UpdatedNew,
        ]
        .into_iter()
        .find(|choice| choice.as_str() == name)
    }
}

impl Select {
    /// The member's value on the wire (`ALL_ATTRIBUTES`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Select::AllAttributes => "ALL_ATTRIBUTES",
            Select::AllProjectedAttributes => "ALL_PROJECTED_ATTRIBUTES",
            Select::SpecificAttributes => "SPECIFIC_ATTRIBUTES",
            Select::Count => "COUNT",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{Condition, Path, Update};
    use crate::item;

    #[test]
    fn an_update_without_actions_sends_no_update_expression() {
        let input = UpdateItemInput {
            table: "t".into(),
            key: item! {"pk" => "a"},
            update: Update::default(),
            condition: Some(Condition::AttributeExists(Path::attr("pk"))),
            return_values: ReturnValues::None,
        };
        let expressions = input.expressions();
        assert_eq!(expressions.update, None);
        assert_eq!(
            expressions.condition.as_deref(),
            Some("attribute_exists(#n0)")
        );
        assert_eq!(
            expressions.names,
            Some(HashMap::from([("#n0".to_owned(), "pk".to_owned())]))
        );
        assert_eq!(expressions.values, None);
    }

    #[test]
    fn a_transactions_update_always_sends_its_expression() {
        let action = TransactWriteAction::Update {
            table: "t".into(),
            key: item! {"pk" => "a"},
            update: Update::default(),
            condition: None,
        };
        assert!(action.expressions().update.is_some());
    }
}
