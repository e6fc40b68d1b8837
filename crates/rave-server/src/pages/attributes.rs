//! Sub-ratings and fit on a product's page and fragment: a bar (a
//! `<meter>`) for each rating attribute's average, a scale of a choice
//! attribute's choices in their declared order (`fit`: runs small, true to
//! size, runs large) with each choice's share, and each comment's answers;
//! and the questions of the review-request form (`questions`).
//!
//! Only what the product asks is shown, in its order: its record's
//! declaration, or its group's when it declares none (`asked`, see
//! `rave_comments::DeclaredAttributes::effective`); a family's page shows
//! the group's bars and each comment's answers to what its variant asks. Names
//! and choices are identifiers (`[a-z][a-z0-9_]*`, checked when declared),
//! so they reach the page as they are; `<meter>` needs no style attribute,
//! which the pages' policy refuses.

use std::fmt::Write;

use rave_comments::{AttributeAnswer, AttributeKind, Comment, DeclaredAttributes, ProductStats};

/// The review form's questions for the attributes `asked`, in their
/// order: one optional select each, named as the API's problems name the
/// answer (`attributes.quality`), a rating's options `rating_options`, a
/// choice's its declared choices; nothing when nothing is asked.
pub(super) fn questions(
    asked: &DeclaredAttributes,
    rating_options: impl Fn(&mut String),
    out: &mut String,
) {
    if asked.is_empty() {
        return;
    }
    out.push_str("<fieldset><legend>More about it (each optional)</legend>");
    for declaration in asked.iter() {
        let name = declaration.name.as_str();
        let _ = write!(
            out,
            "<p><label>{} <select name=\"{ANSWER_PREFIX}{name}\">\
             <option value=\"\" selected>No answer</option>",
            label(name)
        );
        match &declaration.kind {
            AttributeKind::Rating => rating_options(out),
            AttributeKind::Choice(choices) => {
                for choice in choices {
                    let _ = write!(out, "<option value=\"{choice}\">{}</option>", label(choice));
                }
            }
        }
        out.push_str("</select></label></p>");
    }
    out.push_str("</fieldset>");
}

/// Before an attribute's name in a form field's name, as in the API's
/// problems (`attributes.quality`).
pub(super) const ANSWER_PREFIX: &str = "attributes.";

/// An identifier as a shopper reads it: `runs_small` as "Runs small".
pub(super) fn label(name: &str) -> String {
    let words = name.replace('_', " ");
    let mut chars = words.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The bars and scales of the attributes `asked`, for `stats` (nothing
/// when no counted comment answered any).
pub(super) fn summary(asked: &DeclaredAttributes, stats: &ProductStats, out: &mut String) {
    let mut rows = String::new();
    for declaration in asked.iter() {
        let Some(counted) = stats.attributes.get(&declaration.name) else {
            continue;
        };
        let count = counted.count();
        if count == 0 {
            continue;
        }
        let name = label(declaration.name.as_str());
        match &declaration.kind {
            AttributeKind::Rating => {
                let average = counted.average().unwrap_or(0.0);
                let _ = write!(
                    rows,
                    "<tr class=\"rave-attribute\"><th scope=\"row\">{name}</th>\
                     <td><meter min=\"1\" max=\"5\" value=\"{average}\">{average:.2}</meter></td>\
                     <td class=\"rave-attribute-value\">{average:.1} out of 5</td></tr>"
                );
            }
            AttributeKind::Choice(choices) => {
                let _ = write!(
                    rows,
                    "<tr class=\"rave-attribute\"><th scope=\"row\">{name}</th><td colspan=\"2\">\
                     <ol class=\"rave-scale\" aria-label=\"{name}\">"
                );
                for choice in choices {
                    let given = counted.distribution.get(choice).copied().unwrap_or(0);
                    let _ = write!(
                        rows,
                        "<li><meter min=\"0\" max=\"{count}\" value=\"{given}\">{given}</meter> \
                         {} <span class=\"rave-scale-count\">{given}</span></li>",
                        label(choice)
                    );
                }
                rows.push_str("</ol></td></tr>");
            }
        }
    }
    if !rows.is_empty() {
        out.push_str("<table class=\"rave-attributes\"><caption>Details</caption><tbody>");
        out.push_str(&rows);
        out.push_str("</tbody></table>");
    }
}

/// A comment's answers to the attributes `asked`, in their order.
pub(super) fn answers(asked: &DeclaredAttributes, comment: &Comment, out: &mut String) {
    let given: Vec<String> = asked
        .iter()
        .filter_map(|declaration| {
            let answer = comment.attributes.get(declaration.name.as_str())?;
            let shown = match answer {
                AttributeAnswer::Rating(rating) => format!("{rating}/5"),
                AttributeAnswer::Choice(choice) => label(choice),
            };
            Some(format!("{}: {shown}", label(declaration.name.as_str())))
        })
        .collect();
    if !given.is_empty() {
        let _ = write!(out, "<p class=\"rave-answers\">{}</p>", given.join(" · "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_read_as_words() {
        assert_eq!(label("runs_small"), "Runs small");
        assert_eq!(label("quality"), "Quality");
        assert_eq!(label(""), "");
    }
}
