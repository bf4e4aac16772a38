//! The files of a profiling run as kinetoscope sees them: what each is by name
//! ([`ArtifactKind`]), the phases of a run folder ([`RunPhase`]), and what a file name
//! says about its stage and rank.

use std::path::PathBuf;

/// What a file in an input folder is, judged by its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArtifactKind {
    /// A Kineto Chrome trace (`.json`, `.json.gz`), or an Nsight Systems SQLite export
    /// (`.sqlite`; the content decides).
    Trace,
    /// A CUDA memory snapshot pickle.
    MemorySnapshot,
    /// A profiler memory timeline (`.json`, `.raw.json.gz`).
    MemoryTimeline,
    /// A memory timeline rendered as HTML (a picture).
    MemoryTimelineHtml,
    /// A cProfile / pstats file.
    Pstats,
    /// A text file that may be a PyTorch key_averages table (`*.txt`; the content
    /// decides).
    KeyAveragesTable,
}

impl ArtifactKind {
    /// Whether this version of kinetoscope reads this kind.
    pub fn is_readable(self) -> bool {
        matches!(
            self,
            Self::Trace | Self::MemorySnapshot | Self::MemoryTimeline
        )
    }

    /// Classify a file by name; `None` for files kinetoscope ignores.
    pub fn from_file_name(name: &str) -> Option<Self> {
        let n = name.to_ascii_lowercase();
        if n.ends_with(".html") && n.contains("memory") {
            Some(Self::MemoryTimelineHtml)
        } else if n.ends_with(".pickle") || n.ends_with(".pkl") {
            Some(Self::MemorySnapshot)
        } else if n.ends_with(".prof") || n.ends_with(".pstats") {
            Some(Self::Pstats)
        } else if n.ends_with(".txt") {
            Some(Self::KeyAveragesTable)
        } else if n.contains("memory_timeline") || n.ends_with(".raw.json.gz") {
            Some(Self::MemoryTimeline)
        } else if n.ends_with(".json") || n.ends_with(".json.gz") || n.ends_with(".sqlite") {
            Some(Self::Trace)
        } else {
            None
        }
    }
}

/// What oumi's key_averages file names say: `prof_<rank>_local_<local_rank>_<sort_key>.txt`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OumiTableName {
    /// The global rank.
    pub rank: u32,
    /// The local rank.
    pub local_rank: u32,
    /// The `sort_by` key the table was printed with (`cpu_time_total`, ...).
    pub sort_key: String,
}

impl OumiTableName {
    /// Parse `prof_0_local_0_self_cpu_time_total.txt`; `None` for other names.
    pub fn parse(name: &str) -> Option<Self> {
        let rest = name.strip_prefix("prof_")?.strip_suffix(".txt")?;
        let (rank, rest) = rest.split_once("_local_")?;
        let (local_rank, sort_key) = rest.split_once('_')?;
        Some(Self {
            rank: rank.parse().ok()?,
            local_rank: local_rank.parse().ok()?,
            sort_key: sort_key.to_owned(),
        })
    }

    /// The name of the Chrome trace oumi writes beside the tables of this rank.
    pub fn trace_name(&self) -> String {
        format!(
            "prof_{}_local_{}_pt_trace.json.gz",
            self.rank, self.local_rank
        )
    }
}

/// One file of a run folder's phase.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Artifact {
    /// The file.
    pub path: PathBuf,
    /// What it is.
    pub kind: ArtifactKind,
}

/// One phase of a run folder (`stage<N>-<phase>_...`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunPhase {
    /// The stage number N.
    pub stage: u32,
    /// The phase name (`model_init`, `training_microsteps`, ...).
    pub phase: String,
    /// Its files.
    pub artifacts: Vec<Artifact>,
}

/// `stage3-training_microsteps_mem.pickle` → (3, "training_microsteps").
pub fn parse_stage_name(name: &str) -> Option<(u32, String)> {
    let rest = name.strip_prefix("stage")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let stage = digits.parse().ok()?;
    let rest = rest[digits.len()..].strip_prefix(['-', '_'])?;
    const SUFFIXES: [&str; 8] = [
        "_memory_timeline.html",
        "_memory_timeline.json",
        "_memory_timeline.raw.json.gz",
        "_trace.json.gz",
        "_trace.json",
        "_mem.pickle",
        "_snapshot.pickle",
        ".prof",
    ];
    let phase = SUFFIXES
        .iter()
        .find_map(|s| rest.strip_suffix(s))
        .or_else(|| rest.split('.').next())?;
    Some((stage, phase.to_owned()))
}

/// The rank in a file name (`rank-3`, `rank_3`, `rank3`, `..._rank3.json`), if any.
pub fn rank_from_file_name(name: &str) -> Option<i64> {
    let lower = name.to_ascii_lowercase();
    let mut from = 0;
    while let Some(k) = lower[from..].find("rank") {
        let after = &lower[from + k + 4..];
        let after = after.trim_start_matches(['-', '_']);
        let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
        if let Ok(r) = digits.parse() {
            return Some(r);
        }
        from += k + 4;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_names() {
        assert_eq!(
            parse_stage_name("stage1-model_init_trace.json"),
            Some((1, "model_init".into()))
        );
        assert_eq!(
            parse_stage_name("stage3-training_microsteps_mem.pickle"),
            Some((3, "training_microsteps".into()))
        );
        assert_eq!(
            parse_stage_name("stage12-eval_memory_timeline.html"),
            Some((12, "eval".into()))
        );
        assert_eq!(parse_stage_name("worker0.123.pt.trace.json"), None);
    }

    #[test]
    fn ranks_from_names() {
        assert_eq!(
            rank_from_file_name("rank-3.Apr_03.pt.trace.json.gz"),
            Some(3)
        );
        assert_eq!(rank_from_file_name("sampled_rank-1.json.gz"), Some(1));
        assert_eq!(rank_from_file_name("prof_rank12_trace.json"), Some(12));
        assert_eq!(rank_from_file_name("worker0.123.pt.trace.json"), None);
        assert_eq!(rank_from_file_name("profile_rank1.sqlite"), Some(1));
        assert_eq!(
            ArtifactKind::from_file_name("profile_rank1.sqlite"),
            Some(ArtifactKind::Trace)
        );
    }
}

#[cfg(test)]
mod oumi_tests {
    use super::*;

    #[test]
    fn oumi_table_names() {
        let n = OumiTableName::parse("prof_3_local_1_self_cpu_memory_usage.txt").unwrap();
        assert_eq!((n.rank, n.local_rank), (3, 1));
        assert_eq!(n.sort_key, "self_cpu_memory_usage");
        assert_eq!(n.trace_name(), "prof_3_local_1_pt_trace.json.gz");
        assert_eq!(OumiTableName::parse("prof_x_local_1_cpu.txt"), None);
        assert_eq!(OumiTableName::parse("notes.txt"), None);
        assert_eq!(
            ArtifactKind::from_file_name("prof_0_local_0_cpu_time_total.txt"),
            Some(ArtifactKind::KeyAveragesTable)
        );
    }
}
