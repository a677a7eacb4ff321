#!/usr/bin/env python3
"""Writes whisper.cpp's legacy ggml .bin (the layout of whisper.cpp's
models/convert-pt-to-ggml.py, quantised as whisper.cpp's quantize tool does) from a
CTranslate2 Whisper directory, with the standard library only, so that whisper.cpp runs
on exactly the weights sotto and faster-whisper use, and so that sotto's ggml loader is
tested on files of every type it reads.

usage: python3 bench/ct2_to_ggml.py [--type T] CT2_DIR OUT.bin
       python3 bench/ct2_to_ggml.py --empty N_VOCAB N_STATE N_HEAD N_LAYER OUT.bin

--type f32|f16|q8_0|q4_0|q4_1|q5_0|q5_1 (default f16). f16: as convert-pt-to-ggml.py,
1-D tensors, the conv biases (reshaped to [n, 1]) and the positional embeddings f32, the
rest f16. The quantised types then turn every other 2-D tensor (the linear layers and
the token embedding) into blocks of 32 values (ggml-common.h layouts), hparam ftype
2000 + ggml's ftype id (quantization version 2); the 3-D conv kernels stay f16. q8_0
is computed exactly as sotto's sotto__quantize (f32 arithmetic: d = max|x| / 127,
q = round-half-even(x * (1 / d))), so its blocks equal those of
`sotto convert --type q8_0`; the 4- and 5-bit types follow ggml's reference quantisers
(q4_0: d = m / -8 for the value m of largest magnitude, q = min(15, trunc(x / d + 8.5));
q4_1: d = (max - min) / 15, q = min(15, trunc((x - min) / d + 0.5)); q5_*: the same
with 16 / 31 levels). f32: everything f32.

--empty writes the header, mel filters and vocabulary of a model with the given
dimensions but no tensors: whisper.cpp then loads it as "empty model for testing"
(weights left as allocated). Used only to time base/small-sized graphs, whose cost
does not depend on the weight values.

Layout: magic 0x67676d6c, 11 int32 hparams, mel filters (int32 n_mel, int32 201, f32
[n_mel*201], Slaney as in librosa / openai mel_filters.npz), vocabulary (int32 count, then
int32 len + bytes of each base token, i.e. the ids before <|endoftext|>), then tensors
to EOF: int32 n_dims, int32 name_len, int32 ttype, dims fastest first, name, data.
"""
from array import array
import json
import math
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from ct2_to_hf import read_ct2  # noqa: E402

F32, F16 = 0, 4  # CTranslate2 dtype codes

# ggml tensor type id, hparam ftype (quantization version 2 for the block types)
TYPES = {"f32": (0, 0), "f16": (1, 1), "q4_0": (2, 2002), "q4_1": (3, 2003), "q5_0": (6, 2008),
         "q5_1": (7, 2009), "q8_0": (8, 2007)}
CHUNK = 1 << 20  # values quantised per step (keeps the lists small)


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def q8_0(vals):
    """sotto__quantize's q8_0, bit for bit: per 32 values, in f32, amax = max|x|,
    d = amax / 127, id = 1 / d (0 when d is 0), q = lrintf(x * id); d stored as f16."""
    n_blocks = len(vals) // 32
    ids, heads = [], []
    for b in range(n_blocks):
        amax = max(map(abs, vals[32 * b:32 * b + 32]))
        d = f32(amax / 127.0)
        ids.append(f32(1.0 / d) if d > 0 else 0.0)
        heads.append(struct.pack("<e", d))
    prods = array("f", [v * ids[i >> 5] for i, v in enumerate(vals)])
    qs = array("b", [round(p) for p in prods]).tobytes()
    return b"".join(heads[b] + qs[32 * b:32 * b + 32] for b in range(n_blocks))


def q_low(vals, kind):
    """ggml's reference 4/5-bit quantisers (q4_0, q4_1, q5_0, q5_1) on blocks of 32."""
    five, has_min = kind in ("q5_0", "q5_1"), kind in ("q4_1", "q5_1")
    top = 31 if five else 15
    out = bytearray()
    for b in range(0, len(vals), 32):
        x = vals[b:b + 32]
        if has_min:
            lo, hi = min(x), max(x)
            d = (hi - lo) / top
            inv = 1.0 / d if d else 0.0
            q = [min(top, int((v - lo) * inv + 0.5)) for v in x]
            head = struct.pack("<ee", d, lo)
        else:
            m = max(x, key=abs)
            d = m / -(16 if five else 8)
            inv = 1.0 / d if d else 0.0
            q = [min(top, int(v * inv + (16.5 if five else 8.5))) for v in x]
            head = struct.pack("<e", d)
        if five:
            qh = 0
            for j in range(16):
                qh |= (q[j] >> 4 & 1) << j | (q[j + 16] >> 4 & 1) << (j + 16)
            head += struct.pack("<I", qh)
        out += head + bytes((q[j] & 15) | (q[j + 16] & 15) << 4 for j in range(16))
    return bytes(out)


