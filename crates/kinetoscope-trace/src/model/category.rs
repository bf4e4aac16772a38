//! Event categories: the raw `cat` strings of a file, each mapped to a normalised
//! [`CategoryKind`] so that 1.8-era names (`Operator`, `Runtime`, `Kernel`, ...) and
//! current ones (`cpu_op`, `cuda_runtime`, `kernel`, ...) read the same.

use rustc_hash::FxHashMap;

/// What kind of event a category holds, across every Kineto era.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CategoryKind {
    /// A PyTorch operator (`cpu_op`; 1.8/1.9 `Operator`).
    CpuOp,
    /// A `record_function` range, including `ProfilerStep#N` (`user_annotation`).
    UserAnnotation,
    /// The GPU-side span of a user annotation (`gpu_user_annotation`).
    GpuUserAnnotation,
    /// A Python frame from the Python tracer (`python_function`).
    PythonFunction,
    /// A host-side CUDA runtime call (`cuda_runtime`; old `Runtime`).
    CudaRuntime,
    /// A host-side CUDA driver call (`cuda_driver`).
    CudaDriver,
    /// A runtime call of another accelerator (`mtia_runtime`, `xpu_runtime`, ...).
    OtherRuntime,
    /// A GPU kernel (`kernel`; old `Kernel`).
    Kernel,
    /// A GPU memory copy (`gpu_memcpy`; old `Memcpy`).
    GpuMemcpy,
    /// A GPU memory set (`gpu_memset`; old `Memset`).
    GpuMemset,
    /// A thread-scoped instant such as `[memory]` (`cpu_instant_event`).
    CpuInstantEvent,
    /// A CUDA synchronisation seen by CUPTI (`cuda_sync`).
    CudaSync,
    /// A CUDA event record (`cuda_event`).
    CudaEvent,
    /// CUPTI's own overhead (`overhead`).
    Overhead,
    /// The profiler's collection window (`Trace`).
    TraceSpan,
    /// A flow arrow from a CPU launch to its GPU activity (`ac2g`; old `async`,
    /// `async_gpu`, `async_cpu_to_gpu`).
    FlowLaunch,
    /// A flow arrow from a forward op to its backward op (`fwdbwd`).
    FlowForwardBackward,
    /// Metadata naming rows (`ph: "M"`, no category).
    Metadata,
    /// An event with no category that is not metadata (global markers such as
    /// `Record Window End`).
    Uncategorised,
    /// Any other category, kept by its raw name.
    Other,
}

impl CategoryKind {
    /// Map a raw `cat` string to its kind.
    pub fn from_raw(raw: &str) -> Self {
        match raw {
            "cpu_op" | "Operator" | "operator" => Self::CpuOp,
            "user_annotation" => Self::UserAnnotation,
            "gpu_user_annotation" => Self::GpuUserAnnotation,
            "python_function" => Self::PythonFunction,
            "cuda_runtime" | "Runtime" | "runtime" => Self::CudaRuntime,
            "cuda_driver" => Self::CudaDriver,
            "mtia_runtime"
            | "xpu_runtime"
            | "xpu_driver"
            | "privateuse1_runtime"
            | "privateuse1_driver"
            | "glow_runtime" => Self::OtherRuntime,
            "kernel" | "Kernel" => Self::Kernel,
            "gpu_memcpy" | "Memcpy" | "memcpy" => Self::GpuMemcpy,
            "gpu_memset" | "Memset" | "memset" => Self::GpuMemset,
            "cpu_instant_event" => Self::CpuInstantEvent,
            "cuda_sync" => Self::CudaSync,
            "cuda_event" => Self::CudaEvent,
            "overhead" => Self::Overhead,
            "Trace" => Self::TraceSpan,
            "ac2g" | "async" | "async_gpu" | "async_cpu_to_gpu" => Self::FlowLaunch,
            "fwdbwd" | "forward_backward" => Self::FlowForwardBackward,
            _ => Self::Other,
        }
    }

    /// The normalised (current Kineto) category name; `None` for [`CategoryKind::Other`].
    pub fn canonical_name(self) -> Option<&'static str> {
        Some(match self {
            Self::CpuOp => "cpu_op",
            Self::UserAnnotation => "user_annotation",
            Self::GpuUserAnnotation => "gpu_user_annotation",
            Self::PythonFunction => "python_function",
            Self::CudaRuntime => "cuda_runtime",
            Self::CudaDriver => "cuda_driver",
            Self::Kernel => "kernel",
            Self::GpuMemcpy => "gpu_memcpy",
            Self::GpuMemset => "gpu_memset",
            Self::CpuInstantEvent => "cpu_instant_event",
            Self::CudaSync => "cuda_sync",
            Self::CudaEvent => "cuda_event",
            Self::Overhead => "overhead",
            Self::TraceSpan => "Trace",
            Self::FlowLaunch => "ac2g",
            Self::FlowForwardBackward => "fwdbwd",
            Self::Metadata => "(metadata)",
            Self::Uncategorised => "(none)",
            Self::OtherRuntime | Self::Other => return None,
        })
    }

    /// Whether events of this kind run on a GPU stream.
    pub fn is_gpu(self) -> bool {
        matches!(
            self,
            Self::Kernel
                | Self::GpuMemcpy
                | Self::GpuMemset
                | Self::GpuUserAnnotation
                | Self::CudaSync
                | Self::CudaEvent
        )
    }

    /// Whether events of this kind are host-side runtime or driver calls, the calls
    /// that launch GPU work.
    pub fn is_launch_call(self) -> bool {
        matches!(
            self,
            Self::CudaRuntime | Self::CudaDriver | Self::OtherRuntime
        )
    }

    /// Whether this kind is a flow arrow.
    pub fn is_flow(self) -> bool {
        matches!(self, Self::FlowLaunch | Self::FlowForwardBackward)
    }
}

