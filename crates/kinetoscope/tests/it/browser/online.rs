//! The web UI served by a real `kinetoscope serve` process: the pages against the API's
//! own answers (fetched here over HTTP, apart from the browser), the timeline's network
//! requests (count, parameters, payload) as Chromium saw them, the Diff page, and a
//! finding's jump across workers.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use super::{assert_shows, browser, screenshot_dir, texts, Browser};
use crate::common::corpus;

/// A GPU trace with kernels, operators and three steps (TraceLens, see its SOURCE.md).
fn gpu_trace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kinetoscope-analysis/tests/fixtures/gpu_traces/linear_kineto_3steps.json.gz")
}

/// A running `kinetoscope serve`, stopped when dropped.
struct Served {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    base: String,
    /// The access token.
    token: String,
    /// The URL it printed.
    url: String,
}

impl Served {
    /// Serve `paths` on a free port; the URL is the first line of its output.
    fn start(paths: &[PathBuf]) -> Served {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kinetoscope"))
            .arg("serve")
            .args(["--port", "0"])
            .env("KINETOSCOPE_CACHE_DIR", crate::common::cache_dir())
            // Canonical: the server's root check compares resolved paths.
            .args(
                paths
                    .iter()
                    .map(|p| p.canonicalize().expect("input exists")),
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start kinetoscope serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .expect("the URL line");
        let url = line.trim().to_owned();
        let (base, token) = url.split_once("/?token=").expect("URL with a token");
        Served {
            base: base.to_owned(),
            token: token.to_owned(),
            url: url.clone(),
            child,
        }
    }

    /// `GET path` with the token: the status and the body as JSON.
    fn get(&self, path: &str) -> (u16, Value) {
        let host = self.base.trim_start_matches("http://");
        let mut s = TcpStream::connect(host).expect("connect");
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {}\r\nConnection: close\r\n\r\n",
            self.token
        )
        .unwrap();
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).unwrap();
        let text = String::from_utf8(raw).expect("UTF-8 answer");
        let (head, body) = text.split_once("\r\n\r\n").expect("head and body");
        let status = head.split(' ').nth(1).unwrap().parse().unwrap();
        (status, serde_json::from_str(body).expect("a JSON body"))
    }

    /// The id of the run named `name`.
    fn run_id(&self, name: &str) -> String {
        let runs = self.get("/api/v1/runs").1;
        runs["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("no run {name} in {runs}"))["id"]
            .as_str()
            .unwrap()
            .to_owned()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Open `#page?query` of the served app.
fn open(b: &mut Browser, s: &Served, page: &str, query: &str, shot: &str) {
    super::open_page_hash(b, &s.url, &format!("{page}?{query}"), page, shot);
}

/// Timeline requests Chromium sent since the events were cleared: (URL, bytes).
fn timeline_requests(b: &mut Browser) -> Vec<(String, f64)> {
    b.drain();
    let mut urls = std::collections::HashMap::new();
    let mut done = Vec::new();
    for e in &b.events {
        let p = &e["params"];
        match e["method"].as_str() {
            Some("Network.requestWillBeSent") => {
                let url = p["request"]["url"].as_str().unwrap_or("");
                if url.contains("/timeline?") {
                    urls.insert(p["requestId"].as_str().unwrap().to_owned(), url.to_owned());
                }
            }
            Some("Network.loadingFinished") => {
                if let Some(u) = urls.get(p["requestId"].as_str().unwrap()) {
                    done.push((u.clone(), p["encodedDataLength"].as_f64().unwrap()));
                }
            }
            _ => {}
        }
    }
    done
}

/// A query parameter of a URL.
fn param(url: &str, key: &str) -> String {
    let query = url.split_once('?').map_or("", |(_, q)| q);
    query
        .split('&')
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("{url} has no {key}"))
        .to_owned()
}

#[test]
fn served_pages_show_the_apis_numbers_and_zoom_by_windows() {
    let Some(mut b) = browser() else { return };
    // Each file alone in its folder: the server refuses a single-file run whose
    // folder holds other files a view could read (its root check; see the report).
    let tmp = tempfile::tempdir().unwrap();
    let alone = |from: &Path, dir: &str, name: &str| {
        let d = tmp.path().join(dir);
        std::fs::create_dir(&d).unwrap();
        std::fs::copy(from, d.join(name)).unwrap();
        d.join(name)
    };
    let gpu = alone(&gpu_trace(), "gpu", "linear_kineto_3steps.json.gz");
    let clean = alone(
        &corpus().join("clean/trace.json.gz"),
        "clean",
        "trace.json.gz",
    );
    let s = Served::start(&[gpu, clean]);
    let run = s.run_id("linear_kineto_3steps.json.gz");
    let q = format!("run={run}");
    open(&mut b, &s, "overview", &q, "online-overview.png");
    let ov = s.get(&format!("/api/v1/runs/{run}/views/overview")).1;
    assert_shows(
        &texts(&mut b, "[data-key=mean_step]")[0],
        ov["traces"][0]["average"]["dur_ns"].as_f64().unwrap(),
        "mean step",
    );
    let report = s.get(&format!("/api/v1/runs/{run}/views/report")).1;
    let impacts = texts(&mut b, "article.finding [data-key=impact]");
    for (i, f) in report["findings"].as_array().unwrap().iter().enumerate() {
        assert_shows(
            &impacts[i],
            f["impact_ns_per_step"].as_f64().unwrap(),
            "impact",
        );
    }

    open(
        &mut b,
        &s,
        "kernels",
        &format!("{q}&kernels.group_by=properties"),
        "online-kernels.png",
    );
    let k = s
        .get(&format!(
            "/api/v1/runs/{run}/views/kernels?group_by=properties&top=100"
        ))
        .1;
    let rows = k["traces"][0]["rows"].as_array().unwrap();
    let ops = texts(&mut b, "table.kernels td[data-key=operator]");
    let totals = texts(&mut b, "table.kernels td[data-key=total_ns]");
    assert_eq!(ops.len(), rows.len());
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(ops[i], r["operator"].as_str().unwrap());
        assert_shows(&totals[i], r["total_ns"].as_f64().unwrap(), "total");
    }

    // The timeline: one request for the first paint, one for a burst of zooms.
    b.clear_events();
    open(&mut b, &s, "trace", &q, "online-trace.png");
    b.wait_for(
        "document.getElementById('timeline').dataset.end !== undefined",
        20,
    );
    let tracks = s.get(&format!("/api/v1/runs/{run}/timeline/tracks")).1;
    let first = timeline_requests(&mut b);
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!(param(&first[0].0, "end_ns"), tracks["t1_ns"].to_string());
    b.clear_events();
    b.eval(
        "(() => { const c = document.getElementById('timeline'); const r = c.getBoundingClientRect();
          for (let i = 0; i < 8; i++) c.dispatchEvent(new WheelEvent('wheel', {deltaY: -100, clientX: r.left + 700, clientY: r.top + 20, bubbles: true, cancelable: true})); })()",
    );
    b.wait_for(
        "K.apiLog.filter(e => e.path.includes('/timeline?')).length >= 2",
        10,
    );
    b.eval("new Promise(r => setTimeout(r, 400))");
    let zoomed = timeline_requests(&mut b);
    assert_eq!(zoomed.len(), 1, "debounced into one request: {zoomed:?}");
    let (url, bytes) = &zoomed[0];
    let span: f64 = param(url, "end_ns").parse::<f64>().unwrap()
        - param(url, "start_ns").parse::<f64>().unwrap();
    let full = tracks["t1_ns"].as_f64().unwrap();
    assert!(
        span < 0.2 * full && span > 0.1 * full,
        "0.8^8 of {full}: {span}"
    );
    let ids: Vec<String> = tracks["tracks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].to_string())
        .collect();
    assert_eq!(param(url, "tracks"), ids.join("%2C").replace("%2C", ","));
    assert!(*bytes < (1 << 20) as f64, "payload {bytes} bytes");
    b.screenshot(&screenshot_dir().join("online-trace-zoomed.png"));
    assert!(b.errors().is_empty(), "{:?}", b.errors());
    // Search: the matches the API gives, listed; a click shows the event's details.
    let hits = s
        .get(&format!("/api/v1/runs/{run}/search?q=addmm&limit=50"))
        .1;
    b.eval(
        "(() => { const s = document.getElementById('trace-search'); s.value = 'addmm';
          s.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter'})); })()",
    );
    b.wait_for(
        "document.querySelectorAll('#search-results li').length > 0",
        10,
    );
    let listed = texts(&mut b, "#search-results li.clickable");
    let matches = hits["matches"].as_array().unwrap();
    assert_eq!(listed.len(), matches.len());
    assert!(listed[0].starts_with(matches[0]["name"].as_str().unwrap()));
    b.eval("document.querySelector('#search-results li.clickable').click()");
    b.wait_for("document.querySelector('#event-details h3') !== null", 10);
    assert_eq!(
        texts(&mut b, "#event-details h3")[0],
        matches[0]["name"].as_str().unwrap()
    );
    let dur = texts(&mut b, "#event-details [data-key=dur]");
    assert_shows(&dur[0], matches[0]["dur_ns"].as_f64().unwrap(), "duration");

    // Diff: the two runs compared, the verdict and change as the API says.
    let base = s.run_id("trace.json.gz");
    open(
        &mut b,
        &s,
        "diff",
        &format!("{q}&diff.base={base}&diff.new={run}&diff.go=1"),
        "online-diff.png",
    );
    let d = s.get(&format!("/api/v1/diff?base={base}&new={run}")).1;
    assert_eq!(
        texts(&mut b, "[data-key=verdict]")[0],
        d["steps"]["verdict"].as_str().unwrap()
    );
    assert_shows(
        &texts(&mut b, "[data-key=delta_median]")[0],
        d["steps"]["delta_median_ns"].as_f64().unwrap(),
        "median change",
    );
}

