//! What a kernel is to the communication analyses, and what its name and collective
//! arguments say: the collective, the NCCL algorithm and protocol, element sizes and the
//! nccl-tests bus-bandwidth factors (NVIDIA nccl-tests, `doc/PERFORMANCE.md`).

/// A communication kernel by kinetoscope's rule: the name contains `nccl` (NCCL and
/// every spelling of its kernels: `ncclKernel_*`, `ncclDevKernel_*`), or starts with
/// `rccl` or `hccl` (ROCm, Ascend), or is a collective over symmetric memory that moves
/// data between GPUs without NCCL ([`is_symmetric_memory_collective`]).
pub fn is_comm_kernel(name: &str) -> bool {
    name.contains("nccl")
        || name.starts_with("rccl")
        || name.starts_with("hccl")
        || is_symmetric_memory_collective(name)
}

/// A collective kernel over symmetric (peer-mapped) memory: PyTorch's
/// `torch.distributed._symmetric_memory` kernels (`multimem_all_reduce_kernel`,
/// `multimem_all_gather_kernel`, `one_shot_all_reduce_kernel`,
/// `two_shot_all_reduce_kernel`) and vLLM's custom all-reduce
/// (`cross_device_reduce_1stage` / `_2stage`).
pub fn is_symmetric_memory_collective(name: &str) -> bool {
    [
        "multimem_",
        "one_shot_all_reduce",
        "two_shot_all_reduce",
        "cross_device_reduce_",
    ]
    .iter()
    .any(|p| name.contains(p))
}

/// What a host span says about a collective call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostCollective<'a> {
    /// `record_param_comms`: the collective is in its arguments (`Collective name`,
    /// process group, sizes, `Seq`, `Comms Id`) when Kineto recorded them.
    ParamComms,
    /// A `c10d::` dispatcher op (`c10d::allreduce_` → `allreduce`): the program's call.
    C10d(&'a str),
    /// A backend's span of the work (`nccl:all_to_all` → `all_to_all`,
    /// `gloo:all_reduce` → `all_reduce`; also `ucc:` and `mpi:`). Gloo, UCC and MPI run
    /// it on a worker thread, NCCL on the calling thread (it enqueues the kernel there).
    Backend(&'a str),
}

/// The backends whose work spans are named `<backend>:<collective>`.
const BACKEND_PREFIXES: [&str; 4] = ["nccl:", "gloo:", "ucc:", "mpi:"];

/// Recognise a host span of a collective call by name; `None` for any other span
/// (including `c10d::` ops that only wait for work, which fold to `wait`).
pub fn host_collective(name: &str) -> Option<HostCollective<'_>> {
    if name == "record_param_comms" {
        return Some(HostCollective::ParamComms);
    }
    if let Some(op) = name.strip_prefix("c10d::") {
        let op = op.trim_end_matches('_');
        return (!op.is_empty() && fold_collective(op) != "wait")
            .then_some(HostCollective::C10d(op));
    }
    BACKEND_PREFIXES.iter().find_map(|p| {
        let op = name.strip_prefix(p)?;
        (!op.is_empty()).then_some(HostCollective::Backend(op))
    })
}

/// What an NCCL kernel name says: `ncclKernel_AllReduce_RING_LL_Sum_float(...)` →
/// (`AllReduce`, `RING_LL`); `ncclDevKernel_SendRecv(...)` → (`SendRecv`, none).
pub fn parse_nccl_kernel(name: &str) -> (String, Option<String>) {
    let base = name.split('(').next().unwrap_or(name);
    let rest = [
        "ncclDevKernel_",
        "ncclKernel_",
        "rcclKernel_",
        "ncclDevFunc_",
    ]
    .iter()
    .find_map(|p| base.strip_prefix(p));
    let Some(rest) = rest else {
        return (kernel_identifier(name).to_owned(), None);
    };
    let mut parts = rest.split('_');
    let op = parts.next().unwrap_or("").to_owned();
    let tokens: Vec<&str> = parts.collect();
    const ALGOS: [&str; 6] = ["RING", "TREE", "COLLNET", "NVLS", "PAT", "NVLSTREE"];
    const PROTOS: [&str; 3] = ["LL", "LL128", "SIMPLE"];
    let mut algo = Vec::new();
    for t in &tokens {
        if ALGOS.contains(t) || PROTOS.contains(t) || *t == "DIRECT" || *t == "CHAIN" {
            algo.push(*t);
        } else if !algo.is_empty() {
            break;
        }
    }
    let algo = (!algo.is_empty()).then(|| algo.join("_"));
    (op, algo)
}