/// A category's id in its trace's [`CategoryTable`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct CatId(pub u16);

/// One category seen in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Category {
    /// The `cat` string as written (empty when the event had none).
    pub raw: String,
    /// Its normalised kind.
    pub kind: CategoryKind,
    /// How many elements of `traceEvents` carried it (events, flows and metadata alike).
    pub count: u64,
}

impl Category {
    /// The name to show and count by: the canonical name, or the raw one for unknown
    /// categories.
    pub fn display_name(&self) -> &str {
        match self.kind {
            CategoryKind::OtherRuntime | CategoryKind::Other => &self.raw,
            k => k.canonical_name().unwrap_or(&self.raw),
        }
    }
}

/// The categories of a trace. `CatId(0)` is "no category" (metadata), `CatId(1)` is "no
/// category" on a non-metadata event.
#[derive(Clone, Debug)]
pub struct CategoryTable {
    list: Vec<Category>,
    by_raw: FxHashMap<String, CatId>,
}

impl Default for CategoryTable {
    fn default() -> Self {
        let mut t = Self {
            list: Vec::new(),
            by_raw: FxHashMap::default(),
        };
        t.list.push(Category {
            raw: String::new(),
            kind: CategoryKind::Metadata,
            count: 0,
        });
        t.list.push(Category {
            raw: String::new(),
            kind: CategoryKind::Uncategorised,
            count: 0,
        });
        t
    }
}

impl CategoryTable {
    /// The id for "no category" on a metadata (`M`) event.
    pub const METADATA: CatId = CatId(0);
    /// The id for "no category" on any other event.
    pub const NONE: CatId = CatId(1);

    /// The raw name of the one category that stands for every category once the 16-bit
    /// ids run out, so that a hostile file cannot wrap them around.
    pub const OVERFLOW_NAME: &'static str = "(more categories than 16-bit ids hold)";

    /// A table of stored categories, their lookup rebuilt; `None` unless it has the two
    /// "no category" entries first and at most as many as 16-bit ids hold.
    pub(crate) fn from_list(list: Vec<Category>) -> Option<Self> {
        let fixed = list.len() >= 2
            && list.len() <= u16::MAX as usize
            && list[0].kind == CategoryKind::Metadata
            && list[1].kind == CategoryKind::Uncategorised;
        if !fixed {
            return None;
        }
        let by_raw = list
            .iter()
            .enumerate()
            .skip(2)
            .map(|(i, c)| (c.raw.clone(), CatId(i as u16)))
            .collect();
        Some(Self { list, by_raw })
    }

    /// The id of a raw category string, adding it if new. Once the ids run out, every
    /// new one gets the id of [`Self::OVERFLOW_NAME`].
    pub fn intern(&mut self, raw: &str) -> CatId {
        if let Some(&id) = self.by_raw.get(raw) {
            return id;
        }
        let full = self.list.len() >= u16::MAX as usize - 1;
        if full && raw != Self::OVERFLOW_NAME {
            return self.intern(Self::OVERFLOW_NAME);
        }
        let id = CatId(self.list.len() as u16);
        self.list.push(Category {
            raw: raw.to_owned(),
            kind: CategoryKind::from_raw(raw),
            count: 0,
        });
        self.by_raw.insert(raw.to_owned(), id);
        id
    }

    /// The category of an id.
    pub fn get(&self, id: CatId) -> &Category {
        &self.list[id.0 as usize]
    }

    /// Set every count back to zero.
    pub fn reset_counts(&mut self) {
        for c in &mut self.list {
            c.count = 0;
        }
    }

    /// Add `n` to a category's element count.
    pub fn add_count(&mut self, id: CatId, n: u64) {
        self.list[id.0 as usize].count += n;
    }

    /// The kind of an id.
    pub fn kind(&self, id: CatId) -> CategoryKind {
        self.list[id.0 as usize].kind
    }

    /// Number of categories, including the two "no category" entries.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Always false: the two "no category" entries are always there.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// All categories in id order.
    pub fn iter(&self) -> impl Iterator<Item = (CatId, &Category)> {
        self.list
            .iter()
            .enumerate()
            .map(|(i, c)| (CatId(i as u16), c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_never_wrap_past_the_last_category() {
        let mut t = CategoryTable::default();
        let ids: Vec<CatId> = (0..70_000).map(|i| t.intern(&format!("c{i}"))).collect();
        let last = ids[65_531];
        assert_eq!(t.get(last).raw, "c65531");
        let overflow = ids[65_532];
        assert_eq!(overflow, CatId(u16::MAX - 1));
        assert_eq!(t.get(overflow).raw, CategoryTable::OVERFLOW_NAME);
        assert!(ids[65_532..].iter().all(|&id| id == overflow));
        assert_eq!(t.len(), u16::MAX as usize);
        assert_eq!(t.intern("c7"), ids[7]);
    }
}
