//! Kernel classes (HTA's) and the per-class kernel breakdown (HTA's
//! `get_gpu_kernel_breakdown` and `get_comm_comp_overlap`): per rank, time in computation,
//! communication and memory kernels, the time where classes overlap, and the top kernels of
//! each class.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use kinetoscope_trace::{StrId, Trace};

use super::{merge_sorted, select, Compat, GpuRows, Window};

/// A kernel class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KernelClass {
    /// Computation (neither communication, memory nor sync).
    Computation,
    /// Collective communication (NCCL, RCCL, HCCL).
    Communication,
    /// Memory copies and sets.
    Memory,
    /// Everything else (sync events, launch calls seen on a stream).
    Other,
}

impl KernelClass {
    /// The three classes HTA's breakdown reports, in its order (bits 1, 2, 4).
    pub const REPORTED: [KernelClass; 3] = [Self::Computation, Self::Communication, Self::Memory];

    /// HTA's upper-case label.
    pub fn label(self) -> &'static str {
        match self {
            Self::Computation => "COMPUTATION",
            Self::Communication => "COMMUNICATION",
            Self::Memory => "MEMORY",
            Self::Other => "OTHER",
        }
    }

    fn from_u8(v: u8) -> Self {
        match v {
            0 => Self::Computation,
            1 => Self::Communication,
            2 => Self::Memory,
            _ => Self::Other,
        }
    }
}

/// Which name rules classify kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClassRules {
    /// HTA 0.5.0 (`HolisticTraceAnalysis`), used by `--hta-compat`.
    Hta050,
    /// HTA 0.6 (`traceinsight`): also `ncclDevKernel_*`, RCCL, HCCL, DMA; `Stream Wait
    /// Event` is not computation. kinetoscope's default.
    Hta06,
}

impl ClassRules {
    /// The rules a mode uses.
    pub fn of(compat: Compat) -> Self {
        match compat {
            Compat::Kinetoscope => Self::Hta06,
            Compat::Hta => Self::Hta050,
        }
    }
}

/// `re.match(r"^nccl.*Kernel", name)`.
fn nccl_kernel(name: &str) -> bool {
    name.strip_prefix("nccl")
        .is_some_and(|rest| rest.contains("Kernel"))
}

/// Classify a kernel (or memcpy / memset / sync) name with HTA's anchored, case-sensitive
/// regexes: the first of communication, memory, computation that matches.
pub fn classify(name: &str, rules: ClassRules) -> KernelClass {
    match rules {
        ClassRules::Hta050 => {
            if nccl_kernel(name) {
                KernelClass::Communication
            } else if ["Memcpy", "Memset", "dma"]
                .iter()
                .any(|p| name.starts_with(p))
            {
                KernelClass::Memory
            } else if !(name.contains("Memcpy")
                || name.starts_with("Memset")
                || name.contains("Sync"))
            {
                KernelClass::Computation
            } else {
                KernelClass::Other
            }
        }
        ClassRules::Hta06 => {
            if ["nccl", "hip", "hccl"].iter().any(|p| name.starts_with(p))
                || name.contains("ncclKernel")
            {
                KernelClass::Communication
            } else if ["Memcpy", "hipMemcpy", "Memset", "hipMemset", "dma"]
                .iter()
                .any(|p| name.starts_with(p))
            {
                KernelClass::Memory
            } else if ["Memcpy", "Memset", "dma", "Sync"]
                .iter()
                .any(|p| name.contains(p))
                || [
                    "nccl",
                    "Stream Wait Event",
                    "runFunction",
                    "hip",
                    "job_exe",
                    "packet",
                    "pe_exe",
                    "cpum_exe_subgraph",
                    "hccl",
                    "collective_subgraph_execution",
                ]
                .iter()
                .any(|p| name.starts_with(p))
                || name
                    .strip_prefix("cuda")
                    .is_some_and(|r| r.contains("LaunchKernel"))
            {
                KernelClass::Other
            } else {
                KernelClass::Computation
            }
        }
    }
}

/// Class per interned name, computed once per name.
pub(crate) struct ClassCache {
    rules: ClassRules,
    by_name: Vec<u8>,
}

