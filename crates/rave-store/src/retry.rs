//! One bounded retry for every transient store failure.
//!
//! DynamoDB asks clients to retry throttled requests, transaction conflicts
//! and unprocessed batch items with exponential backoff and jitter; the
//! embedded engine reports a full disk or a stopped writer the same way
//! ([`StoreError::is_retryable`]). [`Retry`] is that loop, written once:
//!
//! * at most [`Retry::max_attempts`] attempts in all, the first included;
//! * before retry `n` (0-based) it sleeps a uniformly random time in
//!   `0 ..= min(max_delay, base_delay × 2ⁿ)` ("full jitter": clients that
//!   failed together spread out instead of retrying in lockstep);
//! * it stops at once on an error that is not retryable, and returns it.
//!
//! A single request:
//!
//! ```ignore
//! let output = Retry::default()
//!     .run(|| store.put_item(input.clone()))
//!     .await?;
//! ```
//!
//! A batch, retrying only the part the store left unprocessed (the closure
//! sends what is still pending and returns what remains; requests still
//! left when the attempts are spent make a `Throttled` error):
//!
//! ```ignore
//! Retry::default()
//!     .run_batch(requests, |pending| async {
//!         let out = store
//!             .batch_write_item(BatchWriteItemInput { requests: pending })
//!             .await?;
//!         Ok(out.unprocessed)
//!     })
//!     .await?;
//! ```
//!
//! The attempts are plain closures returning futures, not async closures,
//! so that the futures they make stay `Send` for multi-threaded runtimes.
//! Sleeping uses tokio's timer, so the futures must run on a tokio runtime.

use std::collections::hash_map::RandomState;
use std::future::Future;
use std::hash::BuildHasher;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use crate::{Result, StoreError};

/// A bounded retry with jittered exponential backoff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    /// Attempts in all, the first one included (at least 1).
    pub max_attempts: u32,
    /// The backoff ceiling before the first retry; it doubles per retry.
    pub base_delay: Duration,
    /// No single wait is longer than this.
    pub max_delay: Duration,
}

impl Default for Retry {
    /// 8 attempts, 50 ms doubling to at most 5 s: about three seconds of
    /// waiting on average before giving up, 6.35 s at worst.
    fn default() -> Retry {
        Retry {
            max_attempts: 8,
            base_delay: Duration::from_millis(50),
            max_delay: Duration::from_secs(5),
        }
    }
}

impl Retry {
    /// Runs `attempt` until it succeeds, fails with an error that is not
    /// retryable, or has been tried `max_attempts` times (then the last
    /// error is returned).
    pub async fn run<T, Fut>(&self, attempt: impl FnMut() -> Fut) -> Result<T>
    where
        Fut: Future<Output = Result<T>>,
    {
        let mut jitter = Jitter::from_entropy();
        self.run_with(&mut jitter, tokio::time::sleep, attempt)
            .await
    }

    /// Sends `requests` with `send`, which returns the part left
    /// unprocessed, and sends that part again until nothing is left. A
    /// round that leaves something over counts as a throttled attempt; if
    /// requests remain after the last attempt, the result is
    /// [`StoreError::Throttled`] saying how many.
    pub async fn run_batch<R: Clone, Fut>(
        &self,
        requests: Vec<R>,
        mut send: impl FnMut(Vec<R>) -> Fut,
    ) -> Result<()>
    where
        Fut: Future<Output = Result<Vec<R>>>,
    {
        if requests.is_empty() {
            return Ok(());
        }
        let pending = Mutex::new(requests);
        let pending = &pending;
        self.run(|| {
            let round = send(lock(pending).clone());
            async move {
                let left = round.await?;
                let count = left.len();
                *lock(pending) = left;
                match count {
                    0 => Ok(()),
                    left => Err(StoreError::Throttled(format!(
                        "{left} requests left unprocessed"
                    ))),
                }
            }
        })
        .await
    }

