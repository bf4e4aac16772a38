#!/usr/bin/env bash
# Seed each fuzz target's corpus (fuzz/corpus/<target>/, not committed) from the test
# fixtures: Kineto traces (inflated), CUDA memory snapshots and memory timelines.
set -euo pipefail
cd "$(dirname "$0")"
fx=../crates/kinetoscope-trace/tests/fixtures
mkdir -p corpus/{kineto_plain,kineto_gzip,snapshot_pickle,memory_timeline,pipeline,pstats,writers}
for f in "$fx"/*.json "$fx"/*.json.gz "$fx"/ranks/*.json.gz; do
  base=$(basename "$f" .gz)
  # Cap seeds at 256 KiB: small inputs run fast; the fuzzer grows what it needs.
  if [[ $f == *.gz ]]; then gzip -dc "$f"; else cat "$f"; fi | head -c 262144 > "corpus/kineto_plain/$base" || true  # head closes the pipe early
  cp "corpus/kineto_plain/$base" "corpus/pipeline/$base"
  # writers: a first byte picks trim's filters (fuzz_targets/writers.rs): 3 = steps 1..2
  # and the first 2 ms.
  { printf '\003'; cat "corpus/kineto_plain/$base"; } > "corpus/writers/$base"
  { printf '\0'; cat "corpus/kineto_plain/$base"; } > "corpus/kineto_gzip/$base"
done
cp "$fx"/snapshots/*.pickle corpus/snapshot_pickle/
for f in "$fx"/memory_timelines/*.json "$fx"/memory_timelines/*/*.json.gz; do
  base=$(basename "$f" .gz)
  if [[ $f == *.gz ]]; then gzip -dc "$f"; else cat "$f"; fi > "corpus/memory_timeline/$base"
done
cp "$fx"/pstats/*.prof corpus/pstats/
