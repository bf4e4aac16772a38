//! The one helper module of the CLI's tests: where the test data lives, running the
//! `kinetoscope` binary and capturing what it wrote, and the snapshots' insta settings.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The reader's fixtures (`crates/kinetoscope-trace/tests/fixtures`, see its SOURCE.md).
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../kinetoscope-trace/tests/fixtures")
}

/// HTA's two-rank `trace_filter` folder (`fixtures/ranks`).
pub fn rank_folder() -> PathBuf {
    fixtures().join("ranks")
}

/// The synthetic CUDA memory snapshots (`fixtures/snapshots`, see its README.md).
pub fn memory_snapshots() -> PathBuf {
    fixtures().join("snapshots")
}

/// The profiler memory timelines and their traces (`fixtures/memory_timelines`).
pub fn memory_timelines() -> PathBuf {
    fixtures().join("memory_timelines")
}

/// The advisor corpus: traces with planted problems (`corpus/traces`, corpus/README.md).
pub fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/traces")
}

/// A recorded base/new pair of `kinetoscope diff` (`corpus/pairs`, `corpus/pairs-h100`).
pub fn pair(set: &str, name: &str) -> (PathBuf, PathBuf) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus")
        .join(set)
        .join(name);
    (dir.join("base.json.gz"), dir.join("new.json.gz"))
}

/// The trace cache folder of every `kinetoscope` these tests run
/// (`KINETOSCOPE_CACHE_DIR`): under the target's temporary folder, never the user's.
pub fn cache_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("trace-cache")
}

/// Exit code, stdout and stderr of one run.
pub struct Run {
    /// The exit code (`None` when killed by a signal, e.g. after a panic abort).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl From<std::process::Output> for Run {
    /// A finished process's exit code and its output as UTF-8 text.
    fn from(out: std::process::Output) -> Self {
        Run {
            code: out.status.code(),
            stdout: String::from_utf8(out.stdout).expect("utf-8 stdout"),
            stderr: String::from_utf8(out.stderr).expect("utf-8 stderr"),
        }
    }
}

impl Run {
    /// Exit code, stdout and stderr in one text, for a snapshot.
    pub fn transcript(&self) -> String {
        format!(
            "exit code: {:?}\n--- stdout ---\n{}--- stderr ---\n{}",
            self.code, self.stdout, self.stderr
        )
    }

    /// Exit code, stdout and stderr, for `let (code, out, err) = ...`.
    pub fn into_parts(self) -> (Option<i32>, String, String) {
        (self.code, self.stdout, self.stderr)
    }

    /// Stdout parsed as JSON, after checking that the run exited with 0.
    pub fn json(&self) -> serde_json::Value {
        assert_eq!(self.code, Some(0), "{}", self.stderr);
        serde_json::from_str(&self.stdout).expect("stdout is JSON")
    }
}

/// Run `kinetoscope args` in `dir`: 100 columns wide (help text wraps the same whatever
/// the caller's terminal), no `LINES`, no colours.
pub fn kinetoscope(dir: &Path, args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_kinetoscope"))
        .args(args)
        .current_dir(dir)
        .env("KINETOSCOPE_CACHE_DIR", cache_dir())
        .env("COLUMNS", "100")
        .env_remove("LINES")
        .env("NO_COLOR", "1")
        .output()
        .expect("run kinetoscope");
    Run::from(out)
}

/// `kinetoscope args` in `dir`, which must exit with 0; its stdout as JSON.
pub fn json(dir: &Path, args: &[&str]) -> serde_json::Value {
    kinetoscope(dir, args).json()
}

/// Insta settings of this binary: a snapshot file is named by the snapshot's name alone
/// (`snapshots/<name>.snap`), not prefixed by the test module.
pub fn snapshot_settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_prepend_module_to_snapshot(false);
    s
}

/// A `kinetoscope serve` child on a free port, killed when dropped.
pub struct Served {
    child: std::process::Child,
    /// The first line it printed: the URL with its token.
    pub url: String,
    /// `host:port`.
    pub host: String,
    /// The token.
    pub token: String,
}

impl Served {
    /// Start `kinetoscope serve --port 0 extra… paths…` and read its first line.
    pub fn start(extra: &[&str], paths: &[&Path]) -> Self {
        use std::io::BufRead;
        let mut child = Command::new(env!("CARGO_BIN_EXE_kinetoscope"))
            .args(["serve", "--port", "0"])
            .env("KINETOSCOPE_CACHE_DIR", cache_dir())
            .args(extra)
            .args(paths)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run kinetoscope serve");
        let mut url = String::new();
        std::io::BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut url)
            .expect("first line");
        let url = url.trim().to_owned();
        let (base, token) = url
            .split_once("/?token=")
            .unwrap_or_else(|| panic!("{url:?}"));
        Self {
            host: base.trim_start_matches("http://").to_owned(),
            token: token.to_owned(),
            url,
            child,
        }
    }

    /// The first line of its stderr.
    pub fn stderr_line(&mut self) -> String {
        use std::io::BufRead;
        let mut line = String::new();
        let err = self.child.stderr.as_mut().expect("stderr");
        std::io::BufReader::new(err)
            .read_line(&mut line)
            .expect("stderr line");
        line
    }

    /// `GET target` with the token: status and body.
    pub fn get(&self, target: &str) -> (u16, Vec<u8>) {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(&self.host).expect("connect");
        s.set_read_timeout(Some(std::time::Duration::from_secs(120)))
            .unwrap();
        write!(
            s,
            "GET {target} HTTP/1.1\r\nAuthorization: Bearer {}\r\n\r\n",
            self.token
        )
        .unwrap();
        let mut raw = Vec::new();
        let _ = s.read_to_end(&mut raw);
        let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("head");
        let status = String::from_utf8_lossy(&raw[9..12])
            .parse()
            .expect("status");
        (status, raw[split + 4..].to_vec())
    }

    /// `GET target` as JSON, which must be 200.
    pub fn get_json(&self, target: &str) -> serde_json::Value {
        let (status, body) = self.get(target);
        assert_eq!(status, 200, "{target}: {}", String::from_utf8_lossy(&body));
        serde_json::from_slice(&body).expect("JSON")
    }

    /// The id of the first run.
    pub fn first_run(&self) -> String {
        let runs = self.get_json("/api/v1/runs");
        runs["runs"][0]["id"].as_str().expect("a run").to_owned()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
