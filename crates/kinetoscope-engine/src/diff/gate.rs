//! The CI gate of `kinetoscope diff`: `--fail-if EXPR` (repeatable), e.g.
//! `step_time.median > +5%`, `memory.peak > +1GiB`, `kernels.launches > +10%`,
//! `findings.new >= warning`. Grammar and semantics: `docs/diff.md`.
//!
//! `METRIC OP VALUE`, where `OP` is `>`, `>=`, `<` or `<=` and `VALUE` is a change:
//! relative (`+5%`, of the base value) or absolute in the metric's unit (`+2ms`,
//! `+1GiB`, `+10`, `-0.05` for shares), or for findings a severity (`warning`) or a
//! count. Wall-time metrics trip only on a significant change (the step-time interval,
//! or the breakdown part's own test), so run-to-run noise does not fail CI;
//! deterministic counts trip on any change past the threshold.

use kinetoscope_advisor::Severity;
use kinetoscope_analysis::diff::steps::{StepsDiff, Verdict};
use kinetoscope_analysis::diff::uniform::MachineVerdict;
use kinetoscope_analysis::diff::Change;
use serde::{Deserialize, Serialize};

use super::document::{DiffDocument, FindingDirection};

/// What a metric measures (which units its threshold may have).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateUnit {
    /// Nanoseconds (per step).
    Ns,
    /// Bytes (or bytes per step).
    Bytes,
    /// A count per step.
    Count,
    /// A share (0–1).
    Share,
    /// Items per second.
    PerSecond,
    /// Findings.
    Findings,
}

/// A comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Op {
    /// `>`
    #[serde(rename = ">")]
    Gt,
    /// `>=`
    #[serde(rename = ">=")]
    Ge,
    /// `<`
    #[serde(rename = "<")]
    Lt,
    /// `<=`
    #[serde(rename = "<=")]
    Le,
}

impl Op {
    fn holds(self, a: f64, b: f64) -> bool {
        match self {
            Op::Gt => a > b,
            Op::Ge => a >= b,
            Op::Lt => a < b,
            Op::Le => a <= b,
        }
    }
}

/// The value an expression compares with.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Threshold {
    /// A change relative to the base value (0.05 = +5 %).
    Relative(f64),
    /// A change in the metric's unit (ns, bytes, count, share, items/s), or a count of
    /// findings.
    Absolute(f64),
    /// Findings at least this severe.
    Severity(Severity),
}

/// One `--fail-if` expression, parsed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateExpr {
    /// The text as given.
    pub text: String,
    /// The metric (`step_time.median`).
    pub metric: String,
    /// The comparison.
    pub op: Op,
    /// The value.
    pub threshold: Threshold,
}

/// Whether a metric's change is timing (noisy) or deterministic.
fn unit_of(metric: &str) -> Option<GateUnit> {
    use kinetoscope_analysis::overview::Parts;
    let phase = |p: &str| ["dataloader", "forward", "backward", "optimizer"].contains(&p);
    Some(match metric {
        "step_time.median" | "step_time.mean" | "step_time.p90" | "step_time.normalized" => {
            GateUnit::Ns
        }
        "throughput" => GateUnit::PerSecond,
        "memory.peak" | "memory.reserved" | "memory.growth" => GateUnit::Bytes,
        "memcpy.bytes" => GateUnit::Bytes,
        "gpu.utilization" | "mfu" => GateUnit::Share,
        "findings.new" | "findings.worse" => GateUnit::Findings,
        m if COUNT_METRICS.contains(&m) => GateUnit::Count,
        m => match m.split_once('.') {
            Some(("breakdown", p)) if Parts::<f64>::KEYS.contains(&p) => GateUnit::Ns,
            Some(("phases", p)) if phase(p) => GateUnit::Ns,
            _ => return None,
        },
    })
}

/// Deterministic counts per step, by gate metric (the document's `counts`).
pub const COUNT_METRICS: [&str; 8] = [
    "kernels.launches",
    "sync.calls",
    "memcpy.calls",
    "memcpy.bytes",
    "memset.calls",
    "allocator.calls",
    "allocations",
    "ops.calls",
];

