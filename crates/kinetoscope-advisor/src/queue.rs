//! The rules, the summary and the FLOPs estimate of one trace as a queue of tasks that
//! the advisor's threads take in turn, so that neither waits long for the other at the
//! end (a fixed split left one rule or the summary running alone for tens of
//! milliseconds).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use crate::facts::Facts;
use crate::{flops, rules, summary, Config, Finding};

/// The rules, the summary and the FLOPs estimate of one trace as tasks that threads take
/// in turn ([`Queue::work`]), each result kept in its task's place.
pub(crate) struct Queue<'f, 't> {
    rules: Vec<&'static dyn rules::Rule>,
    facts: &'f Facts<'t>,
    config: &'f Config,
    /// The next task no thread has taken: the rules in order, then the summary, then
    /// the FLOPs estimate.
    next: AtomicUsize,
    /// Each rule's findings, once checked.
    findings: Vec<OnceLock<Vec<Finding>>>,
    summary: OnceLock<summary::Summary>,
    flops: OnceLock<flops::FlopsSummary>,
}

impl<'f, 't> Queue<'f, 't> {
    pub(crate) fn new(
        rules: Vec<&'static dyn rules::Rule>,
        facts: &'f Facts<'t>,
        config: &'f Config,
    ) -> Self {
        Self {
            findings: rules.iter().map(|_| Default::default()).collect(),
            rules,
            facts,
            config,
            next: Default::default(),
            summary: Default::default(),
            flops: Default::default(),
        }
    }

    /// Take tasks until none is left.
    pub(crate) fn work(&self) {
        let n = self.rules.len();
        loop {
            let k = self.next.fetch_add(1, Ordering::Relaxed);
            if k < n {
                let _ = self.findings[k].set(self.rules[k].check(self.facts, self.config));
            } else if k == n {
                let _ = self.summary.set(summary::summarize(self.facts));
            } else if k == n + 1 {
                let _ = self
                    .flops
                    .set(flops::estimate(self.facts, self.config.peak_tflops));
            } else {
                return;
            }
        }
    }

    /// The findings in rule order, the summary and the FLOPs estimate, once every task
    /// is done.
    pub(crate) fn finish(self) -> (Vec<Finding>, summary::Summary, flops::FlopsSummary) {
        let findings = self
            .findings
            .into_iter()
            .flat_map(|f| f.into_inner().unwrap_or_default())
            .collect();
        // Both threads took tasks until none was left (a panic in either is resumed
        // before this), so each is done; one not done would be computed here.
        let summary = self
            .summary
            .into_inner()
            .unwrap_or_else(|| summary::summarize(self.facts));
        let flops = self
            .flops
            .into_inner()
            .unwrap_or_else(|| flops::estimate(self.facts, self.config.peak_tflops));
        (findings, summary, flops)
    }
}
