"""`sotto serve`'s WebSocket, GET /v1/realtime?intent=transcription, with real clients: the
official `openai` client's realtime connection (its typed events) and the `websockets`
package (.venv-openai has both; scripts/setup-openai-venv.sh installs them).
- The Realtime transcription flow: session.update (GA, PCM16 at 16 and 24 kHz; the beta
  transcription_session.update), appends in chunks, commit, deltas and the completed
  transcript, which equals the json answer of POST /v1/audio/transcriptions for the same
  audio as a WAV file.
- Server VAD: a clip of three utterances with pauses gives three speech_started /
  speech_stopped / committed / completed, in order, each item's deltas joining into its
  transcript.
- OpenAI's error events: malformed JSON, unknown event types, bad base64, odd PCM16 byte
  counts, an oversized message (the session goes on), a binary message, an empty commit,
  a bad rate; the client's event_id in them.
- Refusals before the upgrade: no key (401), no intent (400), no Upgrade (426), a body on
  the upgrade (400), past --max-sessions (503 naming it); a message past twice
  --max-message-kb closes with 1009; --session-timeout closes an idle session; SIGTERM
  closes an open session with 1001 and exits 0.
- --live-buffer-s under server VAD: a turn without a pause committed at the bound, the
  speech going on as the next turn; --max-audio-s: a longer turn fails (audio_too_long).

usage: .venv-openai/bin/python test_realtime.py SOTTO MODEL CLIPS WORKDIR"""
import base64
import json
import os
import socket
import subprocess
import sys
import time
import wave

import openai
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import Checks, Server, exchange, turns_wav

sotto, model, clips, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
KEY = "sk-rt-test"
clip = os.path.join(clips, "librivox-0870.wav")
check = Checks()
srv = Server(sotto, model, ["--beam-size", "1", "-t", "1", "--workers", "1", "--max-sessions", "2",
                            "--max-message-kb", "64", "--session-timeout", "3"],
             os.path.join(work, "serve.log"), env={"SOTTO_API_KEY": KEY})
URL = "ws://127.0.0.1:%d/v1/realtime?intent=transcription" % srv.port
AUTH = {"Authorization": "Bearer " + KEY}
client = openai.OpenAI(base_url=srv.url + "/v1", api_key=KEY, max_retries=0, timeout=120)


def plain(path):
    """The json answer's text for the file PATH (POST /v1/audio/transcriptions)."""
    with open(path, "rb") as f:
        return client.audio.transcriptions.create(model="whisper-1", file=f).text


def pcm_of(path):
    with wave.open(path) as w:
        return w.readframes(w.getnframes())


def append(ws, pcm, chunk=9600):
    for i in range(0, len(pcm), chunk):
        ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": base64.b64encode(pcm[i:i + chunk]).decode()}))


def events_until(ws, done, timeout=60):
    """Events (dicts) up to and including the first for which DONE is true."""
    out = []
    t_end = time.time() + timeout
    while time.time() < t_end:
        e = json.loads(ws.recv(timeout=t_end - time.time()))
        out.append(e)
        if done(e):
            return out
    raise SystemExit("no event ended the wait: %s" % [e["type"] for e in out])


def manual(rate):
    return {"type": "session.update", "session": {"type": "transcription", "audio": {"input": {
        "format": {"type": "audio/pcm", "rate": rate}, "turn_detection": None,
        "transcription": {"model": "whisper-1", "language": "en"}}}}}


# ---- the flow with the official client: 16 kHz, manual commit ----
want = plain(clip)
with client.realtime.connect(extra_query={"intent": "transcription"}) as conn:
    created = conn.recv()
    check(created.type == "session.created" and created.session.type == "transcription",
          "openai client: session.created of a transcription session", str(created)[:300])
    conn.send(manual(16000))
    upd = conn.recv()
    check(upd.type == "session.updated" and upd.session.audio.input.format.rate == 16000 and
          upd.session.audio.input.turn_detection is None, "openai client: session.updated", str(upd)[:300])
    pcm = pcm_of(clip)
    for i in range(0, len(pcm), 6400):  # 0.2 s a chunk
        conn.input_audio_buffer.append(audio=base64.b64encode(pcm[i:i + 6400]).decode())
    conn.input_audio_buffer.commit()
    got = []
    while not got or got[-1].type != "conversation.item.input_audio_transcription.completed":
        got.append(conn.recv())
    types = [e.type for e in got]
    committed = got[0]
    deltas = [e for e in got if e.type.endswith(".delta")]
    check(types[0] == "input_audio_buffer.committed" and deltas and committed.item_id == got[-1].item_id,
          "openai client: committed, deltas, completed for one item", str(types))
    check(got[-1].transcript == want and "".join(d.delta for d in deltas) == want,
          "openai client: the completed transcript (and the deltas joined) equal the json answer",
          "%r vs %r" % (got[-1].transcript, want))