impl ClassCache {
    pub(crate) fn new(trace: &Trace, rules: ClassRules) -> Self {
        Self {
            rules,
            by_name: vec![u8::MAX; trace.strings.len()],
        }
    }

    pub(crate) fn get(&mut self, trace: &Trace, name: StrId) -> KernelClass {
        let slot = &mut self.by_name[name.0 as usize];
        if *slot == u8::MAX {
            *slot = classify(trace.strings.get(name), self.rules) as u8;
        }
        KernelClass::from_u8(*slot)
    }
}

/// Duration statistics of one kernel name (HTA's per-kernel table, unfolded). Times ns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelStat {
    /// Kernel name (`others` for the folded rest).
    pub name: String,
    /// Number of rows.
    pub count: u64,
    /// Σ duration.
    pub sum_ns: i64,
    /// Longest.
    pub max_ns: i64,
    /// Shortest.
    pub min_ns: i64,
    /// Mean.
    pub mean_ns: f64,
    /// Sample standard deviation (ddof 1; 0 for a single row).
    pub std_ns: f64,
}

/// One class of one rank.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassTotal {
    /// The class.
    pub class: KernelClass,
    /// Rows of this class.
    pub count: u64,
    /// Distinct kernel names.
    pub names: u64,
    /// Σ duration, ns.
    pub sum_ns: i64,
    /// Length of the union of its rows (overlaps across streams counted once), ns.
    pub busy_ns: i64,
    /// Top kernels by Σ duration, then one `others` row for the rest (if any).
    pub top: Vec<KernelStat>,
}

/// Time covered by exactly one combination of classes (HTA's kernel-type table).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassOverlap {
    /// `COMPUTATION`, `COMPUTATION overlapping COMMUNICATION`, ...
    pub label: String,
    /// Length, ns.
    pub time_ns: i64,
    /// Share of the time any class runs (the sum over all combinations), 0–1.
    pub share: f64,
}

/// The per-class kernel breakdown of one rank.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassBreakdown {
    /// The file.
    pub path: String,
    /// Rank, when known.
    pub rank: Option<i64>,
    /// What was looked at.
    pub window: Window,
    /// Name rules used.
    pub rules: ClassRules,
    /// Computation, communication, memory, other (only classes present).
    pub classes: Vec<ClassTotal>,
    /// Elementary segments by class combination, largest first (zero-length dropped;
    /// `other` ignored, as in HTA).
    pub overlaps: Vec<ClassOverlap>,
    /// `|U(comp) ∩ U(comm)| / |U(comm)|` (B.9), 0–1 at full precision (HTA rounds its
    /// percentage to 2 decimals); null without communication.
    pub comm_comp_overlap_share: Option<f64>,
}

/// Duration statistics of one kernel name under construction (Welford's running mean
/// and sum of squared deviations).
#[derive(Clone, Copy)]
struct Acc {
    class: KernelClass,
    count: u64,
    sum: i64,
    min: i64,
    max: i64,
    mean: f64,
    m2: f64,
}

impl Acc {
    /// Statistics of a kernel of `class` without rows.
    fn new(class: KernelClass) -> Self {
        Self {
            class,
            count: 0,
            sum: 0,
            min: i64::MAX,
            max: i64::MIN,
            mean: 0.0,
            m2: 0.0,
        }
    }

    /// Add one row of `dur` ns.
    fn add(&mut self, dur: i64) {
        self.count += 1;
        self.sum += dur;
        self.min = self.min.min(dur);
        self.max = self.max.max(dur);
        let d = dur as f64 - self.mean;
        self.mean += d / self.count as f64;
        self.m2 += d * (dur as f64 - self.mean);
    }

