//! cProfile / profile statistics (`kinetoscope pstats`): the function table with pstats'
//! sort keys, `strip_dirs`, restrictions and top N ([`table`]), callers and callees
//! ([`calls`]), several files summed as `pstats.Stats(a, b)` sums them ([`stats`]), and
//! an estimated call tree for flame graphs and collapsed stacks ([`tree`]), and two
//! profiles compared function by function ([`diff`]). The numbers
//! are pstats' own, computed in its order, so they equal Python's.

pub mod calls;
pub mod diff;
pub mod stats;
pub mod table;
pub mod tree;

use serde::{Deserialize, Serialize};

pub use calls::{CallEdgeRow, CallListing};
pub use stats::Stats;
pub use table::{FunctionRow, SortKey, TableOptions, SORT_KEYS};
pub use tree::{CallTree, TreeNode};

/// What `kinetoscope pstats` shows.
#[derive(Clone, Debug, Default)]
pub struct PstatsOptions {
    /// Order, restriction and top N of the function table.
    pub table: TableOptions,
    /// `strip_dirs()` before anything else.
    pub strip_dirs: bool,
    /// List the callers of the functions whose standard name this matches.
    pub callers: Option<regex::Regex>,
    /// List the callees of the functions whose standard name this matches.
    pub callees: Option<regex::Regex>,
    /// Build the estimated call tree.
    pub tree: bool,
}

/// The pstats view of one or more files summed.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PstatsView {
    /// Files summed.
    pub files: usize,
    /// Calls of every function (pstats' `total_calls`).
    pub total_calls: i64,
    /// Primitive calls of every function (`prim_calls`).
    pub prim_calls: i64,
    /// Seconds of own time of every function (`total_tt`).
    pub total_tt: f64,
    /// Functions in the statistics (before the restriction and top N).
    pub functions: usize,
    /// The table, in the order asked for.
    pub rows: Vec<FunctionRow>,
    /// Callers of the functions asked for, in table order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callers: Option<Vec<CallListing>>,
    /// Callees of the functions asked for, in table order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callees: Option<Vec<CallListing>>,
    /// The estimated call tree, when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<CallTree>,
}

/// The view of `stats` (already summed; stripped here when asked).
pub fn view(mut stats: Stats, opts: &PstatsOptions) -> PstatsView {
    if opts.strip_dirs {
        stats.strip_dirs();
    }
    let rows = table::select(&stats, &opts.table)
        .into_iter()
        .map(|e| FunctionRow::of(e, stats.total_tt))
        .collect();
    let listed = |re: &Option<regex::Regex>| {
        re.as_ref().map(|re| {
            let t = TableOptions {
                sort: opts.table.sort.clone(),
                filter: Some(re.clone()),
                top: None,
            };
            table::select(&stats, &t)
        })
    };
    let callers = listed(&opts.callers).map(|l| calls::callers(&l));
    let callees = listed(&opts.callees).map(|l| calls::callees(&stats, &l));
    PstatsView {
        files: stats.files,
        total_calls: stats.total_calls,
        prim_calls: stats.prim_calls,
        total_tt: stats.total_tt,
        functions: stats.entries.len(),
        rows,
        callers,
        callees,
        tree: opts.tree.then(|| tree::call_tree(&stats)),
    }
}
