//! Run folders: each phase's trace, CUDA memory snapshot and memory timeline side by
//! side (`kinetoscope memory RUN_FOLDER`, and the artifact list of `kinetoscope summary
//! RUN_FOLDER`).

use kinetoscope_trace::ArtifactKind;
use serde::Serialize;

use crate::format::bytes;

/// What one artifact of a phase says about memory.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ArtifactMemory {
    /// The file.
    pub path: String,
    /// What it is (`None` when unknown).
    pub kind: Option<ArtifactKind>,
    /// Trace: the highest allocated bytes over its devices. Snapshot: the peak of active
    /// bytes replayed from its allocator trace. Timeline: the peak total over categories.
    pub peak_bytes: Option<i64>,
    /// The device of the trace peak (`GPU0`, `CPU`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_device: Option<String>,
    /// Snapshot: bytes reserved by the allocator at snapshot time (all devices).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reserved_bytes: Option<u64>,
    /// Snapshot: bytes allocated (active blocks) at snapshot time (all devices).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allocated_bytes: Option<u64>,
    /// Timeline: the largest category at the peak and its bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_category: Option<(String, i64)>,
    /// Why it could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl ArtifactMemory {
    /// One line for the terminal (without the file name).
    pub fn line(&self) -> String {
        if let Some(e) = &self.error {
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
        match self.kind {
            Some(ArtifactKind::Trace) => match (self.peak_bytes, &self.peak_device) {
                (Some(p), Some(d)) => format!("peak allocated {} on {d}", b(p)),
                _ => "no [memory] events".to_owned(),
            },
            Some(ArtifactKind::MemorySnapshot) => {
                let mut s = format!(
                    "reserved {} · allocated {}",
                    bytes(self.reserved_bytes.unwrap_or(0)),
                    bytes(self.allocated_bytes.unwrap_or(0))
                );
                match self.peak_bytes {
                    Some(p) => s.push_str(&format!(" · peak active {}", b(p))),
                    None => s.push_str(" · no allocator history (no peak)"),
                }
                s
            }
            Some(ArtifactKind::MemoryTimeline) => match (self.peak_bytes, &self.top_category) {
                (Some(p), Some((c, cb))) => {
                    format!("peak {} (largest: {c} {})", b(p), b(*cb))
                }
                (Some(p), None) => format!("peak {}", b(p)),
                _ => "no rows".to_owned(),
            },
            _ => String::new(),
        }
    }
}

/// The memory artifacts of one phase.
#[derive(Clone, Debug, Serialize)]
pub struct PhaseMemory {
    /// Stage number.
    pub stage: u32,
    /// Phase name.
    pub phase: String,
    /// Its readable artifacts, in file order.
    pub artifacts: Vec<ArtifactMemory>,
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
            out.push_str(&format!("    {kind:<15} {name}\n      {}\n", a.line()));
        }
    }
    out
}