/// The function name of a demangled kernel signature: without its return type,
/// namespaces, template and call arguments (`void (anonymous
/// namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(…)` →
/// `multimem_all_reduce_kernel`); the name itself when it has none of them.
fn kernel_identifier(name: &str) -> &str {
    let name = name.strip_prefix("void ").unwrap_or(name);
    let name = name.trim_start_matches("(anonymous namespace)::");
    // The name ends where its template or call arguments begin; the last `::` before
    // that ends its namespaces (an `(anonymous namespace)` among them included).
    let end = name
        .char_indices()
        .find(|&(i, c)| c == '<' || (c == '(' && !name[i..].starts_with("(anonymous namespace)")))
        .map_or(name.len(), |(i, _)| i);
    let head = &name[..end];
    let start = head.rfind("::").map_or(0, |i| i + 2);
    let id = head[start..].trim();
    if id.is_empty() {
        name
    } else {
        id
    }
}

/// A collective name folded for comparisons: lower case, without `_` and a leading or
/// trailing `base`/`tensor`/`coalesced` word (`_allgather_base` → `allgather`,
/// `AllReduce` → `allreduce`, `all_to_all` → `alltoall`).
pub fn fold_collective(name: &str) -> String {
    let mut s: String = name
        .chars()
        .filter(|c| *c != '_')
        .flat_map(char::to_lowercase)
        .collect();
    for suffix in ["coalesced", "tensor", "base", "single"] {
        if let Some(t) = s.strip_suffix(suffix) {
            if !t.is_empty() {
                s = t.to_owned();
            }
        }
    }
    s
}

/// The nccl-tests bus-bandwidth factor of a collective over `n` ranks: all-reduce
/// 2(n−1)/n; all-gather, reduce-scatter and all-to-all (n−1)/n; broadcast, reduce and
/// point-to-point 1. `None` for unknown collectives or `n < 1`.
pub fn busbw_factor(collective: &str, n: i64) -> Option<f64> {
    if n < 1 {
        return None;
    }
    let n = n as f64;
    let c = fold_collective(collective);
    Some(match c.as_str() {
        "allreduce" => 2.0 * (n - 1.0) / n,
        "allgather" | "reducescatter" | "alltoall" | "alltoallv" => (n - 1.0) / n,
        "broadcast" | "reduce" | "send" | "recv" | "sendrecv" => 1.0,
        _ => return None,
    })
}

/// Bytes per element of a `record_param_comms` `dtype` (`Float`, `BFloat16`, ...); `None`
/// when unknown.
pub fn dtype_size(dtype: &str) -> Option<u64> {
    let d = dtype.trim().to_ascii_lowercase();
    let d = d.strip_prefix("c10::").unwrap_or(&d);
    Some(match d {
        "float" | "float32" | "int" | "int32" | "uint32" => 4,
        "double" | "float64" | "long" | "int64" | "uint64" | "complexfloat" => 8,
        "half" | "float16" | "bfloat16" | "short" | "int16" | "uint16" | "complexhalf" => 2,
        "byte" | "char" | "bool" | "int8" | "uint8" => 1,
        "complexdouble" => 16,
        _ if d.starts_with("float8") => 1,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symmetric_memory_collectives_are_communication() {
        assert!(is_comm_kernel(
            "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*)"
        ));
        assert!(is_comm_kernel(
            "void c10d::symmetric_memory::one_shot_all_reduce_kernel<float, 16, 8>(float**)"
        ));
        assert!(is_comm_kernel(
            "void vllm::cross_device_reduce_1stage<half, 8>(x)"
        ));
        assert!(!is_comm_kernel("void at::native::reduce_kernel<128, 4>(x)"));
    }

    #[test]
    fn other_collective_kernels_are_named_by_their_function() {
        let name = |k: &str| parse_nccl_kernel(k).0;
        assert_eq!(
            name("void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long)"),
            "multimem_all_reduce_kernel"
        );
        assert_eq!(
            name("void c10d::symmetric_memory::one_shot_all_reduce_kernel<float, 16, 8>(float**)"),
            "one_shot_all_reduce_kernel"
        );
        assert_eq!(
            name("void vllm::cross_device_reduce_1stage<half, 8>(x)"),
            "cross_device_reduce_1stage"
        );
        assert_eq!(name("rccl_custom"), "rccl_custom");
    }

    #[test]
    fn nccl_names() {
        assert_eq!(
            parse_nccl_kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)"),
            ("AllReduce".into(), Some("RING_LL".into()))
        );
        assert_eq!(
            parse_nccl_kernel("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"),
            ("SendRecv".into(), None)
        );
        assert_eq!(
            parse_nccl_kernel("ncclDevKernel_AllGather_RING_LL(x)"),
            ("AllGather".into(), Some("RING_LL".into()))
        );
        assert_eq!(fold_collective("_allgather_base"), "allgather");
        assert_eq!(fold_collective("all_to_all"), "alltoall");
        assert_eq!(fold_collective("reduce_scatter_tensor"), "reducescatter");
        assert_eq!(busbw_factor("allreduce", 4), Some(1.5));
        assert_eq!(busbw_factor("AllGather", 4), Some(0.75));
        assert_eq!(busbw_factor("barrier", 4), None);
        assert_eq!(dtype_size("Float"), Some(4));
        assert_eq!(dtype_size("BFloat16"), Some(2));
        assert_eq!(dtype_size("c10::Half"), Some(2));
        assert_eq!(dtype_size("weird"), None);
    }
}
