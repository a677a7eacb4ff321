#!/usr/bin/env python3
"""Word error rate of `sotto transcribe` on the LibriVox test clips, against the eager
PyTorch reference's WER on the same clips (its transcripts are committed as
tests/golden/<model>/NAME.txt). Passes when the two are equal.

Normalisation (stated, applied to reference and hypotheses alike): lowercase; hyphens
and whitespace become spaces; every character other than a-z, 0-9, apostrophe and space
is removed; spaces are collapsed. Numbers are not spelled out.

usage: wer.py SOTTO MODEL CLIPS_DIR GOLDEN_DIR [LANGUAGE] [--max-diff POINTS]
--max-diff allows sotto's WER to exceed eager's by at most POINTS percentage points
(quantised weights); the default 0 demands the same error count. sotto decodes as the
eager reference did (openai `decode`: greedy, no timestamps, one window per clip):
`--no-timestamps --beam-size 1 --no-fallback`.
"""
import os
import re
import subprocess
import sys
import tempfile


def normalise(text):
    text = re.sub(r"[\s\-]+", " ", text.lower())
    text = re.sub(r"[^a-z0-9' ]", "", text)
    return text.split()


def edits(ref, hyp):
    d = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, d[0] = d[0], i
        for j, h in enumerate(hyp, 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (r != h))
    return d[len(hyp)]


def main():
    args, max_diff = sys.argv[1:], 0.0
    if "--max-diff" in args:
        i = args.index("--max-diff")
        max_diff = float(args[i + 1])
        del args[i:i + 2]
    if len(args) < 4:
        raise SystemExit(__doc__)
    sotto, model, clips, golden = args[:4]
    refs = {}
    for line in open(f"{clips}/transcripts.tsv", encoding="utf-8"):
        name, text = line.rstrip("\n").split("\t", 1)
        refs[name] = text
    names = sorted(n for n in refs if n.startswith("librivox-"))
    out_dir = tempfile.mkdtemp(prefix="sotto-wer-")
    cmd = [sotto, "transcribe", "-m", model, "--quiet", "--no-timestamps", "--beam-size", "1", "--no-fallback",
           "--output-dir", out_dir] + [f"{clips}/{n}.wav" for n in names]
    if len(args) > 4:
        cmd += ["-l", args[4]]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    hyps = {}
    for n in names:
        with open(os.path.join(out_dir, n + ".txt"), encoding="utf-8") as f:
            hyps[n] = " ".join(line.strip() for line in f if line.strip())
        os.remove(os.path.join(out_dir, n + ".txt"))
    os.rmdir(out_dir)
    words = sotto_errors = eager_errors = 0
    print(f"{'clip':16} {'words':>5} {'sotto':>5} {'eager':>5}  transcript")
    for n in names:
        ref = normalise(refs[n])
        eager = open(f"{golden}/{n}.txt", encoding="utf-8").read().strip()
        es, ee = edits(ref, normalise(hyps[n])), edits(ref, normalise(eager))
        words, sotto_errors, eager_errors = words + len(ref), sotto_errors + es, eager_errors + ee
        print(f"{n:16} {len(ref):5} {es:5} {ee:5}  {hyps[n]}")
        if hyps[n] != eager:
            print(f"  transcript differs from eager: {eager!r}")
    ws, we = 100.0 * sotto_errors / words, 100.0 * eager_errors / words
    print(f"WER over {len(names)} LibriVox clips ({words} words): sotto {ws:.2f}% eager {we:.2f}%")
    ok = sotto_errors == eager_errors if max_diff == 0 else ws - we <= max_diff
    print(f"summary: wer_sotto {ws:.2f} wer_eager {we:.2f}")
    print(f"{int(ok)} passed, {int(not ok)} failed")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
