//! The rate limit on public writes: a GCRA bucket (governor) per client, in
//! memory no flood of addresses can grow past a fixed number of buckets.
//!
//! Two things keep it bounded. IPv6 clients are grouped by their /64, the
//! block a single subscriber is routinely given, so one host cannot take a
//! bucket per address. And the buckets are held in a store with a hard cap:
//! once it is full, clients without a bucket share a single overflow bucket
//! until pruning (buckets back to full are indistinguishable from new ones,
//! and dropped) makes room. Clients that already have a bucket keep it.
//! The cap is 65,536 buckets, and refilled buckets are pruned every ten
//! seconds.

use std::net::{IpAddr, Ipv6Addr};
use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::nanos::Nanos;
use governor::state::keyed::{HashMapStateStore, ShrinkableKeyedStateStore};
use governor::state::{InMemoryState, NotKeyed, StateStore};
use governor::{Quota, RateLimiter};
use prometheus_client::metrics::gauge::Gauge;

/// Most clients given a bucket of their own.
pub(crate) const MAX_TRACKED_CLIENTS: usize = 65_536;

/// Public writes limited per client.
pub(crate) struct ClientLimiter {
    limiter: RateLimiter<IpAddr, BoundedStore, DefaultClock>,
}

impl std::fmt::Debug for ClientLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientLimiter")
            .field("tracked_clients", &self.tracked_clients())
            .finish()
    }
}

impl ClientLimiter {
    /// `per_minute` writes a minute per client, in bursts of up to a tenth
    /// of that; at most `capacity` clients with a bucket of their own, their
    /// number kept in `tracked`.
    pub(crate) fn new(per_minute: NonZeroU32, capacity: usize, tracked: Gauge) -> ClientLimiter {
        let burst = NonZeroU32::new((per_minute.get() / 10).max(1)).unwrap_or(NonZeroU32::MIN);
        let store = BoundedStore {
            buckets: HashMapStateStore::default(),
            overflow: InMemoryState::default(),
            capacity,
            tracked,
        };
        ClientLimiter {
            limiter: RateLimiter::new(
                Quota::per_minute(per_minute).allow_burst(burst),
                store,
                DefaultClock::default(),
            ),
        }
    }

    /// Takes one write from `client`'s bucket, or says how long until it
    /// may write again.
    pub(crate) fn check(&self, client: IpAddr) -> Result<(), Duration> {
        self.limiter
            .check_key(&bucket_key(client))
            .map_err(|not_until| not_until.wait_time_from(DefaultClock::default().now()))
    }

    /// Forgets the clients whose buckets have refilled.
    pub(crate) fn prune(&self) {
        self.limiter.retain_recent();
        self.limiter.shrink_to_fit();
    }

    pub(crate) fn tracked_clients(&self) -> usize {
        self.limiter.len()
    }
}

/// The bucket a client draws from: its own address, or for IPv6 its /64.
fn bucket_key(client: IpAddr) -> IpAddr {
    match client.to_canonical() {
        IpAddr::V6(v6) => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & (u128::MAX << 64))),
        v4 => v4,
    }
}

/// Buckets per key up to `capacity`, then one shared bucket for the rest.
struct BoundedStore {
    buckets: HashMapStateStore<IpAddr>,
    overflow: InMemoryState,
    capacity: usize,
    tracked: Gauge,
}

impl StateStore for BoundedStore {
    type Key = IpAddr;

    fn measure_and_replace<T, F, E>(&self, key: &IpAddr, f: F) -> Result<T, E>
    where
        F: Fn(Option<Nanos>) -> Result<(T, Nanos), E>,
    {
        let mut buckets = self.buckets.lock();
        if let Some(bucket) = buckets.get(key) {
            return bucket.measure_and_replace(&NotKeyed::NonKey, f);
        }
        if buckets.len() >= self.capacity {
            drop(buckets);
            return self.overflow.measure_and_replace(&NotKeyed::NonKey, f);
        }
        let outcome = buckets
            .entry(*key)
            .or_default()
            .measure_and_replace(&NotKeyed::NonKey, f);
        self.tracked.set(gauge_value(buckets.len()));
        outcome
    }
}