/// Every metric name, for error messages and `--help`.
pub const METRICS: &str = "step_time.median, step_time.mean, step_time.p90, \
step_time.normalized, throughput, breakdown.<kernel|memcpy|memset|communication|runtime|\
dataloader|cpu_exec|other>, phases.<dataloader|forward|backward|optimizer>, memory.peak, \
memory.reserved, memory.growth, kernels.launches, sync.calls, memcpy.calls, memcpy.bytes, \
memset.calls, allocator.calls, allocations, ops.calls, gpu.utilization, mfu, findings.new, \
findings.worse";

impl std::str::FromStr for GateExpr {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let t = text.trim();
        let at = t
            .find(['<', '>'])
            .ok_or_else(|| format!("{text:?}: expected METRIC OP VALUE, e.g. `step_time.median > +5%` (OP: >, >=, <, <=)"))?;
        let metric = t[..at].trim().to_owned();
        let rest = &t[at..];
        let (op, value) = match rest.as_bytes() {
            [b'>', b'=', ..] => (Op::Ge, &rest[2..]),
            [b'<', b'=', ..] => (Op::Le, &rest[2..]),
            [b'>', ..] => (Op::Gt, &rest[1..]),
            _ => (Op::Lt, &rest[1..]),
        };
        let unit = unit_of(&metric)
            .ok_or_else(|| format!("{text:?}: unknown metric {metric:?}; metrics: {METRICS}"))?;
        let threshold = parse_value(value.trim(), unit).map_err(|e| format!("{text:?}: {e}"))?;
        if matches!(threshold, Threshold::Severity(_)) && matches!(op, Op::Lt | Op::Le) {
            return Err(format!(
                "{text:?}: a severity threshold takes > or >= (a finding at least that severe)"
            ));
        }
        Ok(Self {
            text: t.to_owned(),
            metric,
            op,
            threshold,
        })
    }
}

/// Parse a threshold for a metric measured in `unit`.
fn parse_value(v: &str, unit: GateUnit) -> Result<Threshold, String> {
    if unit == GateUnit::Findings {
        if let Ok(s) = v.parse::<Severity>() {
            return Ok(Threshold::Severity(s));
        }
        return v
            .parse::<u64>()
            .map(|n| Threshold::Absolute(n as f64))
            .map_err(|_| {
                format!("{v:?} is neither a severity (info, warning, critical) nor a count")
            });
    }
    let split = v
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '+' | '-' | '.' | 'e' | 'E')))
        .unwrap_or(v.len());
    let (num, suffix) = v.split_at(split);
    let n: f64 = num
        .parse()
        .ok()
        .filter(|n: &f64| n.is_finite())
        .ok_or_else(|| {
            format!("{v:?}: expected a number with an optional unit, e.g. +5% or +2ms")
        })?;
    let suffix = suffix.trim();
    if suffix == "%" {
        return Ok(Threshold::Relative(n / 100.0));
    }
    let scale = match (unit, suffix) {
        (_, "") => 1.0,
        (GateUnit::Ns, "ns") => 1.0,
        (GateUnit::Ns, "us" | "µs") => 1e3,
        (GateUnit::Ns, "ms") => 1e6,
        (GateUnit::Ns, "s") => 1e9,
        (GateUnit::Bytes, "B") => 1.0,
        (GateUnit::Bytes, "KB") => 1e3,
        (GateUnit::Bytes, "MB") => 1e6,
        (GateUnit::Bytes, "GB") => 1e9,
        (GateUnit::Bytes, "KiB") => 1024.0,
        (GateUnit::Bytes, "MiB") => 1024.0 * 1024.0,
        (GateUnit::Bytes, "GiB") => 1024.0 * 1024.0 * 1024.0,
        _ => {
            let allowed = match unit {
                GateUnit::Ns => "ns, us, ms, s or %",
                GateUnit::Bytes => "B, KB, MB, GB, KiB, MiB, GiB or %",
                _ => "no unit (the metric's own) or %",
            };
            return Err(format!("unknown unit {suffix:?} here; use {allowed}"));
        }
    };
    Ok(Threshold::Absolute(n * scale))
}

