#!/bin/bash
# test_transcribe_io.sh — where `sotto transcribe` writes and how it stops (issue 23): -o onto
# a device, a FIFO, /dev/stdout, a symbolic link and a regular file; -o -; write errors on
# stdout and -o with their reason; output-name clashes with --output-dir alone; -j 1 as a
# batch; SIGTERM as SIGINT; SIGINT in one long input (the segments it says were decoded);
# -l checked once before loading, openai's language names; the progress line cleared
# before segments on a terminal; no header for an input that fails;
# `sotto vad` and `bench --audio` reading any format and stdin; --help and README against
# the subcommands that exist.
# usage: test_transcribe_io.sh SOTTO TINY_EN.gguf VAD.gguf CLIPS_DIR SRC_DIR TMP_DIR
set -u
SOTTO=$1 TINY=$2 VAD=$3 CLIPS=$4 SRC=$5 TMP=$6
rm -rf "$TMP"
mkdir -p "$TMP"
pass=0 fail=0

. "$(dirname "$0")/lib.sh"

runs() { # runs CODE CMD...: CMD exits with CODE (its output in $TMP/out and $TMP/err)
    local code=$1
    shift
    "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    [[ $rc == "$code" ]] && ok || bad "expected exit $code, got $rc from: $* ($(head -c 300 "$TMP/err"))"
}
clip=$CLIPS/librivox-0880.wav 
T=(-m "$TINY" -t 2 --device cpu --vad-model "$VAD" --beam-size 1 --quiet)

# -o onto what is not a regular file is written into; a regular file through a rename
# (never onto /dev/null, /dev/full or /dev/stdout themselves: a build that renames over
# its target would replace the machine's devices when run as root; copies here instead)
if mknod -m 666 "$TMP/null" c 1 3 2>/dev/null && mknod -m 666 "$TMP/full" c 1 7; then
    runs 0 "$SOTTO" transcribe "${T[@]}" -o "$TMP/null" "$clip"
    [[ -c $TMP/null ]] && ok || bad "-o onto a character device replaced it: $(ls -l "$TMP/null")"
    expect 2 "cannot write $TMP/full: No space left on device" "$SOTTO" transcribe "${T[@]}" -o "$TMP/full" "$clip"
    [[ -c $TMP/full ]] && ok || bad "-o onto a full device replaced it"
else
    echo "note: not root: no mknod, the character device cases are skipped (the FIFO covers -o into a non-file)"
fi
mkfifo "$TMP/fifo"
timeout 150 cat "$TMP/fifo" >"$TMP/fifo.out" & # bounded: a FIFO replaced by a file has no writer
reader=$!
runs 0 timeout 120 "$SOTTO" transcribe "${T[@]}" -o "$TMP/fifo" "$clip"
wait "$reader"
[[ -p $TMP/fifo ]] && grep -q "young man" "$TMP/fifo.out" && ok || bad "-o onto a FIFO: $(ls -l "$TMP/fifo")"
ln -s /proc/self/fd/1 "$TMP/stdout" # what /dev/stdout is
"$SOTTO" transcribe "${T[@]}" -o "$TMP/stdout" "$clip" 2>"$TMP/err" | cat >"$TMP/devstdout"
[[ ${PIPESTATUS[0]} == 0 && -L $TMP/stdout ]] && grep -q "young man" "$TMP/devstdout" && ok ||
    bad "-o /dev/stdout onto a pipe: $(cat "$TMP/err")"
"$SOTTO" transcribe "${T[@]}" -o "$TMP/stdout" "$clip" >"$TMP/devstdout2" 2>"$TMP/err"
[[ $? == 0 && -L $TMP/stdout ]] && grep -q "young man" "$TMP/devstdout2" && ok ||
    bad "-o /dev/stdout onto a file: $(cat "$TMP/err")"
expect 0 "stdout:young man" "$SOTTO" transcribe "${T[@]}" -o - "$clip"
echo old >"$TMP/target.txt"
ln -s target.txt "$TMP/link.txt"
runs 0 "$SOTTO" transcribe "${T[@]}" -o "$TMP/link.txt" "$clip"
[[ -L $TMP/link.txt ]] && grep -q "young man" "$TMP/target.txt" && ok || bad "-o onto a symlink: $(ls -l "$TMP")"
runs 0 "$SOTTO" transcribe "${T[@]}" -o "$TMP/plain.txt" "$clip"
[[ -f $TMP/plain.txt && ! -L $TMP/plain.txt && ! -e $TMP/plain.txt.tmp ]] && grep -q "young man" "$TMP/plain.txt" &&
    ok || bad "-o onto a regular file"

