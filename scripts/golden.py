#!/usr/bin/env python3
"""Eager PyTorch reference: writes the golden vectors the C tests compare against.

Builds openai-whisper's own `Whisper` module (fp32, eager) from
  * CTranslate2 Whisper directories (real tiny.en and multilingual base weights, f16
    converted to fp32, fused QKV split back), and
  * random-weight models of real dimensions, filled by a counter-based PRNG that the
    C side implements identically (spec in docs/GOLDEN.md; weights are never committed),
and for every clip in tests/data/clips writes mel (tiny.en only), encoder output,
first-step logits, openai `decode` ids/text and plain-argmax ids into tests/golden/<model>/.

Run with the reference env (scripts/setup-golden-env.sh), from the repo root:
  .venv-golden/bin/python scripts/golden.py [--models tiny.en,base] [--threads 2]
"""

import argparse
import json
import math
import os
import re
import struct
import sys
import time
import wave


def _threads_from_argv(default=2):
    for i, a in enumerate(sys.argv):
        if a == "--threads" and i + 1 < len(sys.argv):
            return sys.argv[i + 1]
        if a.startswith("--threads="):
            return a.split("=", 1)[1]
    return str(default)


# BLAS threads are fixed when the library loads, so set them before numpy/torch import.
os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = _threads_from_argv()

import numpy as np  # noqa: E402
import torch  # noqa: E402
import whisper  # noqa: E402
from whisper.model import ModelDimensions, Whisper  # noqa: E402

N_SAMPLES = 480000  # 30 s at 16 kHz -> exactly 3000 mel frames
MAX_NEW_RUN = 32    # plain-argmax budget, as `sotto run` defaults to

# ---------------------------------------------------------------------------------------
# Special tokens by vocabulary size (openai whisper/tokenizer.py)


def special_ids(n_vocab):
    """(prefix for a no-timestamps English transcription, endoftext id)."""
    if n_vocab == 51864:          # English-only (.en)
        return [50257, 50362], 50256
    if n_vocab == 51865:          # multilingual: sot, <|en|>, transcribe, notimestamps
        return [50258, 50259, 50359, 50363], 50257
    if n_vocab == 51866:          # large-v3 vocabulary
        return [50258, 50259, 50360, 50364], 50257
    raise ValueError(f"unexpected n_vocab {n_vocab}")


# ---------------------------------------------------------------------------------------
# Audio


def read_wav(path):
    """16 kHz mono PCM16 WAV -> float32 samples in [-1, 1) (int16 / 32768, exact)."""
    with wave.open(path, "rb") as w:
        if w.getnchannels() != 1 or w.getsampwidth() != 2 or w.getframerate() != 16000:
            raise ValueError(f"{path}: need 16 kHz mono PCM16, got "
                             f"{w.getnchannels()} ch, {8 * w.getsampwidth()} bit, "
                             f"{w.getframerate()} Hz")
        pcm = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
    return pcm.astype(np.float32) / np.float32(32768.0)


def mel_window(audio, n_mels):
    """First 30 s window: pad/trim raw audio to 480000 samples, then log-mel [n_mels, 3000]."""
    audio = whisper.pad_or_trim(audio, N_SAMPLES)
    mel = whisper.log_mel_spectrogram(torch.from_numpy(audio), n_mels=n_mels)
    assert mel.shape == (n_mels, 3000), mel.shape
    return mel


def save_f32(path, tensor):
    arr = tensor.detach().cpu().numpy() if isinstance(tensor, torch.Tensor) else tensor
    np.ascontiguousarray(arr, dtype="<f4").tofile(path)


def save_ids(path, ids):
    with open(path, "w") as f:
        f.write(" ".join(str(int(i)) for i in ids) + "\n")


# ---------------------------------------------------------------------------------------
# CTranslate2 model.bin reader (binary version 6; layout in docs/GOLDEN.md)

CT2_DTYPES = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16}


