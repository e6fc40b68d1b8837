//! The table the harness prints: one row per figure, rave beside its peers,
//! the ratio, and the BENCH.md target with whether it was met.

use std::fmt::Write;

/// Whether a row's target was met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Met,
    Missed,
    /// The row has no target (context, or a peer's figure).
    None,
}

#[derive(Debug, Clone)]
pub struct Row {
    pub scenario: &'static str,
    pub what: String,
    pub rave: String,
    pub peers: String,
    pub ratio: String,
    pub target: String,
    pub verdict: Verdict,
}

impl Row {
    pub fn new(scenario: &'static str, what: impl Into<String>, rave: impl Into<String>) -> Row {
        Row {
            scenario,
            what: what.into(),
            rave: rave.into(),
            peers: String::new(),
            ratio: String::new(),
            target: String::new(),
            verdict: Verdict::None,
        }
    }

    pub fn peers(mut self, peers: impl Into<String>) -> Row {
        self.peers = peers.into();
        self
    }

    pub fn ratio(mut self, ratio: f64) -> Row {
        self.ratio = format!("{ratio:.2}");
        self
    }

    pub fn target(mut self, target: impl Into<String>, met: bool) -> Row {
        self.target = target.into();
        self.verdict = if met { Verdict::Met } else { Verdict::Missed };
        self
    }
}

/// The rows as a Markdown table.
pub fn markdown(rows: &[Row]) -> String {
    let mut out = String::from(
        "| id | what | rave | peers (same data, same run) | ratio | target | |\n|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let verdict = match r.verdict {
            Verdict::Met => "met",
            Verdict::Missed => "**missed**",
            Verdict::None => "",
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            r.scenario, r.what, r.rave, r.peers, r.ratio, r.target, verdict
        );
    }
    out
}
