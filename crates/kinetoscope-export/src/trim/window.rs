//! The time window a trim keeps, on the model's clock (epoch ns): from `ProfilerStep#N`
//! steps (the analysis crate's [`find_steps`]), from a `--time` range, or both (their
//! intersection).

use std::str::FromStr;

use std::path::PathBuf;

use kinetoscope_analysis::steps::{find_steps, Step, StepSource};
use kinetoscope_trace::Trace;

use super::TrimError;

/// What a trim takes from a trace's model, so the model can be dropped before the
/// text is walked: its steps (the analysis crate's), first event, time base and rank.
#[derive(Clone, Debug)]
pub struct TraceFacts {
    /// The trace's path.
    pub path: PathBuf,
    /// Its steps and where they came from.
    pub steps: (Vec<Step>, StepSource),
    /// The start of its first complete event (model clock, ns).
    pub origin_ns: i64,
    /// `baseTimeNanoseconds` (0 when absent).
    pub base_ns: i64,
    /// The rank the reader decided.
    pub rank: Option<i64>,
}

impl TraceFacts {
    /// The facts of `trace`.
    pub fn of(trace: &Trace) -> Self {
        Self {
            path: trace.path.clone(),
            steps: find_steps(trace),
            origin_ns: trace.span_ns().map_or(0, |(lo, _)| lo),
            base_ns: trace.meta.base_time_ns.unwrap_or(0),
            rank: trace.meta.rank.as_ref().map(|r| r.value),
        }
    }
}

/// A point of a `--time` range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TimePoint {
    /// Nanoseconds after the trace's first event (written in ms: `12.5`).
    FromStart(i64),
    /// A `ts` as written in the file, in ns (written in µs with a suffix: `1700000us`).
    Written(i64),
}

/// A `--time A..B` range: `A` and `B` in ms after the trace's start, or absolute `ts`
/// values as written (µs) with a `us` suffix.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeRange {
    /// Start (kept).
    pub start: TimePoint,
    /// End (events starting at or after it are not kept).
    pub end: TimePoint,
}

impl FromStr for TimeRange {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (a, b) = s
            .split_once("..")
            .ok_or_else(|| format!("`{s}`: expected A..B (ms after the trace's start, or µs as written with a `us` suffix)"))?;
        let range = TimeRange {
            start: point(a)?,
            end: point(b)?,
        };
        match (range.start, range.end) {
            (TimePoint::FromStart(x), TimePoint::FromStart(y))
            | (TimePoint::Written(x), TimePoint::Written(y))
                if y <= x =>
            {
                Err(format!("`{s}`: the end must be after the start"))
            }
            _ => Ok(range),
        }
    }
}

/// One bound: ms, or µs with a `us` suffix; exact to the ns.
fn point(text: &str) -> Result<TimePoint, String> {
    let t = text.trim();
    let (number, scale, written) = match t.strip_suffix("us") {
        Some(n) => (n, 1e3, true),
        None => (t.strip_suffix("ms").unwrap_or(t), 1e6, false),
    };
    let v: f64 = number
        .trim()
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| format!("`{text}`: not a time (ms, or µs with a `us` suffix)"))?;
    let ns = (v * scale).round() as i64;
    Ok(if written {
        TimePoint::Written(ns)
    } else {
        TimePoint::FromStart(ns)
    })
}

/// A window `[start_ns, end_ns)` on the model's clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Window {
    /// First ns kept.
    pub start_ns: i64,
    /// First ns not kept.
    pub end_ns: i64,
}

impl Window {
    /// Whether an event starting at `ts` (model clock) is inside.
    pub fn holds(&self, ts: i64) -> bool {
        self.start_ns <= ts && ts < self.end_ns
    }
}

/// The window of steps `first..=last` (step numbers as written): from the first kept
/// step's start to the last one's end.
pub fn steps_window(
    facts: &TraceFacts,
    first: i64,
    last: i64,
) -> Result<(Window, Vec<String>), TrimError> {
    let (steps, source) = &facts.steps;
    let numbers: Vec<i64> = steps.iter().filter_map(|s| s.number).collect();
    let kept: Vec<_> = steps
        .iter()
        .filter(|s| s.number.is_some_and(|n| first <= n && n <= last))
        .collect();
    if *source != StepSource::ProfilerStep || kept.is_empty() {
        return Err(TrimError::NoSteps {
            path: facts.path.clone(),
            first,
            last,
            found: match (numbers.iter().min(), numbers.iter().max()) {
                (Some(a), Some(b)) => format!("ProfilerStep#{a} to #{b}"),
                _ => "no ProfilerStep# span".to_owned(),
            },
        });
    }
    let start_ns = kept.iter().map(|s| s.start_ns).min().unwrap_or(0);
    let end_ns = kept
        .iter()
        .map(|s| s.start_ns + s.dur_ns)
        .max()
        .unwrap_or(0);
    let names = kept.iter().map(|s| s.name.clone()).collect();
    Ok((Window { start_ns, end_ns }, names))
}

/// The window of a `--time` range in a trace.
pub fn time_window(facts: &TraceFacts, range: &TimeRange) -> Window {
    let at = |p: TimePoint| match p {
        TimePoint::FromStart(ns) => facts.origin_ns.saturating_add(ns),
        TimePoint::Written(ns) => facts.base_ns.saturating_add(ns),
    };
    Window {
        start_ns: at(range.start),
        end_ns: at(range.end),
    }
}

/// The intersection of two windows (empty when they do not meet).
pub fn intersect(a: Window, b: Window) -> Window {
    let start_ns = a.start_ns.max(b.start_ns);
    Window {
        start_ns,
        end_ns: a.end_ns.min(b.end_ns).max(start_ns),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_in_ms_and_written_us() {
        let r: TimeRange = "1.5..20".parse().unwrap();
        assert_eq!(r.start, TimePoint::FromStart(1_500_000));
        assert_eq!(r.end, TimePoint::FromStart(20_000_000));
        let r: TimeRange = "100us..250.5us".parse().unwrap();
        assert_eq!(r.start, TimePoint::Written(100_000));
        assert_eq!(r.end, TimePoint::Written(250_500));
        assert!("5..5".parse::<TimeRange>().is_err());
        assert!("x..5".parse::<TimeRange>().is_err());
        assert!("5".parse::<TimeRange>().is_err());
    }
}