def read_ct2(path):
    with open(path, "rb") as f:
        data = f.read()
    pos = 0

    def u(fmt):
        nonlocal pos
        vals = struct.unpack_from("<" + fmt, data, pos)
        pos += struct.calcsize("<" + fmt)
        return vals[0] if len(vals) == 1 else vals

    def string():
        nonlocal pos
        n = u("H")
        if n == 0 or data[pos + n - 1] != 0:
            raise ValueError("bad CT2 string")
        s = data[pos:pos + n - 1].decode("utf-8")
        pos += n
        return s

    version = u("I")
    if version != 6:
        raise ValueError(f"CT2 binary version {version}, expected 6")
    spec = string()
    revision = u("I")
    n_vars = u("I")
    tensors = {}
    for _ in range(n_vars):
        name = string()
        rank = u("B")
        dims = [u("I") for _ in range(rank)]
        dtype = u("B")
        nbytes = u("I")
        if dtype not in CT2_DTYPES:
            raise ValueError(f"{name}: unsupported dtype {dtype}")
        arr = np.frombuffer(data, dtype=CT2_DTYPES[dtype], count=nbytes //
                            np.dtype(CT2_DTYPES[dtype]).itemsize, offset=pos)
        if arr.size != int(np.prod(dims)):
            raise ValueError(f"{name}: {nbytes} bytes for dims {dims}")
        tensors[name] = arr.reshape(dims)
        pos += nbytes
    n_alias = u("I")
    for _ in range(n_alias):
        alias, target = string(), string()
        tensors[alias] = tensors[target]
    if pos != len(data):
        raise ValueError(f"{len(data) - pos} trailing bytes")
    return spec, revision, tensors


