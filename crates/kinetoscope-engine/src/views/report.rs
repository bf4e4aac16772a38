//! `report`: the advisor's summary and ranked findings for every trace of an input.
//! Each trace is reduced to its report on the thread that read it; for a rank folder
//! the cross-rank rules run afterwards on the rank comparison; for a run folder the
//! phases are put side by side ([`RunReport`]).

use std::collections::HashMap;
use std::path::Path;

use kinetoscope_advisor::summary::MemoryPeak;
use kinetoscope_advisor::{
    advise_ranks, advise_trace_with, all_findings, Config, RankGroups, RankMemory, SeverityCounts,
    TraceReport,
};
use kinetoscope_analysis::ranks::{compare_ranks, RankSummary, RanksOptions};
use kinetoscope_parquet::read::DevicePeak;

use crate::document::{InputLayout, ReadFailure, ReportDocument};
use crate::error::{EngineError, EngineResult};
use crate::input::{open_path, Input, PerTrace, Source};
use crate::report_stream::ReportSink;
use crate::run_folder::{phase_memory, run_report, RunReport, TopOps};
use crate::views::ranks::read_export_ranks;
use crate::views::{no_run_folder_traces, nothing_read};
use crate::Engine;

impl Engine {
    /// `report`: per trace the advisor's report; across ranks the straggler and memory
    /// imbalance rules; for a run folder the phases side by side; every finding ranked by
    /// estimated recoverable time.
    pub fn report(&self, src: &Source, config: &Config) -> EngineResult<ReportDocument> {
        Ok(self.report_inner(src, config, |_| (), None)?.0)
    }

    /// [`Engine::report`], handing each trace's whole report to `sink` in input order as
    /// soon as it is made (so a front end can write it out): the document returned keeps
    /// of each trace its summary, findings and steps, its profile without the operator
    /// and kernel tables `sink` was given, and so does not grow with them over thousands
    /// of ranks. A run folder (whose view needs its phases whole) and an input without
    /// traces are returned whole, and `sink` is not called.
    pub fn report_streamed(
        &self,
        src: &Source,
        config: &Config,
        sink: &mut dyn ReportSink,
    ) -> EngineResult<ReportDocument> {
        Ok(self.report_inner(src, config, |_| (), Some(sink))?.0)
    }

    /// [`Engine::report`], and `extra` of each trace read (in the order of the
    /// document's traces), computed on the thread that read it: the other views of a
    /// workbook come from the same read.
    pub(crate) fn report_with<E: Send>(
        &self,
        src: &Source,
        config: &Config,
        extra: impl Fn(&kinetoscope_trace::Trace) -> E + Sync,
    ) -> EngineResult<(ReportDocument, Vec<E>)> {
        self.report_inner(src, config, extra, None)
    }

