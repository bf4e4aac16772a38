//! Operators and kernels of two runs matched row by row.
//!
//! Operators are keyed by name and input shapes; kernels by name and the call path of
//! the operator that launched them (`profile::calls`). Rows are matched in passes, each
//! over what the previous ones left:
//!
//! 1. **key**: the same key on both sides;
//! 2. operators: **name**, the same name with other input shapes (paired largest time
//!    first); kernels: **launcher**, the same launching call path under another kernel
//!    name (another GPU, library version or `torch.compile`; paired by position in the
//!    launching call, then largest time first), then **name**, the same kernel name under
//!    another call path;
//! 3. what is left is **added** or **removed**.
//!
//! Values are per step ([`Side::per_step`]).

use std::collections::BTreeMap;
use std::hash::Hash;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::{Change, Side};

/// What happened to a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemStatus {
    /// Only in the new run.
    Added,
    /// Only in the base run.
    Removed,
    /// In both, with other calls, shapes or name, or a time change above
    /// [`SAME_TIME_SHARE`] of its base time and [`SAME_TIME_NS`].
    Changed,
    /// In both, the same calls and about the same time.
    Same,
}

/// How a row was matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchKind {
    /// The same key (operators: name and input shapes; kernels: name and call path).
    Key,
    /// The same name, another key (other shapes, another call path).
    Name,
    /// The same launching call path, another kernel name.
    Launcher,
}

/// A time change within this share of the base time (or [`SAME_TIME_NS`]) is "same".
pub const SAME_TIME_SHARE: f64 = 0.10;
/// A time change within this many ns per step (or [`SAME_TIME_SHARE`]) is "same".
pub const SAME_TIME_NS: f64 = 1_000.0;
/// Calls per step within this share of each other are equal.
pub const SAME_CALLS_SHARE: f64 = 0.005;

/// One operator or kernel in both runs; values per step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ItemDelta {
    /// The row's key as shown: operators, name and input shapes; kernels, name (the
    /// new run's when matched under another key).
    pub key: String,
    /// Name (the new run's, when matched under another name).
    pub name: String,
    /// Operators: input shapes (the new run's when matched by name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_shape: Option<String>,
    /// Kernels: the launching call path (the new run's when matched by name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launcher: Option<String>,
    /// When matched under another key, the base run's: operators, name and shapes;
    /// kernels, name (renamed) or else call path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_key: Option<String>,
    /// What happened.
    pub status: ItemStatus,
    /// How it was matched (`None` when added or removed).
    #[serde(rename = "match")]
    pub match_kind: Option<MatchKind>,
    /// Calls per step.
    pub calls: Change<f64>,
    /// Host time per step, ns (operators: host self time; kernels: 0).
    pub host_ns: Change<f64>,
    /// Device time per step, ns (operators: what their own runtime calls launched;
    /// kernels: their duration).
    pub device_ns: Change<f64>,
    /// Time per step, ns: host plus device time (the ranking key). An absent side is 0.
    pub base_ns: f64,
    /// Time per step in the new run, ns.
    pub new_ns: f64,
    /// `new_ns − base_ns`.
    pub delta_ns: f64,
    /// When the runs differ by a uniform factor ([`super::uniform`]): the part of the
    /// change that factor does not explain, `new_ns − factor · base_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unexplained_ns: Option<f64>,
}

impl ItemDelta {
    /// Whether calls per step are the same on both sides.
    pub fn same_calls(&self) -> bool {
        match (self.calls.base, self.calls.new) {
            (Some(b), Some(n)) => (n - b).abs() <= SAME_CALLS_SHARE * b.max(n),
            _ => false,
        }
    }
}

/// How many rows were matched each way.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatchCounts {
    /// Matched by key.
    pub by_key: usize,
    /// Matched by name under another key.
    pub by_name: usize,
    /// Matched by launching call path under another name (kernels).
    pub by_launcher: usize,
    /// Only in the new run.
    pub added: usize,
    /// Only in the base run.
    pub removed: usize,
    /// Matched rows whose calls per step changed.
    pub calls_changed: usize,
}

/// One row of one side, per step.
#[derive(Clone, Debug)]
struct Entry {
    name: String,
    detail: String,
    position: u32,
    calls: f64,
    host: f64,
    device: f64,
}

impl Entry {
    fn time(&self) -> f64 {
        self.host + self.device
    }
}

