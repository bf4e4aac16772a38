//! Run folders: each phase's trace, CUDA memory snapshot and memory timeline side by
//! side (`kinetoscope memory RUN_FOLDER`, and the artifact list of `kinetoscope summary
//! RUN_FOLDER`).

use kinetoscope_engine::run_folder::{ArtifactMemory, PhaseMemory};
use kinetoscope_trace::ArtifactKind;

use crate::format::bytes;

/// One line for the terminal about an artifact (without the file name).
pub fn artifact_line(a: &ArtifactMemory) -> String {
    if let Some(e) = &a.error {
        return format!("unreadable: {e}");
    }
    let b = |v: i64| {
        let s = bytes(v.unsigned_abs());
        if v < 0 {
            format!("-{s}")
        } else {
            s
        }
    };
    match a.kind {
        Some(ArtifactKind::Trace) => match (a.peak_bytes, &a.peak_device) {
            (Some(p), Some(d)) => format!("peak allocated {} on {d}", b(p)),
            _ => "no [memory] events".to_owned(),
        },
        Some(ArtifactKind::MemorySnapshot) => {
            let mut s = format!(
                "reserved {} · allocated {}",
                bytes(a.reserved_bytes.unwrap_or(0)),
                bytes(a.allocated_bytes.unwrap_or(0))
            );
            match a.peak_bytes {
                Some(p) => s.push_str(&format!(" · peak active {}", b(p))),
                None => s.push_str(" · no allocator history (no peak)"),
            }
            s
        }
        Some(ArtifactKind::MemoryTimeline) => match (a.peak_bytes, &a.top_category) {
            (Some(p), Some(c)) => {
                let cb = a.top_category_bytes.unwrap_or(0);
                format!("peak {} (largest: {c} {})", b(p), b(cb))
            }
            (Some(p), None) => format!("peak {}", b(p)),
            _ => "no rows".to_owned(),
        },
        Some(ArtifactKind::MemoryTimelineHtml) => {
            "a picture (PyTorch's HTML export embeds a PNG): no numbers to read".to_owned()
        }
        _ => String::new(),
    }
}

/// The per-phase section: one line per artifact.
pub fn phases_section(input: &str, phases: &[PhaseMemory]) -> String {
    let mut out = format!("run folder {input}: memory per phase\n");
    for p in phases {
        out.push_str(&format!("  stage {} · {}\n", p.stage, p.phase));
        for a in &p.artifacts {
            let name = std::path::Path::new(&a.path)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let kind = a.kind.map(|k| format!("{k:?}")).unwrap_or_default();
            out.push_str(&format!(
                "    {kind:<18} {name}\n      {}\n",
                artifact_line(a)
            ));
        }
    }
    out
}