def load_ct2_whisper(ct2_dir):
    spec, revision, t = read_ct2(os.path.join(ct2_dir, "model.bin"))
    assert spec == "WhisperSpec", spec
    # weights are float16 (or float32); the int8/int16 scalars are flags and counts
    # (num_heads, activation, pre_norm, alignment_heads, ...), not weights: skip them
    f32 = {k: torch.from_numpy(np.asarray(v, dtype=np.float32).copy()) for k, v in t.items()
           if v.dtype.kind == "f"}

    n_state, n_mels, _ = f32["encoder/conv1/weight"].shape
    n_enc = len({m.group(1) for k in t if (m := re.match(r"encoder/layer_(\d+)/", k))})
    n_dec = len({m.group(1) for k in t if (m := re.match(r"decoder/layer_(\d+)/", k))})

    def heads(side):
        v = t.get(f"{side}/num_heads")
        return int(v.reshape(-1)[0]) if v is not None else n_state // 64

    dims = ModelDimensions(
        n_mels=n_mels, n_audio_ctx=f32["encoder/position_encodings/encodings"].shape[0],
        n_audio_state=n_state, n_audio_head=heads("encoder"), n_audio_layer=n_enc,
        n_vocab=f32["decoder/embeddings/weight"].shape[0],
        n_text_ctx=f32["decoder/position_encodings/encodings"].shape[0],
        n_text_state=n_state, n_text_head=heads("decoder"), n_text_layer=n_dec)

    sd = {}
    d = n_state

    def lin(dst, src):
        sd[f"{dst}.weight"] = f32[f"{src}/weight"]
        sd[f"{dst}.bias"] = f32[f"{src}/bias"]

    def ln(dst, src):
        sd[f"{dst}.weight"] = f32[f"{src}/gamma"]
        sd[f"{dst}.bias"] = f32[f"{src}/beta"]

    def qkv(dst, src):  # fused rows q;k;v, bias q_b;0;v_b; openai's key has no bias
        w, b = f32[f"{src}/weight"], f32[f"{src}/bias"]
        assert torch.all(b[d:2 * d] == 0), f"{src}: key bias not zero"
        sd[f"{dst}.query.weight"], sd[f"{dst}.query.bias"] = w[:d], b[:d]
        sd[f"{dst}.key.weight"] = w[d:2 * d]
        sd[f"{dst}.value.weight"], sd[f"{dst}.value.bias"] = w[2 * d:], b[2 * d:]

    lin("encoder.conv1", "encoder/conv1")
    lin("encoder.conv2", "encoder/conv2")
    sd["encoder.positional_embedding"] = f32["encoder/position_encodings/encodings"]
    for i in range(n_enc):
        p, s = f"encoder.blocks.{i}", f"encoder/layer_{i}"
        ln(f"{p}.attn_ln", f"{s}/self_attention/layer_norm")
        qkv(f"{p}.attn", f"{s}/self_attention/linear_0")
        lin(f"{p}.attn.out", f"{s}/self_attention/linear_1")
        ln(f"{p}.mlp_ln", f"{s}/ffn/layer_norm")
        lin(f"{p}.mlp.0", f"{s}/ffn/linear_0")
        lin(f"{p}.mlp.2", f"{s}/ffn/linear_1")
    ln("encoder.ln_post", "encoder/layer_norm")

    sd["decoder.token_embedding.weight"] = f32["decoder/embeddings/weight"]
    sd["decoder.positional_embedding"] = f32["decoder/position_encodings/encodings"]
    for i in range(n_dec):
        p, s = f"decoder.blocks.{i}", f"decoder/layer_{i}"
        ln(f"{p}.attn_ln", f"{s}/self_attention/layer_norm")
        qkv(f"{p}.attn", f"{s}/self_attention/linear_0")
        lin(f"{p}.attn.out", f"{s}/self_attention/linear_1")
        ln(f"{p}.cross_attn_ln", f"{s}/attention/layer_norm")
        lin(f"{p}.cross_attn.query", f"{s}/attention/linear_0")
        w, b = f32[f"{s}/attention/linear_1/weight"], f32[f"{s}/attention/linear_1/bias"]
        assert torch.all(b[:d] == 0), f"{s}: cross key bias not zero"
        sd[f"{p}.cross_attn.key.weight"] = w[:d]
        sd[f"{p}.cross_attn.value.weight"], sd[f"{p}.cross_attn.value.bias"] = w[d:], b[d:]
        lin(f"{p}.cross_attn.out", f"{s}/attention/linear_2")
        ln(f"{p}.mlp_ln", f"{s}/ffn/layer_norm")
        lin(f"{p}.mlp.0", f"{s}/ffn/linear_0")
        lin(f"{p}.mlp.2", f"{s}/ffn/linear_1")
    ln("decoder.ln", "decoder/layer_norm")

    model = Whisper(dims)
    model.load_state_dict(sd, strict=True)
    model.eval()
    return model


# ---------------------------------------------------------------------------------------
# Deterministic random weights (contract with the C side; spec in docs/GOLDEN.md)

M64 = (1 << 64) - 1


def fnv1a64(name):
    h = 0xCBF29CE484222325
    for byte in name.encode("utf-8"):
        h = ((h ^ byte) * 0x100000001B3) & M64
    return h


def prng_uniform(name, seed, n, chunk=1 << 22):
    """r_j in [-1, 1) as float32 for j = 0..n-1 (splitmix64 finaliser on s + (j+1)*golden)."""
    s = np.uint64(fnv1a64(name) ^ seed)
    out = np.empty(n, dtype=np.float32)
    with np.errstate(over="ignore"):
        for lo in range(0, n, chunk):
            hi = min(n, lo + chunk)
            j1 = np.arange(lo + 1, hi + 1, dtype=np.uint64)
            z = s + j1 * np.uint64(0x9E3779B97F4A7C15)
            z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            z = z ^ (z >> np.uint64(31))
            u = (z >> np.uint64(40)).astype(np.float32) * np.float32(2.0 ** -24)
            out[lo:hi] = np.float32(2.0) * u - np.float32(1.0)
    return out


