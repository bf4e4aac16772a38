//! Row keys: the operator name plus, depending on [`OpGroupBy`], the input shapes, the
//! call stack or the enclosing module. Keys are integer ids (interned strings, or ids of
//! distinct shapes / module paths); text is made only once per distinct key.

use kinetoscope_trace::{StrId, Trace};
use rustc_hash::FxHashMap;

use super::tree::{NodeKind, NodeTree, NONE};
use super::OpGroupBy;

/// The second half of a row key when there is nothing to show.
const ABSENT: u32 = u32::MAX;
/// Tag bit on a module key that holds a `Module Hierarchy` string id rather than a path.
const HIERARCHY_TAG: u32 = 1 << 31;

/// Makes the second half of row keys and turns them back into text.
pub(crate) struct Grouper {
    group_by: OpGroupBy,
    /// `Input Dims` string id → distinct canonical shape id.
    shape_of_dims: FxHashMap<StrId, u32>,
    /// Canonical shape texts, by id.
    shapes: Vec<String>,
    /// Canonical shape text → id.
    shape_ids: FxHashMap<String, u32>,
    /// Nearest enclosing module node per node ([`NONE`] when none); only for `Module`.
    module_of: Vec<u32>,
    /// Path id per module node ([`NONE`] for other nodes); only for `Module`.
    path_of_module: Vec<u32>,
    /// Module paths as (parent path or [`NONE`], module name).
    paths: Vec<(u32, StrId)>,
}

impl Grouper {
    /// Prepare keys for one trace's tree.
    pub(crate) fn new(trace: &Trace, tree: &NodeTree, group_by: OpGroupBy) -> Self {
        let mut g = Self {
            group_by,
            shape_of_dims: FxHashMap::default(),
            shapes: Vec::new(),
            shape_ids: FxHashMap::default(),
            module_of: Vec::new(),
            path_of_module: Vec::new(),
            paths: Vec::new(),
        };
        if group_by == OpGroupBy::Module {
            g.build_modules(trace, tree);
        }
        g
    }

    fn build_modules(&mut self, trace: &Trace, tree: &NodeTree) {
        let mut path_ids: FxHashMap<(u32, StrId), u32> = FxHashMap::default();
        self.module_of = vec![NONE; tree.len()];
        self.path_of_module = vec![NONE; tree.len()];
        // Pre-order: an enclosing module always comes before what it encloses.
        for idx in 0..tree.len() {
            let p = tree.parent[idx];
            if p != NONE {
                self.module_of[idx] = if tree.kind[p as usize] == NodeKind::Module {
                    p
                } else {
                    self.module_of[p as usize]
                };
            }
            if tree.kind[idx] == NodeKind::Module {
                let outer = self.module_of[idx];
                let parent_path = if outer == NONE {
                    NONE
                } else {
                    self.path_of_module[outer as usize]
                };
                let name = trace.events.name[tree.event[idx] as usize];
                let next = self.paths.len() as u32;
                let id = *path_ids.entry((parent_path, name)).or_insert(next);
                if id == next {
                    self.paths.push((parent_path, name));
                }
                self.path_of_module[idx] = id;
            }
        }
    }

    /// The second half of the row key of node `idx`.
    pub(crate) fn key(&mut self, trace: &Trace, tree: &NodeTree, idx: usize) -> u32 {
        let args = match tree.arg[idx] {
            NONE => None,
            a => Some(&trace.args.op[a as usize]),
        };
        match self.group_by {
            OpGroupBy::Name => ABSENT,
            OpGroupBy::Shape => {
                let dims = args.map_or(StrId(u32::MAX), |a| a.input_dims);
                if let Some(&id) = self.shape_of_dims.get(&dims) {
                    return id;
                }
                let text = if dims.0 == u32::MAX {
                    String::new()
                } else {
                    canonical_shape(trace.strings.get(dims))
                };
                let next = self.shapes.len() as u32;
                let id = *self.shape_ids.entry(text.clone()).or_insert(next);
                if id == next {
                    self.shapes.push(text);
                }
                self.shape_of_dims.insert(dims, id);
                id
            }
            OpGroupBy::Stack => match args {
                Some(a) if !trace.strings.get(a.call_stack).is_empty() => a.call_stack.0,
                _ => ABSENT,
            },
            OpGroupBy::Module => {
                let m = self.module_of.get(idx).copied().unwrap_or(NONE);
                if m != NONE {
                    return self.path_of_module[m as usize];
                }
                match args {
                    Some(a) if !trace.strings.get(a.module_hierarchy).is_empty() => {
                        a.module_hierarchy.0 | HIERARCHY_TAG
                    }
                    _ => ABSENT,
                }
            }
        }
    }

    /// The text of a key's second half (`None` for name grouping and absent values).
    pub(crate) fn label(&self, trace: &Trace, key: u32) -> Option<String> {
        if key == ABSENT {
            return None;
        }
        match self.group_by {
            OpGroupBy::Name => None,
            OpGroupBy::Shape => Some(self.shapes[key as usize].clone()),
            OpGroupBy::Stack => Some(trace.strings.get(StrId(key)).to_owned()),
            OpGroupBy::Module => {
                if key & HIERARCHY_TAG != 0 {
                    return Some(trace.strings.get(StrId(key & !HIERARCHY_TAG)).to_owned());
                }
                let mut names = Vec::new();
                let mut at = key;
                while at != NONE {
                    let (parent, name) = self.paths[at as usize];
                    let text = trace.strings.get(name);
                    names.push(text.strip_prefix("nn.Module: ").unwrap_or(text));
                    at = parent;
                }
                names.reverse();
                Some(names.join("/"))
            }
        }
    }
}

/// An `Input Dims` JSON text as Python prints the parsed list (the plugin's
/// `str(input_shape)`): no whitespace except one space after each comma. A missing value
/// is `[]`, as in the plugin.
pub(crate) fn canonical_shape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_whitespace() {
            continue;
        }
        out.push(c);
        if c == ',' {
            out.push(' ');
        }
    }
    if out.is_empty() {
        out.push_str("[]");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::canonical_shape;

    #[test]
    fn shapes_print_like_python() {
        assert_eq!(
            canonical_shape("[[32, 3, 224, 224], []]"),
            "[[32, 3, 224, 224], []]"
        );
        assert_eq!(canonical_shape("[[32,3],\n [4]]"), "[[32, 3], [4]]");
        assert_eq!(canonical_shape(""), "[]");
    }
}