impl ShrinkableKeyedStateStore<IpAddr> for BoundedStore {
    fn retain_recent(&self, drop_below: Nanos) {
        self.buckets.retain_recent(drop_below);
        self.tracked.set(gauge_value(self.buckets.len()));
    }

    fn shrink_to_fit(&self) {
        self.buckets.shrink_to_fit();
    }

    fn len(&self) -> usize {
        self.buckets.len()
    }

    fn is_empty(&self) -> bool {
        self.buckets.is_empty()
    }
}

fn gauge_value(count: usize) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limiter(per_minute: u32, capacity: usize) -> ClientLimiter {
        ClientLimiter::new(
            NonZeroU32::new(per_minute).unwrap(),
            capacity,
            Gauge::default(),
        )
    }

    fn burst(limiter: &ClientLimiter, client: &str) -> usize {
        let client: IpAddr = client.parse().unwrap();
        (0..100)
            .take_while(|_| limiter.check(client).is_ok())
            .count()
    }

    #[test]
    fn each_client_has_its_own_burst() {
        let limiter = limiter(60, 100);
        assert_eq!(burst(&limiter, "192.0.2.1"), 6);
        assert_eq!(burst(&limiter, "192.0.2.2"), 6);
        assert!(limiter.check("192.0.2.1".parse().unwrap()).is_err());
    }

    #[test]
    fn ipv6_clients_share_a_bucket_per_64() {
        let limiter = limiter(60, 100);
        assert_eq!(burst(&limiter, "2001:db8:1:2::1"), 6);
        assert_eq!(burst(&limiter, "2001:db8:1:2:ffff:ffff:ffff:ffff"), 0);
        assert_eq!(burst(&limiter, "2001:db8:1:3::1"), 6);
        assert_eq!(limiter.tracked_clients(), 2);
        // IPv4-mapped addresses are the IPv4 client, not one IPv6 /64.
        assert_eq!(burst(&limiter, "::ffff:192.0.2.1"), 6);
        assert_eq!(burst(&limiter, "192.0.2.1"), 0);
        assert_eq!(burst(&limiter, "::ffff:192.0.2.2"), 6);
    }

    #[test]
    fn a_flood_of_addresses_stays_within_the_cap() {
        let tracked = Gauge::default();
        // One write a minute: no bucket refills while the flood runs.
        let limiter = ClientLimiter::new(NonZeroU32::MIN, 1_000, tracked.clone());
        assert_eq!(burst(&limiter, "198.51.100.1"), 1);
        for n in 0..100_000u32 {
            let _ = limiter.check(IpAddr::from((0x0a00_0000 + n).to_be_bytes()));
        }
        assert_eq!(limiter.tracked_clients(), 1_000);
        assert_eq!(tracked.get(), 1_000);
        // A client that had a bucket before the flood keeps it (still empty),
        // and clients without one share the overflow bucket the flood drained.
        assert_eq!(burst(&limiter, "198.51.100.1"), 0);
        assert_eq!(burst(&limiter, "203.0.113.1"), 0);
    }

    #[test]
    fn pruning_forgets_refilled_buckets_and_makes_room() {
        // 60 000 a minute: a bucket refills a cell every millisecond.
        let limiter = limiter(60_000, 10);
        for n in 0..10u8 {
            assert!(limiter.check(IpAddr::from([192, 0, 2, n])).is_ok());
        }
        assert!(limiter.check("203.0.113.1".parse().unwrap()).is_ok());
        assert_eq!(limiter.tracked_clients(), 10);
        std::thread::sleep(Duration::from_millis(20));
        limiter.prune();
        assert_eq!(limiter.tracked_clients(), 0);
        assert!(limiter.check("203.0.113.1".parse().unwrap()).is_ok());
        assert_eq!(limiter.tracked_clients(), 1);
    }
}
