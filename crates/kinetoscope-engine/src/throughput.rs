//! Throughput: items (samples or tokens) per second at a run's median step, from the
//! items per step the user gives (`--batch-size`, `--tokens-per-step`). The run's steps
//! are its traces' steps combined as `diff` combines them (the slowest rank per step, a
//! run folder's phases added up).

use kinetoscope_analysis::diff::{Side, TraceProfile};
use kinetoscope_analysis::stats::DurationStats;
use serde::{Deserialize, Serialize};

use crate::diff::document::ThroughputUnit;
use crate::document::ReportDocument;

/// Throughput of one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunThroughput {
    /// What is counted.
    pub unit: ThroughputUnit,
    /// Items per step, as given.
    pub per_step: f64,
    /// The run's median step, ns (`None` without steps).
    pub median_step_ns: Option<f64>,
    /// Items per second at that step.
    pub items_per_s: Option<f64>,
}

impl ReportDocument {
    /// The document with its throughput for `per_step` items of `unit` per step.
    pub fn with_throughput(mut self, unit: ThroughputUnit, per_step: f64) -> Self {
        let profiles: Vec<&TraceProfile> = self
            .traces
            .iter()
            .filter_map(|t| t.profile.as_ref())
            .collect();
        let side = Side {
            profiles: &profiles,
            combine: crate::diff::combine_of(&self.layout),
        };
        let steps: Vec<i64> = side.step_times().iter().map(|&t| t as i64).collect();
        let median_step_ns = DurationStats::of(&steps).map(|s| s.median_ns);
        self.throughput = Some(RunThroughput {
            unit,
            per_step,
            median_step_ns,
            items_per_s: median_step_ns
                .filter(|m| *m > 0.0)
                .map(|m| per_step / (m / 1e9)),
        });
        self
    }
}
