#!/usr/bin/env python3
"""resample_error.py — sotto's resampler (libswresample with its defaults, through the
FFmpeg path) on pure sines at 44.1 kHz and 8 kHz, against scipy.signal.resample_poly
(polyphase, with a long Kaiser beta 14 low-pass) and against the exact sine at 16 kHz. The inputs are
written as 16-bit PCM WAV (swr resamples in int16, as for every 16-bit file) and as
32-bit float WAV (swr resamples in float); the output is always rounded to 16 bits.

Errors are measured away from the edges (0.1 s cut at each end), in units of full scale
(1.0): max |sotto - reference| and the signal-to-error ratio in dB. The test asserts, for
every case, a max error <= MAX_ABS (default 2e-4, about 6.5 steps of 16 bits) and a ratio
>= MIN_DB (default 75 dB) against both references, and the output length (ceil of the
input's at 16 kHz, within a sample); docs/BENCHMARKS.md records the figures.

usage: resample_error.py AUDIO_DUMP TMP_DIR [MAX_ABS MIN_DB]
"""
import os
import struct
import subprocess
import sys

import numpy as np
from scipy.signal import firwin, resample_poly

CASES = [  # rate, sine Hz, up, down
    (44100, 1000.0, 160, 441),
    (44100, 6000.0, 160, 441),
    (8000, 1000.0, 2, 1),
    (8000, 3000.0, 2, 1),
]
AMP, SECONDS, EDGE = 0.5, 2.0, 0.1
# the reference's low-pass: scipy's default (20 max(up, down) + 1 taps, Kaiser beta 5)
# has errors of its own near -55 dB, larger than swr's; this one (200 max(up, down) + 1
# taps, Kaiser beta 14: ~140 dB stop band, flat to within 0.1 of the lower Nyquist) is
# exact to the 16-bit output's rounding on these sines
def poly_filter(up, down):
    m = max(up, down)
    return firwin(200 * m + 1, 1.0 / m, window=("kaiser", 14.0))




def write_wav(path, rate, x, float32):
    data = x.astype("<f4").tobytes() if float32 else np.round(x * 32767).astype("<i2").tobytes()
    fmt, bits = (3, 32) if float32 else (1, 16)
    hdr = b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVEfmt " + struct.pack(
        "<IHHIIHH", 16, fmt, 1, rate, rate * bits // 8, bits // 8, bits) + b"data" + struct.pack("<I", len(data))
    open(path, "wb").write(hdr + data)


def measure(got, ref):
    e = int(EDGE * 16000)
    n = min(len(got), len(ref))
    g, r = got[e:n - e].astype(np.float64), ref[e:n - e].astype(np.float64)
    err = g - r
    return float(np.max(np.abs(err))), float(10 * np.log10(np.sum(r * r) / max(np.sum(err * err), 1e-30)))


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    dump, tmp = sys.argv[1:3]
    max_abs = float(sys.argv[3]) if len(sys.argv) > 3 else 2e-4
    min_db = float(sys.argv[4]) if len(sys.argv) > 4 else 75.0
    os.makedirs(tmp, exist_ok=True)
    failed = 0
    print(f"{'input':22} {'vs resample_poly':>24} {'vs exact sine':>24}   (max |err|, SER dB)")
    for rate, hz, up, down in CASES:
        t = np.arange(int(SECONDS * rate)) / rate
        x = AMP * np.sin(2 * np.pi * hz * t)
        for float32 in (False, True):
            name = f"{rate} Hz {hz:.0f} Hz {'f32' if float32 else 's16'}"
            wav, raw = f"{tmp}/sine.wav", f"{tmp}/sine.f32"
            write_wav(wav, rate, x, float32)
            subprocess.run([dump, wav, raw, "--f32"], check=True, capture_output=True)
            got = np.fromfile(raw, dtype="<f4")
            xin = x.astype(np.float32) if float32 else np.round(x * 32767) / 32768.0
            poly = resample_poly(xin.astype(np.float64), up, down, window=poly_filter(up, down))
            exact = AMP * (32767 / 32768 if not float32 else 1.0) * np.sin(2 * np.pi * hz * np.arange(len(got)) / 16000)
            want_n = int(np.ceil(len(x) * 16000 / rate))
            a1, d1 = measure(got, poly)
            a2, d2 = measure(got, exact)
            ok = abs(len(got) - want_n) <= 1 and max(a1, a2) <= max_abs and min(d1, d2) >= min_db
            failed += not ok
            print(f"{name:22} {a1:12.2e} {d1:8.1f} dB {a2:12.2e} {d2:8.1f} dB   {len(got)} samples "
                  f"{'ok' if ok else 'FAIL'}")
    print(f"bounds: max |err| <= {max_abs:g}, SER >= {min_db:g} dB")
    print(f"{2 * len(CASES) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
