#!/usr/bin/env python3
"""More goldens of faster-whisper 1.2.1 (ctranslate2 4.8.5, float32), beside
scripts/golden_faster_whisper.py's (whose files stay as they are): BatchedInferencePipeline
without the VAD (vad_filter=False, clip_timestamps), with multilingual=True, and
repetition_penalty / no_repeat_ngram_size on WhisperModel and the pipeline, and the
pipeline's initial_prompt, hotwords, prefix, vad_parameters, max_new_tokens and
suppress_tokens, on the
CTranslate2 weights sotto reads too. Writes tests/golden/faster-whisper/more-SET.json:
each case's class ("model" or "pipeline"), transcribe() keyword arguments, segments and
info; a case faster-whisper refuses holds its exception's type and message instead.
python/tests/test_fw_golden_more.py runs the same cases through sotto.

usage: .cache/fw-venv/bin/python scripts/golden_faster_whisper_more.py MODELS_DIR CLIPS_DIR OUT_DIR [SET,...]
(SET: tiny.en, base, options-tiny.en (the pipeline's prompt and cut options, on tiny.en),
penalties-tiny.en (length_penalty and prompt_reset_on_temperature), prefix-base (a prefix in
Japanese), prompt-ids-tiny.en (initial_prompt as token ids);
default tiny.en and base)"""
import copy
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from golden_faster_whisper import audio_of  # noqa: E402