# write errors: stdout on a full device (a redirection: the device stays); the reason named, exit 2
expect 2 "write error: No space left on device" sh -c '"$0" transcribe "$@" > /dev/full' "$SOTTO" "${T[@]}" "$clip"
expect 2 "write error: No space left on device" sh -c '"$0" vad --vad-model "$1" "$2" > /dev/full' "$SOTTO" "$VAD" "$clip"

# a batch onto a full filesystem (a 64 kB tmpfs in a mount namespace of its own, filled
# up): the reason named once, the files left not transcribed, exit 2
mkdir -p "$TMP/full.mnt" "$TMP/full.in"
for n in 1 2 3 4; do cp "$clip" "$TMP/full.in/c$n.wav"; done
if unshare -m true 2>/dev/null; then
    unshare -m bash -c 'mount -t tmpfs -o size=64k tmpfs "$1" || exit 99
        head -c 1M /dev/zero >"$1/filler" 2>/dev/null
        shift; "$@"' _ "$TMP/full.mnt" "$SOTTO" transcribe "${T[@]}" -f txt --output-dir "$TMP/full.mnt/out" \
        "$TMP/full.in" >/dev/null 2>"$TMP/err"
    rc=$?
    [[ $rc == 2 ]] && [[ $(grep -c "No space left on device" "$TMP/err") == 2 ]] &&
        grep -q "stopped: No space left on device; the files left were not transcribed" "$TMP/err" &&
        grep -q "4 files: 0 transcribed, 0 skipped (outputs exist), 1 failed, 3 not done" "$TMP/err" && ok ||
        bad "a batch onto a full filesystem: exit $rc, $(cat "$TMP/err")"
    # files named one by one (no batch): the same stop after the first that cannot be written
    unshare -m bash -c 'mount -t tmpfs -o size=64k tmpfs "$1" || exit 99
        head -c 1M /dev/zero >"$1/filler" 2>/dev/null
        shift; "$@"' _ "$TMP/full.mnt" "$SOTTO" transcribe "${T[@]}" -f txt --output-dir "$TMP/full.mnt/out" \
        "$TMP"/full.in/c*.wav >/dev/null 2>"$TMP/err"
    rc=$?
    [[ $rc == 2 ]] && [[ $(grep -c "No space left on device" "$TMP/err") == 2 ]] &&
        grep -q "stopped: No space left on device; the 3 inputs left were not transcribed" "$TMP/err" && ok ||
        bad "files one by one onto a full filesystem: exit $rc, $(cat "$TMP/err")"
else
    echo "note: no mount namespace here (unshare -m); the full-filesystem batch is not run"
fi

# an output place found unwritable before decoding: exit 2, as a write that fails later;
# -o naming the input itself, or another existing file that is no transcript: refused, the
# audio kept
expect 2 "cannot write $TMP/nodir/x.txt: No such file or directory" "$SOTTO" transcribe "${T[@]}" \
    -o "$TMP/nodir/x.txt" "$clip"
expect 2 "cannot write $TMP: Is a directory" "$SOTTO" transcribe "${T[@]}" -o "$TMP" "$clip"
touch "$TMP/notdir"
expect 2 "cannot create --output-dir $TMP/notdir/o" "$SOTTO" transcribe "${T[@]}" --output-dir "$TMP/notdir/o" "$clip"
cp "$clip" "$TMP/self.wav"
ln -s self.wav "$TMP/self.link"
expect 1 "-o $TMP/self.link is the input: the transcript would replace the audio" "$SOTTO" transcribe "${T[@]}" \
    -o "$TMP/self.link" "$TMP/self.wav"
cmp -s "$clip" "$TMP/self.wav" && ok || bad "-o onto the input changed it"
# -o naming another existing file whose extension is no transcript's (talk.wav beside
# talk.opus): refused, that file kept; a new name with such an extension is written as txt
ffmpeg -loglevel quiet -y -i "$clip" "$TMP/self.opus" && cp "$clip" "$TMP/keep.wav" && expect 1 \
    "-o $TMP/keep.wav exists and its extension is no transcript's" "$SOTTO" transcribe "${T[@]}" -o "$TMP/keep.wav" \
    "$TMP/self.opus"
cmp -s "$clip" "$TMP/keep.wav" && ok || bad "-o onto another audio file changed it"

