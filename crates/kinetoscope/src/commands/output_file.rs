//! Every file a command writes (`memory --html OUT` today; any `--output` next) goes
//! through [`write`], which promises:
//! - the output is never a file the command reads or would read: `OUT` is refused when
//!   it is, by device and inode (so through symbolic and hard links), the input, a file
//!   inside an input folder or a file beside the input that the command may read
//!   ([`kinetoscope_engine::input::files_read`]);
//! - the text goes to a temporary file in `OUT`'s folder, renamed onto `OUT` when
//!   complete: a failed write leaves `OUT` as it was, and only the name the user gave is
//!   replaced: a symbolic link named `OUT` is replaced by the file, its target left
//!   alone, and a file hard-linked to `OUT` keeps its content;
//! - an existing `OUT` that is not a regular file (`/dev/stdout`, a FIFO) is written in
//!   place, never replaced.

use std::fs::{self, Metadata};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::output::message;

/// The files a command reading `input` (and the `extra` files named by its options)
/// reads or may read.
pub fn files_read(input: &Path, extra: impl IntoIterator<Item = PathBuf>) -> Vec<PathBuf> {
    let mut files = kinetoscope_engine::input::files_read(input);
    files.extend(extra);
    files
}

/// Refuse `out` (given as `flag`) when it is a folder, or when it is, through any link,
/// one of `reads`.
pub fn check(flag: &str, out: &Path, reads: &[PathBuf]) -> anyhow::Result<()> {
    let shown = out.display();
    let Ok(target) = fs::metadata(out) else {
        // Nothing there (or a link to nothing): no input can be overwritten.
        return Ok(());
    };
    anyhow::ensure!(
        !target.is_dir(),
        "{flag} {shown}: is a folder; give a file name"
    );
    for input in reads {
        let Ok(m) = fs::metadata(input) else { continue };
        if same_file(&target, &m, out, input) {
            anyhow::bail!(
                "{flag} {shown}: refusing to write over {}, which this command reads{}",
                input.display(),
                if via_link(out, input) {
                    " (the output path links to it)"
                } else {
                    ""
                }
            );
        }
    }
    Ok(())
}

/// Whether two paths' metadata name the same file: the same device and inode (on
/// Unix; elsewhere the same canonical path).
fn same_file(a: &Metadata, b: &Metadata, pa: &Path, pb: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let _ = (pa, pb);
        (a.dev(), a.ino()) == (b.dev(), b.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = (a, b);
        pa.canonicalize().ok() == pb.canonicalize().ok()
    }
}

/// Whether `out`, the same file as `input`, reaches it through a link: it is a
/// symbolic link, or another name of it (a hard link).
fn via_link(out: &Path, input: &Path) -> bool {
    fs::symlink_metadata(out).is_ok_and(|m| m.file_type().is_symlink())
        || out.canonicalize().ok() != input.canonicalize().ok()
}

/// Write `contents` to `out` (given as `flag`) after [`check`]: through a temporary
/// file in `out`'s folder renamed onto it, or in place when `out` is a device or FIFO.
/// Tell stderr where it went.
pub fn write(flag: &str, out: &Path, reads: &[PathBuf], contents: &[u8]) -> anyhow::Result<()> {
    write_with(flag, out, reads, |w| Ok(w.write_all(contents)?))
}

/// [`write`] with the contents streamed by `fill` into the file (a large output never
/// whole in memory); when `fill` fails, `out` is left as it was.
pub fn write_with<T>(
    flag: &str,
    out: &Path,
    reads: &[PathBuf],
    fill: impl FnOnce(&mut dyn Write) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    check(flag, out, reads)?;
    let cannot = || format!("{flag} {}: cannot write", out.display());
    let dir = folder_of(out);
    anyhow::ensure!(
        dir.is_dir(),
        "{flag} {}: the folder {} does not exist",
        out.display(),
        dir.display()
    );
    let value = match fs::metadata(out) {
        Ok(m) if !m.is_file() => {
            let f = fs::OpenOptions::new()
                .write(true)
                .open(out)
                .with_context(cannot)?;
            let mut w = std::io::BufWriter::new(f);
            let value = fill(&mut w).with_context(cannot)?;
            w.flush().with_context(cannot)?;
            value
        }
        existing => replace(out, existing.ok(), fill).with_context(cannot)?,
    };
    message(&format!("wrote {}", out.display()));
    Ok(value)
}

/// The folder `out` is (or would be) in.
fn folder_of(out: &Path) -> &Path {
    match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Write what `fill` writes to a new temporary file beside `out` (with `out`'s
/// permissions when it exists, else the umask's), then rename it onto `out`.
fn replace<T>(
    out: &Path,
    existing: Option<Metadata>,
    fill: impl FnOnce(&mut dyn Write) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(".kinetoscope-").suffix(".tmp");
    #[cfg(unix)]
    let default_mode = {
        use std::os::unix::fs::PermissionsExt;
        fs::Permissions::from_mode(0o666)
    };
    #[cfg(unix)]
    builder.permissions(default_mode);
    let mut tmp = builder.tempfile_in(folder_of(out))?;
    let value = {
        let mut w = std::io::BufWriter::new(tmp.as_file_mut());
        let value = fill(&mut w)?;
        w.flush()?;
        value
    };
    if let Some(m) = existing {
        tmp.as_file().set_permissions(m.permissions())?;
    }
    tmp.persist(out).map_err(|e| e.error)?;
    Ok(value)
}
