//! The stored form of an index entry: what the index projects of its item,
//! less the strings the entry's key already holds.
//!
//! An entry's key is `hash ‖ index key ‖ table key` (`keys`), so it holds
//! the values of the table's and the index's key attributes. Written again
//! in the value, they were a quarter of a listing index's bytes: a comment's
//! entry in `all` repeated `PK`, `SK`, its partition and `GSISK`, some 150 of
//! its 600 bytes, in each of its nine indexes. The value leaves out every key
//! attribute whose value is a string, and a read takes it back from the key,
//! borrowing it where the key holds it verbatim (a string without a NUL
//! byte, which is every one rave writes), so a page allocates nothing more.
//! A number or binary key value stays in the value.
//!
//! Entries written before this form hold their key strings in the value,
//! and read as they are: a key attribute is taken from the key only when
//! the value lacks it, so no store needs rewriting.

use std::collections::btree_map::Entry;

use rave_store::{AttributeValue, Item, KeyAttribute, KeyType};

use crate::codec::{Decoded, KeyStrings, corrupt, decode_item, encode_attributes, in_name_order};
use crate::keys::{KeyReader, KeyValue};

/// The stored value of an entry projecting `attributes` (in name order),
/// whose key is made of `key_attributes` (in the key's order).
pub(crate) fn encode_entry<'a>(
    attributes: impl Iterator<Item = (&'a str, &'a AttributeValue)>,
    key_attributes: &[KeyAttribute],
) -> Vec<u8> {
    let held_by_key = |name: &str, value: &AttributeValue| {
        matches!(value, AttributeValue::S(_))
            && key_attributes
                .iter()
                .any(|key| key.key_type == KeyType::S && key.name == name)
    };
    let kept: Vec<(&str, &AttributeValue)> = attributes
        .filter(|(name, value)| !held_by_key(name, value))
        .collect();
    encode_attributes(&kept)
}

/// The string attributes of the entry stored under `key` that its value
/// leaves out, for [`ItemIndex::view`](crate::codec::ItemIndex::view).
pub(crate) fn entry_keys<'a>(
    key: &'a [u8],
    key_attributes: &'a [KeyAttribute],
) -> Decoded<KeyStrings<'a>> {
    let mut keys = KeyStrings::new();
    key_strings(key, key_attributes, |name, text| keys.push((name, text)))?;
    in_name_order(&mut keys);
    Ok(keys)
}

/// Decodes the entry stored as `value` under `key` into an item.
pub(crate) fn decode_entry(
    key: &[u8],
    value: &[u8],
    key_attributes: &[KeyAttribute],
) -> Decoded<Item> {
    let mut item = decode_item(value)?;
    key_strings(key, key_attributes, |name, text| {
        if let Entry::Vacant(vacant) = item.entry(name.to_owned()) {
            vacant.insert(AttributeValue::S(text.into_owned()));
        }
    })?;
    Ok(item)
}

