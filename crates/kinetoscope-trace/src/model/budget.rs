//! The memory budget of the readers: the bytes the models they build may hold (a trace's
//! columns, strings and tables; a snapshot's bytes; a timeline's rows), shared by every
//! read that uses the same [`MemoryBudget`]. Growth is reserved fallibly and taken from
//! the budget first, so running out is a [`MemoryError`] saying how much was needed,
//! never an allocation abort.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Reading needed more memory than the budget has left, or than the allocator gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryError {
    /// Bytes the failed step needed.
    pub needed: u64,
    /// Bytes the readers held from the budget at the time.
    pub in_use: u64,
    /// The budget, when one is set; `None` when the allocator refused.
    pub limit: Option<u64>,
}

impl MemoryError {
    /// The allocator refused `bytes`.
    pub fn refused(bytes: u64) -> Self {
        Self {
            needed: bytes,
            in_use: 0,
            limit: None,
        }
    }
}

impl std::fmt::Display for MemoryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
        match self.limit {
            Some(limit) => write!(
                f,
                "out of memory: reading needs {:.1} MiB more, {:.1} MiB of the {:.1} MiB budget are in use",
                mib(self.needed),
                mib(self.in_use),
                mib(limit)
            ),
            None => write!(
                f,
                "out of memory: the system refused {:.1} MiB",
                mib(self.needed)
            ),
        }
    }
}

struct Shared {
    limit: Option<u64>,
    used: AtomicU64,
}

/// A limit on what the readers' models hold, shared by all reads given a clone of it.
#[derive(Clone)]
pub struct MemoryBudget(Arc<Shared>);

impl std::fmt::Debug for MemoryBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryBudget")
            .field("limit", &self.0.limit)
            .field("used", &self.used())
            .finish()
    }
}

impl Default for MemoryBudget {
    /// A budget of [`default_limit`].
    fn default() -> Self {
        Self::new(default_limit())
    }
}

impl MemoryBudget {
    /// A budget of `limit` bytes; `None` for no limit (allocation failures are still
    /// errors).
    pub fn new(limit: Option<u64>) -> Self {
        Self(Arc::new(Shared {
            limit,
            used: AtomicU64::new(0),
        }))
    }

    /// The limit, if any.
    pub fn limit(&self) -> Option<u64> {
        self.0.limit
    }

    /// Bytes held now by the models charged to this budget.
    pub fn used(&self) -> u64 {
        self.0.used.load(Ordering::Relaxed)
    }

    /// Take `bytes`, or fail without taking anything when that would pass the limit.
    fn take(&self, bytes: u64) -> Result<(), MemoryError> {
        let Some(limit) = self.0.limit else {
            self.0.used.fetch_add(bytes, Ordering::Relaxed);
            return Ok(());
        };
        self.0
            .used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                used.checked_add(bytes).filter(|&u| u <= limit)
            })
            .map(|_| ())
            .map_err(|in_use| MemoryError {
                needed: bytes,
                in_use,
                limit: Some(limit),
            })
    }
}

/// The bytes one model took from a budget; given back when it is dropped. The default
/// charges nothing to no budget (allocation failures are still errors).
#[derive(Default)]
pub(crate) struct Charge {
    budget: Option<MemoryBudget>,
    bytes: u64,
    refused: Option<MemoryError>,
}

impl Charge {
    /// A charge against `budget`, empty.
    pub fn new(budget: &MemoryBudget) -> Self {
        Self {
            budget: Some(budget.clone()),
            bytes: 0,
            refused: None,
        }
    }

    /// Take `bytes` more from the budget.
    pub fn take(&mut self, bytes: u64) -> Result<(), MemoryError> {
        if let Some(b) = &self.budget {
            if let Err(e) = b.take(bytes) {
                self.refused = Some(e);
                return Err(e);
            }
        }
        self.bytes += bytes;
        Ok(())
    }

