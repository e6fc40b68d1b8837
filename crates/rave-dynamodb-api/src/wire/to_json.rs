//! rave's attribute values written as DynamoDB JSON, two ways: straight
//! into an answer's text ([`write_item`]: the answers served most,
//! GetItem's and Query's, with no `serde_json::Value` tree built and
//! dropped on the way), and as `Value`s
//! ([`item_to_json`], [`value_to_json`]) for the answers that are put
//! together as `Value`s. Both write what serde_json writes for the same
//! value; a test holds them to it.

use std::collections::BTreeSet;
use std::io::Write as _;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rave_store::{AttributeRef, AttributeValue, Item, ItemView, Number};
use serde_json::{Map, Value};

/// Appends `item` as DynamoDB JSON, `{"name":{"S":"..."},...}`, names in
/// the item's (sorted) order, as a `Value`'s map writes them. A stored
/// item shown in place by the engine is written without being built.
pub(crate) fn write_item(out: &mut Vec<u8>, item: &(impl ItemView + ?Sized)) {
    out.push(b'{');
    let mut first = true;
    item.for_each_attribute(&mut |name, value| {
        if !std::mem::take(&mut first) {
            out.push(b',');
        }
        write_string(out, name);
        out.push(b':');
        write_attribute(out, value);
    });
    out.push(b'}');
}

/// Appends a list of items as DynamoDB JSON.
pub(crate) fn write_items(out: &mut Vec<u8>, items: &[Item]) {
    write_list(out, items, write_item);
}