/// How a check came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateOutcome {
    /// The change does not cross the threshold.
    Passed,
    /// The change crosses the threshold (and, for wall time, is significant).
    Tripped,
    /// A wall-time change crosses the threshold but is within the noise between runs.
    WithinNoise,
    /// The metric is not in the data (e.g. memory without `profile_memory`): counts as
    /// failed, since the gate cannot vouch for it.
    Unavailable,
}

/// A row behind a count's change.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EvidenceRow {
    /// The operator or kernel.
    pub key: String,
    /// Per step, both runs.
    #[serde(flatten)]
    pub value: Change<f64>,
}

/// Why a check came out as it did.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum GateEvidence {
    /// Nothing beyond the values.
    None,
    /// Wall time: the interval of the change and whether the whole run changed
    /// uniformly (the machine rather than the code).
    Interval {
        /// Lower end of the 95 % interval (the metric's unit).
        ci_low: Option<f64>,
        /// Upper end.
        ci_high: Option<f64>,
        /// Whether the change is significant.
        significant: bool,
        /// The uniform-change verdict.
        machine: MachineVerdict,
        /// The host's uniform factor (1 when not uniform).
        host_factor: f64,
        /// The device's uniform factor (1 when not uniform).
        device_factor: f64,
    },
    /// The findings that count.
    Findings {
        /// Their subject keys and titles.
        findings: Vec<(String, String)>,
    },
    /// The operators or kernels whose calls changed most.
    Rows {
        /// Largest change first.
        rows: Vec<EvidenceRow>,
    },
}

/// One evaluated expression.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GateCheck {
    /// The expression as given.
    pub expr: String,
    /// The metric.
    pub metric: String,
    /// Its unit.
    pub unit: GateUnit,
    /// The base value.
    pub base: Option<f64>,
    /// The new value.
    pub new: Option<f64>,
    /// `new − base`.
    pub delta: Option<f64>,
    /// `delta / base` (infinite when base is 0 and delta is not).
    pub relative: Option<f64>,
    /// The outcome.
    pub outcome: GateOutcome,
    /// The evidence.
    pub evidence: GateEvidence,
}

impl GateCheck {
    /// Whether this check fails the gate.
    pub fn failed(&self) -> bool {
        matches!(
            self.outcome,
            GateOutcome::Tripped | GateOutcome::Unavailable
        )
    }
}

/// Every check, and the ones that failed.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct GateResult {
    /// Whether every check passed (true without any).
    pub passed: bool,
    /// Every expression, in the order given.
    pub checks: Vec<GateCheck>,
    /// The checks that failed.
    pub failed: Vec<GateCheck>,
}

/// Evaluate `exprs` on a finished comparison.
pub fn evaluate(doc: &DiffDocument, exprs: &[GateExpr]) -> GateResult {
    let checks: Vec<GateCheck> = exprs.iter().map(|e| check(doc, e)).collect();
    let failed: Vec<GateCheck> = checks.iter().filter(|c| c.failed()).cloned().collect();
    GateResult {
        passed: failed.is_empty(),
        checks,
        failed,
    }
}

/// The values of a metric: the change, and whether it is significant (`None`:
/// deterministic), with its evidence.
struct Values {
    value: Change<f64>,
    significant: Option<bool>,
    evidence: GateEvidence,
}

fn check(doc: &DiffDocument, e: &GateExpr) -> GateCheck {
    let unit = unit_of(&e.metric).unwrap_or(GateUnit::Count);
    let v = if unit == GateUnit::Findings {
        findings_values(doc, e)
    } else {
        metric_values(doc, &e.metric)
    };
    let relative = match (v.value.base, v.value.delta) {
        (Some(b), Some(d)) if b != 0.0 => Some(d / b.abs()),
        (Some(_), Some(d)) if d != 0.0 => Some(d.signum() * f64::INFINITY),
        (Some(_), Some(_)) => Some(0.0),
        _ => None,
    };
    let crossed = match e.threshold {
        Threshold::Relative(t) => relative.map(|r| e.op.holds(r, t)),
        Threshold::Absolute(t) if unit == GateUnit::Findings => {
            v.value.new.map(|n| e.op.holds(n, t))
        }
        Threshold::Absolute(t) => v.value.delta.map(|d| e.op.holds(d, t)),
        Threshold::Severity(_) => v.value.new.map(|n| n >= 1.0),
    };
    let outcome = match (crossed, v.significant) {
        (None, _) => GateOutcome::Unavailable,
        (Some(false), _) => GateOutcome::Passed,
        (Some(true), Some(false)) => GateOutcome::WithinNoise,
        (Some(true), _) => GateOutcome::Tripped,
    };
    GateCheck {
        expr: e.text.clone(),
        metric: e.metric.clone(),
        unit,
        base: v.value.base,
        new: v.value.new,
        delta: v.value.delta,
        relative,
        outcome,
        evidence: v.evidence,
    }
}