    /// What [`Engine::report_with`] and [`Engine::report_streamed`] share.
    fn report_inner<E: Send>(
        &self,
        src: &Source,
        config: &Config,
        extra: impl Fn(&kinetoscope_trace::Trace) -> E + Sync,
        sink: Option<&mut dyn ReportSink>,
    ) -> EngineResult<(ReportDocument, Vec<E>)> {
        let (pstats, mut pstats_errors) = self.pstats_reports(src, config);
        let (tables, table_errors) = self.table_reports(src);
        pstats_errors.extend(table_errors);
        let side_files_only = |pstats, tables| ReportDocument {
            pstats,
            tables,
            ..ReportDocument::empty(src.name(), InputLayout::File)
        };
        if let Some(dir) = src.path().filter(|p| kinetoscope_parquet::is_export(p)) {
            return Ok((report_of_export(src, dir, config)?, Vec::new()));
        }
        if src.path().is_some_and(|p| !p.is_dir()) && !(pstats.is_empty() && tables.is_empty()) {
            return Ok((side_files_only(pstats, tables), Vec::new()));
        }
        // A run folder's view needs each phase's top operators, computed with the rest
        // on the thread that read the trace; the cross-rank rules need each rank's
        // summary, made from the facts the rules already computed.
        let input = match src {
            Source::Path(p) => open_path(p).ok(),
            Source::Bytes { .. } => None,
        };
        let run_folder = matches!(input, Some(Input::RunFolder { .. }));
        let rank_folder = matches!(input, Some(Input::RankFolder { .. }));
        let layout = input.as_ref().map_or(InputLayout::File, Input::layout);
        let mut kept = Kept::new(src.name(), layout, sink.filter(|_| !run_folder));
        kept.groups = rank_folder.then(RankGroups::new);
        let mapped = self
            .map_each(
                src,
                |t| {
                    let (mut report, summary) = advise_trace_with(t, config, |f| {
                        rank_folder
                            .then(|| RankSummary::from_parts(t, &f.overview, f.collectives()))
                    });
                    shrink(&mut report);
                    (report, summary, run_folder.then(|| TopOps::of(t)), extra(t))
                },
                |r| kept.take(r),
            )
            .and_then(|(layout, skipped)| match layout {
                InputLayout::RunFolder { .. }
                    if kept.traces.is_empty() && kept.errors.is_empty() =>
                {
                    Err(no_run_folder_traces(src))
                }
                _ => Ok((layout, skipped)),
            });
        // A folder of pstats files or tables only is reported as such.
        let (layout, skipped) = match mapped {
            Err(_) if !(pstats.is_empty() && tables.is_empty()) && pstats_errors.is_empty() => {
                return Ok((side_files_only(pstats, tables), Vec::new()))
            }
            m => m?,
        };
        let Kept {
            traces,
            summaries,
            top_ops,
            extras,
            errors,
            first_failure,
            written,
            groups,
            ..
        } = kept;
        written.map_err(EngineError::Write)?;
        if let (true, Some((path, error))) = (traces.is_empty(), first_failure) {
            return Err(nothing_read(path, error));
        }
        let input = src.name();
        let cross_rank_findings =
            if matches!(layout, InputLayout::RankFolder) && summaries.len() >= 2 {
                let ranks = compare_ranks(summaries, RanksOptions::default());
                advise_ranks(&RankMemory::of_reports(&traces), &ranks, config, &input)
            } else {
                Vec::new()
            };
        let run = match &layout {
            InputLayout::RunFolder { phases } => {
                Some(run_view(phases, &traces, &top_ops, &self.read))
            }
            _ => None,
        };
        // A rank folder's job-wide list has each problem once, over the ranks it is on.
        let findings = match groups {
            Some(groups) => all_findings([groups.finish(&input).as_slice()], &cross_rank_findings),
            None => all_findings(
                traces.iter().map(|t| t.findings.as_slice()),
                &cross_rank_findings,
            ),
        };
        let doc = ReportDocument {
            run,
            traces,
            cross_rank_findings,
            counts: SeverityCounts::of(&findings),
            findings,
            errors: errors.into_iter().chain(pstats_errors).collect(),
            skipped,
            pstats,
            tables,
            ..ReportDocument::empty(input, layout)
        };
        let doc = match doc.items_from_shapes() {
            Some((unit, n, source)) => doc.with_items(unit, n, source),
            None => doc,
        };
        Ok((doc, extras))
    }
}

/// What `report` keeps of each trace as its result arrives, in input order.
struct Kept<'s, E> {
    /// The input's name and layout, for the sink's head.
    head: (String, InputLayout),
    /// Where each whole report goes as it arrives, when streaming.
    sink: Option<&'s mut dyn ReportSink>,
    /// The first write to `sink` that failed (nothing more is written after it).
    written: std::io::Result<()>,
    /// Each trace's report (slimmed once `sink` has the whole one).
    traces: Vec<TraceReport>,
    /// Each rank's summary, for the cross-rank rules.
    summaries: Vec<RankSummary>,
    /// Each phase's top operators, for a run folder.
    top_ops: Vec<Option<TopOps>>,
    /// Each trace's extra result.
    extras: Vec<E>,
    /// The traces that could not be read.
    errors: Vec<ReadFailure>,
    /// The first of them, whole, for the error when none could be read.
    first_failure: Option<(std::path::PathBuf, kinetoscope_trace::TraceError)>,
    /// A rank folder's findings grouped across its ranks, as they arrive.
    groups: Option<RankGroups>,
}

/// One trace's results as the reader threads make them.
type Reduced<E> = (TraceReport, Option<RankSummary>, Option<TopOps>, E);

impl<'s, E> Kept<'s, E> {
    fn new(input: String, layout: InputLayout, sink: Option<&'s mut dyn ReportSink>) -> Self {
        Self {
            head: (input, layout),
            sink,
            written: Ok(()),
            traces: Vec::new(),
            summaries: Vec::new(),
            top_ops: Vec::new(),
            extras: Vec::new(),
            errors: Vec::new(),
            first_failure: None,
            groups: None,
        }
    }

