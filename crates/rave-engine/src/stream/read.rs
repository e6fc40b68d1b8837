//! A consumer's read of the stream: the records after its position, up to
//! a limit, with only those whose keys it wants decoded.
//!
//! Decoding a record's images into items is most of a read's cost, and a
//! consumer catching up a backlog (the aggregator after a bulk load) reads
//! 100,000 records at a time while the writer thread commits the batch
//! before. A read of a backlog that long is split in two at a sequence
//! number: the second half is read on a thread of its own, on the same
//! snapshot, so the reader, its helper and the writer keep two cores busy.
//! Sequence numbers only grow, so the first half (every record before the
//! split) followed by the second is a run of the stream from the position,
//! as one walk would read it; where numbers were skipped, the first half
//! holds fewer records and the read returns fewer than its limit, which is
//! all a limit promises.

use std::ops::RangeBounds;

use rave_store::{KeyFilter, Result, StoreError};
use redb::{ReadOnlyTable, ReadableTable};

use super::StreamRecord;
use crate::codec::{self, Undecodable};
use crate::database::storage;

/// A stream table as a read transaction opens it.
pub(crate) type StreamSnapshot = ReadOnlyTable<u64, &'static [u8]>;

/// A read whose records after the position come to at least this many is
/// split over two threads; a shorter one (a live service's next few
/// records) is not worth a thread's start.
const SPLIT_AT_RECORDS: u64 = 8_192;

/// A read of the stream that passed over the records its consumer does not
/// want.
#[derive(Debug, PartialEq)]
pub(crate) struct WantedRecords {
    /// The wanted records, each with how many records were read before it.
    pub(crate) records: Vec<(usize, StreamRecord)>,
    /// How many records were read, wanted or not.
    pub(crate) read: usize,
    /// The sequence number of the last record read (the position read
    /// after, when none was).
    pub(crate) last: u64,
}

impl WantedRecords {
    fn none_after(position: u64) -> WantedRecords {
        WantedRecords {
            records: Vec::new(),
            read: 0,
            last: position,
        }
    }

    /// This read with `next`, the read of the records right after it.
    fn followed_by(mut self, next: WantedRecords) -> WantedRecords {
        let before = self.read;
        self.records.extend(
            next.records
                .into_iter()
                .map(|(read_before, record)| (before + read_before, record)),
        );
        if next.read > 0 {
            self.last = next.last;
        }
        self.read += next.read;
        self
    }
}

/// Up to `limit` records after sequence number `after`, those whose keys
/// `wanted` accepts decoded and the others passed over; `corrupt` names a
/// record that does not decode.
pub(crate) fn read_wanted(
    stream: &StreamSnapshot,
    after: u64,
    limit: usize,
    wanted: KeyFilter,
    corrupt: &(dyn Fn(u64, Undecodable) -> StoreError + Sync),
) -> Result<WantedRecords> {
    let reader = Reader {
        stream,
        wanted,
        corrupt,
    };
    reader.read(after, limit, SPLIT_AT_RECORDS)
}

struct Reader<'a> {
    stream: &'a StreamSnapshot,
    wanted: KeyFilter,
    corrupt: &'a (dyn Fn(u64, Undecodable) -> StoreError + Sync),
}

