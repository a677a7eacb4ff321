#!/usr/bin/env python3
"""faster-whisper / CTranslate2 side of bench/run.sh. Prints one JSON object.

usage: fw_bench.py engine  MODEL_DIR COMPUTE_TYPE THREADS RUNS WINDOW.wav TOKENS
       fw_bench.py e2e     MODEL_DIR COMPUTE_TYPE THREADS LONG.wav
       fw_bench.py longform MODEL_DIR COMPUTE_TYPE THREADS WAV default|greedy
       fw_bench.py batched MODEL_DIR COMPUTE_TYPE THREADS WAV BATCH_SIZE
       fw_bench.py rand    SIZE OUT_DIR     (random-weight CTranslate2 model, sizes base/small)

engine: the same figures as `sotto bench`, each the median of RUNS runs, no warm-up
(bench/run.sh uses RUNS = 1: first call in a fresh process, as for sotto and whisper-cli): load_ms (ctranslate2.models.Whisper construction), encode_ms (Whisper.encode
of one [1, 80, 3000] log-mel window, computed by faster-whisper's FeatureExtractor from
the first 30 s of WINDOW.wav; the mel itself is not timed), prefill_ms (generate on the
encoder output, forced prefix plus the first token), step_ms
((generate with TOKENS new tokens, <|endoftext|> suppressed so exactly TOKENS come out)
minus prefill, divided by TOKENS - 1), greedy (beam_size 1), no timestamps. (ctranslate2 4.8.5 returns max_length // 2 new
tokens for this Whisper model, hence max_length 2 and 2 * TOKENS; the counts are checked.)
e2e: WhisperModel.transcribe of the whole file, greedy, temperature 0 (no fallback),
without_timestamps, condition_on_previous_text False, no VAD; prints the wall time of
load + transcribe and the text.
"""
import json
import statistics
import sys
import time
import wave

import numpy as np


def read_wav(path):
    with wave.open(path, "rb") as w:
        assert w.getframerate() == 16000 and w.getnchannels() == 1 and w.getsampwidth() == 2
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / 32768.0


def peak_rss_mb():
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def engine(model_dir, ct, threads, runs, wav, tokens):
    import ctranslate2
    from faster_whisper.feature_extractor import FeatureExtractor

    ms = lambda t0: (time.perf_counter() - t0) * 1000.0
    load = []
    for _ in range(runs):
        t0 = time.perf_counter()
        model = ctranslate2.models.Whisper(model_dir, device="cpu", compute_type=ct,
                                           intra_threads=threads, inter_threads=1)
        load.append(ms(t0))
    audio = read_wav(wav)[: 16000 * 30]
    fe = FeatureExtractor(feature_size=model.n_mels)
    feats = fe(audio, padding=fe.n_samples - audio.shape[0])[:, :3000]
    feats = np.ascontiguousarray(feats[None], dtype=np.float32)
    sv = ctranslate2.StorageView.from_array(feats)
    prompt = [[50257, 50362]] if not model.is_multilingual else [[50258, 50259, 50359, 50363]]
    eot = 50256 if not model.is_multilingual else 50257

    enc, pre, full = [], [], []
    out = None
    for r in range(runs):
        t0 = time.perf_counter()
        out = model.encode(sv, to_cpu=False)
        enc.append(ms(t0))
    for r in range(runs):
        t0 = time.perf_counter()
        res = model.generate(out, prompt, beam_size=1, max_length=2, suppress_blank=True,
                             suppress_tokens=[-1, eot], return_scores=False)
        pre.append(ms(t0))
        n1 = len(res[0].sequences_ids[0])
        t0 = time.perf_counter()
        res = model.generate(out, prompt, beam_size=1, max_length=2 * tokens, suppress_blank=True,
                             suppress_tokens=[-1, eot], return_scores=False)
        full.append(ms(t0))
        nf = len(res[0].sequences_ids[0])
    med = statistics.median
    print(json.dumps({
        "engine": "faster-whisper", "ctranslate2": ctranslate2.__version__, "compute_type": ct,
        "threads": threads, "runs": runs, "load_ms": round(med(load), 2),
        "encode_ms": round(med(enc), 2), "prefill_ms": round(med(pre), 3), "prefill_tokens": len(prompt[0]),
        "step_ms": round((med(full) - med(pre)) / max(1, nf - n1), 3), "step_tokens": nf - n1,
        "peak_rss_mb": round(peak_rss_mb(), 1)}))


def e2e(model_dir, ct, threads, wav):
    from faster_whisper import WhisperModel

    t0 = time.perf_counter()
    model = WhisperModel(model_dir, device="cpu", compute_type=ct, cpu_threads=threads, num_workers=1)
    t1 = time.perf_counter()
    segs, info = model.transcribe(read_wav(wav), language="en", beam_size=1, best_of=1, temperature=0.0,
                                  without_timestamps=True, condition_on_previous_text=False,
                                  vad_filter=False)
    text = " ".join(s.text.strip() for s in segs)
    t2 = time.perf_counter()
    print(json.dumps({"engine": "faster-whisper", "compute_type": ct, "threads": threads,
                      "load_ms": round((t1 - t0) * 1000, 1), "wall_ms": round((t2 - t0) * 1000, 1),
                      "audio_s": round(info.duration, 3), "text": text}))


