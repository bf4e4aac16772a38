//! Helpers: real trace fixtures, a running server, and a raw HTTP client.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use kinetoscope_server::{ServeOptions, Server};

/// A real H100 trace (TraceLens fixture of the analyses' tests).
pub fn h100() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kinetoscope-analysis/tests/fixtures/tracelens/h100__Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz")
}

/// A second real trace (HTA's benchmark trace), small.
pub fn hta() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kinetoscope-analysis/tests/fixtures/hta_traces/benchmark_result_2869224_1695835535_trace.json.gz")
}

/// A server running on a free loopback port.
pub struct Running {
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its token.
    pub token: String,
}

/// Start a server over `paths` on a thread.
pub fn serve(paths: &[PathBuf]) -> Running {
    let server = Server::bind(paths, ServeOptions::default()).expect("bind");
    let running = Running {
        addr: server.addr(),
        token: server.token().to_owned(),
    };
    std::thread::spawn(move || server.run());
    running
}

/// A response: status, headers (lower-cased names), body.
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The error message of a JSON error, checking its shape and status.
    pub fn error(&self) -> String {
        let v = self.json();
        assert_eq!(
            v["error"]["status"], self.status,
            "error status in the body"
        );
        v["error"]["message"].as_str().expect("message").to_owned()
    }
}

impl Running {
    /// Send raw bytes, read the whole reply.
    pub fn raw(&self, request: &[u8]) -> Reply {
        let mut s = TcpStream::connect(self.addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        s.write_all(request).expect("send");
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        parse(&out)
    }

    /// `GET target` with the token as a bearer header.
    pub fn get(&self, target: &str) -> Reply {
        self.raw(
            format!(
                "GET {target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\r\n",
                self.token
            )
            .as_bytes(),
        )
    }

    /// `GET target` and its JSON, which must be 200.
    pub fn get_json(&self, target: &str) -> serde_json::Value {
        let r = self.get(target);
        assert_eq!(
            r.status,
            200,
            "{target}: {}",
            String::from_utf8_lossy(&r.body)
        );
        r.json()
    }

    /// The id of the only run, or of the run named `name`.
    pub fn run_id(&self, name: Option<&str>) -> String {
        let runs = self.get_json("/api/v1/runs");
        let runs = runs["runs"].as_array().unwrap();
        let run = match name {
            None => {
                assert_eq!(runs.len(), 1);
                &runs[0]
            }
            Some(n) => runs.iter().find(|r| r["name"] == n).expect("run"),
        };
        run["id"].as_str().unwrap().to_owned()
    }
}

fn parse(raw: &[u8]) -> Reply {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no header end in {:?}", String::from_utf8_lossy(raw)));
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .expect("status line");
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Reply {
        status,
        headers,
        body: raw[split + 4..].to_vec(),
    }
}

/// Copy `from` into `dir` as `name`.
pub fn copy(from: &Path, dir: &Path, name: &str) -> PathBuf {
    let to = dir.join(name);
    std::fs::copy(from, &to).expect("copy fixture");
    to
}
