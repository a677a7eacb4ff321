#!/usr/bin/env python3
"""Builds the long test audio from the committed clips (tests/data/clips/*.wav, 16 kHz
mono PCM16), deterministically: every run writes byte-identical files. Python standard
library only (it runs at test time); the pauses, orders and noise come from a splitmix64
generator implemented here, seeded per file.

  python3 tests/data/make_long.py OUTDIR [NAME...] [--check]   (default: all but `hour`)

--check compares the sha256 of every WAV written with tests/data/long_audio.sha256 and
exits 1 on a difference (the goldens under tests/golden/transcribe were made from exactly
these bytes; their meta.audio_sha256 says so too).

NAME       length    content
long2      ~2.7 min  the 12 clips twice, each pass in its own shuffled order, 0.5-3 s of
                     digital silence before, between and after them
libri5     ~5 min    the same with the 5 LibriVox clips only (a real voice reading)
read5      ~5 min    a reading: the 12 clips over and over (a new shuffled order every
                     pass), 0.3-1.2 s pauses, until 5 min are reached
silence10  10 min    digital silence (all samples 0)
noise10    10 min    white noise, uniform integers in [-512, 511] (peak -36 dBFS, RMS about
                     -41 dBFS)
gaps10     10 min    groups of 2-4 clips separated by long stretches of silence (20-60 s)
                     or of the same white noise (15-45 s), padded with silence to 600 s
hour       60 min    the clips repeated with 0.3-1.0 s pauses, padded to 3600 s (for a
                     memory test; no goldens)

For each NAME it writes OUTDIR/NAME.wav (44-byte RIFF header, PCM16), OUTDIR/NAME.tsv
(the timeline: start_s, end_s, kind = speech|silence|noise, clip name) and, when the
file holds speech, OUTDIR/NAME.txt (the clips' transcripts from transcripts.tsv joined
by single spaces, in playing order: the reference text). Files are written to a temporary
name and renamed.
"""

import hashlib
import os
import struct
import sys
import wave

RATE = 16000
HERE = os.path.dirname(os.path.abspath(__file__))
CLIPS = os.path.join(HERE, "clips")
SHA_FILE = os.path.join(HERE, "long_audio.sha256")
M64 = (1 << 64) - 1


