#!/usr/bin/env python3
"""make.py — writes the crafted malformed inputs of tests/cli/malformed.sh.

Each input is one file (GGUF or whisper.cpp ggml model, WAV audio, token-id list) or one model directory
(CTranslate2: model.bin + config.json + vocabulary.txt; Hugging Face: model.safetensors +
config.json + tokenizer.json). The valid baseline is the tiny d_model-8, 100-token model
of tests/fuzz/make_seeds.py (imported from there); every input here breaks it in one way.
What each input must produce (exit code, message substring) is in MANIFEST.tsv, kept by
hand next to this script. Deterministic; Python 3 standard library only.

usage: python3 tests/data/malformed/make.py [--out DIR]     (default: this directory)
Writes DIR/{gguf,ggml,ct2,hf,wav,ids}/...; removes those six folders first.
"""
import argparse
import json
import os
import shutil
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "fuzz"))
import make_seeds as ms  # noqa: E402

# ---- helpers ---------------------------------------------------------------------------


def put(b, off, fmt, v):
    b = bytearray(b)
    struct.pack_into(fmt, b, off, v)
    return bytes(b)


def gguf_layout(b):
    """Offsets in a GGUF file: end of the 24-byte header, end of each key-value, and for
    each tensor info its start and the offsets of its n_dims, dims, type and offset fields."""
    p = 24
    n_tensors, n_kv = struct.unpack_from("<QQ", b, 8)

    def skip_str(p):
        n, = struct.unpack_from("<Q", b, p)
        return p + 8 + n

    def skip_val(p, t):
        if t in (4, 5):
            return p + 4
        if t == 8:
            return skip_str(p)
        if t == 9:
            et, n = struct.unpack_from("<IQ", b, p)
            p += 12
            for _ in range(n):
                p = skip_val(p, et)
            return p
        raise ValueError(t)
    kv_ends, kv_starts = [], []
    for _ in range(n_kv):
        kv_starts.append(p)
        p = skip_str(p)
        t, = struct.unpack_from("<I", b, p)
        p = skip_val(p + 4, t)
        kv_ends.append(p)
    infos = []
    for _ in range(n_tensors):
        start = p
        name_len, = struct.unpack_from("<Q", b, p)
        name = b[p + 8:p + 8 + name_len].decode()
        p += 8 + name_len
        nd_off = p
        nd, = struct.unpack_from("<I", b, p)
        dims_off = p + 4
        p = dims_off + 8 * nd
        infos.append({"name": name, "start": start, "n_dims": nd_off, "dims": dims_off, "type": p,
                      "offset": p + 4, "end": p + 12})
        p += 12
    data_start = p + (-p % 32)
    return {"kv_starts": kv_starts, "kv_ends": kv_ends, "infos": infos, "infos_end": p,
            "data_start": data_start}


def with_weights(edit, fn, *a, **k):
    """Calls fn (a make_seeds builder) with weights() edited by EDIT(name, values)."""
    orig = ms.weights

    def patched():
        w = orig()
        for name, (shape, vals) in w.items():
            vals = list(vals)
            edit(name, vals)
            w[name] = (shape, vals)
        return w
    ms.weights = patched
    try:
        return fn(*a, **k)
    finally:
        ms.weights = orig


POS16 = {"encoder.positional_embedding": "f16", "decoder.positional_embedding": "f16"}


def gguf16(**k):
    """The valid GGUF of make_seeds with f16 position tables (the loader accepts them;
    the files are 40 KB instead of 64 KB)."""
    return ms.gguf(types=POS16, **k)


