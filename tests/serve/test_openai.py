"""The official `openai` Python client (scripts/setup-openai-venv.sh installs it into
.venv-openai) pointed at `sotto serve` with base_url: transcriptions in every
response_format equal `sotto transcribe`'s output; the client's typed answers (text,
verbose_json's segments, duration, language; words with timestamp_granularities=["word"]);
its exceptions for 401 and 400 answers; models.list(); stream=True (server-sent events: the
deltas join into the done text, which is the json answer's; an error mid-stream raises).

usage: .venv-openai/bin/python test_openai.py SOTTO MODEL CLIPS WORKDIR"""
import json
import os
import sys

import warnings

import openai

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import Checks, Server, cli, openai_json, openai_text, openai_verbose, turns_wav

sotto, model, clips, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
clip = os.path.join(clips, "espeak-ng-02.wav")
DECODE = ["--beam-size", "1"]
check = Checks()
warnings.simplefilter("ignore", DeprecationWarning)  # the client marks translations deprecated
srv = Server(sotto, model, [*DECODE, "-t", "1", "--workers", "1"], os.path.join(work, "serve.log"),
             env={"SOTTO_API_KEY": "sk-sotto-test"})
client = openai.OpenAI(base_url=srv.url + "/v1", api_key="sk-sotto-test", max_retries=0, timeout=120)


def transcribe(fmt, **kw):
    with open(clip, "rb") as f:
        return client.audio.transcriptions.create(model="whisper-1", file=f, response_format=fmt, **kw)


want = {f: cli(sotto, model, c, clip, DECODE).decode() for f, c in
        [("srt", "srt"), ("vtt", "vtt"), ("verbose_json", "json")]}
want["text"] = openai_text(want["verbose_json"]).decode()  # OpenAI's: json's text, one paragraph
want["verbose_json"] = openai_verbose(want["verbose_json"].encode()).decode()  # "task", the language's name
for fmt in ["text", "srt", "vtt"]:
    got = transcribe(fmt)
    check(got == want[fmt], "openai client, response_format=%s equals the CLI's" % fmt, "%r vs %r" % (got, want[fmt]))
ref = json.loads(want["verbose_json"])
got = transcribe("json")
check(got.text == ref["text"].lstrip(" ") and not got.text.startswith(" "), "json: Transcription.text", "%r vs %r" % (got.text, ref["text"]))
raw = client.audio.transcriptions.with_raw_response.create(model="whisper-1", file=open(clip, "rb"),
                                                           response_format="json")
check(raw.http_response.content == openai_json(want["verbose_json"]), "json: the bytes of {\"text\": ...}")
v = transcribe("verbose_json", timestamp_granularities=["segment"])
check(v.text == ref["text"] and v.duration == ref["duration"] and v.language == "english" == ref["language"],
      "verbose_json: text, duration, language", str(v)[:300])
check([(s.start, s.end, s.text) for s in v.segments] == [(s["start"], s["end"], s["text"]) for s in ref["segments"]],
      "verbose_json: the segments", str(v.segments)[:300])
raw = client.audio.transcriptions.with_raw_response.create(model="whisper-1", file=open(clip, "rb"),
                                                           response_format="verbose_json")
check(raw.http_response.content.decode() == want["verbose_json"], "verbose_json: the CLI's bytes")
ids = [m.id for m in client.models.list()]
check(ids == ["tiny.en", "whisper-1"], "models.list(): the model, and whisper-1", str(ids))

try:
    openai.OpenAI(base_url=srv.url + "/v1", api_key="sk-wrong", max_retries=0).audio.transcriptions.create(
        model="whisper-1", file=open(clip, "rb"))
    check(False, "a wrong key raises AuthenticationError")
except openai.AuthenticationError as e:
    check(e.status_code == 401 and e.code == "invalid_api_key", "a wrong key raises AuthenticationError", str(e))
