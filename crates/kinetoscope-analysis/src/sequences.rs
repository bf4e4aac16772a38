//! Frequent kernel sequences: fusion candidates.
//!
//! * **Operator mode** (`op` set, HTA's `get_frequent_cuda_kernel_sequences`): the roots
//!   are the outermost CPU operators (or annotations) whose name contains `op`; each
//!   root's pattern is its name followed by the kernels launched from inside it (by
//!   launch calls on its thread inside its span, linked by correlation), in start order.
//!   Roots with fewer than `min_len` kernels are skipped. Patterns are counted with their
//!   summed kernel time and operator time.
//! * **Step mode** (no `op`): the kernels of each kept step, per GPU stream in start
//!   order; every run of `min_len..=max_len` consecutive kernels is counted
//!   (non-overlapping occurrences), and patterns are ranked by kernels covered
//!   (count × length); a pattern inside, or a rotation of, a better-ranked one is left
//!   out so the list shows distinct candidates.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use kinetoscope_trace::{CategoryKind, EventId, Phase, StrId, Trace, TrackId};

use crate::note::Note;
use crate::overview::step_ranges::step_plan;

/// Options of [`frequent_sequences`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SequenceOptions {
    /// Operator (substring of its name) whose kernels form the patterns; `None`: steps.
    pub op: Option<String>,
    /// Shortest pattern, kernels.
    pub min_len: usize,
    /// Longest pattern in step mode, kernels.
    pub max_len: usize,
    /// Patterns to return.
    pub top: usize,
}

impl Default for SequenceOptions {
    fn default() -> Self {
        Self {
            op: None,
            min_len: 3,
            max_len: 6,
            top: 5,
        }
    }
}

/// Where the patterns were looked for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SequenceScope {
    /// Kernels of each kept step, per stream.
    Step,
    /// Kernels launched inside operators whose name contains `name`.
    Operator {
        /// The substring asked for.
        name: String,
    },
}

/// One frequent pattern.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelSequence {
    /// The operator of the pattern (operator mode).
    pub op: Option<String>,
    /// Kernel names in order.
    pub kernels: Vec<String>,
    /// Occurrences.
    pub count: u64,
    /// Summed duration of the pattern's kernels over all occurrences, ns.
    pub kernel_time_ns: i64,
    /// Mean kernel time per occurrence, ns.
    pub mean_kernel_time_ns: f64,
    /// `kernel_time_ns` as a share of the kernel time in scope (0–1).
    pub share: f64,
    /// Summed operator duration over occurrences, ns (operator mode).
    pub op_time_ns: Option<i64>,
}

/// The frequent sequences of one trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceSequences {
    /// The file.
    pub path: String,
    /// Where patterns were looked for.
    pub scope: SequenceScope,
    /// Roots: steps, or matching operator instances with ≥ `min_len` kernels.
    pub roots: u64,
    /// Kernels in scope.
    pub kernels: u64,
    /// Their total duration, ns.
    pub kernel_time_ns: i64,
    /// The patterns, most frequent first.
    pub sequences: Vec<KernelSequence>,
    /// What the analysis had to assume.
    pub warnings: Vec<Note>,
}

/// Find the frequent kernel sequences of a trace.
pub fn frequent_sequences(trace: &Trace, opts: &SequenceOptions) -> TraceSequences {
    let min_len = opts.min_len.max(1);
    let mut out = match &opts.op {
        Some(op) => operator_mode(trace, op, min_len, opts.top),
        None => step_mode(trace, min_len, opts.max_len.max(min_len), opts.top),
    };
    out.path = trace.path.display().to_string();
    out
}

fn mix(h: u64, id: u32) -> u64 {
    (h.rotate_left(5) ^ u64::from(id)).wrapping_mul(0x517c_c1b7_2722_0a95)
}

struct Gram {
    len: u32,
    first: u32,
    next_free: u32,
    count: u64,
    time_ns: i64,
}

