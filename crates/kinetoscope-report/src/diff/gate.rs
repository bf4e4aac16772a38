//! The gate's lines: each `--fail-if` expression with both values, the change and the
//! evidence.

use kinetoscope_analysis::diff::uniform::MachineVerdict;
use kinetoscope_engine::diff::gate::{GateCheck, GateEvidence, GateOutcome, GateResult, GateUnit};

use super::words::{signed_duration, signed_pct};
use crate::format::{bytes_f, duration, percent};

/// One line per check (and its evidence), then the verdict; nothing without checks.
pub fn gate_lines(g: &GateResult) -> Vec<String> {
    if g.checks.is_empty() {
        return Vec::new();
    }
    let mut lines = vec![String::new()];
    for c in &g.checks {
        let mark = match c.outcome {
            GateOutcome::Passed => "pass",
            GateOutcome::WithinNoise => "pass (within noise)",
            GateOutcome::Tripped => "FAIL",
            GateOutcome::Unavailable => "FAIL (not in the data)",
        };
        lines.push(format!(
            "gate {mark}: {}  base {} → new {}{}",
            c.expr,
            value(c, c.base),
            value(c, c.new),
            delta(c)
        ));
        lines.extend(evidence(c).into_iter().map(|e| format!("    {e}")));
    }
    lines.push(if g.passed {
        "gate passed".to_owned()
    } else {
        format!(
            "gate failed: {} of {} checks",
            g.failed.len(),
            g.checks.len()
        )
    });
    lines
}

fn value(c: &GateCheck, v: Option<f64>) -> String {
    let Some(v) = v else { return "—".to_owned() };
    match c.unit {
        GateUnit::Ns => duration(v),
        GateUnit::Bytes => bytes_f(v),
        GateUnit::Share => format!("{:.1} %", percent(v)),
        GateUnit::PerSecond => format!("{v:.1}/s"),
        GateUnit::Count => format!("{v:.1}"),
        GateUnit::Findings => format!("{v:.0}"),
    }
}

fn delta(c: &GateCheck) -> String {
    let Some(d) = c.delta else {
        return String::new();
    };
    if c.unit == GateUnit::Findings {
        return String::new();
    }
    let abs = match c.unit {
        GateUnit::Ns => signed_duration(d),
        _ => format!("{}{}", if d > 0.0 { "+" } else { "" }, value(c, Some(d))),
    };
    let rel = c
        .relative
        .map(|r| format!(", {}", signed_pct(r)))
        .unwrap_or_default();
    format!(" (Δ {abs}{rel})")
}

fn evidence(c: &GateCheck) -> Vec<String> {
    match &c.evidence {
        GateEvidence::None => Vec::new(),
        GateEvidence::Interval {
            ci_low,
            ci_high,
            significant,
            machine,
            host_factor,
            device_factor,
        } => {
            let mut v = Vec::new();
            if let (Some(lo), Some(hi)) = (ci_low, ci_high) {
                v.push(format!(
                    "step-time change 95 % CI [{}, {}]: {}",
                    signed_duration(*lo),
                    signed_duration(*hi),
                    if *significant {
                        "significant"
                    } else {
                        "within the noise between runs"
                    }
                ));
            }
            if *machine != MachineVerdict::NotUniform {
                v.push(format!(
                    "nearly everything changed by the same factor (host ×{host_factor:.3}, \
                     device ×{device_factor:.3}): the machine, not the code; gate \
                     step_time.normalized to compare the code alone"
                ));
            }
            v
        }
        GateEvidence::Findings { findings } => {
            findings.iter().map(|(s, t)| format!("{s}: {t}")).collect()
        }
        GateEvidence::Rows { rows } => rows
            .iter()
            .map(|r| {
                format!(
                    "{}: {:.1} → {:.1} per step",
                    r.key,
                    r.value.base.unwrap_or(0.0),
                    r.value.new.unwrap_or(0.0)
                )
            })
            .collect(),
    }
}