SHORT = "librivox-0870.wav"
# (class, audio, kwargs)
TINY = [
    ("pipeline", SHORT, dict(vad_filter=False)),
    ("pipeline", SHORT, dict(vad_filter=False, without_timestamps=False, beam_size=1)),
    ("pipeline", SHORT, dict(vad_filter=False, word_timestamps=True)),
    ("pipeline", SHORT, dict(clip_timestamps=[{"start": 0.5, "end": 3.0}, {"start": 3.93, "end": 7.1}],
                             without_timestamps=False)),
    ("pipeline", SHORT, dict(vad_filter=False, repetition_penalty=1.5)),
    ("pipeline", SHORT, dict(vad_filter=False, no_repeat_ngram_size=2, without_timestamps=False)),
    ("model", SHORT, dict(beam_size=1, repetition_penalty=1.5)),
    ("model", SHORT, dict(repetition_penalty=1.3)),
    ("model", SHORT, dict(beam_size=1, repetition_penalty=0.9, without_timestamps=True)),
    ("model", SHORT, dict(beam_size=1, no_repeat_ngram_size=2)),
    ("model", SHORT, dict(no_repeat_ngram_size=1, without_timestamps=True)),
    ("model", SHORT, dict(beam_size=1, prefix="And Mister", repetition_penalty=2.0)),
    ("pipeline", "long", dict(vad_filter=False)),
    # (the audio is 52.5 s: the last clip runs past its end, as a clip may)
    ("pipeline", "long", dict(clip_timestamps=[{"start": 2, "end": 20}, {"start": 31.25, "end": 50},
                                               {"start": 50.2, "end": 58}], beam_size=1, without_timestamps=False)),
    ("pipeline", "long", dict(word_timestamps=True, without_timestamps=False)),
    ("pipeline", "long", dict(repetition_penalty=1.2, no_repeat_ngram_size=3)),
    ("model", "long", dict(beam_size=1, repetition_penalty=1.2, no_repeat_ngram_size=4)),
]
# the pipeline's prompt and cut options (tests/golden/faster-whisper/more-options-tiny.en.json):
# initial_prompt (encoded as written) and hotwords in every chunk's prompt, prefix (which the
# pipeline does not pass on), vad_parameters (a dict's keys over VadOptions' defaults, its
# max_speech_duration_s replaced by 30) and max_new_tokens; and WhisperModel's vad_filter
# with vad_parameters
OPTIONS = [
    ("pipeline", "long", dict(initial_prompt="Sense and Sensibility, by Jane Austen. Mr. Dashwood.")),
    ("pipeline", "long", dict(hotwords="Dashwood Norland", beam_size=1, without_timestamps=False)),
    ("pipeline", "long", dict(initial_prompt=" Marianne and Elinor", hotwords="Barton", word_timestamps=True)),
    ("pipeline", SHORT, dict(prefix="And Mister", without_timestamps=False)),
    ("pipeline", "long", dict(vad_parameters={"min_silence_duration_ms": 500})),
    ("pipeline", "long", dict(vad_parameters={"threshold": 0.6, "speech_pad_ms": 100, "max_speech_duration_s": 5},
                              without_timestamps=False, beam_size=1)),
    ("pipeline", "long", dict(vad_parameters={"min_silence_duration_ms": 100, "speech_pad_ms": 30,
                                              "min_speech_duration_ms": 250, "neg_threshold": 0.2},
                              initial_prompt="Austen.")),
    ("pipeline", "long", dict(max_new_tokens=12, without_timestamps=False)),
    ("pipeline", "long", dict(max_new_tokens=20, initial_prompt="Jane Austen wrote this.", beam_size=1)),
    # WhisperModel's vad_filter with vad_parameters: the speech alone, segments whole across
    # the silences dropped (restore_speech_timestamps)
    ("model", "long", dict(vad_filter=True, vad_parameters={"min_silence_duration_ms": 300, "speech_pad_ms": 100})),
    ("model", "long", dict(vad_filter=True, vad_parameters={"min_silence_duration_ms": 150, "speech_pad_ms": 50},
                           word_timestamps=True)),
    ("model", "long", dict(vad_filter=True, beam_size=1, vad_parameters={"threshold": 0.7, "speech_pad_ms": 30,
                                                                          "min_silence_duration_ms": 100})),
    # the two other VadOptions (over-long speech split at its last silence over 98 ms), and a
    # signal of whole 512-sample windows (vad.py pads one window of zeros more)
    ("model", "long", dict(vad_filter=True, beam_size=1, vad_parameters={"max_speech_duration_s": 4,
                                                                          "min_silence_duration_ms": 300,
                                                                          "speech_pad_ms": 100})),
    ("model", "long512", dict(vad_filter=True, beam_size=1, vad_parameters={"neg_threshold": 0.3,
                                                                             "min_silence_duration_ms": 100,
                                                                             "speech_pad_ms": 30})),
    ("pipeline", "long512", dict(vad_parameters={"min_silence_duration_ms": 100, "speech_pad_ms": 30},
                                 without_timestamps=False, beam_size=1)),
    # suppress_tokens: "." (13) and "," (11) alone (with the special tokens), the model's
    # list and "," on the pipeline, and none at all
    ("model", SHORT, dict(beam_size=1, suppress_tokens=[13, 11])),
    ("model", SHORT, dict(suppress_tokens=[])),
    ("pipeline", "long", dict(suppress_tokens=[-1, 11], without_timestamps=False)),
    # CTranslate2's beam search, not openai's: on this clip openai's BeamSearchDecoder ends
    # on "$300.99 remote free apples and 12 oranges", CTranslate2's on "we bought three"
    ("model", "espeak-ng-03.wav", dict(without_timestamps=True)),
    ("pipeline", "espeak-ng-04.wav", dict()),
]
# CTranslate2's length_penalty (logprob / length ** penalty; 0: the sum, and its early exit
# when the best candidate ends) and prompt_reset_on_temperature, on WhisperModel and the
# pipeline (tests/golden/faster-whisper/more-penalties-tiny.en.json); each case's text
# differs from length_penalty=1's or the default prompt's
PENALTIES = [
    ("model", "espeak-ng-03.wav", dict(length_penalty=0)),
    ("model", "espeak-ng-03.wav", dict(length_penalty=0.5, without_timestamps=True)),
    ("model", "espeak-ng-04.wav", dict(length_penalty=2.0)),
    ("model", "espeak-ng-04.wav", dict(length_penalty=2.0, without_timestamps=True)),
    ("model", "long", dict(length_penalty=0, without_timestamps=True)),
    ("pipeline", "long", dict(length_penalty=0)),
    ("pipeline", "long", dict(length_penalty=2.0, without_timestamps=False)),
    # a threshold below 0: every window's text (at temperature 0) is dropped from the prompt
    ("model", "long", dict(prompt_reset_on_temperature=-1.0, beam_size=1)),
    ("model", "long", dict(prompt_reset_on_temperature=-0.5, initial_prompt="Sense and Sensibility.")),
]
# initial_prompt as token ids (tiny.en's tokens of " Mr. Dashwood, Elinor and Marianne."):
# before the first window as they are; the pipeline's tokenizer refuses them
PROMPT_IDS = [1770, 13, 16189, 3822, 11, 2574, 259, 273, 290, 37919, 710, 13]
PROMPT_IDS_CASES = [
    ("model", SHORT, dict(initial_prompt=PROMPT_IDS, beam_size=1)),
    ("model", SHORT, dict(initial_prompt=PROMPT_IDS)),
    ("model", "long", dict(initial_prompt=PROMPT_IDS[:4], beam_size=1, without_timestamps=True)),
    ("model", "long", dict(initial_prompt=[50256, 464, 3290] + PROMPT_IDS, condition_on_previous_text=False)),
    ("pipeline", SHORT, dict(initial_prompt=PROMPT_IDS, vad_filter=False)),
]
# faster-whisper's prefix in Japanese (tests/data/clips/prefix, scripts/make-clips.sh): after
# the prefix CTranslate2 suppresses the blank and applies no timestamp rule at the first
# step, then the rules over the tokens after it (a new user's probe: sotto had taken the
# prefix's tokens as sampled, and began " こんにちは" with a bare space); one temperature,
# the third case's loop would fall back to sampling
JA = "prefix/espeak-ng-ja.wav"
PREFIX = [
    ("model", JA, dict(language="ja", temperature=0.0, prefix="こんにちは")),
    ("model", JA, dict(language="ja", temperature=0.0, prefix="こんにちは", without_timestamps=True)),
    ("model", JA, dict(language="ja", temperature=0.0, prefix="鬱蒼とした森、")),
    ("model", JA, dict(language="ja", temperature=0.0, prefix="こんにちは", beam_size=1)),
]
BASE = [
    ("pipeline", "en_de", dict(multilingual=True)),
    ("pipeline", "en_de", dict(multilingual=True, language="en", without_timestamps=False, beam_size=1)),
    ("pipeline", "en_de", dict(multilingual=True, beam_size=1,
                               clip_timestamps=[{"start": 0, "end": 12}, {"start": 30.5, "end": 43}])),
    # the same at beam 5, where openai's beam search (which sotto's pipeline had run) ends on
    # "liebe Fahrkatten nicht" and CTranslate2's on "nie befahrt oder nicht"
    ("pipeline", "en_de", dict(multilingual=True,
                               clip_timestamps=[{"start": 0, "end": 12}, {"start": 30.5, "end": 43}])),
]


