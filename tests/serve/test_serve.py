"""`sotto serve` with curl and raw HTTP: every response_format equals `sotto transcribe`'s
output for the same file and options (timestamp_granularities[]=word: --word-timestamps); the 401, 413 (declared and streamed), 400 (audio
FFmpeg cannot decode, malformed forms), 404/405, 503 (+ Retry-After) and 408 answers in
OpenAI's error shape; a SIGTERM while a request is in flight still answers it, exit 0.

usage: test_serve.py SOTTO MODEL CLIPS WORKDIR"""
import json
import os
import shutil
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import (Checks, Server, cli, curl, exchange, multipart, openai_json, read_response, request_bytes,
                       verbose_with_words)

sotto, model, clips, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
clip = os.path.join(clips, "librivox-0880.wav")
KEY = "test-key-3f1c"
DECODE = ["--beam-size", "1"]
check = Checks()

srv = Server(sotto, model, [*DECODE, "-t", "1", "--workers", "1", "--queue", "0", "--api-key", KEY,
                            "--max-upload-mb", "1", "--timeout", "2"], os.path.join(work, "serve.log"))
T = srv.url + "/v1/audio/transcriptions"


def error_of(body, status, code, what):
    try:
        e = json.loads(body)["error"]
        ok = set(e) == {"message", "type", "param", "code"} and e["code"] == code and e["message"]
    except (ValueError, KeyError, TypeError):
        ok = False
    check(ok, what, "(status %s, body %r)" % (status, body[:300]))
    return ok


# each response format against the CLI's bytes
fmts = {"text": "txt", "srt": "srt", "vtt": "vtt", "verbose_json": "json"}
cli_out = {f: cli(sotto, model, c, clip, DECODE) for f, c in fmts.items()}
cli_out["json"] = openai_json(cli_out["verbose_json"])
for f in ["json", "text", "srt", "vtt", "verbose_json"]:
    fields = [("model", "whisper-1"), ("response_format", f)]
    if f == "verbose_json":
        fields.append(("timestamp_granularities[]", "segment"))
    status, body, head = curl(T, fields, clip, KEY)
    check(f not in ("json", "verbose_json") or "content-type: application/json" in head.lower(), f + " is JSON", head)
    check(status == 200 and body == cli_out[f], "format %s equals sotto transcribe -f %s" % (f, fmts.get(f, "json")),
          "(status %d)\n  server: %r\n  cli:    %r" % (status, body[:200], cli_out[f][:200]))
# timestamp_granularities[]=word: the CLI's --word-timestamps -f json, OpenAI's top-level words added
words_cli = cli(sotto, model, "json", clip, [*DECODE, "--word-timestamps"])
want = verbose_with_words(words_cli)
status, body, _ = curl(T, [("response_format", "verbose_json"), ("timestamp_granularities[]", "segment"),
                           ("timestamp_granularities[]", "word")], clip, KEY)
check(len(json.loads(want)["words"]) > 3 and status == 200 and body == want,
      "verbose_json with word granularity equals sotto transcribe --word-timestamps -f json + words",
      "(status %d)\n  server: %r\n  want:   %r" % (status, body[-300:], want[-300:]))
# options: prompt, temperature, language, the model's own name, timestamp_granularities[]=segment
prompt = "Mr. Dashwood, Elinor and Marianne."
want = cli(sotto, model, "srt", clip, [*DECODE, "--prompt", prompt, "--temperature", "0.4", "-l", "en"])
status, body, _ = curl(T, [("model", "tiny.en"), ("response_format", "srt"), ("prompt", prompt),
                           ("temperature", "0.4"), ("language", "en")], clip, KEY)
check(status == 200 and body == want, "prompt + temperature + language equal the CLI's", "%r vs %r" % (body, want))

