//! Typed expressions rendered to DynamoDB's expression strings, with every
//! name and value behind a placeholder (so no attribute name can collide
//! with a reserved word, and no value is ever spliced into the text). For
//! backends that speak DynamoDB's request format: the AWS SDK client, and
//! dynoxide in the bench. `parse` is the reverse, and a property test holds
//! the two to each other.

use std::collections::HashMap;

use crate::{
    AttributeValue, Comparator, Condition, KeyCondition, Operand, Path, PathElement, SetValue,
    SortOp, Update, UpdateOperand,
};

/// Expression attribute names and values, each `None` when there are none
/// (DynamoDB refuses empty maps).
pub(crate) type Placeholders = (
    Option<HashMap<String, String>>,
    Option<HashMap<String, AttributeValue>>,
);

/// Collects placeholders while expressions are rendered.
#[derive(Debug, Default)]
pub struct Renderer {
    names: HashMap<String, String>,
    values: HashMap<String, AttributeValue>,
}

impl Renderer {
    pub fn name(&mut self, name: &str) -> String {
        if let Some((placeholder, _)) = self.names.iter().find(|(_, n)| n.as_str() == name) {
            return placeholder.clone();
        }
        let placeholder = format!("#n{}", self.names.len());
        self.names.insert(placeholder.clone(), name.to_owned());
        placeholder
    }

    pub fn value(&mut self, value: &AttributeValue) -> String {
        let placeholder = format!(":v{}", self.values.len());
        self.values.insert(placeholder.clone(), value.clone());
        placeholder
    }

