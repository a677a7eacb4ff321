#!/usr/bin/env python3
"""golden_batch_chunks.py — the chunk boundaries of faster-whisper 1.2.1's
BatchedInferencePipeline, for tests/test_batch.c: its get_speech_timestamps with the
pipeline's VadOptions(max_speech_duration_s=chunk_length (30), min_silence_duration_ms=160)
(faster_whisper/vad.py, its own Silero VAD on onnxruntime), then collect_chunks(audio,
speech, max_duration=30): the speech intervals merged in order into chunks of at most
30 s, each chunk the concatenation of its intervals' samples.

usage: .cache/fw-venv/bin/python scripts/golden_batch_chunks.py [--out tests/golden/batch]
(.cache/fw-venv: a venv with faster-whisper==1.2.1, as scripts/setup.sh installs it for
the benchmarks; docs/GOLDEN.md)

Signals: tests/data/make_long.py's read5 (a 5-minute reading, short pauses: chunks of many
intervals) and long2 (clips between 0.5-3 s silences), and every committed clip
tests/data/clips/*.wav (one short chunk each), int16 / 32768 as the WAV holds them.

Writes OUT/NAME.chunks: a comment line, then `speech START END` per interval (samples of
the file) and `chunk OFFSET N_SAMPLES` per chunk (collect_chunks' metadata in samples:
the speech before it, its length; its audio's length is checked to equal N_SAMPLES).
"""
import argparse
import os
import subprocess
import sys
import tempfile
import wave

import numpy as np
import faster_whisper
from faster_whisper.vad import VadOptions, collect_chunks, get_speech_timestamps

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RATE = 16000
CHUNK_LENGTH = 30  # the pipeline's default: the feature extractor's chunk_length


def read_wav(path):
    with wave.open(path, "rb") as w:
        assert w.getframerate() == RATE and w.getnchannels() == 1 and w.getsampwidth() == 2, path
        x = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
    return x.astype(np.float32) / 32768.0


def chunks_of(audio):
    """The pipeline's own steps (BatchedInferencePipeline.transcribe, vad_parameters None)."""
    opts = VadOptions(max_speech_duration_s=CHUNK_LENGTH, min_silence_duration_ms=160)
    speech = get_speech_timestamps(audio, opts)
    audio_chunks, meta = collect_chunks(audio, speech, max_duration=CHUNK_LENGTH)
    rows = []
    for s in speech:
        rows.append("speech %d %d" % (s["start"], s["end"]))
    if speech:  # no speech: collect_chunks gives one empty chunk, which the pipeline never decodes
        for a, m in zip(audio_chunks, meta):
            offset, n = round(m["offset"] * RATE), round(m["duration"] * RATE)
            assert len(a) == n, (len(a), n)
            rows.append("chunk %d %d" % (offset, n))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "golden", "batch"))
    args = ap.parse_args()
    assert faster_whisper.__version__ == "1.2.1", faster_whisper.__version__
    os.makedirs(args.out, exist_ok=True)
    signals = []
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "data", "make_long.py"), tmp, "read5", "long2",
                        "--check"], check=True, stdout=subprocess.DEVNULL)
        for name in ("read5", "long2"):
            signals.append((name, read_wav(os.path.join(tmp, name + ".wav"))))
    clips = os.path.join(ROOT, "tests", "data", "clips")
    for f in sorted(os.listdir(clips)):
        if f.endswith(".wav"):
            signals.append((f[:-4], read_wav(os.path.join(clips, f))))
    for name, audio in signals:
        rows = chunks_of(audio)
        with open(os.path.join(args.out, name + ".chunks"), "w") as f:
            f.write("# faster-whisper %s BatchedInferencePipeline chunks of %s (%d samples)\n"
                    % (faster_whisper.__version__, name, len(audio)))
            f.write("\n".join(rows) + "\n")
        print("%s: %d rows" % (name, len(rows)))


if __name__ == "__main__":
    main()
