#!/usr/bin/env python3
"""golden_subtitles.py — openai-whisper's subtitle layout (whisper/utils.py
SubtitlesWriter.iterate_result: max_line_width, max_line_count, max_words_per_line,
highlight_words), for tests/cli/test_subtitles.sh.

The words come from sotto itself (`sotto transcribe --word-timestamps -f json` on the
signal below, tiny.en, greedy), written to OUT/pause.json; openai-whisper's own srt and vtt
writers then lay them out under each option set of OPTION_SETS into OUT/pause.NAME.srt and
.vtt. The test checks that sotto's words are still these, then that sotto's files with the
same options are these bytes: the layout is compared apart from the model's numbers (which
the long-form goldens check).

The signal: tests/data/clips/librivox-0870.wav and librivox-0880.wav, 5 s of silence, then
espeak-ng-01.wav (sox, as the test makes it): two segments in a row, then a pause past
openai's 3 s, where cues of max_line_count lines break.

usage: .venv-golden/bin/python scripts/golden_subtitles.py SOTTO MODEL [--out tests/golden/subtitles]
(.venv-golden: openai-whisper, made by scripts/setup-golden-env.sh; docs/GOLDEN.md)
"""
import argparse
import json
import os
import subprocess
import tempfile

from whisper.utils import get_writer

# name: (sotto's options, openai's writer arguments)
OPTION_SETS = {
    "w42": (["--max-line-width", "42"], {"max_line_width": 42}),
    "w42c2": (["--max-line-width", "42", "--max-line-count", "2"], {"max_line_width": 42, "max_line_count": 2}),
    "w20c1": (["--max-line-width", "20", "--max-line-count", "1"], {"max_line_width": 20, "max_line_count": 1}),
    "w8": (["--max-line-width", "8"], {"max_line_width": 8}),
    "n3": (["--max-words-per-line", "3"], {"max_words_per_line": 3}),
    "hl": (["--highlight-words"], {"highlight_words": True}),
    "hlw30c2": (["--highlight-words", "--max-line-width", "30", "--max-line-count", "2"],
                {"highlight_words": True, "max_line_width": 30, "max_line_count": 2}),
    "n2hl": (["--max-words-per-line", "2", "--highlight-words"], {"max_words_per_line": 2, "highlight_words": True}),
}


def make_signal(clips, path):
    """The test's signal, by the sox commands test_subtitles.sh runs."""
    part = path + ".part.wav"
    subprocess.run(["sox", f"{clips}/librivox-0870.wav", f"{clips}/librivox-0880.wav", part, "pad", "0", "5"],
                   check=True)
    subprocess.run(["sox", part, f"{clips}/espeak-ng-01.wav", path], check=True)
    os.remove(part)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sotto")
    ap.add_argument("model")
    ap.add_argument("--out", default="tests/golden/subtitles")
    ap.add_argument("--clips", default="tests/data/clips")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        wav = os.path.join(tmp, "pause.wav")
        make_signal(a.clips, wav)
        js = os.path.join(a.out, "pause.json")
        subprocess.run([a.sotto, "transcribe", "-m", a.model, "-t", "2", "--quiet", "--word-timestamps",
                        "--beam-size", "1", "--no-fallback", "-f", "json", "-o", js, wav], check=True)
    with open(js, encoding="utf-8") as f:
        result = json.load(f)
    for name, (_, kwargs) in OPTION_SETS.items():
        args = {"max_line_width": None, "max_line_count": None, "highlight_words": False,
                "max_words_per_line": None, **kwargs}
        for fmt in ("srt", "vtt"):
            with open(os.path.join(a.out, f"pause.{name}.{fmt}"), "w", encoding="utf-8") as f:
                get_writer(fmt, a.out).write_result(result, f, **args)
    with open(os.path.join(a.out, "option_sets.tsv"), "w", encoding="utf-8") as f:
        for name, (opts, _) in OPTION_SETS.items():
            f.write(name + "\t" + " ".join(opts) + "\n")


if __name__ == "__main__":
    main()