def is_ln_weight(name):
    # "ln.weight" also covers "_ln.weight" (attn_ln, cross_attn_ln, mlp_ln) and decoder.ln
    return name.endswith("ln.weight") or name.endswith("ln_post.weight")


def rand_scale(name, shape):
    """Returns (kind, float32 scale) for a non-LayerNorm-weight tensor."""
    if name.endswith(".bias"):
        return "bias", np.float32(0.02)
    if name == "decoder.token_embedding.weight":
        return "embedding", np.float32(1.0)
    if name in ("encoder.positional_embedding", "decoder.positional_embedding"):
        return "positional", np.float32(0.1)
    if len(shape) == 3:  # conv [out, in, 3]
        return "conv", np.float32(1.0 / math.sqrt(shape[1] * shape[2]))
    if len(shape) == 2:  # linear [out, in]
        return "linear", np.float32(1.0 / math.sqrt(shape[1]))
    raise ValueError(f"no scale rule for {name} {shape}")


def rand_tensor(name, shape, seed):
    n = int(np.prod(shape))
    r = prng_uniform(name, seed, n)
    if is_ln_weight(name):
        v = np.float32(1.0) + r * np.float32(0.1)
        kind, scale = "ln_weight", np.float32(0.1)
    else:
        kind, scale = rand_scale(name, shape)
        v = r * scale
    assert v.dtype == np.float32
    return v.reshape(shape), kind, scale


def build_random_whisper(dims, seed, manifest_path=None):
    model = Whisper(dims)
    sd = model.state_dict()
    rows = []
    new = {}
    for name, t in sd.items():
        v, kind, scale = rand_tensor(name, tuple(t.shape), seed)
        new[name] = torch.from_numpy(v)
        rows.append(f"{name}\t{'x'.join(map(str, t.shape))}\t{kind}\t{float(scale)!r}\t"
                    + " ".join(f"{x:.9g}" for x in v.reshape(-1)[:4]))
    model.load_state_dict(new, strict=True)
    model.eval()
    if manifest_path:
        with open(manifest_path, "w") as f:
            f.write("# name\tshape\tkind\tscale(float32)\tfirst 4 values (%.9g)\n")
            f.write("\n".join(rows) + "\n")
    return model


RAND_MODELS = {
    # name: (n_mels, n_vocab, d_model, n_head, n_layer, seed)
    "rand-base": (80, 51865, 512, 8, 6, 1),
    "rand-small": (80, 51864, 768, 12, 12, 2),
    "rand-tiny128": (128, 51866, 384, 6, 4, 3),
}


def rand_dims(n_mels, n_vocab, d, n_head, n_layer):
    return ModelDimensions(n_mels=n_mels, n_audio_ctx=1500, n_audio_state=d,
                           n_audio_head=n_head, n_audio_layer=n_layer, n_vocab=n_vocab,
                           n_text_ctx=448, n_text_state=d, n_text_head=n_head,
                           n_text_layer=n_layer)


# ---------------------------------------------------------------------------------------
# Decoding


@torch.no_grad()
def argmax_run(model, enc, prefix, eot, max_new):
    """Plain greedy, no suppression: prefill the prefix, then one token per step with
    openai's KV-cache hooks. Returns (complete sequence, first-step logits, logits of the
    pass that produced the last emitted token, min top1-top2 margin over the steps)."""
    cache, hooks = model.install_kv_cache_hooks()
    try:
        seq = list(prefix)
        tokens = torch.tensor([prefix])
        first_logits, margin = None, math.inf
        for _ in range(max_new):
            logits = model.decoder(tokens, enc, kv_cache=cache)[0, -1]
            if first_logits is None:
                first_logits = logits.clone()
            top2 = torch.topk(logits, 2).values
            margin = min(margin, float(top2[0] - top2[1]))
            last_logits = logits
            nxt = int(torch.argmax(logits))
            seq.append(nxt)
            if nxt == eot:
                break
            tokens = torch.tensor([[nxt]])
        return seq, first_logits, last_logits, margin
    finally:
        for h in hooks:
            h.remove()


