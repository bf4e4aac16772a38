#!/usr/bin/env bash
# Stages the benchmark corpus into DEST so it can run on another machine: the release
# binaries (stripped) in DEST/bin, the seed traces with their licences in DEST/seeds,
# and run.sh. Build first: cargo build --release -p kinetoscope -p kinetoscope-synth
# -p kinetoscope-bench. Environment: CARGO_TARGET_DIR (default <repo>/target), SEEDS
# (the seeds' root; default: the project's reference data beside the repository).
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 DEST" >&2
    exit 2
fi
dest=$1
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
target=${CARGO_TARGET_DIR:-$repo/target}
seeds=${SEEDS:-$repo/../shared/external}

mkdir -p "$dest/bin" "$dest/seeds"
for b in kinetoscope kinetoscope-synth kinetoscope-bench; do
    if [ ! -x "$target/release/$b" ]; then
        echo "error: $target/release/$b not found (build it in release first)" >&2
        exit 2
    fi
    cp "$target/release/$b" "$dest/bin/$b"
    strip "$dest/bin/$b" 2>/dev/null || true
done

"$dest/bin/kinetoscope-bench" --corpus --list-seeds | while read -r seed; do
    mkdir -p "$dest/seeds/$(dirname "$seed")"
    cp "$seeds/$seed" "$dest/seeds/$seed"
    # The licence and provenance of the seed's collection (its top folder).
    top=${seed%%/*}
    for f in LICENSE SOURCE.md; do
        if [ -f "$seeds/$top/$f" ]; then
            cp "$seeds/$top/$f" "$dest/seeds/$top/$f"
        fi
    done
done
chmod -R u+w "$dest/seeds"
cp "$here/run.sh" "$dest/run.sh"
chmod +x "$dest/run.sh"
du -sh "$dest"