# ---- 24 kHz (OpenAI's rate): equal to the upload of the same 24 kHz WAV ----
wav24 = os.path.join(work, "clip24k.wav")
subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-i", clip, "-ar", "24000", wav24], check=True)
want24 = plain(wav24)
with connect(URL, additional_headers=AUTH) as ws:
    events_until(ws, lambda e: e["type"] == "session.created")
    ws.send(json.dumps(manual(24000)))
    events_until(ws, lambda e: e["type"] == "session.updated")
    append(ws, pcm_of(wav24), 4800)
    ws.send(json.dumps({"type": "input_audio_buffer.commit"}))
    got = events_until(ws, lambda e: e["type"].endswith(".completed"))
    check(got[-1]["transcript"] == want24 and len(want24) > 20, "24 kHz: completed equals the 24 kHz WAV's json answer",
          "%r vs %r" % (got[-1]["transcript"], want24))
    # the beta shape: transcription_session.update answered transcription_session.updated
    ws.send(json.dumps({"type": "transcription_session.update", "session": {
        "input_audio_format": "pcm16", "turn_detection": None, "input_audio_transcription": {"language": "en"}}}))
    e = events_until(ws, lambda e: e["type"] in ("transcription_session.updated", "error"))[-1]
    check(e["type"] == "transcription_session.updated" and e["session"]["input_audio_format"] == "pcm16",
          "beta transcription_session.update", str(e))

# ---- error events ----
with connect(URL, additional_headers=AUTH) as ws:
    events_until(ws, lambda e: e["type"] == "session.created")

    def error_for(msg, code, what, param=None, binary=False):
        ws.send(msg if binary or isinstance(msg, str) else json.dumps(msg))
        e = events_until(ws, lambda e: e["type"] == "error")[-1]["error"]
        ok = e["code"] == code and e["type"] == "invalid_request_error" and e["message"] and (
            param is None or e["param"] == param)
        check(ok, "error event: " + what, str(e))
        return e

    error_for("{\"type\": ", "invalid_json", "malformed JSON")
    error_for("[1, 2]", "invalid_event", "not an object")
    error_for("42", "invalid_event", "JSON, but a number: not an event")
    error_for("\"hi\"", "invalid_event", "JSON, but a string: not an event")
    error_for({"type": "response.create", "event_id": "ev_42"}, "unknown_event_type", "an unknown event type")
    e = error_for({"type": "input_audio_buffer.append", "audio": "abc$", "event_id": "ev_43"}, "invalid_audio",
                  "bad base64", "audio")
    check(e["event_id"] == "ev_43", "the error names the client's event_id", str(e))
    error_for({"type": "input_audio_buffer.append", "audio": "AAAA"}, "invalid_audio", "an odd PCM16 byte count")
    error_for({"type": "input_audio_buffer.commit"}, "input_audio_buffer_commit_empty", "an empty commit")
    error_for({"type": "session.update", "session": {"type": "transcription", "audio": {"input": {
        "format": {"type": "audio/pcm", "rate": 44100}}}}}, "invalid_value", "a rate other than 24000 or 16000",
        "session.audio.input.format.rate")
    error_for({"type": "session.update", "session": {"type": "realtime"}}, "invalid_value", "a conversation session",
              "session.type")
    # a misspelt or foreign setting is refused by name (OpenAI's unknown_parameter), not left out
    error_for({"type": "session.update", "session": {"type": "transcription", "audio": {"input": {
        "turn_detection": {"type": "server_vad", "silence_duraton_ms": 900}}}}}, "unknown_parameter",
        "a misspelt turn_detection member", "session.audio.input.turn_detection.silence_duraton_ms")
    error_for({"type": "session.update", "session": {"type": "transcription", "voice": "alloy"}},
              "unknown_parameter", "a conversation's member in a transcription session", "session.voice")
    error_for({"type": "transcription_session.update", "session": {"input_audio_transcription": {
        "model": "whisper-1", "enabled": True}}}, "unknown_parameter", "the beta's transcription.enabled",
        "session.input_audio_transcription.enabled")
    error_for({"type": "session.update", "session": {"type": "transcription", "audio": {"input": {
        "noise_reduction": {"type": "near_field"}}}}}, "invalid_value", "noise reduction asked for",
        "session.audio.input.noise_reduction")
    error_for({"type": "session.update", "session": {"type": "transcription", "include": [
        "item.input_audio_transcription.logprobs"]}}, "invalid_value", "log probabilities asked for", "session.include")
    error_for(b"\x00\x01binary", "invalid_event", "a binary message", binary=True)
    big = {"type": "input_audio_buffer.append", "audio": base64.b64encode(b"\0" * 60000).decode()}  # 80 kB of text
    error_for(big, "message_too_large", "a message past --max-message-kb")
    ws.send(json.dumps({"type": "input_audio_buffer.clear"}))
    e = events_until(ws, lambda e: e["type"] in ("input_audio_buffer.cleared", "error"))[-1]
    check(e["type"] == "input_audio_buffer.cleared", "the session goes on after the errors", str(e))
    # past twice the limit the connection closes with 1009 (wslay's bound of what it buffers)
    ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": "A" * 200000}))
    try:
        while True:
            ws.recv(timeout=10)
    except ConnectionClosed as c:
        check(c.rcvd is not None and c.rcvd.code == 1009, "a message past twice the limit: close 1009", str(c))

