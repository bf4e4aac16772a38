#!/usr/bin/env bash
# 1,000 rank files on one machine (issue 17, item 3): `kinetoscope ranks` and
# `kinetoscope report` over 100, 300 and 1,000 generated ranks with one planted
# straggler. Prints wall time and peak RSS (`/usr/bin/time -v`) per run and checks that
# the planted rank is the top straggler of `ranks --format json`, with a what-if.
#
#   cargo build --release -p kinetoscope -p kinetoscope-synth
#   bench/ranks/run.sh [COUNTS…]        # default: 100 300 1000
#
# Environment: KINETOSCOPE (default target/release/kinetoscope), SYNTH (default
# target/release/kinetoscope-synth), BENCH_DIR (default a new folder under /tmp; removed
# at the end), COPIES (source copies per rank, default 2: two steps), SLOWDOWN (1.3).
# The source is the real 8-rank DLRM job's rank 0 from the analysis fixtures (900 KB of
# JSON, NCCL all-reduces and all-to-alls); each rank is about 1.8 MB of JSON, written
# gzip (about 110 KB), so 1,000 ranks take about 110 MB of disk.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
kin=${KINETOSCOPE:-$target/release/kinetoscope}
synth=${SYNTH:-$target/release/kinetoscope-synth}
src=$root/crates/kinetoscope-analysis/tests/fixtures/param/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json.gz
copies=${COPIES:-2}
slowdown=${SLOWDOWN:-1.3}
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(100 300 1000)
for bin in "$kin" "$synth"; do
  [ -x "$bin" ] || { echo "missing $bin: cargo build --release -p kinetoscope -p kinetoscope-synth" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time)" >&2; exit 2; }

work=${BENCH_DIR:-$(mktemp -d /tmp/kinetoscope-ranks-bench.XXXXXX)}
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

# One timed run: label, then the command; prints "label  wall_s  peak_rss_MiB".
measure() {
  local label=$1; shift
  local log=$work/time.log
  /usr/bin/time -v "$@" >"$work/out" 2>"$log" || { cat "$log" >&2; exit 1; }
  local wall rss
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$log" |
    awk -F: '{ if (NF == 3) print $1*3600 + $2*60 + $3; else print $1*60 + $2 }')
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
  printf '%-28s %8.2f s %8.1f MiB\n' "$label" "$wall" "$(echo "$rss / 1024" | bc -l)"
}

printf '%-28s %10s %12s\n' run wall peak_rss
for n in "${counts[@]}"; do
  dir=$work/ranks-$n
  slow=$((n / 3))
  "$synth" --from "$src" --copies "$copies" --ranks "$n" --out-dir "$dir" --gzip \
    --slow-rank "$slow" --slowdown "$slowdown" >/dev/null
  bytes=$(du -sb "$dir" | cut -f1)
  echo "# $n ranks, rank $slow slowed ${slowdown}x: $((bytes / 1024 / 1024)) MiB gzip on disk"
  measure "ranks  $n" "$kin" ranks "$dir" --format json
  cp "$work/out" "$work/ranks-$n.json"
  measure "report $n" "$kin" report "$dir" --format json
  python3 - "$work/ranks-$n.json" "$slow" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
r = doc["report"]
top = r["stragglers"][0]
want = int(sys.argv[2])
assert top["rank"] == want, f"top straggler {top['rank']}, planted {want}"
assert top["what_if_saving_per_step_ns"] > 0, top
print(f"# top straggler rank {top['rank']} (planted {want}): what-if "
      f"{top['what_if_saving_per_step_ns'] / 1e6:.2f} ms/step "
      f"({100 * top['what_if_step_share']:.1f} % of the median step), "
      f"{r['skew']['matched']} collectives matched")
PY
  rm -rf "$dir"
done
