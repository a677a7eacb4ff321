#!/usr/bin/env python3
"""make_seeds.py — writes the seed corpora and fixtures of the fuzz targets (tests/fuzz).

Real Whisper models are far too large to commit, so this builds a tiny but *valid*
model (d_model 8, one head, one layer per stack, n_mels 80, n_audio_ctx 1500,
n_text_ctx 8, 100 tokens ending in Whisper's special tokens) in the three formats the
loader reads — GGUF (docs/FORMAT.md), CTranslate2 model.bin (shared REFERENCE.md),
safetensors (huggingface/safetensors README) and whisper.cpp's legacy ggml .bin (whose
vocabulary size fixes the special ids: 265 base tokens, one language, 1775 in all) —
plus truncated and corrupted variants,
WAV files, token-id lists and JSON documents. Deterministic: the same bytes every run.

usage: python3 tests/fuzz/make_seeds.py [--out DIR]    (default: tests/fuzz)
Writes DIR/corpus/<target>/* and DIR/fixtures/{ct2,hf}/*. Python 3 standard library only.
"""
import argparse
import json
import os
import random
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from ct2_to_ggml import q8_0 as ggml_q8_0, q_low  # noqa: E402

D = 8            # d_model of both stacks
N_MELS = 80
N_AUDIO_CTX = 1500
N_TEXT_CTX = 8
N_VOCAB = 100

# ---- vocabulary -----------------------------------------------------------------------

SPECIALS = ["<|endoftext|>", "<|startoftranscript|>", "<|translate|>", "<|transcribe|>",
            "<|startoflm|>", "<|startofprev|>", "<|nospeech|>", "<|notimestamps|>"]


def base_tokens():
    """90 GPT-2 byte-level tokens: printable ASCII plus a few merged words (Ġ = space)."""
    toks = [chr(c) for c in range(33, 33 + 80)]
    toks += ["\u0120", "\u0120the", "\u0120a", "ing", "\u0120and", "er", "\u0120to", "on", "\u010a", "\u0120I"]
    assert len(toks) == 90
    return toks


def vocab():
    """100 tokens: 90 base, 8 specials, <|0.00|>, <|0.02|>."""
    return base_tokens() + SPECIALS + ["<|0.00|>", "<|0.02|>"]


MERGES = ["\u0120 t", "h e", "\u0120t he", "i n", "in g", "e r", "o n", "\u0120 a", "a n", "an d", "\u0120 and"]
SUPPRESS = [1, 2, 7, 90, 91, 92, 93, 94, 95, 96]   # some symbols and the specials
SUPPRESS_BEGIN = [80, 90]                          # "Ġ" and <|endoftext|>

# ---- weights in openai-whisper naming (PyTorch shapes, outermost first) ----------------


def block_shapes(prefix, cross):
    d = D
    s = [(prefix + ".attn_ln.weight", [d]), (prefix + ".attn_ln.bias", [d]),
         (prefix + ".attn.query.weight", [d, d]), (prefix + ".attn.query.bias", [d]),
         (prefix + ".attn.key.weight", [d, d]),
         (prefix + ".attn.value.weight", [d, d]), (prefix + ".attn.value.bias", [d]),
         (prefix + ".attn.out.weight", [d, d]), (prefix + ".attn.out.bias", [d])]
    if cross:
        s += [(prefix + ".cross_attn_ln.weight", [d]), (prefix + ".cross_attn_ln.bias", [d]),
              (prefix + ".cross_attn.query.weight", [d, d]), (prefix + ".cross_attn.query.bias", [d]),
              (prefix + ".cross_attn.key.weight", [d, d]),
              (prefix + ".cross_attn.value.weight", [d, d]), (prefix + ".cross_attn.value.bias", [d]),
              (prefix + ".cross_attn.out.weight", [d, d]), (prefix + ".cross_attn.out.bias", [d])]
    s += [(prefix + ".mlp_ln.weight", [d]), (prefix + ".mlp_ln.bias", [d]),
          (prefix + ".mlp.0.weight", [4 * d, d]), (prefix + ".mlp.0.bias", [4 * d]),
          (prefix + ".mlp.2.weight", [d, 4 * d]), (prefix + ".mlp.2.bias", [d])]
    return s


def openai_shapes():
    d = D
    s = [("encoder.conv1.weight", [d, N_MELS, 3]), ("encoder.conv1.bias", [d]),
         ("encoder.conv2.weight", [d, d, 3]), ("encoder.conv2.bias", [d]),
         ("encoder.positional_embedding", [N_AUDIO_CTX, d])]
    s += block_shapes("encoder.blocks.0", False)
    s += [("encoder.ln_post.weight", [d]), ("encoder.ln_post.bias", [d]),
          ("decoder.token_embedding.weight", [N_VOCAB, d]),
          ("decoder.positional_embedding", [N_TEXT_CTX, d])]
    s += block_shapes("decoder.blocks.0", True)
    s += [("decoder.ln.weight", [d]), ("decoder.ln.bias", [d])]
    return s


def numel(shape):
    n = 1
    for x in shape:
        n *= x
    return n


