#!/usr/bin/env bash
# Byte-compare the `--format json` output of `report`, `summary` and `diff BASE NEW`
# between two kinetoscope binaries on the traces given.
#
#   scripts/compare_outputs.sh OLD_BINARY NEW_BINARY TRACE... [-- BASE NEW ...]
#
# Every TRACE is run through `report`, `summary` and `diff TRACE TRACE`; each BASE NEW
# pair after `--` through `diff BASE NEW`. Outputs go to a temporary folder; the exit
# status is 1 when any output differs (the first lines of the difference are printed).
set -u
old=$1 new=$2
shift 2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
n=0
check() { # label, then the arguments after the binary
    local label=$1
    shift
    n=$((n + 1))
    "$old" "$@" --format json >"$out/old" 2>"$out/old.err"
    local rc_old=$?
    "$new" "$@" --format json >"$out/new" 2>"$out/new.err"
    local rc_new=$?
    if [ "$rc_old" != "$rc_new" ] || ! cmp -s "$out/old" "$out/new" ||
        ! cmp -s "$out/old.err" "$out/new.err"; then
        echo "DIFFERS: $label (exit $rc_old → $rc_new)"
        diff "$out/old" "$out/new" | head -5
        diff "$out/old.err" "$out/new.err" | head -5
        fail=1
    else
        echo "same: $label ($(wc -c <"$out/new") bytes, exit $rc_new)"
    fi
}
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    t=$1
    shift
    check "report $t" report "$t"
    check "summary $t" summary "$t"
    check "diff $t $t" diff "$t" "$t"
done
[ $# -gt 0 ] && shift
while [ $# -ge 2 ]; do
    check "diff $1 $2" diff "$1" "$2"
    shift 2
done
echo "$n outputs compared"
exit $fail
