#!/bin/bash
# ffmpeg_equal.sh — sotto's audio input against openai-whisper's load_audio: for every
# file made by make_inputs.sh (14 formats x 5 clips), the samples sotto_audio_read gives
# (audio_dump, in odd-sized chunks) must equal, bit for bit, what
#   ffmpeg -nostdin -threads 0 -i FILE -f s16le -ac 1 -acodec pcm_s16le -ar 16000 -
# writes (load_audio then divides by 32768, as sotto does). The same through a pipe on
# standard input (against that command reading the same pipe: `-i -`) for the formats
# FFmpeg can read from a pipe (not MP4/M4A, whose index comes last). Prints one line per
# format; any difference fails.
# usage: ffmpeg_equal.sh AUDIO_DUMP INPUTS_DIR TMP_DIR
set -u
DUMP=$1 IN=$2 TMP=$3
mkdir -p "$TMP"
pass=0 fail=0
for dir in "$IN"/*/; do
    fmt=$(basename "$dir")
    n=0 bad=0 samples=0
    for f in "$dir"*; do
        n=$((n + 1))
        ffmpeg -nostdin -threads 0 -i "$f" -f s16le -ac 1 -acodec pcm_s16le -ar 16000 - 2>/dev/null >"$TMP/ref.s16"
        if ! "$DUMP" "$f" "$TMP/got.s16" --s16 --chunk 1237 >"$TMP/log" 2>&1; then
            bad=$((bad + 1)); echo "FAIL $f: audio_dump: $(cat "$TMP/log")"; continue
        fi
        if ! cmp -s "$TMP/ref.s16" "$TMP/got.s16"; then
            bad=$((bad + 1))
            echo "FAIL $f: differs from the ffmpeg command ($(stat -c %s "$TMP/ref.s16") vs $(stat -c %s "$TMP/got.s16") bytes; first difference: $(cmp "$TMP/ref.s16" "$TMP/got.s16" 2>&1 | head -1))"
            continue
        fi
        samples=$((samples + $(stat -c %s "$TMP/ref.s16") / 2))
        case $fmt in m4a|mp4video) ;; *)
            # the reference reads the same pipe: without seeking to the end, FFmpeg cannot
            # trim an MP3's encoder padding there, so a pipe may end a few samples later
            cat "$f" | ffmpeg -nostdin -threads 0 -i - -f s16le -ac 1 -acodec pcm_s16le -ar 16000 - 2>/dev/null \
                >"$TMP/ref_pipe.s16"
            if ! cat "$f" | "$DUMP" - "$TMP/pipe.s16" --s16 --chunk 4096 >"$TMP/log" 2>&1 ||
                ! cmp -s "$TMP/ref_pipe.s16" "$TMP/pipe.s16"; then
                bad=$((bad + 1)); echo "FAIL $f through a pipe: $(cat "$TMP/log")"
            fi ;;
        esac
    done
    if [[ $n -gt 0 && $bad -eq 0 ]]; then
        pass=$((pass + 1)); echo "ok   $fmt: $n files, $samples samples identical to the ffmpeg command"
    else
        fail=$((fail + 1))
    fi
done
echo "$pass passed, $fail failed"
[[ $fail -eq 0 && $pass -gt 0 ]]
