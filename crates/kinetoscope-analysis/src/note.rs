//! What an analysis had to assume, skipped or could not compute, as data: one [`Note`]
//! per fact, with the numbers and names it concerns. Analyses attach them to their
//! results (`warnings`, `notes`); the renderers word them.

use kinetoscope_trace::{Defect, NsysFeature, ReadReport, Trace};
use serde::{Deserialize, Serialize};

/// One thing the reader of a result should know. Serialised with a `kind` tag
/// (`{"kind": "dropped_tail_steps", "steps": [...]}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Note {
    /// The reader got past defects in the file (repaired, read as null, or skipped).
    LenientRead {
        /// One entry per kind of defect, with its count and first location.
        defects: Vec<Defect>,
    },
    /// Runtime calls whose `External id` could not be taken as the link to their
    /// operator (the ids of operators and runtime calls are different numberings in some
    /// exporters) and were linked by time instead: to the innermost operator enclosing
    /// them on their thread.
    RepairedLaunchLinks {
        /// Calls whose id named an operator they do not run inside, relinked by time.
        relinked: u64,
        /// Calls whose id named an operator they do not run inside, with no operator
        /// around them: linked to none.
        unlinked: u64,
        /// Calls whose id named no operator, linked by time.
        nested: u64,
    },
    /// GPU activities (kernels, memcpys, memsets) whose correlation matches no runtime
    /// call (launched before the profiler window): views by operator (`ops`, `perf`)
    /// leave them out, views by kernel name keep them.
    GpuWithoutLaunch {
        /// How many.
        count: u64,
    },
    /// An Nsight Systems capture lacks kinds of data (their tables were never
    /// created): what they would give is missing, not zero.
    NsysMissing {
        /// What the capture lacks.
        features: Vec<NsysFeature>,
    },
    /// An Nsight Systems report was exported to SQLite with the `nsys` on `PATH`, into
    /// kinetoscope's cache folder, and read from there.
    NsysExported {
        /// The export.
        to: String,
    },
    /// NVTX ranges of an Nsight Systems capture still open when it ended: kept, cut at
    /// the capture's last time.
    NsysOpenRanges {
        /// How many.
        count: u64,
    },
    /// No NVTX range of an Nsight Systems capture was named as a step: the outermost
    /// range that repeats (or the names repeating side by side there) is offered for
    /// `--nvtx-step`.
    NsysStepRangeCandidates {
        /// The names, in order of first start.
        names: Vec<String>,
    },
    /// The perf model has no compute peak and/or no bandwidth for the device (not in the
    /// table, or no GPU recorded, and no `--peak-tflops` / `--peak-tbps`): rates are
    /// shown without bound, roofline fraction or time lost.
    NoDevicePeak {
        /// The GPU's name, when recorded.
        device: Option<String>,
        /// The compute peak is missing.
        compute: bool,
        /// The bandwidth peak is missing.
        bandwidth: bool,
    },
    /// Perf-model rows whose achieved rate would exceed the device's peak: their device
    /// time was not all recorded or their shapes are wrong, so their rates are refused.
    RatesAbovePeak {
        /// How many rows.
        rows: u64,
    },
    /// No `ProfilerStep#` spans: the whole trace is treated as one step.
    NoStepMarkers,
    /// The host launched kernels but the trace holds no kernel, copy or set: the device
    /// activity was lost (or not recorded), so the trace is not CPU-only and no GPU time
    /// can be measured from it.
    NoDeviceActivity {
        /// Kernel and graph launch calls in the trace.
        launch_calls: u64,
    },
    /// Trailing steps dropped because they launched no GPU work, or less than 0.8× the
    /// step before (their kernels were probably not all captured).
    DroppedTailSteps {
        /// The dropped steps, in time order.
        steps: Vec<String>,
    },
    /// Host spans that started inside another span on the same thread and ended after
    /// it; they are kept as its siblings.
    OverlappingSpans {
        /// How many.
        count: u64,
    },
    /// Runtime calls with an `External id` that no operator around them carries, and no
    /// operator around them: their device time is in no operator's row.
    UnmatchedRuntimeCalls {
        /// How many.
        count: u64,
    },
    /// The step asked for is not among the kept steps (or there is no step at all).
    NoSuchStep {
        /// `N` of the `ProfilerStep#N` asked for; `None` when none was asked for.
        step: Option<i64>,
    },
    /// No host thread or GPU activity inside the step.
    NoActivityInStep,
    /// The critical-path walk hit its iteration limit and stopped early.
    WalkStoppedEarly,
    /// The critical path stopped where no predecessor was found, short of the window.
    PartialPath {
        /// Time the path covers, ns.
        length_ns: i64,
        /// The step window, ns.
        window_ns: i64,
    },
    /// No operator matching the name launched enough kernels for a sequence.
    NoMatchingOperator {
        /// The name asked for (matched as a substring).
        operator: String,
        /// The shortest sequence asked for.
        min_len: usize,
    },
    /// Several files carry the same rank: ranks are numbered by file order.
    DuplicateRanks,
    /// No collective could be matched across ranks: waits and skews are unknown.
    NoMatchedCollectives,
    /// Collectives paired by their order that did not run at the same time on the ranks
    /// (the traces hold different calls: sampled or cut at different points): left
    /// unmatched.
    CollectivesApartInTime {
        /// How many pairings were dropped.
        dropped: usize,
        /// How many were kept.
        kept: usize,
    },
    /// One rank only: nothing to compare.
    OneRank,
    /// A note about one rank's trace.
    InRank {
        /// The rank's file.
        path: String,
        /// The note.
        note: Box<Note>,
    },
    /// No communication kernels and no `record_param_comms` collectives.
    NoCollectives,
    /// HTA mode with fewer than two `ProfilerStep` names over all ranks: HTA's step
    /// filter drops nothing.
    HtaFiltersNothing,
    /// No `[memory]` events (recorded only with `profile_memory=True`).
    NoMemoryEvents,
    /// `[memory]` events without `Addr` and `Total Allocated` (PyTorch < 1.10): no
    /// allocation table, and the curves are net bytes since profiling started.
    NoAddressOrTotals,
    /// No `[memory]` events on the selected device.
    NoRecordsOnDevice,
    /// The inferred categories were compared with a PyTorch memory timeline.
    ComparedWithTimeline {
        /// The timeline file.
        path: String,
    },
    /// The snapshot has no allocation history (`_record_memory_history` was off): no
    /// timeline, peak or leak suspects, and sites are those live at snapshot time.
    NoAllocationHistory,
    /// The snapshot has neither segments nor history.
    EmptySnapshot,
    /// No device matches `--device`.
    NoDeviceMatches,
}