# ---------------------------------------------------------------------------------------
# WER


def normalise(text):
    """lowercase; whitespace -> space; delete every character except a-z, 0-9, ' and space;
    collapse spaces. Numbers are not spelled out."""
    text = re.sub(r"\s", " ", text.lower())
    text = re.sub(r"[^a-z0-9' ]", "", text)
    return " ".join(text.split())


def word_errors(ref, hyp):
    r, h = ref.split(), hyp.split()
    prev = list(range(len(h) + 1))
    for i in range(1, len(r) + 1):
        cur = [i] + [0] * len(h)
        for j in range(1, len(h) + 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (r[i - 1] != h[j - 1]))
        prev = cur
    return prev[len(h)], len(r)


# ---------------------------------------------------------------------------------------


def check_suppress_lists(ct2_dir, model):
    """CT2's config.json suppress lists vs the ones openai's decode builds itself
    (suppress_tokens "-1": non-speech symbols + specials; suppress_blank: " " and EOT)."""
    cfg_path = os.path.join(ct2_dir, "config.json")
    if not os.path.exists(cfg_path):
        return "no config.json"
    with open(cfg_path) as f:
        cfg = json.load(f)
    tok = whisper.tokenizer.get_tokenizer(model.is_multilingual,
                                          num_languages=model.num_languages,
                                          language="en", task="transcribe")
    ours = set(tok.non_speech_tokens) | {tok.transcribe, tok.translate, tok.sot, tok.sot_prev,
                                         tok.sot_lm, tok.no_speech}
    theirs = set(cfg.get("suppress_ids", []))
    begin = set(tok.encode(" ")) | {tok.eot}
    begin_ct2 = set(cfg.get("suppress_ids_begin", []))
    msg = (f"suppress_ids: ct2 {len(theirs)}, openai {len(ours)}, only ct2 "
           f"{sorted(theirs - ours)}, only openai {sorted(ours - theirs)}; "
           f"suppress_ids_begin: ct2 {sorted(begin_ct2)}, openai {sorted(begin)}")
    if "lang_ids" in cfg:
        langs, theirs = set(tok.all_language_tokens), set(cfg["lang_ids"])
        msg += (f"; lang_ids: ct2 {len(theirs)}, openai {len(langs)}, only ct2 "
                f"{sorted(theirs - langs)}, only openai {sorted(langs - theirs)}")
    return msg


REAL_MODELS = {
    # name: (args attribute holding the CT2 dir, write NAME.mel.f32, write run32.last_logits)
    "tiny.en": ("ct2", True, False),
    "base": ("ct2_base", False, True),
}


