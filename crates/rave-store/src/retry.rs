//! One bounded retry for every transient store failure.
//!
//! DynamoDB asks clients to retry throttled requests, transaction conflicts
//! and unprocessed batch items with exponential backoff and jitter; the
//! embedded engine reports a full disk or a stopped writer the same way
//! ([`crate::StoreError::is_retryable`]). [`Retry`] is that loop, written once:
//!
//! * at most [`Retry::max_attempts`] attempts in all, the first included;
//! * before retry `n` (0-based) it sleeps a uniformly random time in
//!   `0 ..= min(max_delay, base_delay × 2ⁿ)` ("full jitter": clients that
//!   failed together spread out instead of retrying in lockstep);
//! * it stops at once on an error that is not retryable, and returns it.
//!
//! A single request (the closure makes a fresh attempt each time it is
//! called):
//!
//! ```ignore
//! let output = Retry::default()
//!     .run(|| store.put_item(input.clone()))
//!     .await?;
//! ```
//!
//! A batch, sending again only the part the store left unprocessed. Each
//! round gets the pending requests and returns its own output with what it
//! left over; `run_batch` returns every round's output and whatever is
//! still unprocessed when the attempts are spent ([`Batch`]):
//!
//! ```ignore
//! let batch = Retry::default()
//!     .run_batch(requests, |pending| async {
//!         let out = store
//!             .batch_write_item(BatchWriteItemInput { requests: pending })
//!             .await?;
//!         Ok((out.consumed, out.unprocessed))
//!     })
//!     .await?;
//! batch.outputs.iter().for_each(|consumed| usage.add_write(consumed));
//! if !batch.unprocessed.is_empty() {
//!     let left = batch.unprocessed.len();
//!     return Err(StoreError::Throttled(format!("{left} writes not processed")));
//! }
//! ```
//!
//! Sleeping uses tokio's timer, so the futures must run on a tokio runtime.

use std::collections::hash_map::RandomState;
use std::future::Future;
use std::hash::BuildHasher;
use std::time::Duration;

use crate::Result;

/// What [`Retry::run_batch`] returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch<T, R> {
    /// The output of every round that succeeded, in order.
    pub outputs: Vec<T>,
    /// What is still unprocessed after the last attempt (empty when
    /// everything went through).
    pub unprocessed: Vec<R>,
}

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
    pub async fn run<T, F, Fut>(&self, attempt: F) -> Result<T>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        self.run_with(
            self.backoff(Jitter::from_entropy()),
            tokio::time::sleep,
            attempt,
        )
        .await
    }

    /// Sends `requests` with `send`, which returns its output and the part
    /// of what it was given that the store left unprocessed; sends that
    /// part again, after a backoff, until nothing is left or the attempts
    /// are spent. Returns every round's output and what is still
    /// unprocessed (empty when everything went through). A round that
    /// fails is retried as in [`Retry::run`], with the same requests.
    pub async fn run_batch<R, T, F, Fut>(&self, requests: Vec<R>, send: F) -> Result<Batch<T, R>>
    where
        R: Clone,
        F: FnMut(Vec<R>) -> Fut,
        Fut: Future<Output = Result<(T, Vec<R>)>>,
    {
        self.run_batch_with(
            self.backoff(Jitter::from_entropy()),
            tokio::time::sleep,
            requests,
            send,
        )
        .await
    }

    fn backoff(&self, jitter: Jitter) -> Backoff {
        Backoff {
            policy: *self,
            jitter,
            retries: 0,
        }
    }

    async fn run_with<T, S, SleepFut, F, Fut>(
        &self,
        mut backoff: Backoff,
        mut sleep: S,
        mut attempt: F,
    ) -> Result<T>
    where
        S: FnMut(Duration) -> SleepFut,
        SleepFut: Future<Output = ()>,
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        loop {
            match attempt().await {
                Err(error) if error.is_retryable() => match backoff.next_delay() {
                    Some(delay) => {
                        tracing::debug!(%error, ?delay, "retrying a store request");
                        sleep(delay).await;
                    }
                    None => return Err(error),
                },
                outcome => return outcome,
            }
        }
    }

    async fn run_batch_with<R, T, S, SleepFut, F, Fut>(
        &self,
        mut backoff: Backoff,
        mut sleep: S,
        requests: Vec<R>,
        mut send: F,
    ) -> Result<Batch<T, R>>
    where
        R: Clone,
        S: FnMut(Duration) -> SleepFut,
        SleepFut: Future<Output = ()>,
        F: FnMut(Vec<R>) -> Fut,
        Fut: Future<Output = Result<(T, Vec<R>)>>,
    {
        let mut outputs = Vec::new();
        let mut pending = requests;
        while !pending.is_empty() {
            match send(pending.clone()).await {
                Ok((output, left)) => {
                    outputs.push(output);
                    pending = left;
                    if pending.is_empty() {
                        break;
                    }
                }
                Err(error) if error.is_retryable() => {
                    if backoff.exhausted() {
                        return Err(error);
                    }
                }
                Err(error) => return Err(error),
            }
            match backoff.next_delay() {
                Some(delay) => {
                    tracing::debug!(
                        left = pending.len(),
                        ?delay,
                        "retrying unprocessed requests"
                    );
                    sleep(delay).await;
                }
                None => break,
            }
        }
        Ok(Batch {
            outputs,
            unprocessed: pending,
        })
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
}