def longform(model_dir, ct, threads, wav, mode):
    """WhisperModel.transcribe with faster-whisper's defaults (beam 5, best of 5, the
    temperature fallback, timestamps, conditioning on previous text, no VAD) or greedy
    (beam 1, temperature 0 only), language en; the wall time of load + transcribe."""
    from faster_whisper import WhisperModel

    t0 = time.perf_counter()
    model = WhisperModel(model_dir, device="cpu", compute_type=ct, cpu_threads=threads, num_workers=1)
    kw = {} if mode == "default" else dict(beam_size=1, best_of=1, temperature=0.0)
    segs, info = model.transcribe(read_wav(wav), language="en", **kw)
    text = "".join(s.text for s in segs)
    t1 = time.perf_counter()
    print(json.dumps({"engine": "faster-whisper", "compute_type": ct, "threads": threads, "mode": mode,
                      "wall_ms": round((t1 - t0) * 1000, 1), "audio_s": round(info.duration, 3), "text": text}))


def batched(model_dir, ct, threads, wav, batch_size):
    """BatchedInferencePipeline(model).transcribe(batch_size=BATCH_SIZE) with its other
    defaults (beam 5, VAD chunks, no timestamps), language en; load + transcribe timed."""
    from faster_whisper import BatchedInferencePipeline, WhisperModel

    t0 = time.perf_counter()
    model = WhisperModel(model_dir, device="cpu", compute_type=ct, cpu_threads=threads, num_workers=1)
    segs, info = BatchedInferencePipeline(model).transcribe(read_wav(wav), language="en", batch_size=batch_size)
    text = "".join(s.text for s in segs)
    t1 = time.perf_counter()
    print(json.dumps({"engine": "faster-whisper batched", "compute_type": ct, "threads": threads,
                      "batch_size": batch_size, "wall_ms": round((t1 - t0) * 1000, 1),
                      "audio_s": round(info.duration, 3), "text": text}))


def rand(size, out_dir):
    """A CTranslate2 Whisper model of the given size with random weights (N(0, 0.02);
    LayerNorm gains 1 + N(0, 0.02)), stored f16 like the real CTranslate2 models, with the
    English-only vocabulary and config of tiny.en. Only for timing: bench/run.sh gives
    the same file to all three engines (sotto convert, bench/ct2_to_ggml.py)."""
    import os
    import shutil
    from ctranslate2.specs import whisper_spec

    dims = {"base": (6, 512, 8), "small": (12, 768, 12)}[size]
    layers, d, heads = dims
    spec = whisper_spec.WhisperSpec(layers, heads, layers, heads)
    rng = np.random.default_rng(0)
    n_vocab, n_mels = 51864, 80

    enc, dec = spec.encoder, spec.decoder
    r = lambda *shape: rng.standard_normal(shape, dtype=np.float32) * 0.02
    # no two tensors equal: ctranslate2 would store equal ones as aliases
    ones = lambda n: 1.0 + r(n)
    zeros = lambda n: r(n)

    def ln(x, n):
        x.gamma, x.beta = ones(n), zeros(n)

    def lin(x, o, i):
        x.weight, x.bias = r(o, i), zeros(o)

    enc.conv1.weight, enc.conv1.bias = r(d, n_mels, 3), zeros(d)
    enc.conv2.weight, enc.conv2.bias = r(d, d, 3), zeros(d)
    enc.position_encodings.encodings = r(1500, d)
    ln(enc.layer_norm, d)
    for L in enc.layer:
        ln(L.self_attention.layer_norm, d)
        lin(L.self_attention.linear[0], 3 * d, d)
        lin(L.self_attention.linear[1], d, d)
        ln(L.ffn.layer_norm, d)
        lin(L.ffn.linear_0, 4 * d, d)
        lin(L.ffn.linear_1, d, 4 * d)
    dec.embeddings.weight = r(n_vocab, d)
    dec.position_encodings.encodings = r(448, d)
    ln(dec.layer_norm, d)
    dec.projection.weight = dec.embeddings.weight  # tied, as in Whisper
    for L in dec.layer:
        ln(L.self_attention.layer_norm, d)
        lin(L.self_attention.linear[0], 3 * d, d)
        lin(L.self_attention.linear[1], d, d)
        ln(L.attention.layer_norm, d)
        lin(L.attention.linear[0], d, d)
        lin(L.attention.linear[1], 2 * d, d)
        lin(L.attention.linear[2], d, d)
        ln(L.ffn.layer_norm, d)
        lin(L.ffn.linear_0, 4 * d, d)
        lin(L.ffn.linear_1, d, 4 * d)
    vocab = [line for line in open(os.path.join(os.path.dirname(__file__), "..", "models", "tiny.en-ct2",
                                                "vocabulary.txt"), encoding="utf-8").read().split("\n") if line]
    spec.register_vocabulary(vocab)
    spec.validate()
    spec.optimize(quantization="float16")
    os.makedirs(out_dir, exist_ok=True)
    spec.save(out_dir)
    cfg = os.path.join(os.path.dirname(__file__), "..", "models", "tiny.en-ct2", "config.json")
    shutil.copy(cfg, os.path.join(out_dir, "config.json"))


if __name__ == "__main__":
    a = sys.argv[1:]
    if a and a[0] == "engine" and len(a) == 7:
        engine(a[1], a[2], int(a[3]), int(a[4]), a[5], int(a[6]))
    elif a and a[0] == "e2e" and len(a) == 5:
        e2e(a[1], a[2], int(a[3]), a[4])
    elif a and a[0] == "longform" and len(a) == 6:
        longform(a[1], a[2], int(a[3]), a[4], a[5])
    elif a and a[0] == "batched" and len(a) == 6:
        batched(a[1], a[2], int(a[3]), a[4], int(a[5]))
    elif a and a[0] == "rand" and len(a) == 3:
        rand(a[1], a[2])
    else:
        raise SystemExit(__doc__)
