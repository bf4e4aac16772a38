//! Questions about the operator forest answered for every call at once, in one pass
//! each, so that no analysis walks a call's ancestors per record (a walk per record is
//! quadratic on deeply nested operators).

use super::OpForest;

/// Each call's subtree as a range of a depth-first numbering: `inner` is in the subtree
/// of `outer` exactly when its number falls in `outer`'s range.
#[derive(Clone, Debug, Default)]
pub struct Subtrees {
    /// Depth-first (pre-order) number of each call.
    pre: Vec<u32>,
    /// Calls in each call's subtree, itself included.
    size: Vec<u32>,
}

impl Subtrees {
    /// Whether `inner` is `outer` or nested in it.
    pub fn contains(&self, outer: u32, inner: u32) -> bool {
        let (o, i) = (outer as usize, inner as usize);
        let (Some(&po), Some(&pi)) = (self.pre.get(o), self.pre.get(i)) else {
            return false;
        };
        po <= pi && pi - po < self.size[o]
    }
}

impl OpForest {
    /// The parent of a call when it comes before the call (the forest's invariant); a
    /// parent that does not is treated as none, so a malformed forest cannot loop.
    fn earlier_parent(&self, node: usize) -> Option<usize> {
        self.nodes[node]
            .parent
            .map(|p| p as usize)
            .filter(|&p| p < node)
    }

    /// The subtree ranges of every call, in O(n): sizes bottom-up, then numbers
    /// top-down (a call's parent always has a smaller index).
    pub fn subtrees(&self) -> Subtrees {
        let n = self.nodes.len();
        let mut size = vec![1u32; n];
        for k in (0..n).rev() {
            if let Some(p) = self.earlier_parent(k) {
                size[p] += size[k];
            }
        }
        let mut pre = vec![0u32; n];
        // The next number free for a call's next child.
        let mut next_child = vec![0u32; n];
        let mut next_root = 0u32;
        for k in 0..n {
            let slot = match self.earlier_parent(k) {
                Some(p) => &mut next_child[p],
                None => &mut next_root,
            };
            pre[k] = *slot;
            *slot += size[k];
            next_child[k] = pre[k] + 1;
        }
        Subtrees { pre, size }
    }

    /// A value for every call computed from its own name and its parent's value, parents
    /// first: `f(name, parent value)` (`None` for a root). One pass, O(n).
    pub fn fold_down<T: Clone>(&self, mut f: impl FnMut(u32, Option<&T>, u32) -> T) -> Vec<T> {
        let mut out: Vec<T> = Vec::with_capacity(self.nodes.len());
        for k in 0..self.nodes.len() {
            let v = f(
                self.nodes[k].name,
                self.earlier_parent(k).map(|p| &out[p]),
                k as u32,
            );
            out.push(v);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::OpNode;
    use super::*;

    /// A forest from parents, with nested subtrees interleaved in index order.
    fn forest(parents: &[Option<u32>]) -> OpForest {
        OpForest {
            names: vec!["op".to_owned()],
            nodes: parents
                .iter()
                .map(|&parent| OpNode { name: 0, parent })
                .collect(),
            calls: vec![parents.len() as u64],
        }
    }

    fn walk_contains(f: &OpForest, outer: u32, inner: u32) -> bool {
        let mut n = Some(inner);
        while let Some(k) = n {
            if k == outer {
                return true;
            }
            n = f.parent_of(k);
        }
        false
    }

    #[test]
    fn subtrees_agree_with_walking_the_parents() {
        // 0 ─ 1 ─ 3 ─ 6      2 ─ 5    7
        //   └ 4             (roots 0, 2, 7; subtrees interleave by index)
        let f = forest(&[
            None,
            Some(0),
            None,
            Some(1),
            Some(0),
            Some(2),
            Some(3),
            None,
        ]);
        let s = f.subtrees();
        for o in 0..8 {
            for i in 0..8 {
                assert_eq!(s.contains(o, i), walk_contains(&f, o, i), "{o} ⊇ {i}");
            }
        }
        assert!(!s.contains(0, 99));
    }

    #[test]
    fn a_parent_after_its_child_is_ignored() {
        let f = forest(&[Some(1), None]);
        let s = f.subtrees();
        assert!(!s.contains(1, 0));
        let depth = f.fold_down(|_, p: Option<&u32>, _| p.map_or(0, |d| d + 1));
        assert_eq!(depth, vec![0, 0]);
    }

    #[test]
    fn a_million_deep_chain_is_linear() {
        let n = 1_000_000u32;
        let f = forest(
            &std::iter::once(None)
                .chain((1..n).map(|k| Some(k - 1)))
                .collect::<Vec<_>>(),
        );
        let s = f.subtrees();
        assert!(s.contains(0, n - 1) && !s.contains(n - 1, 0));
        let depth = f.fold_down(|_, p: Option<&u32>, _| p.map_or(0, |d| d + 1));
        assert_eq!(depth[n as usize - 1], n - 1);
    }
}
