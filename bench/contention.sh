#!/bin/sh
# The thread pool under load from other processes (issue 24, contention): runs one sotto
# command ROUNDS times alone and ROUNDS times beside BUSY busy loops
# (`sh -c 'while :; do :; done'`), alternating, and prints each run's wall and CPU
# seconds, the 1-minute load average before it, the medians and busy / alone.
# usage: sh bench/contention.sh [-r ROUNDS] [-b BUSY] SOTTO_BINARY ARGS...
#   e.g. sh bench/contention.sh build/sotto transcribe -m M.gguf -t 2 --quiet -f txt A.wav
set -eu
rounds=3 busy=2
while [ $# -gt 0 ]; do
    case $1 in
    -r) rounds=$2; shift 2 ;;
    -b) busy=$2; shift 2 ;;
    *) break ;;
    esac
done
[ $# -ge 1 ] || { echo "usage: sh bench/contention.sh [-r ROUNDS] [-b BUSY] SOTTO_BINARY ARGS..." >&2; exit 2; }
tmp=$(mktemp -d)
pids=""
cleanup() { for p in $pids; do kill "$p" 2>/dev/null || :; done; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
one() { # runs "$@"; its wall and CPU seconds appended to $tmp/$label
    la=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -f "%e %U %S" -o "$tmp/t" "$@" >/dev/null 2>&1 <&- || { echo "contention.sh: the command failed" >&2; exit 1; }
    read -r w u s <"$tmp/t"
    cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
    echo "$w $cpu" >>"$tmp/$label"
    echo "$label: wall $w s, CPU $cpu s (load $la before)"
}
i=0
while [ "$i" -lt "$rounds" ]; do
    label=alone one "$@"
    j=0
    while [ "$j" -lt "$busy" ]; do sh -c 'while :; do :; done' & pids="$pids $!"; j=$((j + 1)); done
    label=busy one "$@"
    for p in $pids; do kill "$p" 2>/dev/null || :; done
    pids=""
    i=$((i + 1))
done
med() { sort -n -k"$2" "$tmp/$1" | awk -v k="$2" '{ v[NR] = $k } END { print v[int((NR + 1) / 2)] }'; }
a=$(med alone 1) b=$(med busy 1) ac=$(med alone 2) bc=$(med busy 2)
echo "medians: alone $a s wall ($ac s CPU); beside $busy busy loops $b s wall ($bc s CPU); busy / alone $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b / a }')"
