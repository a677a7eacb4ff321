#!/bin/bash
# replay_crashes.sh — every input a fuzzer once crashed on (tests/fuzz/crashes/) goes
# through the CLI path that crashed; each must now end with a documented exit code (0, 1
# or 2), never a signal, and a conversion that succeeds must write a file that loads.
# Under `make test-asan` this runs with the sanitizers.
# usage: replay_crashes.sh SOTTO CRASH_DIR TMP_DIR
set -u
SOTTO=$1 DIR=$2 TMP=$3
mkdir -p "$TMP"
pass=0 fail=0
for f in "$DIR"/*; do
    name=$(basename "$f")
    case $name in
    fuzz_gguf-*) cp "$f" "$TMP/in.gguf"; cmd=("$SOTTO" convert "$TMP/in.gguf" "$TMP/out.gguf") ;;
    fuzz_ggml-*) cp "$f" "$TMP/in.bin"; cmd=("$SOTTO" convert "$TMP/in.bin" "$TMP/out.gguf" --type q8_0) ;;
    fuzz_wav-*|fuzz_audio-*) cmd=("$SOTTO" mel "$f" "$TMP/out.mel") ;;
    fuzz_idlist-*) cmd=("$SOTTO" run --mel /dev/null --prefix "$(head -c 4096 "$f" | tr -d '\0')") ;;
    fuzz_vad-*)
        # fuzz_vad's input: uint32 LE count of zero bytes to append, then the file's first bytes
        python3 - "$f" "$TMP/vad.gguf" "$TMP/vad.wav" <<'PY' || continue
import struct, sys, wave
b = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(b[4:] + bytes(min(struct.unpack("<I", b[:4])[0], 4 << 20)))
with wave.open(sys.argv[3], "wb") as w:
    w.setnchannels(1); w.setsampwidth(2); w.setframerate(16000)
    w.writeframes(b"".join(struct.pack("<h", (i * 37) % 2001 - 1000) for i in range(2000)))
PY
        cmd=("$SOTTO" vad --probs --vad-model "$TMP/vad.gguf" "$TMP/vad.wav") ;;
    *) continue ;;
    esac
    rm -f "$TMP/out.gguf"
    "${cmd[@]}" >/dev/null 2>"$TMP/err"
    rc=$?
    # a conversion that reports success must leave a file that loads
    if [[ $rc -eq 0 && ${cmd[1]} == convert ]] && ! "$SOTTO" info "$TMP/out.gguf" >/dev/null 2>>"$TMP/err"; then
        rc=99; echo "   $name: converted, but the output does not load" >>"$TMP/err"; fi
    if [[ $rc -le 2 ]]; then pass=$((pass + 1)); else
        fail=$((fail + 1)); echo "FAIL: $name: exit $rc"; head -c 2000 "$TMP/err"; fi
done
echo "$pass passed, $fail failed"
[[ $fail -eq 0 && $pass -gt 0 ]]