/// New (or worse) findings at the threshold's severity, or all of them for a count.
fn findings_values(doc: &DiffDocument, e: &GateExpr) -> Values {
    let counts = |sev: Severity| match e.threshold {
        Threshold::Severity(s) if e.op == Op::Gt => sev > s,
        Threshold::Severity(s) => sev >= s,
        _ => true,
    };
    let list: Vec<(String, String)> = if e.metric == "findings.new" {
        doc.findings
            .new
            .iter()
            .filter(|f| counts(f.severity))
            .map(|f| (f.subject.clone(), f.title.clone()))
            .collect()
    } else {
        doc.findings
            .changed
            .iter()
            .filter(|c| c.direction == FindingDirection::Worse && counts(c.new_severity))
            .map(|c| (c.subject.clone(), c.title.clone()))
            .collect()
    };
    Values {
        value: Change::of(Some(0.0), Some(list.len() as f64)),
        significant: None,
        evidence: GateEvidence::Findings { findings: list },
    }
}

/// The interval evidence of a step-time comparison.
fn interval(doc: &DiffDocument, s: &StepsDiff) -> GateEvidence {
    GateEvidence::Interval {
        ci_low: s.ci_low_ns,
        ci_high: s.ci_high_ns,
        significant: s.verdict != Verdict::Unchanged,
        machine: doc.machine.change.verdict,
        host_factor: doc.machine.change.host.normalising(),
        device_factor: doc.machine.change.device.normalising(),
    }
}