class SplitMix64:
    """splitmix64 (Steele, Lea, Flood 2014): state += golden gamma, then the finaliser."""

    def __init__(self, seed):
        self.s = seed & M64

    def next(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & M64
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)

    def below(self, n):
        return self.next() % n

    def ms(self, lo, hi):
        """A duration in [lo, hi] ms, in steps of 10 ms, as a sample count."""
        return (lo + 10 * self.below((hi - lo) // 10 + 1)) * RATE // 1000

    def shuffled(self, items):
        items = list(items)
        for i in range(len(items) - 1, 0, -1):  # Fisher-Yates
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]
        return items


def white_noise(rng, n):
    """N samples (PCM16 little-endian bytes) of uniform noise in [-512, 511]: each
    splitmix64 output gives four samples from its 16-bit lanes (low 10 bits of each)."""
    out = bytearray(2 * n)
    pack = struct.Struct("<4h").pack_into
    full = n - n % 4
    for k in range(0, full, 4):
        z = rng.next()
        pack(out, 2 * k, (z & 0x3FF) - 512, (z >> 16 & 0x3FF) - 512,
             (z >> 32 & 0x3FF) - 512, (z >> 48 & 0x3FF) - 512)
    if full < n:
        z = rng.next()
        for k in range(full, n):
            struct.pack_into("<h", out, 2 * k, (z >> (16 * (k - full)) & 0x3FF) - 512)
    return bytes(out)


def load_clips():
    clips, texts = {}, {}
    for name in sorted(os.listdir(CLIPS)):
        if not name.endswith(".wav"):
            continue
        with wave.open(os.path.join(CLIPS, name), "rb") as w:
            if (w.getnchannels(), w.getsampwidth(), w.getframerate()) != (1, 2, RATE):
                sys.exit(f"make_long.py: {name}: need 16 kHz mono PCM16")
            clips[name[:-4]] = w.readframes(w.getnframes())
    with open(os.path.join(CLIPS, "transcripts.tsv"), encoding="utf-8") as f:
        for line in f:
            if line.strip():
                k, v = line.rstrip("\n").split("\t", 1)
                texts[k] = v
    missing = sorted(set(clips) - set(texts))
    if missing:
        sys.exit(f"make_long.py: no transcript for {missing}")
    return clips, texts


class Timeline:
    def __init__(self, clips):
        self.clips = clips
        self.parts = []     # PCM16 bytes
        self.rows = []      # (start sample, end sample, kind, clip)
        self.n = 0          # samples so far

    def _add(self, pcm, kind, clip=""):
        k = len(pcm) // 2
        if k:
            self.parts.append(pcm)
            if kind != "speech" and self.rows and self.rows[-1][2] == kind:
                self.rows[-1] = (self.rows[-1][0], self.n + k, kind, clip)  # one stretch
            else:
                self.rows.append((self.n, self.n + k, kind, clip))
            self.n += k

    def speech(self, name):
        self._add(self.clips[name], "speech", name)

    def silence(self, n):
        self._add(bytes(2 * n), "silence")

    def noise(self, rng, n):
        self._add(white_noise(rng, n), "noise")

    def speech_names(self):
        return [c for _, _, kind, c in self.rows if kind == "speech"]


def build_long2(tl, rng):
    tl.silence(rng.ms(500, 3000))
    for _ in range(2):
        for name in rng.shuffled(sorted(tl.clips)):
            tl.speech(name)
            tl.silence(rng.ms(500, 3000))


def build_read5(tl, rng):
    while True:
        for name in rng.shuffled(sorted(tl.clips)):
            if tl.n >= 300 * RATE:
                return
            tl.speech(name)
            tl.silence(rng.ms(300, 1200))


def build_libri5(tl, rng):
    """The reading the long-form issue describes: the LibriVox clips only, over and over."""
    libri = sorted(c for c in tl.clips if c.startswith("librivox-"))
    while True:
        for name in rng.shuffled(libri):
            if tl.n >= 300 * RATE:
                return
            tl.speech(name)
            tl.silence(rng.ms(300, 1200))


def build_silence10(tl, rng):
    tl.silence(600 * RATE)


def build_noise10(tl, rng):
    tl.noise(rng, 600 * RATE)


def build_gaps10(tl, rng):
    total, order, i, gap = 600 * RATE, [], 0, 0
    tl.silence(rng.ms(1000, 5000))
    while True:
        group = []
        for _ in range(2 + rng.below(3)):
            if i == len(order):
                order, i = rng.shuffled(sorted(tl.clips)), 0
            group.append(order[i])
            i += 1
        need = sum(len(tl.clips[c]) // 2 for c in group) + len(group) * RATE
        if tl.n + need > total - 15 * RATE:
            break
        for k, name in enumerate(group):
            if k:
                tl.silence(rng.ms(500, 1500))
            tl.speech(name)
        # the long gaps alternate silence and noise, each with a short silent margin
        tl.silence(rng.ms(300, 1000))
        if gap % 2 == 0:
            tl.silence(min(rng.ms(20000, 60000), max(total - tl.n, 0)))
        else:
            tl.noise(rng, min(rng.ms(15000, 45000), max(total - tl.n, 0)))
            tl.silence(min(rng.ms(300, 1000), max(total - tl.n, 0)))
        gap += 1
        if tl.n >= total - 15 * RATE:
            break
    tl.silence(total - tl.n)


def build_hour(tl, rng):
    total = 3600 * RATE
    while True:
        for name in rng.shuffled(sorted(tl.clips)):
            pause = rng.ms(300, 1000)
            if tl.n + len(tl.clips[name]) // 2 + pause > total:
                tl.silence(total - tl.n)
                return
            tl.speech(name)
            tl.silence(pause)


BUILDERS = {  # name: (builder, seed)
    "long2": (build_long2, 2),
    "read5": (build_read5, 5),
    "libri5": (build_libri5, 55),
    "silence10": (build_silence10, 10),
    "noise10": (build_noise10, 11),
    "gaps10": (build_gaps10, 12),
    "hour": (build_hour, 60),
}
DEFAULT = ["long2", "read5", "libri5", "silence10", "noise10", "gaps10"]


def write_atomic(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def wav_bytes(parts, n):
    header = struct.pack("<4sI4s4sIHHIIHH4sI", b"RIFF", 36 + 2 * n, b"WAVE", b"fmt ", 16, 1, 1,
                         RATE, 2 * RATE, 2, 16, b"data", 2 * n)
    return b"".join([header] + parts)


def build(name, clips, texts, outdir):
    builder, seed = BUILDERS[name]
    tl = Timeline(clips)
    builder(tl, SplitMix64(seed))
    base = os.path.join(outdir, name)
    data = wav_bytes(tl.parts, tl.n)
    write_atomic(base + ".wav", data)
    rows = "".join(f"{a / RATE:.4f}\t{b / RATE:.4f}\t{kind}\t{clip}\n" for a, b, kind, clip in tl.rows)
    write_atomic(base + ".tsv", ("start_s\tend_s\tkind\tclip\n" + rows).encode())
    spoken = tl.speech_names()
    if spoken:
        write_atomic(base + ".txt", (" ".join(texts[c] for c in spoken) + "\n").encode("utf-8"))
    return tl.n / RATE, len(spoken), hashlib.sha256(data).hexdigest()


def read_sums():
    sums = {}
    with open(SHA_FILE) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                digest, name = line.split()
                sums[name] = digest
    return sums


def main(argv):
    check = "--check" in argv
    argv = [a for a in argv if a != "--check"]
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) >= 2 else 1
    outdir, names = argv[1], argv[2:] or DEFAULT
    unknown = [n for n in names if n not in BUILDERS]
    if unknown:
        print(f"make_long.py: unknown name(s) {unknown}; known: {list(BUILDERS)}", file=sys.stderr)
        return 1
    os.makedirs(outdir, exist_ok=True)
    clips, texts = load_clips()
    sums = read_sums() if check else {}
    bad = 0
    for name in names:
        seconds, n_speech, digest = build(name, clips, texts, outdir)
        verdict = ""
        if check:
            want = sums.get(name + ".wav")
            verdict = "  sha256 ok" if digest == want else f"  sha256 {digest} != {want}: FAIL"
            bad += digest != want
        print(f"make_long.py: {outdir}/{name}.wav {seconds:.2f} s, {n_speech} clips{verdict}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
