//! Capacity the domain has consumed since start, for metrics.

use std::sync::atomic::{AtomicU64, Ordering};

use rave_store::ConsumedCapacity;

#[derive(Debug, Default)]
pub struct Usage {
    /// Counted in half units, the smallest DynamoDB charges.
    read_half_units: AtomicU64,
    write_half_units: AtomicU64,
    items_read: AtomicU64,
}

impl Usage {
    pub(crate) fn add_read(&self, units: f64, items: usize) {
        self.read_half_units
            .fetch_add((units * 2.0).round() as u64, Ordering::Relaxed);
        self.items_read.fetch_add(items as u64, Ordering::Relaxed);
    }

    pub(crate) fn add_write(&self, consumed: &[ConsumedCapacity]) {
        let units: f64 = consumed.iter().map(|c| c.write_units).sum();
        self.write_half_units
            .fetch_add((units * 2.0).round() as u64, Ordering::Relaxed);
    }

    pub fn read_units(&self) -> f64 {
        self.read_half_units.load(Ordering::Relaxed) as f64 / 2.0
    }

    pub fn write_units(&self) -> f64 {
        self.write_half_units.load(Ordering::Relaxed) as f64 / 2.0
    }

    pub fn items_read(&self) -> u64 {
        self.items_read.load(Ordering::Relaxed)
    }
}