# ---- server VAD: three utterances with pauses, three turns ----
turns = os.path.join(work, "turns.wav")
tpcm = turns_wav(clips, turns)
with connect(URL, additional_headers=AUTH) as ws:
    created = events_until(ws, lambda e: e["type"] == "session.created")[-1]
    td = created["session"]["audio"]["input"]["turn_detection"]
    check(td and td["type"] == "server_vad", "server VAD is the default where the VAD is installed", str(td))
    ws.send(json.dumps({"type": "session.update", "session": {"type": "transcription", "audio": {"input": {
        "format": {"type": "audio/pcm", "rate": 16000},
        "turn_detection": {"type": "server_vad", "threshold": 0.5, "silence_duration_ms": 500}}}}}))
    events_until(ws, lambda e: e["type"] == "session.updated")
    append(ws, tpcm, 3200)
    n_done = [0]

    def third(e):
        n_done[0] += e["type"].endswith(".completed")
        return n_done[0] == 3

    got = events_until(ws, third, timeout=120)
    kinds = [e["type"].split(".")[-1] for e in got if e["type"] != "conversation.item.input_audio_transcription.delta"]
    check(kinds[:3] == ["speech_started", "speech_stopped", "committed"] and kinds.count("speech_started") == 3 and kinds.count("speech_stopped") == 3 and
          kinds.count("committed") == 3 and kinds.count("completed") == 3, "server VAD: three turns", str(kinds))
    done = [e for e in got if e["type"].endswith(".completed")]
    items = [e["item_id"] for e in got if e["type"] == "input_audio_buffer.committed"]
    check([e["item_id"] for e in done] == items and len(set(items)) == 3, "server VAD: completed in item order",
          str(items))
    for e in done:
        ds = "".join(d["delta"] for d in got if d["type"].endswith(".delta") and d["item_id"] == e["item_id"])
        check(ds == e["transcript"] and len(e["transcript"]) > 10, "server VAD: %s's deltas join into it" % e["item_id"],
              "%r vs %r" % (ds, e["transcript"]))
    started = [e for e in got if e["type"].endswith("speech_started")]
    stopped = [e for e in got if e["type"].endswith("speech_stopped")]
    check(all(a["audio_start_ms"] < b["audio_end_ms"] for a, b in zip(started, stopped)) and
          stopped[0]["audio_end_ms"] < started[1]["audio_start_ms"], "server VAD: turn times in order",
          str([(a["audio_start_ms"], b["audio_end_ms"]) for a, b in zip(started, stopped)]))
    words = " ".join(e["transcript"] for e in done).lower()
    check("keys" in words and "paris" in words, "server VAD: the utterances' words", words)

