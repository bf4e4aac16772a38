//! Running the binary under test as a child and measuring it: wall time and its own peak
//! RSS (`ru_maxrss` from `wait4`), with an optional time limit after which it is killed.

use std::io::{self, Read};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;

/// One child run.
pub struct Run {
    /// Wall time, to exit or to the kill.
    pub wall: Duration,
    /// Peak resident set, KiB.
    pub max_rss_kib: u64,
    /// Exit code; `None` when a signal ended it.
    pub code: Option<i32>,
    /// Standard error.
    pub stderr: String,
    /// Killed at the time limit.
    pub timed_out: bool,
}

/// Spawns `cmd` (stdout as given, stderr captured) and reaps it with `wait4` to get its
/// own peak RSS; past `limit` it is killed (and `timed_out` set).
pub fn run_child(cmd: &mut Command, stdout: Stdio, limit: Option<Duration>) -> anyhow::Result<Run> {
    let start = Instant::now();
    let mut child = cmd
        .stdout(stdout)
        .stderr(Stdio::piped())
        .stdin(Stdio::null())
        .spawn()
        .with_context(|| format!("cannot run {cmd:?}"))?;
    let mut pipe = child.stderr.take().context("no stderr pipe")?;
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = pipe.read_to_end(&mut s);
        s
    });
    let pid = libc::pid_t::try_from(child.id()).context("pid out of range")?;
    let mut status: libc::c_int = 0;
    // SAFETY: `rusage` is plain data; zeroed is a valid value and wait4 fills it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let mut timed_out = false;
    let flags = if limit.is_some() { libc::WNOHANG } else { 0 };
    loop {
        // SAFETY: valid pointers to locals; `pid` is our own unreaped child.
        let r = unsafe { libc::wait4(pid, &mut status, flags, &mut usage) };
        if r == pid {
            break;
        }
        if r == 0 {
            if limit.is_some_and(|l| start.elapsed() > l) && !timed_out {
                timed_out = true;
                // SAFETY: signalling our own child, not yet reaped.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            std::thread::sleep(Duration::from_millis(5));
            continue;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e).context("wait4");
        }
    }
    let wall = start.elapsed();
    // The child is reaped; `Child` has nothing left to do on drop.
    drop(child);
    let stderr = String::from_utf8_lossy(&reader.join().unwrap_or_default()).into_owned();
    let code = if libc::WIFEXITED(status) {
        Some(libc::WEXITSTATUS(status))
    } else {
        None
    };
    Ok(Run {
        wall,
        // ru_maxrss is in KiB on Linux.
        max_rss_kib: u64::try_from(usage.ru_maxrss).unwrap_or(0),
        code,
        stderr,
        timed_out,
    })
}
