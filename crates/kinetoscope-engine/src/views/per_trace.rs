//! Views computed trace by trace: summary, overview, operators, kernels, communication,
//! kernel sequences and the critical path.

use std::collections::HashMap;

use kinetoscope_analysis::comm::{comm, resolve_hta, TraceComm};
use kinetoscope_analysis::critical_path::{critical_path, CriticalPath, CriticalPathOptions};
use kinetoscope_analysis::kernels::{analyze_kernels, KernelGroupBy, KernelSortKey, KernelsTable};
use kinetoscope_analysis::nvtx::{nvtx, NvtxOptions, TraceNvtx};
use kinetoscope_analysis::ops::{analyze_ops, OpGroupBy, OpSortKey, OpsTable};
use kinetoscope_analysis::overview::{overview, TraceOverview};
use kinetoscope_analysis::perf::{analyze_perf, PerfOptions, PerfTable};
use kinetoscope_analysis::sequences::{frequent_sequences, SequenceOptions, TraceSequences};
use kinetoscope_analysis::summary::{summarize, TraceSummary};

use crate::document::{Document, InputLayout, TableOptions};
use crate::error::EngineResult;
use crate::input::Source;
use crate::run_folder::phase_memory;
use crate::Engine;

/// Options of the operator view.
pub type OpsOptions = TableOptions<OpGroupBy, OpSortKey>;
/// Options of the kernel view.
pub type KernelsOptions = TableOptions<KernelGroupBy, KernelSortKey>;
/// Options of the communication view.
pub type CommOptions = kinetoscope_analysis::comm::CommOptions;

impl Engine {
    /// `summary`: per trace, era, rank, devices, span, categories and steps; for a run
    /// folder also each phase's snapshot and memory timeline.
    pub fn summary(&self, src: &Source) -> EngineResult<Document<TraceSummary>> {
        let mut doc = self.collect(src, (), self.map_any(src, summarize)?)?;
        if let InputLayout::RunFolder { phases } = &doc.layout {
            doc.phase_memory = phase_memory(phases, &HashMap::new(), &self.read);
        }
        Ok(doc)
    }

    /// `overview`: the step-time breakdown and GPU metrics of each trace.
    pub fn overview(&self, src: &Source) -> EngineResult<Document<TraceOverview>> {
        self.document(src, (), overview)
    }

    /// `ops`: the operator table of each trace, sorted and cut on the thread that read
    /// it, so only the rows shown travel back.
    pub fn ops(
        &self,
        src: &Source,
        opts: &OpsOptions,
    ) -> EngineResult<Document<OpsTable, OpsOptions>> {
        self.document(src, opts.clone(), |trace| {
            let mut table = analyze_ops(trace, opts.group_by);
            table.sort_by(opts.sort);
            table.truncate(opts.top);
            table
        })
    }

    /// `perf`: the performance model (roofline per operator + shapes + dtypes) of each
    /// trace, ranked by time lost and cut on the thread that read it.
    pub fn perf(
        &self,
        src: &Source,
        opts: &PerfOptions,
    ) -> EngineResult<Document<PerfTable, PerfOptions>> {
        self.document(src, opts.clone(), |trace| analyze_perf(trace, opts))
    }

    /// `kernels`: the kernel table of each trace, sorted and cut like [`Engine::ops`].
    pub fn kernels(
        &self,
        src: &Source,
        opts: &KernelsOptions,
    ) -> EngineResult<Document<KernelsTable, KernelsOptions>> {
        self.document(src, opts.clone(), |trace| {
            let mut table = analyze_kernels(trace, opts.group_by);
            table.sort_by(opts.sort);
            table.truncate(opts.top);
            table
        })
    }

    /// `comm`: overlap, exposed communication and collectives of each trace; in HTA
    /// mode, HTA's load-time filter decided over all ranks.
    pub fn comm(&self, src: &Source, opts: CommOptions) -> EngineResult<Document<TraceComm>> {
        let mut doc = self.document(src, (), |t| comm(t, opts))?;
        resolve_hta(&mut doc.traces);
        Ok(doc)
    }

    /// `sequences`: the most frequent kernel sequences in an operator or a step.
    pub fn sequences(
        &self,
        src: &Source,
        opts: &SequenceOptions,
    ) -> EngineResult<Document<TraceSequences>> {
        self.document(src, (), |t| frequent_sequences(t, opts))
    }

    /// `nvtx`: NVTX ranges by name with the GPU time launched inside (an Nsight
    /// Systems export's ranges; a Kineto trace's `record_function` ranges).
    pub fn nvtx(&self, src: &Source, opts: &NvtxOptions) -> EngineResult<Document<TraceNvtx>> {
        self.document(src, (), |t| nvtx(t, opts))
    }

    /// `critical-path`: the critical path of one step of each trace.
    pub fn critical_path(
        &self,
        src: &Source,
        opts: CriticalPathOptions,
    ) -> EngineResult<Document<CriticalPath>> {
        self.document(src, (), |t| critical_path(t, opts))
    }
}