/// Sum rows of every trace of a side per step, keyed by (name, detail).
fn entries(side: &Side, rows: impl Fn(&super::TraceProfile) -> Vec<Entry>) -> Vec<Entry> {
    let mut index: FxHashMap<(String, String), usize> = FxHashMap::default();
    let mut out: Vec<Entry> = Vec::new();
    for p in side.profiles {
        let w = side.weight(p);
        for r in rows(p) {
            let slot = *index
                .entry((r.name.clone(), r.detail.clone()))
                .or_insert_with(|| {
                    out.push(Entry {
                        calls: 0.0,
                        host: 0.0,
                        device: 0.0,
                        ..r.clone()
                    });
                    out.len() - 1
                });
            let e = &mut out[slot];
            e.calls += r.calls * w;
            e.host += r.host * w;
            e.device += r.device * w;
            e.position = e.position.min(r.position);
        }
    }
    out
}

/// Operators of both runs, matched; unranked.
pub fn ops(base: &Side, new: &Side) -> (Vec<ItemDelta>, MatchCounts) {
    let rows = |p: &super::TraceProfile| {
        p.ops
            .iter()
            .map(|o| Entry {
                name: o.name.clone(),
                detail: o.input_shape.clone(),
                position: 0,
                calls: o.calls as f64,
                host: o.host_self_ns as f64,
                device: o.device_self_ns as f64,
            })
            .collect::<Vec<_>>()
    };
    let (b, n) = (entries(base, rows), entries(new, rows));
    let mut m = Matcher::new(&b, &n);
    m.pass(
        MatchKind::Key,
        |e| (e.name.clone(), e.detail.clone()),
        by_time,
    );
    m.pass(MatchKind::Name, |e| e.name.clone(), by_time);
    m.finish(true)
}

/// Kernels of both runs, matched; unranked.
pub fn kernels(base: &Side, new: &Side) -> (Vec<ItemDelta>, MatchCounts) {
    let rows = |p: &super::TraceProfile| {
        p.kernels
            .iter()
            .map(|k| Entry {
                name: k.name.clone(),
                detail: k.launcher.clone(),
                position: k.position,
                calls: k.calls as f64,
                host: 0.0,
                device: k.total_ns as f64,
            })
            .collect::<Vec<_>>()
    };
    let (b, n) = (entries(base, rows), entries(new, rows));
    let mut m = Matcher::new(&b, &n);
    m.pass(
        MatchKind::Key,
        |e| (e.name.clone(), e.detail.clone()),
        by_time,
    );
    m.pass(
        MatchKind::Launcher,
        |e| e.detail.clone(),
        |e| (e.position, by_time(e)),
    );
    m.pass(MatchKind::Name, |e| e.name.clone(), by_time);
    m.finish(false)
}

/// Order within a group: largest time first (as an integer key, ties by name).
fn by_time(e: &Entry) -> (std::cmp::Reverse<i64>, String) {
    (std::cmp::Reverse(e.time() as i64), e.name.clone())
}

/// Matching state: what is left on each side, and the pairs made.
struct Matcher<'a> {
    base: &'a [Entry],
    new: &'a [Entry],
    base_left: Vec<bool>,
    new_left: Vec<bool>,
    pairs: Vec<(usize, usize, MatchKind)>,
}

impl<'a> Matcher<'a> {
    fn new(base: &'a [Entry], new: &'a [Entry]) -> Self {
        Self {
            base,
            new,
            base_left: vec![true; base.len()],
            new_left: vec![true; new.len()],
            pairs: Vec::new(),
        }
    }

    /// Pair what is left by `key`, in `order` within each key.
    fn pass<K: Hash + Eq + Ord, O: Ord>(
        &mut self,
        kind: MatchKind,
        key: impl Fn(&Entry) -> K,
        order: impl Fn(&Entry) -> O,
    ) {
        let group = |v: &[Entry], left: &[bool]| {
            let mut g: BTreeMap<K, Vec<usize>> = BTreeMap::new();
            for (i, e) in v.iter().enumerate() {
                if left[i] {
                    g.entry(key(e)).or_default().push(i);
                }
            }
            for list in g.values_mut() {
                list.sort_by_key(|&i| order(&v[i]));
            }
            g
        };
        let mut b = group(self.base, &self.base_left);
        let n = group(self.new, &self.new_left);
        for (k, ns) in n {
            let Some(bs) = b.remove(&k) else { continue };
            for (&i, &j) in bs.iter().zip(&ns) {
                self.base_left[i] = false;
                self.new_left[j] = false;
                self.pairs.push((i, j, kind));
            }
        }
    }