    /// The wait before retry `retry` (0-based), for a `sample` uniform in
    /// `[0, 1)`.
    fn delay(&self, retry: u32, sample: f64) -> Duration {
        let ceiling = self
            .base_delay
            .saturating_mul(2u32.saturating_pow(retry))
            .min(self.max_delay);
        ceiling.mul_f64(sample.clamp(0.0, 1.0))
    }

    async fn run_with<T, Fut, Sleep>(
        &self,
        jitter: &mut Jitter,
        mut sleep: impl FnMut(Duration) -> Sleep,
        mut attempt: impl FnMut() -> Fut,
    ) -> Result<T>
    where
        Fut: Future<Output = Result<T>>,
        Sleep: Future<Output = ()>,
    {
        let mut retry = 0;
        loop {
            match attempt().await {
                Err(error) if error.is_retryable() && retry + 1 < self.max_attempts => {
                    let delay = self.delay(retry, jitter.sample());
                    tracing::debug!(%error, retry, ?delay, "retrying a store request");
                    sleep(delay).await;
                    retry += 1;
                }
                outcome => return outcome,
            }
        }
    }
}

/// The pending part of a batch; a panic elsewhere cannot leave it half-written.
fn lock<R>(pending: &Mutex<Vec<R>>) -> std::sync::MutexGuard<'_, Vec<R>> {
    pending.lock().unwrap_or_else(PoisonError::into_inner)
}

/// SplitMix64: enough randomness to spread retries, seeded per call from
/// the process's random hasher keys (tests seed it).
struct Jitter(u64);

impl Jitter {
    fn from_entropy() -> Jitter {
        Jitter(RandomState::new().hash_one(std::time::Instant::now()))
    }

    /// Uniform in `[0, 1)`.
    fn sample(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        // The top 53 bits fill an f64's mantissa exactly.
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use std::future::ready;

    use super::*;

    fn timed_runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a current-thread runtime")
    }

    fn retry() -> Retry {
        Retry {
            max_attempts: 5,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(50),
        }
    }

    /// Runs `attempt` with a seeded jitter and a sleep that only records.
    fn drive<T, Fut: Future<Output = Result<T>>>(
        retry: Retry,
        attempt: impl FnMut() -> Fut,
    ) -> (Result<T>, Vec<Duration>) {
        let mut slept = Vec::new();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a current-thread runtime");
        let outcome = runtime.block_on(retry.run_with(
            &mut Jitter(42),
            |d| {
                slept.push(d);
                std::future::ready(())
            },
            attempt,
        ));
        (outcome, slept)
    }

    #[test]
    fn gives_up_after_max_attempts_with_the_last_error() {
        let mut calls = 0;
        let (outcome, slept) = drive(retry(), || {
            calls += 1;
            ready::<Result<()>>(Err(StoreError::Throttled(format!("call {calls}"))))
        });
        assert_eq!(outcome, Err(StoreError::Throttled("call 5".into())));
        assert_eq!(slept.len(), 4, "one wait between each two attempts");
    }

    #[test]
    fn waits_stay_within_the_doubling_ceiling_and_the_cap() {
        let policy = Retry {
            max_attempts: 12,
            ..retry()
        };
        let (_, slept) = drive(policy, || {
            ready::<Result<()>>(Err(StoreError::Unavailable("disk".into())))
        });
        assert_eq!(slept.len(), 11);
        for (n, delay) in slept.iter().enumerate() {
            let ceiling =
                (Duration::from_millis(10) * 2u32.pow(n as u32)).min(Duration::from_millis(50));
            assert!(
                *delay <= ceiling,
                "retry {n} waited {delay:?} > {ceiling:?}"
            );
        }
        // Full jitter: the waits vary rather than all hitting the ceiling.
        assert!(slept.windows(2).any(|w| w[0] != w[1]));
    }

    #[test]
    fn a_seeded_jitter_repeats_its_waits() {
        let fail = || ready::<Result<()>>(Err(StoreError::TransactionConflict("x".into())));
        assert_eq!(drive(retry(), fail).1, drive(retry(), fail).1);
    }

