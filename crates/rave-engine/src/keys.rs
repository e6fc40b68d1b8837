//! Order-preserving encoding of keys into the bytes redb sorts.
//!
//! Every stored key starts with a two-byte hash of the (encoded) partition
//! key, like DynamoDB's own hash partitioning: a Query is still one range
//! scan (all items of a partition share the prefix), and a parallel Scan
//! splits the hash space into contiguous, evenly filled segments.
//!
//! After the hash come the key values, each in a self-delimiting encoding
//! whose byte order is the DynamoDB order of the values:
//! * S and B: the bytes with `00` escaped as `00 FF`, then the terminator `00 00`;
//! * N: a sign class, the leading digit's exponent and one byte per digit,
//!   inverted for negative numbers so that byte order is numeric order.
//!
//! Being self-delimiting, encodings concatenate: the byte order of
//! `hash ‖ pk ‖ sk` is the order of `(hash, pk, sk)`. A key of several
//! attributes (a global secondary index may have up to four partition and
//! four sort attributes) is their encodings in key order, the hash taken
//! over all the partition attributes' together: its byte order is the order
//! of the sort attributes compared one after another.

use std::borrow::Cow;
use std::ops::Bound;

use rave_store::{AttributeValue, KeyAttribute, KeyType, Number, SortOp};

/// Appends the order-preserving encoding of a key value (S, N or B).
pub(crate) fn encode_value(out: &mut Vec<u8>, value: &AttributeValue) {
    match value {
        AttributeValue::S(s) => encode_bytes(out, s.as_bytes()),
        AttributeValue::B(b) => encode_bytes(out, b),
        AttributeValue::N(n) => encode_number(out, n),
        // Key values are validated to be S, N or B before they get here.
        other => unreachable!("not a key value: {other:?}"),
    }
}

/// The escaped bytes without the terminator: every encoding of a value that
/// starts with `prefix` starts with these bytes (used by `begins_with`).
fn escape_prefix(out: &mut Vec<u8>, bytes: &[u8]) {
    for &b in bytes {
        out.push(b);
        if b == 0 {
            out.push(0xFF);
        }
    }
}

fn encode_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    escape_prefix(out, bytes);
    out.extend_from_slice(&[0, 0]);
}

const NEGATIVE: u8 = 0x01;
const ZERO: u8 = 0x02;
const POSITIVE: u8 = 0x03;

fn encode_number(out: &mut Vec<u8>, n: &Number) {
    if n.is_zero() {
        out.push(ZERO);
        return;
    }
    // -130 ..= 125 maps onto 0 ..= 255.
    let exponent = (n.leading_exponent() + 130) as u8;
    let digits = n.digits();
    if n.is_negative() {
        // Larger magnitude sorts first, and a digit string that is a prefix
        // of another (a smaller magnitude) sorts last: invert everything.
        out.push(NEGATIVE);
        out.push(255 - exponent);
        out.extend(digits.bytes().map(|d| 10 - (d - b'0')));
        out.push(0xFF);
    } else {
        out.push(POSITIVE);
        out.push(exponent);
        out.extend(digits.bytes().map(|d| d - b'0' + 1));
        out.push(0x00);
    }
}

/// Two bytes of FNV-1a over the encoded partition key.
pub(crate) fn partition_hash(encoded_partition: &[u8]) -> [u8; 2] {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in encoded_partition {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let top = (hash >> 48) as u16;
    top.to_be_bytes()
}

/// `hash(pk) ‖ pk`: the prefix every key of one partition starts with. A
/// partition key of several attributes (a global secondary index's) is
/// their encodings one after another, hashed together.
pub(crate) fn partition_prefix(partition: &[&AttributeValue]) -> Vec<u8> {
    let mut encoded = Vec::with_capacity(32);
    for value in partition {
        encode_value(&mut encoded, value);
    }
    let mut out = Vec::with_capacity(encoded.len() + 2);
    out.extend_from_slice(&partition_hash(&encoded));
    out.extend_from_slice(&encoded);
    out
}

/// The full stored key: `hash(pk) ‖ pk ‖ rest...`.
pub(crate) fn stored_key<'a>(
    partition: &[&AttributeValue],
    rest: impl IntoIterator<Item = &'a AttributeValue>,
) -> Vec<u8> {
    let mut out = partition_prefix(partition);
    for value in rest {
        encode_value(&mut out, value);
    }
    out
}