/// Appends one attribute as DynamoDB JSON: `{"S":"..."}`.
fn write_attribute(out: &mut Vec<u8>, value: AttributeRef<'_>) {
    match value {
        AttributeRef::S(text) => {
            out.extend_from_slice(br#"{"S":"#);
            write_string(out, text);
        }
        AttributeRef::N(number) => {
            out.extend_from_slice(br#"{"N":"#);
            write_number(out, &number);
        }
        AttributeRef::Bool(true) => out.extend_from_slice(br#"{"BOOL":true"#),
        AttributeRef::Bool(false) => out.extend_from_slice(br#"{"BOOL":false"#),
        AttributeRef::Null => out.extend_from_slice(br#"{"NULL":true"#),
        AttributeRef::Other(value) => return write_value(out, value),
    }
    out.push(b'}');
}

/// Appends one attribute value as DynamoDB JSON: `{"L":[...]}`.
fn write_value(out: &mut Vec<u8>, value: &AttributeValue) {
    match value {
        AttributeValue::B(bytes) => {
            out.extend_from_slice(br#"{"B":"#);
            write_binary(out, bytes);
        }
        AttributeValue::L(values) => {
            out.extend_from_slice(br#"{"L":"#);
            write_list(out, values, write_value);
        }
        AttributeValue::M(map) => {
            out.extend_from_slice(br#"{"M":"#);
            write_item(out, map);
        }
        AttributeValue::Ss(set) => {
            out.extend_from_slice(br#"{"SS":"#);
            write_list(out, set, |out, text| write_string(out, text));
        }
        AttributeValue::Ns(set) => {
            out.extend_from_slice(br#"{"NS":"#);
            write_list(out, set, write_number);
        }
        AttributeValue::Bs(set) => {
            out.extend_from_slice(br#"{"BS":"#);
            write_list(out, set, |out, bytes| write_binary(out, bytes));
        }
        AttributeValue::S(_)
        | AttributeValue::N(_)
        | AttributeValue::Bool(_)
        | AttributeValue::Null => {
            return write_attribute(out, AttributeRef::from(value));
        }
    }
    out.push(b'}');
}

fn write_list<'a, T: 'a + ?Sized>(
    out: &mut Vec<u8>,
    members: impl IntoIterator<Item = &'a T>,
    write: impl Fn(&mut Vec<u8>, &'a T),
) {
    out.push(b'[');
    for (at, member) in members.into_iter().enumerate() {
        if at > 0 {
            out.push(b',');
        }
        write(out, member);
    }
    out.push(b']');
}

/// A number as the string DynamoDB answers it in: its plain notation (as
/// `Number` displays it), which has nothing to escape. A whole number of a
/// 64-bit coefficient, the common case, is written digit by digit: the
/// formatting machinery costs ten times as much.
fn write_number(out: &mut Vec<u8>, number: &Number) {
    out.push(b'"');
    let (negative, coefficient, exponent) = number.to_parts();
    match (u64::try_from(coefficient), usize::try_from(exponent)) {
        (Ok(coefficient), Ok(zeros)) => {
            if negative {
                out.push(b'-');
            }
            let mut digits = [0u8; 20];
            let mut first = digits.len();
            let mut rest = coefficient;
            loop {
                first -= 1;
                // A remainder by ten: the cast keeps it whole.
                digits[first] = b'0' + (rest % 10) as u8;
                rest /= 10;
                if rest == 0 {
                    break;
                }
            }
            out.extend_from_slice(&digits[first..]);
            out.resize(out.len() + zeros, b'0');
        }
        // Writing into a `Vec` cannot fail.
        _ => {
            let _ = write!(out, "{number}");
        }
    }
    out.push(b'"');
}

/// Binary as a base64 string, which has nothing to escape.
fn write_binary(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(b'"');
    out.extend_from_slice(STANDARD.encode(bytes).as_bytes());
    out.push(b'"');
}

/// Appends `text` as a JSON string, escaped as serde_json escapes it: `"`
/// and `\` by a backslash, the control characters by their short escape
/// or as `\u00xx`. A long string is checked first and copied whole; a short
/// one (most of an item's: its names, keys and short values) is copied byte
/// by byte as it is checked, cheaper than a call to copy it.
pub(crate) fn write_string(out: &mut Vec<u8>, text: &str) {
    const SHORT: usize = 16;
    out.reserve(text.len() + 2);
    out.push(b'"');
    if text.len() >= SHORT && has_nothing_to_escape(text) {
        out.extend_from_slice(text.as_bytes());
    } else {
        for &byte in text.as_bytes() {
            if NEEDS_ESCAPE[usize::from(byte)] {
                write_escape(out, byte);
            } else {
                out.push(byte);
            }
        }
    }
    out.push(b'"');
}

/// A byte JSON escapes, escaped.
fn write_escape(out: &mut Vec<u8>, byte: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'\\');
    match byte {
        b'"' | b'\\' => out.push(byte),
        b'\n' => out.push(b'n'),
        b'\r' => out.push(b'r'),
        b'\t' => out.push(b't'),
        0x08 => out.push(b'b'),
        0x0c => out.push(b'f'),
        _ => out.extend_from_slice(&[
            b'u',
            b'0',
            b'0',
            HEX[usize::from(byte >> 4)],
            HEX[usize::from(byte & 0xf)],
        ]),
    }
}

/// Whether no byte of `text` needs escaping: eight bytes at a time, as
/// one word, then the last few one by one.
fn has_nothing_to_escape(text: &str) -> bool {
    let (words, tail) = text.as_bytes().as_chunks::<8>();
    words
        .iter()
        .all(|word| !word_needs_escape(u64::from_ne_bytes(*word)))
        && tail.iter().all(|&byte| !NEEDS_ESCAPE[usize::from(byte)])
}

/// Whether any of the eight bytes of `word` is a control character, `"`
/// or `\`. A byte below `n` (`n` at most 128) sets its high bit in
/// `word - n × 0x01..01` where it was clear in `word`; past the first such
/// byte the borrow may mark others, which does not change the answer.
fn word_needs_escape(word: u64) -> bool {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    let below = |word: u64, n: u8| word.wrapping_sub(ONES * u64::from(n)) & !word & HIGHS != 0;
    below(word, 0x20)
        | below(word ^ (ONES * u64::from(b'"')), 1)
        | below(word ^ (ONES * u64::from(b'\\')), 1)
}

/// The bytes a JSON string must escape.
const NEEDS_ESCAPE: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = true;
        byte += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

pub(crate) fn item_to_json(item: &Item) -> Value {
    Value::Object(map_to_json(item))
}

fn map_to_json(item: &Item) -> Map<String, Value> {
    item.iter()
        .map(|(name, value)| (name.clone(), value_to_json(value)))
        .collect()
}

pub(crate) fn value_to_json(value: &AttributeValue) -> Value {
    let (tag, inner) = match value {
        AttributeValue::S(text) => ("S", Value::String(text.clone())),
        AttributeValue::N(number) => ("N", Value::String(number.to_string())),
        AttributeValue::B(bytes) => ("B", Value::String(STANDARD.encode(bytes))),
        AttributeValue::Bool(flag) => ("BOOL", Value::Bool(*flag)),
        AttributeValue::Null => ("NULL", Value::Bool(true)),
        AttributeValue::L(values) => ("L", values.iter().map(value_to_json).collect()),
        AttributeValue::M(map) => ("M", Value::Object(map_to_json(map))),
        AttributeValue::Ss(set) => ("SS", set.iter().cloned().collect()),
        AttributeValue::Ns(set) => ("NS", set.iter().map(Number::to_string).collect()),
        AttributeValue::Bs(set) => ("BS", binaries_to_json(set)),
    };
    Value::Object(Map::from_iter([(tag.to_owned(), inner)]))
}

fn binaries_to_json(set: &BTreeSet<Vec<u8>>) -> Value {
    set.iter().map(|bytes| STANDARD.encode(bytes)).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let every_ascii: String = (0u8..0x80).map(char::from).collect();
        for text in [
            "",
            "plain text, long enough to span a few words of the scan",
            "a \"quoted\" back\\slash",
            "ünïcödé ✓ and a tab\tand a newline\n",
            &every_ascii,
        ] {
            let mut written = Vec::new();
            write_string(&mut written, text);
            assert_eq!(written, serde_json::to_vec(text).expect("a string"));
        }
    }

    #[test]
    fn a_character_to_escape_is_found_wherever_it_stands() {
        for byte in 0u8..0x80 {
            for at in 0..20 {
                let mut text = "é".repeat(10).into_bytes();
                text[at] = byte;
                text[at ^ 1] = b'a';
                let text = String::from_utf8(text).expect("ASCII among whole characters");
                assert_eq!(
                    has_nothing_to_escape(&text),
                    !NEEDS_ESCAPE[usize::from(byte)],
                    "{byte} at {at}"
                );
            }
        }
    }

    #[test]
    fn items_are_written_as_their_values_are() {
        let value = |json: Value| crate::wire::value_from_json(&json).expect("a valid value");
        let item: Item = [
            ("s", value(json!({"S": "x\"y"}))),
            ("n", value(json!({"N": "-1.50E2"}))),
            ("b", value(json!({"B": "AAEC"}))),
            ("t", value(json!({"BOOL": true}))),
            ("f", value(json!({"BOOL": false}))),
            ("z", value(json!({"NULL": true}))),
            ("l", value(json!({"L": [{"S": "a"}, {"N": "1"}]}))),
            ("m", value(json!({"M": {"k": {"SS": ["b", "a"]}}}))),
            (
                "ns",
                value(json!({"NS": ["2", "1", "-0", "-7", "1e30", "-0.5", "1.25"]})),
            ),
            ("nb", value(json!({"N": "123456789012345678901234567890"}))),
            ("bs", value(json!({"BS": ["AQ==", "AA=="]}))),
            ("ll", value(json!({"L": []}))),
            ("mm", value(json!({"M": {}}))),
        ]
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value))
        .collect();
        let mut written = Vec::new();
        write_item(&mut written, &item);
        assert_eq!(
            written,
            serde_json::to_vec(&item_to_json(&item)).expect("a value")
        );
    }
}
