//! Sort keys (`--sort`) and row limits (`--top`) for the memory tables.
//!
//! Operator keys sort the operator statistics, event keys the allocation events table;
//! the other table keeps its default order. Defaults: operators by self size increase
//! (the plugin's default), allocations by size; both largest first, ties by name or
//! allocation time.

use std::cmp::Reverse;
use std::fmt;
use std::str::FromStr;

use super::{Allocation, MemoryView, OpMemoryStats};
use crate::sort_key::sort_rows_by;

/// A column to sort by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SortKey {
    /// Operators: name, A→Z.
    Name,
    /// Operators: calls.
    Calls,
    /// Operators: size increase including children.
    Increase,
    /// Operators: self size increase (default).
    SelfIncrease,
    /// Operators: allocation count including children.
    AllocCount,
    /// Operators: self allocation count.
    SelfAllocCount,
    /// Operators: allocation size including children.
    AllocSize,
    /// Operators: self allocation size.
    SelfAllocSize,
    /// Allocations: size (default).
    Size,
    /// Allocations: allocation time, earliest first.
    AllocTime,
    /// Allocations: release time, earliest first.
    ReleaseTime,
    /// Allocations: lifetime, longest first.
    Lifetime,
}

const KEYS: [(&str, SortKey); 12] = [
    ("name", SortKey::Name),
    ("calls", SortKey::Calls),
    ("increase", SortKey::Increase),
    ("self_increase", SortKey::SelfIncrease),
    ("alloc_count", SortKey::AllocCount),
    ("self_alloc_count", SortKey::SelfAllocCount),
    ("alloc_size", SortKey::AllocSize),
    ("self_alloc_size", SortKey::SelfAllocSize),
    ("size", SortKey::Size),
    ("alloc_time", SortKey::AllocTime),
    ("release_time", SortKey::ReleaseTime),
    ("lifetime", SortKey::Lifetime),
];

impl SortKey {
    /// Every key with its spelling, operator keys first.
    pub const ALL: [(&'static str, SortKey); 12] = KEYS;

    /// Every key's name, operator keys first.
    pub fn names() -> impl Iterator<Item = &'static str> {
        KEYS.iter().map(|k| k.0)
    }

    /// Whether this key sorts the operator statistics (else the allocation events).
    pub fn is_operator_key(self) -> bool {
        !matches!(
            self,
            Self::Size | Self::AllocTime | Self::ReleaseTime | Self::Lifetime
        )
    }
}

impl fmt::Display for SortKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = KEYS.iter().find(|k| k.1 == *self).map_or("?", |k| k.0);
        f.write_str(name)
    }
}

impl FromStr for SortKey {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let l = s.trim().to_ascii_lowercase().replace('-', "_");
        KEYS.iter().find(|k| k.0 == l).map(|k| k.1).ok_or_else(|| {
            format!(
                "unknown sort key {s:?}; one of: {}",
                Self::names().collect::<Vec<_>>().join(", ")
            )
        })
    }
}

/// Sort operator rows by `key` (an allocation key sorts by the default).
pub fn sort_operators(rows: &mut [OpMemoryStats], key: SortKey) {
    let key = if key.is_operator_key() {
        key
    } else {
        SortKey::SelfIncrease
    };
    sort_rows_by(rows, |a, b| {
        let k = |s: &OpMemoryStats| -> i128 {
            match key {
                SortKey::Calls => s.calls as i128,
                SortKey::Increase => s.size_increase_bytes as i128,
                SortKey::AllocCount => s.allocation_count as i128,
                SortKey::SelfAllocCount => s.self_allocation_count as i128,
                SortKey::AllocSize => s.allocation_size_bytes as i128,
                SortKey::SelfAllocSize => s.self_allocation_size_bytes as i128,
                SortKey::Name => 0,
                _ => s.self_size_increase_bytes as i128,
            }
        };
        k(b).cmp(&k(a)).then_with(|| a.name.cmp(&b.name))
    });
}

/// Sort allocation rows by `key` (an operator key sorts by the default).
pub fn sort_allocations(rows: &mut [Allocation], key: SortKey) {
    let when = |r: &Allocation| r.alloc_ns.or(r.release_ns).unwrap_or(i64::MAX);
    match key {
        SortKey::AllocTime => sort_rows_by(rows, |a, b| {
            (a.alloc_ns.unwrap_or(i64::MIN), when(a))
                .cmp(&(b.alloc_ns.unwrap_or(i64::MIN), when(b)))
        }),
        SortKey::ReleaseTime => sort_rows_by(rows, |a, b| {
            (a.release_ns.unwrap_or(i64::MAX), when(a))
                .cmp(&(b.release_ns.unwrap_or(i64::MAX), when(b)))
        }),
        SortKey::Lifetime => sort_rows_by(rows, |a, b| {
            (Reverse(a.lifetime_ns), when(a)).cmp(&(Reverse(b.lifetime_ns), when(b)))
        }),
        _ => sort_rows_by(rows, |a, b| {
            (Reverse(a.bytes), when(a)).cmp(&(Reverse(b.bytes), when(b)))
        }),
    }
}

/// Sort every table of `view` (`key` `None`: the defaults) and keep the first `top` rows
/// of the operator and allocation tables (0 = all). The curve is not cut.
pub fn sort_and_limit(view: &mut MemoryView, key: Option<SortKey>, top: usize) {
    for d in &mut view.devices {
        sort_operators(&mut d.operators, key.unwrap_or(SortKey::SelfIncrease));
        sort_allocations(&mut d.allocations.rows, key.unwrap_or(SortKey::Size));
        if top > 0 {
            d.operators.truncate(top);
            d.allocations.rows.truncate(top);
        }
    }
}
