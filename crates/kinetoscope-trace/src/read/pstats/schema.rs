//! The pstats schema over decoded marshal values: `{(file, line, name): (cc, nc, tt, ct,
//! {caller: (nc, cc, tt, ct) or nc})}`. Walks a fixed depth and spends a budget of the
//! bytes it builds (every entry, edge and copied name), so references that share one big
//! value many times cannot multiply the work or the memory.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;

use hashbrown::HashTable;

use super::marshal::{Marshal, Obj, Val};
use crate::model::{CallerEdge, EdgeStats, FuncKey, PstatsEntry};

/// A schema error: what was wrong and the byte offset of the value at fault.
pub(crate) struct SchemaError {
    pub offset: u64,
    pub message: String,
}

type Res<T> = Result<T, SchemaError>;

pub(crate) struct Schema<'m> {
    m: &'m Marshal,
    work: u64,
    /// Offset of the innermost container being walked: where a scalar at fault is.
    at: u64,
}

impl<'m> Schema<'m> {
    /// A walk of `m` allowed `work` units.
    pub fn new(m: &'m Marshal, work: u64) -> Self {
        Self { m, work, at: 0 }
    }

    fn err<T>(&self, v: &Val, message: String) -> Res<T> {
        Err(SchemaError {
            offset: self.offset(v),
            message,
        })
    }

    fn offset(&self, v: &Val) -> u64 {
        match v {
            Val::Obj(i) => self.m.offsets.get(*i as usize).copied().unwrap_or(self.at),
            _ => self.at,
        }
    }

    fn spend(&mut self, v: &Val, units: u64) -> Res<()> {
        match self.work.checked_sub(units) {
            Some(w) => {
                self.work = w;
                Ok(())
            }
            None => self.err(
                v,
                "references multiply the work past 8 bytes built per input byte: refused".into(),
            ),
        }
    }

