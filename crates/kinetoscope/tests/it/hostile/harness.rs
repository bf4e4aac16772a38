//! What every hostile test needs: run the binary and measure its own peak RSS, hash the
//! inputs, and check the output for raw control bytes.

use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// One run of the binary, with its raw output and its own peak resident memory.
pub struct Measured {
    /// The exit code; `None` when a signal ended it (an abort, a kill).
    pub code: Option<i32>,
    /// Standard output, as written.
    pub stdout: Vec<u8>,
    /// Standard error, as written.
    pub stderr: Vec<u8>,
    /// Peak resident set of the child, in bytes (`ru_maxrss` from `wait4`).
    pub peak_rss: u64,
}

impl Measured {
    /// Stderr as text (lossy), for messages.
    pub fn err(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }

    /// Stdout as text (lossy).
    pub fn out(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// Assert the run ended by itself with 0, 1 or 2, printed no raw control byte, and
    /// peaked under `max_rss` bytes.
    pub fn assert_sane(&self, max_rss: u64) {
        assert!(
            matches!(self.code, Some(0..=2)),
            "exit {:?}, stderr: {}",
            self.code,
            self.err()
        );
        assert_no_control_bytes("stdout", &self.stdout);
        assert_no_control_bytes("stderr", &self.stderr);
        assert!(
            self.peak_rss <= max_rss,
            "peak RSS {} MiB over the bound of {} MiB",
            self.peak_rss >> 20,
            max_rss >> 20
        );
    }
}

/// The variable that makes [`measure_child`] run one measured child.
const MEASURE_SPEC: &str = "KINETOSCOPE_TEST_MEASURE_CHILD";

/// Run `kinetoscope args` in `dir` (no colours, 100 columns) and measure it.
///
/// The binary is spawned by a fresh copy of this test binary running [`measure_child`],
/// not by this process: on Linux a child's `ru_maxrss` is at least the high-water RSS of
/// the address space it was spawned from (`exec` records the old one's, and `Command`
/// spawns with `vfork`), so spawned from this long-lived process, which the other tests
/// grow, it would read this process's peak, not the child's.
pub fn run_measured(dir: &Path, args: &[&str]) -> Measured {
    let tmp = tempfile::tempdir().expect("temporary folder");
    let (out, err, result) = (
        tmp.path().join("stdout"),
        tmp.path().join("stderr"),
        tmp.path().join("result"),
    );
    let spec = serde_json::json!({
        "dir": dir, "args": args, "stdout": out, "stderr": err, "result": result,
    });
    let status = Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "hostile::harness::measure_child",
            "--nocapture",
            "--test-threads=1",
            "-q",
        ])
        .env(MEASURE_SPEC, spec.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .expect("spawn the measuring test binary");
    assert!(
        status.success(),
        "the measuring test binary failed: {status}"
    );
    let result = std::fs::read_to_string(&result).expect("measurement");
    let (code, rss) = result.trim().split_once(' ').expect("code and RSS");
    Measured {
        code: code.parse().ok(),
        stdout: std::fs::read(&out).expect("stdout file"),
        stderr: std::fs::read(&err).expect("stderr file"),
        peak_rss: rss.parse().expect("RSS"),
    }
}

/// Not a test of its own: run by [`run_measured`] in a fresh test process, it spawns the
/// `kinetoscope` run described by `KINETOSCOPE_TEST_MEASURE_CHILD`, writes its output to
/// files and its exit code and peak RSS to the result file. Without the variable it
/// returns at once.
#[test]
fn measure_child() {
    let Ok(spec) = std::env::var(MEASURE_SPEC) else {
        return;
    };
    let spec: serde_json::Value = serde_json::from_str(&spec).expect("spec");
    let path = |k: &str| PathBuf::from(spec[k].as_str().expect("a path"));
    let args: Vec<&str> = spec["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|a| a.as_str().expect("an argument"))
        .collect();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kinetoscope"));
    cmd.args(args)
        .current_dir(path("dir"))
        .env("KINETOSCOPE_CACHE_DIR", crate::common::cache_dir())
        .env("COLUMNS", "100")
        .env_remove("LINES")
        .env("NO_COLOR", "1");
    let m = spawn_measured(&mut cmd);
    std::fs::write(path("stdout"), &m.stdout).expect("write stdout");
    std::fs::write(path("stderr"), &m.stderr).expect("write stderr");
    let code = m.code.map_or("signal".to_owned(), |c| c.to_string());
    std::fs::write(path("result"), format!("{code} {}", m.peak_rss)).expect("write result");
}

/// Spawn `cmd` with piped output and reap it with `wait4` to read its own peak RSS.
fn spawn_measured(cmd: &mut Command) -> Measured {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn kinetoscope");
    let drain = |mut p: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = p.read_to_end(&mut v);
            v
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("stdout pipe")));
    let err = drain(Box::new(child.stderr.take().expect("stderr pipe")));
    let pid = libc::pid_t::try_from(child.id()).expect("pid");
    let mut status: libc::c_int = 0;
    // SAFETY: `rusage` is plain data; all-zero is a valid value and wait4 fills it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: pointers to locals; `pid` is this process's own unreaped child.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            break;
        }
        assert_eq!(
            io::Error::last_os_error().kind(),
            io::ErrorKind::Interrupted,
            "wait4 failed"
        );
    }
    drop(child);
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    Measured {
        code,
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
        // ru_maxrss is in KiB on Linux.
        peak_rss: u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024,
    }
}

/// Assert `bytes` hold no C0 control (but tab and newline), no DEL and no C1 control.
pub fn assert_no_control_bytes(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    if let Some((at, c)) = text
        .char_indices()
        .find(|&(_, c)| (c.is_control() && c != '\n' && c != '\t') || is_bidi_override(c))
    {
        let from = at.saturating_sub(40);
        panic!(
            "{what} holds the raw control U+{:04X} at byte {at}: {:?}",
            c as u32,
            &text[text.floor_char_boundary(from)..text.floor_char_boundary(at + 40)]
        );
    }
}

/// A bidirectional override or isolate, which reorders what a terminal shows.
fn is_bidi_override(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// A fingerprint of every regular file under `paths` (path, length and a 64-bit hash of
/// the bytes), to compare before and after a run.
pub fn fingerprint(paths: &[PathBuf]) -> Vec<(PathBuf, u64, u64)> {
    let mut out = Vec::new();
    for p in paths {
        collect(p, &mut out);
    }
    out.sort();
    out
}

fn collect(p: &Path, out: &mut Vec<(PathBuf, u64, u64)>) {
    let Ok(meta) = std::fs::symlink_metadata(p) else {
        return;
    };
    if meta.is_dir() {
        for e in std::fs::read_dir(p).expect("read_dir").flatten() {
            collect(&e.path(), out);
        }
    } else if meta.is_file() {
        let bytes = std::fs::read(p).expect("read input");
        out.push((p.to_owned(), bytes.len() as u64, fnv1a(&bytes)));
    }
}

/// FNV-1a, 64 bits: enough to see that a file changed.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