def weights():
    """name -> (shape, flat values); values are multiples of 1/64 so f16/bf16 are exact."""
    rng = random.Random(1234)
    out = {}
    for name, shape in openai_shapes():
        if name.endswith("ln.weight") or name.endswith("ln_post.weight"):
            vals = [1.0] * numel(shape)
        else:
            vals = [rng.randint(-32, 32) / 64.0 for _ in range(numel(shape))]
        out[name] = (shape, vals)
    return out


def pack(vals, fmt):
    if fmt == "f32":
        return struct.pack("<%df" % len(vals), *vals)
    if fmt == "f16":
        return struct.pack("<%de" % len(vals), *vals)
    if fmt == "bf16":
        return b"".join(struct.pack("<I", struct.unpack("<I", struct.pack("<f", v))[0])[2:] for v in vals)
    raise ValueError(fmt)


def q8_0(vals):
    """ggml q8_0: blocks of 32 int8 with one f16 scale (34 bytes)."""
    out = bytearray()
    for b in range(0, len(vals), 32):
        blk = vals[b:b + 32]
        amax = max(abs(v) for v in blk)
        scale = amax / 127.0 if amax else 0.0
        q = [int(round(v / scale)) if scale else 0 for v in blk]
        out += struct.pack("<e", scale) + struct.pack("<32b", *q)
    return bytes(out)

# ---- GGUF --------------------------------------------------------------------------------

GG_U32, GG_I32, GG_STR, GG_ARR = 4, 5, 8, 9