    pub fn path(&mut self, path: &Path) -> String {
        let mut out = String::new();
        for element in &path.0 {
            match element {
                PathElement::Attr(name) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    let placeholder = self.name(name);
                    out.push_str(&placeholder);
                }
                PathElement::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }

    fn operand(&mut self, operand: &Operand) -> String {
        match operand {
            Operand::Path(p) => self.path(p),
            Operand::Value(v) => self.value(v),
            Operand::Size(p) => format!("size({})", self.path(p)),
        }
    }

    pub fn condition(&mut self, condition: &Condition) -> String {
        match condition {
            Condition::Compare(l, op, r) => {
                let op = match op {
                    Comparator::Eq => "=",
                    Comparator::Ne => "<>",
                    Comparator::Lt => "<",
                    Comparator::Le => "<=",
                    Comparator::Gt => ">",
                    Comparator::Ge => ">=",
                };
                format!("{} {op} {}", self.operand(l), self.operand(r))
            }
            Condition::Between(v, lo, hi) => {
                format!(
                    "{} BETWEEN {} AND {}",
                    self.operand(v),
                    self.operand(lo),
                    self.operand(hi)
                )
            }
            Condition::In(v, list) => {
                let v = self.operand(v);
                let list: Vec<String> = list.iter().map(|o| self.operand(o)).collect();
                format!("{v} IN ({})", list.join(", "))
            }
            Condition::AttributeExists(p) => format!("attribute_exists({})", self.path(p)),
            Condition::AttributeNotExists(p) => format!("attribute_not_exists({})", self.path(p)),
            Condition::AttributeType(p, t) => {
                let p = self.path(p);
                format!(
                    "attribute_type({p}, {})",
                    self.value(&AttributeValue::s(t.as_str()))
                )
            }
            Condition::BeginsWith(p, o) => {
                format!("begins_with({}, {})", self.path(p), self.operand(o))
            }
            Condition::Contains(p, o) => format!("contains({}, {})", self.path(p), self.operand(o)),
            Condition::And(a, b) => format!("({}) AND ({})", self.condition(a), self.condition(b)),
            Condition::Or(a, b) => format!("({}) OR ({})", self.condition(a), self.condition(b)),
            Condition::Not(c) => format!("NOT ({})", self.condition(c)),
        }
    }

    fn update_operand(&mut self, operand: &UpdateOperand) -> String {
        match operand {
            UpdateOperand::Path(p) => self.path(p),
            UpdateOperand::Value(v) => self.value(v),
            UpdateOperand::IfNotExists(p, fallback) => {
                let p = self.path(p);
                format!("if_not_exists({p}, {})", self.update_operand(fallback))
            }
            UpdateOperand::ListAppend(a, b) => {
                let a = self.update_operand(a);
                format!("list_append({a}, {})", self.update_operand(b))
            }
        }
    }

    pub fn update(&mut self, update: &Update) -> String {
        let mut clauses = Vec::new();
        if !update.set.is_empty() {
            let actions: Vec<String> = update
                .set
                .iter()
                .map(|(path, value)| {
                    let path = self.path(path);
                    let value = match value {
                        SetValue::Operand(o) => self.update_operand(o),
                        SetValue::Plus(a, b) => {
                            let a = self.update_operand(a);
                            format!("{a} + {}", self.update_operand(b))
                        }
                        SetValue::Minus(a, b) => {
                            let a = self.update_operand(a);
                            format!("{a} - {}", self.update_operand(b))
                        }
                    };
                    format!("{path} = {value}")
                })
                .collect();
            clauses.push(format!("SET {}", actions.join(", ")));
        }
        if !update.remove.is_empty() {
            let paths: Vec<String> = update.remove.iter().map(|p| self.path(p)).collect();
            clauses.push(format!("REMOVE {}", paths.join(", ")));
        }
        for (keyword, actions) in [("ADD", &update.add), ("DELETE", &update.delete)] {
            if !actions.is_empty() {
                let rendered: Vec<String> = actions
                    .iter()
                    .map(|(p, v)| {
                        let p = self.path(p);
                        format!("{p} {}", self.value(v))
                    })
                    .collect();
                clauses.push(format!("{keyword} {}", rendered.join(", ")));
            }
        }
        clauses.join(" ")
    }

    pub fn key_condition(&mut self, condition: &KeyCondition) -> String {
        let partition = self.name(&condition.partition_name);
        let value = self.value(&condition.partition_value);
        let mut text = format!("{partition} = {value}");
        for other in condition.sort.iter().chain(&condition.more) {
            let name = self.name(&other.name);
            let clause = match &other.op {
                SortOp::Eq(v) => format!("{name} = {}", self.value(v)),
                SortOp::Lt(v) => format!("{name} < {}", self.value(v)),
                SortOp::Le(v) => format!("{name} <= {}", self.value(v)),
                SortOp::Gt(v) => format!("{name} > {}", self.value(v)),
                SortOp::Ge(v) => format!("{name} >= {}", self.value(v)),
                SortOp::Between(a, b) => {
                    let a = self.value(a);
                    format!("{name} BETWEEN {a} AND {}", self.value(b))
                }
                SortOp::BeginsWith(v) => format!("begins_with({name}, {})", self.value(v)),
            };
            text.push_str(" AND ");
            text.push_str(&clause);
        }
        text
    }

    /// A projection expression: the paths, comma-separated.
    pub fn projection(&mut self, paths: &[Path]) -> String {
        let rendered: Vec<String> = paths.iter().map(|p| self.path(p)).collect();
        rendered.join(", ")
    }

    /// The placeholders used.
    pub fn finish(self) -> Placeholders {
        (
            (!self.names.is_empty()).then_some(self.names),
            (!self.values.is_empty()).then_some(self.values),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_with_placeholders_only() {
        let mut r = Renderer::default();
        let condition = Condition::eq("status", "published").and(Condition::not_exists("PK").or(
            Condition::BeginsWith(Path::attr("a").key("b").index(2), Operand::value("x")),
        ));
        assert_eq!(
            r.condition(&condition),
            "(#n0 = :v0) AND ((attribute_not_exists(#n1)) OR (begins_with(#n2.#n3[2], :v1)))"
        );
        let update = Update::new()
            .set_value("status", "flagged")
            .remove("MODPK")
            .add("count", 1i64);
        assert_eq!(r.update(&update), "SET #n0 = :v2 REMOVE #n4 ADD #n5 :v3");
        let (names, values) = r.finish();
        assert_eq!(names.unwrap()["#n0"], "status");
        assert_eq!(values.unwrap().len(), 4);
    }

    #[test]
    fn projections_share_name_placeholders() {
        let mut r = Renderer::default();
        let paths = [Path::attr("status"), Path::attr("a").index(3).key("status")];
        assert_eq!(r.projection(&paths), "#n0, #n1[3].#n0");
        let (names, values) = r.finish();
        assert_eq!(names.unwrap().len(), 2);
        assert!(values.is_none());
    }

    #[test]
    fn key_conditions() {
        let mut r = Renderer::default();
        let k = KeyCondition::partition("GSI4PK", "PRODUCT#42")
            .with_sort("GSISK", SortOp::BeginsWith("2026".into()));
        assert_eq!(r.key_condition(&k), "#n0 = :v0 AND begins_with(#n1, :v1)");
    }
}
