//! The four statements' grammar (the developer guide's PartiQL reference):
//!
//! ```text
//! SELECT * | path [, ...] FROM table[."index"] [WHERE condition]
//!        [ORDER BY path [ASC | DESC]]
//! INSERT INTO table VALUE {'name': value, ...}
//! UPDATE table (SET path = value [, ...] | REMOVE path [, ...])...
//!        WHERE condition [RETURNING (ALL | MODIFIED) (OLD | NEW) *]
//! DELETE FROM table WHERE condition [RETURNING ALL OLD *]
//! FROM table WHERE condition (SET ... | REMOVE ...)... [RETURNING ...]
//! ```
//!
//! The last is PartiQL's FROM-first UPDATE, which DynamoDB runs as the
//! UPDATE it reorders.
//!
//! `SET path = set_add(path, <<...>>)` and `set_delete` are an update's ADD
//! and DELETE actions. Keywords are case-insensitive; names are not.

use crate::{AttributeValue, Item, ReturnValues};

use super::cursor::Cursor;
use super::error::PartiqlError;
use super::rewrite::{Grammar, Placeholders};

/// A statement as read, its expressions still as expression text over
/// `placeholders`.
pub(super) struct Written {
    pub(super) table: String,
    pub(super) form: Form,
    pub(super) placeholders: Placeholders,
    pub(super) condition: Option<String>,
}

pub(super) enum Form {
    Select {
        index: Option<String>,
        projection: Option<String>,
        descending: Option<bool>,
    },
    Insert {
        item: Item,
    },
    Update {
        update: String,
        returning: ReturnValues,
    },
    Delete {
        returning: ReturnValues,
    },
}