def gg_str(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


def gguf(types=None, drop=(), tokens=None, extra_kv=b"", n_extra_kv=0, version=3, alignment=32):
    """A GGUF v3 file of the tiny model. TYPES maps a tensor name to f32/f16/q8_0
    (default: matrices f16, everything else f32)."""
    types = types or {}
    w = weights()
    tokens = vocab() if tokens is None else tokens
    kv = [("general.architecture", GG_STR, gg_str("whisper")),
          ("general.name", GG_STR, gg_str("whisper")),
          ("general.alignment", GG_U32, struct.pack("<I", alignment)),
          ("whisper.n_vocab", GG_U32, struct.pack("<I", N_VOCAB)),
          ("whisper.n_mels", GG_U32, struct.pack("<I", N_MELS)),
          ("whisper.audio.n_ctx", GG_U32, struct.pack("<I", N_AUDIO_CTX)),
          ("whisper.audio.n_state", GG_U32, struct.pack("<I", D)),
          ("whisper.audio.n_head", GG_U32, struct.pack("<I", 1)),
          ("whisper.audio.n_layer", GG_U32, struct.pack("<I", 1)),
          ("whisper.text.n_ctx", GG_U32, struct.pack("<I", N_TEXT_CTX)),
          ("whisper.text.n_state", GG_U32, struct.pack("<I", D)),
          ("whisper.text.n_head", GG_U32, struct.pack("<I", 1)),
          ("whisper.text.n_layer", GG_U32, struct.pack("<I", 1)),
          ("tokenizer.ggml.model", GG_STR, gg_str("gpt2")),
          ("tokenizer.ggml.tokens", GG_ARR,
           struct.pack("<IQ", GG_STR, len(tokens)) + b"".join(gg_str(t) for t in tokens)),
          ("tokenizer.ggml.merges", GG_ARR,
           struct.pack("<IQ", GG_STR, len(MERGES)) + b"".join(gg_str(t) for t in MERGES)),
          ("whisper.suppress_ids", GG_ARR,
           struct.pack("<IQ", GG_I32, len(SUPPRESS)) + struct.pack("<%di" % len(SUPPRESS), *SUPPRESS)),
          ("whisper.suppress_ids_begin", GG_ARR,
           struct.pack("<IQ", GG_I32, len(SUPPRESS_BEGIN)) +
           struct.pack("<%di" % len(SUPPRESS_BEGIN), *SUPPRESS_BEGIN)),
          ("whisper.alignment_heads", GG_ARR, struct.pack("<IQ", GG_I32, 2) + struct.pack("<2i", 0, 0))]
    names = [n for n, _ in openai_shapes() if n not in drop]
    infos, blobs, off = b"", [], 0
    for name in names:
        shape, vals = w[name]
        t = types.get(name, "f16" if len(shape) >= 2 and "positional" not in name else "f32")
        data = q8_0(vals) if t == "q8_0" else pack(vals, t)
        code = {"f32": 0, "f16": 1, "q8_0": 8}[t]
        infos += gg_str(name) + struct.pack("<I", len(shape))
        infos += b"".join(struct.pack("<Q", x) for x in reversed(shape))  # fastest first
        infos += struct.pack("<IQ", code, off)
        blobs.append((off, data))
        off = (off + len(data) + alignment - 1) // alignment * alignment
    head = b"GGUF" + struct.pack("<IQQ", version, len(names), len(kv) + n_extra_kv)
    head += b"".join(gg_str(k) + struct.pack("<I", t) + v for k, t, v in kv) + extra_kv + infos
    head += b"\0" * (-len(head) % alignment)
    body = bytearray(off)
    for o, data in blobs:
        body[o:o + len(data)] = data
    return head + bytes(body)

# ---- CTranslate2 -------------------------------------------------------------------------

CT2_DT = {"f32": 0, "i8": 1, "i16": 2, "i32": 3, "f16": 4, "bf16": 5}


def ct2_str(s):
    b = s.encode() + b"\0"
    return struct.pack("<H", len(b)) + b


def ct2_vars():
    """(name, shape, dtype, bytes) in CTranslate2 WhisperSpec naming, fused projections."""
    w = weights()
    d = D
    out = []

    def add(name, src, dt=None):
        shape, vals = w[src] if isinstance(src, str) else src
        dt = dt or ("f16" if len(shape) >= 2 else "f32")
        out.append((name, shape, dt, pack(vals, dt)))

    def cat(*srcs):
        vals = []
        rows = 0
        for s in srcs:
            shape, v = w[s] if isinstance(s, str) else s
            vals += v
            rows += shape[0]
        return ([rows] + list(shape[1:]), vals)

    zeros = ([d], [0.0] * d)
    add("encoder/conv1/weight", "encoder.conv1.weight")
    add("encoder/conv1/bias", "encoder.conv1.bias")
    add("encoder/conv2/weight", "encoder.conv2.weight")
    add("encoder/conv2/bias", "encoder.conv2.bias")
    add("encoder/position_encodings/encodings", "encoder.positional_embedding", "f32")
    for stack in ("encoder", "decoder"):
        o, c = stack + ".blocks.0.", stack + "/layer_0/"
        add(c + "self_attention/layer_norm/gamma", o + "attn_ln.weight")
        add(c + "self_attention/layer_norm/beta", o + "attn_ln.bias")
        add(c + "self_attention/linear_0/weight", cat(o + "attn.query.weight", o + "attn.key.weight",
                                                       o + "attn.value.weight"))
        add(c + "self_attention/linear_0/bias", cat(o + "attn.query.bias", zeros, o + "attn.value.bias"))
        add(c + "self_attention/linear_1/weight", o + "attn.out.weight")
        add(c + "self_attention/linear_1/bias", o + "attn.out.bias")
        if stack == "decoder":
            add(c + "attention/layer_norm/gamma", o + "cross_attn_ln.weight")
            add(c + "attention/layer_norm/beta", o + "cross_attn_ln.bias")
            add(c + "attention/linear_0/weight", o + "cross_attn.query.weight")
            add(c + "attention/linear_0/bias", o + "cross_attn.query.bias")
            add(c + "attention/linear_1/weight", cat(o + "cross_attn.key.weight", o + "cross_attn.value.weight"))
            add(c + "attention/linear_1/bias", cat(zeros, o + "cross_attn.value.bias"))
            add(c + "attention/linear_2/weight", o + "cross_attn.out.weight")
            add(c + "attention/linear_2/bias", o + "cross_attn.out.bias")
        add(c + "ffn/layer_norm/gamma", o + "mlp_ln.weight")
        add(c + "ffn/layer_norm/beta", o + "mlp_ln.bias")
        if stack == "encoder":  # int8 with per-row scales, as ct2 int8 exports
            shape, vals = w[o + "mlp.0.weight"]
            rows = [vals[r * shape[1]:(r + 1) * shape[1]] for r in range(shape[0])]
            scales = [127.0 / max(max(abs(v) for v in row), 1e-3) for row in rows]
            q = [max(-127, min(127, int(round(v * s)))) for row, s in zip(rows, scales) for v in row]
            out.append((c + "ffn/linear_0/weight", shape, "i8", struct.pack("<%db" % len(q), *q)))
            out.append((c + "ffn/linear_0/weight_scale", [shape[0]], "f32", pack(scales, "f32")))
        else:
            add(c + "ffn/linear_0/weight", o + "mlp.0.weight")
        add(c + "ffn/linear_0/bias", o + "mlp.0.bias")
        add(c + "ffn/linear_1/weight", o + "mlp.2.weight", "bf16" if stack == "decoder" else None)
        add(c + "ffn/linear_1/bias", o + "mlp.2.bias")
    add("encoder/layer_norm/gamma", "encoder.ln_post.weight")
    add("encoder/layer_norm/beta", "encoder.ln_post.bias")
    add("decoder/embeddings/weight", "decoder.token_embedding.weight")
    add("decoder/position_encodings/encodings", "decoder.positional_embedding", "f32")
    add("decoder/layer_norm/gamma", "decoder.ln.weight")
    add("decoder/layer_norm/beta", "decoder.ln.bias")
    out.append(("encoder/num_heads", [], "i16", struct.pack("<h", 1)))
    out.append(("decoder/num_heads", [], "i16", struct.pack("<h", 1)))
    return sorted(out)


def ct2_bin(version=6, variables=None, aliases=(("decoder/projection/weight", "decoder/embeddings/weight"),)):
    variables = ct2_vars() if variables is None else variables
    b = struct.pack("<I", version) + ct2_str("WhisperSpec") + struct.pack("<II", 3, len(variables))
    for name, shape, dt, data in variables:
        b += ct2_str(name) + struct.pack("<B", len(shape)) + b"".join(struct.pack("<I", x) for x in shape)
        b += struct.pack("<BI", CT2_DT[dt], len(data)) + data
    b += struct.pack("<I", len(aliases)) + b"".join(ct2_str(a) + ct2_str(t) for a, t in aliases)
    return b

# ---- safetensors (Hugging Face) ----------------------------------------------------------


def hf_name(n):
    whole = {"encoder.conv1.weight": "model.encoder.conv1.weight", "encoder.conv1.bias": "model.encoder.conv1.bias",
             "encoder.conv2.weight": "model.encoder.conv2.weight", "encoder.conv2.bias": "model.encoder.conv2.bias",
             "encoder.positional_embedding": "model.encoder.embed_positions.weight",
             "encoder.ln_post.weight": "model.encoder.layer_norm.weight",
             "encoder.ln_post.bias": "model.encoder.layer_norm.bias",
             "decoder.token_embedding.weight": "model.decoder.embed_tokens.weight",
             "decoder.positional_embedding": "model.decoder.embed_positions.weight",
             "decoder.ln.weight": "model.decoder.layer_norm.weight", "decoder.ln.bias": "model.decoder.layer_norm.bias"}
    if n in whole:
        return whole[n]
    parts = [("attn_ln", "self_attn_layer_norm"), ("attn.query", "self_attn.q_proj"),
             ("attn.key", "self_attn.k_proj"), ("attn.value", "self_attn.v_proj"), ("attn.out", "self_attn.out_proj"),
             ("cross_attn_ln", "encoder_attn_layer_norm"), ("cross_attn.query", "encoder_attn.q_proj"),
             ("cross_attn.key", "encoder_attn.k_proj"), ("cross_attn.value", "encoder_attn.v_proj"),
             ("cross_attn.out", "encoder_attn.out_proj"), ("mlp_ln", "final_layer_norm"),
             ("mlp.0", "fc1"), ("mlp.2", "fc2")]
    stack, _, layer, rest = n.split(".", 3)
    for a, b in parts:
        if rest.startswith(a + "."):
            return "model.%s.layers.%s.%s%s" % (stack, layer, b, rest[len(a):])
    raise KeyError(n)


def safetensors(header_edit=None, pad_header=True):
    w = weights()
    header, data = {"__metadata__": {"format": "pt"}}, bytearray()
    for i, (name, shape) in enumerate(openai_shapes()):
        dt = ["F32", "F16", "BF16"][i % 3] if len(shape) >= 2 else "F32"
        blob = pack(w[name][1], dt.lower())
        header[hf_name(name)] = {"dtype": dt, "shape": shape, "data_offsets": [len(data), len(data) + len(blob)]}
        data += blob
    emb = header["model.decoder.embed_tokens.weight"]
    header["proj_out.weight"] = dict(emb)  # tied: ignored by the loader
    if header_edit:
        header_edit(header)
    h = json.dumps(header, separators=(",", ":")).encode()
    if pad_header:
        h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + bytes(data)


def hf_tokenizer():
    """tokenizer.json: 90 base tokens in model.vocab, the 8 specials as added_tokens; the
    two timestamp tokens are left out (the loader appends them: embedding has 100 rows)."""
    base = base_tokens()
    return {"version": "1.0",
            "added_tokens": [{"id": 90 + i, "content": s, "special": True} for i, s in enumerate(SPECIALS)],
            "model": {"type": "BPE", "vocab": {t: i for i, t in enumerate(base)}, "merges": MERGES}}


def hf_config():
    return {"model_type": "whisper", "d_model": D, "encoder_attention_heads": 1, "decoder_attention_heads": 1,
            "encoder_layers": 1, "decoder_layers": 1, "num_mel_bins": N_MELS, "vocab_size": N_VOCAB,
            "max_source_positions": N_AUDIO_CTX, "max_target_positions": N_TEXT_CTX,
            "suppress_tokens": SUPPRESS, "begin_suppress_tokens": SUPPRESS_BEGIN}

# ---- WAV ---------------------------------------------------------------------------------


def wav(samples=None, fmt=1, bits=16, rate=16000, channels=1, extensible=False, data_size=None, extra=b""):
    samples = samples if samples is not None else [int(8000 * ((i % 40) - 20) / 20) for i in range(400)]
    if fmt == 3:
        data = struct.pack("<%df" % len(samples), *[s / 32768.0 for s in samples])
    else:
        data = struct.pack("<%dh" % len(samples), *samples)
    block = channels * bits // 8
    if extensible:
        fmt_body = struct.pack("<HHIIHHHHI", 0xfffe, channels, rate, rate * block, block, bits, 22, bits, 0)
        fmt_body += struct.pack("<H", fmt) + b"\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"
    else:
        fmt_body = struct.pack("<HHIIHH", fmt, channels, rate, rate * block, block, bits)
    chunks = b"fmt " + struct.pack("<I", len(fmt_body)) + fmt_body + extra
    chunks += b"data" + struct.pack("<I", len(data) if data_size is None else data_size) + data
    return b"RIFF" + struct.pack("<I", 4 + len(chunks)) + b"WAVE" + chunks

# ---- writing -----------------------------------------------------------------------------


def u32_at(b, off, v):
    b = bytearray(b)
    b[off:off + 4] = struct.pack("<I", v)
    return bytes(b)


def u64_at(b, off, v):
    b = bytearray(b)
    b[off:off + 8] = struct.pack("<Q", v)
    return bytes(b)


# ---- whisper.cpp legacy ggml .bin (REFERENCE.md; src/model/ggml_legacy.c) -----------------

# base tokens (ids = merge ranks): the 256 single bytes, then a few merges the suppress-list
# derivation finds (" -", " '", "<<", ">>", and the first two bytes of the musical signs)
GGML_BASE = [bytes([b]) for b in range(256)] + [b" -", b" '", b"<<", b">>", b" (", b"--", b"\xe2\x99",
                                                b"\xe2\x99\xaa", b" the"]
GGML_N_LANG = 1
GGML_N_VOCAB = len(GGML_BASE) + 2 + GGML_N_LANG + 6 + 1501   # 1775
GGML_TYPE = {"f32": 0, "f16": 1, "q4_0": 2, "q4_1": 3, "q5_0": 6, "q5_1": 7, "q8_0": 8}
GGML_FTYPE = {"q4_0": 2002, "q4_1": 2003, "q5_0": 2008, "q5_1": 2009, "q8_0": 2007}
GGML_HP = ["n_vocab", "n_audio_ctx", "n_audio_state", "n_audio_head", "n_audio_layer", "n_text_ctx",
           "n_text_state", "n_text_head", "n_text_layer", "n_mels", "ftype"]


def ggml_shapes():
    """openai names and PyTorch shapes of the tiny model, with the real-size vocabulary
    and the conv biases as convert-pt-to-ggml.py stores them ([n, 1])."""
    out = []
    for name, shape in openai_shapes():
        if name == "decoder.token_embedding.weight":
            shape = [GGML_N_VOCAB, D]
        elif name in ("encoder.conv1.bias", "encoder.conv2.bias"):
            shape = shape + [1]
        out.append((name, shape))
    return out


def ggml_record(name, shape, ttype, data):
    nb = name.encode() if isinstance(name, str) else name
    return (struct.pack("<iii", len(shape), len(nb), ttype) + struct.pack("<%di" % len(shape), *reversed(shape)) +
            nb + data)


def ggml(types=None, drop=(), extra=b"", tokens=None, hp=None, n_fft=201):
    """A ggml file of the tiny model. TYPES maps a name to f32/f16/q4_0/q4_1/q5_0/q5_1/q8_0
    (only mlp.2.weight, rows of 32, can take a block type); by default vectors and conv
    biases f32, the rest f16. HP overrides hparams by name; EXTRA is appended."""
    types = types or {}
    rng = random.Random(4321)
    tokens = GGML_BASE if tokens is None else tokens
    qt = [t for t in types.values() if t not in ("f32", "f16")]
    h = {"n_vocab": GGML_N_VOCAB, "n_audio_ctx": N_AUDIO_CTX, "n_audio_state": D, "n_audio_head": 1,
         "n_audio_layer": 1, "n_text_ctx": N_TEXT_CTX, "n_text_state": D, "n_text_head": 1, "n_text_layer": 1,
         "n_mels": N_MELS, "ftype": GGML_FTYPE[qt[0]] if qt else 1}
    h.update(hp or {})
    b = struct.pack("<I", 0x67676D6C) + struct.pack("<11i", *[h[k] for k in GGML_HP])
    b += struct.pack("<ii", N_MELS, n_fft) + bytes(4 * N_MELS * n_fft)
    b += struct.pack("<i", len(tokens)) + b"".join(struct.pack("<I", len(t)) + t for t in tokens)
    for name, shape in ggml_shapes():
        n = numel(shape)
        if name.endswith("ln.weight") or name.endswith("ln_post.weight"):
            vals = [1.0] * n
        else:
            vals = [rng.randint(-32, 32) / 64.0 for _ in range(n)]
        if name in drop:
            continue
        t = types.get(name, "f16" if len(shape) >= 2 and not name.endswith(".bias") else "f32")
        if t == "q8_0":
            data = ggml_q8_0(vals)
        elif t in ("q4_0", "q4_1", "q5_0", "q5_1"):
            data = q_low(vals, t)
        else:
            data = pack(vals, t)
        b += ggml_record(name, shape, GGML_TYPE[t], data)
    return b + extra


def ggml_layout(b):
    """Offsets in a ggml file: the vocabulary count, the first tensor record and, per
    record, its start, the end of its dims, the start and end of its data."""
    n_mel, n_fft = struct.unpack_from("<ii", b, 48)
    p = 56 + 4 * n_mel * n_fft
    vocab = p
    count, = struct.unpack_from("<i", b, p)
    p += 4
    for _ in range(count):
        n, = struct.unpack_from("<I", b, p)
        p += 4 + n
    recs = []
    block = {2: 18, 3: 20, 6: 22, 7: 24, 8: 34}
    while p < len(b):
        nd, nl, tt = struct.unpack_from("<iii", b, p)
        dims = struct.unpack_from("<%di" % nd, b, p + 12)
        name = b[p + 12 + 4 * nd:p + 12 + 4 * nd + nl].decode()
        data = p + 12 + 4 * nd + nl
        n = numel(dims)
        size = n * (4 if tt == 0 else 2) if tt in (0, 1) else n // 32 * block[tt]
        recs.append({"name": name, "start": p, "dims": p + 12, "type": p + 8, "data": data, "end": data + size})
        p = data + size
    return {"vocab": vocab, "tensors": recs[0]["start"], "recs": recs}


def ggml_seeds():
    good = ggml()
    lay = ggml_layout(good)
    mlp = ("encoder.blocks.0.mlp.2.weight", "decoder.blocks.0.mlp.2.weight")
    s = {"valid-f16.bin": good,
         "valid-q4_0-q5_1.bin": ggml(types={mlp[0]: "q4_0", mlp[1]: "q5_1"}),
         "valid-q4_1-q5_0.bin": ggml(types={mlp[0]: "q4_1", mlp[1]: "q5_0"}),
         "valid-q8_0-f32.bin": ggml(types={mlp[0]: "q8_0", mlp[1]: "q8_0", "encoder.conv1.weight": "f32",
                                           "decoder.token_embedding.weight": "f32"}),
         "valid-eot-in-vocab.bin": ggml(tokens=GGML_BASE + [b"<|endoftext|>"])}
    first = lay["recs"][0]
    for cut in (3, 30, 52, lay["vocab"] + 2, lay["vocab"] + 600, first["start"] + 5, first["data"] + 3,
                len(good) - 1):
        s["trunc-%d.bin" % cut] = good[:cut]
    s["bad-magic.bin"] = b"lmgh" + good[4:]
    s["n-vocab-off-by-one.bin"] = u32_at(good, 4, GGML_N_VOCAB + 1)
    s["vocab-count-huge.bin"] = u32_at(good, lay["vocab"], 0x7fffffff)
    s["unknown-type.bin"] = u32_at(good, first["type"], 12)
    s["n-dims-5.bin"] = u32_at(good, first["start"], 5)
    s["dim-negative.bin"] = u32_at(good, first["dims"], 0xffffffff)
    s["missing-tensor.bin"] = ggml(drop=("decoder.blocks.0.cross_attn.key.weight",))
    s["duplicate-tensor.bin"] = good + good[first["start"]:first["end"]]
    s["old-quant-version.bin"] = ggml(types={mlp[0]: "q4_0"}, hp={"ftype": 2})
    return s


def gguf_seeds():
    good = gguf()
    s = {"valid-f16.gguf": good,
         "valid-f32-q8.gguf": gguf(types={"encoder.blocks.0.mlp.2.weight": "q8_0",
                                          "decoder.blocks.0.mlp.2.weight": "q8_0",
                                          "encoder.conv1.weight": "f32", "decoder.token_embedding.weight": "f32"}),
         "valid-v2-align64.gguf": gguf(version=2, alignment=64)}
    for cut in (3, 10, 23, 200, 1500, 4000, len(good) // 2, len(good) - 1):
        s["trunc-%d.gguf" % cut] = good[:cut]
    s["bad-magic.gguf"] = b"GGUG" + good[4:]
    s["bad-version.gguf"] = u32_at(good, 4, 4)
    s["huge-tensor-count.gguf"] = u64_at(good, 8, 1 << 62)
    s["huge-kv-count.gguf"] = u64_at(good, 16, 99999)
    s["huge-key-len.gguf"] = u64_at(good, 24, 1 << 63)
    s["no-specials.gguf"] = gguf(tokens=base_tokens() + ["x%d" % i for i in range(10)])
    s["few-tokens.gguf"] = gguf(tokens=vocab()[:50])
    s["missing-tensor.gguf"] = gguf(drop=("decoder.blocks.0.cross_attn.key.weight",))
    s["bad-alignment.gguf"] = gguf(alignment=48)
    # an extra key holding an array of strings whose count exceeds the file
    s["array-overflow.gguf"] = gguf(extra_kv=gg_str("x.arr") + struct.pack("<IIQ", GG_ARR, GG_STR, 1 << 40),
                                    n_extra_kv=1)
    s["array-i32-overflow.gguf"] = gguf(extra_kv=gg_str("whisper.suppress_ids") +
                                        struct.pack("<IIQ", GG_ARR, GG_I32, (1 << 62) + 1), n_extra_kv=1)
    s["suppress-out-of-vocab.gguf"] = gguf(extra_kv=gg_str("whisper.suppress_ids") +
                                           struct.pack("<IIQi", GG_ARR, GG_I32, 1, 5000), n_extra_kv=1)
    return s


def ct2_seeds():
    good = ct2_bin()
    vs = ct2_vars()
    s = {"valid-model.bin": good, "valid-v5-noalias.bin": ct2_bin(version=5, aliases=())}
    for cut in (2, 5, 20, 300, len(good) // 2, len(good) - 3):
        s["trunc-%d.bin" % cut] = good[:cut]
    s["bad-version.bin"] = u32_at(good, 0, 7)
    s["trailing-bytes.bin"] = good + b"\0\0"
    s["many-aliases.bin"] = good[:-4 - sum(2 + len(a) + 1 for a in ("decoder/projection/weight",
                                                                    "decoder/embeddings/weight"))] + \
        struct.pack("<I", 17)
    s["no-scale.bin"] = ct2_bin(variables=[v for v in vs if not v[0].endswith("_scale")])
    s["zero-scale.bin"] = ct2_bin(variables=[(n, sh, dt, b"\0" * len(data) if n.endswith("_scale") else data)
                                             for n, sh, dt, data in vs])
    s["no-heads.bin"] = ct2_bin(variables=[v for v in vs if not v[0].endswith("num_heads")])
    s["rank5.bin"] = ct2_bin(variables=vs + [("zz", [1, 1, 1, 1, 1], "f32", b"\0" * 4)])
    s["bad-fused-shape.bin"] = ct2_bin(variables=[
        (n, [sh[0] - 1] + sh[1:], dt, data[:len(data) * (sh[0] - 1) // sh[0]])
        if n == "decoder/layer_0/attention/linear_1/weight" else (n, sh, dt, data) for n, sh, dt, data in vs])
    s["scalar-weight.bin"] = ct2_bin(variables=[("encoder/conv1/weight", [], "f32", b"\0" * 4)
                                                if n == "encoder/conv1/weight" else (n, sh, dt, data)
                                                for n, sh, dt, data in vs])
    return s


def st_seeds():
    good = safetensors()
    s = {"valid.safetensors": good, "valid-unpadded.safetensors": safetensors(pad_header=False)}
    for cut in (4, 8, 30, 400, len(good) // 2, len(good) - 1):
        s["trunc-%d.safetensors" % cut] = good[:cut]
    s["huge-header-len.safetensors"] = u64_at(good, 0, 1 << 63)
    s["header-len-past-end.safetensors"] = u64_at(good, 0, len(good))

    def edit(fn):
        return safetensors(header_edit=fn)

    def set_entry(key, field, value):
        def f(h):
            h[key][field] = value
        return f
    emb = "model.decoder.embed_tokens.weight"
    s["offsets-reversed.safetensors"] = edit(set_entry(emb, "data_offsets", [100, 10]))
    s["offsets-past-end.safetensors"] = edit(set_entry(emb, "data_offsets", [0, 1 << 40]))
    s["shape-empty.safetensors"] = edit(set_entry(emb, "shape", []))
    s["shape-zero.safetensors"] = edit(set_entry(emb, "shape", [0, 8]))
    s["shape-huge.safetensors"] = edit(set_entry(emb, "shape", [4294967296, 4294967296]))
    s["dtype-i64.safetensors"] = edit(set_entry(emb, "dtype", "I64"))
    s["dtype-bf16-odd.safetensors"] = edit(set_entry("model.encoder.conv1.bias", "dtype", "BF16"))
    s["header-array.safetensors"] = struct.pack("<Q", 2) + b"[]"
    s["layer-index-huge.safetensors"] = edit(lambda h: h.__setitem__(
        "model.encoder.layers.99999999999.fc1.weight", h["model.encoder.layers.0.fc1.weight"]))
    return s


def wav_seeds():
    s = {"pcm16.wav": wav(), "float32.wav": wav(fmt=3, bits=32),
         "extensible-pcm16.wav": wav(extensible=True), "extensible-float.wav": wav(fmt=3, bits=32, extensible=True),
         "streaming-size.wav": wav(data_size=0xffffffff), "zero-size.wav": wav(data_size=0),
         "list-chunk.wav": wav(extra=b"LIST" + struct.pack("<I", 5) + b"INFOx\0"),
         "one-sample.wav": wav(samples=[1000]),
         "stereo.wav": wav(channels=2), "rate-44100.wav": wav(rate=44100), "pcm8.wav": wav(bits=8),
         "alaw.wav": wav(fmt=6, bits=8), "truncated-data.wav": wav(data_size=100000),
         "no-data.wav": wav()[:36], "empty.wav": b"", "riff-only.wav": b"RIFF\0\0\0\0WAVE",
         "fmt-short.wav": b"RIFF\x1c\0\0\0WAVEfmt \x08\0\0\0\x01\0\x01\0\x80>\0\0",
         "data-before-fmt.wav": b"RIFF\x10\0\0\0WAVEdata\x02\0\0\0\0\0",
         "float-nan.wav": wav(fmt=3, bits=32)[:-4] + b"\0\0\xc0\x7f",
         "odd-chunk.wav": wav(extra=b"junk" + struct.pack("<I", 3) + b"abc\0"),
         # silence of exactly one 30 s window and one sample more (odd: the 128-bin mel);
         # about 1 MB each on disk, a few hundred bytes in git
         "window-exact.wav": wav(samples=[0] * 480000), "window-plus-one.wav": wav(samples=[0] * 480001)}
    return s


def idlist_seeds():
    # byte 0: bit 0 commas mode, bits 1-2 pick n_vocab (0, 100, 51864, INT32_MAX); rest: text
    items = [(1, 2, "50257,50358,50362"), (0, 0, "1 2 3\n4\t5\r\n"), (1, 0, " 7 , 8 "), (0, 1, "99"),
             (1, 1, "100"), (1, 0, ""), (1, 0, ","), (1, 0, "1,,2"), (1, 0, "1,"), (1, 0, "-1"),
             (1, 0, "+1"), (1, 0, "2147483647"), (1, 0, "2147483648"), (1, 0, "00000000000000000000001"),
             (0, 0, "1,2 3,\n4"), (0, 3, "12abc"), (1, 0, "\x00\xff")]
    return {"seed-%02d" % i: bytes([c | (v << 1)]) + t.encode("latin-1") for i, (c, v, t) in enumerate(items)}


def json_seeds():
    s = {"config.json": json.dumps(hf_config()).encode(),
         "tokenizer.json": json.dumps(hf_tokenizer()).encode(),
         "ct2-config.json": json.dumps({"suppress_ids": SUPPRESS, "suppress_ids_begin": SUPPRESS_BEGIN,
                                        "alignment_heads": [[0, 0]], "lang_ids": []}).encode(),
         "escapes.json": b'["\\u0120the", "\\ud83d\\ude00", "\\"\\\\\\/\\b\\f\\n\\r\\t", "\\u0000x"]',
         "numbers.json": b"[0, -0, 1.5e3, -2E-2, 1e999, 123456789012345678901234567890, 0.1]",
         "literals.json": b' {"a": true, "b": false, "c": null, "": {}} ',
         "deep-64.json": b"[" * 64 + b"]" * 64, "deep-65.json": b"[" * 65 + b"]" * 65,
         "lone-surrogate.json": b'"\\ud800"', "bad-escape.json": b'"\\x41"', "leading-zero.json": b"[01]",
         "trailing.json": b"{} x", "unterminated.json": b'{"a": "b', "control-char.json": b'"a\tb"',
         "duplicate-keys.json": b'{"a": 1, "a": 2}', "empty.json": b""}
    return s


def tokenizer_seeds():
    # read twice by the target: as one byte-level token string, and as little-endian
    # int32 ids (top bit set: the low byte is the id, so real tokens are hit)
    ids = lambda *v: b"".join(struct.pack("<I", x & 0xffffffff) for x in v)
    return {"words.txt": "\u0120the\u0120cat\u010a".encode(),
            "all-symbols.txt": "".join(chr(c) for c in range(33, 127)).encode() +
                               "".join(chr(c) for c in range(256, 256 + 68)).encode(),
            "overlong.txt": b"\xc1\x81", "beyond.txt": "\u0144\u0800".encode(),
            "truncated.txt": b"a\xc4", "nul.txt": b"\xc4\x80",
            "ids-text.bin": ids(0x80000000 | 5, 0x80000000 | 40, 0x80000000 | 17),
            "ids-special.bin": ids(0x80000000 | 90, 0x80000000 | 95, 0x80000000 | 99, 0x80000000 | 98),
            "ids-wild.bin": ids(-1, 100, 0x7fffffff, 0x40000000, 0) + b"\x01\x02"}


def write(dirname, files):
    os.makedirs(dirname, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(dirname, name), "wb") as f:
            f.write(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    out = ap.parse_args().out
    corpus = os.path.join(out, "corpus")
    write(os.path.join(corpus, "fuzz_gguf"), gguf_seeds())
    write(os.path.join(corpus, "fuzz_ct2"), ct2_seeds())
    write(os.path.join(corpus, "fuzz_safetensors"), st_seeds())
    write(os.path.join(corpus, "fuzz_ggml"), ggml_seeds())
    write(os.path.join(corpus, "fuzz_wav"), wav_seeds())
    write(os.path.join(corpus, "fuzz_idlist"), idlist_seeds())
    write(os.path.join(corpus, "fuzz_json"), json_seeds())
    write(os.path.join(corpus, "fuzz_tokenizer"), tokenizer_seeds())
    ct2_cfg = {"suppress_ids": SUPPRESS, "suppress_ids_begin": SUPPRESS_BEGIN, "alignment_heads": [[0, 0]],
               "lang_ids": []}
    write(os.path.join(out, "fixtures", "ct2"), {
        "config.json": json.dumps(ct2_cfg, indent=1).encode() + b"\n",
        "vocabulary.txt": "".join(t + "\n" for t in vocab()).encode()})
    write(os.path.join(out, "fixtures", "hf"), {
        "config.json": json.dumps(hf_config(), indent=1).encode() + b"\n",
        "tokenizer.json": json.dumps(hf_tokenizer(), ensure_ascii=False).encode() + b"\n"})


if __name__ == "__main__":
    main()