# ---- server VAD at --live-buffer-s: a turn without a pause is committed at the bound and
# the speech goes on as the next turn (every append had been refused from there on, the
# pause with them, so the session never committed again); --max-audio-s fails a longer turn
small = Server(sotto, model, ["--beam-size", "1", "-t", "1", "--workers", "1", "--live-buffer-s", "3",
                              "--max-audio-s", "4"], os.path.join(work, "serve-small.log"), env={"SOTTO_API_KEY": KEY})
surl = "ws://127.0.0.1:%d/v1/realtime?intent=transcription" % small.port
with connect(surl, additional_headers=AUTH) as ws:
    events_until(ws, lambda e: e["type"] == "session.created")
    ws.send(json.dumps({"type": "session.update", "session": {"type": "transcription", "audio": {"input": {
        "format": {"type": "audio/pcm", "rate": 16000},
        "turn_detection": {"type": "server_vad", "threshold": 0.5, "silence_duration_ms": 500}}}}}))
    events_until(ws, lambda e: e["type"] == "session.updated")
    speech = pcm_of(clip)  # 7 s of one sentence, no pause of 500 ms
    append(ws, speech + b"\0\0" * 16000 * 2, 3200)
    got, n_done = [], 0
    t_end = time.time() + 120
    while time.time() < t_end:
        e = json.loads(ws.recv(timeout=t_end - time.time()))
        got.append(e)
        n_committed = sum(x["type"] == "input_audio_buffer.committed" for x in got)
        n_done = sum(x["type"].endswith(".completed") or x["type"].endswith(".failed") for x in got)
        ends = [x["audio_end_ms"] for x in got if x["type"].endswith("speech_stopped")]
        if n_committed >= 2 and n_done == n_committed and ends and ends[-1] > 6500:  # the sentence's end, done
            break
    kinds = [e["type"].split(".")[-1] for e in got if not e["type"].endswith(".delta")]
    errors = [e for e in got if e["type"] == "error"]
    check(not errors, "live buffer bound under server VAD: no error event", str(errors)[:300])
    check(kinds.count("committed") >= 2 and kinds.count("speech_started") == kinds.count("speech_stopped") ==
          kinds.count("committed"), "live buffer bound: the turn split, each part started, stopped, committed",
          str(kinds))
    text = " ".join(e["transcript"] for e in got if e["type"].endswith(".completed")).lower()
    check("dashwood" in text and "for them" in text, "live buffer bound: the whole sentence heard", text)
with connect(surl, additional_headers=AUTH) as ws:
    events_until(ws, lambda e: e["type"] == "session.created")
    ws.send(json.dumps(manual(16000)))
    events_until(ws, lambda e: e["type"] == "session.updated")
    append(ws, pcm_of(clip)[:2 * 16000 * 3], 3200)  # 3 s: within both bounds
    ws.send(json.dumps({"type": "input_audio_buffer.commit"}))
    ok3 = events_until(ws, lambda e: e["type"].split(".")[-1] in ("completed", "failed"))[-1]
    check(ok3["type"].endswith(".completed"), "a 3 s turn within --max-audio-s 4: completed", str(ok3)[:300])
small.terminate()
small.stop()
small4 = Server(sotto, model, ["--beam-size", "1", "-t", "1", "--workers", "1", "--max-audio-s", "2"],
                os.path.join(work, "serve-max.log"), env={"SOTTO_API_KEY": KEY})
with connect("ws://127.0.0.1:%d/v1/realtime?intent=transcription" % small4.port, additional_headers=AUTH) as ws:
    events_until(ws, lambda e: e["type"] == "session.created")
    ws.send(json.dumps(manual(16000)))
    events_until(ws, lambda e: e["type"] == "session.updated")
    append(ws, pcm_of(clip), 3200)
    ws.send(json.dumps({"type": "input_audio_buffer.commit"}))
    last = events_until(ws, lambda e: e["type"].split(".")[-1] in ("completed", "failed"))[-1]
    check(last["type"].endswith(".failed") and last["error"]["code"] == "audio_too_long" and
          "--max-audio-s" in last["error"]["message"], "a turn past --max-audio-s: failed, audio_too_long", str(last))