# compressed audio: the upload is probed by its content (the temporary file has no name)
if shutil.which("ffmpeg"):
    mp3 = os.path.join(work, "clip.mp3")
    subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i", clip, "-ar", "22050", mp3], check=True)
    want = cli(sotto, model, "vtt", mp3, DECODE)
    status, body, _ = curl(T, [("response_format", "vtt")], mp3, KEY)
    check(status == 200 and body == want, "an MP3 upload equals sotto transcribe of the MP3", "%r vs %r" % (body, want))

# authentication: /health needs none; a missing or wrong key is 401
status, body, _ = curl(srv.url + "/health")
check(status == 200 and json.loads(body) == {"status": "ok"}, "GET /health without a key")
status, body, head = curl(T, [], clip)
error_of(body, status, "invalid_api_key", "no key: 401") and check(status == 401, "no key is 401")
check("www-authenticate: bearer" in head.lower(), "401 says WWW-Authenticate: Bearer", head)
status, body, _ = curl(T, [], clip, KEY + "x")
check(status == 401, "a wrong key (one more byte) is 401")
status, body, _ = curl(T, [], clip, KEY[:-1] + "X")
check(status == 401, "a wrong key (same length) is 401")
status, body, _ = curl(srv.url + "/v1/models", key=KEY)
check(status == 200 and json.loads(body)["data"][0]["id"] == "tiny.en", "GET /v1/models lists tiny.en", body)
status, body, _ = curl(srv.url + "/v1/models")
check(status == 401, "GET /v1/models without a key is 401")

# 413: a declared Content-Length over the limit is refused before the body is read, and a
# chunked body (no length) when it passes the limit as it streams
big = os.path.join(work, "big.bin")
with open(big, "wb") as f:
    f.write(os.urandom(3 << 19))
status, body, _ = curl(T, [], big, KEY)
error_of(body, status, "file_too_large", "declared length over 1 MB") and check(status == 413, "413 by Content-Length")
status, body, _ = curl(T, [], big, KEY, ["-H", "Transfer-Encoding: chunked"])
error_of(body, status, "file_too_large", "chunked over 1 MB") and check(status == 413, "413 while streaming")

# 400s
junk = os.path.join(work, "notes.wav")
with open(junk, "w") as f:
    f.write("these are not the samples you are looking for\n" * 20)
status, body, _ = curl(T, [], junk, KEY)
if error_of(body, status, "invalid_audio", "undecodable audio: 400"):
    msg = json.loads(body)["error"]["message"]
    check(status == 400 and "notes.wav" in msg and "/proc/" not in msg, "the message names the upload", msg)
bad_forms = [
    ([("response_format", "docx")], clip, "invalid_value", "an unknown response_format"),
    ([("temperature", "1.5")], clip, "invalid_value", "temperature above 1"),
    ([("temperature", "warm")], clip, "invalid_value", "temperature not a number"),
    ([("model", "gpt-4o-transcribe")], clip, "model_not_found", "a model not served"),
    ([("language", "de")], clip, "unsupported_language", "German on an English-only model"),
    ([("response_format", "srt"), ("timestamp_granularities[]", "word")], clip, "invalid_value",
     "word timestamps without verbose_json"),
    ([("timestamp_granularities[]", "segment")], clip, "invalid_value", "granularities without verbose_json"),
    ([("prompt", "x" * 5000)], clip, "field_too_long", "a prompt over the field limit"),
    ([("model", "whisper-1")], None, "missing_file", "no file part"),
]
for fields, f, code, what in bad_forms:
    status, body, _ = curl(T, fields, f, KEY)
    error_of(body, status, code, what) and check(status == 400, what + " is 400", str(status))
status, body, _ = curl(srv.url + "/v1/audio/translations", [], clip, KEY)
error_of(body, status, "unsupported_model", "translation on tiny.en") and check(status == 400, "translation 400")
auth = ["Authorization: Bearer " + KEY]
status, _, body = exchange(srv.port, request_bytes("/v1/audio/transcriptions", b"file=abc",
                                                   "application/x-www-form-urlencoded", auth))
