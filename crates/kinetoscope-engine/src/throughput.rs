//! Throughput: items (samples or tokens) per second at a run's median step, from the
//! items per step the user gives (`--batch-size`, `--tokens-per-step`) or, without them,
//! from the input shapes (`kinetoscope_analysis::diff::BatchFromShapes`: tokens when the
//! input is token indices, else samples; summed over the ranks of a rank folder; never
//! for a run folder, whose phases process different things). The run's steps are its
//! traces' steps combined as `diff` combines them (the slowest rank per step, a run
//! folder's phases added up).

use kinetoscope_analysis::diff::{BatchFromShapes, Side, TraceProfile};
use kinetoscope_analysis::stats::DurationStats;
use serde::{Deserialize, Serialize};

use crate::diff::document::{ItemsSource, ThroughputUnit};
use crate::document::ReportDocument;
use kinetoscope_analysis::diff::Combine;

/// Throughput of one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunThroughput {
    /// What is counted.
    pub unit: ThroughputUnit,
    /// Items per step.
    pub per_step: f64,
    /// Where they come from.
    #[serde(default)]
    pub source: ItemsSource,
    /// The run's median step, ns (`None` without steps).
    pub median_step_ns: Option<f64>,
    /// Items per second at that step.
    pub items_per_s: Option<f64>,
}

impl ReportDocument {
    /// The document with its throughput for `per_step` items of `unit` per step.
    pub fn with_throughput(self, unit: ThroughputUnit, per_step: f64) -> Self {
        self.with_items(unit, per_step, ItemsSource::Given)
    }

    /// The items per step the input shapes show: every trace's batch known, tokens when
    /// every trace has them, else samples; summed over ranks; `None` for a run folder.
    pub fn items_from_shapes(&self) -> Option<(ThroughputUnit, f64, ItemsSource)> {
        if crate::diff::combine_of(&self.layout) == Combine::Sequence || self.traces.is_empty() {
            return None;
        }
        let batches: Vec<_> = self
            .traces
            .iter()
            .map(|t| t.profile.as_ref()?.batch.as_ref())
            .collect::<Option<_>>()?;
        let sum = |f: fn(&BatchFromShapes) -> Option<u64>| {
            batches.iter().map(|b| f(b)).sum::<Option<u64>>()
        };
        let (unit, n) = match (sum(|b| b.tokens), sum(|b| b.samples)) {
            (Some(t), _) => (ThroughputUnit::Tokens, t),
            (None, Some(s)) => (ThroughputUnit::Samples, s),
            _ => return None,
        };
        let source = ItemsSource::Shapes {
            op: batches[0].op.clone(),
            dims: batches[0].dims.clone(),
        };
        Some((unit, n as f64, source))
    }

    /// The document with its throughput for `per_step` items of `unit` per step, from
    /// `source`.
    pub fn with_items(mut self, unit: ThroughputUnit, per_step: f64, source: ItemsSource) -> Self {
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
            source,
            median_step_ns,
            items_per_s: median_step_ns
                .filter(|m| *m > 0.0)
                .map(|m| per_step / (m / 1e9)),
        });
        self
    }
}