small4.terminate()
small4.stop()

# ---- refusals before the upgrade ----
for headers, url, status, what in [({}, URL, 401, "no API key"),
                                   (AUTH, URL.replace("?intent=transcription", ""), 400, "no intent")]:
    try:
        with connect(url, additional_headers=headers):
            pass
        check(False, "refused: " + what)
    except InvalidStatus as e:
        check(e.response.status_code == status, "refused: " + what, str(e))
head = ("GET /v1/realtime?intent=transcription HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n" % KEY)
st, _, _ = exchange(srv.port, (head + "\r\n").encode())
check(st == 426, "a GET without Upgrade: 426", str(st))
up = head + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n" \
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
st, hd, _ = exchange(srv.port, (up + "Content-Length: 5\r\n\r\nhello").encode())
check(st == 400, "an upgrade with a body: 400", str(st))
st, _, _ = exchange(srv.port, (up + "Content-Length: 0\r\nContent-Length: 5\r\n\r\nhello").encode())
check(st == 400, "an upgrade smuggling two Content-Lengths: 400 at the door", str(st))
st, _, body = exchange(srv.port, (up + "Sec-WebSocket-Key: AQIDBAUGBwgJCgsMDQ4PEA==\r\n\r\n").encode())
check(st == 400 and b"more than once" in body, "Sec-WebSocket-Key twice: 400 (RFC 6455 11.3.1)", str(st))
st, _, body = exchange(srv.port, (up.replace("HTTP/1.1", "HTTP/1.0") + "\r\n").encode())
check(st == 400 and b"HTTP/1.1" in body, "an upgrade over HTTP/1.0: 400 (it had had no answer)", str(st))
with socket.create_connection(("127.0.0.1", srv.port)) as s:  # the RFC's example key and accept
    s.sendall((up + "\r\n").encode())
    s.settimeout(10)
    resp = s.recv(4096).decode(errors="replace")
check(resp.startswith("HTTP/1.1 101") and "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" in resp and "close" not in resp.lower(),
      "101 with the RFC 6455 accept and no Connection: close", resp[:300])
time.sleep(0.5)  # that session closes (its client left)
a = connect(URL, additional_headers=AUTH).__enter__()
b = connect(URL, additional_headers=AUTH).__enter__()
try:
    with connect(URL, additional_headers=AUTH):
        pass
    check(False, "past --max-sessions: 503")
except InvalidStatus as e:
    body = e.response.body.decode(errors="replace")
    check(e.response.status_code == 503 and "--max-sessions" in body, "past --max-sessions: 503 naming it", body)
a.close()
# --session-timeout 3: the idle one gets an error event, then close 1000
t0 = time.time()
try:
    while True:
        m = json.loads(b.recv(timeout=10))
        if m["type"] == "error":
            check(m["error"]["code"] == "session_timeout", "idle: the session_timeout error event", str(m))
except ConnectionClosed as c:
    check(c.rcvd is not None and c.rcvd.code == 1000 and 2 < time.time() - t0 < 8, "idle: closed after --session-timeout",
          "%s after %.1f s" % (c, time.time() - t0))
# SIGTERM with a session open: it is closed with 1001, the server exits 0
c = connect(URL, additional_headers=AUTH).__enter__()
json.loads(c.recv(timeout=10))
srv.terminate()
try:
    while True:
        c.recv(timeout=10)
except ConnectionClosed as e:
    check(e.rcvd is not None and e.rcvd.code == 1001, "SIGTERM: the open session is closed with 1001", str(e))
rc = srv.stop()
check(rc == 0, "exit 0 after SIGTERM", str(rc))
log = srv.text()
check("live session 1 open" in log and "GET /v1/realtime 101" in log, "the log names the sessions")
for bad in ["AddressSanitizer", "LeakSanitizer", "runtime error:", "UndefinedBehaviorSanitizer"]:
    check(bad not in log, "no '%s' on stderr" % bad)  # (under make test-asan: the memory and leak check)
check.done("serve_realtime")
