//! The stored form of items and stream records.
//!
//! A query page reads every item it returns, so reading items is on the
//! hot path (BENCH.md B1). This format is a plain tag-length-value encoding; its
//! one trick is that attributes are written in name order, so decoding
//! builds each map with `BTreeMap::from_iter` over sorted input, which
//! bulk-loads instead of inserting one key at a time. Measured on a
//! 13-attribute comment item: 1.24 µs to decode against 1.55 µs with
//! serde+postcard (most of what is left is allocation and map building).
//!
//! A page of a Query need not build maps at all: [`ItemIndex`] reads an
//! item's bytes once, checking all of them as [`decode_item`] does, and
//! answers attribute lookups with strings borrowed from the bytes; only
//! binaries, lists, maps and sets are built. Each item is shown to a
//! closure (`ItemIndex::view`) and its slots kept for the next, so their
//! allocation is made once per page; an index entry's key strings are
//! merged in by name as its value is read. `ItemIndex` is property-tested
//! against `decode_item` on encoded items and on arbitrary, reordered, cut
//! and corrupted bytes, with key strings merged in.
//!
//! Decoding never trusts the bytes: a truncated or corrupt value is an
//! error, never a panic.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use rave_store::{AttributeRef, AttributeValue, Item, ItemView, KeyFilter, Number};

use crate::stream::{EventName, StoredRecord};

const S: u8 = 0;
const N: u8 = 1;
const B: u8 = 2;
const BOOL_FALSE: u8 = 3;
const BOOL_TRUE: u8 = 4;
const NULL: u8 = 5;
const L: u8 = 6;
const M: u8 = 7;
const SS: u8 = 8;
const NS: u8 = 9;
const BS: u8 = 10;

/// The event byte of a deletion by Time to Live; records written before
/// TTL existed only hold 0 (INSERT), 1 (MODIFY) and 2 (REMOVE).
const REMOVE_BY_TTL: u8 = 3;

fn put_varint(out: &mut Vec<u8>, mut v: u128) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_varint(out, bytes.len() as u128);
    out.extend_from_slice(bytes);
}

fn put_number(out: &mut Vec<u8>, n: &Number) {
    let (negative, coefficient, exponent) = n.to_parts();
    out.push(u8::from(negative));
    put_varint(out, coefficient);
    out.extend_from_slice(&exponent.to_le_bytes());
}

fn put_value(out: &mut Vec<u8>, value: &AttributeValue) {
    match value {
        AttributeValue::S(s) => {
            out.push(S);
            put_bytes(out, s.as_bytes());
        }
        AttributeValue::N(n) => {
            out.push(N);
            put_number(out, n);
        }
        AttributeValue::B(b) => {
            out.push(B);
            put_bytes(out, b);
        }
        AttributeValue::Bool(b) => out.push(if *b { BOOL_TRUE } else { BOOL_FALSE }),
        AttributeValue::Null => out.push(NULL),
        AttributeValue::L(list) => {
            out.push(L);
            put_varint(out, list.len() as u128);
            for v in list {
                put_value(out, v);
            }
        }
        AttributeValue::M(map) => {
            out.push(M);
            put_map(out, map);
        }
        AttributeValue::Ss(set) => {
            out.push(SS);
            put_varint(out, set.len() as u128);
            for s in set {
                put_bytes(out, s.as_bytes());
            }
        }
        AttributeValue::Ns(set) => {
            out.push(NS);
            put_varint(out, set.len() as u128);
            for n in set {
                put_number(out, n);
            }
        }
        AttributeValue::Bs(set) => {
            out.push(BS);
            put_varint(out, set.len() as u128);
            for b in set {
                put_bytes(out, b);
            }
        }
    }
}

/// A map of `len` attributes, which must come in name order: decoding
/// relies on it.
fn put_attributes<'a>(
    out: &mut Vec<u8>,
    len: usize,
    attributes: impl Iterator<Item = (&'a str, &'a AttributeValue)>,
) {
    put_varint(out, len as u128);
    for (name, value) in attributes {
        put_bytes(out, name.as_bytes());
        put_value(out, value);
    }
}

