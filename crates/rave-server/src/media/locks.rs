//! One lock per photo id, so that an upload and a deletion of the same
//! photo never interleave.
//!
//! Photos are content-addressed: two identical uploads name the same blob.
//! A deletion's "no comment names the photo any more … delete its blob"
//! and an upload's "put the blob … write the comment naming it" would,
//! interleaved, leave a comment naming a blob just deleted. Each holds the
//! photo's lock across both of its steps, so one runs after the other: the
//! deletion either sees the new reference (and keeps the blob) or deletes
//! the blob before the upload puts it again.
//!
//! The lock is only this process's: rave's embedded store has one server
//! process. Several servers on one bucket can still interleave; what that
//! leaves (a comment naming a missing blob) is what `rave reconcile`
//! reports and `--fix` repairs.
//!
//! A lock exists only while someone holds or waits for it: the map keeps
//! weak handles, dropped when the last guard goes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use rave_comments::PhotoId;
use tokio::sync::OwnedMutexGuard;

/// The locks of the photos being uploaded or deleted now.
#[derive(Debug, Default)]
pub(crate) struct PhotoLocks {
    held: Mutex<HashMap<PhotoId, Weak<tokio::sync::Mutex<()>>>>,
}

/// The lock of one photo, held until dropped.
#[derive(Debug)]
pub(crate) struct PhotoGuard {
    _guard: OwnedMutexGuard<()>,
}

impl PhotoLocks {
    /// Waits for `photo`'s lock and holds it until the guard is dropped.
    pub(crate) async fn lock(&self, photo: &PhotoId) -> PhotoGuard {
        let lock = self.lock_of(photo);
        PhotoGuard {
            _guard: lock.lock_owned().await,
        }
    }

    /// Holds the locks of every photo of `photos` (each once, taken in id
    /// order so that two callers with overlapping sets never deadlock).
    pub(crate) async fn lock_all<'a>(
        &self,
        photos: impl IntoIterator<Item = &'a PhotoId>,
    ) -> Vec<PhotoGuard> {
        let mut ids: Vec<&PhotoId> = photos.into_iter().collect();
        ids.sort();
        ids.dedup();
        let mut guards = Vec::with_capacity(ids.len());
        for id in ids {
            guards.push(self.lock(id).await);
        }
        guards
    }

    fn lock_of(&self, photo: &PhotoId) -> Arc<tokio::sync::Mutex<()>> {
        // Poisoning needs a panic while the map is held, which none of the
        // few lines below can do; the map is still whole.
        let mut held = self
            .held
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(lock) = held.get(photo).and_then(Weak::upgrade) {
            return lock;
        }
        held.retain(|_, lock| lock.strong_count() > 0);
        let lock = Arc::new(tokio::sync::Mutex::new(()));
        held.insert(photo.clone(), Arc::downgrade(&lock));
        lock
    }

    /// How many photos have a lock now (held or waited for).
    #[cfg(test)]
    fn len(&self) -> usize {
        let held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        held.values().filter(|lock| lock.strong_count() > 0).count()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn photo(fill: char) -> PhotoId {
        PhotoId::parse(&fill.to_string().repeat(64)).unwrap()
    }

    #[tokio::test]
    async fn a_photo_is_locked_by_one_holder_at_a_time_and_others_are_free() {
        let locks = Arc::new(PhotoLocks::default());
        let held = locks.lock(&photo('a')).await;
        // Another photo is not blocked.
        let other = locks.lock(&photo('b')).await;
        drop(other);

        let (tx, mut rx) = tokio::sync::oneshot::channel();
        let waiter = {
            let locks = Arc::clone(&locks);
            tokio::spawn(async move {
                let _guard = locks.lock(&photo('a')).await;
                tx.send(()).unwrap();
            })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(rx.try_recv().is_err(), "taken while held");
        drop(held);
        waiter.await.unwrap();
        assert_eq!(locks.len(), 0, "no lock kept once nobody holds it");
    }

    #[tokio::test]
    async fn overlapping_sets_are_taken_in_one_order() {
        let locks = Arc::new(PhotoLocks::default());
        let (a, b) = (photo('a'), photo('b'));
        let tasks: Vec<_> = (0..8)
            .map(|n| {
                let locks = Arc::clone(&locks);
                let set = if n % 2 == 0 {
                    vec![a.clone(), b.clone(), a.clone()]
                } else {
                    vec![b.clone(), a.clone()]
                };
                tokio::spawn(async move {
                    let guards = locks.lock_all(&set).await;
                    assert_eq!(guards.len(), 2);
                    tokio::task::yield_now().await;
                })
            })
            .collect();
        for task in tasks {
            tokio::time::timeout(Duration::from_secs(10), task)
                .await
                .expect("no deadlock")
                .unwrap();
        }
    }
}
