//! A minimal Chrome DevTools Protocol client over Chromium's `--remote-debugging-pipe`:
//! the browser reads commands on file descriptor 3 and writes answers and events on 4,
//! each a JSON message ended by a NUL byte. No WebSocket, no HTTP endpoint, no port,
//! no crate beyond `serde_json` and `libc`: lighter than a WebDriver or a CDP crate,
//! and it cannot download a browser.
//!
//! One [`Browser`] = one headless Chromium with one page (a flattened target session).
//! Every event is kept ([`Browser::events`]) so a test can look for exceptions, console
//! errors and network requests afterwards.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{json, Value};

/// How long one command may take before the test fails.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// A headless Chromium driven over the DevTools pipe.
pub struct Browser {
    child: Child,
    to_browser: File,
    from_browser: Receiver<Value>,
    next_id: u64,
    session: String,
    /// Every event received so far (`{"method", "params"}`).
    pub events: Vec<Value>,
    _profile: tempfile::TempDir,
}

/// A pipe whose ends are closed on exec (so other children never inherit them).
fn pipe() -> (RawFd, RawFd) {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(rc, 0, "pipe2 failed");
    (fds[0], fds[1])
}

impl Browser {
    /// Start `exe` headless with a fresh profile, kept off the network, and open one
    /// page of `width` × `height` CSS pixels.
    pub fn launch(exe: &Path, width: u32, height: u32) -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let (cmd_read, cmd_write) = pipe();
        let (out_read, out_write) = pipe();
        let mut command = Command::new(exe);
        command
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--remote-debugging-pipe",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: only async-signal-safe calls (fcntl, dup2) between fork and exec.
        unsafe {
            command.pre_exec(move || {
                // Copy above 10 first, so dup2 onto 3 and 4 never meets its own source
                // and the copies it makes are not close-on-exec.
                let r = libc::fcntl(cmd_read, libc::F_DUPFD, 10);
                let w = libc::fcntl(out_write, libc::F_DUPFD, 10);
                if r < 0 || w < 0 || libc::dup2(r, 3) < 0 || libc::dup2(w, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().expect("start chromium");
        // SAFETY: the descriptors come from pipe2 above and are owned here once.
        let (to_browser, reader) = unsafe {
            libc::close(cmd_read);
            libc::close(out_write);
            (File::from_raw_fd(cmd_write), File::from_raw_fd(out_read))
        };
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(reader);
            let mut buf = Vec::new();
            while r.read_until(0, &mut buf).map(|n| n > 0).unwrap_or(false) {
                if buf.last() == Some(&0) {
                    buf.pop();
                }
                if let Ok(v) = serde_json::from_slice::<Value>(&buf) {
                    if tx.send(v).is_err() {
                        return;
                    }
                }
                buf.clear();
            }
        });
        let mut b = Browser {
            child,
            to_browser,
            from_browser: rx,
            next_id: 0,
            session: String::new(),
            events: Vec::new(),
            _profile: profile,
        };
        let target = b.call_browser("Target.createTarget", json!({"url": "about:blank"}));
        let attached = b.call_browser(
            "Target.attachToTarget",
            json!({"targetId": target["targetId"], "flatten": true}),
        );
        b.session = attached["sessionId"].as_str().unwrap().to_owned();
        for domain in [
            "Runtime.enable",
            "Log.enable",
            "Page.enable",
            "Network.enable",
        ] {
            b.call(domain, json!({}));
        }
        b.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        );
        b
    }

    /// Send a command (to the page's session, or to the browser when `session` is
    /// empty) and wait for its answer, keeping the events that arrive meanwhile.
    fn send(&mut self, method: &str, params: Value, session: Option<String>) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = Value::String(s);
        }
        let mut bytes = serde_json::to_vec(&msg).unwrap();
        bytes.push(0);
        self.to_browser
            .write_all(&bytes)
            .expect("write to chromium");
        let deadline = Instant::now() + COMMAND_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let v = self
                .from_browser
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("chromium did not answer {method} in time"));
            if v["id"].as_u64() == Some(id) {
                if let Some(e) = v.get("error") {
                    panic!("{method} failed: {e}");
                }
                return v["result"].clone();
            }
            if v.get("method").is_some() {
                self.events.push(v);
            }
        }
    }

    /// A browser-level command.
    fn call_browser(&mut self, method: &str, params: Value) -> Value {
        self.send(method, params, None)
    }

    /// A command to the page.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let s = self.session.clone();
        self.send(method, params, Some(s))
    }

    /// Take the events that arrived without a command.
    pub fn drain(&mut self) {
        while let Ok(v) = self.from_browser.try_recv() {
            if v.get("method").is_some() {
                self.events.push(v);
            }
        }
    }

    /// Evaluate `expr` in the page (promises awaited) and return its value as JSON.
    pub fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
        );
        if let Some(e) = r.get("exceptionDetails") {
            panic!("evaluating {expr}: {e}");
        }
        r["result"]["value"].clone()
    }

    /// Load `url` (no wait).
    pub fn navigate(&mut self, url: &str) {
        self.call("Page.navigate", json!({"url": url}));
    }

    /// Wait until `expr` evaluates to true (polling), failing after `secs`.
    pub fn wait_for(&mut self, expr: &str, secs: u64) {
        let deadline = Instant::now() + Duration::from_secs(secs);
        while Instant::now() < deadline {
            if self.eval(expr) == Value::Bool(true) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("timed out waiting for {expr}");
    }

    /// Exceptions thrown, console errors and error log entries so far (one line each).
    pub fn errors(&mut self) -> Vec<String> {
        self.drain();
        self.events
            .iter()
            .filter_map(|e| {
                let p = &e["params"];
                match e["method"].as_str()? {
                    "Runtime.exceptionThrown" => {
                        Some(format!("exception: {}", p["exceptionDetails"]))
                    }
                    "Runtime.consoleAPICalled" if p["type"] == "error" => {
                        Some(format!("console.error: {}", p["args"]))
                    }
                    "Log.entryAdded" if p["entry"]["level"] == "error" => {
                        Some(format!("log: {}", p["entry"]["text"]))
                    }
                    _ => None,
                }
            })
            .collect()
    }

    /// Forget the events so far.
    pub fn clear_events(&mut self) {
        self.drain();
        self.events.clear();
    }

    /// A PNG of what the viewport shows, written to `path`. (Not the whole page: a long
    /// page's image would pass through this process as megabytes of base64, and the
    /// hostile suite measures the children of this process, whose peak memory counts
    /// the parent's.)
    pub fn screenshot(&mut self, path: &Path) {
        let r = self.call(
            "Page.captureScreenshot",
            json!({"format": "png", "captureBeyondViewport": false}),
        );
        let png = base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().unwrap())
            .unwrap();
        std::fs::write(path, png).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
