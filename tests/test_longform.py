#!/usr/bin/env python3
"""`sotto transcribe -f json` against openai-whisper's own transcribe() on the same fp32
weights (tests/golden/transcribe/, made by scripts/golden_transcribe.py). Modes:

  exact    identical segments: seek, text, tokens, start and end (to 1e-9 s), and the
           same number of segments (greedy and beam search)
  default  the reference fell back to sampling in some windows (its *.windows.json says
           which temperatures it used): the segments of every window decoded at
           temperature 0, up to the first window that was not, are identical; after it the
           prompts differ and nothing is compared (the rest is reported)

With --min-kept=PCT:TEXT it also demands that PCT % of the words of TEXT (the reading's
reference text) are kept: matched in order (difflib over tests/wer.py's normalisation,
"Mr." read as "mister"), and prints the share the reference kept beside sotto's.

usage: test_longform.py SOTTO MODEL AUDIO GOLDEN.json MODE [--min-kept=PCT:TEXT] [SOTTO OPTIONS...]
"""
import difflib
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wer import normalise  # noqa: E402


def kept(ref_words, text):
    """How many of REF_WORDS TEXT keeps, in order."""
    hyp = normalise(re.sub(r"\bMr\.", "mister", text))
    sm = difflib.SequenceMatcher(a=ref_words, b=hyp, autojunk=False)
    return sum(b.size for b in sm.get_matching_blocks())


def seg_key(s):
    return (s["seek"], s["text"], tuple(s["tokens"]), round(s["start"], 9), round(s["end"], 9))


def main():
    sotto, model, audio, golden, mode = sys.argv[1:6]
    extra = sys.argv[6:]
    min_kept = None
    if extra and extra[0].startswith("--min-kept="):
        pct, text = extra.pop(0).split("=", 1)[1].split(":", 1)
        with open(text, encoding="utf-8") as f:
            min_kept = (float(pct), normalise(re.sub(r"\bMr\.", "mister", f.read())))
    out = subprocess.run([sotto, "transcribe", "-m", model, "--quiet", "-f", "json"] + extra + [audio],
                         check=True, capture_output=True, text=True).stdout
    got = json.loads(out)
    with open(golden, encoding="utf-8") as f:
        ref = json.load(f)
    gs, rs = got["segments"], ref["segments"]
    limit = len(rs)
    if mode == "default":
        with open(golden.replace(".json", ".windows.json"), encoding="utf-8") as f:
            windows = json.load(f)["windows"]
        first_sampled = next((w["seek"] for w in windows if w["temperature"] > 0), None)
        if first_sampled is not None:
            limit = sum(1 for s in rs if s["seek"] < first_sampled)
            print(f"the reference sampled from seek {first_sampled}: comparing its first {limit} segments")
    bad = 0
    for i in range(limit):
        if i >= len(gs) or seg_key(gs[i]) != seg_key(rs[i]):
            bad += 1
            if bad <= 5:
                print(f"segment {i} differs:\n  ref {seg_key(rs[i])}\n  got {seg_key(gs[i]) if i < len(gs) else None}")
    if limit == len(rs) and len(gs) != len(rs):
        bad += 1
        print(f"{len(gs)} segments, the reference has {len(rs)}")
    if limit == len(rs) and got["text"] != ref["text"]:
        bad += 1
        print("text differs")
    dl = max((abs(a["avg_logprob"] - b["avg_logprob"]) for a, b in zip(gs, rs[:limit])), default=0)
    dn = max((abs(a["no_speech_prob"] - b["no_speech_prob"]) for a, b in zip(gs, rs[:limit])), default=0)
    print(f"{limit} segments compared, {bad} differ; max |avg_logprob - ref| {dl:.2e}, "
          f"max |no_speech_prob - ref| {dn:.2e}; language {got['language']} (ref {ref['language']})")
    ok = bad == 0 and got["language"] == ref["language"]
    if min_kept:
        pct, words = min_kept
        k, kr = kept(words, got["text"]), kept(words, ref["text"])
        print(f"words kept: {k} / {len(words)} ({100 * k / len(words):.1f} %, at least {pct} % wanted); "
              f"the reference keeps {kr} ({100 * kr / len(words):.1f} %)")
        ok &= 100 * k >= pct * len(words)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