impl Cursor<'_> {
    pub(super) fn statement(&mut self) -> Result<Written, PartiqlError> {
        let mut placeholders = Placeholders::default();
        if self.eat_keyword("SELECT") {
            let projection = match self.eat_symbol("*") {
                true => None,
                false => {
                    let mut paths = vec![self.path(&mut placeholders)?];
                    while self.eat_symbol(",") {
                        paths.push(self.path(&mut placeholders)?);
                    }
                    Some(paths.join(", "))
                }
            };
            self.expect_keyword("FROM")?;
            let (table, index) = self.table_path()?;
            let condition = self.where_clause(&mut placeholders, &["ORDER"])?;
            let descending = match self.eat_keyword("ORDER") {
                true => {
                    self.expect_keyword("BY")?;
                    if condition.is_none() {
                        return Err(PartiqlError::OrderWithoutWhere);
                    }
                    self.name()?;
                    let descending = self.eat_keyword("DESC");
                    if !descending {
                        self.eat_keyword("ASC");
                    }
                    Some(descending)
                }
                false => None,
            };
            let form = Form::Select {
                index,
                projection,
                descending,
            };
            return self.end(table, form, placeholders, condition);
        }
        if self.eat_keyword("INSERT") {
            self.expect_keyword("INTO")?;
            let table = self.table()?;
            self.expect_keyword("VALUE")?;
            let AttributeValue::M(item) = self.literal()? else {
                return Err(self.malformed());
            };
            return self.end(table, Form::Insert { item }, placeholders, None);
        }
        // `UPDATE t SET .. WHERE ..`, or PartiQL's FROM-first form,
        // `FROM t WHERE .. SET ..`.
        let from_first = self.at_keyword("FROM");
        if self.eat_keyword("UPDATE") || self.eat_keyword("FROM") {
            let table = self.table()?;
            let mut condition = match from_first {
                true => Some(
                    self.where_clause(&mut placeholders, &["SET", "REMOVE"])?
                        .ok_or_else(|| self.malformed())?,
                ),
                false => None,
            };
            let (mut set, mut remove) = (Vec::new(), Vec::new());
            let (mut add, mut delete) = (Vec::new(), Vec::new());
            loop {
                if self.eat_keyword("SET") {
                    loop {
                        let path = self.path(&mut placeholders)?;
                        self.expect_symbol("=")?;
                        match self.set_function()? {
                            Some((adds, value)) => {
                                let action = format!("{path} {}", placeholders.value(value));
                                match adds {
                                    true => add.push(action),
                                    false => delete.push(action),
                                }
                            }
                            None => {
                                let value = self.rewrite(
                                    Grammar::Assignment,
                                    &[",", "SET", "REMOVE", "WHERE", "RETURNING"],
                                    &mut placeholders,
                                )?;
                                set.push(format!("{path} = {value}"));
                            }
                        }
                        if !self.eat_symbol(",") {
                            break;
                        }
                    }
                } else if self.eat_keyword("REMOVE") {
                    remove.push(self.path(&mut placeholders)?);
                    while self.eat_symbol(",") {
                        remove.push(self.path(&mut placeholders)?);
                    }
                } else {
                    break;
                }
            }
            if set.is_empty() && remove.is_empty() && add.is_empty() && delete.is_empty() {
                return Err(self.malformed());
            }
            if !from_first {
                condition = self.where_clause(&mut placeholders, &["RETURNING"])?;
            }
            let returning = self.returning()?;
            let clauses: Vec<String> = [
                ("SET", set),
                ("REMOVE", remove),
                ("ADD", add),
                ("DELETE", delete),
            ]
            .into_iter()
            .filter(|(_, actions)| !actions.is_empty())
            .map(|(clause, actions)| format!("{clause} {}", actions.join(", ")))
            .collect();
            let form = Form::Update {
                update: clauses.join(" "),
                returning,
            };
            return self.end(table, form, placeholders, condition);
        }
        if self.eat_keyword("DELETE") {
            self.expect_keyword("FROM")?;
            let table = self.table()?;
            let condition = self.where_clause(&mut placeholders, &["RETURNING"])?;
            let returning = self.returning()?;
            let written = match returning {
                ReturnValues::None | ReturnValues::AllOld => None,
                ReturnValues::AllNew => Some("ALL NEW"),
                ReturnValues::UpdatedOld => Some("MODIFIED OLD"),
                ReturnValues::UpdatedNew => Some("MODIFIED NEW"),
            };
            if let Some(written) = written {
                return Err(PartiqlError::DeleteReturning(written.to_owned()));
            }
            return self.end(table, Form::Delete { returning }, placeholders, condition);
        }
        Err(PartiqlError::NotDataManipulation)
    }

    /// `FROM`'s `"table"` or `"table"."index"`.
    fn table_path(&mut self) -> Result<(String, Option<String>), PartiqlError> {
        let table = self.component()?;
        if !self.eat_symbol(".") {
            return Ok((table, None));
        }
        let index = self.component()?;
        if self.at_symbol(".") {
            return Err(PartiqlError::LongPath);
        }
        Ok((table, Some(index)))
    }

    /// A write's table: a path of one component.
    fn table(&mut self) -> Result<String, PartiqlError> {
        match self.table_path()? {
            (table, None) => Ok(table),
            (_, Some(_)) => Err(self.malformed()),
        }
    }

    fn component(&mut self) -> Result<String, PartiqlError> {
        match self.name()? {
            name if name.is_empty() => Err(PartiqlError::EmptyPathComponent),
            name => Ok(name),
        }
    }

    fn end(
        &mut self,
        table: String,
        form: Form,
        placeholders: Placeholders,
        condition: Option<String>,
    ) -> Result<Written, PartiqlError> {
        if !self.at_end() {
            return Err(self.malformed());
        }
        self.check_parameters_used()?;
        Ok(Written {
            table,
            form,
            placeholders,
            condition,
        })
    }

    fn where_clause(
        &mut self,
        placeholders: &mut Placeholders,
        stops: &[&str],
    ) -> Result<Option<String>, PartiqlError> {
        match self.eat_keyword("WHERE") {
            true => Ok(Some(self.rewrite(
                Grammar::Condition,
                stops,
                placeholders,
            )?)),
            false => Ok(None),
        }
    }

    /// `set_add(path, value)` (true) or `set_delete(path, value)` (false).
    fn set_function(&mut self) -> Result<Option<(bool, AttributeValue)>, PartiqlError> {
        let adds = if self.at_keyword("set_add") {
            true
        } else if self.at_keyword("set_delete") {
            false
        } else {
            return Ok(None);
        };
        self.next();
        self.expect_symbol("(")?;
        self.name()?;
        while self.eat_symbol(".") {
            self.name()?;
        }
        self.expect_symbol(",")?;
        let value = self.literal()?;
        self.expect_symbol(")")?;
        Ok(Some((adds, value)))
    }

    /// `RETURNING (ALL | MODIFIED) (OLD | NEW) *`, NONE without one.
    fn returning(&mut self) -> Result<ReturnValues, PartiqlError> {
        if !self.eat_keyword("RETURNING") {
            return Ok(ReturnValues::None);
        }
        let all = match (self.eat_keyword("ALL"), self.eat_keyword("MODIFIED")) {
            (true, false) => true,
            (false, true) => false,
            _ => return Err(self.malformed()),
        };
        let old = match (self.eat_keyword("OLD"), self.eat_keyword("NEW")) {
            (true, false) => true,
            (false, true) => false,
            _ => return Err(self.malformed()),
        };
        self.expect_symbol("*")?;
        Ok(match (all, old) {
            (true, true) => ReturnValues::AllOld,
            (true, false) => ReturnValues::AllNew,
            (false, true) => ReturnValues::UpdatedOld,
            (false, false) => ReturnValues::UpdatedNew,
        })
    }
}