def ct2_vars16():
    """make_seeds' CTranslate2 variables with f16 position tables."""
    out = []
    for n, sh, dt, d in ms.ct2_vars():
        if "position_encodings" in n:
            dt, d = "f16", ms.pack(struct.unpack("<%df" % (len(d) // 4), d), "f16")
        out.append((n, sh, dt, d))
    return out


def ct2_bin_raw(version=6, spec="WhisperSpec", variables=None, n_vars=None, aliases=None,
                records=None):
    """CTranslate2 model.bin with control over every field. variables: (name, shape, dtype
    code, declared byte count or None, data)."""
    variables = [(n, sh, ms.CT2_DT[dt], None, d) for n, sh, dt, d in ct2_vars16()] \
        if variables is None else variables
    aliases = [("decoder/projection/weight", "decoder/embeddings/weight")] if aliases is None else aliases
    b = struct.pack("<I", version) + ms.ct2_str(spec) + struct.pack("<I", 3)
    b += struct.pack("<I", len(variables) if n_vars is None else n_vars)
    ends = []
    for name, shape, code, nbytes, data in variables:
        b += ms.ct2_str(name) + struct.pack("<B", len(shape) & 0xff) + b"".join(struct.pack("<I", x) for x in shape)
        b += struct.pack("<BI", code, len(data) if nbytes is None else nbytes) + data
        ends.append(len(b))
    if records is not None:
        records.extend(ends)
    b += struct.pack("<I", len(aliases)) + b"".join(ms.ct2_str(a) + ms.ct2_str(t) for a, t in aliases)
    return b


def ct2_edit(name, fn):
    """The default variable list with variable NAME replaced by fn(name, shape, code, data)."""
    out = []
    for n, sh, dt, d in ct2_vars16():
        v = (n, sh, ms.CT2_DT[dt], None, d)
        out.append(fn(*v) if n == name else v)
    return out


CT2_CONFIG = {"suppress_ids": ms.SUPPRESS, "suppress_ids_begin": ms.SUPPRESS_BEGIN,
              "alignment_heads": [[0, 0]], "lang_ids": []}


def ct2_dir(model_bin, config=None, vocab=None):
    cfg = json.dumps(CT2_CONFIG, indent=1).encode() + b"\n" if config is None else config
    voc = "".join(t + "\n" for t in ms.vocab()).encode() if vocab is None else vocab
    d = {"model.bin": model_bin, "config.json": cfg, "vocabulary.txt": voc}
    return {k: v for k, v in d.items() if v is not False}


def hf_dir(st, config=None, tokenizer=None):
    cfg = json.dumps(ms.hf_config(), indent=1).encode() + b"\n" if config is None else config
    tok = json.dumps(ms.hf_tokenizer(), ensure_ascii=False).encode() + b"\n" if tokenizer is None else tokenizer
    d = {"model.safetensors": st, "config.json": cfg, "tokenizer.json": tok}
    return {k: v for k, v in d.items() if v is not False}


def st_edit(fn):
    return ms.safetensors(header_edit=fn)


def st_set(key, field, value):
    def f(h):
        h[key][field] = value
    return f


EMB = "model.decoder.embed_tokens.weight"

# ---- GGUF --------------------------------------------------------------------------------


def gguf_inputs():
    good = gguf16()
    L = gguf_layout(good)
    infos = {i["name"]: i for i in L["infos"]}
    emb = infos["decoder.token_embedding.weight"]
    s = {"valid.gguf": good}
    # truncations at each section boundary
    s["trunc-magic.gguf"] = good[:4]
    s["trunc-header.gguf"] = good[:24]
    for i, end in enumerate(L["kv_ends"]):
        s["trunc-kv%02d.gguf" % i] = good[:end]
    s["trunc-mid-kv-tokens.gguf"] = good[:(L["kv_starts"][14] + L["kv_ends"][14]) // 2]
    s["trunc-info-first.gguf"] = good[:L["infos"][0]["end"]]
    s["trunc-info-mid.gguf"] = good[:L["infos"][len(L["infos"]) // 2]["offset"] + 3]
    s["trunc-info-end.gguf"] = good[:L["infos_end"]]
    s["trunc-data-start.gguf"] = good[:L["data_start"]]
    s["trunc-mid-data.gguf"] = good[:(L["data_start"] + len(good)) // 2]
    s["trunc-last-byte.gguf"] = good[:-1]
    # header fields
    s["magic-ggml.gguf"] = b"GGML" + good[4:]
    s["magic-lowercase.gguf"] = b"gguf" + good[4:]
    s["version-1.gguf"] = put(good, 4, "<I", 1)
    s["version-99.gguf"] = put(good, 4, "<I", 99)
    s["tensor-count-neg1.gguf"] = put(good, 8, "<Q", 2 ** 64 - 1)
    s["kv-count-neg1.gguf"] = put(good, 16, "<Q", 2 ** 64 - 1)
    s["key-len-neg1.gguf"] = put(good, 24, "<Q", 2 ** 64 - 1)
    # the string value of general.architecture (kv 0): length past the end
    s["str-len-past-end.gguf"] = put(good, L["kv_starts"][0] + 8 + 20 + 4, "<Q", 1 << 40)
    s["kv-type-unknown.gguf"] = put(good, L["kv_starts"][0] + 8 + 20, "<I", 77)
    s["tokens-count-neg1.gguf"] = put(good, L["kv_starts"][14] + 8 + len("tokenizer.ggml.tokens") + 4 + 4,
                                      "<Q", 2 ** 64 - 1)
    # tensor infos
    s["n-dims-99.gguf"] = put(good, emb["n_dims"], "<I", 99)
    s["dim-huge.gguf"] = put(put(good, emb["dims"], "<Q", 1 << 40), emb["dims"] + 8, "<Q", 1 << 40)
    s["dim-neg1.gguf"] = put(good, emb["dims"] + 8, "<Q", 2 ** 64 - 1)
    s["dim-zero.gguf"] = put(good, emb["dims"] + 8, "<Q", 0)
    s["shape-wrong.gguf"] = put(good, emb["dims"] + 8, "<Q", 99)          # [99, 8] for 100 tokens
    s["shape-swapped.gguf"] = put(put(good, emb["dims"], "<Q", 100), emb["dims"] + 8, "<Q", 8)
    s["dtype-q4_0.gguf"] = put(good, emb["type"], "<I", 2)
    s["dtype-unknown.gguf"] = put(good, emb["type"], "<I", 1000)
    s["dtype-f32-for-f16.gguf"] = put(good, emb["type"], "<I", 0)        # twice the bytes: last tensor overruns?
    last = L["infos"][-1]
    s["offset-past-end.gguf"] = put(good, emb["offset"], "<Q", 1 << 40)
    s["offset-neg1.gguf"] = put(good, emb["offset"], "<Q", 2 ** 64 - 1)
    s["offset-last-overrun.gguf"] = put(good, last["offset"], "<Q",
                                        len(good) - L["data_start"] - 16)  # 32-aligned, runs past the end
    s["offset-unaligned.gguf"] = put(good, emb["offset"],
                                     "<Q", struct.unpack_from("<Q", good, emb["offset"])[0] + 2)
    s["offset-overlap.gguf"] = put(good, emb["offset"], "<Q",
                                   struct.unpack_from("<Q", good, L["infos"][0]["offset"])[0])
    # encoder.conv1.bias renamed encoder.conv2.bias: one tensor missing, one twice
    c1 = infos["encoder.conv1.bias"]
    s["duplicate-tensor-name.gguf"] = good[:c1["start"] + 8] + b"encoder.conv2.bias" + good[c1["start"] + 26:]
    # non-finite weights (refused since the loaders' finiteness check)

    def nan_ln(name, vals):
        if name == "decoder.ln.bias":
            vals[0] = float("nan")

    def inf_mat(name, vals):
        if name == "encoder.blocks.0.mlp.0.weight":
            vals[5] = float("inf")
    s["nan-f32-weight.gguf"] = with_weights(nan_ln, gguf16)
    s["inf-f16-weight.gguf"] = with_weights(inf_mat, gguf16)
    return s

# ---- whisper.cpp legacy ggml .bin ---------------------------------------------------------


def ggml_inputs():
    good = ms.ggml()
    L = ms.ggml_layout(good)
    recs = {r["name"]: r for r in L["recs"]}
    first, emb = L["recs"][0], recs["decoder.token_embedding.weight"]
    hp = {k: 4 + 4 * i for i, k in enumerate(ms.GGML_HP)}
    mlp = "encoder.blocks.0.mlp.2.weight"
    s = {"valid.bin": good,
         "valid-q4_0-q5_1.bin": ms.ggml(types={mlp: "q4_0", "decoder.blocks.0.mlp.2.weight": "q5_1"}),
         "valid-eot-in-vocab.bin": ms.ggml(tokens=ms.GGML_BASE + [b"<|endoftext|>"])}
    # the conv biases as plain vectors [n] instead of convert-pt-to-ggml.py's [n, 1]
    c1 = recs["encoder.conv1.bias"]
    s["valid-conv-bias-1d.bin"] = (good[:c1["start"]] + ms.ggml_record("encoder.conv1.bias", [8], 0,
                                                                        good[c1["data"]:c1["end"]]) + good[c1["end"]:])
    # truncations at each section
    s["trunc-magic.bin"] = good[:2]
    s["trunc-hparams.bin"] = good[:hp["n_audio_layer"]]
    s["trunc-mel-header.bin"] = good[:52]
    s["trunc-mel-data.bin"] = good[:4000]
    s["trunc-vocab-count.bin"] = good[:L["vocab"] + 2]
    s["trunc-tokens.bin"] = good[:L["vocab"] + 1200]
    s["trunc-tensor-header.bin"] = good[:first["start"] + 5]
    s["trunc-tensor-dims.bin"] = good[:first["dims"] + 2]
    s["trunc-tensor-name.bin"] = good[:first["data"] - 3]
    s["trunc-tensor-data.bin"] = good[:first["data"] + 3]
    s["trunc-last-byte.bin"] = good[:-1]
    s["trailing-bytes.bin"] = good + b"\x01\x00\x00\x00\x05"
    # header
    s["magic-wrong.bin"] = b"lmgh" + good[4:]
    s["n-vocab-neg1.bin"] = put(good, hp["n_vocab"], "<i", -1)
    s["n-vocab-plus1.bin"] = put(good, hp["n_vocab"], "<i", ms.GGML_N_VOCAB + 1)
    s["n-vocab-101-languages.bin"] = put(good, hp["n_vocab"], "<i", ms.GGML_N_VOCAB + 100)
    s["n-audio-ctx-1000.bin"] = put(good, hp["n_audio_ctx"], "<i", 1000)
    s["n-audio-state-0.bin"] = put(good, hp["n_audio_state"], "<i", 0)
    s["n-audio-head-3.bin"] = put(good, hp["n_audio_head"], "<i", 3)
    s["n-audio-layer-65.bin"] = put(good, hp["n_audio_layer"], "<i", 65)
    s["n-audio-layer-2.bin"] = put(good, hp["n_audio_layer"], "<i", 2)
    s["n-text-ctx-1.bin"] = put(good, hp["n_text_ctx"], "<i", 1)
    s["n-text-state-16.bin"] = put(good, hp["n_text_state"], "<i", 16)
    s["n-text-head-0.bin"] = put(good, hp["n_text_head"], "<i", 0)
    s["n-text-layer-neg5.bin"] = put(good, hp["n_text_layer"], "<i", -5)
    s["n-mels-81.bin"] = put(good, hp["n_mels"], "<i", 81)
    s["n-mels-128.bin"] = put(good, hp["n_mels"], "<i", 128)  # the filters still say 80
    s["ftype-neg1.bin"] = put(good, hp["ftype"], "<i", -1)
    s["ftype-3001.bin"] = put(good, hp["ftype"], "<i", 3001)
    s["mel-n-fft-200.bin"] = put(good, 52, "<i", 200)
    # vocabulary
    s["vocab-count-neg1.bin"] = put(good, L["vocab"], "<i", -1)
    s["vocab-count-0.bin"] = put(good, L["vocab"], "<i", 0)
    s["token-len-huge.bin"] = put(good, L["vocab"] + 4, "<I", 0x7fffffff)
    # tensor records
    s["n-dims-0.bin"] = put(good, first["start"], "<i", 0)
    s["n-dims-5.bin"] = put(good, first["start"], "<i", 5)
    s["name-len-0.bin"] = put(good, first["start"] + 4, "<i", 0)
    s["name-len-neg1.bin"] = put(good, first["start"] + 4, "<i", -1)
    s["name-len-96.bin"] = put(good, first["start"] + 4, "<i", 96)
    s["name-nul.bin"] = put(good, first["data"] - 1, "<B", 0)
    s["dim-neg1.bin"] = put(good, first["dims"], "<i", -1)
    s["dim-zero.bin"] = put(good, first["dims"], "<i", 0)
    s["dim-huge.bin"] = put(good, emb["dims"], "<i", 0x7fffffff)
    s["shape-wrong.bin"] = put(good, emb["dims"] + 4, "<i", 1774)  # [1774, 8] for 1775 tokens
    s["type-q4_K.bin"] = put(good, first["type"], "<i", 12)
    s["type-bf16.bin"] = put(good, first["type"], "<i", 30)
    s["type-unknown.bin"] = put(good, first["type"], "<i", 99)
    s["type-f32-for-f16.bin"] = put(good, emb["type"], "<i", 0)  # twice the bytes: misreads what follows
    s["quant-version-0.bin"] = ms.ggml(types={mlp: "q4_0"}, hp={"ftype": 2})
    s["q4_0-rows-of-8.bin"] = ms.ggml(types={"encoder.blocks.0.attn.query.weight": "q4_0"})
    s["unexpected-tensor.bin"] = good + ms.ggml_record("decoder.proj.weight", [8, 8], 1, bytes(128))
    s["key-bias.bin"] = good + ms.ggml_record("encoder.blocks.0.attn.key.bias", [8], 0, bytes(32))
    s["duplicate-tensor.bin"] = good + good[c1["start"]:c1["end"]]
    s["missing-tensor.bin"] = ms.ggml(drop=("decoder.blocks.0.cross_attn.key.weight",))
    s["missing-last-tensor.bin"] = good[:L["recs"][-1]["start"]]
    ln = recs["decoder.ln.bias"]
    s["nan-f32-weight.bin"] = put(good, ln["data"], "<I", 0x7fc00000)
    s["inf-f16-weight.bin"] = put(good, emb["data"] + 10, "<H", 0x7c00)
    q = ms.ggml(types={mlp: "q4_0"})
    qm = {r["name"]: r for r in ms.ggml_layout(q)["recs"]}[mlp]
    s["nan-q4_0-scale.bin"] = put(q, qm["data"] + 18, "<H", 0x7e00)  # block 1
    return s

# ---- CTranslate2 -------------------------------------------------------------------------


def ct2_inputs():
    recs = []
    good = ct2_bin_raw(records=recs)
    spec_end = 4 + 2 + len("WhisperSpec") + 1
    s = {"valid": ct2_dir(good)}
    s["trunc-version"] = ct2_dir(good[:2])
    s["trunc-spec"] = ct2_dir(good[:spec_end - 3])
    s["trunc-var-count"] = ct2_dir(good[:spec_end + 4 + 2])
    s["trunc-first-record"] = ct2_dir(good[:recs[0]])
    s["trunc-mid-record"] = ct2_dir(good[:recs[len(recs) // 2] - 5])
    s["trunc-all-records"] = ct2_dir(good[:recs[-1]])
    s["trunc-aliases"] = ct2_dir(good[:recs[-1] + 4 + 10])
    s["trunc-last-byte"] = ct2_dir(good[:-1])
    s["empty-model-bin"] = ct2_dir(b"")
    s["version-3"] = ct2_dir(put(good, 0, "<I", 3))
    s["version-7"] = ct2_dir(put(good, 0, "<I", 7))
    s["spec-transformer"] = ct2_dir(ct2_bin_raw(spec="TransformerSpec"))
    s["var-count-neg1"] = ct2_dir(ct2_bin_raw(n_vars=0xffffffff))
    s["name-len-past-end"] = ct2_dir(put(good, spec_end + 8, "<H", 0xffff)[:spec_end + 8 + 300])
    emb = "decoder/embeddings/weight"
    s["dim-huge"] = ct2_dir(ct2_bin_raw(variables=ct2_edit(emb, lambda n, sh, c, nb, d:
                                                            (n, [0xffffffff, 0xffffffff], c, nb, d))))
    s["byte-count-huge"] = ct2_dir(ct2_bin_raw(variables=ct2_edit(emb, lambda n, sh, c, nb, d:
                                                                   (n, sh, c, 0xfffffff0, d))))
    s["byte-count-short"] = ct2_dir(ct2_bin_raw(variables=ct2_edit(emb, lambda n, sh, c, nb, d:
                                                                    (n, sh, c, None, d[:-2]))))
    s["shape-wrong"] = ct2_dir(ct2_bin_raw(variables=ct2_edit(emb, lambda n, sh, c, nb, d:
                                                               (n, [99, 8], c, None, d[:99 * 8 * 2]))))
    s["dtype-unknown"] = ct2_dir(ct2_bin_raw(variables=ct2_edit(emb, lambda n, sh, c, nb, d:
                                                                 (n, sh, 9, None, d))))
    s["dtype-i32-weight"] = ct2_dir(ct2_bin_raw(variables=ct2_edit(emb, lambda n, sh, c, nb, d:
                                                                    (n, [100, 4], 3, None, d))))
    s["rank-255"] = ct2_dir(ct2_bin_raw(variables=ct2_edit(emb, lambda n, sh, c, nb, d:
                                                            (n, [1] * 255, c, None, d[:2]))))
    s["missing-config"] = ct2_dir(good, config=False)
    s["config-not-json"] = ct2_dir(good, config=b'{"suppress_ids": [1, 2,')
    s["config-suppress-neg"] = ct2_dir(good, config=json.dumps(dict(CT2_CONFIG, suppress_ids=[-5])).encode())
    s["config-heads-range"] = ct2_dir(good, config=json.dumps(dict(CT2_CONFIG, alignment_heads=[[0, 0], [7, 0]])).encode())
    s["missing-vocabulary"] = ct2_dir(good, vocab=False)
    s["vocabulary-short"] = ct2_dir(good, vocab="".join(t + "\n" for t in ms.vocab()[:50]).encode())

    # non-finite weights: an f16 NaN in the token embedding, an f32 +Inf in a LayerNorm bias
    def nan16(n, sh, c, nb, d):
        return (n, sh, c, nb, b"\x00\x7e" + d[2:])

    def inf32(n, sh, c, nb, d):
        return (n, sh, c, nb, struct.pack("<f", float("inf")) + d[4:])
    s["nan-f16-weight"] = ct2_dir(ct2_bin_raw(variables=ct2_edit(emb, nan16)))
    s["inf-f32-weight"] = ct2_dir(ct2_bin_raw(variables=ct2_edit("decoder/layer_norm/beta", inf32)))
    return s

# ---- safetensors (Hugging Face) ----------------------------------------------------------


def hf_inputs():
    good = ms.safetensors()
    hlen, = struct.unpack_from("<Q", good, 0)
    s = {"valid": hf_dir(good)}
    s["trunc-header-len"] = hf_dir(good[:5])
    s["trunc-mid-header"] = hf_dir(good[:8 + hlen // 2])
    s["trunc-data-start"] = hf_dir(good[:8 + hlen])
    s["trunc-mid-data"] = hf_dir(good[:(8 + hlen + len(good)) // 2])
    s["trunc-last-byte"] = hf_dir(good[:-1])
    s["empty-file"] = hf_dir(b"")
    s["header-len-neg1"] = hf_dir(put(good, 0, "<Q", 2 ** 64 - 1))
    s["header-len-zero"] = hf_dir(put(good, 0, "<Q", 0))
    s["header-not-json"] = hf_dir(struct.pack("<Q", 8) + b"GGUF\0\0\0\0" + good[8 + hlen:])
    s["header-garbage-json"] = hf_dir(struct.pack("<Q", 16) + b'{"a": [1, 2, }  ' + good[8 + hlen:])
    s["offsets-negative"] = hf_dir(st_edit(st_set(EMB, "data_offsets", [-1600, 0])))
    s["offsets-past-end"] = hf_dir(st_edit(st_set(EMB, "data_offsets", [0, 1 << 40])))
    s["offsets-float"] = hf_dir(st_edit(st_set(EMB, "data_offsets", [0.5, 1600.5])))
    s["offsets-overlap"] = hf_dir(st_edit(lambda h: h[EMB].__setitem__(
        "data_offsets", list(h["model.encoder.conv1.weight"]["data_offsets"][:1]) +
        [h["model.encoder.conv1.weight"]["data_offsets"][0] + (h[EMB]["data_offsets"][1] - h[EMB]["data_offsets"][0])])))
    s["offsets-unaligned"] = hf_dir(st_edit(lambda h: h[EMB].__setitem__(
        "data_offsets", [h[EMB]["data_offsets"][0] + 1, h[EMB]["data_offsets"][1] + 1])))
    s["shape-negative"] = hf_dir(st_edit(st_set(EMB, "shape", [-100, -8])))
    s["shape-huge"] = hf_dir(st_edit(st_set(EMB, "shape", [2 ** 62, 2 ** 62])))
    s["shape-wrong"] = hf_dir(st_edit(st_set(EMB, "shape", [50, 16])))
    s["dtype-f64"] = hf_dir(st_edit(st_set(EMB, "dtype", "F64")))
    s["dtype-unknown"] = hf_dir(st_edit(st_set(EMB, "dtype", "Q4_K")))
    s["missing-tensor"] = hf_dir(st_edit(lambda h: h.pop(EMB)))
    s["missing-config"] = hf_dir(good, config=False)
    s["config-heads-neg"] = hf_dir(good, config=json.dumps(dict(ms.hf_config(), encoder_attention_heads=-1)).encode())
    s["config-not-json"] = hf_dir(good, config=b"model_type: whisper\n")
    s["missing-tokenizer"] = hf_dir(good, tokenizer=False)

    def nan_ln(name, vals):
        if name == "decoder.ln.weight":
            vals[3] = float("nan")
    s["nan-f32-weight"] = hf_dir(with_weights(nan_ln, ms.safetensors))
    return s

# ---- WAV ---------------------------------------------------------------------------------


def wav_inputs():
    w = ms.wav
    pcm = w()
    s = {}
    s["zero-length-data.wav"] = w(samples=[])
    s["one-sample.wav"] = w(samples=[1000])                 # valid: exit 0
    # a header announcing 10 hours of 16 kHz 16-bit mono, then no sample
    hdr = w(samples=[])
    s["ten-hours-no-data.wav"] = put(put(hdr, 40, "<I", 10 * 3600 * 16000 * 2), 4, "<I",
                                     36 + 10 * 3600 * 16000 * 2)
    s["empty.wav"] = b""
    s["trunc-riff.wav"] = pcm[:4]
    s["trunc-wave.wav"] = pcm[:11]
    s["trunc-fmt-id.wav"] = pcm[:14]
    s["trunc-fmt-body.wav"] = pcm[:28]
    s["trunc-data-header.wav"] = pcm[:40]
    s["trunc-data.wav"] = pcm[:44 + 101]
    s["stereo.wav"] = w(channels=2)
    s["rate-44100.wav"] = w(rate=44100)
    s["rate-zero.wav"] = w(rate=0)
    s["pcm8.wav"] = w(bits=8)
    s["pcm24.wav"] = w(bits=24, samples=[0] * 300)
    s["alaw.wav"] = w(fmt=6, bits=8)
    s["mulaw.wav"] = w(fmt=7, bits=8)
    s["fmt-larger-than-file.wav"] = put(pcm, 16, "<I", 0x10000)
    s["fmt-size-neg1.wav"] = put(pcm, 16, "<I", 0xffffffff)
    s["no-data-chunk.wav"] = pcm[:36]
    s["no-fmt-chunk.wav"] = b"RIFF" + struct.pack("<I", 4 + 8 + 800) + b"WAVE" + pcm[36:]
    s["rifx.wav"] = b"RIFX" + pcm[4:]
    s["riff-not-wave.wav"] = pcm[:8] + b"AVI " + pcm[12:]
    s["channels-zero.wav"] = w(channels=0)
    s["float64.wav"] = put(put(w(fmt=3, bits=32), 34, "<H", 64), 32, "<H", 8)
    s["not-audio.wav"] = b"ID3\x04\x00\x00\x00\x00\x00\x00" + bytes(200)   # an mp3 renamed
    return s

# ---- token-id lists ----------------------------------------------------------------------


def ids_inputs():
    return {"letters-after-digits.ids": b"50257 12abc\n", "decimal-point.ids": b"50257 1.5\n",
            "hex.ids": b"50257 0x10\n", "negative.ids": b"50257 -3\n", "empty-item.ids": b"50257,,50362\n",
            "lone-comma.ids": b",\n", "trailing-comma.ids": b"50257,50362,\n", "empty.ids": b"",
            "blank-lines.ids": b"\n \r\n\t\n", "out-of-vocab.ids": b"50257 51864\n",
            "overflow.ids": b"50257 99999999999999999999\n", "int32-overflow.ids": b"50257 2147483648\n",
            "plus-sign.ids": b"50257 +5\n", "nul-byte.ids": b"50257 5\x00 6\n",
            "utf8-digits.ids": "50257 \uff11\uff12\n".encode()}

# ---- writing -----------------------------------------------------------------------------


def write_tree(root, files):
    for name, data in files.items():
        path = os.path.join(root, name)
        if isinstance(data, dict):
            os.makedirs(path, exist_ok=True)
            write_tree(path, data)
        else:
            with open(path, "wb") as f:
                f.write(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=HERE)
    out = ap.parse_args().out
    for kind, fn in (("gguf", gguf_inputs), ("ggml", ggml_inputs), ("ct2", ct2_inputs), ("hf", hf_inputs), ("wav", wav_inputs),
                     ("ids", ids_inputs)):
        d = os.path.join(out, kind)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        write_tree(d, fn())


if __name__ == "__main__":
    main()
