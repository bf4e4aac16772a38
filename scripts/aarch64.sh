#!/usr/bin/env bash
# The reader's aarch64 path (NEON), on an x86-64 machine: built with a cross linker and
# run under qemu's user-mode emulator.
#
#   scripts/aarch64.sh test                       # kinetoscope-trace's tests on aarch64
#   scripts/aarch64.sh build                      # a release kinetoscope for aarch64
#   scripts/aarch64.sh count BINARY CMD TRACE...  # guest instructions of `CMD -j 1`
#
# Needs the Rust target (`rustup target add aarch64-unknown-linux-gnu`) and, on Debian,
# `apt-get install qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross`.
# `count` prints millions of aarch64 instructions per trace: qemu logs each translated
# block's instructions once (`-d in_asm`) and each execution of a block (`-d exec` with
# `nochain`), and the two are multiplied out. It agrees with a count of one instruction
# per block (`-singlestep`) to 0.01 %, and runs about 7 times faster. The log goes
# through a pipe (a 1.4 MB trace makes 0.7 GB of it).
set -euo pipefail
target=aarch64-unknown-linux-gnu
sysroot=/usr/aarch64-linux-gnu
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L $sysroot"
export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc

count_log() { # qemu's log on stdin -> guest instructions
    python3 -c '
import sys
size, total, start, n = {}, 0, None, 0
for line in sys.stdin.buffer:
    c = line[:1]
    if c == b"T":  # "Trace 0: HOST [CPU/PC/FLAGS/CFLAGS]": one execution of a block
        total += size.get(int(line.split(b"[", 1)[1].split(b"/", 2)[1], 16), 0)
    elif c == b"0":  # "0xPC:  WORD  insn": one instruction of a block being translated
        if start is None:
            start, n = int(line.split(b":", 1)[0], 16), 0
        n += 1
    elif c == b"I":  # "IN: function": a block starts
        start = None
    elif start is not None:  # the blank line that ends a block
        size[start], start = n, None
print(total)
'
}

case ${1:-} in
test)
    cargo test -p kinetoscope-trace --target $target
    ;;
build)
    cargo build --release -p kinetoscope --target $target
    ;;
count)
    bin=$2 cmd=$3
    shift 3
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
    mkfifo "$dir/log"
    for trace in "$@"; do
        count_log <"$dir/log" >"$dir/count" &
        KINETOSCOPE_NO_CACHE=1 qemu-aarch64 -L $sysroot -d in_asm,exec,nochain -D "$dir/log" \
            "$bin" "$cmd" -j 1 --format json "$trace" >/dev/null
        wait
        awk -v t="$trace" -v c="$cmd" '{ printf "%s %s %.1f\n", t, c, $1 / 1e6 }' "$dir/count"
    done
    ;;
*)
    sed -n '2,15p' "$0"
    exit 2
    ;;
esac