fn put_map(out: &mut Vec<u8>, map: &Item) {
    // BTreeMap iterates in key order.
    put_attributes(out, map.len(), map.iter().map(|(n, v)| (n.as_str(), v)));
}

pub(crate) fn encode_item(item: &Item) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    put_map(&mut out, item);
    out
}

/// Attributes in name order (names unique), encoded as the item of just
/// them would be.
pub(crate) fn encode_attributes(attributes: &[(&str, &AttributeValue)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    put_attributes(&mut out, attributes.len(), attributes.iter().copied());
    out
}

pub(crate) fn decode_item(bytes: &[u8]) -> Decoded<Item> {
    let mut reader = Reader { bytes, at: 0 };
    let item = reader.map()?;
    reader.finish()?;
    Ok(item)
}

/// The stored form of a record, from its images as [`encode_item`] encoded
/// them: the writer encodes an item once for its table, its index entries
/// and its record.
pub(crate) fn encode_record(
    head: &RecordHeadFields<'_>,
    old_image: Option<&[u8]>,
    new_image: Option<&[u8]>,
) -> Vec<u8> {
    let images = old_image.map_or(0, <[u8]>::len) + new_image.map_or(0, <[u8]>::len);
    let mut out = Vec::with_capacity(64 + images);
    out.push(match (head.event, head.removed_by_ttl) {
        (EventName::Insert, _) => 0,
        (EventName::Modify, _) => 1,
        (EventName::Remove, false) => 2,
        (EventName::Remove, true) => REMOVE_BY_TTL,
    });
    out.extend_from_slice(&head.commit_time_ms.to_le_bytes());
    put_map(&mut out, head.keys);
    for image in [old_image, new_image] {
        match image {
            Some(encoded) => {
                out.push(1);
                out.extend_from_slice(encoded);
            }
            None => out.push(0),
        }
    }
    out
}

/// What a stored record says besides its images.
pub(crate) struct RecordHeadFields<'a> {
    pub(crate) event: EventName,
    pub(crate) removed_by_ttl: bool,
    pub(crate) commit_time_ms: u64,
    /// The table's key attributes of the item.
    pub(crate) keys: &'a Item,
}

pub(crate) fn decode_record(bytes: &[u8]) -> Decoded<StoredRecord> {
    let mut reader = Reader { bytes, at: 0 };
    let head = RecordHead::read(&mut reader)?;
    head.with_images(&mut reader)
}

/// A record whose keys `wanted` accepts, decoded; `None` for any other,
/// whose images (the bulk of a record) are left undecoded.
pub(crate) fn decode_wanted_record(
    bytes: &[u8],
    wanted: KeyFilter,
) -> Decoded<Option<StoredRecord>> {
    let mut reader = Reader { bytes, at: 0 };
    let head = RecordHead::read(&mut reader)?;
    if !wanted(&head.keys) {
        return Ok(None);
    }
    head.with_images(&mut reader).map(Some)
}

/// What a stored record holds before its images.
struct RecordHead {
    event: EventName,
    removed_by_ttl: bool,
    commit_time_ms: u64,
    keys: Item,
}

impl RecordHead {
    fn read(reader: &mut Reader<'_>) -> Decoded<RecordHead> {
        let (event, removed_by_ttl) = match reader.byte()? {
            0 => (EventName::Insert, false),
            1 => (EventName::Modify, false),
            2 => (EventName::Remove, false),
            REMOVE_BY_TTL => (EventName::Remove, true),
            other => return Err(corrupt(format!("unknown event {other}"))),
        };
        let commit_time_ms = u64::from_le_bytes(reader.array()?);
        let keys = reader.map()?;
        Ok(RecordHead {
            event,
            removed_by_ttl,
            commit_time_ms,
            keys,
        })
    }

    fn with_images(self, reader: &mut Reader<'_>) -> Decoded<StoredRecord> {
        let mut image = || -> Decoded<Option<Item>> {
            match reader.byte()? {
                0 => Ok(None),
                1 => Ok(Some(reader.map()?)),
                other => Err(corrupt(format!("bad image flag {other}"))),
            }
        };
        let old_image = image()?;
        let new_image = image()?;
        reader.finish()?;
        Ok(StoredRecord {
            event: self.event,
            keys: self.keys,
            old_image,
            new_image,
            commit_time_ms: self.commit_time_ms,
            removed_by_ttl: self.removed_by_ttl,
        })
    }
}

