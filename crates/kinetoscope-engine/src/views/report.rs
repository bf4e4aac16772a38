//! `report`: the advisor's summary and ranked findings for every trace of an input.
//! Each trace is reduced to its report on the thread that read it; for a rank folder
//! the cross-rank rules run afterwards on the rank comparison; for a run folder the
//! phases are put side by side ([`RunReport`]).

use std::collections::HashMap;
use std::path::Path;

use kinetoscope_advisor::summary::MemoryPeak;
use kinetoscope_advisor::{
    advise_ranks, advise_trace_with, all_findings, Config, RankMemory, SeverityCounts,
};
use kinetoscope_analysis::ranks::{compare_ranks, RankSummary, RanksOptions};
use kinetoscope_parquet::read::DevicePeak;

use crate::document::{InputLayout, ReportDocument, SCHEMA_VERSION};
use crate::error::EngineResult;
use crate::input::{open_path, split_results, Input, Source};
use crate::run_folder::{phase_memory, run_report, RunReport, TopOps};
use crate::views::ensure_any_read;
use crate::views::ranks::read_export_ranks;
use crate::Engine;

impl Engine {
    /// `report`: per trace the advisor's report; across ranks the straggler and memory
    /// imbalance rules; for a run folder the phases side by side; every finding ranked by
    /// estimated recoverable time.
    pub fn report(&self, src: &Source, config: &Config) -> EngineResult<ReportDocument> {
        Ok(self.report_with(src, config, |_| ())?.0)
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
        let (pstats, mut pstats_errors) = self.pstats_reports(src, config);
        let (tables, table_errors) = self.table_reports(src);
        pstats_errors.extend(table_errors);
        let side_files_only = |pstats, tables| ReportDocument {
            schema_version: SCHEMA_VERSION,
            input: src.name(),
            layout: InputLayout::File,
            run: None,
            traces: Vec::new(),
            cross_rank_findings: Vec::new(),
            findings: Vec::new(),
            counts: SeverityCounts::default(),
            throughput: None,
            errors: Vec::new(),
            skipped: Vec::new(),
            pstats,
            tables,
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
        let mapped = self.map(src, |t| {
            let (mut report, summary) = advise_trace_with(t, config, |f| {
                rank_folder.then(|| RankSummary::from_parts(t, &f.overview, f.collectives()))
            });
            shrink(&mut report);
            (report, summary, run_folder.then(|| TopOps::of(t)), extra(t))
        });
        // A folder of pstats files or tables only is reported as such.
        let mapped = match mapped {
            Err(_) if !(pstats.is_empty() && tables.is_empty()) && pstats_errors.is_empty() => {
                return Ok((side_files_only(pstats, tables), Vec::new()))
            }
            m => m?,
        };
        let results = ensure_any_read(mapped.results)?;
        let mut traces = Vec::new();
        let mut summaries = Vec::new();
        let mut top_ops = Vec::new();
        let mut extras = Vec::new();
        let errors = split_results(results, |_, (t, s, ops, e)| {
            traces.push(t);
            summaries.extend(s);
            top_ops.push(ops);
            extras.push(e);
        });
        let input = src.name();
        let cross_rank_findings =
            if matches!(mapped.layout, InputLayout::RankFolder) && summaries.len() >= 2 {
                let ranks = compare_ranks(summaries, RanksOptions::default());
                advise_ranks(&RankMemory::of_reports(&traces), &ranks, config, &input)
            } else {
                Vec::new()
            };
        let run = match &mapped.layout {
            InputLayout::RunFolder { phases } => {
                Some(run_view(phases, &traces, &top_ops, &self.read))
            }
            _ => None,
        };
        let findings = all_findings(
            traces.iter().map(|t| t.findings.as_slice()),
            &cross_rank_findings,
        );
        let counts = SeverityCounts::of(&findings);
        let doc = ReportDocument {
            schema_version: SCHEMA_VERSION,
            input,
            layout: mapped.layout,
            run,
            traces,
            cross_rank_findings,
            findings,
            counts,
            throughput: None,
            errors: errors.into_iter().chain(pstats_errors).collect(),
            skipped: mapped.skipped,
            pstats,
            tables,
        };
        let doc = match doc.items_from_shapes() {
            Some((unit, n, source)) => doc.with_items(unit, n, source),
            None => doc,
        };
        Ok((doc, extras))
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
        schema_version: SCHEMA_VERSION,
        input,
        layout: InputLayout::ParquetExport,
        run: None,
        traces: Vec::new(),
        counts: SeverityCounts::of(&findings),
        cross_rank_findings,
        findings,
        throughput: None,
        errors: read.errors,
        skipped: Vec::new(),
        pstats: Vec::new(),
        tables: Vec::new(),
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