    /// The bytes taken so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The last growth refused (by the budget or the allocator), if any: for readers
    /// whose errors pass through a parser's own error type.
    pub fn refused(&self) -> Option<MemoryError> {
        self.refused
    }
}

impl std::fmt::Debug for Charge {
    /// Left out of a model's debug text: it depends on how the model grew.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Charge")
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        if let Some(b) = &self.budget {
            b.0.used.fetch_sub(self.bytes, Ordering::Relaxed);
        }
    }
}

/// Make room in `v` for `add` more items: the growth (at least doubling) is taken from
/// `charge` first, then reserved fallibly.
pub(crate) fn grow<T>(v: &mut Vec<T>, add: usize, charge: &mut Charge) -> Result<(), MemoryError> {
    let need = v.len().saturating_add(add);
    if need <= v.capacity() {
        return Ok(());
    }
    let cap = need.max(v.capacity().saturating_mul(2)).max(16);
    let bytes = ((cap - v.capacity()) as u64).saturating_mul(std::mem::size_of::<T>() as u64);
    charge.take(bytes)?;
    v.try_reserve_exact(cap - v.len()).map_err(|_| {
        let e = MemoryError::refused(bytes);
        charge.refused = Some(e);
        e
    })
}

/// The default budget: three quarters of the physical memory or of the cgroup's memory
/// limit, and half of the address-space or data-segment limit (`ulimit -v`, `-d`),
/// whichever is smallest; `None` where none of them can be read. Half, because mapped
/// input, thread stacks and allocator arenas count toward an address-space limit too.
pub fn default_limit() -> Option<u64> {
    let physical = meminfo_total().map(|b| b / 4 * 3);
    let cgroup = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .map(|b| b / 4 * 3);
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    let rlimit = |name: &str| {
        limits
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| {
                l[name.len()..]
                    .split_whitespace()
                    .next()?
                    .parse::<u64>()
                    .ok()
            })
            .map(|b| b / 2)
    };
    [
        physical,
        cgroup,
        rlimit("Max address space"),
        rlimit("Max data size"),
    ]
    .into_iter()
    .flatten()
    .min()
}

fn meminfo_total() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_are_shared_refused_past_the_limit_and_given_back() {
        let budget = MemoryBudget::new(Some(1000));
        assert_eq!(budget.limit(), Some(1000));
        let mut a = Charge::new(&budget);
        let mut b = Charge::new(&budget);
        a.take(600).unwrap();
        let e = b.take(500).unwrap_err();
        assert_eq!((e.needed, e.in_use, e.limit), (500, 600, Some(1000)));
        b.take(400).unwrap();
        assert_eq!(budget.used(), 1000);
        drop(a);
        assert_eq!(budget.used(), 400);
        let mut v: Vec<u64> = Vec::new();
        assert!(grow(&mut v, 50, &mut b).is_ok());
        assert!(v.capacity() >= 50);
        assert_eq!(budget.used(), 800);
        assert!(
            grow(&mut v, 1000, &mut b).is_err(),
            "8 KB past a 1 KB budget"
        );
        drop(b);
        assert_eq!(budget.used(), 0);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_default_limit_is_under_the_physical_memory() {
        let total = meminfo_total().expect("/proc/meminfo");
        let limit = default_limit().expect("a limit on Linux");
        assert!(limit <= total / 4 * 3, "{limit} of {total}");
        assert_eq!(MemoryBudget::default().limit(), Some(limit));
    }

    #[test]
    fn a_huge_reservation_is_an_error_not_an_abort() {
        let mut v: Vec<u64> = Vec::new();
        let grown = grow(&mut v, usize::MAX / 16, &mut Charge::default());
        // Observed, so that an optimised build cannot drop the unused allocation (and
        // with it the failure) as it may drop any allocation nothing reads.
        std::hint::black_box(&v);
        assert_eq!(grown.unwrap_err().limit, None);
    }
}
