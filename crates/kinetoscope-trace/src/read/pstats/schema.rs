//! The pstats schema over decoded marshal values: `{(file, line, name): (cc, nc, tt, ct,
//! {caller: (nc, cc, tt, ct) or nc})}`. Walks a fixed depth and spends a work budget
//! (one unit per item, one per byte of text copied), so references that share one big
//! value many times cannot multiply the work or the memory.

use std::collections::HashMap;

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
                "references multiply the work past 4 units per input byte: refused".into(),
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
        let mut index: HashMap<FuncKey, usize> = HashMap::new();
        for (k, v) in items {
            self.at = self.offset(&root);
            self.spend(&root, 1)?;
            let func = self.func(k)?;
            let entry = self.entry(func, v)?;
            match index.get(&entry.func) {
                Some(&i) => out[i] = entry,
                None => {
                    index.insert(entry.func.clone(), out.len());
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
        self.spend(v, 3 + file.len() as u64 + name.len() as u64)?;
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
        let mut index: HashMap<FuncKey, usize> = HashMap::new();
        for (k, e) in items {
            self.spend(&t[4], 1)?;
            let caller = self.func(k)?;
            let stats = self.edge(e)?;
            match index.get(&caller) {
                Some(&i) => callers[i].stats = stats,
                None => {
                    index.insert(caller.clone(), callers.len());
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
        self.spend(v, 4)?;
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