# the temporary names are created exclusively: links planted at them for the next pids (a
# shared directory's race) are removed, never followed (they had emptied or overwritten
# their target: -o, --output-dir's write test and its files, sotto convert)
mkdir -p "$TMP/race"
echo precious >"$TMP/victim"
python3 - "$TMP/race" "$TMP/victim" <<'EOF'
import os, sys
last = int(open("/proc/sys/kernel/ns_last_pid").read())
for pid in range(last + 1, last + 300):
    for name in ("librivox-0880.txt", ".sotto-write-test", "talk.srt", "m.gguf"):
        os.symlink(sys.argv[2], "%s/%s.tmp.%d" % (sys.argv[1], name, pid))
EOF
"$SOTTO" transcribe "${T[@]}" --output-dir "$TMP/race" "$clip" 2>"$TMP/err" &&
    "$SOTTO" transcribe "${T[@]}" -f srt -o "$TMP/race/talk.srt" "$clip" 2>>"$TMP/err" &&
    "$SOTTO" convert "$TINY" "$TMP/race/m.gguf" --type q8_0 >/dev/null 2>>"$TMP/err" &&
    [[ $(cat "$TMP/victim") == precious && -f $TMP/race/librivox-0880.txt && ! -L $TMP/race/librivox-0880.txt &&
       -s $TMP/race/talk.srt && -s $TMP/race/m.gguf ]] && ok ||
    bad "planted links at the temporary names: victim $(head -c 80 "$TMP/victim"), $(cat "$TMP/err")"
# a name that fits NAME_MAX but whose PATH.tmp.PID would not: written (the temporary is
# DIR/.sotto.tmp.PID then)
long=$(printf 'a%.0s' $(seq 250))
cp "$clip" "$TMP/$long.wav"
"$SOTTO" transcribe "${T[@]}" --output-dir "$TMP/longname" "$TMP/$long.wav" 2>"$TMP/err" &&
    [[ -s $TMP/longname/$long.txt && $(ls -A "$TMP/longname" | wc -l) == 1 ]] && ok ||
    bad "a 254-byte output name: $(cat "$TMP/err")"

# one output name for two inputs: refused with --output-dir alone too (no o//a.*)
mkdir -p "$TMP/d1" "$TMP/d2"
cp "$clip" "$TMP/d1/a.wav"
cp "$CLIPS/librivox-0870.wav" "$TMP/d2/a.wav"
expect 1 "would both write $TMP/o/a.*" "$SOTTO" transcribe "${T[@]}" --output-dir "$TMP/o/" "$TMP/d1/a.wav" "$TMP/d2/a.wav"
[[ ! -e $TMP/o/a.txt ]] && ok || bad "an output was written for clashing inputs"
expect 1 "would both write $TMP/o/a.*" "$SOTTO" transcribe "${T[@]}" -j 2 --output-dir "$TMP/o/" "$TMP/d1/a.wav" \
    "$TMP/d2/a.wav"
# the same file twice with --output-dir alone: transcribed once, with batch mode's note
"$SOTTO" transcribe "${T[@]}" --output-dir "$TMP/twice" "$TMP/d1/a.wav" "$TMP/d1/../d1/a.wav" >"$TMP/out" 2>"$TMP/err" &&
    grep -q "is $TMP/d1/a.wav again: transcribed once" "$TMP/err" &&
    [[ -s $TMP/twice/a.txt ]] && ok || bad "the same file twice: $(cat "$TMP/err" "$TMP/out")"
# -j 1 is a batch: it needs --output-dir, and says "one file at a time"
expect 1 "write to --output-dir" "$SOTTO" transcribe "${T[@]}" -j 1 "$clip"
"$SOTTO" transcribe -m "$TINY" -t 2 --device cpu --vad-model "$VAD" --beam-size 1 -j 2 --output-dir "$TMP/j1" "$clip" \
    >/dev/null 2>"$TMP/err"
grep -q "one file at a time" "$TMP/err" && ! grep -q "1 files" "$TMP/err" && ok || bad "-j 2, one file: $(cat "$TMP/err")"
# without -t the cores are shared by the contexts that run: -j 4 on one file gets them all
for j in 1 4; do
    "$SOTTO" transcribe -m "$TINY" --device cpu --beam-size 1 --overwrite -j $j --output-dir "$TMP/j$j" "$clip" \
        2>&1 | grep -o "[0-9]* threads*)" >"$TMP/threads.$j"
