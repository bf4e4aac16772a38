//! The first node on the way from a node up to its root that passes a test which, once
//! passed, stays passed up to the root (such as "still running at time t": a span's end
//! only grows towards the outer spans). Skew-binary jump pointers (one extra pointer per
//! node) find it in O(log depth), so queries stay cheap however deep the nesting.

/// No parent.
const NONE: u32 = u32::MAX;

/// A forest with jump pointers.
#[derive(Clone, Debug, Default)]
pub struct UpSearch {
    /// The parent of each node (an earlier node), or [`NONE`].
    parent: Vec<u32>,
    /// An ancestor farther up the path (the node itself at a root).
    jump: Vec<u32>,
    /// Number of ancestors.
    depth: Vec<u32>,
}

impl UpSearch {
    /// A forest from each node's parent, which must come before it (a parent at or after
    /// its child is taken as none, so a malformed forest cannot loop).
    pub fn new(parents: impl ExactSizeIterator<Item = Option<usize>>) -> Self {
        let n = parents.len();
        let mut s = Self {
            parent: Vec::with_capacity(n),
            jump: Vec::with_capacity(n),
            depth: Vec::with_capacity(n),
        };
        for (k, p) in parents.enumerate() {
            match p.filter(|&p| p < k) {
                None => {
                    s.parent.push(NONE);
                    s.jump.push(k as u32);
                    s.depth.push(0);
                }
                Some(p) => {
                    let j = s.jump[p] as usize;
                    let jj = s.jump[j] as usize;
                    let jump = if s.depth[p] - s.depth[j] == s.depth[j] - s.depth[jj] {
                        jj
                    } else {
                        p
                    };
                    s.parent.push(p as u32);
                    s.jump.push(jump as u32);
                    s.depth.push(s.depth[p] + 1);
                }
            }
        }
        s
    }

    /// The parent of node `k`, when it has one.
    pub fn parent(&self, k: usize) -> Option<usize> {
        self.parent
            .get(k)
            .copied()
            .filter(|&p| p != NONE)
            .map(|p| p as usize)
    }

    /// The first node from `k` (itself included) up to its root that passes `test`,
    /// which must hold for every ancestor of a node that passes it; `Err(root)` when
    /// none does. O(log depth) tests.
    pub fn first_up(&self, mut k: usize, test: impl Fn(usize) -> bool) -> Result<usize, usize> {
        loop {
            if test(k) {
                return Ok(k);
            }
            let Some(p) = self.parent(k) else {
                return Err(k);
            };
            let j = self.jump[k] as usize;
            k = if self.depth[j] < self.depth[k] && !test(j) {
                j
            } else {
                p
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain `0 ← 1 ← … ← n-1` with a branch at every third node, `end` growing up.
    fn forest(n: usize) -> (Vec<Option<usize>>, Vec<i64>) {
        let parents: Vec<Option<usize>> = (0..n)
            .map(|k| match k {
                0 => None,
                k if k % 3 == 0 => Some(k - 2),
                k => Some(k - 1),
            })
            .collect();
        let mut end = vec![0i64; n];
        for k in (0..n).rev() {
            end[k] += 1 + k as i64 % 2;
            if let Some(p) = parents[k] {
                end[p] = end[p].max(end[k]);
            }
        }
        (parents, end)
    }

    #[test]
    fn agrees_with_walking_up() {
        let (parents, end) = forest(300);
        let s = UpSearch::new(parents.iter().copied());
        for k in 0..parents.len() {
            for t in [0, 1, 2, 5, 40, 150, 400] {
                let mut walk = k;
                let want = loop {
                    if end[walk] > t {
                        break Ok(walk);
                    }
                    match parents[walk] {
                        Some(p) => walk = p,
                        None => break Err(walk),
                    }
                };
                assert_eq!(s.first_up(k, |x| end[x] > t), want, "node {k}, t {t}");
            }
        }
    }

    #[test]
    fn a_deep_chain_needs_few_tests() {
        let n: usize = 1 << 20;
        let s = UpSearch::new((0..n).map(|k| k.checked_sub(1)));
        let tests = std::cell::Cell::new(0u32);
        let found = s.first_up(n - 1, |x| {
            tests.set(tests.get() + 1);
            x < 5
        });
        assert_eq!(found, Ok(4));
        assert!(tests.get() < 200, "{} tests", tests.get());
        assert_eq!(s.first_up(n - 1, |_| false), Err(0));
        assert_eq!(s.parent(0), None);
        let bad = UpSearch::new([Some(1), None].into_iter());
        assert_eq!(bad.parent(0), None);
    }
}