/// Reads a stored key's values front to back, past its two-byte hash: how
/// an index entry gets back the strings its value leaves out (`entry`).
pub(crate) struct KeyReader<'k> {
    rest: &'k [u8],
}

/// One value of a stored key.
pub(crate) enum KeyValue<'k> {
    /// An S value: borrowed where the key holds it verbatim (it has no NUL
    /// byte to escape), unescaped otherwise.
    Text(Cow<'k, str>),
    /// An N or B value, passed over.
    Other,
}

impl<'k> KeyReader<'k> {
    pub(crate) fn new(stored: &'k [u8]) -> KeyReader<'k> {
        KeyReader {
            rest: stored.get(2..).unwrap_or_default(),
        }
    }

    /// The next value, of type `key_type`; `None` where the bytes are not
    /// such a value (a corrupt key) or the key has no more.
    pub(crate) fn next(&mut self, key_type: KeyType) -> Option<KeyValue<'k>> {
        let rest = self.rest;
        let (value, used) = match key_type {
            KeyType::S => {
                // Key strings run to tens of bytes (ids, times): a
                // vectorised search finds their terminator sooner.
                let end = memchr::memchr(0, rest)?;
                if rest.get(end + 1) == Some(&0) {
                    let text = std::str::from_utf8(&rest[..end]).ok()?;
                    (KeyValue::Text(Cow::Borrowed(text)), end + 2)
                } else {
                    let (bytes, used) = unescape(rest)?;
                    (
                        KeyValue::Text(Cow::Owned(String::from_utf8(bytes).ok()?)),
                        used,
                    )
                }
            }
            KeyType::B | KeyType::N => (KeyValue::Other, encoded_len(rest, key_type)?),
        };
        self.rest = rest.get(used..)?;
        Some(value)
    }
}

/// How many bytes the encoded value of type `key_type` at the front of
/// `bytes` takes, terminator included, decoding nothing.
fn encoded_len(bytes: &[u8], key_type: KeyType) -> Option<usize> {
    match key_type {
        KeyType::S | KeyType::B => {
            let mut at = 0;
            loop {
                match (*bytes.get(at)?, bytes.get(at + 1)) {
                    (0, Some(0)) => return Some(at + 2),
                    (0, Some(0xFF)) => at += 2,
                    (0, _) => return None,
                    _ => at += 1,
                }
            }
        }
        KeyType::N => {
            let terminator = match *bytes.first()? {
                ZERO => return Some(1),
                NEGATIVE => 0xFF,
                POSITIVE => 0x00,
                _ => return None,
            };
            let digits = memchr::memchr(terminator, bytes.get(2..)?)?;
            Some(2 + digits + 1)
        }
    }
}

/// The bytes of an S or B value at the front of `bytes` (`00 FF` back to
/// `00`), with the number of bytes it took, terminator included.
fn unescape(bytes: &[u8]) -> Option<(Vec<u8>, usize)> {
    let mut value = Vec::new();
    let mut at = 0;
    loop {
        match (*bytes.get(at)?, bytes.get(at + 1)) {
            (0, Some(0)) => return Some((value, at + 2)),
            (0, Some(0xFF)) => {
                value.push(0);
                at += 2;
            }
            (0, _) => return None,
            (b, _) => {
                value.push(b);
                at += 1;
            }
        }
    }
}

