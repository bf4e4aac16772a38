//! `print_callers` / `print_callees`: for each selected function, the functions that
//! call it (or that it calls) with the numbers of those calls, sorted by function key as
//! pstats sorts them.

use kinetoscope_trace::{EdgeStats, FuncKey, PstatsEntry};
use serde::{Deserialize, Serialize};

use super::stats::Stats;

/// One function and its callers or callees.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CallListing {
    /// The function.
    pub func: FuncKey,
    /// Its standard name.
    pub std_name: String,
    /// The other end of each edge, sorted by `(file, line, name)`.
    pub edges: Vec<CallEdgeRow>,
}

/// One edge seen from the listed function.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CallEdgeRow {
    /// The caller (in a callers listing) or the callee (in a callees listing).
    pub func: FuncKey,
    /// Its standard name.
    pub std_name: String,
    /// The numbers of the calls along the edge (the callee's view of them, as pstats
    /// stores them).
    pub stats: EdgeStats,
}

fn row(func: &FuncKey, stats: EdgeStats) -> CallEdgeRow {
    CallEdgeRow {
        func: func.clone(),
        std_name: func.std_string(),
        stats,
    }
}

fn listing(func: &FuncKey, mut edges: Vec<CallEdgeRow>) -> CallListing {
    edges.sort_by(|a, b| a.func.cmp(&b.func));
    CallListing {
        func: func.clone(),
        std_name: func.std_string(),
        edges,
    }
}

/// The callers of each function of `list`.
pub fn callers(list: &[&PstatsEntry]) -> Vec<CallListing> {
    list.iter()
        .map(|e| {
            let edges = e.callers.iter().map(|c| row(&c.caller, c.stats)).collect();
            listing(&e.func, edges)
        })
        .collect()
}

/// The callees of each function of `list`, from the callers edges of all of `stats`.
pub fn callees(stats: &Stats, list: &[&PstatsEntry]) -> Vec<CallListing> {
    let all = stats.callees();
    list.iter()
        .map(|e| {
            let edges = all
                .get(&e.func)
                .map(|v| v.iter().map(|(f, s)| row(f, *s)).collect())
                .unwrap_or_default();
            listing(&e.func, edges)
        })
        .collect()
}