/// The values of a non-findings metric.
fn metric_values(doc: &DiffDocument, metric: &str) -> Values {
    let plain = |value: Change<f64>| Values {
        value,
        significant: None,
        evidence: GateEvidence::None,
    };
    let steps = &doc.steps;
    let timed = |value: Change<f64>, s: &StepsDiff| Values {
        value,
        significant: Some(s.significant()),
        evidence: interval(doc, s),
    };
    match metric {
        "step_time.median" => timed(median_change(steps), steps),
        "step_time.normalized" => timed(
            median_change(&doc.machine.steps_normalized),
            &doc.machine.steps_normalized,
        ),
        "step_time.mean" => timed(
            Change::of(
                steps.base.as_ref().map(|s| s.mean_ns),
                steps.new.as_ref().map(|s| s.mean_ns),
            ),
            steps,
        ),
        "step_time.p90" => timed(
            Change::of(
                steps.base.as_ref().map(|s| s.p90_ns),
                steps.new.as_ref().map(|s| s.p90_ns),
            ),
            steps,
        ),
        "throughput" => match &doc.gpu.throughput {
            Some(t) => timed(t.value, steps),
            None => plain(Change::of(None, None)),
        },
        "memory.peak" => plain(max_over(&doc.memory.devices, |d| d.peak_bytes)),
        "memory.reserved" => plain(max_over(&doc.memory.devices, |d| d.reserved_bytes)),
        "memory.growth" => plain(doc.memory.growth_bytes_per_step),
        "gpu.utilization" => {
            let mean = |f: fn(&Change<f64>) -> Option<f64>| {
                let v: Vec<f64> = doc
                    .gpu
                    .devices
                    .iter()
                    .filter_map(|d| f(&d.utilization))
                    .collect();
                (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
            };
            plain(Change::of(mean(|c| c.base), mean(|c| c.new)))
        }
        "mfu" => plain(doc.gpu.mfu),
        m => {
            if let Some(c) = doc.counts.iter().find(|c| c.metric == m) {
                return Values {
                    value: c.value,
                    significant: None,
                    evidence: count_evidence(doc, m),
                };
            }
            let (section, part) = m.split_once('.').unwrap_or((m, ""));
            let rows = if section == "breakdown" {
                &doc.breakdown
            } else {
                &doc.phases
            };
            match rows.iter().find(|r| r.category == part) {
                Some(r) => {
                    let value = Change::of(r.base_ns.or(Some(0.0)), r.new_ns.or(Some(0.0)));
                    // Phases keep no per-step values: they count as significant when
                    // the step time changed significantly.
                    let significant = r.significant.unwrap_or(steps.significant());
                    Values {
                        value,
                        significant: Some(significant),
                        evidence: interval(doc, steps),
                    }
                }
                None => plain(Change::of(None, None)),
            }
        }
    }
}

/// The median step in both runs, with the Hodges–Lehmann change as delta.
fn median_change(s: &StepsDiff) -> Change<f64> {
    Change {
        base: s.base.as_ref().map(|b| b.median_ns),
        new: s.new.as_ref().map(|n| n.median_ns),
        delta: s.delta_median_ns,
    }
}

/// The largest value over devices on each side.
fn max_over<T>(devices: &[T], f: impl Fn(&T) -> Change<i64>) -> Change<f64> {
    let side = |g: fn(&Change<i64>) -> Option<i64>| {
        devices
            .iter()
            .filter_map(|d| g(&f(d)))
            .max()
            .map(|v| v as f64)
    };
    Change::of(side(|c| c.base), side(|c| c.new))
}

/// The operators or kernels whose calls per step changed most, for a count metric.
fn count_evidence(doc: &DiffDocument, metric: &str) -> GateEvidence {
    let rows = match metric {
        "kernels.launches" => &doc.kernels,
        "ops.calls" | "sync.calls" => &doc.ops,
        _ => return GateEvidence::None,
    };
    let sync = |name: &str| name == "aten::_local_scalar_dense" || name.contains("Synchronize");
    let mut picked: Vec<EvidenceRow> = rows
        .iter()
        .filter(|r| metric != "sync.calls" || sync(&r.name))
        .filter(|r| r.calls.base.unwrap_or(0.0) != r.calls.new.unwrap_or(0.0))
        .map(|r| EvidenceRow {
            key: r.key.clone(),
            value: Change::of(r.calls.base.or(Some(0.0)), r.calls.new.or(Some(0.0))),
        })
        .collect();
    picked.sort_by(|a, b| {
        let d = |r: &EvidenceRow| r.value.delta.unwrap_or(0.0).abs();
        d(b).total_cmp(&d(a)).then_with(|| a.key.cmp(&b.key))
    });
    picked.truncate(3);
    GateEvidence::Rows { rows: picked }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_issue_examples() {
        let e: GateExpr = "step_time.median > +5%".parse().unwrap();
        assert_eq!((e.op, e.threshold), (Op::Gt, Threshold::Relative(0.05)));
        let e: GateExpr = "memory.peak > +1GiB".parse().unwrap();
        assert_eq!(e.threshold, Threshold::Absolute(1024.0 * 1024.0 * 1024.0));
        let e: GateExpr = "kernels.launches>+10%".parse().unwrap();
        assert_eq!(e.metric, "kernels.launches");
        let e: GateExpr = "findings.new >= warning".parse().unwrap();
        assert_eq!(
            (e.op, e.threshold),
            (Op::Ge, Threshold::Severity(Severity::Warning))
        );
        let e: GateExpr = "breakdown.dataloader <= -2ms".parse().unwrap();
        assert_eq!((e.op, e.threshold), (Op::Le, Threshold::Absolute(-2e6)));
    }

    #[test]
    fn refuses_with_the_reason() {
        let err = |s: &str| s.parse::<GateExpr>().unwrap_err();
        assert!(err("step_time.median").contains("METRIC OP VALUE"));
        assert!(err("step_tme.median > 5%").contains("unknown metric"));
        assert!(err("memory.peak > +5ms").contains("B, KB"));
        assert!(err("step_time.median > fast").contains("expected a number"));
        assert!(err("findings.new < warning").contains("> or >="));
        assert!(err("findings.new >= severe").contains("severity"));
    }
}