done
[[ -s $TMP/threads.1 ]] && cmp -s "$TMP/threads.1" "$TMP/threads.4" && ok ||
    bad "-j 4 on one file: $(cat "$TMP/threads.4") where -j 1 has $(cat "$TMP/threads.1")"

# no "==> name <==" for an input that fails
"$SOTTO" transcribe "${T[@]}" "$TMP/missing.wav" "$clip" >"$TMP/out" 2>"$TMP/err"
[[ $? == 1 ]] && ! grep -q "missing.wav" "$TMP/out" && grep -q "==> $clip <==" "$TMP/out" && ok ||
    bad "header of a failed input: $(cat "$TMP/out")"
# one input that is not there: said before the model loads (no device line), exit 1
"$SOTTO" transcribe "${T[@]}" "$TMP/missing.wav" >"$TMP/out" 2>"$TMP/err"
[[ $? == 1 ]] && grep -q "missing.wav: cannot open: No such file or directory" "$TMP/err" &&
    ! grep -q "device" "$TMP/err" && ok || bad "one missing input: $(cat "$TMP/err")"

# SIGTERM in a batch: the files in progress finish, the summary, exit 143
mkdir -p "$TMP/many"
for n in 1 2 3 4 5 6; do cp "$CLIPS/librivox-0870.wav" "$TMP/many/c$n.wav"; done
"$SOTTO" transcribe -m "$TINY" -t 2 --device cpu --vad-model "$VAD" --output-dir "$TMP/many.out" "$TMP/many" \
    >/dev/null 2>"$TMP/term" &
job=$!
for i in $(seq 600); do grep -q "\[1/6\]" "$TMP/term" && break; sleep 0.1; done
kill -TERM "$job"
wait "$job"
rc=$?
[[ $rc == 143 ]] && grep -q "6 files: " "$TMP/term" && grep -q "terminated (SIGTERM)" "$TMP/term" && ok ||
    bad "SIGTERM in a batch: exit $rc, $(cat "$TMP/term")"

# SIGINT in one long input (40 readings of a clip, 284 s) once its first segments are out:
# exit 130, the message counts the segments stdout shows, no file; before the first: says so
# (the first awaited up to 120 s: a sanitized build on a loaded machine took over 30)
args=(-m "$TINY" -t 2 --device cpu --beam-size 1 -f srt -o "$TMP/int.srt")
sox $(for n in $(seq 40); do echo "$CLIPS/librivox-0870.wav"; done) "$TMP/long.wav"
"$SOTTO" transcribe "${args[@]}" "$TMP/long.wav" >"$TMP/int.out" 2>"$TMP/int.err" &
job=$!
for i in $(seq 2400); do grep -q -- "-->" "$TMP/int.out" && break; sleep 0.05; done
kill -INT "$job"
wait "$job"
rc=$?
n=$(grep -c -- "-->" "$TMP/int.out")
[[ $rc == 130 && $n -ge 1 && ! -e $TMP/int.srt ]] &&
    grep -Eq "interrupted; the $n segments? of the input in progress (was|were) decoded \(above\), no file was written" "$TMP/int.err" &&
    ok || bad "SIGINT after $n segments: exit $rc, $(tail -1 "$TMP/int.err")"
"$SOTTO" transcribe "${args[@]}" "$TMP/long.wav" >"$TMP/int.out" 2>"$TMP/int.err" &
job=$!
for i in $(seq 600); do grep -q "device cpu" "$TMP/int.err" && break; sleep 0.05; done
kill -INT "$job"
wait "$job"
rc=$?
if [[ $rc == 130 ]] && ! grep -q -- "-->" "$TMP/int.out"; then
    grep -q "interrupted before the first segment of the input in progress; no file was written" "$TMP/int.err" &&
        [[ ! -e $TMP/int.srt ]] && ok || bad "SIGINT before the first segment: $(tail -1 "$TMP/int.err")"
else
    echo "note: the first segment came before SIGINT reached the process: the early case is not checked"
fi

# ... with json on stdout, which is written whole at the input's end: nothing shown, and
# the message says why (it had pointed "above" at an empty stdout)
"$SOTTO" transcribe -m "$TINY" -t 2 --device cpu --beam-size 1 -f json "$TMP/long.wav" >"$TMP/int.out" \
    2>"$TMP/int.err" &
job=$!
sleep 4
kill -INT "$job"
wait "$job"
rc=$?
[[ $rc == 130 && ! -s $TMP/int.out ]] && ! grep -q "(above)" "$TMP/int.err" &&
    grep -Eq "interrupted( before the first segment|; [0-9]+ segments? of the input in progress (was|were) decoded, none written: json is written whole)" "$TMP/int.err" &&
    ok || bad "SIGINT with json on stdout: exit $rc, $(tail -1 "$TMP/int.err")"

