//! The words for the analyses' [`Note`]s (warnings and notes), shared by every renderer.

use kinetoscope_analysis::note::Note;
use kinetoscope_engine::{ReadFailure, SkippedFile, SpecialFileKind};
use kinetoscope_trace::{Defect, NsysFeature};

/// The line for a special file of an input folder that was skipped.
pub fn skipped(s: &SkippedFile) -> String {
    let kind = match s.kind {
        SpecialFileKind::Fifo => "a FIFO",
        SpecialFileKind::Socket => "a socket",
        SpecialFileKind::BlockDevice => "a block device",
        SpecialFileKind::CharDevice => "a character device",
        SpecialFileKind::Other => "not a regular file",
    };
    format!("skipped {}: {kind}, not opened", s.path)
}

/// One note as a line of text.
pub fn text(note: &Note) -> String {
    match note {
        Note::LenientRead { defects } => lenient_read(defects),
        Note::RepairedLaunchLinks {
            relinked,
            unlinked,
            nested,
        } => repaired_launch_links(*relinked, *unlinked, *nested),
        Note::GpuWithoutLaunch { count } => format!(
            "{count} GPU kernels, copies or sets have no launch record (launched before the \
             profiler window): views by operator leave them out, views by kernel keep them"
        ),
        Note::NsysMissing { features } => nsys_missing(features),
        Note::NsysExported { to } => {
            format!("exported with nsys to {to} (kinetoscope's cache; the report is unchanged)")
        }
        Note::NsysOpenRanges { count } => format!(
            "{count} NVTX ranges were still open when the capture ended: kept, cut at its end"
        ),
        Note::NsysStepRangeCandidates { names } => nsys_step_range_candidates(names),
        Note::NoDevicePeak {
            device,
            compute,
            bandwidth,
        } => no_device_peak(device.as_deref(), *compute, *bandwidth),
        Note::RatesAbovePeak { rows } => format!(
            "{rows} rows would run faster than the device's peak: their device time was not \
             all recorded or their shapes are wrong, so their rates are not shown"
        ),
        Note::NoStepMarkers => {
            "no ProfilerStep# spans: the whole trace is treated as one step".to_owned()
        }
        Note::NoDeviceActivity { launch_calls } => format!(
            "device activity is missing: the host made {launch_calls} kernel launch calls but \
             the trace holds no kernel, copy or set (the profiler lost or did not record \
             them), so this is not a CPU-only trace and GPU time, FLOP/s and MFU cannot be \
             measured from it"
        ),
        Note::DroppedTailSteps { steps } => dropped_tail_steps(steps),
        Note::OverlappingSpans { count } => format!(
            "{count} host spans started inside another span on the same thread and ended \
             after it; they are kept as its siblings (the TensorBoard plugin drops them)"
        ),
        Note::UnmatchedRuntimeCalls { count } => format!(
            "{count} runtime calls have an External id that no operator around them carries, \
             and no operator is around them; their device time is in no operator's row"
        ),
        Note::NoSuchStep { step: Some(n) } => format!("no kept step ProfilerStep#{n}"),
        Note::NoSuchStep { step: None } => "no step to analyse".to_owned(),
        Note::NoActivityInStep => "no host thread or GPU activity in the step".to_owned(),
        Note::WalkStoppedEarly => "the walk stopped early (iteration limit)".to_owned(),
        Note::PartialPath {
            length_ns,
            window_ns,
        } => partial_path(*length_ns, *window_ns),
        Note::NoMatchingOperator { operator, min_len } => format!(
            "no operator whose name contains {operator:?} launched at least {min_len} kernels"
        ),
        Note::DuplicateRanks => {
            "several files have the same rank: ranks are numbered by file order".to_owned()
        }
        Note::NoMatchedCollectives => {
            "no collective could be matched across ranks: waits and skews are unknown".to_owned()
        }
        Note::CollectivesApartInTime { dropped, kept } => format!(
            "{dropped} collectives paired across ranks by their order did not run at the same \
             time on every rank (the traces hold different calls), so they are left unmatched; \
             {kept} matched collectives remain"
        ),
        Note::OneRank => "one rank only: nothing to compare".to_owned(),
        Note::InRank { path, note } => format!("{path}: {}", text(note)),
        Note::NoCollectives => {
            "no communication kernels or record_param_comms collectives".to_owned()
        }
        Note::HtaFiltersNothing => "HTA mode: fewer than two ProfilerStep names over all \
                                    ranks, so HTA filters nothing"
            .to_owned(),
        Note::NoMemoryEvents => "no [memory] events: record with profile_memory=True".to_owned(),
        Note::NoAddressOrTotals => "these [memory] events have no Addr / Total Allocated \
                                    (PyTorch < 1.10): no allocation table; curves are the net \
                                    bytes allocated since profiling started"
            .to_owned(),
        Note::NoRecordsOnDevice => "no [memory] events on the selected device".to_owned(),
        Note::ComparedWithTimeline { path } => {
            format!("categories compared with PyTorch's memory timeline {path}")
        }
        Note::NoAllocationHistory => "no allocation history (record with \
                                      torch.cuda.memory._record_memory_history()): no \
                                      timeline, peak or leak suspects; sites are those live \
                                      at snapshot time"
            .to_owned(),
        Note::EmptySnapshot => "the snapshot is empty: no segments and no history".to_owned(),
        Note::NoDeviceMatches => "no device matches --device".to_owned(),
    }
}

