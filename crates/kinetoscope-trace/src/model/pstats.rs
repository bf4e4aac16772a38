//! A cProfile / profile statistics file (`pstats`), as Python's `pstats.Stats` loads it:
//! one entry per function in file order, with its callers.

use std::path::PathBuf;

/// A function as pstats names it: `(file, line, name)`. Built-ins are
/// `("~", 0, "<built-in method ...>")`.
#[derive(
    Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct FuncKey {
    /// The source file (`~` for built-ins).
    pub file: String,
    /// The first line of the function.
    pub line: i64,
    /// The function's name.
    pub name: String,
}

impl FuncKey {
    /// pstats' `func_std_string`: `file:line(name)`, or for built-ins (`~`, 0) the name,
    /// with `<...>` written `{...}`.
    pub fn std_string(&self) -> String {
        if self.file == "~" && self.line == 0 {
            match self
                .name
                .strip_prefix('<')
                .and_then(|n| n.strip_suffix('>'))
            {
                Some(inner) => format!("{{{inner}}}"),
                None => self.name.clone(),
            }
        } else {
            format!("{}:{}({})", self.file, self.line, self.name)
        }
    }
}

/// The numbers of one caller → callee edge.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EdgeStats {
    /// cProfile: calls, primitive calls, time inside the callee and including its callees,
    /// for the calls from this caller (written `(nc, cc, tt, ct)`).
    Timed {
        /// Calls.
        calls: i64,
        /// Primitive (non-recursive) calls.
        primitive_calls: i64,
        /// Seconds spent in the callee itself on these calls.
        tottime: f64,
        /// Seconds spent in the callee and its callees on these calls.
        cumtime: f64,
    },
    /// The pure-Python `profile` module: only a call count.
    Count {
        /// Calls.
        calls: i64,
    },
}

impl EdgeStats {
    /// The calls along this edge.
    pub fn calls(&self) -> i64 {
        match *self {
            Self::Timed { calls, .. } | Self::Count { calls } => calls,
        }
    }

    /// pstats' `add_callers` for one edge: element-wise sums of two timed edges, sums of
    /// two counts; a count added to a timed edge (never written by one profiler) keeps
    /// the timed numbers with the calls added.
    pub fn plus(self, other: EdgeStats) -> EdgeStats {
        match (self, other) {
            (
                Self::Timed {
                    calls: a,
                    primitive_calls: b,
                    tottime: c,
                    cumtime: d,
                },
                Self::Timed {
                    calls: e,
                    primitive_calls: f,
                    tottime: g,
                    cumtime: h,
                },
            ) => Self::Timed {
                calls: e.wrapping_add(a),
                primitive_calls: f.wrapping_add(b),
                tottime: g + c,
                cumtime: h + d,
            },
            (Self::Count { calls: a }, Self::Count { calls: b }) => Self::Count {
                calls: a.wrapping_add(b),
            },
            (
                Self::Timed {
                    calls,
                    primitive_calls,
                    tottime,
                    cumtime,
                },
                Self::Count { calls: n },
            )
            | (
                Self::Count { calls: n },
                Self::Timed {
                    calls,
                    primitive_calls,
                    tottime,
                    cumtime,
                },
            ) => Self::Timed {
                calls: calls.wrapping_add(n),
                primitive_calls,
                tottime,
                cumtime,
            },
        }
    }
}

/// One caller of a function and the numbers of its calls.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CallerEdge {
    /// The calling function.
    pub caller: FuncKey,
    /// The numbers of the calls it made.
    pub stats: EdgeStats,
}

/// One function's entry: `(cc, nc, tt, ct, callers)`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PstatsEntry {
    /// The function.
    pub func: FuncKey,
    /// Primitive (non-recursive) calls (`cc`).
    pub primitive_calls: i64,
    /// All calls (`nc`).
    pub calls: i64,
    /// Seconds in the function itself (`tt`).
    pub tottime: f64,
    /// Seconds in the function and everything it called (`ct`).
    pub cumtime: f64,
    /// Its callers, in file order.
    pub callers: Vec<CallerEdge>,
}

/// A pstats file read: its entries in file (dict) order.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PstatsProfile {
    /// The file it was read from.
    pub path: PathBuf,
    /// Bytes of the file (decompressed).
    pub file_bytes: u64,
    /// The functions, in the order the file lists them.
    pub entries: Vec<PstatsEntry>,
}
