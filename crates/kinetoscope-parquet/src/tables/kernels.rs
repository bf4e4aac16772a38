//! `kernels_per_step`: GPU kernels aggregated per (step, kernel name), a kernel in the
//! step its start falls in (the overview's GPU-stretched step windows); kernels outside
//! every step in rows without a step.

use std::collections::HashMap;

use arrow_array::RecordBatch;
use arrow_schema::ArrowError;
use kinetoscope_analysis::ranks::RankSummary;
use kinetoscope_trace::{CategoryKind, Phase, StrId, Trace};

use super::{i64s, step_at, step_indices, strs};
use crate::schema::Table;

/// Count, total, min and max duration of one group, ns.
#[derive(Clone, Copy)]
struct Agg {
    count: i64,
    total: i64,
    min: i64,
    max: i64,
}

/// The `kernels_per_step` rows of `trace`, by step (rows outside every step last), then
/// total time (largest first), then name.
pub(crate) fn batch(trace: &Trace, summary: &RankSummary) -> Result<RecordBatch, ArrowError> {
    let ev = &trace.events;
    let mut groups: HashMap<(Option<usize>, StrId), Agg> = HashMap::new();
    for i in 0..ev.len() {
        if ev.phase[i] != Phase::Complete
            || trace.categories.kind(ev.cat[i]) != CategoryKind::Kernel
        {
            continue;
        }
        let dur = ev.dur_ns.at(i);
        let key = (step_at(&summary.steps, ev.ts_ns[i]), ev.name[i]);
        groups
            .entry(key)
            .and_modify(|a| {
                a.count += 1;
                a.total += dur;
                a.min = a.min.min(dur);
                a.max = a.max.max(dur);
            })
            .or_insert(Agg {
                count: 1,
                total: dur,
                min: dur,
                max: dur,
            });
    }
    let mut rows: Vec<((Option<usize>, &str), Agg)> = groups
        .into_iter()
        .map(|((step, name), a)| ((step, trace.strings.get(name)), a))
        .collect();
    rows.sort_by(|((sa, na), a), ((sb, nb), b)| {
        (sa.is_none(), sa, std::cmp::Reverse(a.total), na).cmp(&(
            sb.is_none(),
            sb,
            std::cmp::Reverse(b.total),
            nb,
        ))
    });
    let number = |s: Option<usize>| s.and_then(|i| summary.steps[i].number);
    super::batch(
        Table::KernelsPerStep,
        summary.rank,
        rows.len(),
        vec![
            step_indices(rows.iter().map(|((s, _), _)| *s)),
            super::opt_i64s(rows.iter().map(|((s, _), _)| number(*s))),
            strs(rows.iter().map(|((_, n), _)| *n)),
            i64s(rows.iter().map(|(_, a)| a.count)),
            i64s(rows.iter().map(|(_, a)| a.total)),
            i64s(rows.iter().map(|(_, a)| a.min)),
            i64s(rows.iter().map(|(_, a)| a.max)),
        ],
    )
}
