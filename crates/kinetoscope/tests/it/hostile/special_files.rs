//! Special files inside an input folder: a FIFO (or socket, or device) named like a
//! trace is skipped, never opened (opening a FIFO with no writer blocks for ever), and
//! listed in a note on stderr and in the JSON document's `skipped`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::harness::{fingerprint, run_measured};
use crate::common::{fixtures, memory_snapshots};

/// Make a FIFO at `path` with `mkfifo(3)`.
fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("path");
    // SAFETY: a valid NUL-terminated path; mkfifo only creates the file.
    let r = unsafe { libc::mkfifo(c.as_ptr(), 0o644) };
    assert_eq!(r, 0, "mkfifo: {}", std::io::Error::last_os_error());
}

/// Watches a FIFO until dropped: whenever a process holds it open for reading, a
/// non-blocking open for writing succeeds; the watcher records that and closes it at
/// once, so a reader blocked in `open` gets end-of-file instead of hanging the test.
struct FifoWatch {
    opened: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FifoWatch {
    fn new(fifo: PathBuf) -> Self {
        use std::os::unix::fs::OpenOptionsExt;
        let opened = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let (o, s) = (opened.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                let w = std::fs::OpenOptions::new()
                    .write(true)
                    .custom_flags(libc::O_NONBLOCK)
                    .open(&fifo);
                if w.is_ok() {
                    o.store(true, Ordering::Relaxed);
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        });
        Self {
            opened,
            stop,
            thread: Some(thread),
        }
    }

    /// Whether any process opened the FIFO for reading so far.
    fn was_opened(&self) -> bool {
        self.opened.load(Ordering::Relaxed)
    }
}

impl Drop for FifoWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Copy `from` to `dir/name`.
fn copy(from: &Path, dir: &Path, name: &str) {
    std::fs::copy(from, dir.join(name)).expect("copy fixture");
}

#[test]
fn a_fifo_in_a_rank_folder_is_skipped_and_listed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let ranks = tmp.path().join("ranks");
    std::fs::create_dir(&ranks).expect("mkdir");
    for r in 0..2 {
        copy(
            &fixtures().join(format!("ranks/sampled_rank-{r}.json.gz")),
            &ranks,
            &format!("rank-{r}.json.gz"),
        );
    }
    let fifo = ranks.join("rank-2.json");
    mkfifo(&fifo);
    let watch = FifoWatch::new(fifo.clone());
    let before = fingerprint(std::slice::from_ref(&ranks));
    for (view, format) in [
        ("summary", "table"),
        ("ranks", "table"),
        ("memory", "table"),
        ("report", "json"),
        ("overview", "csv"),
        ("ops", "json"),
    ] {
        let run = run_measured(tmp.path(), &[view, "ranks", "--format", format]);
        run.assert_sane(512 << 20);
        assert_eq!(run.code, Some(0), "{view}: {}", run.err());
        assert!(
            run.err()
                .contains("note: skipped ranks/rank-2.json: a FIFO, not opened"),
            "{view}: {}",
            run.err()
        );
        if format == "json" {
            let doc: serde_json::Value = serde_json::from_slice(&run.stdout).expect("JSON");
            assert_eq!(
                doc["skipped"],
                serde_json::json!([{ "path": "ranks/rank-2.json", "kind": "fifo" }]),
                "{view}"
            );
        }
    }
    assert!(!watch.was_opened(), "the FIFO was opened");
    assert_eq!(before, fingerprint(&[ranks]));
}

#[test]
fn a_fifo_in_a_run_folder_is_skipped_and_listed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let run_dir = tmp.path().join("run");
    std::fs::create_dir(&run_dir).expect("mkdir");
    copy(
        &fixtures().join("torch-2.4.1_tb_w0.1795239112653061314.pt.trace.json.gz"),
        &run_dir,
        "stage1-train_trace.json.gz",
    );
    copy(
        &memory_snapshots().join("v2_6_full.pickle"),
        &run_dir,
        "stage1-train_mem.pickle",
    );
    // A FIFO for each kind a run folder reads.
    let fifos = [
        "stage2-eval_trace.json",
        "stage1-train_memory_timeline.json",
        "stage2-eval_mem.pickle",
    ]
    .map(|n| run_dir.join(n));
    let watches: Vec<FifoWatch> = fifos
        .iter()
        .map(|f| {
            mkfifo(f);
            FifoWatch::new(f.clone())
        })
        .collect();
    for view in ["summary", "memory", "report"] {
        let run = run_measured(tmp.path(), &[view, "run"]);
        run.assert_sane(512 << 20);
        assert_eq!(run.code, Some(0), "{view}: {}", run.err());
        for f in &fifos {
            let name = f.file_name().expect("name").to_string_lossy();
            assert!(
                run.err()
                    .contains(&format!("note: skipped run/{name}: a FIFO")),
                "{view}: {}",
                run.err()
            );
        }
    }
    assert!(watches.iter().all(|w| !w.was_opened()), "a FIFO was opened");
}