/// The waits of one retried request.
struct Backoff {
    policy: Retry,
    jitter: Jitter,
    retries: u32,
}

impl Backoff {
    fn exhausted(&self) -> bool {
        self.retries + 1 >= self.policy.max_attempts
    }

    /// The wait before the next attempt, or `None` when none is left.
    fn next_delay(&mut self) -> Option<Duration> {
        if self.exhausted() {
            return None;
        }
        let delay = self.policy.delay(self.retries, self.jitter.sample());
        self.retries += 1;
        Some(delay)
    }
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
    use std::cell::{Cell, RefCell};
    use std::future::ready;

    use super::*;
    use crate::StoreError;

    fn policy() -> Retry {
        Retry {
            max_attempts: 5,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(50),
        }
    }

    fn block_on<T>(future: impl Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a current-thread runtime")
            .block_on(future)
    }

    /// Runs `attempt` with a seeded jitter and a sleep that only records.
    fn drive<T, Fut: Future<Output = Result<T>>>(
        policy: Retry,
        attempt: impl FnMut() -> Fut,
    ) -> (Result<T>, Vec<Duration>) {
        let slept = RefCell::new(Vec::new());
        let outcome = block_on(policy.run_with(
            policy.backoff(Jitter(42)),
            |d| {
                slept.borrow_mut().push(d);
                ready(())
            },
            attempt,
        ));
        (outcome, slept.into_inner())
    }

    /// Runs a batch with a seeded jitter and a sleep that only records.
    fn drive_batch<R: Clone, T, Fut: Future<Output = Result<(T, Vec<R>)>>>(
        policy: Retry,
        requests: Vec<R>,
        send: impl FnMut(Vec<R>) -> Fut,
    ) -> (Result<Batch<T, R>>, Vec<Duration>) {
        let slept = RefCell::new(Vec::new());
        let outcome = block_on(policy.run_batch_with(
            policy.backoff(Jitter(42)),
            |d| {
                slept.borrow_mut().push(d);
                ready(())
            },
            requests,
            send,
        ));
        (outcome, slept.into_inner())
    }

    #[test]
    fn gives_up_after_max_attempts_with_the_last_error() {
        let calls = Cell::new(0);
        let (outcome, slept) = drive(policy(), || {
            calls.set(calls.get() + 1);
            ready(Err::<(), _>(StoreError::Throttled(format!(
                "call {}",
                calls.get()
            ))))
        });
        assert_eq!(outcome, Err(StoreError::Throttled("call 5".into())));
        assert_eq!(slept.len(), 4, "one wait between each two attempts");
    }