/// A readable form of a stored key (`PK="a", SK=3`), so an error about the
/// item it names can say which item; what does not decode is shown in hex.
pub(crate) fn describe_stored_key<'a>(
    stored: &[u8],
    attributes: impl IntoIterator<Item = &'a KeyAttribute>,
) -> String {
    let mut rest = stored.get(2..).unwrap_or_default();
    let mut parts = Vec::new();
    for attribute in attributes {
        let Some((text, used)) = decode_key_value(rest, attribute.key_type) else {
            break;
        };
        parts.push(format!("{}={text}", attribute.name));
        rest = rest.get(used..).unwrap_or_default();
    }
    if !rest.is_empty() {
        parts.push(format!("undecoded 0x{}", hex::encode(rest)));
    }
    parts.join(", ")
}

/// One key value from the front of `bytes` (the inverse of
/// [`encode_value`]) as text, with the number of bytes it took.
fn decode_key_value(bytes: &[u8], key_type: KeyType) -> Option<(String, usize)> {
    match key_type {
        KeyType::S | KeyType::B => {
            let (value, used) = unescape(bytes)?;
            let text = match key_type {
                KeyType::S => format!("{:?}", String::from_utf8_lossy(&value)),
                _ => format!("0x{}", hex::encode(&value)),
            };
            Some((text, used))
        }
        KeyType::N => {
            let used = encoded_len(bytes, KeyType::N)?;
            if used == 1 {
                return Some(("0".into(), 1));
            }
            let negative = bytes[0] == NEGATIVE;
            let exponent_byte = bytes[1];
            let exponent = i32::from(if negative {
                255 - exponent_byte
            } else {
                exponent_byte
            }) - 130;
            let end = used - 1;
            let digits: String = bytes[2..end]
                .iter()
                .map(|&b| char::from(b'0' + if negative { 10 - b } else { b - 1 }))
                .collect();
            let (first, rest) = digits.split_at_checked(1)?;
            let sign = if negative { "-" } else { "" };
            let number: Number = format!("{sign}{first}.{rest}0E{exponent}").parse().ok()?;
            Some((number.to_string(), end + 1))
        }
    }
}

/// The smallest byte string greater than every string starting with `prefix`,
/// or `None` when there is none (the prefix is all `FF`).
pub(crate) fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut out = prefix.to_vec();
    while let Some(last) = out.pop() {
        if last < 0xFF {
            out.push(last + 1);
            return Some(out);
        }
    }
    None
}

/// Byte range for a Query: one partition, narrowed by the equalities on a
/// prefix of the sort attributes and the comparison on the next one.
pub(crate) fn query_range(
    partition: &[&AttributeValue],
    sort_equalities: &[&AttributeValue],
    sort: Option<&SortOp>,
) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    let prefix = stored_key(partition, sort_equalities.iter().copied());
    let with = |v: &AttributeValue| {
        let mut k = prefix.clone();
        encode_value(&mut k, v);
        k
    };
    let after = |k: Vec<u8>| match prefix_successor(&k) {
        Some(s) => Bound::Excluded(s),
        None => Bound::Unbounded,
    };
    let whole = |k: Vec<u8>| (Bound::Included(k.clone()), after(k));
    match sort {
        None => whole(prefix.clone()),
        Some(SortOp::Eq(v)) => whole(with(v)),
        Some(SortOp::BeginsWith(v)) => {
            let mut k = prefix.clone();
            match v {
                AttributeValue::S(s) => escape_prefix(&mut k, s.as_bytes()),
                AttributeValue::B(b) => escape_prefix(&mut k, b),
                _ => {}
            }
            whole(k)
        }
        Some(SortOp::Lt(v)) => (Bound::Included(prefix.clone()), Bound::Excluded(with(v))),
        Some(SortOp::Le(v)) => (Bound::Included(prefix.clone()), after(with(v))),
        Some(SortOp::Gt(v)) => (
            prefix_successor(&with(v)).map_or(Bound::Unbounded, Bound::Included),
            after(prefix.clone()),
        ),
        Some(SortOp::Ge(v)) => (Bound::Included(with(v)), after(prefix.clone())),
        Some(SortOp::Between(lo, hi)) => (Bound::Included(with(lo)), after(with(hi))),
    }
}

