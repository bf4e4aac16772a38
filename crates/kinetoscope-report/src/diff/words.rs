//! Wording shared by the diff renderers: changes, verdicts, statuses.

use kinetoscope_analysis::diff::items::{ItemDelta, ItemStatus};
use kinetoscope_analysis::diff::steps::{StepsDiff, Verdict};
use kinetoscope_analysis::diff::uniform::{MachineVerdict, UniformFactor};
use kinetoscope_analysis::diff::Change;
use kinetoscope_analysis::overview::Parts;
use kinetoscope_engine::diff::document::{DiffNote, Machine};

use crate::format::{bytes_f, duration, percent};

/// A share as a percentage with one decimal.
pub(super) fn share(v: f64) -> String {
    format!("{:.1} %", percent(v))
}

/// A signed relative change (`+12.3 %`).
pub(super) fn signed_pct(r: f64) -> String {
    if r.is_infinite() {
        return if r > 0.0 {
            "new".to_owned()
        } else {
            "gone".to_owned()
        };
    }
    format!("{:+.1} %", percent(r))
}

/// A signed duration (`+1.20 ms`, `-812 ns`).
pub(super) fn signed_duration(ns: f64) -> String {
    let d = duration(ns);
    if ns > 0.0 {
        format!("+{d}")
    } else {
        d
    }
}

/// Signed bytes.
pub(super) fn signed_bytes(b: f64) -> String {
    let t = bytes_f(b);
    if b > 0.0 {
        format!("+{t}")
    } else {
        t
    }
}

/// A duration or nothing.
pub(super) fn opt_duration(ns: Option<f64>) -> String {
    ns.map(duration).unwrap_or_else(|| "—".to_owned())
}

/// `base → new` with a formatter; `—` for a missing side.
pub(super) fn change_pair(c: &Change<f64>, f: impl Fn(f64) -> String) -> String {
    let side = |v: Option<f64>| v.map(&f).unwrap_or_else(|| "—".to_owned());
    format!("{} → {}", side(c.base), side(c.new))
}

/// Calls per step, `12 → 64`.
pub(super) fn calls_pair(c: &Change<f64>) -> String {
    change_pair(c, |v| {
        if (v - v.round()).abs() < 0.05 {
            format!("{v:.0}")
        } else {
            format!("{v:.1}")
        }
    })
}

/// The display name of a breakdown key.
pub(super) fn part_name(key: &str) -> String {
    Parts::<f64>::KEYS
        .iter()
        .position(|k| *k == key)
        .map_or_else(|| key.to_owned(), |i| Parts::<f64>::NAMES[i].to_owned())
}

/// A row's status, with how it was matched when not by key.
pub(super) fn status(r: &ItemDelta) -> String {
    use kinetoscope_analysis::diff::items::MatchKind;
    match (r.status, r.match_kind) {
        (ItemStatus::Added, _) => "added".to_owned(),
        (ItemStatus::Removed, _) => "removed".to_owned(),
        (ItemStatus::Same, _) => "same".to_owned(),
        (ItemStatus::Changed, Some(MatchKind::Launcher)) => "renamed".to_owned(),
        (ItemStatus::Changed, Some(MatchKind::Name)) => "reshaped".to_owned(),
        (ItemStatus::Changed, _) if !r.same_calls() => "calls".to_owned(),
        (ItemStatus::Changed, _) => "time".to_owned(),
    }
}

/// `text` cut to `max` characters with an ellipsis.
pub(super) fn ellipsis(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut s: String = text.chars().take(max.saturating_sub(1)).collect();
    s.push('…');
    s
}

/// The last two elements of a launching call path.
pub(super) fn launcher_tail(path: &str) -> String {
    let parts: Vec<&str> = path.split(" > ").collect();
    let tail = parts[parts.len().saturating_sub(2)..].join(" > ");
    ellipsis(&tail, 60)
}

/// The step change and its verdict in one line.
pub(super) fn change_line(s: &StepsDiff) -> String {
    let (Some(d), Some(lo), Some(hi)) = (s.delta_median_ns, s.ci_low_ns, s.ci_high_ns) else {
        return "no steps to compare".to_owned();
    };
    let rel = s
        .relative
        .map(|r| format!(" ({})", signed_pct(r)))
        .unwrap_or_default();
    let verdict = match s.verdict {
        Verdict::Faster => "faster".to_owned(),
        Verdict::Slower => "slower".to_owned(),
        Verdict::Unchanged if !s.resolvable => {
            "no significant change (too few steps to tell)".to_owned()
        }
        Verdict::Unchanged => "no significant change".to_owned(),
    };
    let ci = if s.resolvable { "95 % CI" } else { "range" };
    format!(
        "{}{rel} per step, {ci} [{}, {}], p = {:.3} → {verdict}",
        signed_duration(d),
        signed_duration(lo),
        signed_duration(hi),
        s.p_value.unwrap_or(1.0)
    )
}

/// The uniform-change line, when there is something to say.
pub(super) fn machine_line(m: &Machine) -> Option<String> {
    let what = match m.change.verdict {
        MachineVerdict::UniformSlowdown => "uniform slowdown",
        MachineVerdict::UniformSpeedup => "uniform speedup",
        MachineVerdict::NotUniform => return None,
    };
    let side = |name: &str, u: &UniformFactor| {
        u.factor.filter(|_| u.uniform).map(|f| {
            format!(
                "{name} ×{f:.3} ({:.0} % of comparable time within ±10 %)",
                percent(u.within_share)
            )
        })
    };
    let sides: Vec<String> = [
        side("host", &m.change.host),
        side("device", &m.change.device),
    ]
    .into_iter()
    .flatten()
    .collect();
    Some(format!(
        "{what}, {}: the machine (clocks, thermal state, another tenant, another device), not \
         the code.\n          With it taken out: {}",
        sides.join(", "),
        change_line(&m.steps_normalized)
    ))
}

/// A note in words.
pub(super) fn note(n: &DiffNote) -> String {
    match n {
        DiffNote::TooFewSteps { base, new } => format!(
            "{base} against {new} steps cannot give a 95 % interval (at least 4 against 4 are \
             needed): the verdict stays \"no significant change\""
        ),
        DiffNote::NoStepMarkers { side } => {
            format!("the {side} run has no ProfilerStep markers: its one step is the whole trace")
        }
        DiffNote::TraceCountsDiffer { base, new } => {
            format!("the runs have {base} and {new} traces; ranks and phases are paired by name")
        }
    }
}