impl Reader<'_> {
    /// The read, split in two when at least `split_at` records follow
    /// `after` and the limit takes them.
    fn read(&self, after: u64, limit: usize, split_at: u64) -> Result<WantedRecords> {
        let first = after.saturating_add(1);
        // A live consumer's reads never reach a split: they need not look
        // up the stream's end.
        if (limit as u64) < split_at {
            return self.run(first.., limit, after);
        }
        let following = match self.stream.last().map_err(storage)? {
            Some((last, _)) => last.value().saturating_sub(after),
            None => 0,
        };
        let records = following.min(limit as u64);
        if records < split_at {
            return self.run(first.., limit, after);
        }
        // The first half's range holds at most `half` sequence numbers, so
        // it is read whole and the two together stay within the limit.
        let half = records / 2;
        let split = first.saturating_add(half);
        let (head, tail) = std::thread::scope(|scope| {
            let tail = scope.spawn(|| self.run(split.., limit - half as usize, split - 1));
            let head = self.run(first..split, limit, after);
            (head, tail.join())
        });
        let tail = tail.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        Ok(head?.followed_by(tail?))
    }

    /// Up to `limit` records of `range`, which starts after `position`.
    fn run(
        &self,
        range: impl RangeBounds<u64>,
        limit: usize,
        position: u64,
    ) -> Result<WantedRecords> {
        let mut found = WantedRecords::none_after(position);
        for entry in self.stream.range(range).map_err(storage)?.take(limit) {
            let (sequence, value) = entry.map_err(storage)?;
            let sequence = sequence.value();
            let stored = codec::decode_wanted_record(value.value(), self.wanted)
                .map_err(|e| (self.corrupt)(sequence, e))?;
            if let Some(stored) = stored {
                found
                    .records
                    .push((found.read, stored.into_record(sequence)));
            }
            found.read += 1;
            found.last = sequence;
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use rave_store::{AttributeValue, Item};
    use redb::{Database, ReadableDatabase};

    use super::*;
    use crate::codec::RecordHeadFields;
    use crate::stream::EventName;

    const STREAM: redb::TableDefinition<u64, &[u8]> = redb::TableDefinition::new("stream/t");

    /// A stream of the records `sequences`, each an insert of an item keyed
    /// by its own sequence number.
    fn stream_of(sequences: &[u64]) -> (tempfile::TempDir, Database) {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::create(dir.path().join("stream.redb")).unwrap();
        let txn = db.begin_write().unwrap();
        {
            let mut table = txn.open_table(STREAM).unwrap();
            for &sequence in sequences {
                let keys = Item::from([("pk".to_owned(), AttributeValue::s(sequence.to_string()))]);
                let head = RecordHeadFields {
                    event: EventName::Insert,
                    removed_by_ttl: false,
                    commit_time_ms: sequence,
                    keys: &keys,
                };
                let image = codec::encode_item(&keys);
                let record = codec::encode_record(&head, None, Some(&image));
                table.insert(sequence, record.as_slice()).unwrap();
            }
        }
        txn.commit().unwrap();
        (dir, db)
    }

    /// Wants the records of even sequence numbers.
    fn even(keys: &Item) -> bool {
        keys.get("pk")
            .and_then(AttributeValue::as_s)
            .and_then(|pk| pk.parse::<u64>().ok())
            .is_some_and(|sequence| sequence % 2 == 0)
    }

    fn unexpected(sequence: u64, why: Undecodable) -> StoreError {
        panic!("record {sequence} does not decode: {why}")
    }

    proptest! {
        /// A read split in two is the first records of one walk from the
        /// position: all of them when no sequence number was skipped, and
        /// none only when the walk finds none either.
        #[test]
        fn a_split_read_is_a_walk_from_the_position(
            skipped in proptest::collection::btree_set(1u64..160, 0..60),
            dense in any::<bool>(),
            after in 0u64..160,
            limit in 1usize..200,
            split_at in 1u64..64,
        ) {
            let sequences: Vec<u64> = (1..160)
                .filter(|s| dense || !skipped.contains(s))
                .collect();
            let (_dir, db) = stream_of(&sequences);
            let txn = db.begin_read().unwrap();
            let stream = txn.open_table(STREAM).unwrap();
            let reader = Reader { stream: &stream, wanted: even, corrupt: &unexpected };
            let walk = |limit| reader.run(after.saturating_add(1).., limit, after).unwrap();

            let split = reader.read(after, limit, split_at).unwrap();
            let whole = walk(limit);
            prop_assert_eq!(&split, &walk(split.read));
            prop_assert_eq!(split.read == 0, whole.read == 0);
            if dense {
                prop_assert_eq!(&split, &whole);
            }
        }
    }
}