/// Byte range of segment `segment` of `total` in a parallel Scan.
pub(crate) fn segment_range(segment: u32, total: u32) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    let boundary = |i: u32| -> Option<Vec<u8>> {
        let start = (u64::from(i) << 16) / u64::from(total);
        (start <= 0xFFFF).then(|| (start as u16).to_be_bytes().to_vec())
    };
    let lower = if segment == 0 {
        Bound::Unbounded
    } else {
        boundary(segment).map_or(Bound::Unbounded, Bound::Included)
    };
    let upper = if segment + 1 >= total {
        Bound::Unbounded
    } else {
        boundary(segment + 1).map_or(Bound::Unbounded, Bound::Excluded)
    };
    (lower, upper)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rave_store::order;

    fn enc(v: &AttributeValue) -> Vec<u8> {
        let mut out = Vec::new();
        encode_value(&mut out, v);
        out
    }

    fn number() -> impl Strategy<Value = AttributeValue> {
        (any::<bool>(), 0u64..1_000_000_000, -8i32..8).prop_map(|(neg, mantissa, exp)| {
            let text = format!("{}{}e{}", if neg { "-" } else { "" }, mantissa, exp);
            AttributeValue::N(text.parse().expect("valid"))
        })
    }

    proptest! {
        #[test]
        fn number_encoding_preserves_order(a in number(), b in number()) {
            prop_assert_eq!(enc(&a).cmp(&enc(&b)), order(&a, &b).expect("numbers are ordered"));
        }

        #[test]
        fn string_encoding_preserves_order(a in "[a\\x00\\x01\u{e9}z]{0,6}", b in "[a\\x00\\x01\u{e9}z]{0,6}") {
            let (a, b) = (AttributeValue::s(a), AttributeValue::s(b));
            prop_assert_eq!(enc(&a).cmp(&enc(&b)), order(&a, &b).expect("strings are ordered"));
        }

        #[test]
        fn tuples_concatenate_in_order(a in "[ab\\x00]{0,3}", b in "[ab\\x00]{0,3}", c in "[ab\\x00]{0,3}", d in "[ab\\x00]{0,3}") {
            let key = |x: &str, y: &str| {
                let mut out = enc(&AttributeValue::s(x));
                out.extend(enc(&AttributeValue::s(y)));
                out
            };
            prop_assert_eq!(key(&a, &b).cmp(&key(&c, &d)), (a.as_bytes(), b.as_bytes()).cmp(&(c.as_bytes(), d.as_bytes())));
        }

        #[test]
        fn sort_ranges_select_exactly_the_matching_keys(
            sorts in proptest::collection::vec("[ab\\x00]{0,3}", 0..12),
            bound in "[ab\\x00]{0,3}",
            high in "[ab\\x00]{0,3}",
            which in 0usize..7,
        ) {
            let pk = AttributeValue::s("p");
            let bound_v = AttributeValue::s(bound);
            let high_v = AttributeValue::s(high);
            let op = match which {
                0 => SortOp::Eq(bound_v),
                1 => SortOp::Lt(bound_v),
                2 => SortOp::Le(bound_v),
                3 => SortOp::Gt(bound_v),
                4 => SortOp::Ge(bound_v),
                5 => SortOp::Between(bound_v, high_v),
                _ => SortOp::BeginsWith(bound_v),
            };
            let (lo, hi) = query_range(&[&pk], &[], Some(&op));
            for s in sorts {
                let sv = AttributeValue::s(s);
                let key = stored_key(&[&pk], [&sv]);
                let in_range = (lo.as_ref().map(Vec::as_slice), hi.as_ref().map(Vec::as_slice)).contains(key.as_slice());
                prop_assert_eq!(in_range, op.matches(&sv), "{:?} {:?}", op, sv);
            }
        }
    }

    trait Contains {
        fn contains(&self, key: &[u8]) -> bool;
    }

    impl Contains for (Bound<&[u8]>, Bound<&[u8]>) {
        fn contains(&self, key: &[u8]) -> bool {
            std::ops::RangeBounds::<&[u8]>::contains(self, &key)
        }
    }

    #[test]
    fn stored_keys_describe_themselves() {
        let schema = [
            KeyAttribute::new("PK", KeyType::S),
            KeyAttribute::new("SK", KeyType::N),
        ];
        for (pk, sk) in [("a\u{0}b", "-12.5"), ("COMMENT#1", "0"), ("x", "1E+100")] {
            let sk: Number = sk.parse().expect("a number");
            let stored = stored_key(&[&AttributeValue::S(pk.into())], [&AttributeValue::N(sk)]);
            assert_eq!(
                describe_stored_key(&stored, &schema),
                format!("PK={pk:?}, SK={sk}")
            );
        }
        let binary = stored_key(&[&AttributeValue::B(vec![0, 255])], []);
        assert_eq!(
            describe_stored_key(&binary, &[KeyAttribute::new("K", KeyType::B)]),
            "K=0x00ff"
        );
        assert_eq!(
            describe_stored_key(&[1, 2, 9, 9], &schema[..1]),
            "undecoded 0x0909"
        );
    }

    #[test]
    fn a_key_reader_gives_back_each_string_and_passes_over_the_rest() {
        let values = [
            AttributeValue::s("PRODUCT#p1"),
            AttributeValue::N("-12.5".parse().expect("a number")),
            AttributeValue::B(vec![0, 1]),
            AttributeValue::N("0".parse().expect("a number")),
            AttributeValue::s("a\u{0}b"),
            AttributeValue::s(""),
        ];
        let types = [
            KeyType::S,
            KeyType::N,
            KeyType::B,
            KeyType::N,
            KeyType::S,
            KeyType::S,
        ];
        let stored = stored_key(&[&values[0]], values[1..].iter());
        let mut reader = KeyReader::new(&stored);
        let mut texts = Vec::new();
        for key_type in types {
            match reader.next(key_type) {
                Some(KeyValue::Text(text)) => texts.push(Some(text)),
                Some(KeyValue::Other) => texts.push(None),
                None => panic!("the key ended early"),
            }
        }
        assert_eq!(
            texts,
            [
                Some(Cow::Borrowed("PRODUCT#p1")),
                None,
                None,
                None,
                Some(Cow::Owned("a\u{0}b".to_owned())),
                Some(Cow::Borrowed("")),
            ]
        );
        assert!(reader.next(KeyType::S).is_none());
        assert!(
            KeyReader::new(&stored[..stored.len() - 1])
                .next(KeyType::S)
                .is_some()
        );
        let cut = &stored[..5];
        assert!(KeyReader::new(cut).next(KeyType::S).is_none());
    }

    #[test]
    fn segments_cover_the_hash_space_without_overlap() {
        for total in [1u32, 2, 3, 7, 100, 70_000] {
            for probe in [0u16, 1, 300, 32_768, 65_535] {
                let key = probe.to_be_bytes().to_vec();
                let hits = (0..total)
                    .filter(|&s| {
                        let (lo, hi) = segment_range(s, total);
                        std::ops::RangeBounds::<&[u8]>::contains(
                            &(
                                lo.as_ref().map(Vec::as_slice),
                                hi.as_ref().map(Vec::as_slice),
                            ),
                            &key.as_slice(),
                        )
                    })
                    .count();
                assert_eq!(hits, 1, "total {total} probe {probe}");
            }
        }
    }
}
