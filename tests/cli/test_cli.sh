#!/bin/bash
# test_cli.sh — what every subcommand shares, as a new user meets it: `--opt=value` as
# well as `--opt value`, value-less flags refusing a value, warnings for a SOTTO_KERNELS
# set the CPU does not run and for more threads than cores, every option --help lists
# known to the parser (one table drives both), `sotto bench` reporting the thread count
# it ran, `sotto convert` saying what it wrote and leaving no OUT.tmp.PID behind when
# interrupted, and outputs that are not plain files (a FIFO, a link, stdout) never
# renamed over by convert or mel.
# usage: test_cli.sh SOTTO TINY_EN.gguf BIG_MODEL CLIP.wav TMP_DIR
set -u
SOTTO=$1 TINY=$2 BIG=$3 CLIP=$4 TMP=$5
mkdir -p "$TMP"
pass=0 fail=0

. "$(dirname "$0")/lib.sh"

MEL=$TMP/clip.mel
"$SOTTO" mel "$CLIP" "$MEL" || { echo "FAIL: sotto mel"; exit 1; }
"$SOTTO" run -m "$TINY" --mel "$MEL" --max-new-tokens 4 -t 1 >"$TMP/spaced" 2>/dev/null
expect 0 "stdout:$(cat "$TMP/spaced")" "$SOTTO" run --model="$TINY" --mel="$MEL" --max-new-tokens=4 --threads=1
expect 1 "--suppress takes no value" "$SOTTO" run -m "$TINY" --mel "$MEL" --suppress=yes
expect 1 "--help takes no value" "$SOTTO" transcribe --help=1
expect 1 "--repetition-penalty takes a number > 0, not '1e39' (beyond a float's range)" \
    "$SOTTO" transcribe -m "$TINY" --repetition-penalty 1e39 "$CLIP"
expect 1 "needs a value" "$SOTTO" run -m "$TINY" --mel
# the word-timestamp options say what they need
expect 1 "--max-line-len needs --word-timestamps" "$SOTTO" transcribe -m "$TINY" --max-line-len 20 "$CLIP"
expect 1 "--split-on-word needs --max-line-len" "$SOTTO" transcribe -m "$TINY" --word-timestamps --split-on-word "$CLIP"
expect 1 "--hallucination-silence-threshold needs --word-timestamps" "$SOTTO" transcribe -m "$TINY" \
    --hallucination-silence-threshold 2 "$CLIP"
expect 1 "--max-line-len takes a number of characters" "$SOTTO" transcribe -m "$TINY" --word-timestamps \
    --max-line-len 0 "$CLIP"
# the punctuation merged into words (librivox-0880 ends "young man.")
expect 0 'stdout:{"word": " man.", "start"' "$SOTTO" transcribe -m "$TINY" -f json --beam-size 1 --word-timestamps "$CLIP"
expect 0 'stdout:{"word": ".", "start"' "$SOTTO" transcribe -m "$TINY" -f json --beam-size 1 --word-timestamps \
    --append-punctuations "" "$CLIP"
expect 1 "--hallucination-silence-threshold takes seconds >= 0" "$SOTTO" transcribe -m "$TINY" --word-timestamps \
    --hallucination-silence-threshold -1 "$CLIP"
# openai-whisper's warning for words of a translation (tiny.en then refuses the task)
expect 1 "warning: word-level timestamps on translations may not be reliable" "$SOTTO" transcribe -m "$TINY" \
    --task translate --word-timestamps "$CLIP"
expect 0 "SOTTO_KERNELS=bogus names no kernel set" env SOTTO_KERNELS=bogus "$SOTTO" run -m "$TINY" --mel "$MEL" \
    --max-new-tokens 2 -t 1
expect 0 "SOTTO_KERNELS=avx-2 names no kernel set" env SOTTO_KERNELS=avx-2 "$SOTTO" --version
# a set of another CPU: named as such; empty: unset, no warning
other=neon_dot
[[ $(uname -m) == aarch64 ]] && other=avx2
expect 0 "SOTTO_KERNELS=$other is not a kernel set this CPU runs" env SOTTO_KERNELS=$other "$SOTTO" --version
env SOTTO_KERNELS= "$SOTTO" --version 2>"$TMP/kerr" >/dev/null && [[ ! -s $TMP/kerr ]] && ok ||
    bad "SOTTO_KERNELS= warned: $(cat "$TMP/kerr")"