/// One attribute of an indexed item, its name and strings borrowed from
/// the item's bytes (checked as UTF-8 once, when indexed).
struct Slot<'a> {
    name: &'a str,
    value: SlotValue<'a>,
}

enum SlotValue<'a> {
    S(&'a str),
    N(Number),
    Bool(bool),
    Null,
    Built(AttributeValue),
}

/// String attributes an index entry's key holds (table and index keys
/// have at most a few attributes between them), put in name order, each
/// name once, for [`ItemIndex::view`].
pub(crate) type KeyStrings<'a> = smallvec::SmallVec<[(&'a str, Cow<'a, str>); 4]>;

/// Puts `keys` in name order, each name once.
pub(crate) fn in_name_order(keys: &mut KeyStrings<'_>) {
    keys.sort_by(|a, b| by_name(a.0, b.0));
    keys.dedup_by(|later, kept| later.0 == kept.0);
}

/// Indexes the stored items of a page one at a time; the slots'
/// allocation is kept between items, so a page allocates it once.
#[derive(Default)]
pub(crate) struct ItemIndex {
    spare: Vec<Slot<'static>>,
}

/// An item as its stored bytes hold it, with the size DynamoDB charges
/// for it.
pub(crate) struct StoredItem<'a> {
    slots: Vec<Slot<'a>>,
    /// A bit per name the item has ([`name_bit`]): a page asks for about
    /// six names a comment does not have (a reply, a source, ...), and
    /// each would otherwise be compared with every slot.
    names: u64,
    pub(crate) size: usize,
}

/// The bit of [`StoredItem::names`] a name sets: from its length and its
/// first and last bytes, which tell the few dozen names of one table apart
/// well enough that an absent name is rarely compared with any slot.
fn name_bit(name: &str) -> u64 {
    let bytes = name.as_bytes();
    let (first, last) = match bytes {
        [] => (0, 0),
        [first, .., last] => (*first, *last),
        [only] => (*only, *only),
    };
    let spread = bytes
        .len()
        .wrapping_mul(31)
        .wrapping_add(usize::from(first).wrapping_mul(7))
        .wrapping_add(usize::from(last));
    1 << (spread % 64)
}