    #[test]
    fn waits_stay_within_the_doubling_ceiling_and_the_cap() {
        let policy = Retry {
            max_attempts: 12,
            ..policy()
        };
        let (_, slept) = drive(policy, || {
            ready(Err::<(), _>(StoreError::Unavailable("disk".into())))
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
        let fail = || ready(Err::<(), _>(StoreError::TransactionConflict("x".into())));
        assert_eq!(drive(policy(), fail).1, drive(policy(), fail).1);
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
        let calls = Cell::new(0);
        let (outcome, slept) = drive(policy(), || {
            calls.set(calls.get() + 1);
            ready(Err::<(), _>(StoreError::ConditionalCheckFailed))
        });
        assert_eq!(outcome, Err(StoreError::ConditionalCheckFailed));
        assert_eq!(calls.get(), 1);
        assert!(slept.is_empty());
    }

    #[test]
    fn returns_the_first_success() {
        let calls = Cell::new(0);
        let (outcome, slept) = drive(policy(), || {
            calls.set(calls.get() + 1);
            ready(if calls.get() < 3 {
                Err(StoreError::Unavailable("busy".into()))
            } else {
                Ok(calls.get())
            })
        });
        assert_eq!(outcome, Ok(3));
        assert_eq!(slept.len(), 2);
    }

    #[test]
    fn the_public_run_sleeps_on_tokio_and_succeeds() {
        let policy = Retry {
            base_delay: Duration::from_micros(10),
            max_delay: Duration::from_micros(100),
            ..policy()
        };
        let calls = Cell::new(0);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a current-thread runtime");
        let outcome = runtime.block_on(policy.run(|| {
            calls.set(calls.get() + 1);
            ready(match calls.get() {
                1 => Err(StoreError::Throttled("slow down".into())),
                n => Ok(n),
            })
        }));
        assert_eq!(outcome, Ok(2));
    }

    #[test]
    fn a_batch_resends_only_what_was_left_unprocessed() {
        let sent = RefCell::new(Vec::new());
        let (outcome, slept) = drive_batch(policy(), (1..=5).collect(), |pending: Vec<u32>| {
            sent.borrow_mut().push(pending.clone());
            // The store processes one request per round.
            ready(Ok((pending[0], pending[1..].to_vec())))
        });
        assert_eq!(
            outcome,
            Ok(Batch {
                outputs: vec![1, 2, 3, 4, 5],
                unprocessed: Vec::new()
            })
        );
        assert_eq!(
            sent.into_inner(),
            vec![
                vec![1, 2, 3, 4, 5],
                vec![2, 3, 4, 5],
                vec![3, 4, 5],
                vec![4, 5],
                vec![5]
            ]
        );
        assert_eq!(slept.len(), 4, "a backoff before each resend");
    }

    #[test]
    fn a_batch_that_never_drains_returns_what_is_left() {
        let rounds = Cell::new(0);
        let (outcome, slept) = drive_batch(policy(), vec!['a', 'b'], |pending: Vec<char>| {
            rounds.set(rounds.get() + 1);
            ready(Ok(((), pending)))
        });
        assert_eq!(
            outcome,
            Ok(Batch {
                outputs: vec![(); 5],
                unprocessed: vec!['a', 'b']
            })
        );
        assert_eq!(rounds.get(), 5);
        assert_eq!(slept.len(), 4);
    }

    #[test]
    fn a_failed_round_is_retried_with_the_same_requests() {
        let sent = RefCell::new(Vec::new());
        let (outcome, _) = drive_batch(policy(), vec![1, 2, 3], |pending: Vec<i32>| {
            sent.borrow_mut().push(pending.clone());
            ready(match sent.borrow().len() {
                1 => Ok(((), pending[1..].to_vec())),
                2 => Err(StoreError::Unavailable("network".into())),
                _ => Ok(((), Vec::new())),
            })
        });
        assert_eq!(
            outcome,
            Ok(Batch {
                outputs: vec![(), ()],
                unprocessed: Vec::new()
            })
        );
        assert_eq!(
            sent.into_inner(),
            vec![vec![1, 2, 3], vec![2, 3], vec![2, 3]]
        );
    }

    #[test]
    fn a_batch_stops_on_an_error_that_is_not_retryable() {
        let rounds = Cell::new(0);
        let (outcome, slept) = drive_batch(policy(), vec![1], |_: Vec<i32>| {
            rounds.set(rounds.get() + 1);
            ready(Err::<((), Vec<i32>), _>(StoreError::validation("bad item")))
        });
        assert_eq!(outcome, Err(StoreError::validation("bad item")));
        assert_eq!(rounds.get(), 1);
        assert!(slept.is_empty());
    }

    #[test]
    fn a_batch_whose_last_round_fails_reports_the_failure() {
        let rounds = Cell::new(0);
        let (outcome, _) = drive_batch(policy(), vec![1, 2], |pending: Vec<i32>| {
            rounds.set(rounds.get() + 1);
            ready(match rounds.get() {
                1 => Ok(((), pending[1..].to_vec())),
                _ => Err(StoreError::Unavailable("gone".into())),
            })
        });
        assert_eq!(outcome, Err(StoreError::Unavailable("gone".into())));
        assert_eq!(rounds.get(), 5);
    }
}