error_of(body, status, "invalid_content_type", "urlencoded body")
ctype, body = multipart([("model", "whisper-1")], b"RIFF....")
status, _, rbody = exchange(srv.port, request_bytes("/v1/audio/transcriptions", body[:-30], ctype, auth))
error_of(rbody, status, "invalid_multipart", "a body cut before its closing boundary")
status, _, rbody = exchange(srv.port, request_bytes("/v1/audio/transcriptions", body, "multipart/form-data", auth))
error_of(rbody, status, "invalid_multipart", "multipart without a boundary")
nameless = body.replace(b'form-data; name="model"', b"form-data")  # MHD hands such a part over without a key
status, _, rbody = exchange(srv.port, request_bytes("/v1/audio/transcriptions", nameless, ctype, auth))
error_of(rbody, status, "invalid_multipart", "a part without a name (once a crash, found by fuzz_serve.py)")
status, body, _ = curl(srv.url + "/v2/whatever", key=KEY)
error_of(body, status, "not_found", "unknown route") and check(status == 404, "404")
status, body, head = curl(T, key=KEY)
error_of(body, status, "method_not_allowed", "GET on the upload route") and check(status == 405, "405")
check(curl(srv.url + "/health")[0] == 200, "alive after the 400s")

# 503: --workers 1 --queue 0 and one request uploading holds the only slot
audio = open(clip, "rb").read()
ctype, body = multipart([("response_format", "text")], audio)
raw = request_bytes("/v1/audio/transcriptions", body, ctype, auth)
hold = socket.create_connection(("127.0.0.1", srv.port))
hold.sendall(raw[:len(raw) // 2])
time.sleep(1)  # its headers are in: it holds the slot
status, body, head = curl(T, [], clip, KEY)
error_of(body, status, "overloaded", "a request past workers + queue") and check(status == 503, "503", str(status))
check("retry-after:" in head.lower(), "503 has Retry-After", head)
hold.sendall(raw[len(raw) // 2:])
status, _, rbody = read_response(hold)
hold.close()
check(status == 200 and rbody == cli_out["text"], "the request that held the slot is answered", "%s %r" % (status, rbody))

# 408: a body that trickles in past --timeout (2 s) without ever going silent for 2 s
t = socket.create_connection(("127.0.0.1", srv.port))
t.sendall(raw[:1000])
for i in range(6):
    time.sleep(0.5)
    t.sendall(raw[1000 + i * 10:1010 + i * 10])
t.sendall(raw[1060:])
status, _, rbody = read_response(t)
t.close()
error_of(rbody, status, "timeout", "a trickling body") and check(status == 408, "408", str(status))
# a client that goes silent mid-body is disconnected after --timeout
t = socket.create_connection(("127.0.0.1", srv.port))
t.sendall(raw[:1000])
t0 = time.time()
status, _, _ = read_response(t, timeout=20)
t.close()
check(time.time() - t0 < 8, "a silent client is disconnected within the timeout", "%.1f s" % (time.time() - t0))

# SIGTERM with a request in flight (its upload half done): it is answered, then exit 0
s2 = socket.create_connection(("127.0.0.1", srv.port))
s2.sendall(raw[:len(raw) // 2])
time.sleep(1)
srv.proc.terminate()
time.sleep(0.3)
s2.sendall(raw[len(raw) // 2:])
status, _, rbody = read_response(s2)
s2.close()
check(status == 200 and rbody == cli_out["text"], "the request in flight at SIGTERM is answered", str(status))
rc = srv.stop()
check(rc == 0, "exit 0 after SIGTERM", str(rc))
log = srv.text()
check("POST /v1/audio/transcriptions 200 audio=2.99s" in log, "a log line: method, path, status, audio seconds, ms")
check("POST /v1/audio/transcriptions 413" in log and "GET /health 200" in log, "log lines of refusals")
check("stopped" in log, "the drain ends with 'stopped'")
if check.failed:
    print(log[-3000:])
check.done("serve_http")