    fn obj(&self, v: &Val) -> Option<&'m Obj> {
        match v {
            Val::Obj(i) => self.m.objects.get(*i as usize),
            _ => None,
        }
    }

    /// The entries of the root dict, in file order (a repeated key keeps its first place
    /// and its last value, as a Python dict does).
    pub fn entries(&mut self) -> Res<Vec<PstatsEntry>> {
        let root = self.m.root.clone().unwrap_or(Val::None);
        let Some(Obj::Dict(items)) = self.obj(&root) else {
            return self.err(
                &root,
                format!("the top level is {}, not a dict", self.kind(&root)),
            );
        };
        let mut out: Vec<PstatsEntry> = Vec::new();
        let mut index = KeyIndex::default();
        for (k, v) in items {
            self.at = self.offset(&root);
            self.spend(&root, ENTRY_BYTES)?;
            let func = self.func(k)?;
            let entry = self.entry(func, v)?;
            match index.find(&entry.func, |i| &out[i].func) {
                Some(i) => out[i] = entry,
                None => {
                    index.insert(&entry.func, out.len(), |i| &out[i].func);
                    out.push(entry);
                }
            }
        }
        Ok(out)
    }

    fn kind(&self, v: &Val) -> &'static str {
        match v {
            Val::None => "None",
            Val::Bool(_) => "a bool",
            Val::Int(_) | Val::BigInt => "an int",
            Val::Float(_) => "a float",
            Val::Str(_) => "a str",
            Val::Obj(_) => self.obj(v).map_or("?", Obj::type_name),
        }
    }

    fn tuple(&self, v: &Val, len: usize, what: &str) -> Res<&'m [Val]> {
        match self.obj(v) {
            Some(Obj::Tuple(items)) if items.len() == len => Ok(items),
            _ => self.err(
                v,
                format!("{what} is {}, not a tuple of {len}", self.kind(v)),
            ),
        }
    }

    fn func(&mut self, v: &Val) -> Res<FuncKey> {
        let t = self.tuple(v, 3, "a function key")?;
        let (Val::Str(file), Some(line), Val::Str(name)) = (&t[0], int(&t[1]), &t[2]) else {
            return self.err(v, "a function key is not (str, int, str)".into());
        };
        self.spend(v, file.len() as u64 + name.len() as u64)?;
        Ok(FuncKey {
            file: file.to_string(),
            line,
            name: name.to_string(),
        })
    }

    fn entry(&mut self, func: FuncKey, v: &Val) -> Res<PstatsEntry> {
        let t = self.tuple(v, 5, "a function's stats")?;
        self.at = self.offset(v);
        let (Some(cc), Some(nc), Some(tt), Some(ct)) =
            (int(&t[0]), int(&t[1]), num(&t[2]), num(&t[3]))
        else {
            return self.err(
                v,
                "a function's stats are not (int, int, number, number, dict)".into(),
            );
        };
        let Some(Obj::Dict(items)) = self.obj(&t[4]) else {
            return self.err(
                v,
                format!("a function's callers are {}, not a dict", self.kind(&t[4])),
            );
        };
        let mut callers: Vec<CallerEdge> = Vec::new();
        let mut index = KeyIndex::default();
        for (k, e) in items {
            self.spend(&t[4], EDGE_BYTES)?;
            let caller = self.func(k)?;
            let stats = self.edge(e)?;
            match index.find(&caller, |i| &callers[i].caller) {
                Some(i) => callers[i].stats = stats,
                None => {
                    index.insert(&caller, callers.len(), |i| &callers[i].caller);
                    callers.push(CallerEdge { caller, stats });
                }
            }
        }
        Ok(PstatsEntry {
            func,
            primitive_calls: cc,
            calls: nc,
            tottime: tt,
            cumtime: ct,
            callers,
        })
    }

    fn edge(&mut self, v: &Val) -> Res<EdgeStats> {
        if let Some(calls) = int(v) {
            return Ok(EdgeStats::Count { calls });
        }
        let t = self.tuple(v, 4, "a caller's stats")?;
        match (int(&t[0]), int(&t[1]), num(&t[2]), num(&t[3])) {
            (Some(calls), Some(primitive_calls), Some(tottime), Some(cumtime)) => {
                Ok(EdgeStats::Timed {
                    calls,
                    primitive_calls,
                    tottime,
                    cumtime,
                })
            }
            _ => self.err(
                v,
                "a caller's stats are not (int, int, number, number)".into(),
            ),
        }
    }
}

/// Bytes one entry costs besides its names (the entry, its slot in the index).
const ENTRY_BYTES: u64 = (std::mem::size_of::<PstatsEntry>() + 8) as u64;
/// Bytes one caller edge costs besides its names.
const EDGE_BYTES: u64 = (std::mem::size_of::<CallerEdge>() + 8) as u64;

/// Positions of function keys in a list, without copying the keys: a hash table of
/// indexes hashed by the key they point at (with a random seed: keys are untrusted).
#[derive(Default)]
struct KeyIndex {
    table: HashTable<usize>,
    hasher: RandomState,
}

impl KeyIndex {
    fn find<'k>(&self, key: &FuncKey, at: impl Fn(usize) -> &'k FuncKey) -> Option<usize> {
        let h = self.hasher.hash_one(key);
        self.table.find(h, |&i| at(i) == key).copied()
    }

    fn insert<'k>(&mut self, key: &FuncKey, i: usize, at: impl Fn(usize) -> &'k FuncKey) {
        let h = self.hasher.hash_one(key);
        let hasher = &self.hasher;
        self.table.insert_unique(h, i, |&j| hasher.hash_one(at(j)));
    }
}

/// An int (a bool counts, as in Python).
fn int(v: &Val) -> Option<i64> {
    match *v {
        Val::Int(i) => Some(i),
        Val::Bool(b) => Some(b.into()),
        _ => None,
    }
}

/// A float or an int, as seconds.
fn num(v: &Val) -> Option<f64> {
    match *v {
        Val::Float(x) => Some(x),
        _ => int(v).map(|i| i as f64),
    }
}
