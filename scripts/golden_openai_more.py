#!/usr/bin/env python3
"""openai-whisper 20250625's own transcribe() (eager fp32 on CPU, the tiny.en model golden.py
builds from the CTranslate2 weights) for the transcribe() options sotto's `import sotto as
whisper` took last: carry_initial_prompt (the initial prompt at the head of every window's
prompt), on a minute of clips joined (python/tests/made_audio.py LONG_CLIPS: two windows
and more). Writes tests/golden/openai/tiny.en.json (beside, not in, tests/golden/transcribe, whose
files tests/check_goldens.py checks with their windows): each case's keyword
arguments and openai's result dict (text, segments, language); python/tests/test_dropin.py
(test_openai_more_options_equal_openais) runs them through sotto.

Run from the repository root with the reference env (docs/GOLDEN.md):
  .venv-golden/bin/python scripts/golden_openai_more.py [--threads 2]
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# golden.py fixes the BLAS thread count from --threads (default 2) before numpy loads
import golden  # noqa: E402

import copy  # noqa: E402
import json  # noqa: E402

import whisper  # noqa: E402

ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python", "tests"))
import made_audio  # noqa: E402

IP = "Mr. John Dashwood, the Norland estate, his father and his mother-in-law."
# a prompt longer than the n_text_ctx / 2 - 1 = 223 tokens a window's prompt holds
LONG_IP = " ".join([IP] * 14)
CASES = [
    dict(temperature=0.0, initial_prompt=IP, carry_initial_prompt=True),
    dict(temperature=0.0, initial_prompt=IP, carry_initial_prompt=True, condition_on_previous_text=False),
    dict(temperature=0.0, initial_prompt=LONG_IP, carry_initial_prompt=True),
    dict(temperature=0.0, initial_prompt=IP, carry_initial_prompt=False),
    # suppress_tokens: none of the non-speech symbols (quotes, brackets, ... may come), and
    # the model's list with "." (13) and "," (11) added, as a str and as a list
    dict(temperature=0.0, suppress_tokens=""),
    dict(temperature=0.0, suppress_tokens="-1,13,11"),
    dict(suppress_tokens=[13, 11]),
]


def main():
    model = golden.load_ct2_whisper(os.path.join(ROOT, "models", "tiny.en-ct2"))
    audio = made_audio.joined(os.path.join(ROOT, "tests", "data", "clips"), made_audio.LONG_CLIPS)
    out = []
    for kw in CASES:
        with golden.torch.no_grad():
            # a copy: openai's DecodingTask extends a suppress_tokens list in place
            result = whisper.transcribe(model, audio, fp16=False, **copy.deepcopy(kw))
        out.append(dict(audio="long", kwargs=kw, result=result))
        print(f"{kw}: {len(result['segments'])} segments", file=sys.stderr)
    os.makedirs(os.path.join(ROOT, "tests", "golden", "openai"), exist_ok=True)
    path = os.path.join(ROOT, "tests", "golden", "openai", "tiny.en.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(dict(generator="openai-whisper " + whisper.__version__ + ", fp32 eager, torch "
                       + golden.torch.__version__, model="tiny.en-ct2", cases=out), f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
