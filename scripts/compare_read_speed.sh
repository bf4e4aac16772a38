#!/usr/bin/env bash
# Compare the read speed of two kinetoscope binaries within one run: `summary FILE` is
# run N times per binary, alternating, and the best and median wall and CPU (user+sys)
# seconds and peak RSS of each are printed, with after/before ratios. Alternating
# keeps a shared machine's load from favouring one binary.
#
#   scripts/compare_read_speed.sh BEFORE AFTER FILE [N]
set -eu
before=$1
after=$2
file=$3
n=${4:-9}
log=$(mktemp)
for _ in $(seq "$n"); do
    for b in "$before" "$after"; do
        /usr/bin/time -f "$b %e %U %S %M" -o "$log.one" "$b" summary "$file" >/dev/null
        cat "$log.one" >>"$log"
    done
done
python3 - "$log" "$before" "$after" <<'PY'
import statistics, sys
log, before, after = sys.argv[1:4]
runs = {before: [], after: []}
for line in open(log):
    b, wall, user, sys_, rss = line.rsplit(maxsplit=4)
    runs[b].append((float(wall), float(user) + float(sys_), int(rss)))
stats = {}
for b, v in runs.items():
    w = [x[0] for x in v]; c = [x[1] for x in v]
    stats[b] = (min(w), statistics.median(w), min(c), statistics.median(c), max(x[2] for x in v) >> 10)
    print("%-50s wall best %.2f med %.2f  cpu best %.2f med %.2f  rss %d MiB" % ((b,) + stats[b]))
r = [a / b for a, b in zip(stats[after][:4], stats[before][:4])]
print("after/before: wall best %.3f med %.3f  cpu best %.3f med %.3f" % tuple(r))
PY
rm -f "$log" "$log.one"
