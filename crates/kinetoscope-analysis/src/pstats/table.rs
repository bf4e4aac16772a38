//! The function table of `pstats.Stats.sort_stats(...).print_stats(...)`: pstats' sort
//! keys (stable, in dict order for ties), a regular-expression restriction on the
//! standard name and a top N, in that order.

use std::cmp::Ordering;

use kinetoscope_trace::{FuncKey, PstatsEntry};
use serde::{Deserialize, Serialize};

use super::stats::Stats;

/// A sort key: pstats' own (`sort_arg_dict_default`) and two of kinetoscope's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SortKey {
    /// `calls` / `ncalls`: call count, descending.
    Calls,
    /// `cumulative` / `cumtime`: cumulative time, descending.
    Cumulative,
    /// `filename` / `module`: file name, ascending.
    Filename,
    /// `line`: line number, ascending.
    Line,
    /// `name`: function name, ascending.
    Name,
    /// `nfl`: name, then file, then line.
    Nfl,
    /// `pcalls`: primitive call count, descending.
    Pcalls,
    /// `stdname`: the standard name (`file:line(name)`), ascending.
    Stdname,
    /// `time` / `tottime`: own time, descending.
    Time,
    /// `percall` (kinetoscope's): own time per call, descending.
    Percall,
    /// `cumpercall` (kinetoscope's): cumulative time per primitive call, descending.
    Cumpercall,
}

/// How many of [`SORT_KEYS`] are pstats' own (the rest are kinetoscope's).
const PSTATS_KEYS: usize = 13;

/// Every spelling of a sort key: pstats' names (and any unambiguous prefix of them, as
/// pstats accepts) and kinetoscope's `percall` / `cumpercall`.
pub const SORT_KEYS: &[(&str, SortKey)] = &[
    ("calls", SortKey::Calls),
    ("ncalls", SortKey::Calls),
    ("cumtime", SortKey::Cumulative),
    ("cumulative", SortKey::Cumulative),
    ("filename", SortKey::Filename),
    ("line", SortKey::Line),
    ("module", SortKey::Filename),
    ("name", SortKey::Name),
    ("nfl", SortKey::Nfl),
    ("pcalls", SortKey::Pcalls),
    ("stdname", SortKey::Stdname),
    ("time", SortKey::Time),
    ("tottime", SortKey::Time),
    ("percall", SortKey::Percall),
    ("cumpercall", SortKey::Cumpercall),
];

impl SortKey {
    /// The key spelled `text`: a name of [`SORT_KEYS`], or a prefix of pstats' names
    /// that all mean one key (pstats' rule).
    pub fn parse(text: &str) -> Option<SortKey> {
        let t = text.trim().to_ascii_lowercase();
        if let Some(&(_, k)) = SORT_KEYS.iter().find(|(n, _)| *n == t) {
            return Some(k);
        }
        let mut found = SORT_KEYS[..PSTATS_KEYS]
            .iter()
            .filter(|(n, _)| !t.is_empty() && n.starts_with(&t));
        let first = found.next()?.1;
        found.all(|&(_, k)| k == first).then_some(first)
    }

    /// Order two entries by this key alone (pstats' `TupleComp` on one field).
    fn compare(self, a: &PstatsEntry, b: &PstatsEntry) -> Ordering {
        let desc = |x: f64, y: f64| y.partial_cmp(&x).unwrap_or(Ordering::Equal);
        match self {
            SortKey::Calls => b.calls.cmp(&a.calls),
            SortKey::Pcalls => b.primitive_calls.cmp(&a.primitive_calls),
            SortKey::Cumulative => desc(a.cumtime, b.cumtime),
            SortKey::Time => desc(a.tottime, b.tottime),
            SortKey::Percall => desc(
                per(a.tottime, a.calls).unwrap_or(0.0),
                per(b.tottime, b.calls).unwrap_or(0.0),
            ),
            SortKey::Cumpercall => desc(
                per(a.cumtime, a.primitive_calls).unwrap_or(0.0),
                per(b.cumtime, b.primitive_calls).unwrap_or(0.0),
            ),
            SortKey::Filename => a.func.file.cmp(&b.func.file),
            SortKey::Line => a.func.line.cmp(&b.func.line),
            SortKey::Name => a.func.name.cmp(&b.func.name),
            SortKey::Nfl => (&a.func.name, &a.func.file, a.func.line).cmp(&(
                &b.func.name,
                &b.func.file,
                b.func.line,
            )),
            SortKey::Stdname => a.func.std_string().cmp(&b.func.std_string()),
        }
    }
}

/// `x / n`, or `None` for no calls (pstats prints a blank there).
pub fn per(x: f64, n: i64) -> Option<f64> {
    (n != 0).then(|| x / n as f64)
}

/// What to list.
#[derive(Clone, Debug, Default)]
pub struct TableOptions {
    /// Sort keys, most significant first; none keeps dict order (`print_stats` unsorted).
    pub sort: Vec<SortKey>,
    /// Keep the functions whose standard name this matches anywhere (pstats' string
    /// restriction, `re.search`).
    pub filter: Option<regex::Regex>,
    /// Then keep the first N.
    pub top: Option<usize>,
}

/// One function of the table, with every number pstats prints.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FunctionRow {
    /// The function.
    pub func: FuncKey,
    /// pstats' standard name: `file:line(name)`, `{built-in ...}` for built-ins.
    pub std_name: String,
    /// All calls (`nc`).
    pub calls: i64,
    /// Primitive calls (`cc`); pstats prints `calls/primitive` when they differ.
    pub primitive_calls: i64,
    /// Seconds in the function itself.
    pub tottime: f64,
    /// `tottime / calls`; `None` with no calls.
    pub tottime_per_call: Option<f64>,
    /// Seconds in the function and its callees.
    pub cumtime: f64,
    /// `cumtime / primitive_calls`; `None` with no primitive calls.
    pub cumtime_per_call: Option<f64>,
    /// `tottime` as a share of the total own time (0–1; 0 when the total is 0).
    pub tottime_share: f64,
    /// `cumtime` as a share of the total own time (0–1 for a single root).
    pub cumtime_share: f64,
}

impl FunctionRow {
    /// The row of one entry against a total own time.
    pub fn of(e: &PstatsEntry, total_tt: f64) -> FunctionRow {
        let share = |x: f64| if total_tt > 0.0 { x / total_tt } else { 0.0 };
        FunctionRow {
            func: e.func.clone(),
            std_name: e.func.std_string(),
            calls: e.calls,
            primitive_calls: e.primitive_calls,
            tottime: e.tottime,
            tottime_per_call: per(e.tottime, e.calls),
            cumtime: e.cumtime,
            cumtime_per_call: per(e.cumtime, e.primitive_calls),
            tottime_share: share(e.tottime),
            cumtime_share: share(e.cumtime),
        }
    }
}

/// The entries of `stats` in the order and selection `opts` asks for (pstats'
/// `fcn_list` after its restrictions).
pub fn select<'s>(stats: &'s Stats, opts: &TableOptions) -> Vec<&'s PstatsEntry> {
    let mut list: Vec<&PstatsEntry> = stats.entries.iter().collect();
    if !opts.sort.is_empty() {
        list.sort_by(|a, b| {
            opts.sort
                .iter()
                .map(|k| k.compare(a, b))
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        });
    }
    if let Some(re) = &opts.filter {
        list.retain(|e| re.is_match(&e.func.std_string()));
    }
    if let Some(n) = opts.top {
        list.truncate(n);
    }
    list
}
