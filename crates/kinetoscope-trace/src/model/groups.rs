//! Items grouped by a small key (a track, a thread), each group in the order the items
//! came: a counting sort into one vector. File order interleaves a trace's threads, so
//! the analyses that put each thread's spans in time order group them first and sort
//! each group on its own (short, nearly sorted runs) instead of sorting everything.

/// Items grouped by key, each group in input order.
#[derive(Clone, Debug, Default)]
pub struct Groups<T> {
    /// Where each group begins in `items` (one more entry than groups).
    starts: Vec<usize>,
    /// The items, group by group.
    items: Vec<T>,
}

impl<T: Copy + Default> Groups<T> {
    /// Group the `(key, item)` pairs that `visit` hands to its argument (it is called
    /// twice: to count, then to place, and must hand the same pairs both times) into
    /// `groups` groups; pairs whose key is `groups` or more are left out. (Pairs left
    /// out of the second call only leave the end of their group at `T::default()`.)
    pub fn build(groups: usize, visit: impl Fn(&mut dyn FnMut(usize, T))) -> Self {
        let mut starts = vec![0usize; groups + 1];
        visit(&mut |key, _| {
            if key < groups {
                starts[key + 1] += 1;
            }
        });
        for g in 0..groups {
            starts[g + 1] += starts[g];
        }
        let mut next = starts.clone();
        let mut items = vec![T::default(); starts[groups]];
        visit(&mut |key, item| {
            if key < groups {
                items[next[key]] = item;
                next[key] += 1;
            }
        });
        Self { starts, items }
    }
}

impl<T> Groups<T> {
    /// Number of groups.
    pub fn len(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// Whether there are no groups.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Where group `g` lies in [`Self::items`].
    pub fn range(&self, g: usize) -> std::ops::Range<usize> {
        self.starts[g]..self.starts[g + 1]
    }

    /// The items of group `g`, to sort them.
    pub fn group_mut(&mut self, g: usize) -> &mut [T] {
        let r = self.range(g);
        &mut self.items[r]
    }

    /// Every item, group by group.
    pub fn items(&self) -> &[T] {
        &self.items
    }

    /// Every item, group by group, owned.
    pub fn into_items(self) -> Vec<T> {
        self.items
    }
}

#[cfg(test)]
mod tests {
    use super::Groups;

    #[test]
    fn groups_keep_input_order_and_drop_keys_out_of_range() {
        let pairs = [
            (2usize, 'a'),
            (0, 'b'),
            (2, 'c'),
            (5, 'x'),
            (0, 'd'),
            (1, 'e'),
        ];
        let g = Groups::build(3, |put| pairs.iter().for_each(|&(k, v)| put(k, v)));
        assert_eq!(g.len(), 3);
        assert_eq!(g.items(), ['b', 'd', 'e', 'a', 'c']);
        assert_eq!((g.range(0), g.range(1), g.range(2)), (0..2, 2..3, 3..5));
        let empty: Groups<char> = Groups::build(0, |_| {});
        assert!(empty.is_empty() && empty.items().is_empty());
    }
}