# -l: checked once, before the model loads; openai's names taken
expect 1 "unknown language 'xx'" "$SOTTO" transcribe -m "$TINY" -t 2 -l xx -j 2 --output-dir "$TMP/l" "$TMP/many"
[[ $(grep -c "unknown language" "$TMP/err") == 1 ]] && ! grep -q "device" "$TMP/err" && ok ||
    bad "-l xx: $(cat "$TMP/err")"
expect 0 "stdout:young man" "$SOTTO" transcribe "${T[@]}" -l English "$clip"
expect 0 "stdout:young man" "$SOTTO" transcribe "${T[@]}" -l english "$clip"
# an English-only model transcribes English whatever -l says, with openai-whisper's warning (once)
expect 0 "warning: this model is English-only: it transcribes in English, not German" \
    "$SOTTO" transcribe "${T[@]}" -l German -j 2 --output-dir "$TMP/l" "$TMP/many"
[[ $(grep -c "English-only" "$TMP/err") == 1 ]] && ok || bad "-l German on tiny.en: $(cat "$TMP/err")"
expect 0 "stdout:young man" "$SOTTO" transcribe "${T[@]}" -l de "$clip"
expect 1 "English-only: it cannot translate" "$SOTTO" transcribe "${T[@]}" -l de --task translate "$clip"
expect 0 "stdout:young man" "$SOTTO" transcribe "${T[@]}" -l AUTO "$clip"
expect 1 "1..224" "$SOTTO" transcribe "${T[@]}" --sample-len 448 "$clip"

# the progress line on a terminal (audio done, share, speed, time left) is cleared before a
# segment (two windows: gaps)
sox -n -r 16000 -c 1 -b 16 "$TMP/sil.wav" trim 0 25
sox "$clip" "$TMP/sil.wav" "$CLIPS/librivox-0870.wav" "$TMP/sil.wav" "$clip" "$TMP/two.wav"
script -qec "$SOTTO transcribe -m $TINY -t 2 --device cpu --vad-model $VAD --beam-size 1 $TMP/two.wav" \
    "$TMP/typescript" >/dev/null 2>&1
python3 - "$TMP/typescript" <<'EOF' && ok || bad "progress runs into a segment: $(cat -A "$TMP/typescript" | head -c 600)"
import re, sys
data = open(sys.argv[1], "rb").read()
line = rb"s of audio \(\d+ %\), [0-9.]+x real time(, about \d+ (s|min) left)?"
sys.exit(0 if re.search(line, data) and not re.search(line + rb"[^\r\n\x1b,]", data) else 1)
EOF
# where stderr is a file: the same as lines of their own, every $SOTTO_PROGRESS_S seconds
SOTTO_PROGRESS_S=0 "$SOTTO" transcribe -m "$TINY" -t 2 --device cpu --beam-size 1 -f txt -o "$TMP/two.txt" \
    "$TMP/two.wav" >/dev/null 2>"$TMP/err"
grep -Eq "^sotto transcribe: $TMP/two.wav: [0-9]+ / [0-9]+ s of audio \([0-9]+ %\), [0-9.]+x real time" "$TMP/err" &&
    grep -Eq "^sotto transcribe: $TMP/two.wav: [0-9]+ s of audio read$" "$TMP/err" &&
    ! grep -q $'\r' "$TMP/err" && ok || bad "progress lines in a log: $(cat "$TMP/err")"
"$SOTTO" transcribe -m "$TINY" -t 2 --device cpu --beam-size 1 -f txt -o "$TMP/two.txt" "$TMP/two.wav" \
    >/dev/null 2>"$TMP/err" && ! grep -q "s of audio" "$TMP/err" && ok || bad "a short run logs no progress line"
SOTTO_PROGRESS_S=-1 "$SOTTO" transcribe -m "$TINY" -t 2 --device cpu --beam-size 1 -f txt -o "$TMP/two.txt" \
    "$TMP/two.wav" >/dev/null 2>"$TMP/err" && [[ $(grep -c "SOTTO_PROGRESS_S=-1 is no number" "$TMP/err") == 1 ]] &&
    ok || bad "a bad SOTTO_PROGRESS_S: $(cat "$TMP/err")"