fn step_mode(trace: &Trace, min_len: usize, max_len: usize, top: usize) -> TraceSequences {
    let e = &trace.events;
    let plan = step_plan(trace);
    let kernel_cat: Vec<bool> = trace
        .categories
        .iter()
        .map(|(_, c)| c.kind == CategoryKind::Kernel)
        .collect();
    // (step, track, ts, name, dur) of kernels starting inside a kept step.
    let mut ks: Vec<(u32, TrackId, i64, StrId, i64)> = Vec::new();
    for i in 0..e.len() {
        if !kernel_cat[e.cat[i].0 as usize] || e.phase[i] != Phase::Complete {
            continue;
        }
        let ts = e.ts_ns[i];
        let s = plan.steps.partition_point(|s| s.end <= ts);
        if s < plan.steps.len() && plan.steps[s].start <= ts {
            ks.push((s as u32, e.track[i], ts, e.name[i], e.dur_ns.at(i)));
        }
    }
    ks.sort_unstable_by_key(|k| (k.0, k.1, k.2));
    let names: Vec<u32> = ks.iter().map(|k| k.3 .0).collect();
    let mut prefix = Vec::with_capacity(ks.len() + 1);
    prefix.push(0i64);
    for k in &ks {
        prefix.push(prefix.last().unwrap() + k.4);
    }
    let total_ns = *prefix.last().unwrap();
    // Segment ends: the first index of the next (step, track).
    let mut seg_end = vec![0u32; ks.len()];
    let mut j = ks.len();
    for i in (0..ks.len()).rev() {
        if i + 1 < ks.len() && (ks[i + 1].0, ks[i + 1].1) != (ks[i].0, ks[i].1) {
            j = i + 1;
        }
        seg_end[i] = j as u32;
    }
    let mut grams: FxHashMap<u64, Gram> = FxHashMap::default();
    for i in 0..ks.len() {
        let end = seg_end[i] as usize;
        let mut h = 0x9e37_79b9_7f4a_7c15u64;
        for l in 1..=max_len {
            let p = i + l - 1;
            if p >= end {
                break;
            }
            h = mix(h, names[p]);
            if l < min_len {
                continue;
            }
            let g = grams.entry(h).or_insert(Gram {
                len: l as u32,
                first: i as u32,
                next_free: 0,
                count: 0,
                time_ns: 0,
            });
            if i as u32 >= g.next_free {
                g.count += 1;
                g.time_ns += prefix[i + l] - prefix[i];
                g.next_free = (i + l) as u32;
            }
        }
    }
    let mut cands: Vec<&Gram> = grams.values().filter(|g| g.count >= 2).collect();
    cands.sort_unstable_by(|a, b| {
        (b.count * u64::from(b.len))
            .cmp(&(a.count * u64::from(a.len)))
            .then(b.time_ns.cmp(&a.time_ns))
            .then(a.first.cmp(&b.first))
    });
    let mut picked: Vec<(&[u32], &Gram)> = Vec::new();
    for g in cands {
        if picked.len() >= top {
            break;
        }
        let seq = &names[g.first as usize..(g.first + g.len) as usize];
        let redundant = picked
            .iter()
            .any(|(p, _)| contains(p, seq) || is_rotation(p, seq));
        if !redundant {
            picked.push((seq, g));
        }
    }
    let sequences = picked
        .into_iter()
        .map(|(seq, g)| KernelSequence {
            op: None,
            kernels: seq
                .iter()
                .map(|&id| trace.strings.get(StrId(id)).to_owned())
                .collect(),
            count: g.count,
            kernel_time_ns: g.time_ns,
            mean_kernel_time_ns: g.time_ns as f64 / g.count as f64,
            share: if total_ns > 0 {
                g.time_ns as f64 / total_ns as f64
            } else {
                0.0
            },
            op_time_ns: None,
        })
        .collect();
    let mut warnings = Vec::new();
    if plan.source == crate::steps::StepSource::WholeTrace {
        warnings.push(Note::NoStepMarkers);
    }
    TraceSequences {
        path: String::new(),
        scope: SequenceScope::Step,
        roots: plan.steps.len() as u64,
        kernels: ks.len() as u64,
        kernel_time_ns: total_ns,
        sequences,
        warnings,
    }
}

fn contains(hay: &[u32], needle: &[u32]) -> bool {
    needle.len() <= hay.len() && hay.windows(needle.len()).any(|w| w == needle)
}

fn is_rotation(a: &[u32], b: &[u32]) -> bool {
    a.len() == b.len() && (0..a.len()).any(|r| a[r..].iter().chain(&a[..r]).eq(b.iter()))
}