def quantize(vals, kind):
    out = []
    for o in range(0, len(vals), CHUNK):
        part = vals[o:o + CHUNK]
        out.append(q8_0(part) if kind == "q8_0" else q_low(part, kind))
    return b"".join(out)


def mel_filters(n_mels, sr=16000, n_fft=400):
    """librosa.filters.mel(sr, n_fft, n_mels, fmin 0, fmax sr/2, norm='slaney')."""
    f_sp, min_log_hz = 200.0 / 3, 1000.0
    min_log_mel, logstep = min_log_hz / f_sp, math.log(6.4) / 27.0
    hz2mel = lambda f: f / f_sp if f < min_log_hz else min_log_mel + math.log(f / min_log_hz) / logstep
    mel2hz = lambda m: f_sp * m if m < min_log_mel else min_log_hz * math.exp(logstep * (m - min_log_mel))
    n_bins = n_fft // 2 + 1
    lo, hi = hz2mel(0.0), hz2mel(sr / 2.0)
    mel_f = [mel2hz(lo + (hi - lo) * i / (n_mels + 1)) for i in range(n_mels + 2)]
    out = []
    for i in range(n_mels):
        enorm = 2.0 / (mel_f[i + 2] - mel_f[i])
        for k in range(n_bins):
            f = sr / 2 * k / (n_bins - 1)
            lower = (f - mel_f[i]) / (mel_f[i + 1] - mel_f[i])
            upper = (mel_f[i + 2] - f) / (mel_f[i + 2] - mel_f[i + 1])
            out.append(max(0.0, min(lower, upper)) * enorm)
    return n_bins, out


def byte_decoder():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def base_tokens(ct2_dir):
    dec = byte_decoder()
    toks = []
    path = os.path.join(ct2_dir, "vocabulary.txt")
    if os.path.exists(path):
        lines = open(path, encoding="utf-8").read().split("\n")
    else:
        lines = json.load(open(os.path.join(ct2_dir, "vocabulary.json"), encoding="utf-8"))
    for line in lines:
        if line == "<|endoftext|>":
            break
        toks.append(bytes(dec[c] for c in line))
    return toks


def write_header(f, n_vocab, n_state, n_head, n_layer, n_mels=80, n_audio_ctx=1500, n_text_ctx=448,
                 tokens=None, ftype=1):
    f.write(struct.pack("<I", 0x67676D6C))
    f.write(struct.pack("<11i", n_vocab, n_audio_ctx, n_state, n_head, n_layer, n_text_ctx,
                        n_state, n_head, n_layer, n_mels, ftype))
    n_fft, filt = mel_filters(n_mels)
    f.write(struct.pack("<ii", n_mels, n_fft))
    f.write(struct.pack("<%df" % len(filt), *filt))
    tokens = tokens or []
    f.write(struct.pack("<i", len(tokens)))
    for t in tokens:
        f.write(struct.pack("<i", len(t)))
        f.write(t)