# with --vad the terminal is told while the VAD reads the whole input first, and the line
# is gone before the first segment (a 2-hour file had shown nothing for its first seconds)
script -qec "$SOTTO transcribe -m $TINY -t 2 --device cpu --vad --vad-model $VAD --beam-size 1 $TMP/two.wav" \
    "$TMP/typescript_vad" >/dev/null 2>&1
python3 - "$TMP/typescript_vad" <<'EOF' && ok || bad "--vad on a terminal: $(cat -A "$TMP/typescript_vad" | head -c 600)"
import re, sys
data = open(sys.argv[1], "rb").read()
sys.exit(0 if re.search(rb"finding the speech first \(Silero VAD\)\r\x1b\[K\w", data) and b"s of speech" in data
         else 1)
EOF

# vad and bench read audio as transcribe does: any format (a build with FFmpeg), stdin
ffmpeg -nostdin -v error -y -i "$clip" -c:a libmp3lame "$TMP/clip.mp3"
"$SOTTO" vad --vad-model "$VAD" -t 1 "$clip" >"$TMP/vad.wav.txt" 2>/dev/null
mp3_code=0
"$SOTTO" --version | grep -q "FFmpeg reads" || mp3_code=1
expect $mp3_code "$([[ $mp3_code == 0 ]] && echo "stdout:$(head -1 "$TMP/vad.wav.txt" | cut -c1-3)" || echo libavformat-dev)" \
    "$SOTTO" vad --vad-model "$VAD" -t 1 "$TMP/clip.mp3"
"$SOTTO" vad --vad-model "$VAD" -t 1 - <"$clip" >"$TMP/vad.stdin.txt" 2>"$TMP/err"
cmp -s "$TMP/vad.wav.txt" "$TMP/vad.stdin.txt" && [[ -s $TMP/vad.wav.txt ]] && ok || bad "vad - (stdin): $(cat "$TMP/err")"
expect $mp3_code "$([[ $mp3_code == 0 ]] && echo 'stdout:"encode_ms"' || echo libavformat-dev)" \
    "$SOTTO" bench -m "$TINY" -t 2 --runs 1 --tokens 2 --audio "$TMP/clip.mp3"
expect 0 'stdout:"encode_ms"' sh -c '"$0" bench -m "$1" -t 2 --runs 1 --tokens 2 --audio - < "$2"' "$SOTTO" "$TINY" "$clip"

# --help lists every subcommand there is (main.c's table) and no other; 130 among the codes
"$SOTTO" --help >"$TMP/help"
listed=$(sed -n '/^commands:/,/^$/p' "$TMP/help" | awk 'NR > 1 && NF {print $1}' | sort)
exist=$(grep -o '{"[a-z]*", cmd_[a-z]*}' "$SRC/tools/sotto/main.c" | sed 's/{"\([a-z]*\)".*/\1/' | sort)
[[ -n $exist && $listed == "$exist" ]] && ok || bad "sotto --help lists [$listed], the commands are [$exist]"
for c in $exist; do "$SOTTO" "$c" --help >/dev/null 2>&1 || bad "sotto $c --help"; done
readme=$(sed -n '/^## The sotto tool/,/^Options take/p' "$SRC/README.md" | grep -o '^sotto [a-z]*' | awk '{print $2}' | sort)
[[ $readme == "$exist" ]] && ok || bad "README lists [$readme], the commands are [$exist]"
grep -q "130 interrupted" "$TMP/help" && ok || bad "sotto --help: no exit code 130"
grep -q "Not yet:.*the HTTP server" "$SRC/README.md" && bad "README says the server is not there" || ok

# what the tool does of its own accord is said: -o with an extension that names no format
# gets txt, a clip that ends where it starts is left out (openai's), a Whisper model given
# as the VAD is named for what it is not
expect 0 ".docx names no format of -f's, so it gets txt" "$SOTTO" transcribe -m "$TINY" --beam-size 1 \
    -o "$TMP/talk.docx" "$CLIPS/librivox-0870.wav"
grep -q "Dashwood" "$TMP/talk.docx" && ok || bad "-o talk.docx: no txt in it"
expect 0 "the clip 2,1 ends where it starts or before: nothing of it is transcribed" "$SOTTO" transcribe \
    -m "$TINY" --beam-size 1 --clip-timestamps 2,1 "$CLIPS/librivox-0870.wav"
expect 2 "not a Silero VAD model (a Whisper model goes to -m)" "$SOTTO" transcribe -m "$TINY" --vad \
    --vad-model "$TINY" "$CLIPS/librivox-0870.wav"

echo "transcribe io: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