fn operator_mode(trace: &Trace, op: &str, min_len: usize, top: usize) -> TraceSequences {
    let e = &trace.events;
    let kinds: Vec<CategoryKind> = trace.categories.iter().map(|(_, c)| c.kind).collect();
    // Candidate roots per track: outermost matching host spans.
    let mut name_match: FxHashMap<StrId, bool> = FxHashMap::default();
    let mut per_track: FxHashMap<TrackId, Vec<u32>> = FxHashMap::default();
    for i in 0..e.len() {
        if e.phase[i] != Phase::Complete
            || !matches!(
                kinds[e.cat[i].0 as usize],
                CategoryKind::CpuOp | CategoryKind::UserAnnotation
            )
        {
            continue;
        }
        let m = *name_match
            .entry(e.name[i])
            .or_insert_with(|| trace.strings.get(e.name[i]).contains(op));
        if m {
            per_track.entry(e.track[i]).or_default().push(i as u32);
        }
    }
    for v in per_track.values_mut() {
        v.sort_unstable_by_key(|&i| (e.ts_ns[i as usize], -e.dur_ns.at(i as usize)));
        let mut outer: Vec<u32> = Vec::with_capacity(v.len());
        for &i in v.iter() {
            match outer.last() {
                Some(&o) if e.ts_ns[i as usize] < e.end_ns(EventId(o)) => {}
                _ => outer.push(i),
            }
        }
        *v = outer;
    }
    // Kernels of each root, through the launch calls inside it.
    let mut kernels_of: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
    if !per_track.is_empty() {
        let index = trace.correlation_index();
        for (launch, gpu) in index.iter() {
            let Some(launch) = launch else {
                continue;
            };
            let li = launch.index();
            let Some(roots) = per_track.get(&e.track[li]) else {
                continue;
            };
            let ts = e.ts_ns[li];
            let k = roots.partition_point(|&r| e.ts_ns[r as usize] <= ts);
            if k == 0 {
                continue;
            }
            let root = roots[k - 1];
            if e.ts_ns[li] + e.dur_ns.at(li) > e.end_ns(EventId(root)) {
                continue;
            }
            for g in gpu {
                if kinds[e.cat[g.index()].0 as usize] == CategoryKind::Kernel {
                    kernels_of.entry(root).or_default().push(g.0);
                }
            }
        }
    }
    struct Pat {
        op: StrId,
        kernels: Vec<u32>,
        count: u64,
        kernel_ns: i64,
        op_ns: i64,
    }
    let mut pats: FxHashMap<(StrId, Vec<u32>), Pat> = FxHashMap::default();
    let (mut roots, mut nkernels, mut total_ns) = (0u64, 0u64, 0i64);
    for (root, mut ks) in kernels_of {
        if ks.len() < min_len {
            continue;
        }
        ks.sort_unstable_by_key(|&k| (e.ts_ns[k as usize], k));
        roots += 1;
        nkernels += ks.len() as u64;
        let kernel_ns: i64 = ks.iter().map(|&k| e.dur_ns.at(k as usize)).sum();
        total_ns += kernel_ns;
        let names: Vec<u32> = ks.iter().map(|&k| e.name[k as usize].0).collect();
        let opname = e.name[root as usize];
        let p = pats.entry((opname, names.clone())).or_insert(Pat {
            op: opname,
            kernels: names,
            count: 0,
            kernel_ns: 0,
            op_ns: 0,
        });
        p.count += 1;
        p.kernel_ns += kernel_ns;
        p.op_ns += e.dur_ns.at(root as usize);
    }
    let mut list: Vec<Pat> = pats.into_values().collect();
    list.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then(b.kernel_ns.cmp(&a.kernel_ns))
            .then_with(|| trace.strings.get(a.op).cmp(trace.strings.get(b.op)))
    });
    list.truncate(top);
    let mut warnings = Vec::new();
    if roots == 0 {
        warnings.push(Note::NoMatchingOperator {
            operator: op.to_owned(),
            min_len,
        });
    }
    TraceSequences {
        path: String::new(),
        scope: SequenceScope::Operator {
            name: op.to_owned(),
        },
        roots,
        kernels: nkernels,
        kernel_time_ns: total_ns,
        sequences: list
            .into_iter()
            .map(|p| KernelSequence {
                op: Some(trace.strings.get(p.op).to_owned()),
                kernels: p
                    .kernels
                    .iter()
                    .map(|&id| trace.strings.get(StrId(id)).to_owned())
                    .collect(),
                count: p.count,
                kernel_time_ns: p.kernel_ns,
                mean_kernel_time_ns: p.kernel_ns as f64 / p.count as f64,
                share: if total_ns > 0 {
                    p.kernel_ns as f64 / total_ns as f64
                } else {
                    0.0
                },
                op_time_ns: Some(p.op_ns),
            })
            .collect(),
        warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotations_and_containment() {
        assert!(is_rotation(&[1, 2, 3], &[2, 3, 1]));
        assert!(!is_rotation(&[1, 2, 3], &[2, 1, 3]));
        assert!(contains(&[1, 2, 3, 4], &[2, 3]));
        assert!(!contains(&[1, 2], &[1, 2, 3]));
    }
}
