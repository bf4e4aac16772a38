//! Steps of an export whose NVTX ranges mark none by name: the outermost range that
//! repeats (or the names that repeat side by side at that level, the phases of one
//! iteration) is offered for `--nvtx-step`.

use rustc_hash::FxHashMap;

use crate::model::{CatId, StrId, Trace, TrackId};

/// What the guess found.
pub(super) enum StepGuess {
    /// No range repeats outside another repeating range.
    None,
    /// One name does.
    One(StrId),
    /// Several names do, in the order of their first start.
    Several(Vec<StrId>),
}

/// The outermost repeating NVTX ranges of category `ranges` (user ranges, not
/// `emit_nvtx` operators): among the ranges whose name occurs at least twice, those
/// inside no other such range on their thread, grouped by name; a name counts when it
/// has two or more of them.
pub(super) fn outermost_repeating(trace: &Trace, ranges: CatId) -> StepGuess {
    let e = &trace.events;
    let mut count: FxHashMap<StrId, u32> = FxHashMap::default();
    for i in 0..e.len() {
        if e.cat[i] == ranges {
            *count.entry(e.name[i]).or_default() += 1;
        }
    }
    let mut repeating: Vec<usize> = (0..e.len())
        .filter(|&i| e.cat[i] == ranges && count.get(&e.name[i]).is_some_and(|&n| n >= 2))
        .collect();
    repeating
        .sort_unstable_by_key(|&i| (e.track[i], e.ts_ns[i], std::cmp::Reverse(e.dur_ns.at(i)), i));
    // Per thread, the end of the outermost repeating range open at each start.
    let mut outermost: FxHashMap<StrId, Vec<usize>> = FxHashMap::default();
    let mut open: Option<(TrackId, i64)> = None;
    for &i in &repeating {
        let end = e.ts_ns[i].saturating_add(e.dur_ns.at(i));
        match open {
            Some((track, open_end)) if track == e.track[i] && e.ts_ns[i] < open_end => {}
            _ => {
                open = Some((e.track[i], end));
                outermost.entry(e.name[i]).or_default().push(i);
            }
        }
    }
    let mut names: Vec<(i64, StrId, Vec<usize>)> = outermost
        .into_iter()
        .filter(|(_, v)| v.len() >= 2)
        .map(|(name, v)| (v.iter().map(|&i| e.ts_ns[i]).min().unwrap_or(0), name, v))
        .collect();
    names.sort_unstable_by_key(|(first, name, _)| (*first, *name));
    if names.len() == 1 {
        return StepGuess::One(names.remove(0).1);
    }
    if names.is_empty() {
        return StepGuess::None;
    }
    StepGuess::Several(names.into_iter().map(|(_, n, _)| n).collect())
}
