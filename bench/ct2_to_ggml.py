#!/usr/bin/env python3
"""Writes whisper.cpp's legacy ggml .bin (f16, the layout of whisper.cpp's
models/convert-pt-to-ggml.py) from a CTranslate2 Whisper directory, with the standard
library only, so that whisper.cpp runs on exactly the weights sotto and faster-whisper use.

usage: python3 bench/ct2_to_ggml.py CT2_DIR OUT.bin
       python3 bench/ct2_to_ggml.py --empty N_VOCAB N_STATE N_HEAD N_LAYER OUT.bin

--empty writes the header, mel filters and vocabulary of a model with the given
dimensions but no tensors: whisper.cpp then loads it as "empty model for testing"
(weights left as allocated). Used only to time base/small-sized graphs, whose cost
does not depend on the weight values.

Layout: magic 0x67676d6c, 11 int32 hparams (ftype 1 = mostly f16), mel filters (int32
n_mel, int32 201, f32 [n_mel*201], Slaney as in librosa / openai mel_filters.npz),
vocabulary (int32 count, then int32 len + bytes of each base token, i.e. the ids before
<|endoftext|>), then tensors to EOF: int32 n_dims, int32 name_len, int32 ttype,
dims fastest first, name, data. As in convert-pt-to-ggml.py: 1-D tensors, the conv
biases (reshaped to [n, 1]) and the positional embeddings are f32, the rest f16.
"""
import json
import math
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from ct2_to_hf import read_ct2  # noqa: E402

F32, F16 = 0, 4  # CTranslate2 dtype codes


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
                 tokens=None):
    f.write(struct.pack("<I", 0x67676D6C))
    f.write(struct.pack("<11i", n_vocab, n_audio_ctx, n_state, n_head, n_layer, n_text_ctx,
                        n_state, n_head, n_layer, n_mels, 1))
    n_fft, filt = mel_filters(n_mels)
    f.write(struct.pack("<ii", n_mels, n_fft))
    f.write(struct.pack("<%df" % len(filt), *filt))
    tokens = tokens or []
    f.write(struct.pack("<i", len(tokens)))
    for t in tokens:
        f.write(struct.pack("<i", len(t)))
        f.write(t)


def convert(ct2_dir, out):
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
        want_f32 = f32 or len(dims) < 2
        if want_f32 and dtype == F16:
            raw = struct.pack("<%df" % n, *struct.unpack("<%de" % n, raw))
        elif not want_f32 and dtype == F32:
            raw = struct.pack("<%de" % n, *struct.unpack("<%df" % n, raw))
        nb = name.encode()
        f.write(struct.pack("<iii", len(dims), len(nb), 0 if want_f32 else 1))
        f.write(struct.pack("<%di" % len(dims), *reversed(dims)))
        f.write(nb)
        f.write(raw)

    with open(out, "wb") as f:
        write_header(f, n_vocab, d, heads("encoder"), n_enc, n_mels, n_audio_ctx, n_text_ctx, tokens)
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
    if len(a) == 6 and a[0] == "--empty":
        with open(a[5], "wb") as fo:
            write_header(fo, *map(int, a[1:5]))
    elif len(a) == 2:
        convert(a[0], a[1])
    else:
        raise SystemExit(__doc__)
