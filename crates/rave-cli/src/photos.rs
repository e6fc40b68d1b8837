//! `rave reconcile`'s photo part: the media store against what the
//! comments name. One check for both deployments, over the `Store` and
//! `MediaStore` the command opened: the engine and `<data>/media`, or
//! DynamoDB and the bucket (where it is all reconcile does).
//!
//! An upload puts its blobs (fsync'd) before the comment naming them is
//! written, so a crash in between leaves an orphan: a stored photo no
//! comment names. The other way round (a comment naming a photo whose
//! renditions are not all stored) needs a blob lost outside rave, or two
//! servers on one bucket racing a deletion against an identical upload.
//! Reconcile reports both, and with `--fix` deletes the orphans and
//! removes the missing photos from their comments (with their references,
//! as a moderator's rejection would).
//!
//! **In-flight uploads.** The comments are scanned first, the store listed
//! after, and only orphans older than the grace period (10 minutes by
//! default) are taken: an upload whose comment is being written while
//! reconcile runs has blobs younger than that (writing a photo again, for
//! an identical upload, makes it young again). Each orphan's references
//! are read once more right before its blob goes.
//!
//! The photo references (`PHOTO#<photo>` / `COMMENT#<comment>`) are checked
//! against the comments on the way: missing ones are written and stale
//! ones deleted with `--fix`, so that a blob's deletion can trust them.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use rave_comments::{Comments, CommentsError, PhotoId};
use rave_media::{MediaId, MediaStore, StoredPhoto};
use rave_store::SharedStore;

/// What the photo part found (and, with `fix`, repaired).
#[derive(Debug, Default)]
struct PhotoReport {
    stored: usize,
    named: usize,
    orphans: usize,
    /// Photos no comment names, younger than the grace period: left alone.
    young: usize,
    missing: usize,
    references_drifted: usize,
}

/// Compares `media` with the photos `comments` name, printing each finding
/// as a line of its own, and repairs them with `fix`.
pub(crate) async fn reconcile(
    comments: &Comments<SharedStore>,
    media: &MediaStore,
    segments: u32,
    grace: Duration,
    fix: bool,
) -> anyhow::Result<()> {
    let inventory = comments.photo_inventory(segments).await?;
    let stored: BTreeMap<PhotoId, StoredPhoto> = media
        .photos()
        .await?
        .into_iter()
        .filter_map(|photo| Some((PhotoId::parse(photo.id.as_str()).ok()?, photo)))
        .collect();
    let done = |what: &str| {
        if fix {
            format!(", {what}")
        } else {
            String::new()
        }
    };
    let mut report = PhotoReport {
        stored: stored.len(),
        named: inventory.named.len(),
        references_drifted: inventory.missing_references.len() + inventory.stale_references.len(),
        ..PhotoReport::default()
    };

    for (photo, comment) in &inventory.missing_references {
        println!(
            "photo reference {photo} of comment {comment} missing{}",
            done("written")
        );
    }
    for (photo, comment) in &inventory.stale_references {
        println!(
            "photo reference {photo} of comment {comment} stale: the comment does not carry the photo{}",
            done("deleted")
        );
    }
    if fix {
        comments.repair_photo_references(&inventory).await?;
    }

    let now = SystemTime::now();
    for (photo, held) in &stored {
        if inventory.names(photo) {
            continue;
        }
        let age = now.duration_since(held.modified).unwrap_or_default();
        if age < grace {
            report.young += 1;
            println!(
                "unnamed photo {photo}: written {} s ago, too young to judge (an upload may be writing its comment)",
                age.as_secs()
            );
            continue;
        }
        report.orphans += 1;
        let minutes = age.as_secs() / 60;
        if !fix {
            println!("orphan photo {photo}: no comment names it, written {minutes} min ago");
        } else if comments.photo_referenced(photo).await? {
            println!("orphan photo {photo}: named again since the scan, kept");
        } else {
            media.delete_image(&held.id).await?;
            println!(
                "orphan photo {photo}: no comment names it, written {minutes} min ago, deleted"
            );
        }
    }

    for (photo, carriers) in &inventory.named {
        if stored.get(photo).is_some_and(StoredPhoto::is_complete) {
            continue;
        }
        for comment in carriers {
            report.missing += 1;
            if !fix {
                println!(
                    "missing photo {photo} of comment {comment}: its renditions are not all stored"
                );
                continue;
            }
            match comments.reject_photo(comment, photo).await {
                Ok((_, unreferenced)) => {
                    // What a cut-short write left of it goes too.
                    for gone in unreferenced {
                        if let Some(id) = MediaId::parse(gone.as_str()) {
                            media.delete_image(&id).await?;
                        }
                    }
                    println!(
                        "missing photo {photo} of comment {comment}: its renditions are not all stored, removed from the comment"
                    );
                }
                // The comment (or its photo) went since the scan.
                Err(CommentsError::NotFound) => {}
                Err(error) => return Err(error.into()),
            }
        }
    }

    println!(
        "photos: {} stored, {} named by comments: {} orphans, {} too young to judge (under {} min), {} missing, {} references drifted{}",
        report.stored,
        report.named,
        report.orphans,
        report.young,
        grace.as_secs() / 60,
        report.missing,
        report.references_drifted,
        if fix && (report.orphans + report.missing + report.references_drifted) > 0 {
            ", repaired"
        } else {
            ""
        }
    );
    Ok(())
}
