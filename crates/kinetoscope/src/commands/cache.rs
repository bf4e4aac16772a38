//! `kinetoscope cache`: the trace cache's folder, state and entries (`info`), or
//! removing its entries (`clear`). The cache itself is `kinetoscope_trace::cache`.

use std::process::ExitCode;

use kinetoscope_trace::cache::{clear, files, CacheOptions};
use kinetoscope_trace::read::size_text;

use super::output::write_stdout;
use crate::args::{CacheAction, CacheArgs};

/// Show or clear the cache the environment names.
pub fn run(args: CacheArgs) -> anyhow::Result<ExitCode> {
    let Some(cache) = CacheOptions::configured() else {
        anyhow::bail!("no cache folder: set KINETOSCOPE_CACHE_DIR, XDG_CACHE_HOME or HOME");
    };
    let dir = &cache.dir;
    let text = match args.action {
        CacheAction::Info => {
            let list = files(dir);
            let bytes: u64 = list.iter().map(|f| f.bytes).sum();
            let entries = list.iter().filter(|f| !f.temporary).count();
            let state = if CacheOptions::off_by_env() {
                "off (KINETOSCOPE_NO_CACHE is set)"
            } else {
                "on (--no-cache turns it off for one command)"
            };
            format!(
                "trace cache: {state}\nfolder: {}\nentries: {entries}, {} (at most {}; \
                 least recently used removed beyond)\ncached: traces read from files of \
                 {} or more\n",
                dir.display(),
                size_text(bytes),
                size_text(cache.max_bytes),
                size_text(cache.min_bytes),
            )
        }
        CacheAction::Clear => {
            let (n, bytes) = clear(dir);
            format!(
                "removed {n} file{} ({}) from {}\n",
                if n == 1 { "" } else { "s" },
                size_text(bytes),
                dir.display()
            )
        }
    };
    write_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}
