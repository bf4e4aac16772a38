//! What one unit of an adversarial trace is: a host span (an operator, an annotation or
//! a Python frame), usually with a runtime call inside it and the GPU activity that call
//! launched, and a pair of `[memory]` records. The kinds cycle so that every analysis
//! and every advisor rule has events to work on (GEMMs, scalar reads, optimizer steps,
//! DataLoader fetches, convolutions with layout transposes, softmax, allocator calls,
//! collectives, user Python frames, pageable copies, memsets, synchronizes, graph
//! launches).

/// One kind of unit.
#[derive(Clone, Copy, Debug)]
pub struct UnitKind {
    /// The host span's category (`cpu_op`, `user_annotation`, `python_function`).
    pub cat: &'static str,
    /// The host span's name.
    pub name: &'static str,
    /// `Input Dims` and `Input type` (raw JSON), for operators with shapes.
    pub shapes: Option<(&'static str, &'static str)>,
    /// The runtime call inside the span.
    pub call: Option<&'static str>,
    /// The GPU activity the call launched: category and name.
    pub gpu: Option<(&'static str, &'static str)>,
}

const fn op(name: &'static str) -> UnitKind {
    UnitKind {
        cat: "cpu_op",
        name,
        shapes: None,
        call: None,
        gpu: None,
    }
}

const fn launch(
    name: &'static str,
    call: &'static str,
    gpu: (&'static str, &'static str),
) -> UnitKind {
    UnitKind {
        call: Some(call),
        gpu: Some(gpu),
        ..op(name)
    }
}

const fn shaped(kind: UnitKind, dims: &'static str, types: &'static str) -> UnitKind {
    UnitKind {
        shapes: Some((dims, types)),
        ..kind
    }
}

/// The kinds, in the order units cycle through them.
pub const KINDS: [UnitKind; 17] = [
    shaped(
        launch("aten::mm", "cudaLaunchKernel", ("kernel", "volta_sgemm_128x64_nn")),
        "[[256, 256], [256, 256]]",
        r#"["float", "float"]"#,
    ),
    launch(
        "aten::item",
        "cudaMemcpyAsync",
        ("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)"),
    ),
    UnitKind {
        cat: "user_annotation",
        ..launch(
            "Optimizer.step#SGD.step",
            "cudaLaunchKernel",
            ("kernel", "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>"),
        )
    },
    shaped(
        launch(
            "aten::add_",
            "cudaLaunchKernel",
            ("kernel", "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>"),
        ),
        "[[1024], [1024], []]",
        r#"["float", "float", "Scalar"]"#,
    ),
    UnitKind {
        cat: "user_annotation",
        ..op("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__")
    },
    shaped(
        launch("aten::convolution", "cudaLaunchKernel", ("kernel", "void nchwToNhwcKernel<float, float, float, true>")),
        "[[8, 64, 56, 56], [64, 64, 3, 3], [], [], [], [], [], [], []]",
        r#"["float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"]"#,
    ),
    shaped(
        launch("aten::softmax", "cudaLaunchKernel", ("kernel", "void softmax_warp_forward<float, float, float, 8, false>")),
        "[[8, 512, 512], [], []]",
        r#"["float", "Scalar", ""]"#,
    ),
    UnitKind {
        call: Some("cudaMalloc"),
        ..op("aten::empty")
    },
    launch(
        "record_param_comms",
        "cudaLaunchKernel",
        ("kernel", "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"),
    ),
    UnitKind {
        cat: "python_function",
        ..op("train.py(42): train_step")
    },
    launch(
        "aten::copy_",
        "cudaMemcpyAsync",
        ("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)"),
    ),
    launch("aten::zero_", "cudaMemsetAsync", ("gpu_memset", "Memset (Device)")),
    UnitKind {
        call: Some("cudaStreamSynchronize"),
        ..op("aten::_local_scalar_dense")
    },
    UnitKind {
        call: Some("cudaFree"),
        ..op("aten::resize_")
    },
    shaped(
        launch("aten::linear", "cudaLaunchKernel", ("kernel", "ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_tn")),
        "[[33, 65], [127, 65], [127]]",
        r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"]"#,
    ),
    launch("CUDAGraph::replay", "cudaGraphLaunch", ("kernel", "void graph_kernel<float>")),
    UnitKind {
        cat: "user_annotation",
        ..launch(
            "## forward ##",
            "cudaLaunchKernel",
            ("kernel", "void at::native::reduce_kernel<512, 1>"),
        )
    },
];