    /// Rows for the pairs and what is left; `ops` says which detail field to fill.
    fn finish(self, ops: bool) -> (Vec<ItemDelta>, MatchCounts) {
        let mut counts = MatchCounts::default();
        let mut rows = Vec::new();
        for &(i, j, kind) in &self.pairs {
            let row = delta(Some(&self.base[i]), Some(&self.new[j]), Some(kind), ops);
            match kind {
                MatchKind::Key => counts.by_key += 1,
                MatchKind::Name => counts.by_name += 1,
                MatchKind::Launcher => counts.by_launcher += 1,
            }
            counts.calls_changed += usize::from(!row.same_calls());
            rows.push(row);
        }
        for (i, e) in self.base.iter().enumerate() {
            if self.base_left[i] {
                counts.removed += 1;
                rows.push(delta(Some(e), None, None, ops));
            }
        }
        for (j, e) in self.new.iter().enumerate() {
            if self.new_left[j] {
                counts.added += 1;
                rows.push(delta(None, Some(e), None, ops));
            }
        }
        (rows, counts)
    }
}

/// The row of a pair, or of a row on one side only.
fn delta(b: Option<&Entry>, n: Option<&Entry>, kind: Option<MatchKind>, ops: bool) -> ItemDelta {
    let shown = n.or(b).expect("a row has at least one side");
    let base_key = match (b, n) {
        (Some(b), Some(n)) if ops && b.detail != n.detail => Some(if b.detail.is_empty() {
            b.name.clone()
        } else {
            format!("{} {}", b.name, b.detail)
        }),
        (Some(b), Some(n)) if !ops && b.name != n.name => Some(b.name.clone()),
        (Some(b), Some(n)) if !ops && b.detail != n.detail => Some(b.detail.clone()),
        _ => None,
    };
    let (base_ns, new_ns) = (b.map_or(0.0, Entry::time), n.map_or(0.0, Entry::time));
    let key = if ops && !shown.detail.is_empty() {
        format!("{} {}", shown.name, shown.detail)
    } else {
        shown.name.clone()
    };
    let mut row = ItemDelta {
        key,
        name: shown.name.clone(),
        input_shape: ops.then(|| shown.detail.clone()),
        launcher: (!ops).then(|| shown.detail.clone()),
        base_key,
        status: ItemStatus::Same,
        match_kind: kind,
        calls: Change::of(b.map(|e| e.calls), n.map(|e| e.calls)),
        host_ns: Change::of(b.map(|e| e.host), n.map(|e| e.host)),
        device_ns: Change::of(b.map(|e| e.device), n.map(|e| e.device)),
        base_ns,
        new_ns,
        delta_ns: new_ns - base_ns,
        unexplained_ns: None,
    };
    row.status = match (b, n) {
        (None, _) => ItemStatus::Added,
        (_, None) => ItemStatus::Removed,
        _ if kind == Some(MatchKind::Key)
            && row.same_calls()
            && row.delta_ns.abs() <= (SAME_TIME_SHARE * base_ns).max(SAME_TIME_NS) =>
        {
            ItemStatus::Same
        }
        _ => ItemStatus::Changed,
    };
    row
}

impl ItemDelta {
    /// Whether what ran changed, not only how long it took: added, removed, matched
    /// under another name or shapes, or other calls per step.
    pub fn structural(&self) -> bool {
        matches!(self.status, ItemStatus::Added | ItemStatus::Removed)
            || matches!(self.match_kind, Some(MatchKind::Name | MatchKind::Launcher))
            || !self.same_calls()
    }
}