/// Calls `found` with each string attribute of `key`.
fn key_strings<'a>(
    key: &'a [u8],
    key_attributes: &'a [KeyAttribute],
    mut found: impl FnMut(&'a str, std::borrow::Cow<'a, str>),
) -> Decoded<()> {
    let mut reader = KeyReader::new(key);
    for attribute in key_attributes {
        match reader.next(attribute.key_type) {
            Some(KeyValue::Text(text)) => found(&attribute.name, text),
            Some(KeyValue::Other) => {}
            None => return Err(corrupt(format!("its key lacks {}", attribute.name))),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{ItemIndex, StoredItem};
    use crate::keys::stored_key;
    use proptest::prelude::*;
    use rave_store::{ItemView, item_size};

    fn key_attributes() -> Vec<KeyAttribute> {
        vec![
            KeyAttribute::new("GSIPK", KeyType::S),
            KeyAttribute::new("GSISK", KeyType::N),
            KeyAttribute::new("PK", KeyType::S),
            KeyAttribute::new("SK", KeyType::S),
        ]
    }

    fn entry_key(item: &Item) -> Vec<u8> {
        stored_key(
            &[&item["GSIPK"]],
            [&item["GSISK"], &item["PK"], &item["SK"]],
        )
    }

    fn item() -> impl Strategy<Value = Item> {
        // Key strings with and without NUL bytes, and other attributes,
        // some of them strings.
        (
            "[a\\x00#]{0,6}",
            any::<i32>(),
            "[b\\x00]{1,4}",
            "[c#]{0,4}",
            proptest::collection::btree_map("[a-z]{1,6}", "[x\\x00]{0,4}", 0..5),
        )
            .prop_map(|(partition, sort, pk, sk, rest)| {
                let mut item: Item = rest
                    .into_iter()
                    .map(|(name, text)| (name, AttributeValue::S(text)))
                    .collect();
                item.insert("GSIPK".into(), AttributeValue::S(partition));
                item.insert("GSISK".into(), AttributeValue::N(i64::from(sort).into()));
                item.insert("PK".into(), AttributeValue::S(pk));
                item.insert("SK".into(), AttributeValue::S(sk));
                item
            })
    }

    proptest! {
        /// An entry reads back as the item it was made from, both ways, and
        /// holds none of its key strings in its value.
        #[test]
        fn entries_read_back_whole(item in item()) {
            let keys = key_attributes();
            let key = entry_key(&item);
            let value = encode_entry(item.iter().map(|(n, v)| (n.as_str(), v)), &keys);
            let stored = decode_item(&value).expect("decodes");
            for name in ["GSIPK", "PK", "SK"] {
                prop_assert!(!stored.contains_key(name));
            }
            prop_assert!(stored.contains_key("GSISK"), "a number stays in the value");
            prop_assert_eq!(&decode_entry(&key, &value, &keys).expect("decodes"), &item);
            let found = |view: &StoredItem<'_>| -> Vec<_> {
                item.keys().map(|name| view.attribute(name).map(|v| v.to_value())).collect()
            };
            let (size, whole, found) = ItemIndex::default()
                .view(&value, &entry_keys(&key, &keys).expect("keys"), |view| {
                    (view.size, view.to_item(), found(view))
                })
                .expect("reads");
            prop_assert_eq!(size, item_size(&item));
            prop_assert_eq!(&whole, &item);
            prop_assert_eq!(found, item.values().cloned().map(Some).collect::<Vec<_>>());
        }

        /// An entry written before this form, with its key strings in its
        /// value, reads as it did.
        #[test]
        fn entries_holding_their_keys_read_as_before(item in item()) {
            let keys = key_attributes();
            let key = entry_key(&item);
            let value = encode_attributes(
                &item.iter().map(|(n, v)| (n.as_str(), v)).collect::<Vec<_>>(),
            );
            prop_assert_eq!(&decode_entry(&key, &value, &keys).expect("decodes"), &item);
            let (size, whole) = ItemIndex::default()
                .view(&value, &entry_keys(&key, &keys).expect("keys"), |view| {
                    (view.size, view.to_item())
                })
                .expect("reads");
            prop_assert_eq!(size, item_size(&item));
            prop_assert_eq!(whole, item);
        }
    }

    #[test]
    fn a_cut_key_is_corrupt_not_a_panic() {
        let keys = key_attributes();
        let item = rave_store::item! {"GSIPK" => "p", "GSISK" => 1i64, "PK" => "a", "SK" => "b"};
        let key = entry_key(&item);
        let value = encode_entry(item.iter().map(|(n, v)| (n.as_str(), v)), &keys);
        for cut in 0..key.len() {
            assert!(
                decode_entry(&key[..cut], &value, &keys).is_err(),
                "cut at {cut}"
            );
            assert!(entry_keys(&key[..cut], &keys).is_err(), "cut at {cut}");
        }
    }
}