impl ItemIndex {
    /// Shows `view` the item `bytes` hold, with each of `keys` (in name
    /// order, each name once) it has no attribute by the name of: how an
    /// index entry takes back the key strings its value leaves out.
    /// Whatever [`decode_item`] refuses, this refuses too, and the view
    /// answers what the decoded item, with those keys, would.
    pub(crate) fn view<R>(
        &mut self,
        bytes: &[u8],
        keys: &[(&str, Cow<'_, str>)],
        view: impl FnOnce(&StoredItem<'_>) -> R,
    ) -> Decoded<R> {
        let item = index_item(emptied(std::mem::take(&mut self.spare)), bytes, keys)?;
        let seen = view(&item);
        self.spare = emptied(item.slots);
        Ok(seen)
    }
}

/// Indexes `bytes` into `slots`, the keys merged in by name as the item's
/// own attributes are read (so none is inserted into slots already read).
fn index_item<'a>(
    mut slots: Vec<Slot<'a>>,
    bytes: &'a [u8],
    keys: &[(&'a str, Cow<'a, str>)],
) -> Decoded<StoredItem<'a>> {
    debug_assert!(keys.is_sorted_by(|a, b| by_name(a.0, b.0).is_lt()));
    let key_slot = |(name, text): &(&'a str, Cow<'a, str>)| Slot {
        name,
        value: match text {
            Cow::Borrowed(text) => SlotValue::S(text),
            Cow::Owned(text) => SlotValue::Built(AttributeValue::S(text.clone())),
        },
    };
    let mut next_key = 0;
    let mut reader = Reader { bytes, at: 0 };
    let len = reader.len()?;
    let mut sorted = true;
    for _ in 0..len {
        let name = reader.str()?;
        let value = match reader.byte()? {
            S => SlotValue::S(reader.str()?),
            N => SlotValue::N(reader.number()?),
            BOOL_FALSE => SlotValue::Bool(false),
            BOOL_TRUE => SlotValue::Bool(true),
            NULL => SlotValue::Null,
            _ => {
                reader.at -= 1;
                SlotValue::Built(reader.value()?)
            }
        };
        // Keys before this name go first; a key by this name is the
        // item's own. Each name read leaves the next key at or past it,
        // so a key left over at the end is named like no attribute of the
        // item, even one read out of order.
        while let Some(key) = keys.get(next_key)
            && by_name(key.0, name).is_lt()
        {
            slots.push(key_slot(key));
            next_key += 1;
        }
        if keys.get(next_key).is_some_and(|key| key.0 == name) {
            next_key += 1;
        }
        if let Some(last) = slots.last() {
            sorted &= by_name(last.name, name).is_lt();
        }
        slots.push(Slot { name, value });
    }
    reader.finish()?;
    slots.extend(keys[next_key..].iter().map(key_slot));
    if !sorted {
        // Not what encoding writes; decoded as a map would decode it:
        // ordered by name, the last of equal names kept. The sort is
        // stable, and a key merged in comes before an attribute of the
        // same name read after it, so the item's own is kept.
        slots.sort_by(|a, b| by_name(a.name, b.name));
        slots.dedup_by(|later, kept| {
            let equal = later.name == kept.name;
            if equal {
                std::mem::swap(later, kept);
            }
            equal
        });
    }
    let size = slots
        .iter()
        .map(|slot| {
            slot.name.len()
                + match &slot.value {
                    SlotValue::S(text) => text.len(),
                    SlotValue::N(n) => n.storage_size(),
                    SlotValue::Bool(_) | SlotValue::Null => 1,
                    SlotValue::Built(value) => value.size(),
                }
        })
        .sum();
    let names = slots
        .iter()
        .fold(0, |names, slot| names | name_bit(slot.name));
    Ok(StoredItem { slots, names, size })
}

/// `slots` emptied, its allocation kept for slots borrowing other bytes:
/// collecting an empty vector's iterator into one of the same layout
/// reuses its buffer.
fn emptied<'b>(mut slots: Vec<Slot<'_>>) -> Vec<Slot<'b>> {
    slots.clear();
    slots
        .into_iter()
        .map(|_| unreachable!("the vector was emptied"))
        .collect()
}

/// Orders attribute names as a map of them does (bytewise). Names are a
/// few bytes long: comparing them in line is several times faster than
/// calling `memcmp` for each.
fn by_name(a: &str, b: &str) -> std::cmp::Ordering {
    a.bytes().cmp(b.bytes())
}

impl<'a> StoredItem<'a> {
    /// The attributes named in `names` that the item has, as an item.
    pub(crate) fn pick<'n>(&self, names: impl IntoIterator<Item = &'n str>) -> Item {
        names
            .into_iter()
            .filter_map(|name| Some((name.to_owned(), self.attribute(name)?.to_value())))
            .collect()
    }
}

impl Slot<'_> {
    fn value(&self) -> AttributeRef<'_> {
        match &self.value {
            SlotValue::S(text) => AttributeRef::S(text),
            SlotValue::N(n) => AttributeRef::N(*n),
            SlotValue::Bool(b) => AttributeRef::Bool(*b),
            SlotValue::Null => AttributeRef::Null,
            SlotValue::Built(value) => AttributeRef::Other(value),
        }
    }
}

impl ItemView for StoredItem<'_> {
    /// A page looks up some sixteen names per item among about as many
    /// attributes: comparing lengths first finds one sooner than a binary
    /// search comparing names byte by byte (measured on the listing bench),
    /// and names of equal length are compared in line, not by `memcmp`.
    fn attribute(&self, name: &str) -> Option<AttributeRef<'_>> {
        if self.names & name_bit(name) == 0 {
            return None;
        }
        self.slots
            .iter()
            .find(|slot| slot.name.len() == name.len() && by_name(slot.name, name).is_eq())
            .map(Slot::value)
    }

    fn for_each_attribute(&self, visit: &mut dyn FnMut(&str, AttributeRef<'_>)) {
        for slot in &self.slots {
            visit(slot.name, slot.value());
        }
    }

    fn to_item(&self) -> Item {
        self.slots
            .iter()
            .map(|slot| (slot.name.to_owned(), slot.value().to_value()))
            .collect()
    }
}

