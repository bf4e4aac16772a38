//! Nsight Systems reports (`.nsys-rep`, `.qdrep`): exported to SQLite with the `nsys`
//! on `PATH` into kinetoscope's cache folder, never beside the report, and read from
//! there; without `nsys`, an error that gives the export command.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::export_command;
use crate::{TraceError, TraceResult};

/// The export of `report` in the cache folder, made with `nsys export` unless an export
/// of the same report (path, size and modification time) is already there.
pub(super) fn exported(report: &Path) -> TraceResult<PathBuf> {
    let refused = || TraceError::NsysReport {
        path: report.to_owned(),
        command: export_command(report),
    };
    let nsys = on_path("nsys").ok_or_else(refused)?;
    let io = |e: std::io::Error| TraceError::Io {
        path: report.to_owned(),
        source: e,
    };
    let meta = std::fs::metadata(report).map_err(io)?;
    let dir = crate::cache::cache_root().ok_or_else(refused)?.join("nsys");
    std::fs::create_dir_all(&dir).map_err(io)?;
    let mut h = std::hash::DefaultHasher::new();
    std::fs::canonicalize(report).map_err(io)?.hash(&mut h);
    meta.len().hash(&mut h);
    meta.modified().ok().hash(&mut h);
    let stem = report
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let out = dir.join(format!("{stem}-{:016x}.sqlite", h.finish()));
    if out.is_file() {
        return Ok(out);
    }
    let tmp = dir.join(format!(
        "{stem}-{:016x}.{}.part.sqlite",
        h.finish(),
        std::process::id()
    ));
    let run = Command::new(nsys)
        .args(["export", "--type", "sqlite", "--output"])
        .arg(&tmp)
        .arg(report)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(io)?;
    if !run.status.success() || !tmp.is_file() {
        let _ = std::fs::remove_file(&tmp);
        let err = String::from_utf8_lossy(&run.stderr);
        let last = err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        return Err(TraceError::NotA {
            path: report.to_owned(),
            expected: "Nsight Systems report nsys could export",
            why: format!(
                "`nsys export` failed ({}): {}",
                run.status,
                last.chars().take(300).collect::<String>()
            ),
        });
    }
    std::fs::rename(&tmp, &out).map_err(io)?;
    Ok(out)
}

/// An executable named `name` in a folder of `PATH`.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}