/// Rank rows: structural changes first ([`ItemDelta::structural`]: what really
/// changed), then changes of time alone; within each, by the size of the change not
/// explained by a uniform machine change (`unexplained_ns` when set, else `delta_ns`),
/// largest first; ties by name and key.
pub fn rank(rows: &mut [ItemDelta]) {
    let score = |r: &ItemDelta| r.unexplained_ns.unwrap_or(r.delta_ns).abs();
    rows.sort_by(|a, b| {
        b.structural()
            .cmp(&a.structural())
            .then(score(b).total_cmp(&score(a)))
            .then_with(|| a.name.cmp(&b.name))
            .then_with(|| a.key.cmp(&b.key))
            .then_with(|| a.launcher.cmp(&b.launcher))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::profile::{KernelTotals, OpTotals, StepSample};
    use crate::diff::{Combine, TraceProfile};

    fn profile(ops: &[(&str, &str, u64, i64)], kernels: &[(&str, &str, u32, i64)]) -> TraceProfile {
        TraceProfile {
            steps: vec![
                StepSample {
                    dur_ns: 1_000_000,
                    breakdown_ns: Default::default(),
                };
                2
            ],
            ops: ops
                .iter()
                .map(|&(name, shape, calls, ns)| OpTotals {
                    name: name.into(),
                    input_shape: shape.into(),
                    calls,
                    host_self_ns: ns,
                    device_self_ns: 0,
                })
                .collect(),
            kernels: kernels
                .iter()
                .map(|&(name, launcher, position, ns)| KernelTotals {
                    name: name.into(),
                    launcher: launcher.into(),
                    position,
                    calls: 2,
                    total_ns: ns,
                })
                .collect(),
            ..TraceProfile::default()
        }
    }

    fn side<'a>(p: &'a [&'a TraceProfile]) -> Side<'a> {
        Side {
            profiles: p,
            combine: Combine::Single,
        }
    }

    #[test]
    fn operators_match_by_key_then_by_name() {
        let b = profile(
            &[
                ("aten::mm", "[[8, 4]]", 4, 400),
                ("aten::add", "[[8]]", 2, 20),
                ("aten::item", "[[]]", 130, 1300),
            ],
            &[],
        );
        let n = profile(
            &[
                ("aten::mm", "[[16, 4]]", 4, 800),
                ("aten::add", "[[8]]", 2, 20),
                ("aten::sum", "[[8]]", 2, 60),
            ],
            &[],
        );
        let (mut rows, counts) = ops(&side(&[&b]), &side(&[&n]));
        assert_eq!(
            (counts.by_key, counts.by_name, counts.added, counts.removed),
            (1, 1, 1, 1)
        );
        rank(&mut rows);
        // Structural first, largest change first: the removed per-sample reads, then the
        // reshaped product, the added sum; the unchanged add last.
        let order: Vec<(&str, ItemStatus)> =
            rows.iter().map(|r| (r.name.as_str(), r.status)).collect();
        assert_eq!(
            order,
            [
                ("aten::item", ItemStatus::Removed),
                ("aten::mm", ItemStatus::Changed),
                ("aten::sum", ItemStatus::Added),
                ("aten::add", ItemStatus::Same),
            ]
        );
        let mm = &rows[1];
        assert_eq!(mm.match_kind, Some(MatchKind::Name));
        assert_eq!(mm.base_key.as_deref(), Some("aten::mm [[8, 4]]"));
        assert_eq!((mm.calls.base, mm.calls.new), (Some(2.0), Some(2.0)));
        assert_eq!((mm.base_ns, mm.new_ns, mm.delta_ns), (200.0, 400.0, 200.0));
        assert_eq!(rows[0].calls.base, Some(65.0));
    }

    #[test]
    fn renamed_kernels_match_through_their_launching_call() {
        let l = "aten::linear > aten::addmm [[8, 4]]";
        let b = profile(
            &[],
            &[
                ("sgemm_a", l, 0, 100),
                ("splitK_reduce", l, 1, 10),
                ("relu_k", "aten::relu", 0, 5),
            ],
        );
        let n = profile(
            &[],
            &[
                ("tf32gemm_b", l, 0, 50),
                ("relu_k", "aten::relu", 0, 5),
                ("relu_k", "aten::clamp", 0, 7),
            ],
        );
        let (rows, counts) = kernels(&side(&[&b]), &side(&[&n]));
        assert_eq!(
            (
                counts.by_key,
                counts.by_launcher,
                counts.by_name,
                counts.added,
                counts.removed
            ),
            (1, 1, 0, 1, 1)
        );
        let renamed = rows
            .iter()
            .find(|r| r.match_kind == Some(MatchKind::Launcher))
            .unwrap();
        assert_eq!(
            (renamed.name.as_str(), renamed.base_key.as_deref()),
            ("tf32gemm_b", Some("sgemm_a"))
        );
        assert!(renamed.structural());
        let gone = rows
            .iter()
            .find(|r| r.status == ItemStatus::Removed)
            .unwrap();
        assert_eq!(gone.name, "splitK_reduce");
    }
}
