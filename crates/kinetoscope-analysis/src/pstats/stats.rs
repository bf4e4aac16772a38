//! The loaded statistics, as `pstats.Stats` holds them: one entry per function in dict
//! order, summed over several files as `pstats.Stats(a, b)` sums them, and
//! `strip_dirs()` with its merging of functions that collide once stripped.

use std::collections::HashMap;

use kinetoscope_trace::{CallerEdge, EdgeStats, FuncKey, PstatsEntry, PstatsProfile};
use serde::{Deserialize, Serialize};

/// Statistics of one or more pstats files.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Stats {
    /// Entries in pstats' dict order.
    pub entries: Vec<PstatsEntry>,
    /// `total_calls`: the sum of every entry's calls, per file, summed over files.
    pub total_calls: i64,
    /// `prim_calls`: the same for primitive calls.
    pub prim_calls: i64,
    /// `total_tt`: seconds of every entry's own time, summed in file order, then over
    /// files (kept as loaded through `strip_dirs`, as pstats keeps it).
    pub total_tt: f64,
    /// Files summed.
    pub files: usize,
}

impl Stats {
    /// `pstats.Stats(profiles[0], profiles[1], ...)`: the first loaded, the others
    /// added in order. Numbers are summed in pstats' order, so they equal Python's.
    pub fn load(profiles: impl IntoIterator<Item = PstatsProfile>) -> Stats {
        let mut out = Stats::default();
        let mut index: HashMap<FuncKey, usize> = HashMap::new();
        for p in profiles {
            out.add(p, &mut index);
        }
        out
    }

    /// `Stats.add`: totals first, then each entry added to the one of the same function
    /// (or appended).
    fn add(&mut self, p: PstatsProfile, index: &mut HashMap<FuncKey, usize>) {
        let (mut calls, mut prim, mut tt) = (0i64, 0i64, 0.0f64);
        for e in &p.entries {
            calls = calls.wrapping_add(e.calls);
            prim = prim.wrapping_add(e.primitive_calls);
            tt += e.tottime;
        }
        self.total_calls = self.total_calls.wrapping_add(calls);
        self.prim_calls = self.prim_calls.wrapping_add(prim);
        self.total_tt += tt;
        self.files += 1;
        for e in p.entries {
            merge_into(&mut self.entries, index, e);
        }
    }

    /// `Stats.strip_dirs()`: every file name cut to its base name; functions that then
    /// share a key are added together (in dict order), and among a function's callers
    /// that collide the last one wins, as in pstats.
    pub fn strip_dirs(&mut self) {
        let old = std::mem::take(&mut self.entries);
        let mut index: HashMap<FuncKey, usize> = HashMap::new();
        for mut e in old {
            let func = strip_path(&e.func);
            let mut callers: Vec<CallerEdge> = Vec::with_capacity(e.callers.len());
            let mut seen: HashMap<FuncKey, usize> = HashMap::new();
            for c in e.callers.drain(..) {
                let caller = strip_path(&c.caller);
                match seen.get(&caller) {
                    Some(&i) => callers[i].stats = c.stats,
                    None => {
                        seen.insert(caller.clone(), callers.len());
                        callers.push(CallerEdge {
                            caller,
                            stats: c.stats,
                        });
                    }
                }
            }
            e.callers = callers;
            e.func = func;
            merge_into(&mut self.entries, &mut index, e);
        }
    }

    /// `all_callees` as pstats builds it: for each function, the functions it calls and
    /// the numbers of those calls (the callee's caller edge), in dict order.
    pub fn callees(&self) -> HashMap<&FuncKey, Vec<(&FuncKey, EdgeStats)>> {
        let mut out: HashMap<&FuncKey, Vec<(&FuncKey, EdgeStats)>> = HashMap::new();
        for e in &self.entries {
            out.entry(&e.func).or_default();
            for c in &e.callers {
                out.entry(&c.caller).or_default().push((&e.func, c.stats));
            }
        }
        out
    }
}

/// `func_strip_path`: the file's base name (after the last `/`, as `os.path.basename`
/// on POSIX).
pub fn strip_path(f: &FuncKey) -> FuncKey {
    FuncKey {
        file: f.file.rsplit('/').next().unwrap_or("").to_owned(),
        line: f.line,
        name: f.name.clone(),
    }
}

/// Add `e` into `entries`: `add_func_stats` onto an existing entry of its function, or
/// appended.
fn merge_into(entries: &mut Vec<PstatsEntry>, index: &mut HashMap<FuncKey, usize>, e: PstatsEntry) {
    let Some(&i) = index.get(&e.func) else {
        index.insert(e.func.clone(), entries.len());
        entries.push(e);
        return;
    };
    let t = &mut entries[i];
    t.primitive_calls = e.primitive_calls.wrapping_add(t.primitive_calls);
    t.calls = e.calls.wrapping_add(t.calls);
    t.tottime += e.tottime;
    t.cumtime += e.cumtime;
    add_callers(&mut t.callers, &e.callers);
}

/// pstats' `add_callers`: the target's edges in order, each source edge added to the
/// target's edge of the same caller or appended.
fn add_callers(target: &mut Vec<CallerEdge>, source: &[CallerEdge]) {
    let mut index: HashMap<FuncKey, usize> = target
        .iter()
        .enumerate()
        .map(|(i, t)| (t.caller.clone(), i))
        .collect();
    for c in source {
        match index.get(&c.caller) {
            Some(&i) => target[i].stats = c.stats.plus(target[i].stats),
            None => {
                index.insert(c.caller.clone(), target.len());
                target.push(c.clone());
            }
        }
    }
}
