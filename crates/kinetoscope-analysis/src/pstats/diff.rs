//! Two pstats profiles compared function by function (`kinetoscope diff A.prof B.prof`):
//! own and cumulative time and calls on each side, their change, and the functions
//! only one side has. Functions are matched by base file name and function name, not
//! line, so a function that moved in its file (the usual baseline → optimised edit) is
//! still one function; functions sharing that key on one side are added together.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::stats::{strip_path, Stats};

/// One side's numbers of a function.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct FunctionNumbers {
    /// All calls.
    pub calls: i64,
    /// Primitive calls.
    pub primitive_calls: i64,
    /// Seconds in the function itself.
    pub tottime: f64,
    /// Seconds in the function and its callees.
    pub cumtime: f64,
}

/// Whether a function is on both sides or one.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FunctionStatus {
    /// On both sides.
    Both,
    /// Only in the new profile.
    Added,
    /// Only in the base profile.
    Removed,
}

/// One function compared.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FunctionDelta {
    /// The base file name (directories stripped).
    pub file: String,
    /// The function name.
    pub name: String,
    /// The first line on the new side (else the base side).
    pub line: i64,
    /// Both, added or removed.
    pub status: FunctionStatus,
    /// Base numbers (zero when added).
    pub base: FunctionNumbers,
    /// New numbers (zero when removed).
    pub new: FunctionNumbers,
    /// `new.tottime - base.tottime`, seconds.
    pub delta_tottime: f64,
    /// `new.cumtime - base.cumtime`, seconds.
    pub delta_cumtime: f64,
    /// `new.calls - base.calls`.
    pub delta_calls: i64,
}

/// Two profiles compared.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PstatsDiff {
    /// Base `total_tt`, seconds.
    pub base_total_tt: f64,
    /// New `total_tt`, seconds.
    pub new_total_tt: f64,
    /// Base `total_calls`.
    pub base_total_calls: i64,
    /// New `total_calls`.
    pub new_total_calls: i64,
    /// Functions on both sides.
    pub matched: usize,
    /// Functions only in the new profile.
    pub added: usize,
    /// Functions only in the base profile.
    pub removed: usize,
    /// Every function, by |Δ cumtime| then |Δ tottime|, largest first.
    pub functions: Vec<FunctionDelta>,
}

type Key = (String, String);

/// Each function's numbers by (base file name, name), in first-seen order, with its line.
fn by_key(s: &Stats) -> (Vec<Key>, HashMap<Key, (i64, FunctionNumbers)>) {
    let mut order = Vec::new();
    let mut map: HashMap<Key, (i64, FunctionNumbers)> = HashMap::new();
    for e in &s.entries {
        let f = strip_path(&e.func);
        let key = (f.file, f.name);
        let slot = map.entry(key.clone()).or_insert_with(|| {
            order.push(key);
            (e.func.line, FunctionNumbers::default())
        });
        slot.1.calls = slot.1.calls.wrapping_add(e.calls);
        slot.1.primitive_calls = slot.1.primitive_calls.wrapping_add(e.primitive_calls);
        slot.1.tottime += e.tottime;
        slot.1.cumtime += e.cumtime;
    }
    (order, map)
}

/// Compare `base` with `new`.
pub fn diff(base: &Stats, new: &Stats) -> PstatsDiff {
    let (b_order, b) = by_key(base);
    let (n_order, n) = by_key(new);
    let mut out = PstatsDiff {
        base_total_tt: base.total_tt,
        new_total_tt: new.total_tt,
        base_total_calls: base.total_calls,
        new_total_calls: new.total_calls,
        ..PstatsDiff::default()
    };
    let keys = n_order
        .iter()
        .chain(b_order.iter().filter(|k| !n.contains_key(*k)));
    for key in keys {
        let (bl, bn) = b.get(key).copied().unzip();
        let (nl, nn) = n.get(key).copied().unzip();
        let status = match (bn.is_some(), nn.is_some()) {
            (true, true) => FunctionStatus::Both,
            (false, _) => FunctionStatus::Added,
            (true, false) => FunctionStatus::Removed,
        };
        match status {
            FunctionStatus::Both => out.matched += 1,
            FunctionStatus::Added => out.added += 1,
            FunctionStatus::Removed => out.removed += 1,
        }
        let (bn, nn) = (bn.unwrap_or_default(), nn.unwrap_or_default());
        out.functions.push(FunctionDelta {
            file: key.0.clone(),
            name: key.1.clone(),
            line: nl.or(bl).unwrap_or(0),
            status,
            base: bn,
            new: nn,
            delta_tottime: nn.tottime - bn.tottime,
            delta_cumtime: nn.cumtime - bn.cumtime,
            delta_calls: nn.calls.wrapping_sub(bn.calls),
        });
    }
    out.functions.sort_by(|a, b| {
        let k = |d: &FunctionDelta| (d.delta_cumtime.abs(), d.delta_tottime.abs());
        let (ka, kb) = (k(a), k(b));
        kb.0.total_cmp(&ka.0).then(kb.1.total_cmp(&ka.1))
    });
    out
}
