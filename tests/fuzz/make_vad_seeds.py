#!/usr/bin/env python3
"""make_vad_seeds.py — writes the seed corpus of fuzz_vad (tests/fuzz/corpus/fuzz_vad/):
Silero VAD GGUF files as scripts/silero_vad_to_gguf.py writes them, in fuzz_vad's input
form (uint32 LE count of zero bytes to append, then the file's first bytes): a valid model
with zero weights, one with pseudo-random weights in its first 4 kB of data, a GGUF v2
variant, one cut inside the tensor data and one cut inside the tensor infos.
Deterministic; Python 3 standard library only.

usage: python3 tests/fuzz/make_vad_seeds.py [--out DIR]   (default: tests/fuzz/corpus/fuzz_vad)
"""
import argparse
import os
import random
import struct
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import silero_vad_to_gguf as conv  # noqa: E402


def model_bytes():
    g = {}
    for name, shape in conv.TENSORS:
        n = 1
        for d in shape:
            n *= d
        g[name] = (shape, b"\0" * (4 * n))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "vad.gguf")
        conv.write_gguf(path, g, "0" * 64)
        with open(path, "rb") as f:
            return f.read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(HERE, "corpus", "fuzz_vad"))
    args = ap.parse_args()
    b = model_bytes()
    data_len = 0  # the converter pads every tensor to the alignment
    for _, shape in conv.TENSORS:
        n = 4
        for d in shape:
            n *= d
        data_len += n + (-n % conv.ALIGN)
    head_len = len(b) - data_len
    head = b[:head_len]
    assert b[head_len:] == b"\0" * data_len
    rng = random.Random(7)
    weights = b"".join(struct.pack("<f", rng.uniform(-0.5, 0.5)) for _ in range(1024))
    seeds = {
        "valid-zero": struct.pack("<I", data_len) + head,
        "valid-weights": struct.pack("<I", data_len - len(weights)) + head + weights,
        "valid-v2": struct.pack("<I", data_len) + head[:4] + struct.pack("<I", 2) + head[8:],
        "cut-data": struct.pack("<I", data_len // 2) + head,
        "cut-infos": struct.pack("<I", 0) + head[:head_len * 2 // 3],
    }
    os.makedirs(args.out, exist_ok=True)
    for name, blob in seeds.items():
        with open(os.path.join(args.out, name), "wb") as f:
            f.write(blob)
        print(name, len(blob))


if __name__ == "__main__":
    main()