#[test]
fn served_finding_jumps_to_its_workers_step() {
    let Some(mut b) = browser() else { return };
    let s = Served::start(&[corpus().join("straggler")]);
    let run = s.run_id("straggler");
    open(
        &mut b,
        &s,
        "overview",
        &format!("run={run}"),
        "online-jump-overview.png",
    );
    let report = s.get(&format!("/api/v1/runs/{run}/views/report")).1;
    let k = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .position(|f| f["id"] == "ST001")
        .expect("ST001");
    b.eval(&format!(
        "document.querySelector('button[data-finding=\"{k}\"]').click()"
    ));
    b.wait_for(
        "document.body.dataset.page === 'trace' && document.body.dataset.ready === 'yes' && document.getElementById('timeline').dataset.start !== undefined",
        20,
    );
    let hash = b.eval("location.hash").as_str().unwrap().to_owned();
    assert!(hash.contains("worker=rank1"), "{hash}");
    let jump = b.eval("document.getElementById('timeline-status').dataset.jump");
    let step = jump
        .as_str()
        .unwrap()
        .strip_prefix("ST001: ")
        .expect("a step")
        .to_owned();
    let ov = s
        .get(&format!("/api/v1/runs/{run}/views/overview?worker=rank1"))
        .1;
    let st = ov["traces"][0]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == step.as_str())
        .unwrap()
        .clone();
    let t0 = s
        .get(&format!("/api/v1/runs/{run}/timeline/tracks?worker=rank1"))
        .1["t0_ns"]
        .as_i64()
        .unwrap();
    let a = (st["start_ns"].as_i64().unwrap() - t0) as f64;
    let z = a + st["dur_ns"].as_f64().unwrap();
    let start = b
        .eval("Number(document.getElementById('timeline').dataset.start)")
        .as_f64()
        .unwrap();
    let end = b
        .eval("Number(document.getElementById('timeline').dataset.end)")
        .as_f64()
        .unwrap();
    assert!(
        start <= a && end >= z,
        "shown {start}..{end}, step {a}..{z}"
    );
    b.screenshot(&screenshot_dir().join("online-jump-timeline.png"));
    assert!(b.errors().is_empty(), "{:?}", b.errors());
}