/// Why stored bytes do not decode; the caller knows which item or record
/// they belong to and turns this into [`rave_store::StoreError::Corrupt`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Undecodable(String);

impl std::fmt::Display for Undecodable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

pub(crate) type Decoded<T> = std::result::Result<T, Undecodable>;

pub(crate) fn corrupt(what: impl std::fmt::Display) -> Undecodable {
    Undecodable(what.to_string())
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Decoded<u8> {
        let b = *self
            .bytes
            .get(self.at)
            .ok_or_else(|| corrupt("truncated"))?;
        self.at += 1;
        Ok(b)
    }

    fn array<const LEN: usize>(&mut self) -> Decoded<[u8; LEN]> {
        let slice = self.take(LEN)?;
        slice.try_into().map_err(|_| corrupt("truncated"))
    }

    fn take(&mut self, len: usize) -> Decoded<&'a [u8]> {
        let end = self
            .at
            .checked_add(len)
            .ok_or_else(|| corrupt("length overflow"))?;
        let slice = self
            .bytes
            .get(self.at..end)
            .ok_or_else(|| corrupt("truncated"))?;
        self.at = end;
        Ok(slice)
    }

    fn varint(&mut self) -> Decoded<u128> {
        let mut value: u128 = 0;
        for shift in (0..128).step_by(7) {
            let b = self.byte()?;
            value |= u128::from(b & 0x7F) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(corrupt("varint too long"))
    }

    fn len(&mut self) -> Decoded<usize> {
        // Nearly every length (a name's, a string's, a map's) is below 128:
        // a single byte, read without the general varint's loop.
        let len = match self.bytes.get(self.at) {
            Some(&byte) if byte < 0x80 => {
                self.at += 1;
                usize::from(byte)
            }
            _ => usize::try_from(self.varint()?).map_err(|_| corrupt("length overflow"))?,
        };
        // Every element takes at least one byte: a length beyond the rest
        // of the buffer is corrupt, and must not drive a huge allocation.
        if len > self.bytes.len() - self.at {
            return Err(corrupt("length beyond the end"));
        }
        Ok(len)
    }

    fn bytes_value(&mut self) -> Decoded<Vec<u8>> {
        let len = self.len()?;
        Ok(self.take(len)?.to_vec())
    }

    /// A string, checked as UTF-8, borrowed from the buffer.
    fn str(&mut self) -> Decoded<&'a str> {
        let len = self.len()?;
        std::str::from_utf8(self.take(len)?).map_err(|_| corrupt("invalid UTF-8"))
    }

    fn string(&mut self) -> Decoded<String> {
        let len = self.len()?;
        let bytes = self.take(len)?;
        std::str::from_utf8(bytes)
            .map(str::to_owned)
            .map_err(|_| corrupt("invalid UTF-8"))
    }

    fn number(&mut self) -> Decoded<Number> {
        let negative = self.byte()? != 0;
        let coefficient = self.varint()?;
        let exponent = i16::from_le_bytes(self.array()?);
        Number::from_parts(negative, coefficient, exponent).map_err(corrupt)
    }

    fn map(&mut self) -> Decoded<Item> {
        let len = self.len()?;
        let mut entries = Vec::with_capacity(len);
        for _ in 0..len {
            let name = self.string()?;
            let value = self.value()?;
            entries.push((name, value));
        }
        Ok(BTreeMap::from_iter(entries))
    }

    fn value(&mut self) -> Decoded<AttributeValue> {
        Ok(match self.byte()? {
            S => AttributeValue::S(self.string()?),
            N => AttributeValue::N(self.number()?),
            B => AttributeValue::B(self.bytes_value()?),
            BOOL_FALSE => AttributeValue::Bool(false),
            BOOL_TRUE => AttributeValue::Bool(true),
            NULL => AttributeValue::Null,
            L => {
                let len = self.len()?;
                let mut list = Vec::with_capacity(len);
                for _ in 0..len {
                    list.push(self.value()?);
                }
                AttributeValue::L(list)
            }
            M => AttributeValue::M(self.map()?),
            SS => {
                let len = self.len()?;
                let set: Decoded<BTreeSet<String>> = (0..len).map(|_| self.string()).collect();
                AttributeValue::Ss(set?)
            }
            NS => {
                let len = self.len()?;
                let set: Decoded<BTreeSet<Number>> = (0..len).map(|_| self.number()).collect();
                AttributeValue::Ns(set?)
            }
            BS => {
                let len = self.len()?;
                let set: Decoded<BTreeSet<Vec<u8>>> =
                    (0..len).map(|_| self.bytes_value()).collect();
                AttributeValue::Bs(set?)
            }
            other => return Err(corrupt(format!("unknown type tag {other}"))),
        })
    }

    fn finish(&self) -> Decoded<()> {
        if self.at == self.bytes.len() {
            Ok(())
        } else {
            Err(corrupt("trailing bytes"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rave_store::item;

    /// What an item shows, owned: its size, its attributes in order, the
    /// item it builds, and what it answers for each of `probes`.
    #[derive(Debug, PartialEq)]
    struct Shown {
        size: usize,
        listed: Vec<(String, AttributeValue)>,
        whole: Item,
        found: Vec<Option<AttributeValue>>,
    }

    fn shown(
        index: &mut ItemIndex,
        bytes: &[u8],
        keys: &[(&str, Cow<'_, str>)],
        probes: &[&str],
    ) -> Decoded<Shown> {
        index.view(bytes, keys, |view| {
            let mut listed = Vec::new();
            view.for_each_attribute(&mut |name, value| {
                listed.push((name.to_owned(), value.to_value()))
            });
            Shown {
                size: view.size,
                listed,
                whole: view.to_item(),
                found: probes
                    .iter()
                    .map(|name| view.attribute(name).map(|v| v.to_value()))
                    .collect(),
            }
        })
    }

    /// What `item` shows, as [`shown`] reads it.
    fn expected(item: &Item, probes: &[&str]) -> Shown {
        Shown {
            size: rave_store::item_size(item),
            listed: item.iter().map(|(n, v)| (n.clone(), v.clone())).collect(),
            whole: item.clone(),
            found: probes.iter().map(|name| item.get(*name).cloned()).collect(),
        }
    }

    #[test]
    fn key_strings_take_their_place_by_name() {
        let bytes = encode_item(&item! {"b" => "2", "d" => 4i64});
        let mut keys = KeyStrings::from_iter([
            ("e", Cow::Borrowed("5")),
            ("a", Cow::Owned("1".to_owned())),
            ("c", Cow::Borrowed("3")),
            ("b", Cow::Borrowed("ignored: the item has one")),
            ("a", Cow::Borrowed("a second key by the same name")),
        ]);
        in_name_order(&mut keys);
        let probes = ["a", "b", "c", "d", "e", "f"];
        let seen = shown(&mut ItemIndex::default(), &bytes, &keys, &probes).expect("indexes");
        let item = item! {"a" => "1", "b" => "2", "c" => "3", "d" => 4i64, "e" => "5"};
        assert_eq!(seen, expected(&item, &probes));
    }

    fn value() -> impl Strategy<Value = AttributeValue> {
        let leaf = prop_oneof![
            ".*".prop_map(AttributeValue::S),
            (any::<i64>(), -20i32..20)
                .prop_map(|(m, e)| AttributeValue::N(format!("{m}e{e}").parse().expect("number"))),
            proptest::collection::vec(any::<u8>(), 0..8).prop_map(AttributeValue::B),
            any::<bool>().prop_map(AttributeValue::Bool),
            Just(AttributeValue::Null),
            proptest::collection::btree_set("[a-c]{0,3}", 1..4).prop_map(AttributeValue::Ss),
            proptest::collection::btree_set(
                any::<i32>().prop_map(|i| Number::from(i64::from(i))),
                1..4
            )
            .prop_map(AttributeValue::Ns),
            proptest::collection::btree_set(proptest::collection::vec(any::<u8>(), 0..3), 1..4)
                .prop_map(AttributeValue::Bs),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(AttributeValue::L),
                proptest::collection::btree_map("[a-z]{0,4}", inner, 0..4)
                    .prop_map(AttributeValue::M),
            ]
        })
    }

    proptest! {
        #[test]
        fn items_round_trip(item in proptest::collection::btree_map("[a-zA-Z_#]{0,6}", value(), 0..8)) {
            prop_assert_eq!(decode_item(&encode_item(&item)).expect("decodes"), item);
        }

        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = decode_item(&bytes);
            let _ = decode_record(&bytes);
        }

        #[test]
        fn the_view_answers_as_the_decoded_item(
            items in proptest::collection::vec(
                proptest::collection::btree_map("[a-zA-Z_#]{0,6}", value(), 0..8),
                1..4,
            ),
            probes in proptest::collection::vec("[a-zA-Z_#]{0,6}", 0..6),
        ) {
            // One index for all, as a page reads its items.
            let mut index = ItemIndex::default();
            for item in &items {
                let probes: Vec<&str> =
                    item.keys().chain(&probes).map(String::as_str).collect();
                let seen = shown(&mut index, &encode_item(item), &[], &probes);
                prop_assert_eq!(seen, Ok(expected(item, &probes)));
            }
        }

        /// Attributes in any order, names repeated, bytes cut or corrupt,
        /// key strings merged in: the view refuses what decoding refuses
        /// and otherwise answers what the decoded item does with each key
        /// string it lacks added, read afresh or after the same index has
        /// read the whole bytes and the cut ones.
        #[test]
        fn the_view_agrees_with_decoding_on_any_bytes(
            attributes in proptest::collection::vec(("[a-c]{0,2}", value()), 0..6),
            keys in proptest::collection::vec(("[a-d]{0,2}", "[x-z]{0,2}"), 0..4),
            cut in any::<proptest::sample::Index>(),
            flip in proptest::option::of((any::<proptest::sample::Index>(), any::<u8>())),
        ) {
            let mut bytes = Vec::new();
            put_varint(&mut bytes, attributes.len() as u128);
            for (name, value) in &attributes {
                put_bytes(&mut bytes, name.as_bytes());
                put_value(&mut bytes, value);
            }
            if let Some((at, byte)) = flip {
                let at = at.index(bytes.len());
                bytes[at] ^= byte;
            }
            let mut key_strings: KeyStrings<'_> = keys
                .iter()
                .map(|(name, text)| (name.as_str(), Cow::Borrowed(text.as_str())))
                .collect();
            in_name_order(&mut key_strings);
            let probes: Vec<&str> = attributes
                .iter()
                .map(|(n, _)| n.as_str())
                .chain(keys.iter().map(|(n, _)| n.as_str()))
                .collect();
            let whole = &bytes[..];
            let cut = &bytes[..cut.index(bytes.len() + 1)];
            let mut index = ItemIndex::default();
            for bytes in [whole, cut, whole, cut] {
                let decoded = decode_item(bytes).map(|mut item| {
                    for (name, text) in &keys {
                        item.entry(name.clone()).or_insert_with(|| AttributeValue::s(text));
                    }
                    expected(&item, &probes)
                });
                prop_assert_eq!(shown(&mut index, bytes, &key_strings, &probes), decoded);
            }
        }
    }

    #[test]
    fn records_round_trip_and_truncation_is_an_error() {
        let keys = item! {"PK" => "a"};
        let old_image = item! {"PK" => "a", "v" => 1i64};
        let head = RecordHeadFields {
            event: EventName::Modify,
            removed_by_ttl: false,
            commit_time_ms: 1_700_000_000_000,
            keys: &keys,
        };
        let bytes = encode_record(&head, Some(&encode_item(&old_image)), None);
        let back = decode_record(&bytes).expect("decodes").into_record(7);
        assert_eq!(back.old_image, Some(old_image));
        assert_eq!(back.new_image, None);
        assert_eq!(back.keys, keys);
        assert_eq!(back.commit_time_ms, 1_700_000_000_000);
        let by_ttl = RecordHeadFields {
            event: EventName::Remove,
            removed_by_ttl: true,
            ..head
        };
        let back = decode_record(&encode_record(&by_ttl, None, None)).expect("decodes");
        assert!(back.removed_by_ttl && back.event == EventName::Remove);
        for cut in 0..bytes.len() {
            assert!(decode_record(&bytes[..cut]).is_err());
        }
    }
}