    /// The statistics of the kernels in `rest` (of `class`) taken together.
    fn pooled(class: KernelClass, rest: &[(StrId, Acc)]) -> Self {
        let count: u64 = rest.iter().map(|(_, a)| a.count).sum();
        let sum: i64 = rest.iter().map(|(_, a)| a.sum).sum();
        // Exact pooled statistics of the folded rows.
        let mean = sum as f64 / count as f64;
        let m2: f64 = rest
            .iter()
            .map(|(_, a)| a.m2 + a.count as f64 * (a.mean - mean).powi(2))
            .sum();
        Self {
            class,
            count,
            sum,
            min: rest.iter().map(|(_, a)| a.min).min().unwrap_or(0),
            max: rest.iter().map(|(_, a)| a.max).max().unwrap_or(0),
            mean,
            m2,
        }
    }

    /// The finished statistics, under `name`.
    fn stat(&self, name: String) -> KernelStat {
        KernelStat {
            name,
            count: self.count,
            sum_ns: self.sum,
            max_ns: self.max,
            min_ns: self.min,
            mean_ns: self.mean,
            std_ns: if self.count > 1 {
                (self.m2 / (self.count - 1) as f64).sqrt()
            } else {
                0.0
            },
        }
    }
}

/// The label of a class mask (bits 1, 2, 4 = computation, communication, memory).
fn mask_label(mask: usize) -> String {
    KernelClass::REPORTED
        .iter()
        .enumerate()
        .filter(|(b, _)| mask & (1 << b) != 0)
        .map(|(_, c)| c.label())
        .collect::<Vec<_>>()
        .join(" overlapping ")
}

/// The breakdown from already selected rows; `top` kernels kept per class (0 = all).
pub fn breakdown_of(
    trace: &Trace,
    rows: &GpuRows,
    rules: ClassRules,
    top: usize,
) -> ClassBreakdown {
    let (accs, merged) = per_name(trace, rows, rules);
    let classes = class_totals(trace, accs, &merged, top);
    let overlaps = class_overlaps(&merged);
    let cc = comm_comp(
        &merged[KernelClass::Communication as usize],
        &merged[KernelClass::Computation as usize],
    );

    ClassBreakdown {
        path: trace.path.display().to_string(),
        rank: trace.meta.rank.map(|r| r.value),
        window: rows.window.clone(),
        rules,
        classes,
        overlaps,
        comm_comp_overlap_share: cc.share(),
    }
}

/// Per reported class ([`KernelClass::REPORTED`] order), the merged spans of its rows
/// in time order.
type ClassSpans = Vec<Vec<(i64, i64)>>;

/// Per kernel name, its class and duration statistics; and the spans of each reported
/// class.
fn per_name(
    trace: &Trace,
    rows: &GpuRows,
    rules: ClassRules,
) -> (FxHashMap<StrId, Acc>, ClassSpans) {
    let e = &trace.events;
    let mut cache = ClassCache::new(trace, rules);
    let mut accs: FxHashMap<StrId, Acc> = FxHashMap::default();
    let mut spans: [Vec<(i64, i64)>; 3] = Default::default();
    for &id in &rows.rows {
        let i = id as usize;
        let (ts, end) = rows.clock.span(trace, i);
        let dur = end - ts;
        let class = cache.get(trace, e.name[i]);
        accs.entry(e.name[i]).or_insert(Acc::new(class)).add(dur);
        if class != KernelClass::Other {
            spans[class as usize].push((ts, end));
        }
    }
    // Rows are in start order, so each class's spans are too.
    let merged: ClassSpans = spans.into_iter().map(merge_sorted).collect();
    (accs, merged)
}

/// One total per class present, in class order, with its `top` kernels; `merged` the
/// merged spans per reported class.
fn class_totals(
    trace: &Trace,
    accs: FxHashMap<StrId, Acc>,
    merged: &[Vec<(i64, i64)>],
    top: usize,
) -> Vec<ClassTotal> {
    let mut by_class: [Vec<(StrId, Acc)>; 4] = Default::default();
    for (name, a) in accs {
        by_class[a.class as usize].push((name, a));
    }
    let mut classes = Vec::new();
    for (ci, mut list) in by_class.into_iter().enumerate() {
        if list.is_empty() {
            continue;
        }
        let class = KernelClass::from_u8(ci as u8);
        list.sort_unstable_by(|a, b| {
            b.1.sum
                .cmp(&a.1.sum)
                .then_with(|| trace.strings.get(a.0).cmp(trace.strings.get(b.0)))
        });
        let top_rows = top_kernels(trace, class, &list, top);
        classes.push(ClassTotal {
            class,
            count: list.iter().map(|(_, a)| a.count).sum(),
            names: list.len() as u64,
            sum_ns: list.iter().map(|(_, a)| a.sum).sum(),
            busy_ns: merged
                .get(ci)
                .map_or(0, |m| m.iter().map(|&(s, e)| e - s).sum()),
            top: top_rows,
        });
    }
    classes
}

