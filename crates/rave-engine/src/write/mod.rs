//! The write path: one writer thread and everything it changes.
//!
//! redb allows one write transaction at a time and each durable commit costs
//! an fsync. Every write request is therefore sent to one thread
//! ([`writer`]), which drains whatever has queued up (at most
//! `EngineOptions::max_commit_group` requests, 1,024 by default), applies
//! the requests one after another in one redb transaction and commits once:
//! N concurrent writers share one fsync. With 64 concurrent writers this
//! measured 3.3× the throughput of one commit per request. Replies go out
//! only after the commit, so an acknowledged write is durable, and a failed
//! commit never leaves a reply that said "done". (A bulk load that
//! acknowledges nothing until it ends turns the sync off,
//! `EngineOptions::durable_groups`: its last commit syncs them all.) Each
//! reply carries its request back, so the requester's thread frees it
//! (`queue::Answer`).
//!
//! Each request is checked completely (validation, conditions, update
//! evaluation, decoding the items it reads) before it mutates anything, so
//! a request that fails leaves the shared transaction untouched and fails
//! alone: a request that reads a corrupt item gets `Corrupt` naming that
//! item, and the rest of its group commits. Errors of rave's own checks are
//! the request's, errors redb returns are the transaction's. Only a failure of redb itself inside the shared transaction (an
//! I/O error, a full disk, a damaged page) or of its commit aborts the
//! whole group, and every request in it gets that error ([`tx::Failure`]).
//! redb then refuses every later transaction, so the writer reopens the
//! database before the next group ([`crate::database`]): a full disk
//! refuses writes while it is full, not until a restart.
//!
//! The modules, from the thread down:
//!
//! * [`queue`] — the requests and replies that travel to and from the
//!   writer; [`writer`] — the thread, its group commit and its dispatch;
//!   [`startup`] — what is read back from the file before it starts.
//! * Each operation's rules, applied in a group's transaction ([`tx`]):
//!   [`put`], [`update`], [`delete`] (with [`conditions`]), [`batch`],
//!   [`transact`], [`consumers`] (registration and checkpoints) and
//!   [`expire`] (Time to Live's deletions).
//! * What every item write keeps beside the item ([`item`]): its index
//!   entries ([`indexes`], held until the group ends and applied in key
//!   order by [`packed`]), its item collection's size ([`collections`]),
//!   its place in the Time to Live queue ([`expiries`]) and its stream
//!   record ([`change_stream`], which also trims the
//!   streams).
//! * Catalog changes, each committed alone: [`tables`] (CreateTable,
//!   DeleteTable, Time to Live, streams) and [`index_changes`] (UpdateTable's
//!   indexes, backfilled by [`backfill`] between groups); [`bulk`] defers a
//!   table's indexes for a bulk load and builds them from sorted runs after
//!   it.
//! * [`sweeper`] — the Time to Live thread that reads the expired items
//!   off the [`expiries`] queue and sends their deletion through the
//!   writer's queue.

mod backfill;
mod batch;
mod bulk;
mod change_stream;
mod collections;
mod conditions;
mod consumers;
mod delete;
mod expire;
mod expiries;
mod index_changes;
mod indexes;
mod item;
mod packed;
mod put;
pub(crate) mod queue;
pub(crate) mod startup;
pub(crate) mod sweeper;
mod tables;
mod transact;
mod tx;
mod update;
pub(crate) mod writer;

#[cfg(test)]
mod tests;