# timestamp_granularities=["word"]: TranscriptionVerbose.words, the CLI's --word-timestamps words
ref_w = json.loads(cli(sotto, model, "json", clip, [*DECODE, "--word-timestamps"]))
words = [(w["word"].lstrip(" "), w["start"], w["end"]) for s in ref_w["segments"] for w in s["words"]]
v = transcribe("verbose_json", timestamp_granularities=["word"])
check(len(words) > 3 and v.words is not None and [(w.word, w.start, w.end) for w in v.words] == words,
      "verbose_json, word granularity: TranscriptionVerbose.words", "%s vs %s" % (str(v.words)[:300], words[:5]))
check(v.text == ref_w["text"] and [(s.start, s.end, s.text) for s in v.segments] ==
      [(s["start"], s["end"], s["text"]) for s in ref_w["segments"]], "word granularity: text and segments")
# stream=True: server-sent events the client iterates; the deltas (one a segment) join into
# the done event's text, which is the json answer's text for the same file
turns = os.path.join(work, "turns.wav")
turns_wav(clips, turns)
for path in [clip, turns]:
    with open(path, "rb") as f:
        plain = client.audio.transcriptions.create(model="whisper-1", file=f).text
    with open(path, "rb") as f:
        events = list(client.audio.transcriptions.create(model="whisper-1", file=f, stream=True))
    types = [e.type for e in events]
    name = os.path.basename(path)
    check(len(events) >= 2 and types[-1] == "transcript.text.done" and
          all(t == "transcript.text.delta" for t in types[:-1]), "stream=True on %s: deltas, then done" % name,
          str(types))
    check(events[-1].text == plain and len(plain) > 10, "stream=True on %s: done's text is the json answer's" % name,
          "%r vs %r" % (events[-1].text, plain))
    check("".join(e.delta for e in events[:-1]) == plain, "stream=True on %s: the deltas join into it" % name,
          str([e.delta for e in events[:-1]]))
    if path == turns:
        check(len(events) >= 4, "stream=True on three turns: a delta for each segment", str(types))
with open(turns, "rb") as f:
    text_events = list(client.audio.transcriptions.create(model="whisper-1", file=f, stream=True,
                                                          response_format="text"))
check([e.type for e in text_events] == types and text_events[-1].text == plain,
      "stream=True with response_format=text: the same events")
try:
    with open(clip, "rb") as f:
        client.audio.transcriptions.create(model="whisper-1", file=f, stream=True, response_format="srt")
    check(False, "stream=True with srt raises BadRequestError")
except openai.BadRequestError as e:
    check(e.param == "response_format" and e.code == "unsupported_value", "stream=True with srt: BadRequestError",
          str(e))
# an error once the stream has begun (the audio cannot be decoded): OpenAI's error event,
# which the client raises as APIError while iterating
try:
    with open(os.path.abspath(__file__), "rb") as f:
        got = list(client.audio.transcriptions.create(model="whisper-1", file=f, stream=True))
    check(False, "stream=True on a Python file raises APIError", str(got))
except openai.APIError as e:
    check(isinstance(e.body, dict) and e.body.get("code") == "invalid_audio" and "test_openai.py" in e.message,
          "stream=True on a Python file: the error event raises APIError", str(e))
try:
    with open(clip, "rb") as f:
        client.audio.translations.create(model="whisper-1", file=f)
    check(False, "translating with an English-only model raises BadRequestError")
except openai.BadRequestError as e:
    check(e.code == "unsupported_model", "translating with an English-only model raises BadRequestError", str(e))
try:
    with open(os.path.abspath(__file__), "rb") as f:
        client.audio.transcriptions.create(model="whisper-1", file=f)
    check(False, "a Python file as audio raises BadRequestError")
except openai.BadRequestError as e:
    check(e.code == "invalid_audio" and "test_openai.py" in e.message, "a Python file as audio: BadRequestError",
          str(e))
rc = srv.stop()
check(rc == 0, "exit 0 after SIGTERM", str(rc))
check.done("serve_openai")