/// The first `top` kernels of one class's `list` (longest first; 0 = all), then one
/// `others` row for the rest (if any).
fn top_kernels(
    trace: &Trace,
    class: KernelClass,
    list: &[(StrId, Acc)],
    top: usize,
) -> Vec<KernelStat> {
    let keep = if top == 0 {
        list.len()
    } else {
        top.min(list.len())
    };
    let mut top_rows: Vec<KernelStat> = list[..keep]
        .iter()
        .map(|(n, a)| a.stat(trace.strings.get(*n).to_owned()))
        .collect();
    if keep < list.len() {
        top_rows.push(Acc::pooled(class, &list[keep..]).stat("others".to_owned()));
    }
    top_rows
}

/// The time covered by each combination of classes, largest first, from the merged
/// spans per reported class.
fn class_overlaps(merged: &[Vec<(i64, i64)>]) -> Vec<ClassOverlap> {
    // Sweep over the class boundaries: each elementary segment goes to the classes
    // running then. Each class's merged interval adds its bit at its start and subtracts
    // it at its end, as HTA does; the running sum then names the classes present. For
    // intervals of positive length this is the set of running classes; a zero-length one
    // (a row rounded to zero, or written with dur 0) adds nothing; a negative one (HTA's
    // rounding of a sub-µs row, HTA mode only) subtracts its bit in between, and the
    // segment is counted under whatever positive sum remains, as in HTA.
    let bounds = boundaries(
        merged
            .iter()
            .enumerate()
            .map(|(b, m)| (1i64 << b, m.as_slice())),
    );
    let mut by_mask = [0i64; 8];
    sweep(&bounds, |running, len| {
        if let Ok(m @ 1..=7) = usize::try_from(running) {
            by_mask[m] += len;
        }
    });
    let covered: i64 = by_mask[1..].iter().sum();
    let mut overlaps: Vec<ClassOverlap> = (1..8)
        .filter(|&m| by_mask[m] > 0)
        .map(|m| ClassOverlap {
            label: mask_label(m),
            time_ns: by_mask[m],
            share: by_mask[m] as f64 / covered as f64,
        })
        .collect();
    overlaps.sort_by(|a, b| {
        b.time_ns
            .cmp(&a.time_ns)
            .then_with(|| a.label.cmp(&b.label))
    });
    overlaps
}

/// The boundaries of merged intervals, each class weighted: `(time, +weight)` at a start
/// and `(time, −weight)` at an end, in time order.
fn boundaries<'a>(classes: impl Iterator<Item = (i64, &'a [(i64, i64)])>) -> Vec<(i64, i64)> {
    let mut bounds: Vec<(i64, i64)> = Vec::new();
    for (w, m) in classes {
        for &(s, e) in m {
            bounds.push((s, w));
            bounds.push((e, -w));
        }
    }
    bounds.sort_unstable();
    bounds
}

/// Walk boundaries in time order: `f(running sum, length)` for each elementary segment
/// between two boundaries, the running sum being that of all boundaries up to its start.
fn sweep(bounds: &[(i64, i64)], mut f: impl FnMut(i64, i64)) {
    let mut running = 0i64;
    for (k, &(t, w)) in bounds.iter().enumerate() {
        running += w;
        if let Some(&(next, _)) = bounds.get(k + 1) {
            if next > t {
                f(running, next - t);
            }
        }
    }
}

/// Communication and computation as HTA's `get_comm_comp_overlap` measures them. Times
/// ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CommComp {
    /// Communication rows present.
    pub has_comm: bool,
    /// Σ of the merged communication intervals' lengths (|U(comm)|).
    pub comm_ns: i64,
    /// Σ of the merged computation intervals' lengths (|U(comp)|).
    pub comp_ns: i64,
    /// Time where communication (+1) and computation (+2) sum to 3 (|U(comp) ∩ U(comm)|).
    pub overlap_ns: i64,
}