/// The reader's defects, each kind with its count and first location.
fn lenient_read(defects: &[Defect]) -> String {
    let parts: Vec<String> = defects
        .iter()
        .map(|d| {
            format!(
                "{} {} (first at byte {}, event #{})",
                d.count,
                d.kind.describe(),
                d.first_offset,
                d.first_event_index
            )
        })
        .collect();
    format!("lenient read: {}", parts.join("; "))
}

/// The runtime calls whose launch link was repaired, by why their id did not hold.
fn repaired_launch_links(relinked: u64, unlinked: u64, nested: u64) -> String {
    let mut parts = Vec::new();
    if relinked + unlinked > 0 {
        parts.push(format!(
            "{} whose External id names an operator they do not run inside",
            relinked + unlinked
        ));
    }
    if nested > 0 {
        parts.push(format!("{nested} whose External id names no operator"));
    }
    let none = if unlinked > 0 {
        format!(" ({unlinked} with none around them are in no operator's row)")
    } else {
        String::new()
    };
    format!(
        "launch links repaired: runtime calls {}; each is linked to the innermost \
         operator around it on its thread{none}",
        parts.join(", ")
    )
}

/// What an Nsight Systems capture lacks, each with what is missing because of it.
fn nsys_missing(features: &[NsysFeature]) -> String {
    let parts: Vec<&str> = features
        .iter()
        .map(|f| match f {
            NsysFeature::CudaTrace => {
                "no CUDA trace (no kernel, copy, set or runtime call: --trace=cuda was \
                 off or CUDA profiling did not start), so no GPU time is measured"
            }
            NsysFeature::Nvtx => "no NVTX ranges (--trace=nvtx off or none pushed)",
            NsysFeature::GpuInfo => {
                "no GPU properties (TARGET_INFO_GPU): no device name, SM count or peak"
            }
        })
        .collect();
    format!("this capture has {}", parts.join("; "))
}

/// The NVTX ranges offered for `--nvtx-step`: the one that repeats, or those side by side.
fn nsys_step_range_candidates(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    match quoted.as_slice() {
        [one] => format!(
            "steps: no NVTX range is named as a step; the outermost range that \
             repeats is {one}: --nvtx-step {one} takes it as the step"
        ),
        _ => format!(
            "steps: no NVTX range is named as a step; these repeat side by side at \
             the outermost level: {} (--nvtx-step NAME takes one as the step)",
            quoted.join(", ")
        ),
    }
}

/// Which of the device's peaks the perf model lacks, and how to give them.
fn no_device_peak(device: Option<&str>, compute: bool, bandwidth: bool) -> String {
    let what = match (compute, bandwidth) {
        (true, true) => "compute or bandwidth peak",
        (true, false) => "compute peak",
        _ => "bandwidth peak",
    };
    let device = device.unwrap_or("no GPU recorded");
    format!(
        "no {what} for the device ({device}) in the peak table: rates are shown \
         without bound, roofline fraction or time lost; pass --peak-tflops / \
         --peak-tbps"
    )
}

/// The trailing steps dropped, and why.
fn dropped_tail_steps(steps: &[String]) -> String {
    format!(
        "dropped the last {} step(s) ({}): they launched no GPU work, or less than 0.8× \
         the step before, so the profiler probably missed some of their kernels",
        steps.len(),
        steps.join(", ")
    )
}

/// How much of the step window a critical path cut short covers, in µs.
fn partial_path(length_ns: i64, window_ns: i64) -> String {
    format!(
        "the path covers {:.1} µs of the {:.1} µs window (it stopped where no \
         predecessor was found)",
        length_ns as f64 / 1e3,
        window_ns as f64 / 1e3
    )
}

/// A trace section's closing lines: one `  warning: …` line per note.
pub(crate) fn push_warnings(out: &mut String, warnings: &[Note]) {
    for w in warnings {
        out.push_str(&format!("  warning: {}\n", text(w)));
    }
}

/// A document's closing lines: one `error: PATH: …` line per input that was not read.
pub(crate) fn push_read_failures(out: &mut String, errors: &[ReadFailure]) {
    for e in errors {
        out.push_str(&format!("error: {}: {}\n", e.path, e.error));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kinetoscope_trace::{Defect, DefectKind};

    #[test]
    fn words() {
        let read = Note::LenientRead {
            defects: vec![Defect {
                kind: DefectKind::BareToken,
                count: 2,
                first_offset: 10,
                first_event_index: 1,
            }],
        };
        assert_eq!(
            text(&read),
            "lenient read: 2 bare tokens such as N/A (read as null) (first at byte 10, event #1)"
        );
        let nested = Note::InRank {
            path: "r1.json".into(),
            note: Box::new(Note::NoStepMarkers),
        };
        assert!(text(&nested).starts_with("r1.json: no ProfilerStep#"));
        let links = Note::RepairedLaunchLinks {
            relinked: 3,
            unlinked: 0,
            nested: 2,
        };
        assert_eq!(
            text(&links),
            "launch links repaired: runtime calls 3 whose External id names an operator they \
             do not run inside, 2 whose External id names no operator; each is linked to the \
             innermost operator around it on its thread"
        );
        assert_eq!(
            text(&Note::NoSuchStep { step: Some(3) }),
            "no kept step ProfilerStep#3"
        );
        assert!(text(&Note::NoDeviceActivity { launch_calls: 400 })
            .starts_with("device activity is missing: the host made 400 kernel launch calls"));
    }
}
