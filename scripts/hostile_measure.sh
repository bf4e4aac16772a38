#!/usr/bin/env bash
# Measure `kinetoscope summary` on the adversarial reading shapes made by
# scripts/hostile_shapes.py: exit code, wall seconds and peak RSS (/usr/bin/time -v),
# one line per shape, as a Markdown table row.
#
#   scripts/hostile_measure.sh BINARY DATA_DIR [TIMEOUT_S] [EXTRA ARGS...]
#
# A run killed by the timeout shows exit 124. EXTRA ARGS go after the file (for example
# `--max-memory 1GiB`); set ULIMIT_V (KiB) to run under `ulimit -v`.
set -u
bin=$1
dir=$2
limit=${3:-120}
shift 3 2>/dev/null || shift $#
for f in names.json threads.json tiny.json name500m.json unknown_before.json.gz \
         unknown_after.json.gz ws_after.json.gz ws_inside.json.gz name2g.json.gz \
         min_events.json min_tracks.json min_names.json; do
    path=$dir/$f
    [ -e "$path" ] || continue
    log=$(mktemp)
    (
        [ -n "${ULIMIT_V:-}" ] && ulimit -v "$ULIMIT_V"
        /usr/bin/time -v -o "$log" timeout "$limit" "$bin" summary "$path" "$@" \
            >/dev/null 2>"$log.err"
    )
    code=$(sed -n 's/.*Exit status: //p' "$log")
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$log")
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$log")
    size=$(stat -c %s "$path")
    msg=$(grep -m1 -E "error|warning|memory" "$log.err" | cut -c1-200)
    printf '| %s | %d MB | %s | %s | %d MB | %s |\n' "$f" $((size / 1000000)) "$code" "$wall" $((rss / 1000)) "$msg"
    rm -f "$log" "$log.err"
done
