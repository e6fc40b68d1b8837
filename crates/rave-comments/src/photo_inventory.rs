//! Which photos the table names: for `rave reconcile`, which compares them
//! with the blobs the media store holds.
//!
//! One scan of the whole table reads both the photos each comment carries
//! and the photo references (`table::photo`). The two should agree, since
//! every write keeps them together; where they do not (a batch import cut
//! short between a reference and its comment), the inventory says so, and
//! `repair` writes the missing references and deletes the stale ones, so that "no reference left" again means "no comment names
//! it". The comparison with the media store is the caller's: the domain
//! knows no store of blobs.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rave_store::{Segment, Store, WriteRequest};

use crate::access::TableAccess;
use crate::error::Result;
use crate::photos::PhotoId;
use crate::table::{ItemKind, comment, photo};

/// Items a scan reads per request.
const SCAN_PAGE: usize = 500;

/// A photo of a comment: which comment names which photo.
pub type Naming = (PhotoId, String);

/// The photos comments name and the references kept for them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PhotoInventory {
    /// Each photo a comment carries, with the ids of the comments that
    /// carry it.
    pub named: BTreeMap<PhotoId, BTreeSet<String>>,
    /// Comments naming a photo with no reference for it.
    pub missing_references: BTreeSet<Naming>,
    /// References whose comment does not name the photo (or is gone).
    pub stale_references: BTreeSet<Naming>,
}

impl PhotoInventory {
    /// Whether a comment names `photo`.
    pub fn names(&self, photo: &PhotoId) -> bool {
        self.named.contains_key(photo)
    }
}

/// Scans the table (in `segments` segments, one after another).
pub(crate) async fn take<S: Store>(
    access: &Arc<TableAccess<S>>,
    segments: u32,
) -> Result<PhotoInventory> {
    let total_segments = segments.max(1);
    let mut inventory = PhotoInventory::default();
    let mut references = BTreeSet::new();
    for segment in 0..total_segments {
        let mut start = None;
        loop {
            let page = access
                .scan(
                    Segment {
                        segment,
                        total_segments,
                    },
                    SCAN_PAGE,
                    true,
                    start.take(),
                )
                .await?;
            for item in &page.items {
                if photo::is_reference(item) {
                    references.insert(photo::decode(item)?);
                } else if ItemKind::of(item) == ItemKind::Comment && comment::is_comment_item(item)
                {
                    let named = comment::decode(item)?;
                    for carried in named.media {
                        inventory
                            .named
                            .entry(carried.id)
                            .or_default()
                            .insert(named.id.clone());
                    }
                }
            }
            match page.last_evaluated_key {
                Some(key) => start = Some(key),
                None => break,
            }
        }
    }
    let namings: BTreeSet<Naming> = inventory
        .named
        .iter()
        .flat_map(|(photo, comments)| comments.iter().map(|id| (photo.clone(), id.clone())))
        .collect();
    inventory.missing_references = namings.difference(&references).cloned().collect();
    inventory.stale_references = references.difference(&namings).cloned().collect();
    Ok(inventory)
}

/// Writes the references `inventory` found missing and deletes the stale
/// ones, each after reading its comment again: the scan is no snapshot, so
/// a comment created or deleted while it ran may look unreferenced, or its
/// reference stale, when it is not.
pub(crate) async fn repair<S: Store>(
    access: &Arc<TableAccess<S>>,
    inventory: &PhotoInventory,
) -> Result<()> {
    let mut writes = Vec::new();
    for (named, id) in &inventory.missing_references {
        if still_names(access, id, named).await? {
            writes.push(WriteRequest::Put(photo::encode(named, id)));
        }
    }
    for (named, id) in &inventory.stale_references {
        if !still_names(access, id, named).await? {
            writes.push(WriteRequest::Delete(photo::encode(named, id)));
        }
    }
    Ok(access.write_many(writes).await?)
}

/// Whether comment `id` exists and carries `named` (read consistently).
async fn still_names<S: Store>(access: &TableAccess<S>, id: &str, named: &PhotoId) -> Result<bool> {
    let (item, _) = access.get(comment::key(id), true).await?;
    Ok(match item {
        Some(item) => comment::decode(&item)?
            .media
            .iter()
            .any(|carried| &carried.id == named),
        None => false,
    })
}