def segments_of(segments):
    return [dict(id=s.id, seek=s.seek, start=s.start, end=s.end, text=s.text, tokens=s.tokens,
                 avg_logprob=s.avg_logprob, temperature=s.temperature, compression_ratio=s.compression_ratio,
                 no_speech_prob=s.no_speech_prob,
                 words=None if s.words is None else [[w.start, w.end, w.word, w.probability] for w in s.words])
            for s in segments]


def run(model, pipeline, cases, clips, tmp):
    out = []
    for kind, audio, kw in cases:
        case = dict(kind=kind, audio=audio, kwargs=kw)
        engine = pipeline if kind == "pipeline" else model
        try:
            # a copy: the pipeline pops max_speech_duration_s from a vad_parameters dict
            segments, info = engine.transcribe(audio_of(audio, clips, tmp), **copy.deepcopy(kw))
            case.update(segments=segments_of(segments), language=info.language,
                        language_probability=info.language_probability, duration=info.duration,
                        duration_after_vad=info.duration_after_vad)
        except Exception as e:  # what faster-whisper refuses, sotto must refuse too
            case.update(error=type(e).__name__, message=str(e))
        out.append(case)
    return out


def main():
    import faster_whisper
    from faster_whisper import BatchedInferencePipeline, WhisperModel

    models, clips, out_dir = sys.argv[1:4]
    only = sys.argv[4].split(",") if len(sys.argv) > 4 else ["tiny.en", "base"]
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        sets = (("tiny.en", "tiny.en", TINY), ("base", "base", BASE), ("options-tiny.en", "tiny.en", OPTIONS),
                ("penalties-tiny.en", "tiny.en", PENALTIES), ("prefix-base", "base", PREFIX),
                ("prompt-ids-tiny.en", "tiny.en", PROMPT_IDS_CASES))
        for out, name, cases in [(o, n, c) for o, n, c in sets if o in only]:
            model = WhisperModel(os.path.join(models, name + "-ct2"), device="cpu", compute_type="float32",
                                 cpu_threads=2)
            golden = dict(generator="faster-whisper " + faster_whisper.__version__ + ", compute_type float32",
                          model=name + "-ct2", cases=run(model, BatchedInferencePipeline(model), cases, clips, tmp))
            with open(os.path.join(out_dir, "more-" + out + ".json"), "w") as f:
                json.dump(golden, f, indent=1, ensure_ascii=False)
                f.write("\n")
            print(f"{out}: {len(cases)} cases", file=sys.stderr)


if __name__ == "__main__":
    main()
