#!/usr/bin/env bash
# Run every cargo-fuzz target for a while (default 20 s each, random seed 1 unless
# FUZZ_SEED is set, so CI runs about the same inputs each time), seeded from the test
# fixtures; fail on the first crash, leak past 2 GiB, or input taking over 10 s.
#   scripts/fuzz.sh            # 20 s per target
#   scripts/fuzz.sh 600 pipeline kineto_plain   # 10 minutes on two targets
# Needs a nightly toolchain (`rustup toolchain install nightly`) and cargo-fuzz
# (`cargo install cargo-fuzz`, installed here when missing). A crash is written to
# fuzz/artifacts/<target>/; minimise it (`cargo +nightly fuzz tmin <target> <file>`) and
# add it to crates/kinetoscope-trace/tests/fixtures/fuzz_regressions/<target>/ with a
# test in crates/kinetoscope-trace/tests/it/fuzz_regressions.rs.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
secs=${1:-20}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(kineto_plain kineto_gzip snapshot_pickle memory_timeline pipeline pstats writers)
command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz
./seed.sh
cargo +nightly fuzz build
for t in "${targets[@]}"; do
  echo "== fuzz $t for ${secs}s"
  cargo +nightly fuzz run "$t" "corpus/$t" -- \
    -seed="${FUZZ_SEED:-1}" -max_total_time="$secs" -max_len=16384 -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 2>&1 | grep -E "^(Done|stat::number_of_executed_units)|SUMMARY|panicked at|crash-|timeout-|oom-" || true
  if compgen -G "artifacts/$t/*" >/dev/null; then
    echo "fuzz: $t found a failing input: $(ls artifacts/$t)" >&2
    exit 1
  fi
done