    /// Keep one trace's result, handing its whole report to the sink first. A rank's
    /// findings go to the groups; once streamed, they are not kept with the trace.
    fn take(&mut self, r: PerTrace<Reduced<E>>) {
        let (mut report, summary, ops, extra) = match r.result {
            Ok(reduced) => reduced,
            Err(error) => {
                self.errors.push(ReadFailure::new(&r.path, &error));
                self.first_failure.get_or_insert((r.path, error));
                return;
            }
        };
        if let Some(sink) = self.sink.as_deref_mut() {
            if self.written.is_ok() {
                self.written = match self.traces.is_empty() {
                    true => sink.begin(&self.head.0, &self.head.1),
                    false => Ok(()),
                }
                .and_then(|()| sink.trace(&report));
            }
            slim(&mut report);
        }
        if let Some(groups) = self.groups.as_mut() {
            groups.add(&report.findings, report.rank);
            if self.sink.is_some() {
                report.findings = Vec::new();
            }
        }
        self.traces.push(report);
        self.summaries.extend(summary);
        self.top_ops.push(ops);
        self.extras.push(extra);
    }
}

/// A trace's report without what only its streamed copy needs: the profile's operator
/// and kernel tables (most of a rank's report), kept out of memory over many ranks.
fn slim(report: &mut TraceReport) {
    if let Some(p) = report.profile.as_mut() {
        p.ops = Vec::new();
        p.kernels = Vec::new();
    }
}

/// The report of a Parquet export: the cross-rank rules over its ranks (the rank
/// comparison and each rank's fullest GPU, read back from its tables). The rules of
/// single traces need the events, which the export does not keep: `traces` is empty.
fn report_of_export(src: &Source, dir: &Path, config: &Config) -> EngineResult<ReportDocument> {
    let read = read_export_ranks(src, dir, true)?;
    let memory: Vec<RankMemory> = read
        .summaries
        .iter()
        .zip(&read.peaks)
        .filter_map(|(s, p)| RankMemory::of_peaks(s.rank, &memory_peaks(p), s.steps.len()))
        .collect();
    let input = src.name();
    let ranks = compare_ranks(read.summaries, RanksOptions::default());
    let cross_rank_findings = advise_ranks(&memory, &ranks, config, &input);
    let findings = all_findings(std::iter::empty(), &cross_rank_findings);
    Ok(ReportDocument {
        counts: SeverityCounts::of(&findings),
        cross_rank_findings,
        findings,
        errors: read.errors,
        ..ReportDocument::empty(input, InputLayout::ParquetExport)
    })
}

/// A rank's device peaks as the advisor's summary gives them: devices whose records
/// report allocated bytes, the share of capacity from the higher of the two peaks.
fn memory_peaks(peaks: &[DevicePeak]) -> Vec<MemoryPeak> {
    peaks
        .iter()
        .filter_map(|p| {
            let allocated = p.peak_allocated_bytes?;
            let reserved = p.peak_reserved_bytes.unwrap_or(0).max(0);
            let capacity_bytes = p.capacity_bytes.filter(|&c| c > 0).map(|c| c as u64);
            Some(MemoryPeak {
                device: p.device.to_string(),
                peak_allocated_bytes: allocated,
                peak_reserved_bytes: reserved,
                capacity_bytes,
                peak_share_of_capacity: capacity_bytes
                    .map(|c| allocated.max(reserved) as f64 / c as f64),
            })
        })
        .collect()
}

/// `report` without the spare capacity of its lists: every trace's report is kept until
/// the document is written (a folder of a thousand ranks keeps a thousand).
fn shrink(report: &mut kinetoscope_advisor::TraceReport) {
    report.findings.shrink_to_fit();
    if let Some(p) = report.profile.as_mut() {
        p.steps.shrink_to_fit();
        p.ops.shrink_to_fit();
        p.kernels.shrink_to_fit();
        p.memory.shrink_to_fit();
    }
}

/// The run view: each phase's report, top operators and memory artifacts.
fn run_view(
    phases: &[kinetoscope_trace::RunPhase],
    traces: &[kinetoscope_advisor::TraceReport],
    top_ops: &[Option<TopOps>],
    read: &kinetoscope_trace::read::ReadOptions,
) -> RunReport {
    let by_path: HashMap<String, _> = traces
        .iter()
        .zip(top_ops)
        .filter_map(|(t, ops)| Some((t.path.clone(), (t, ops.as_ref()?))))
        .collect();
    let peaks: HashMap<_, _> = traces
        .iter()
        .map(|t| {
            let peak = t
                .summary
                .memory
                .iter()
                .map(|m| (m.peak_allocated_bytes, m.device.clone()))
                .max_by_key(|(b, _)| *b);
            (std::path::PathBuf::from(&t.path), peak)
        })
        .collect();
    run_report(phases, &by_path, &phase_memory(phases, &peaks, read))
}