def convert(ct2_dir, out, kind="f16"):
    v = read_ct2(os.path.join(ct2_dir, "model.bin"))
    d = v["encoder/conv1/weight"][0][0]
    n_mels = v["encoder/conv1/weight"][0][1]
    n_vocab = v["decoder/embeddings/weight"][0][0]
    n_text_ctx = v["decoder/position_encodings/encodings"][0][0]
    n_audio_ctx = v["encoder/position_encodings/encodings"][0][0]
    nl = lambda s: sum(1 for k in v if k.startswith(s + "/layer_") and k.endswith("/self_attention/layer_norm/gamma"))
    n_enc, n_dec = nl("encoder"), nl("decoder")
    assert n_enc == n_dec, "whisper.cpp wants as many encoder as decoder layers"
    heads = lambda s: struct.unpack("<h", v[f"{s}/num_heads"][2])[0] if f"{s}/num_heads" in v else d // 64
    tokens = base_tokens(ct2_dir)

    def tensor(f, name, src, row0=None, rows=None, shape=None, f32=False):
        dims, dtype, raw = v[src]
        if dtype not in (F32, F16):
            raise SystemExit(f"{src}: dtype {dtype} not supported (f16/f32 CTranslate2 only)")
        item = 4 if dtype == F32 else 2
        if row0 is not None:
            cols = 1
            for x in dims[1:]:
                cols *= x
            raw = raw[row0 * cols * item:(row0 + rows) * cols * item]
            dims = [rows] + dims[1:]
        dims = shape or dims
        n = 1
        for x in dims:
            n *= x
        want_f32 = f32 or len(dims) < 2 or kind == "f32"
        quant = kind not in ("f32", "f16") and len(dims) == 2 and not f32
        if quant:
            raw = quantize(struct.unpack("<%d%s" % (n, "f" if dtype == F32 else "e"), raw), kind)
        elif want_f32 and dtype == F16:
            raw = struct.pack("<%df" % n, *struct.unpack("<%de" % n, raw))
        elif not want_f32 and dtype == F32:
            raw = struct.pack("<%de" % n, *struct.unpack("<%df" % n, raw))
        nb = name.encode()
        ttype = TYPES[kind][0] if quant else 0 if want_f32 else 1
        f.write(struct.pack("<iii", len(dims), len(nb), ttype))
        f.write(struct.pack("<%di" % len(dims), *reversed(dims)))
        f.write(nb)
        f.write(raw)

    with open(out, "wb") as f:
        write_header(f, n_vocab, d, heads("encoder"), n_enc, n_mels, n_audio_ctx, n_text_ctx, tokens,
                     TYPES[kind][1])
        for c in ("conv1", "conv2"):
            tensor(f, f"encoder.{c}.weight", f"encoder/{c}/weight")
            tensor(f, f"encoder.{c}.bias", f"encoder/{c}/bias", shape=[d, 1], f32=True)
        tensor(f, "encoder.positional_embedding", "encoder/position_encodings/encodings", f32=True)

        def lin(dst, src, bias=True, row0=None, rows=None):
            tensor(f, dst + ".weight", src + "/weight", row0, rows)
            if bias:
                tensor(f, dst + ".bias", src + "/bias", row0, rows)

        def ln(dst, src):
            tensor(f, dst + ".weight", src + "/gamma")
            tensor(f, dst + ".bias", src + "/beta")

        for stack, n in (("encoder", n_enc), ("decoder", n_dec)):
            for i in range(n):
                s, t = f"{stack}/layer_{i}", f"{stack}.blocks.{i}"
                ln(t + ".attn_ln", s + "/self_attention/layer_norm")
                qkv = s + "/self_attention/linear_0"
                lin(t + ".attn.query", qkv, True, 0, d)
                lin(t + ".attn.key", qkv, False, d, d)
                lin(t + ".attn.value", qkv, True, 2 * d, d)
                lin(t + ".attn.out", s + "/self_attention/linear_1")
                if stack == "decoder":
                    ln(t + ".cross_attn_ln", s + "/attention/layer_norm")
                    lin(t + ".cross_attn.query", s + "/attention/linear_0")
                    kv = s + "/attention/linear_1"
                    lin(t + ".cross_attn.key", kv, False, 0, d)
                    lin(t + ".cross_attn.value", kv, True, d, d)
                    lin(t + ".cross_attn.out", s + "/attention/linear_2")
                ln(t + ".mlp_ln", s + "/ffn/layer_norm")
                lin(t + ".mlp.0", s + "/ffn/linear_0")
                lin(t + ".mlp.2", s + "/ffn/linear_1")
        ln("encoder.ln_post", "encoder/layer_norm")
        tensor(f, "decoder.token_embedding.weight", "decoder/embeddings/weight")
        tensor(f, "decoder.positional_embedding", "decoder/position_encodings/encodings", f32=True)
        ln("decoder.ln", "decoder/layer_norm")


if __name__ == "__main__":
    a = sys.argv[1:]
    kind = "f16"
    if len(a) >= 2 and a[0] == "--type":
        kind = a[1]
        a = a[2:]
        if kind not in TYPES:
            raise SystemExit(f"--type {kind}: one of {', '.join(TYPES)}")
    if len(a) == 6 and a[0] == "--empty":
        with open(a[5], "wb") as fo:
            write_header(fo, *map(int, a[1:5]))
    elif len(a) == 2:
        tmp = a[1] + ".tmp"
        convert(a[0], tmp, kind)
        os.replace(tmp, a[1])
    else:
        raise SystemExit(__doc__)
