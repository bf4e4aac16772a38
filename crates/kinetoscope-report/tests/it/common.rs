//! The one helper module of the renderers' tests: where the traces live, the engine's
//! workbook documents of them, and a workbook read back with `calamine`.

use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};

use calamine::{open_workbook_from_rs, Data, Range, Reader, Xlsx};
use kinetoscope_advisor::Config;
use kinetoscope_analysis::perf::PerfOptions;
use kinetoscope_engine::{Engine, Source, WorkbookDocument};

/// The H100 Qwen1.5-0.5B trace of TraceLens's tests (the analysis crate's fixtures,
/// see `fixtures/tracelens/SOURCE.md`).
pub fn h100_trace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kinetoscope-analysis/tests/fixtures/tracelens")
        .join("h100__Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz")
}

/// HTA's two-rank folder (the reader's fixtures, see its SOURCE.md), with collectives.
pub fn rank_folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../kinetoscope-trace/tests/fixtures/ranks")
}

/// The workbook documents of `path`, with the default thresholds and peaks.
pub fn documents(path: &Path) -> WorkbookDocument {
    Engine::default()
        .workbook(
            &Source::Path(path.to_owned()),
            &Config::default(),
            &PerfOptions::default(),
        )
        .expect("workbook documents")
}

/// A workbook's bytes, opened with `calamine`.
pub struct Book {
    /// The reader.
    pub xlsx: Xlsx<Cursor<Vec<u8>>>,
    /// The file's bytes (for the parts `calamine` does not expose).
    pub bytes: Vec<u8>,
}

impl Book {
    /// Open `bytes`.
    pub fn open(bytes: Vec<u8>) -> Self {
        let xlsx = open_workbook_from_rs(Cursor::new(bytes.clone())).expect("a valid .xlsx");
        Self { xlsx, bytes }
    }

    /// The cells of sheet `name`.
    pub fn sheet(&mut self, name: &str) -> Range<Data> {
        self.xlsx
            .worksheet_range(name)
            .unwrap_or_else(|e| panic!("sheet {name}: {e}"))
    }

    /// The header row of sheet `name`.
    pub fn headers(&mut self, name: &str) -> Vec<String> {
        let range = self.sheet(name);
        let first = range.rows().next().expect("a header row");
        first.iter().map(|c| c.to_string()).collect()
    }

    /// The XML of one part of the file (`xl/styles.xml`, `xl/worksheets/sheet1.xml`).
    pub fn part(&self, name: &str) -> String {
        let mut zip = zip::ZipArchive::new(Cursor::new(&self.bytes)).expect("a zip");
        let mut text = String::new();
        zip.by_name(name)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .read_to_string(&mut text)
            .expect("UTF-8 XML");
        text
    }
}

/// The cell in `row`, column `header` of `range` (row 0 is the header row).
pub fn cell<'a>(range: &'a Range<Data>, row: usize, header: &str) -> &'a Data {
    let headers: Vec<String> = range
        .rows()
        .next()
        .expect("a header row")
        .iter()
        .map(|c| c.to_string())
        .collect();
    let col = headers
        .iter()
        .position(|h| h == header)
        .unwrap_or_else(|| panic!("no column {header} in {headers:?}"));
    range
        .get((row, col))
        .unwrap_or_else(|| panic!("no cell ({row}, {header})"))
}

/// A numeric cell's value.
pub fn number(d: &Data) -> f64 {
    match d {
        Data::Float(f) => *f,
        Data::Int(i) => *i as f64,
        other => panic!("not a number: {other:?}"),
    }
}

/// A text cell's value.
pub fn text(d: &Data) -> &str {
    match d {
        Data::String(s) => s,
        other => panic!("not text: {other:?}"),
    }
}

/// `a` and `b` equal to a relative 1e-12 (the file keeps 15 significant digits).
pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}