impl CommComp {
    /// `overlap / comm` (0–1, full precision: HTA rounds its percentage to 2 decimals);
    /// `None` without communication.
    pub fn share(&self) -> Option<f64> {
        (self.has_comm && self.comm_ns != 0).then(|| self.overlap_ns as f64 / self.comm_ns as f64)
    }
}

/// [`CommComp`] of merged communication and computation intervals (start order).
fn comm_comp(comm: &[(i64, i64)], comp: &[(i64, i64)]) -> CommComp {
    let len = |m: &[(i64, i64)]| m.iter().map(|&(s, e)| e - s).sum::<i64>();
    let mut overlap_ns = 0;
    sweep(
        &boundaries([(1, comm), (2, comp)].into_iter()),
        |running, len| {
            if running == 3 {
                overlap_ns += len;
            }
        },
    );
    CommComp {
        has_comm: !comm.is_empty(),
        comm_ns: len(comm),
        comp_ns: len(comp),
        overlap_ns,
    }
}

/// HTA's communication / computation overlap of already selected rows, classified with
/// `rules` (what `kinetoscope comm --hta-compat` reports).
pub fn comm_comp_of(trace: &Trace, rows: &GpuRows, rules: ClassRules) -> CommComp {
    let e = &trace.events;
    let mut cache = ClassCache::new(trace, rules);
    let (mut comm, mut comp) = (Vec::new(), Vec::new());
    for &id in &rows.rows {
        let span = rows.clock.span(trace, id as usize);
        match cache.get(trace, e.name[id as usize]) {
            KernelClass::Communication => comm.push(span),
            KernelClass::Computation => comp.push(span),
            _ => {}
        }
    }
    comm_comp(&merge_sorted(comm), &merge_sorted(comp))
}

/// The per-class kernel breakdown of a trace (`filter`: apply HTA's step filter, see
/// [`super::PerRank`]); `top` kernels per class (0 = all).
pub fn class_breakdown(trace: &Trace, compat: Compat, filter: bool, top: usize) -> ClassBreakdown {
    let rows = select(trace, compat, filter);
    breakdown_of(trace, &rows, ClassRules::of(compat), top)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules() {
        use KernelClass::*;
        let n =
            "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)";
        for r in [ClassRules::Hta050, ClassRules::Hta06] {
            assert_eq!(classify(n, r), Communication);
            assert_eq!(classify("Memcpy HtoD (Pinned -> Device)", r), Memory);
            assert_eq!(classify("Memset (Device)", r), Memory);
            assert_eq!(classify("ampere_sgemm_128x128_tn", r), Computation);
            assert_eq!(classify("Stream Sync", r), Other);
        }
        // 0.5.0 misses kernels without "Kernel" after "nccl"; 0.6 does not.
        assert_eq!(
            classify("ncclDevKernel_AllReduce", ClassRules::Hta050),
            Communication
        );
        assert_eq!(classify("nccl_something", ClassRules::Hta050), Computation);
        assert_eq!(classify("nccl_something", ClassRules::Hta06), Communication);
        assert_eq!(
            classify("Stream Wait Event", ClassRules::Hta050),
            Computation
        );
        assert_eq!(classify("Stream Wait Event", ClassRules::Hta06), Other);
        // `Memcpy` anywhere, or `Sync` anywhere, is never computation.
        assert_eq!(classify("fooMemcpyKernel", ClassRules::Hta050), Other);
        assert_eq!(
            classify("void at::native::foo<float>()", ClassRules::Hta050),
            Computation
        );
    }

    #[test]
    fn labels() {
        assert_eq!(mask_label(1), "COMPUTATION");
        assert_eq!(mask_label(3), "COMPUTATION overlapping COMMUNICATION");
        assert_eq!(
            mask_label(7),
            "COMPUTATION overlapping COMMUNICATION overlapping MEMORY"
        );
    }
}