    #[test]
    fn jitter_samples_lie_in_the_unit_interval() {
        let mut jitter = Jitter(7);
        let samples: Vec<f64> = (0..10_000).map(|_| jitter.sample()).collect();
        assert!(samples.iter().all(|s| (0.0..1.0).contains(s)));
        let mean = samples.iter().sum::<f64>() / samples.len() as f64;
        assert!((0.45..0.55).contains(&mean), "mean {mean}");
    }

    #[test]
    fn stops_at_once_on_an_error_that_is_not_retryable() {
        let mut calls = 0;
        let (outcome, slept) = drive(retry(), || {
            calls += 1;
            ready::<Result<()>>(Err(StoreError::ConditionalCheckFailed))
        });
        assert_eq!(outcome, Err(StoreError::ConditionalCheckFailed));
        assert_eq!(calls, 1);
        assert!(slept.is_empty());
    }

    #[test]
    fn returns_the_first_success() {
        let mut calls = 0;
        let (outcome, slept) = drive(retry(), || {
            calls += 1;
            ready(if calls < 3 {
                Err(StoreError::Unavailable("busy".into()))
            } else {
                Ok(calls)
            })
        });
        assert_eq!(outcome, Ok(3));
        assert_eq!(slept.len(), 2);
    }

    #[test]
    fn a_batch_resends_only_what_was_left_unprocessed() {
        let runtime = timed_runtime();
        let policy = Retry {
            base_delay: Duration::from_micros(10),
            max_delay: Duration::from_micros(100),
            ..retry()
        };
        let mut sent = Vec::new();
        let outcome = runtime.block_on(policy.run_batch((1..=5).collect(), |pending: Vec<u32>| {
            sent.push(pending.clone());
            // The store processes one request per round.
            ready(Ok(pending[1..].to_vec()))
        }));
        assert_eq!(outcome, Ok(()));
        assert_eq!(
            sent,
            vec![
                vec![1, 2, 3, 4, 5],
                vec![2, 3, 4, 5],
                vec![3, 4, 5],
                vec![4, 5],
                vec![5]
            ]
        );
    }

    #[test]
    fn a_batch_that_never_drains_is_throttled() {
        let runtime = timed_runtime();
        let policy = Retry {
            max_attempts: 3,
            base_delay: Duration::from_micros(10),
            max_delay: Duration::from_micros(100),
        };
        let mut rounds = 0;
        let outcome = runtime.block_on(policy.run_batch(vec!['a', 'b'], |pending| {
            rounds += 1;
            ready(Ok(pending))
        }));
        assert_eq!(
            outcome,
            Err(StoreError::Throttled("2 requests left unprocessed".into()))
        );
        assert_eq!(rounds, 3);
    }

    #[test]
    fn a_batch_stops_on_an_error_that_is_not_retryable() {
        let runtime = timed_runtime();
        let mut rounds = 0;
        let outcome = runtime.block_on(retry().run_batch(vec![1], |_: Vec<i32>| {
            rounds += 1;
            ready(Err::<Vec<i32>, _>(StoreError::validation("bad item")))
        }));
        assert_eq!(outcome, Err(StoreError::validation("bad item")));
        assert_eq!(rounds, 1);
    }

    #[test]
    fn a_batch_whose_last_round_fails_reports_the_failure() {
        let runtime = timed_runtime();
        let policy = Retry {
            max_attempts: 3,
            base_delay: Duration::from_micros(10),
            max_delay: Duration::from_micros(100),
        };
        let mut rounds = 0;
        let outcome = runtime.block_on(policy.run_batch(vec![1, 2], |pending: Vec<i32>| {
            rounds += 1;
            ready(match rounds {
                1 => Ok(pending[1..].to_vec()),
                _ => Err(StoreError::Unavailable("gone".into())),
            })
        }));
        assert_eq!(outcome, Err(StoreError::Unavailable("gone".into())));
        assert_eq!(rounds, 3);
    }
}
