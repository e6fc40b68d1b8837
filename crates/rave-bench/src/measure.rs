//! Timing: every figure is a distribution of single-call latencies,
//! reported by its median (and tail where it matters).

use std::time::{Duration, Instant};

/// Latencies of repeated calls.
#[derive(Debug, Clone)]
pub struct Latencies(Vec<Duration>);

impl Latencies {
    /// Times `iterations` calls of `call` after `warmup` untimed ones.
    pub fn sample<T, E>(
        warmup: usize,
        iterations: usize,
        mut call: impl FnMut() -> Result<T, E>,
    ) -> Result<Latencies, E> {
        for _ in 0..warmup {
            std::hint::black_box(call()?);
        }
        let mut times = Vec::with_capacity(iterations);
        for _ in 0..iterations.max(1) {
            let started = Instant::now();
            std::hint::black_box(call()?);
            times.push(started.elapsed());
        }
        Ok(Latencies::of(times))
    }

    /// Latencies timed elsewhere; at least one.
    pub fn of(mut times: Vec<Duration>) -> Latencies {
        if times.is_empty() {
            times.push(Duration::ZERO);
        }
        times.sort_unstable();
        Latencies(times)
    }

    /// The latencies, fastest first.
    pub fn samples(&self) -> impl Iterator<Item = Duration> + '_ {
        self.0.iter().copied()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn quantile(&self, q: f64) -> Duration {
        let index = ((self.0.len() as f64 - 1.0) * q).round() as usize;
        self.0[index.min(self.0.len() - 1)]
    }

    pub fn p50(&self) -> Duration {
        self.quantile(0.5)
    }

    pub fn p99(&self) -> Duration {
        self.quantile(0.99)
    }
}

/// How many rounds B2 alternates its two pages over.
pub const DEEP_ROUNDS: usize = 3;

/// B2's two pages of one listing, page 1 (`page(false)`) and a deep one
/// (`page(true)`), timed alternately in [`DEEP_ROUNDS`] rounds of a third
/// of `iterations` calls each, so that whatever drifts during a run (the
/// page cache, the allocator, the other core) weighs on both alike: each
/// page's latencies over all rounds, and each round's ratio of the two
/// medians (deep ÷ first).
pub fn deep_against_first<T, E>(
    iterations: usize,
    mut page: impl FnMut(bool) -> Result<T, E>,
) -> Result<(Latencies, Latencies, Rounds), E> {
    let calls = (iterations / DEEP_ROUNDS).max(1);
    let (mut first, mut deep, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..DEEP_ROUNDS {
        let round_first = Latencies::sample(calls / 10, calls, || page(false))?;
        let round_deep = Latencies::sample(calls / 10, calls, || page(true))?;
        ratios.push(round_deep.p50().as_secs_f64() / round_first.p50().as_secs_f64().max(1e-12));
        first.extend(round_first.samples());
        deep.extend(round_deep.samples());
    }
    Ok((
        Latencies::of(first),
        Latencies::of(deep),
        Rounds::of(ratios),
    ))
}

/// A B2 cell: the median round's ratio, the spread of the rounds and the
/// two pages' medians.
pub fn deep_cell(first: &Latencies, deep: &Latencies, ratios: &Rounds) -> String {
    format!(
        "{:.2} ({}; {} → {})",
        ratios.median(),
        ratios.spread(),
        show(first.p50()),
        show(deep.p50())
    )
}

/// How many rounds the HTML and CPU rows alternate their routes over.
pub const HTTP_ROUNDS: usize = 3;

/// A figure taken once a round (at least one): the median round, the
/// highest, and the spread.
pub struct Rounds(Vec<f64>);

impl Rounds {
    pub fn of(mut values: Vec<f64>) -> Rounds {
        assert!(!values.is_empty(), "a figure needs at least one round");
        values.sort_by(f64::total_cmp);
        Rounds(values)
    }

    pub fn median(&self) -> f64 {
        self.0[self.0.len() / 2]
    }

    pub fn highest(&self) -> f64 {
        self.0[self.0.len() - 1]
    }

    /// `rounds 0.88–0.93`, for a table cell.
    pub fn spread(&self) -> String {
        format!("rounds {:.2}–{:.2}", self.0[0], self.highest())
    }
}

/// A latency for a table cell: µs below 10 ms, ms above.
pub fn show(d: Duration) -> String {
    let micros = d.as_secs_f64() * 1e6;
    if micros < 10_000.0 {
        format!("{micros:.1} µs")
    } else {
        format!("{:.1} ms", micros / 1000.0)
    }
}

/// A rate for a table cell.
pub fn per_second(count: f64, elapsed: Duration) -> f64 {
    count / elapsed.as_secs_f64().max(1e-9)
}

/// `1234567.0` → `1.23 M`, `12345.0` → `12.3 k`.
pub fn si(value: f64) -> String {
    if value >= 1e6 {
        format!("{:.2} M", value / 1e6)
    } else if value >= 1e3 {
        format!("{:.1} k", value / 1e3)
    } else {
        format!("{value:.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_pages_alternate_with_first_pages_in_rounds() {
        let mut calls = Vec::new();
        let (first, deep, ratios) = deep_against_first::<_, ()>(30, |deep| {
            calls.push(deep);
            Ok(())
        })
        .expect("timed");
        // Three rounds of one warm-up and ten timed calls of each page.
        assert_eq!(calls.len(), 3 * 2 * 11);
        assert!(
            calls
                .chunks(11)
                .enumerate()
                .all(|(i, run)| run.iter().all(|d| *d == (i % 2 == 1)))
        );
        assert_eq!(
            (first.len(), deep.len(), ratios.0.len()),
            (30, 30, DEEP_ROUNDS)
        );
    }

    #[test]
    fn rounds_report_their_median_highest_and_spread() {
        let rounds = Rounds::of(vec![1.3, 0.9, 1.1]);
        assert_eq!(rounds.median(), 1.1);
        assert_eq!(rounds.highest(), 1.3);
        assert_eq!(rounds.spread(), "rounds 0.90–1.30");
        assert_eq!(Rounds::of(vec![2.0]).spread(), "rounds 2.00–2.00");
    }

    #[test]
    fn quantiles_pick_from_the_sorted_sample() {
        let mut n = 0u64;
        let l = Latencies::sample::<_, ()>(0, 101, || {
            n += 1;
            std::thread::sleep(Duration::from_micros(if n == 50 { 3_000 } else { 10 }));
            Ok(())
        })
        .unwrap();
        assert!(l.p50() < Duration::from_millis(2));
        assert!(l.quantile(1.0) >= Duration::from_millis(3));
        assert_eq!(show(Duration::from_micros(33)), "33.0 µs");
        assert_eq!(show(Duration::from_millis(12)), "12.0 ms");
        assert_eq!(si(23_600.0), "23.6 k");
    }
}
