#!/usr/bin/env bash
# test_kernel_sets.sh — every kernel set this CPU runs gives the scalar reference kernels'
# ids (`sotto run`, greedy) on every golden clip of a model (q8_0 included: the q8_0
# products of every set have the reference's bits, docs/ARCHITECTURE.md).
# usage: test_kernel_sets.sh SOTTO MODEL GOLDEN_DIR
set -u
SOTTO=$1 MODEL=$2 GOLDEN=$3
sets=()
for s in avx2 avx_vnni avx512 neon; do
    if SOTTO_KERNELS=$s "$SOTTO" --version 2>/dev/null | grep -q "(kernels: $s)"; then sets+=("$s"); fi
done
echo "kernel sets beside scalar: ${sets[*]:-none}"
fail=0 n=0
for mel in "$GOLDEN"/*.mel.f32; do
    clip=$(basename "$mel" .mel.f32)
    ref=$(SOTTO_KERNELS=scalar "$SOTTO" run -m "$MODEL" --mel "$mel" -t 2 2>/dev/null) || { echo "FAIL $clip: scalar run failed"; fail=1; continue; }
    for s in "${sets[@]}"; do
        got=$(SOTTO_KERNELS=$s "$SOTTO" run -m "$MODEL" --mel "$mel" -t 2 2>/dev/null)
        n=$((n + 1))
        if [ "$got" != "$ref" ]; then
            echo "FAIL $clip: $s gives [$got], scalar [$ref]"
            fail=1
        fi
    done
done
[ "$fail" = 0 ] && echo "ok: ${#sets[@]} sets x $(ls "$GOLDEN"/*.mel.f32 | wc -l) clips ($n runs) give the scalar ids"
exit $fail