#[test]
fn served_snapshot_memory_page_shows_the_allocator_state() {
    let Some(mut b) = browser() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let snap = tmp.path().join("v2_6_full.pickle");
    std::fs::copy(
        crate::common::memory_snapshots().join("v2_6_full.pickle"),
        &snap,
    )
    .unwrap();
    let s = Served::start(&[snap]);
    let run = s.run_id("v2_6_full.pickle");
    open(
        &mut b,
        &s,
        "memory",
        &format!("run={run}"),
        "online-snapshot.png",
    );
    let doc = s.get(&format!("/api/v1/runs/{run}/views/memory?top=100")).1;
    let d = &doc["snapshot"]["devices"][0];
    let shown = |b: &mut Browser, key: &str| texts(b, &format!("[data-key={key}]"))[0].clone();
    assert_shows(
        &shown(&mut b, "reserved"),
        d["state"]["reserved_bytes"].as_f64().unwrap(),
        "reserved",
    );
    assert_shows(
        &shown(&mut b, "allocated"),
        d["state"]["allocated_bytes"].as_f64().unwrap(),
        "allocated",
    );
    assert_shows(
        &shown(&mut b, "fragmentation"),
        d["state"]["fragmentation"].as_f64().unwrap(),
        "fragmentation",
    );
    assert_shows(
        &shown(&mut b, "peak_active"),
        d["history"]["peak_active_bytes"].as_f64().unwrap(),
        "peak",
    );
    let frames = texts(&mut b, "table.sites td[data-key=site]");
    let sites = d["top_sites"]["sites"].as_array().unwrap();
    assert_eq!(frames.len(), sites.len());
    let label = sites[0]["user_frame"]
        .as_str()
        .or(sites[0]["op_site"].as_str())
        .unwrap();
    assert_eq!(frames[0], label);
}
