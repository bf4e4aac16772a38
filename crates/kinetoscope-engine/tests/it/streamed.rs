//! `report_streamed` and [`ReportJson`]: the JSON written trace by trace as the report
//! is made is the same text as the whole document's, on PARAM's real 8-rank DLRM job
//! (with a file that cannot be read), the corpus's straggler run, one file, a run folder (reported whole) and bytes
//! in memory; the document returned keeps everything but the operator and kernel tables
//! (and, in a rank folder, each rank's findings, which the job-wide list groups).

use std::path::{Path, PathBuf};

use kinetoscope_advisor::{Config, TraceReport};
use kinetoscope_engine::{
    to_json, Engine, InputLayout, ReportDocument, ReportJson, ReportSink, Source,
};

use crate::common::{corpus, fixture, lenient};

/// A sink that writes the JSON and records what it was handed.
struct Recording {
    json: ReportJson<Vec<u8>>,
    begun: Vec<(String, InputLayout)>,
    paths: Vec<String>,
    reports: Vec<TraceReport>,
}

impl ReportSink for Recording {
    fn begin(&mut self, input: &str, layout: &InputLayout) -> std::io::Result<()> {
        self.begun.push((input.to_owned(), layout.clone()));
        self.json.begin(input, layout)
    }

    fn trace(&mut self, report: &TraceReport) -> std::io::Result<()> {
        self.paths.push(report.path.clone());
        self.reports.push(report.clone());
        self.json.trace(report)
    }
}

/// The whole report, the streamed one, the recording sink and the streamed JSON text.
fn both(src: &Source) -> (ReportDocument, ReportDocument, Recording, String) {
    let engine = Engine::new(lenient(2));
    let config = Config::default();
    let whole = engine.report(src, &config).expect("report");
    let mut sink = Recording {
        json: ReportJson::new(Vec::new()),
        begun: Vec::new(),
        paths: Vec::new(),
        reports: Vec::new(),
    };
    let mut streamed = engine
        .report_streamed(src, &config, &mut sink)
        .expect("report_streamed");
    let json = std::mem::replace(&mut sink.json, ReportJson::new(Vec::new()));
    let text = String::from_utf8(json.finish(&mut streamed).unwrap()).unwrap();
    (whole, streamed, sink, text)
}

/// The streamed document is the whole one, each trace's profile without its operator
/// and kernel tables, which the sink got whole.
fn assert_slim_of(streamed: &ReportDocument, whole: &ReportDocument, sink: &Recording) {
    assert_eq!(sink.reports, whole.traces);
    let mut slimmed = whole.clone();
    let rank_folder = matches!(whole.layout, InputLayout::RankFolder);
    for t in &mut slimmed.traces {
        let p = t.profile.as_mut().expect("a profile");
        p.ops.clear();
        p.kernels.clear();
        // A rank folder's findings are in its job-wide list, grouped.
        if rank_folder {
            t.findings.clear();
        }
    }
    assert_eq!(to_json(streamed).unwrap(), to_json(&slimmed).unwrap());
}

#[test]
fn a_rank_folder_streams_the_same_json_in_rank_order() {
    let tmp = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kinetoscope-analysis/tests/fixtures/param/dlrm_kineto");
    for f in std::fs::read_dir(&src).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, tmp.path().join(f.file_name().unwrap())).unwrap();
    }
    // A rank file that cannot be read, between the others.
    std::fs::write(
        tmp.path().join("worker3b_step_12.pt.trace.json"),
        "this is not a trace",
    )
    .unwrap();
    let (whole, streamed, sink, text) = both(&Source::Path(tmp.path().to_owned()));
    assert_eq!(text, to_json(&whole).unwrap() + "\n");
    assert_eq!(whole.traces.len(), 8);
    assert_eq!(whole.errors.len(), 1);
    assert!(whole.traces.iter().all(|t| {
        let p = t.profile.as_ref().unwrap();
        !p.ops.is_empty() && !p.kernels.is_empty()
    }));
    assert_eq!(sink.begun.len(), 1);
    assert!(matches!(sink.begun[0].1, InputLayout::RankFolder));
    let paths: Vec<&str> = whole.traces.iter().map(|t| t.path.as_str()).collect();
    assert_eq!(sink.paths, paths);
    assert!(paths.windows(2).all(|w| w[0] < w[1]), "{paths:?}");
    assert_slim_of(&streamed, &whole, &sink);
}

/// The corpus's Gloo run, whose rank 1 sleeps: the cross-rank findings follow the
/// streamed traces.
#[test]
fn cross_rank_findings_follow_the_streamed_traces() {
    let (whole, streamed, sink, text) = both(&Source::Path(corpus().join("straggler")));
    assert!(!whole.cross_rank_findings.is_empty(), "a straggler");
    assert_eq!(text, to_json(&whole).unwrap() + "\n");
    assert_eq!(sink.reports.len(), whole.traces.len());
    assert_slim_of(&streamed, &whole, &sink);
}

#[test]
fn one_file_and_bytes_stream_the_same_json() {
    let path = fixture("inference_rank_1.json.gz");
    let data: std::sync::Arc<[u8]> = std::fs::read(&path).unwrap().into();
    for src in [
        Source::Path(path),
        Source::Bytes {
            name: "upload.json".into(),
            data,
        },
    ] {
        let (whole, streamed, sink, text) = both(&src);
        assert_eq!(text, to_json(&whole).unwrap() + "\n");
        assert_eq!(sink.paths.len(), 1);
        assert_slim_of(&streamed, &whole, &sink);
    }
}

#[test]
fn a_run_folder_is_reported_whole() {
    let (whole, streamed, sink, text) = both(&Source::Path(corpus().join("run_folder")));
    assert!(whole.run.is_some());
    assert!(sink.begun.is_empty() && sink.reports.is_empty());
    assert_eq!(to_json(&streamed).unwrap(), to_json(&whole).unwrap());
    assert_eq!(text, to_json(&whole).unwrap() + "\n");
}

#[test]
fn nothing_is_written_when_no_trace_can_be_read() {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["rank0.pt.trace.json", "rank1.pt.trace.json"] {
        std::fs::write(tmp.path().join(name), "this is not a trace").unwrap();
    }
    let mut json = ReportJson::new(Vec::new());
    let err = Engine::new(lenient(2))
        .report_streamed(
            &Source::Path(PathBuf::from(tmp.path())),
            &Config::default(),
            &mut json,
        )
        .unwrap_err();
    assert!(err.to_string().contains("rank0.pt.trace.json"), "{err}");
    let mut empty = ReportDocument::empty(String::new(), InputLayout::File);
    let written = json.finish(&mut empty).unwrap();
    assert_eq!(
        String::from_utf8(written).unwrap(),
        to_json(&empty).unwrap() + "\n",
        "the head was never written"
    );
}