impl Note {
    /// What the reader got past or repaired ([`Note::from_read`]) and, for an Nsight
    /// Systems export, what the capture lacks and the ranges its end cut.
    pub fn from_trace(trace: &Trace) -> Vec<Self> {
        let mut notes = Self::from_read(&trace.report);
        if let Some(info) = &trace.meta.nsys {
            if let Some(to) = &info.exported_to {
                notes.push(Self::NsysExported { to: to.clone() });
            }
            if !info.missing.is_empty() {
                notes.push(Self::NsysMissing {
                    features: info.missing.clone(),
                });
            }
            if info.ranges_open_at_end > 0 {
                notes.push(Self::NsysOpenRanges {
                    count: info.ranges_open_at_end,
                });
            }
            if !info.step_range_candidates.is_empty() {
                notes.push(Self::NsysStepRangeCandidates {
                    names: info.step_range_candidates.clone(),
                });
            }
        }
        notes
    }

    /// What the reader got past or repaired, as notes: its defects and its repaired
    /// launch links, each when there are any.
    pub fn from_read(report: &ReadReport) -> Vec<Self> {
        let mut notes = Vec::new();
        if !report.defects.is_empty() {
            notes.push(Self::LenientRead {
                defects: report.defects.clone(),
            });
        }
        let links = report.launch_links;
        if !links.is_empty() {
            notes.push(Self::RepairedLaunchLinks {
                relinked: links.relinked,
                unlinked: links.unlinked,
                nested: links.nested,
            });
        }
        if report.gpu_without_launch > 0 {
            notes.push(Self::GpuWithoutLaunch {
                count: report.gpu_without_launch,
            });
        }
        notes
    }
}
