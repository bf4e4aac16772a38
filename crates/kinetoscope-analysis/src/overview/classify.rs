//! What each event is to the overview (the TensorBoard plugin's event model and breakdown
//! roles): a GPU activity, a launch call, a host span, or nothing; and which role a host
//! span plays.

use kinetoscope_trace::{CategoryKind, Phase, Trace};

/// An event's kind as the overview sees it. Only complete (`ph: "X"`) events count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    /// A GPU kernel.
    Kernel,
    /// A GPU memory copy.
    Memcpy,
    /// A GPU memory set.
    Memset,
    /// A host call that can launch GPU work: every runtime spelling (`Runtime`,
    /// `cuda_runtime`, `xpu_runtime`, …) and `cuda_driver`.
    Launch,
    /// A CPU operator (`cpu_op`, 1.8/1.9 `Operator`).
    Op,
    /// A CPU-side `record_function` range (`user_annotation`).
    Annotation,
    /// An event of the legacy `python` category.
    Python,
    /// Anything else, including `gpu_user_annotation` and `python_function`.
    Ignored,
}

/// The class of every category of a trace, looked up per event.
pub(crate) struct Classes {
    by_cat: Vec<Class>,
}

impl Classes {
    /// Classify the categories of `trace`.
    pub(crate) fn new(trace: &Trace) -> Self {
        let by_cat = trace
            .categories
            .iter()
            .map(|(_, c)| match c.kind {
                CategoryKind::Kernel => Class::Kernel,
                CategoryKind::GpuMemcpy => Class::Memcpy,
                CategoryKind::GpuMemset => Class::Memset,
                CategoryKind::CudaRuntime
                | CategoryKind::CudaDriver
                | CategoryKind::OtherRuntime => Class::Launch,
                CategoryKind::CpuOp => Class::Op,
                CategoryKind::UserAnnotation => Class::Annotation,
                CategoryKind::Other if c.raw.eq_ignore_ascii_case("python") => Class::Python,
                _ => Class::Ignored,
            })
            .collect();
        Self { by_cat }
    }

    /// The class of event `i` (its row in the event table).
    pub(crate) fn of(&self, trace: &Trace, i: usize) -> Class {
        if trace.events.phase[i] != Phase::Complete {
            return Class::Ignored;
        }
        self.by_cat[trace.events.cat[i].0 as usize]
    }
}

/// The role a host span plays in the step breakdown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HostRole {
    /// A `ProfilerStep#N` span: defines a step, counted in no role.
    Step,
    /// A DataLoader / DataPipe fetch.
    DataLoader,
    /// A collective or point-to-point communication call.
    Communication,
    /// Any other host span.
    CpuExec,
}

/// The role of a host span of class `class` named `name`, or `None` when the event is
/// not a host span.
pub(crate) fn host_role(class: Class, name: &str) -> Option<HostRole> {
    let op_or_annotation = matches!(class, Class::Op | Class::Annotation);
    Some(match class {
        Class::Op | Class::Annotation | Class::Python => {
            if op_or_annotation && is_dataloader(name) {
                HostRole::DataLoader
            } else if op_or_annotation && name.starts_with("ProfilerStep#") {
                HostRole::Step
            } else if is_communication_op(name) {
                HostRole::Communication
            } else {
                HostRole::CpuExec
            }
        }
        _ => return None,
    })
}

/// `enumerate(DataLoader)#….__next__` or `enumerate(DataPipe)#…` (the plugin's rule).
fn is_dataloader(name: &str) -> bool {
    (name.starts_with("enumerate(DataLoader)#") && name.ends_with(".__next__"))
        || name.starts_with("enumerate(DataPipe)#")
}

/// A host-side communication call: any `nccl:…` or `gloo:…` span (the plugin knows only
/// `broadcast`, `reduce`, `all_reduce`, `all_gather` and `reduce_scatter`), a `c10d::…`
/// collective op, or `record_param_comms`.
pub(crate) fn is_communication_op(name: &str) -> bool {
    name.starts_with("nccl:")
        || name.starts_with("gloo:")
        || name.starts_with("c10d::")
        || name == "record_param_comms"
}

/// A communication kernel by name: NCCL's and RCCL's (`ncclKernel_…`, `ncclDevKernel_…`,
/// `rccl…`), HCCL's, and the collectives over symmetric memory
/// ([`crate::comm::names::is_comm_kernel`]).
pub(crate) fn is_communication_kernel(name: &str) -> bool {
    crate::comm::names::is_comm_kernel(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_roles() {
        let dl = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";
        assert_eq!(host_role(Class::Op, dl), Some(HostRole::DataLoader));
        assert_eq!(host_role(Class::Annotation, dl), Some(HostRole::DataLoader));
        assert_eq!(
            host_role(Class::Op, "enumerate(DataPipe)#ShufflerIterDataPipe"),
            Some(HostRole::DataLoader)
        );
        assert_eq!(
            host_role(Class::Annotation, "ProfilerStep#3"),
            Some(HostRole::Step)
        );
        assert_eq!(
            host_role(Class::Annotation, "nccl:all_reduce"),
            Some(HostRole::Communication)
        );
        assert_eq!(
            host_role(Class::Op, "nccl:send"),
            Some(HostRole::Communication)
        );
        assert_eq!(host_role(Class::Op, "aten::mm"), Some(HostRole::CpuExec));
        assert_eq!(host_role(Class::Python, "foo"), Some(HostRole::CpuExec));
        assert_eq!(host_role(Class::Kernel, "aten::mm"), None);
        assert_eq!(host_role(Class::Ignored, "ProfilerStep#3"), None);
    }
}
