//! `--html OUT` of `kinetoscope memory`: write the self-contained chart, refusing to
//! write over any input file or into a folder.

use std::path::{Path, PathBuf};

use anyhow::Context;

/// The absolute, symlink-resolved form of `p`; for a file that does not exist yet, its
/// resolved folder joined with its name.
fn resolved(p: &Path) -> Option<PathBuf> {
    if let Ok(c) = p.canonicalize() {
        return Some(c);
    }
    let name = p.file_name()?;
    let parent = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    parent.canonicalize().ok().map(|d| d.join(name))
}

/// Refuse when `out` resolves to one of `inputs` (or to a folder).
pub fn check_output(out: &Path, inputs: &[PathBuf]) -> anyhow::Result<()> {
    if out.is_dir() {
        anyhow::bail!("--html {}: is a folder; give a file name", out.display());
    }
    let target = resolved(out);
    for input in inputs {
        if target.is_some() && resolved(input) == target {
            anyhow::bail!(
                "--html {}: refusing to write over the input file {}",
                out.display(),
                input.display()
            );
        }
    }
    Ok(())
}

/// Write `html` to `out` after [`check_output`]; tell stderr where it went.
pub fn write(out: &Path, inputs: &[PathBuf], html: &str) -> anyhow::Result<()> {
    check_output(out, inputs)?;
    std::fs::write(out, html).with_context(|| format!("cannot write {}", out.display()))?;
    eprintln!("wrote {}", out.display());
    Ok(())
}
