//! The personal data of a comment's author that is never shown: the email
//! address an import brought (for verification and review requests later).
//!
//! It lives in its own item, `PERSONAL#<comment id>` / `PERSONAL`, so that
//! nothing that reads comments can reach it: no index projects it, no
//! listing, page, webhook (the change stream's consumers see only comment
//! items, `ItemKind::Other` is skipped) or export of comments decodes it.
//! Only `rave export --author` reads it, for the data subject, and the
//! author's erasure deletes it with the comment. It is written in the same
//! transaction as its comment, so a comment is never stored without it.

use rave_store::{Item, ItemView};

use super::{Malformed, text};
use crate::model::Email;

const PREFIX: &str = "PERSONAL#";
const SORT_KEY: &str = "PERSONAL";
const EMAIL: &str = "email";

pub(crate) fn key(comment_id: &str) -> Item {
    super::key(format!("{PREFIX}{comment_id}"), SORT_KEY.to_owned())
}

pub(crate) fn encode(comment_id: &str, email: &Email) -> Item {
    let mut item = key(comment_id);
    item.insert(EMAIL.into(), rave_store::AttributeValue::s(email.as_str()));
    item
}

pub(crate) fn decode(item: &(impl ItemView + ?Sized)) -> Result<Email, Malformed> {
    Email::parse(text(item, EMAIL)?).map_err(|_| Malformed::new(item, "email is not valid"))
}

#[cfg(test)]
mod tests {
    use super::super::{ItemKind, describe_key};
    use super::*;

    #[test]
    fn an_email_is_kept_apart_from_its_comment_and_round_trips() {
        let email = Email::parse("ann@example.com").unwrap();
        let item = encode("01JD3X0000000000000000000A", &email);
        assert_eq!(
            describe_key(&item),
            "PERSONAL#01JD3X0000000000000000000A/PERSONAL"
        );
        assert_eq!(decode(&item).unwrap(), email);
        // No statistic, listing or webhook treats it as a comment.
        assert_eq!(ItemKind::of(&item), ItemKind::Other);
        assert_eq!(format!("{email:?}"), "Email(<redacted>)");
    }
}