def run_real(args, model_name, clips, refs):
    ct2_attr, write_mel, write_last = REAL_MODELS[model_name]
    ct2_dir = getattr(args, ct2_attr)
    out = os.path.join(args.out, model_name)
    os.makedirs(out, exist_ok=True)
    model = load_ct2_whisper(ct2_dir)
    dims = model.dims
    prefix, eot = special_ids(dims.n_vocab)
    print(f"{model_name} dims: {dims}")
    tok = whisper.tokenizer.get_tokenizer(model.is_multilingual,
                                          num_languages=model.num_languages,
                                          language="en", task="transcribe")
    assert list(tok.sot_sequence_including_notimestamps) == prefix, \
        (tok.sot_sequence_including_notimestamps, prefix)
    assert tok.eot == eot, (tok.eot, eot)
    print(f"{model_name} {check_suppress_lists(ct2_dir, model)}")
    opts = whisper.DecodingOptions(language="en", without_timestamps=True, fp16=False,
                                   temperature=0.0)
    mel_ref_dir = os.path.join(args.out, "tiny.en")
    rows, totals, notes = [], {}, []
    for name, path in clips:
        t0 = time.time()
        mel = mel_window(read_wav(path), dims.n_mels)
        if write_mel:
            save_f32(os.path.join(out, f"{name}.mel.f32"), mel)
        else:
            # the C test reads ../tiny.en/NAME.mel.f32 for models without their own mel
            ref_path = os.path.join(mel_ref_dir, f"{name}.mel.f32")
            if dims.n_mels != 80 or not os.path.exists(ref_path):
                sys.exit(f"{model_name}/{name}: needs tiny.en's 80-bin mel {ref_path}")
            ref = np.fromfile(ref_path, dtype="<f4")
            if not np.array_equal(ref, mel.numpy().astype("<f4").reshape(-1)):
                sys.exit(f"{model_name}/{name}: mel differs from {ref_path}")
        with torch.no_grad():
            enc = model.embed_audio(mel[None])
        save_f32(os.path.join(out, f"{name}.enc.f32"), enc[0])

        run, first_logits, last_logits, margin = argmax_run(model, enc, prefix, eot,
                                                             MAX_NEW_RUN)
        save_f32(os.path.join(out, f"{name}.logits.f32"), first_logits)
        save_ids(os.path.join(out, f"{name}.run32.ids"), run)
        if write_last:
            save_f32(os.path.join(out, f"{name}.run32.last_logits.f32"), last_logits)

        res = whisper.decode(model, mel, opts)
        ids = prefix + list(res.tokens)
        if len(res.tokens) < (opts.sample_len or dims.n_text_ctx // 2):
            ids.append(eot)  # decode trims the EOT it stopped on; 224 tokens means none
        save_ids(os.path.join(out, f"{name}.ids"), ids)
        with open(os.path.join(out, f"{name}.txt"), "w") as f:
            f.write(res.text + "\n")

        n_cmp = min(len(ids), len(run))
        same = ids[:n_cmp] == run[:n_cmp]
        if not same:
            k = next(i for i in range(n_cmp) if ids[i] != run[i])
            notes.append(f"{name}: decode differs from plain argmax at position {k}: "
                         f"{ids[k]} vs {run[k]}")
        kind = "librivox" if name.startswith("librivox") else "espeak"
        ref = refs.get(name, "")
        errs, nwords = word_errors(normalise(ref), normalise(res.text))
        e, n = totals.get(kind, (0, 0))
        totals[kind] = (e + errs, n + nwords)
        rows.append((name, kind, errs, nwords, normalise(res.text), normalise(ref),
                     margin, same))
        print(f"{name}: {time.time() - t0:.1f}s  {errs}/{nwords}  "
              f"margin {margin:.3f}  {'=' if same else '!='}argmax  {res.text!r}")

    with open(os.path.join(out, "summary.tsv"), "w") as f:
        f.write("# eager openai-whisper decode (greedy, temperature 0, no timestamps, "
                f"suppress_tokens=-1 + suppress_blank) on {model_name} fp32\n")
        f.write("# normalisation: lowercase; delete all but a-z 0-9 ' and space; "
                "collapse spaces; numbers not spelled out\n")
        f.write("name\tset\terrors\tref_words\twer\thypothesis\treference\n")
        for name, kind, errs, nwords, hyp, ref, _, _ in rows:
            f.write(f"{name}\t{kind}\t{errs}\t{nwords}\t{errs / max(nwords, 1):.4f}\t"
                    f"{hyp}\t{ref}\n")
        for kind in ("librivox", "espeak"):
            if kind in totals:
                e, n = totals[kind]
                f.write(f"TOTAL-{kind}\t{kind}\t{e}\t{n}\t{e / max(n, 1):.4f}\t\t\n")
                print(f"WER {kind}: {e}/{n} = {100.0 * e / max(n, 1):.2f}%")
    print(f"min top1-top2 logit margin over run32 steps: "
          f"{min(r[6] for r in rows):.4f}")
    for n in notes:
        print("NOTE", n)


def run_random(args, name):
    n_mels, n_vocab, d, n_head, n_layer, seed = RAND_MODELS[name]
    out = os.path.join(args.out, name)
    os.makedirs(out, exist_ok=True)
    t0 = time.time()
    dims = rand_dims(n_mels, n_vocab, d, n_head, n_layer)
    model = build_random_whisper(dims, seed, os.path.join(out, "tensors.tsv"))
    t1 = time.time()
    clip = "librivox-0870"
    if n_mels == 80:
        mel = np.fromfile(os.path.join(args.out, "tiny.en", f"{clip}.mel.f32"),
                          dtype="<f4").reshape(80, 3000)
        mel = torch.from_numpy(mel.copy())
    else:
        mel = mel_window(read_wav(os.path.join(args.clips, f"{clip}.wav")), n_mels)
        save_f32(os.path.join(out, f"{clip}.mel{n_mels}.f32"), mel)
    prefix, eot = special_ids(n_vocab)
    with torch.no_grad():
        enc = model.embed_audio(mel[None])
    save_f32(os.path.join(out, f"{clip}.enc.f32"), enc[0])
    run, first_logits, last_logits, margin = argmax_run(model, enc, prefix, eot, MAX_NEW_RUN)
    save_f32(os.path.join(out, f"{clip}.logits.f32"), first_logits)
    # random weights make argmax repeat the last token (tied embedding dominates), so the
    # ids say little about the KV cache; the last pass's logits do
    save_f32(os.path.join(out, f"{clip}.run32.last_logits.f32"), last_logits)
    save_ids(os.path.join(out, f"{clip}.run32.ids"), run)
    with open(os.path.join(out, "info.tsv"), "w") as f:
        f.write(f"n_mels\t{n_mels}\nn_vocab\t{n_vocab}\nd_model\t{d}\nn_head\t{n_head}\n"
                f"n_layer\t{n_layer}\nn_audio_ctx\t1500\nn_text_ctx\t448\nseed\t{seed}\n"
                f"prefix\t{' '.join(map(str, prefix))}\neot\t{eot}\n"
                f"run32_min_top2_margin\t{margin:.6f}\n")
    print(f"{name}: weights {t1 - t0:.1f}s, total {time.time() - t0:.1f}s, "
          f"min margin {margin:.4f}, ids {' '.join(map(str, run))}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ct2", default="models/tiny.en-ct2", help="CTranslate2 tiny.en dir")
    ap.add_argument("--ct2-base", default="models/base-ct2",
                    help="CTranslate2 multilingual base dir (scripts/fetch-base-ct2.sh)")
    ap.add_argument("--clips", default="tests/data/clips")
    ap.add_argument("--out", default="tests/golden")
    ap.add_argument("--threads", type=int, default=2)
    all_models = ",".join(list(REAL_MODELS) + list(RAND_MODELS))
    ap.add_argument("--models", default=all_models,
                    help="comma-separated subset of " + all_models + " (base and the 80-bin "
                    "random models read tests/golden/tiny.en/*.mel.f32)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    t0 = time.time()

    clips = sorted((f[:-4], os.path.join(args.clips, f))
                   for f in os.listdir(args.clips) if f.endswith(".wav"))
    refs = {}
    with open(os.path.join(args.clips, "transcripts.tsv")) as f:
        for line in f:
            if line.strip():
                k, v = line.rstrip("\n").split("\t", 1)
                refs[k] = v
    for m in args.models.split(","):
        if m in REAL_MODELS:
            run_real(args, m, clips, refs)
        elif m in RAND_MODELS:
            run_random(args, m)
        else:
            sys.exit(f"unknown model {m}")
    print(f"total {time.time() - t0:.1f}s with {args.threads} threads, "
          f"torch {torch.__version__}, whisper {whisper.__version__}")


if __name__ == "__main__":
    main()
