#!/usr/bin/env python3
"""Long-form reference outputs: openai-whisper's own `whisper.transcribe()` on the long test
audio (tests/data/make_long.py), eager fp32 on CPU, with the models golden.py builds from
the CTranslate2 f16 weights. Writes, under tests/golden/transcribe/MODEL/:

  FILE.OPTS.json          the result: text, language, segments (id, seek, start, end, text,
                          tokens, temperature, avg_logprob, compression_ratio,
                          no_speech_prob, and words with word_timestamps)
  FILE.OPTS.windows.json  one record per 30 s window transcribe() decoded: seek, segment
                          size, every decode attempt (temperature, the decoder's initial
                          tokens incl. the prompt, decoded tokens, avg_logprob,
                          no_speech_prob, compression_ratio, why it fell back), the
                          temperature kept, whether the window was skipped as silence

and tests/golden/lang/base.json: model.detect_language on the first 30 s window (as
transcribe() makes it) of every clip, English and tests/data/clips/lang/.

Run from the repository root with the reference env (docs/GOLDEN.md):
  .venv-golden/bin/python scripts/golden_transcribe.py [--only tiny.en:long2:greedy,...]
  .venv-golden/bin/python scripts/golden_transcribe.py --list
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# golden.py fixes the BLAS thread count from --threads (default 2) before numpy loads
import golden  # noqa: E402

import argparse  # noqa: E402
import hashlib  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
import whisper  # noqa: E402
import whisper.decoding  # noqa: E402
from whisper.audio import N_FRAMES, N_SAMPLES, log_mel_spectrogram, pad_or_trim  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "data"))
import make_long  # noqa: E402

THRESHOLDS = dict(compression_ratio_threshold=2.4, logprob_threshold=-1.0,
                  no_speech_threshold=0.6)
PROMPT = ("Sense and Sensibility, by Jane Austen, read for LibriVox. "
          "Mr. John Dashwood, Elinor and Marianne.")
# transcribe() keyword arguments per option set, on top of fp16=False and THRESHOLDS
OPTION_SETS = {
    "greedy": dict(temperature=0.0, beam_size=None, best_of=None),
    "beam5": dict(temperature=0.0, beam_size=5),
    # the openai CLI's defaults (its np.arange temperatures print 0.6000000000000001;
    # these are transcribe()'s own tuple)
    "default": dict(temperature=(0.0, 0.2, 0.4, 0.6, 0.8, 1.0), beam_size=5, best_of=5,
                    condition_on_previous_text=True),
    # the defaults without the previous text as prompt: on a reading that repeats its
    # sentences the prompt leads tiny.en to skip some (docs/GOLDEN.md)
    "default_nocond": dict(temperature=(0.0, 0.2, 0.4, 0.6, 0.8, 1.0), beam_size=5, best_of=5,
                           condition_on_previous_text=False),
    "words": dict(temperature=0.0, beam_size=None, best_of=None, word_timestamps=True),
    "words_beam5": dict(temperature=0.0, beam_size=5, word_timestamps=True),
    # openai's skip of silences around hallucinations (needs word timestamps)
    "hallucination": dict(temperature=0.0, beam_size=None, best_of=None, word_timestamps=True,
                          hallucination_silence_threshold=2.0),
    "prompt": dict(temperature=0.0, beam_size=None, best_of=None, initial_prompt=PROMPT),
    "nocond": dict(temperature=0.0, beam_size=None, best_of=None,
                   condition_on_previous_text=False),
    # language: the clip's own (tests/data/clips/lang/transcripts.tsv), not detected: base
    # takes the espeak-ng German clip for Yiddish (tests/golden/lang/base.json)
    "translate": dict(temperature=0.0, beam_size=None, best_of=None, task="translate"),
}
RUNS = (  # (model, audio, option set); base is told language="en" (a clip: its own)
    [("tiny.en", "long2", o) for o in ("greedy", "beam5", "default", "words", "prompt", "nocond")]
    + [("tiny.en", "read5", o) for o in ("greedy", "beam5", "default")]
    + [("tiny.en", "libri5", o) for o in ("greedy", "default", "default_nocond")]
    + [("base", "long2", o) for o in ("greedy", "beam5", "default")]
    + [("tiny.en", f, o) for f in ("silence10", "noise10") for o in ("greedy", "default")]
    + [("base", "clip:espeak-ng-de", "translate")]
    # word timestamps on single clips (punctuation, numbers, contractions; a multilingual
    # start sequence and German), beam search, and the long reading
    + [("tiny.en", f"clip:{c}", "words") for c in ("librivox-0870", "espeak-ng-03", "espeak-ng-05",
                                                    "espeak-ng-07")]
    + [("base", f"clip:{c}", "words") for c in ("librivox-0920", "espeak-ng-de")]
    + [("tiny.en", "long2", "words_beam5"), ("tiny.en", "read5", "words")]
    # (not noise10: where every window is a hallucination the rule advances 1 s a window,
    # and the reference takes most of an hour)
    + [("tiny.en", f, "hallucination") for f in ("long2", "gaps10")]
)
MODELS = {"tiny.en": "models/tiny.en-ct2", "base": "models/base-ct2"}


# ---------------------------------------------------------------------------------------
# JSON with one line per segment / window attempt, numbers as Python's repr (exact)


def dump(obj, indent=0):
    pad = " " * indent
    if isinstance(obj, dict) and any(isinstance(v, (dict, list)) and v for v in obj.values()) \
            and indent < 4:
        items = [f'{pad} {json.dumps(k)}: {dump(v, indent + 1).lstrip()}' for k, v in obj.items()]
        return pad + "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list) and obj and any(isinstance(v, (dict, list)) for v in obj) \
            and indent < 4:
        return pad + "[\n" + ",\n".join(dump(v, indent + 1) for v in obj) + "\n" + pad + "]"
    return pad + json.dumps(obj, ensure_ascii=False)


def write_json(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(dump(obj) + "\n")
    os.replace(path + ".tmp", path)


# ---------------------------------------------------------------------------------------
# Per-window logging: hooks around the calls transcribe() makes


class WindowLog:
    """Records every model.decode call transcribe() makes, grouped by window. The window's
    seek comes from the mel view transcribe() passes to pad_or_trim (mel[:, seek:...] is a
    view of the whole-file mel, so its storage offset is seek)."""

    def __init__(self, model, opts):
        self.model, self.opts, self.windows = model, opts, []
        self.pending = None
        self.initial = None
        self.tmod = importlib.import_module("whisper.transcribe")

    def __enter__(self):
        self.orig_pad = self.tmod.pad_or_trim
        self.orig_decode = self.model.decode
        self.orig_init = whisper.decoding.DecodingTask._get_initial_tokens
        log = self

        def pad_hook(array, length=N_SAMPLES, **kw):
            if isinstance(array, torch.Tensor) and array.ndim == 2:
                log.pending = (array.storage_offset(), int(array.shape[-1]))
            return log.orig_pad(array, length, **kw)

        def init_hook(task):
            tokens = log.orig_init(task)
            log.initial = [int(t) for t in tokens]
            return tokens

        def decode_hook(segment, options):
            result = log.orig_decode(segment, options)
            if not log.windows or log.windows[-1]["_segment"] is not segment:
                seek, size = log.pending
                log.windows.append({"_segment": segment, "seek": seek, "segment_size": size,
                                    "attempts": []})
            log.windows[-1]["attempts"].append(log.attempt(options, result))
            return result

        self.tmod.pad_or_trim = pad_hook
        whisper.decoding.DecodingTask._get_initial_tokens = init_hook
        self.model.decode = decode_hook
        return self

    def __exit__(self, *exc):
        self.tmod.pad_or_trim = self.orig_pad
        whisper.decoding.DecodingTask._get_initial_tokens = self.orig_init
        del self.model.decode  # back to the class's method

    def attempt(self, options, r):
        th = self.opts
        reasons = []
        if r.compression_ratio > th["compression_ratio_threshold"]:
            reasons.append("compression_ratio")
        if r.avg_logprob < th["logprob_threshold"]:
            reasons.append("avg_logprob")
        silence = (r.no_speech_prob > th["no_speech_threshold"]
                   and r.avg_logprob < th["logprob_threshold"])
        return {"temperature": float(options.temperature), "beam_size": options.beam_size,
                "best_of": options.best_of, "prompt_len": len(options.prompt or []),
                "initial_tokens": self.initial, "tokens": [int(t) for t in r.tokens],
                "text": r.text, "avg_logprob": float(r.avg_logprob),
                "no_speech_prob": float(r.no_speech_prob),
                "compression_ratio": float(r.compression_ratio),
                "needs_fallback": bool(reasons) and not silence,
                "reasons": reasons + (["silence"] if silence and reasons else [])}

    def finish(self):
        th = self.opts
        out = []
        for i, w in enumerate(self.windows):
            last = w["attempts"][-1]
            skip = (last["no_speech_prob"] > th["no_speech_threshold"]
                    and not last["avg_logprob"] > th["logprob_threshold"])
            nxt = self.windows[i + 1]["seek"] if i + 1 < len(self.windows) else None
            out.append({"window": i, "seek": w["seek"], "segment_size": w["segment_size"],
                        "time_offset": w["seek"] / 100.0, "temperature": last["temperature"],
                        "skipped_no_speech": skip, "next_seek": nxt,
                        "attempts": w["attempts"]})
        return out


# ---------------------------------------------------------------------------------------


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def load_model(name, cache={}):
    if name not in cache:
        cache.clear()  # one model in memory at a time
        model = golden.load_ct2_whisper(MODELS[name])
        # as whisper.load_model(name) does; the CT2 config.json lists the same heads
        model.set_alignment_heads(whisper._ALIGNMENT_HEADS[name])
        cache[name] = model
    return cache[name]


def audio_path(args, name):
    if name.startswith("clip:"):
        clip = name[5:]
        for sub in ("", "lang"):
            p = os.path.join(ROOT, "tests", "data", "clips", sub, clip + ".wav")
            if os.path.exists(p):
                return p, clip
        sys.exit(f"no clip {clip}")
    return os.path.join(args.audio, name + ".wav"), name


def clip_language(clip):
    with open(os.path.join(ROOT, "tests", "data", "clips", "lang", "transcripts.tsv"),
              encoding="utf-8") as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if cols[0] == clip:
                return cols[1]
    return "en"


def run_one(args, model_name, audio_name, opt_name):
    model = load_model(model_name)
    path, file_name = audio_path(args, audio_name)
    audio = golden.read_wav(path)
    kw = dict(fp16=False, verbose=None, **THRESHOLDS)
    if model.is_multilingual:
        kw["language"] = clip_language(file_name) if audio_name.startswith("clip:") else "en"
    kw.update(OPTION_SETS[opt_name])
    torch.manual_seed(0)  # sampling at t > 0 draws from torch's generator
    t0 = time.time()
    with torch.no_grad(), WindowLog(model, kw) as log:
        res = whisper.transcribe(model, audio, **kw)
    seconds = time.time() - t0
    shown = {k: (list(v) if isinstance(v, tuple) else v) for k, v in kw.items() if k != "verbose"}
    meta = {"model": model_name, "weights": MODELS[model_name] + " (CTranslate2 f16 -> fp32)",
            "audio": os.path.relpath(path, ROOT) if audio_name.startswith("clip:")
            else f"tests/data/make_long.py {audio_name}",
            "audio_sha256": sha256(path), "audio_seconds": len(audio) / 16000.0,
            "transcribe_kwargs": shown, "whisper": whisper.__version__,
            "torch": torch.__version__, "threads": args.threads, "torch_seed": 0}
    if kw.get("initial_prompt"):
        tok = whisper.tokenizer.get_tokenizer(model.is_multilingual,
                                              num_languages=model.num_languages)
        meta["initial_prompt_tokens"] = tok.encode(" " + kw["initial_prompt"].strip())
    segments = []
    for s in res["segments"]:
        seg = {k: s[k] for k in ("id", "seek", "start", "end", "text", "tokens", "temperature",
                                 "avg_logprob", "compression_ratio", "no_speech_prob")}
        seg = {k: (float(v) if isinstance(v, (float, np.floating)) else v) for k, v in seg.items()}
        seg["tokens"] = [int(t) for t in seg["tokens"]]
        if "words" in s:
            seg["words"] = [{"word": w["word"], "start": float(w["start"]), "end": float(w["end"]),
                             "probability": float(w["probability"])} for w in s["words"]]
        segments.append(seg)
    out = {"meta": meta, "text": res["text"], "language": res["language"], "segments": segments}
    windows = log.finish()
    base = os.path.join(args.out, "transcribe", model_name, f"{file_name}.{opt_name}")
    write_json(base + ".json", out)
    write_json(base + ".windows.json", {"meta": meta, "windows": windows})
    temps = sorted({w["temperature"] for w in windows})
    print(f"{model_name} {file_name} {opt_name}: {seconds:.1f} s, {len(windows)} windows, "
          f"{sum(len(w['attempts']) for w in windows)} decodes, {len(segments)} segments, "
          f"temperatures {temps}, skipped {sum(w['skipped_no_speech'] for w in windows)}, "
          f"text {res['text'][:80]!r}", flush=True)
    return seconds


def detect_languages(args):
    """model.detect_language on the first window exactly as transcribe() builds it: the
    log-mel of the whole clip with 30 s of zeros appended, pad_or_trim to 3000 frames."""
    model = load_model("base")
    clips = []
    cdir = os.path.join(ROOT, "tests", "data", "clips")
    for sub, tsv in (("", "transcripts.tsv"), ("lang", "transcripts.tsv")):
        with open(os.path.join(cdir, sub, tsv), encoding="utf-8") as f:
            for line in f:
                if not line.strip():
                    continue
                cols = line.rstrip("\n").split("\t")
                clips.append((cols[0], os.path.join(sub, cols[0] + ".wav"),
                              cols[1] if sub else "en"))
    t0 = time.time()
    rows = []
    for name, rel, expect in clips:
        audio = golden.read_wav(os.path.join(cdir, rel))
        mel = log_mel_spectrogram(torch.from_numpy(audio), model.dims.n_mels, padding=N_SAMPLES)
        seg = pad_or_trim(mel, N_FRAMES)
        with torch.no_grad():
            token, probs = model.detect_language(seg)
        top = sorted(probs.items(), key=lambda kv: -kv[1])[:5]
        code = max(probs, key=probs.get)
        rows.append({"clip": "tests/data/clips/" + rel.replace(os.sep, "/"), "expected": expect,
                     "detected": code, "token": int(token), "top5": [[c, float(p)] for c, p in top],
                     "expected_prob": float(probs[expect])})
        print(f"lang {name}: {code} ({top[0][1]:.4f}) expected {expect}  top5 "
              + " ".join(f"{c}:{p:.3f}" for c, p in top), flush=True)
    write_json(os.path.join(args.out, "lang", "base.json"), {
        "meta": {"model": "base", "weights": MODELS["base"] + " (CTranslate2 f16 -> fp32)",
                 "how": "mel = log_mel_spectrogram(audio, 80, padding=N_SAMPLES); "
                        "model.detect_language(pad_or_trim(mel, N_FRAMES))",
                 "whisper": whisper.__version__, "torch": torch.__version__,
                 "threads": args.threads},
        "clips": rows})
    return time.time() - t0


def summary(args):
    """Markdown table of the committed results (for docs/GOLDEN.md)."""
    print("| model | file | options | windows | decodes | temperatures kept | skipped "
          "| segments | words | WER % |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for model_name, audio_name, opt in RUNS:
        file_name = audio_name[5:] if audio_name.startswith("clip:") else audio_name
        base = os.path.join(args.out, "transcribe", model_name, f"{file_name}.{opt}")
        if not os.path.exists(base + ".json"):
            continue
        with open(base + ".json", encoding="utf-8") as f:
            res = json.load(f)
        with open(base + ".windows.json", encoding="utf-8") as f:
            wins = json.load(f)["windows"]
        temps = {}
        for w in wins:
            temps[w["temperature"]] = temps.get(w["temperature"], 0) + 1
        kept = ", ".join(f"{t:g}: {n}" for t, n in sorted(temps.items()))
        wer = ""
        ref_path = os.path.join(args.audio, file_name + ".txt")
        if not audio_name.startswith("clip:") and os.path.exists(ref_path):
            with open(ref_path, encoding="utf-8") as f:
                ref = golden.normalise(f.read())
            errs, n = golden.word_errors(ref, golden.normalise(res["text"]))
            wer = f"{100.0 * errs / max(n, 1):.2f}"
        print(f"| {model_name} | {file_name} | {opt} | {len(wins)} | "
              f"{sum(len(w['attempts']) for w in wins)} | {kept} | "
              f"{sum(w['skipped_no_speech'] for w in wins)} | {len(res['segments'])} | "
              f"{len(res['text'].split())} | {wer} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "golden"))
    ap.add_argument("--audio", default=os.path.join(ROOT, "build", "longaudio"),
                    help="where make_long.py writes the long files (built if missing)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", default="", help="comma-separated MODEL:FILE:OPTS runs, or 'lang'")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--summary", action="store_true", help="table of the results written")
    args = ap.parse_args()
    if args.summary:
        return summary(args)
    if args.list:
        for r in RUNS:
            print(":".join(r))
        print("lang")
        return
    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    def parse(x):  # MODEL:FILE:OPTS, FILE may be clip:NAME
        model_name, rest = x.split(":", 1)
        return (model_name,) + tuple(rest.rsplit(":", 1))
    want = [parse(x) if x != "lang" else "lang"
            for x in args.only.split(",") if x] or list(RUNS) + ["lang"]
    unknown = [w for w in want if w != "lang" and w not in RUNS]
    if unknown:
        sys.exit(f"unknown runs {unknown}; see --list")
    files = sorted({w[1] for w in want if w != "lang" and not w[1].startswith("clip:")})
    if files:
        clips, texts = make_long.load_clips()
        os.makedirs(args.audio, exist_ok=True)
        for f in files:
            make_long.build(f, clips, texts, args.audio)
    t0 = time.time()
    timing = []
    for w in sorted(want, key=lambda w: (w == "lang", w[0] if w != "lang" else "")):
        if w == "lang":
            timing.append(("lang", detect_languages(args)))
        else:
            timing.append((":".join(w), run_one(args, *w)))
    for name, s in timing:
        print(f"time {name} {s:.1f} s")
    print(f"total {time.time() - t0:.1f} s with {args.threads} threads, torch {torch.__version__}, "
          f"whisper {whisper.__version__}")


if __name__ == "__main__":
    main()