expect 0 "stdout:(kernels: scalar)" env SOTTO_KERNELS=SCALAR "$SOTTO" --version
# the default thread count: the cores this process may use (sotto_cpu_count: at most nproc,
# lower under a cgroup CPU quota)
cores=$("$SOTTO" bench -m "$TINY" --runs 1 --tokens 2 | sed -n 's/.*"threads": \([0-9]*\),.*/\1/p')
if [ -n "$cores" ] && [ "$cores" -ge 1 ] && [ "$cores" -le "$(nproc)" ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL: bench's default threads '$cores' (nproc $(nproc))"; cores=1; fi
expect 0 "$((cores + 1)) threads on $cores core" "$SOTTO" run -m "$TINY" --mel "$MEL" --max-new-tokens 2 \
    -t $((cores + 1))
"$SOTTO" run -m "$TINY" --mel "$MEL" --max-new-tokens 2 -t "$cores" 2>"$TMP/err" >/dev/null
if grep -q "threads on" "$TMP/err"; then fail=$((fail + 1)); echo "FAIL: warned at -t $cores"; else pass=$((pass + 1)); fi
expect 0 "stdout:\"threads\": 1," "$SOTTO" bench -m "$TINY" --runs 1 --tokens 2 -t 1
# its JSON stays JSON whatever the model's path holds (quotes, a backslash, a newline)
odd="$TMP/we\"ird\\dir"$'\n'"x.gguf"
cp "$TINY" "$odd"
"$SOTTO" bench -m "$odd" --runs 1 --tokens 2 -t 1 2>/dev/null |
    python3 -c 'import json, sys; assert json.load(sys.stdin)["model"] == sys.argv[1]' "$odd" &&
    pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: bench's JSON with an odd model path"; }
rm -f "$odd"
# the cores this process may use, not the machine's (taskset here; a container's cpuset or CPU quota alike)
if command -v taskset >/dev/null && [ "$(nproc)" -gt 1 ]; then
    expect 0 "stdout:\"threads\": 1," taskset -c 0 "$SOTTO" bench -m "$TINY" --runs 1 --tokens 2
    expect 0 "2 threads on 1 core:" taskset -c 0 "$SOTTO" run -m "$TINY" --mel "$MEL" --max-new-tokens 2 -t 2
fi

# help and parsing come from one option table: every option a subcommand's --help lists
# is one its parser knows, a value option asking for its value, a flag refusing one
for cmd in transcribe run mel convert info bench vad serve; do
    "$SOTTO" $cmd --help >"$TMP/help" || { fail=$((fail + 1)); echo "FAIL: sotto $cmd --help"; continue; }
    grep -oE '^  (-[a-z], )?--[a-z0-9-]+( [A-Z][A-Z.]*)?' "$TMP/help" | sed 's/^  //' >"$TMP/listed"
    [ -s "$TMP/listed" ] || { fail=$((fail + 1)); echo "FAIL: sotto $cmd --help lists no option"; }
    while IFS= read -r line; do
        short= long= arg=
        if [[ $line =~ ^(-[a-z]),\ (--[a-z0-9-]+)(\ (.+))?$ ]]; then
            short=${BASH_REMATCH[1]} long=${BASH_REMATCH[2]} arg=${BASH_REMATCH[4]}
        elif [[ $line =~ ^(--[a-z0-9-]+)(\ (.+))?$ ]]; then
            long=${BASH_REMATCH[1]} arg=${BASH_REMATCH[3]}
        fi
        if [ -n "$arg" ]; then
            expect 1 "$long needs a value" "$SOTTO" $cmd "$long"
            [ -n "$short" ] && expect 1 "$short needs a value" "$SOTTO" $cmd "$short"
        else
            expect 1 "$long takes no value (in '$long=1')" "$SOTTO" $cmd "$long=1"
        fi
    done <"$TMP/listed"
done
expect 1 "unknown option '--bogus' (see sotto vad --help)" "$SOTTO" vad --bogus
expect 1 "--beam-size takes a beam count in 1..16, not '17'" "$SOTTO" transcribe --beam-size=17 x.wav
expect 1 "--vad-threshold takes a probability in (0, 1), not '1'" "$SOTTO" transcribe --vad-threshold 1 x.wav
expect 1 "--task takes transcribe or translate, not 'x'" "$SOTTO" transcribe --task x x.wav
# positional arguments past what a subcommand takes are named
expect 1 "sotto mel: unexpected argument 'extra': it takes AUDIO and OUT only" "$SOTTO" mel a.wav b.mel extra
expect 1 "sotto run: unexpected argument 'extra'" "$SOTTO" run -m "$TINY" --mel "$MEL" extra
expect 1 "sotto info: unexpected argument 'b'" "$SOTTO" info a b
# a value is taken whole, even one that looks like --name=value
expect 1 "--x=y: cannot open" "$SOTTO" run -m "$TINY" --mel --x=y

# convert: a summary on success; no OUT.tmp.PID after SIGTERM/SIGINT in the middle of
# writing; IN's own type without --type; a file of the user's named OUT.tmp untouched, and
# the permissions of the OUT replaced kept; an empty OUT refused
OUT=$TMP/out.gguf
expect 0 "stdout:encoder f16, decoder f16" "$SOTTO" convert "$TINY" "$OUT"
echo "my notes" >"$OUT.tmp"
chmod 600 "$OUT"
expect 0 "stdout:encoder q8_0, decoder f16" "$SOTTO" convert "$TINY" "$OUT" --encoder-type q8_0
[ "$(cat "$OUT.tmp")" = "my notes" ] && [ "$(stat -c %a "$OUT")" = 600 ] && pass=$((pass + 1)) ||
    { fail=$((fail + 1)); echo "FAIL: convert: OUT.tmp $(cat "$OUT.tmp"), mode $(stat -c %a "$OUT")"; }
rm -f "$OUT.tmp"
expect 1 "OUT is empty" "$SOTTO" convert "$TINY" ""
expect 0 "stdout:sotto convert: wrote $OUT (" "$SOTTO" convert "$TINY" "$OUT" --type=q8_0
expect 0 "stdout:encoder q8_0, decoder q8_0" "$SOTTO" convert "$TINY" "$OUT" --type q8_0
for sig in TERM INT; do
    rm -f "$OUT" "$OUT".tmp*
    "$SOTTO" convert "$BIG" "$OUT" --type f32 >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 500); do [ -s "$OUT.tmp.$pid" ] && break; sleep 0.01; done
    seen=$([ -s "$OUT.tmp.$pid" ] && echo yes || echo no)
    kill -$sig $pid 2>/dev/null
    wait $pid
    rc=$?
    if [ "$seen" = yes ] && [ $rc -ne 0 ] && [ ! -e "$OUT.tmp.$pid" ] && [ ! -e "$OUT" ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: SIG$sig during convert: tmp seen $seen, exit $rc, left: $(ls "$OUT"* 2>/dev/null)"
    fi
done

# outputs that are not plain files are never renamed over (as root that replaced /dev/null):
# convert refuses a FIFO, writes a link's target; mel writes into a FIFO and to - (stdout)
mkfifo "$TMP/out.fifo"
expect 2 "not a regular file" "$SOTTO" convert "$TINY" "$TMP/out.fifo" --type q8_0
[ -p "$TMP/out.fifo" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: convert replaced a FIFO"; }
rm -f "$TMP/target.gguf" && touch "$TMP/target.gguf" && ln -sfn target.gguf "$TMP/link.gguf"
expect 0 "stdout:sotto convert: wrote $TMP/target.gguf" "$SOTTO" convert "$TINY" "$TMP/link.gguf" --type q8_0
[ -L "$TMP/link.gguf" ] && [ -s "$TMP/target.gguf" ] && pass=$((pass + 1)) ||
    { fail=$((fail + 1)); echo "FAIL: convert through a link: $(ls -l "$TMP"/*.gguf)"; }
(cat "$TMP/out.fifo" | wc -c >"$TMP/fifo.n") &
reader=$!
"$SOTTO" mel "$CLIP" "$TMP/out.fifo"
rc=$?
wait $reader
[ $rc -eq 0 ] && [ -p "$TMP/out.fifo" ] && [ "$(cat "$TMP/fifo.n")" = 960000 ] && pass=$((pass + 1)) ||
    { fail=$((fail + 1)); echo "FAIL: mel into a FIFO: $(cat "$TMP/fifo.n"), $(ls -l "$TMP/out.fifo")"; }
"$SOTTO" mel "$CLIP" - | cmp -s - "$MEL" && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: mel to -"; }
# an installed model's name works wherever a model is taken: info's and convert's MODEL,
# SOTTO_MODEL; an unknown one lists what is installed
mkdir -p "$TMP/xdg/sotto/models" && ln -sfn "$TINY" "$TMP/xdg/sotto/models/tiny.en.gguf"
expect 0 "stdout:vocabulary     51864 tokens" env XDG_DATA_HOME="$TMP/xdg" "$SOTTO" info tiny.en
expect 0 "stdout:$(cat "$TMP/spaced")" env XDG_DATA_HOME="$TMP/xdg" SOTTO_MODEL=tiny.en "$SOTTO" run --mel "$MEL" \
    --max-new-tokens 4 -t 1
expect 0 "stdout:sotto convert: wrote $TMP/named.gguf" env XDG_DATA_HOME="$TMP/xdg" "$SOTTO" convert tiny.en \
    "$TMP/named.gguf" --type q8_0
expect 1 "installed in $TMP/xdg/sotto/models: tiny.en" env XDG_DATA_HOME="$TMP/xdg" SOTTO_MODEL=tiny "$SOTTO" run \
    --mel "$MEL"
rm -rf "$TMP/xdg" "$TMP/named.gguf"
# a model path that is a FIFO is refused, not opened (its open waited for a writer forever)
expect 2 "$TMP/out.fifo: not a regular file or a directory" timeout 60 "$SOTTO" info "$TMP/out.fifo"
# a CTranslate2 folder's own files are not replaced by its conversion
mkdir -p "$TMP/ct" && echo '{}' >"$TMP/ct/config.json"
expect 1 "$TMP/ct/config.json is a file of the input folder" "$SOTTO" convert "$TMP/ct" "$TMP/ct/config.json"
rm -f "$TMP/out.fifo" "$TMP/link.gguf" "$TMP/target.gguf"

echo "test_cli: $pass passed, $fail failed"
[ $fail -eq 0 ]
