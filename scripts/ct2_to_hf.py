#!/usr/bin/env python3
"""Converts a CTranslate2 Whisper directory to a Hugging Face Whisper directory
(config.json, generation_config.json, model.safetensors, tokenizer.json) with the
standard library only, keeping the stored dtype (f16/f32). Used by the tests to prove
the safetensors loader on real weights.

usage: python3 scripts/ct2_to_hf.py CT2_DIR OUT_DIR
"""
import json
import os
import shutil
import struct
import sys

DTYPES = {0: ("F32", 4), 4: ("F16", 2)}


def read_ct2(path):
    data = open(path, "rb").read()
    off = 0

    def u(fmt):
        nonlocal off
        v = struct.unpack_from("<" + fmt, data, off)
        off += struct.calcsize(fmt)
        return v[0]

    def string():
        nonlocal off
        n = u("H")
        s = data[off:off + n - 1].decode()
        off += n
        return s

    version = u("I")
    assert 4 <= version <= 6, version
    assert string() == "WhisperSpec"
    u("I")
    variables = {}
    for _ in range(u("I")):
        name = string()
        rank = data[off]
        off += 1
        dims = [u("I") for _ in range(rank)]
        dtype = data[off]
        off += 1
        n = u("I")
        variables[name] = (dims, dtype, data[off:off + n])
        off += n
    for _ in range(u("I")):
        alias, target = string(), string()
        variables[alias] = variables[target]
    return variables


def convert(ct2_dir, out_dir):
    v = read_ct2(os.path.join(ct2_dir, "model.bin"))
    tensors = {}

    def put(name, src, row0=None, rows=None):
        dims, dtype, raw = v[src]
        if dtype not in DTYPES:
            raise SystemExit(f"{src}: dtype {dtype} not supported by this script")
        item = DTYPES[dtype][1]
        if row0 is not None:
            cols = dims[1] if len(dims) == 2 else 1
            raw = raw[row0 * cols * item:(row0 + rows) * cols * item]
            dims = [rows] + dims[1:]
        tensors[name] = (DTYPES[dtype][0], dims, raw)

    def lin(dst, src, bias=True):
        put(dst + ".weight", src + "/weight")
        if bias:
            put(dst + ".bias", src + "/bias")

    def ln(dst, src):
        put(dst + ".weight", src + "/gamma")
        put(dst + ".bias", src + "/beta")

    def layers(stack):
        n = 0
        while f"{stack}/layer_{n}/self_attention/layer_norm/gamma" in v:
            n += 1
        return n

    d = v["encoder/conv1/weight"][0][0]
    lin("model.encoder.conv1", "encoder/conv1")
    lin("model.encoder.conv2", "encoder/conv2")
    put("model.encoder.embed_positions.weight", "encoder/position_encodings/encodings")
    for stack in ("encoder", "decoder"):
        for i in range(layers(stack)):
            s, t = f"{stack}/layer_{i}", f"model.{stack}.layers.{i}"
            ln(t + ".self_attn_layer_norm", s + "/self_attention/layer_norm")
            qkv = s + "/self_attention/linear_0"
            put(t + ".self_attn.q_proj.weight", qkv + "/weight", 0, d)
            put(t + ".self_attn.q_proj.bias", qkv + "/bias", 0, d)
            put(t + ".self_attn.k_proj.weight", qkv + "/weight", d, d)
            put(t + ".self_attn.v_proj.weight", qkv + "/weight", 2 * d, d)
            put(t + ".self_attn.v_proj.bias", qkv + "/bias", 2 * d, d)
            lin(t + ".self_attn.out_proj", s + "/self_attention/linear_1")
            if stack == "decoder":
                ln(t + ".encoder_attn_layer_norm", s + "/attention/layer_norm")
                lin(t + ".encoder_attn.q_proj", s + "/attention/linear_0")
                kv = s + "/attention/linear_1"
                put(t + ".encoder_attn.k_proj.weight", kv + "/weight", 0, d)
                put(t + ".encoder_attn.v_proj.weight", kv + "/weight", d, d)
                put(t + ".encoder_attn.v_proj.bias", kv + "/bias", d, d)
                lin(t + ".encoder_attn.out_proj", s + "/attention/linear_2")
            ln(t + ".final_layer_norm", s + "/ffn/layer_norm")
            lin(t + ".fc1", s + "/ffn/linear_0")
            lin(t + ".fc2", s + "/ffn/linear_1")
    ln("model.encoder.layer_norm", "encoder/layer_norm")
    put("model.decoder.embed_tokens.weight", "decoder/embeddings/weight")
    put("model.decoder.embed_positions.weight", "decoder/position_encodings/encodings")
    ln("model.decoder.layer_norm", "decoder/layer_norm")

    # safetensors: u64 header length, JSON header, data (stored here in reverse name
    # order so a loader that assumes name order would fail)
    header, blobs, off = {}, [], 0
    for name in sorted(tensors, reverse=True):
        dtype, dims, raw = tensors[name]
        header[name] = {"dtype": dtype, "shape": dims, "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    header["__metadata__"] = {"format": "pt"}
    hjson = json.dumps(header).encode()
    hjson += b" " * (-len(hjson) % 8)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(hjson)))
        f.write(hjson)
        for b in blobs:
            f.write(b)

    heads = lambda side: struct.unpack("<h", v[f"{side}/num_heads"][2])[0] if f"{side}/num_heads" in v else d // 64
    n_vocab = v["decoder/embeddings/weight"][0][0]
    config = {
        "model_type": "whisper", "architectures": ["WhisperForConditionalGeneration"],
        "vocab_size": n_vocab, "num_mel_bins": v["encoder/conv1/weight"][0][1], "d_model": d,
        "encoder_layers": layers("encoder"), "decoder_layers": layers("decoder"),
        "encoder_attention_heads": heads("encoder"), "decoder_attention_heads": heads("decoder"),
        "max_source_positions": 1500, "max_target_positions": v["decoder/position_encodings/encodings"][0][0],
    }
    ct2_config = json.load(open(os.path.join(ct2_dir, "config.json")))
    gen = {"suppress_tokens": ct2_config.get("suppress_ids", []),
           "begin_suppress_tokens": ct2_config.get("suppress_ids_begin", []),
           "alignment_heads": ct2_config.get("alignment_heads", [])}
    json.dump(config, open(os.path.join(out_dir, "config.json"), "w"), indent=1)
    json.dump(gen, open(os.path.join(out_dir, "generation_config.json"), "w"), indent=1)
    shutil.copy(os.path.join(ct2_dir, "tokenizer.json"), os.path.join(out_dir, "tokenizer.json"))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    convert(sys.argv[1], sys.argv[2])
