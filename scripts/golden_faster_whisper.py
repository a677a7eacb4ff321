#!/usr/bin/env python3
"""Goldens of faster-whisper 1.2.1 (ctranslate2 4.8.5, float32) for sotto's drop-in
WhisperModel: each case's transcribe() keyword arguments, segments and info, on the
CTranslate2 weights sotto reads too, written to tests/golden/faster-whisper/MODEL.json.
python/tests/test_fw_golden.py runs the same cases through sotto.WhisperModel.

usage: .cache/fw-venv/bin/python scripts/golden_faster_whisper.py MODELS_DIR CLIPS_DIR OUT_DIR
(the venv bench/run.sh installs: pip install faster-whisper==1.2.1). Audio: the committed
clips, and the recordings python/tests/made_audio.py makes with sox."""
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python", "tests"))
import made_audio  # noqa: E402

IP = "Mr. John Dashwood, the Norland estate, his father and his mother-in-law."

# (audio, kwargs): audio is a clip name, "long" (made_audio.LONG_CLIPS joined) or "en_de"
TINY = [
    ("librivox-0870.wav", dict(beam_size=1)),
    ("librivox-0870.wav", dict()),
    ("librivox-0870.wav", dict(beam_size=1, hotwords="Dashwood Norland")),
    ("librivox-0870.wav", dict(hotwords="Dashwood Norland")),
    ("librivox-0870.wav", dict(beam_size=1, prefix="And Mister")),
    ("librivox-0870.wav", dict(prefix="And Mister", without_timestamps=True)),
    ("librivox-0870.wav", dict(prefix="And Mister", hotwords="Dashwood")),
    ("librivox-0870.wav", dict(beam_size=1, clip_timestamps="1.5,4")),
    ("librivox-0870.wav", dict(clip_timestamps=[0.5, 3.0, 4.2])),
    ("librivox-0870.wav", dict(without_timestamps=True)),
    ("librivox-0870.wav", dict(word_timestamps=True)),
    ("librivox-0870.wav", dict(beam_size=1, prefix="And Mister", word_timestamps=True)),
    ("librivox-0870.wav", dict(beam_size=1, max_new_tokens=5)),
    ("librivox-0870.wav", dict(beam_size=1, max_new_tokens=10, initial_prompt=IP, without_timestamps=True)),
    ("librivox-0880.wav", dict(multilingual=True)),
    ("long", dict(beam_size=1)),
    ("long", dict(beam_size=1, hotwords="Dashwood Norland Tuesday")),
    ("long", dict(hotwords="Dashwood", prefix="And Mister")),
    ("long", dict(clip_timestamps="2,20,31,50")),
    ("long", dict(beam_size=1, word_timestamps=True)),
]
BASE = [
    ("en_de", dict(multilingual=True)),
    ("en_de", dict(multilingual=True, beam_size=1)),
    ("en_de", dict(beam_size=1)),
    ("en_de", dict(language="de", beam_size=1, clip_timestamps="30")),
    ("en_de", dict(beam_size=1, language_detection_segments=2, language_detection_threshold=0.999)),
    ("librivox-0880.wav", dict(beam_size=1, hotwords="Dashwood", word_timestamps=True)),
]


def audio_of(name, clips, tmp):
    if name == "long":
        return made_audio.joined(clips, made_audio.LONG_CLIPS)
    if name == "long512":  # whole 512-sample windows, which vad.py pads with one window more
        x = made_audio.joined(clips, made_audio.LONG_CLIPS)
        return x[:len(x) // 512 * 512]
    if name == "en_de":
        return made_audio.read_wav(made_audio.en_then_de(clips, tmp))
    return made_audio.read_wav(os.path.join(clips, name))


def run(model, cases, clips, tmp):
    out = []
    for audio, kw in cases:
        segments, info = model.transcribe(audio_of(audio, clips, tmp), **kw)
        segs = [dict(id=s.id, seek=s.seek, start=s.start, end=s.end, text=s.text, tokens=s.tokens,
                     avg_logprob=s.avg_logprob, temperature=s.temperature, compression_ratio=s.compression_ratio,
                     no_speech_prob=s.no_speech_prob,
                     words=None if s.words is None else [[w.start, w.end, w.word, w.probability] for w in s.words])
                for s in segments]
        out.append(dict(audio=audio, kwargs=kw, segments=segs, language=info.language,
                        language_probability=info.language_probability,
                        all_language_probs=None if info.all_language_probs is None else info.all_language_probs[:5]))
    return out


def detections(model, clips, tmp):
    out = []
    for name in ("lang/espeak-ng-de.wav", "lang/espeak-ng-fr.wav", "librivox-0880.wav", "en_de"):
        for segs in (1, 2):
            lang, prob, probs = model.detect_language(audio_of(name, clips, tmp), language_detection_segments=segs,
                                                      language_detection_threshold=0.95)
            out.append(dict(audio=name, language_detection_segments=segs, language_detection_threshold=0.95,
                            language=lang, probability=prob, top5=probs[:5], n_languages=len(probs)))
    return out


def main():
    import faster_whisper
    from faster_whisper import WhisperModel

    models, clips, out_dir = sys.argv[1:4]
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, cases in (("tiny.en", TINY), ("base", BASE)):
            model = WhisperModel(os.path.join(models, name + "-ct2"), device="cpu", compute_type="float32",
                                 cpu_threads=2)
            golden = dict(generator="faster-whisper " + faster_whisper.__version__ + ", compute_type float32",
                          model=name + "-ct2", cases=run(model, cases, clips, tmp))
            if model.model.is_multilingual:
                golden["detect_language"] = detections(model, clips, tmp)
            with open(os.path.join(out_dir, name + ".json"), "w") as f:
                json.dump(golden, f, indent=1, ensure_ascii=False)
                f.write("\n")
            print(f"{name}: {len(cases)} cases", file=sys.stderr)


if __name__ == "__main__":
    main()
