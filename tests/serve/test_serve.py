"""`sotto serve` with curl and raw HTTP: every response_format equals `sotto transcribe`'s
output for the same file and options (timestamp_granularities[]=word: --word-timestamps);
the 401, 413 (declared and streamed), 400 (audio FFmpeg cannot decode, malformed forms,
NUL bytes, duplicated fields, loose temperatures), 404/405, 503 (+ Retry-After, only for
requests whose body is in) and 408 (slow heads and bodies, at the deadline) answers in
OpenAI's error shape; request heads that smuggle or are not HTTP: 400 and close, at once;
a SIGTERM while a request is in flight still answers it, exit 0 (SIGHUP drains too); stream=true's
events, and the work of a streaming client that leaves stopped; --cors (preflights,
Access-Control-Allow-Origin); an error's log line; a port in use, an unusable TMPDIR or an
API key no header carries refused before the model loads.

usage: test_serve.py SOTTO MODEL CLIPS WORKDIR"""
import concurrent.futures
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import wave

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import (Checks, Server, cli, curl, exchange, multipart, openai_json, openai_text, openai_verbose, read_response,
                       request_bytes, verbose_with_words)

sotto, model, clips, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
clip = os.path.join(clips, "librivox-0880.wav")
KEY = "test-key-3f1c"
DECODE = ["--beam-size", "1", "--no-fallback"]  # no fallback: the repeated minute below takes seconds
check = Checks()

srv = Server(sotto, model, [*DECODE, "-t", "1", "--workers", "1", "--queue", "0", "--api-key", KEY,
                            "--max-upload-mb", "1", "--timeout", "2", "--max-audio-s", "90"],
             os.path.join(work, "serve.log"))
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
fmts = {"srt": "srt", "vtt": "vtt", "verbose_json": "json"}
cli_out = {f: cli(sotto, model, c, clip, DECODE) for f, c in fmts.items()}
cli_out["json"] = openai_json(cli_out["verbose_json"])
cli_out["text"] = openai_text(cli_out["verbose_json"])  # OpenAI's: json's text, one paragraph
cli_out["verbose_json"] = openai_verbose(cli_out["verbose_json"])  # "task" first, the language's name
for f in ["json", "text", "srt", "vtt", "verbose_json"]:
    fields = [("model", "whisper-1"), ("response_format", f)]
    if f == "verbose_json":
        fields.append(("timestamp_granularities[]", "segment"))
    status, body, head = curl(T, fields, clip, KEY)
    check(f not in ("json", "verbose_json") or "content-type: application/json" in head.lower(), f + " is JSON", head)
    check(status == 200 and body == cli_out[f], "format %s equals sotto transcribe -f %s" % (f, fmts.get(f, "json "
                                                                                                  "(its text)")) +
          (" (OpenAI's task, the language's name)" if f == "verbose_json" else ""),
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
# the absolute form of a request target (as a proxy sends it; RFC 9112 3.2.2) is its path
status, _, rbody = exchange(srv.port, b"GET http://127.0.0.1:%d/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % srv.port)
check(status == 200 and json.loads(rbody) == {"status": "ok"}, "GET http://host:port/health is /health",
      "%s %r" % (status, rbody[:200]))
status, body, head = curl(T, [], clip)
error_of(body, status, "invalid_api_key", "no key: 401") and check(status == 401, "no key is 401")
check("www-authenticate: bearer" in head.lower(), "401 says WWW-Authenticate: Bearer", head)
status, body, _ = curl(T, [], clip, KEY + "x")
check(status == 401, "a wrong key (one more byte) is 401")
status, body, _ = curl(T, [], clip, KEY[:-1] + "X")
check(status == 401, "a wrong key (same length) is 401")
status, body, _ = curl(srv.url + "/v1/models", key=KEY)
check(status == 200 and [m["id"] for m in json.loads(body)["data"]] == ["tiny.en", "whisper-1"],
      "GET /v1/models lists tiny.en, and whisper-1 (a name requests may use)", body)
status, body, _ = curl(srv.url + "/v1/models")
check(status == 401, "GET /v1/models without a key is 401")
for name in ("tiny.en", "whisper-1"):  # the openai client's models.retrieve(NAME)
    status, body, _ = curl(srv.url + "/v1/models/" + name, key=KEY)
    check(status == 200 and json.loads(body) == {"id": name, "object": "model", "created": 0, "owned_by": "sotto"},
          "GET /v1/models/" + name, body)
status, body, _ = curl(srv.url + "/v1/models/gpt-4o", key=KEY)
error_of(body, status, "model_not_found", "another model") and check(status == 404, "GET /v1/models/gpt-4o is 404")

# what follows the close delimiter (RFC 2046's epilogue) is ignored; temperatures as the
# openai client writes them (str(0.00001) == "1e-05")
want = openai_text(cli(sotto, model, "json", clip, [*DECODE, "--temperature", "0.00001"]))
with open(clip, "rb") as fh:
    ctype, body = multipart([("response_format", "text"), ("temperature", "1e-05")], fh.read())
for tail in (b"\r\n", b"\r\nan epilogue\r\n"):
    status, _, got = exchange(srv.port, request_bytes("/v1/audio/transcriptions", body + tail, ctype,
                                                      ["Authorization: Bearer " + KEY]))
    check(status == 200 and got == want, "an epilogue of %d bytes ignored, temperature 1e-05" % len(tail),
          "(status %s) %r vs %r" % (status, got[:200], want[:200]))

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
    ([("prompt", "x" * 70000)], clip, "field_too_long", "a prompt over the field limit (64 KB)"),
    ([("model", "whisper-1")], None, "missing_file", "no file part"),
]
for fields, f, code, what in bad_forms:
    status, body, _ = curl(T, fields, f, KEY)
    error_of(body, status, code, what) and check(status == 400, what + " is 400", str(status))
# a language's name: OpenAI's API takes ISO-639-1 codes, and the message says which one
status, body, _ = curl(T, [("language", "english")], clip, KEY)
check(status == 400 and json.loads(body)["error"]["message"] == "language 'english' is not an ISO-639-1 code "
      "(its code: 'en')", "a language's name is refused naming its code", body)
# a prompt that is not UTF-8: param "prompt", in words of the form (it had named sotto_tokenize)
ctype, pbody = multipart([("prompt", b"caf\xe9 au lait")], open(clip, "rb").read())
status, _, rbody = exchange(srv.port, request_bytes("/v1/audio/transcriptions", pbody, ctype,
                                                    ["Authorization: Bearer " + KEY]))
err = json.loads(rbody)["error"] if status == 400 else {}
check(err.get("param") == "prompt" and err.get("message") == "prompt: invalid UTF-8 at byte 3 (0xe9)",
      "a prompt that is not UTF-8 is refused by name", "%s %r" % (status, rbody[:300]))
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
check("GET /v2/whatever" in json.loads(body)["error"]["message"], "the 404 names the path", body)
status, body, head = curl(T, key=KEY)
error_of(body, status, "method_not_allowed", "GET on the upload route") and check(status == 405, "405")
check(curl(srv.url + "/health")[0] == 200, "alive after the 400s")

# 503: --workers 1 --queue 0; a request transcribing a minute of audio holds the only slot.
# A request still uploading holds none: admission comes with the whole body.
audio = open(clip, "rb").read()
ctype, body = multipart([("response_format", "text")], audio)
raw = request_bytes("/v1/audio/transcriptions", body, ctype, auth)
hold = socket.create_connection(("127.0.0.1", srv.port))
hold.sendall(raw[:len(raw) // 2])
time.sleep(0.5)  # its head is in and half its body: it holds no slot
status, body, _ = curl(T, [("response_format", "text")], clip, KEY)
check(status == 200 and body == cli_out["text"], "a request uploading holds no slot (issue 23's 17)", str(status))
hold.close()  # (its deadline, --timeout 2 s, has about passed: the 408s are tested below)
long_wav = os.path.join(work, "long.wav")
with wave.open(clip) as w:
    params, frames = w.getparams(), w.readframes(w.getnframes())
with wave.open(long_wav, "wb") as w:  # 60 s at 8 kHz (every other sample): under the 1 MB limit
    w.setparams(params)
    w.setframerate(params.framerate // 2)
    half_rate = b"".join(frames[i:i + 2] for i in range(0, len(frames), 4))
    w.writeframes(half_rate * 20)
lctype, lbody = multipart([("response_format", "text")], open(long_wav, "rb").read())
# three minutes of it for the drain tests' servers (no upload limit there): the minute alone
# took 2.8 s on an idle Intel Xeon, about when a 1 s drain deadline started then passes
with wave.open(long_wav) as w:
    lparams, lframes = w.getparams(), w.readframes(w.getnframes())
long3_wav = os.path.join(work, "long3.wav")
with wave.open(long3_wav, "wb") as w:
    w.setparams(lparams)
    w.writeframes(lframes * 3)
l3ctype, l3body = multipart([("response_format", "text")], open(long3_wav, "rb").read())
busy = socket.create_connection(("127.0.0.1", srv.port))
busy.sendall(request_bytes("/v1/audio/transcriptions", lbody, lctype, auth))
time.sleep(1)  # it is being transcribed
with concurrent.futures.ThreadPoolExecutor(3) as ex:
    burst = list(ex.map(lambda _: curl(T, [], clip, KEY), range(3)))
check(all(st == 503 and "retry-after:" in hd.lower() and json.loads(b)["error"]["code"] == "overloaded"
          for st, b, hd in burst), "past workers + queue (--queue 0): 503 with Retry-After", str([b[0] for b in burst]))
status, _, rbody = read_response(busy, timeout=300)
busy.close()
check(status == 200 and len(rbody) > 100, "the request that held the slot is answered", "%s %r" % (status, rbody[:100]))

# a tiny file of enormous duration: 100 s at 1 kHz in 200 kB, past --max-audio-s 90: 413
# naming the limit, found as it is decoded
tiny_long = os.path.join(work, "tiny-long.wav")
with wave.open(tiny_long, "wb") as w:
    w.setnchannels(1), w.setsampwidth(2), w.setframerate(1000)
    w.writeframes(b"\0\1" * 100000)
t0 = time.time()
status, body, _ = curl(T, [], tiny_long, KEY)
error_of(body, status, "audio_too_long", "audio past --max-audio-s")
check(status == 413 and "--max-audio-s" in json.loads(body)["error"]["message"] and time.time() - t0 < 10,
      "audio past --max-audio-s is 413 naming it", "(%s %r, %.1f s)" % (status, body[:200], time.time() - t0))
# a client that leaves: its work is stopped, and the next request does not wait for it
gone = socket.create_connection(("127.0.0.1", srv.port))
gone.sendall(request_bytes("/v1/audio/transcriptions", lbody, lctype, auth))
time.sleep(1.5)
gone.close()
t0 = time.time()
while "the client left" not in srv.text() and time.time() - t0 < 20:
    time.sleep(0.1)
check(time.time() - t0 < 8, "the work of a client that left is stopped (not run to its end)",
      "%.1f s" % (time.time() - t0))
status, body, _ = curl(T, [("response_format", "text")], clip, KEY)
check(status == 200 and body == cli_out["text"], "the request after a client that left is answered", str(status))
# stream=true: text/event-stream, a delta and done (curl -N, as the README shows); a
# streaming client that leaves has its work stopped too
status, body, head = curl(T, [("stream", "true")], clip, KEY, extra=["-N"])
events = [json.loads(line[6:]) for line in body.decode().split("\n\n") if line.startswith("data: ")]
check(status == 200 and "content-type: text/event-stream" in head.lower() and body.endswith(b"\n\n") and
      [e["type"] for e in events] == ["transcript.text.delta", "transcript.text.done"] and
      events[-1]["text"] == json.loads(cli_out["json"])["text"], "stream=true: server-sent events",
      "%s %r" % (status, body[:300]))
check("x-accel-buffering: no" in head.lower(), "stream=true: X-Accel-Buffering: no (nginx passes events on)", head)
# a stream whose audio does not decode: 200, then the error event; the log line says so
junk = os.path.join(work, "junk.wav")
with open(junk, "wb") as f:
    f.write(bytes(range(256)) * 64)
status, body, _ = curl(T, [("stream", "true")], junk, KEY, extra=["-N"])
check(status == 200 and b"invalid_audio" in body, "stream=true of undecodable audio: its error event", body[:300])
sctype, sbody = multipart([("stream", "true")], open(long_wav, "rb").read())
gone = socket.create_connection(("127.0.0.1", srv.port))
gone.sendall(request_bytes("/v1/audio/transcriptions", sbody, sctype, auth))
gone.settimeout(10)
first = gone.recv(4096)
n_left = srv.text().count("the client left")
time.sleep(1)
gone.close()
t0 = time.time()
while srv.text().count("the client left") == n_left and time.time() - t0 < 20:
    time.sleep(0.1)
check(first.startswith(b"HTTP/1.1 200") and time.time() - t0 < 8,
      "stream=true: the work of a client that left is stopped", "%r, %.1f s" % (first[:60], time.time() - t0))
status, body, _ = curl(T, [("response_format", "text")], clip, KEY)
check(status == 200 and body == cli_out["text"], "the request after a streaming client that left is answered",
      str(status))

# 408: a body that trickles in past --timeout (2 s) without ever going silent for 2 s, and
# never ends: the 408 comes at the deadline, not when (if ever) the body is complete
t = socket.create_connection(("127.0.0.1", srv.port))
t.sendall(raw[:1000])
t0 = time.time()
answer = b""
t.settimeout(0.5)
for i in range(12):
    try:
        t.sendall(raw[1000 + i * 10:1010 + i * 10])
        got = t.recv(65536)
        if not got:
            break
        answer += got
    except socket.timeout:
        continue
    except OSError:
        break
t.close()
status = int(answer.split(b" ")[1]) if answer.startswith(b"HTTP/1.1 ") else None
check(status == 408 and time.time() - t0 < 4.5, "a trickling body gets its 408 at the deadline",
      "%s after %.1f s: %r" % (status, time.time() - t0, answer[:200]))
error_of(answer.partition(b"\r\n\r\n")[2], status, "timeout", "the 408's body")
# a body that keeps coming at over 64 kbit/s is taken past --timeout (2 s): each 8 kB
# received gives it 1 s more (a 25 MB upload over a 2 Mbit/s line had got 408 at 30 s)
t = socket.create_connection(("127.0.0.1", srv.port))
t0 = time.time()
piece = max(len(raw) // 16, 1)
for i in range(0, len(raw), piece):
    t.sendall(raw[i:i + piece])
    time.sleep(3.2 / 16)
status, _, steady = read_response(t, timeout=60)
t.close()
check(status == 200 and steady == cli_out["text"] and time.time() - t0 > 3,
      "a steady body slower than --timeout is taken", "%s after %.1f s: %r" % (status, time.time() - t0, steady[:200]))
# a client that goes silent mid-body is disconnected after --timeout
t = socket.create_connection(("127.0.0.1", srv.port))
t.sendall(raw[:1000])
t0 = time.time()
status, _, _ = read_response(t, timeout=20)
t.close()
check(time.time() - t0 < 8, "a silent client is disconnected within the timeout", "%.1f s" % (time.time() - t0))
# a client that half-closes with its body cut short: nothing is answered, and the log says so (not 408)
t = socket.create_connection(("127.0.0.1", srv.port))
t.sendall(raw[:5000])
t.shutdown(socket.SHUT_WR)
t0 = time.time()
status, _, _ = read_response(t, timeout=10)
t.close()
# ... and the server lets go at once: libmicrohttpd had missed an end of stream that came in
# with the body's bytes, holding the connection and its upload until --timeout
check(status is None and time.time() - t0 < 1.5, "a client gone mid-body is let go at once",
      "%s after %.1f s" % (status, time.time() - t0))

# a request head must arrive whole within --timeout (2 s), however it trickles
t = socket.create_connection(("127.0.0.1", srv.port))
t0 = time.time()
answer = b""
t.settimeout(0.5)
for piece in [b"GET /hea", b"l", b"t", b"h", b" HTTP/1.1\r\n", b"Host: a\r\n", b"X-A: 1\r\n", b"X-B: 2\r\n"] * 2:
    try:
        t.sendall(piece)
        answer += t.recv(65536)
        if answer:
            break
    except socket.timeout:
        continue
    except OSError:
        break
t.close()
check(answer.startswith(b"HTTP/1.1 408 ") and time.time() - t0 < 4, "a slow request head gets 408 at the deadline",
      "after %.1f s: %r" % (time.time() - t0, answer[:120]))

# framing and heads that libmicrohttpd took or answered twice (issue 23's 16, 18, 19):
# 400 and close, one answer, nothing smuggled behind
hidden = b"GET /v1/models HTTP/1.1\r\nHost: a\r\n" + auth[0].encode() + b"\r\n\r\n"
mp = b"Content-Type: " + ctype.encode() + b"\r\n" + auth[0].encode() + b"\r\n"
heads = [
    (b"POST /v1/audio/transcriptions HTTP/1.1\r\nHost: a\r\n" + mp + b"Content-Length: 0\r\nContent-Length: %d\r\n\r\n"
     % len(hidden) + hidden, 400, "more than once", "two differing Content-Lengths"),
    (b"POST /v1/audio/transcriptions HTTP/1.1\r\nHost: a\r\n" + mp + b"Content-Length: 18446744073709551617\r\n\r\n"
     + hidden, 400, "not a length", "an overflowing Content-Length"),
    (b"POST /v1/audio/transcriptions HTTP/1.1\r\nHost: a\r\n" + mp + b"Content-Length: -5\r\n\r\n" + hidden, 400,
     "not a length", "a negative Content-Length"),
    (b"POST /v1/audio/transcriptions HTTP/1.1\r\nHost: a\r\n" + mp + b"Content-Length: 5\r\n"
     b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + hidden, 400, "both", "Transfer-Encoding with Content-Length"),
    (b"GET /health HTTP/1.1\r\n\r\n", 400, "Host", "HTTP/1.1 without Host"),
    (b"GET /v1/models HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer " + KEY.encode() + b"\0junk\r\n\r\n", 400, "NUL",
     "a NUL byte in a header (Bearer KEY\\0junk)"),
    (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 400, "not HTTP", "a binary request line (a TLS hello)"),
]
for raw_head, want, what, name in heads:
    t0 = time.time()
    status, hd, rbody = exchange(srv.port, raw_head, timeout=10)
    try:
        one = "error" in json.loads(rbody)  # one JSON body, no second answer behind it
    except ValueError:
        one = False
    check(status == want and one and what in json.loads(rbody)["error"]["message"]
          and hd.get("connection") == "close" and time.time() - t0 < 1,
          name + ": %d and close, at once, one answer" % want, "(%s %r, %.1f s)" % (status, rbody[:200], time.time() - t0))
# two requests in one packet: one answer, and the connection closes (each request is checked at the door)
status, _, rbody = exchange(srv.port, b"GET /health HTTP/1.1\r\nHost: a\r\n\r\n" + hidden)
check(status == 200 and b"HTTP/1." not in rbody, "a pipelined second request is not served", repr(rbody[:200]))
# form values: NUL bytes, a field given twice, temperatures not plain decimals
for fields, param, code, what in [
        ([("response_format", "json\0srt")], "response_format", "invalid_value", "a NUL byte in response_format"),
        ([("language", "en"), ("language", "en")], "language", "duplicate_field", "language given twice"),
        ([("temperature", " 0.5")], "temperature", "invalid_value", "temperature ' 0.5'"),
        ([("temperature", "0x1p-1")], "temperature", "invalid_value", "temperature 0x1p-1")]:
    fctype, fbody = multipart(fields, audio)
    status, _, rbody = exchange(srv.port, request_bytes("/v1/audio/transcriptions", fbody, fctype, auth))
    ok = error_of(rbody, status, code, what)
    check(ok and status == 400 and json.loads(rbody)["error"]["param"] == param and
          (code != "duplicate_field" or "language" in json.loads(rbody)["error"]["message"]), what + " is 400",
          "(%s %r)" % (status, rbody[:200]))

# SIGTERM with a request in flight (its upload half done): it is answered, then exit 0
s2 = socket.create_connection(("127.0.0.1", srv.port))
s2.sendall(raw[:len(raw) // 2])
time.sleep(1)
srv.terminate()
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
check(re.search(r"POST /v1/audio/transcriptions 413 audio=- \d+ms \(file_too_large: the request is larger", log) and
      re.search(r"POST /v1/audio/transcriptions 400 audio=- \d+ms \(invalid_value: temperature must be", log),
      "an error's log line names its code and message", log[-2000:])
check(re.search(r"POST /v1/audio/transcriptions 200 audio=- \d+ms \(the stream ended in an error: invalid_audio: "
                r"junk.wav: ", log), "a stream's error event after its 200 is in its log line", log[-2000:])
check("stopped" in log, "the drain ends with 'stopped'")
said_408 = [line for line in log.splitlines() if " 408 " in line]
check(all("did not arrive" in line or "too slowly" in line for line in said_408) and len(said_408) == 2, "408 is logged only where it was sent "
      "(the trickling body and head; not the half-closed cut body)", str(said_408))
check("POST /v1/audio/transcriptions - audio=-" in log, "a request left unanswered is logged with status -")
check("internal error" not in log, "a 408's close is not logged as libmicrohttpd's internal error", log[-2000:])
check(all(2000 <= int(line.split("ms")[0].rsplit(" ", 1)[1]) < 3500 for line in said_408),
      "a 408's line gives the time of the answer (--timeout 2 s), not of the close", str(said_408))
if check.failed:
    print(log[-3000:])


def lifecycle(args, name):
    """A server on ARGS with the long request in flight: (server, socket)."""
    # beam search over three minutes: several seconds even on a fast idle machine, so the
    # drain's deadline (1 s) passes while it is still being transcribed
    lsrv = Server(sotto, model, ["--beam-size", "5", "--no-fallback", "-t", "1", "--workers", "1", *args],
                  os.path.join(work, name + ".log"))
    conn = socket.create_connection(("127.0.0.1", lsrv.port))
    conn.sendall(request_bytes("/v1/audio/transcriptions", l3body, l3ctype))
    time.sleep(1)  # being transcribed
    return lsrv, conn


# a request that waits past --queue-timeout for a worker: 503 with Retry-After; then a drain
# past --drain-timeout: the work in flight is stopped, answered 503, exit 128 + 15
lsrv, conn = lifecycle(["--queue", "4", "--queue-timeout", "1", "--drain-timeout", "1"], "lifecycle1")
t0 = time.time()
status, body, head = curl(lsrv.url + "/v1/audio/transcriptions", [], clip)
error_of(body, status, "overloaded", "waited past --queue-timeout")
check(status == 503 and "retry-after:" in head.lower() and "--queue-timeout" in json.loads(body)["error"]["message"]
      and time.time() - t0 < 4, "a request waiting past --queue-timeout gets 503 with Retry-After",
      "(%s %r %.1f s)" % (status, body[:200], time.time() - t0))
t0 = time.time()  # the same with stream=true: the stream's 200 waits for a worker (it had come at once)
status, body, head = curl(lsrv.url + "/v1/audio/transcriptions", [("stream", "true")], clip)
check(status == 503 and "retry-after:" in head.lower() and "--queue-timeout" in json.loads(body)["error"]["message"]
      and time.time() - t0 < 4, "a streaming request waiting past --queue-timeout gets the same 503, no stream",
      "(%s %r %.1f s)" % (status, body[:200], time.time() - t0))
lsrv.terminate()
t0 = time.time()
status, _, rbody = read_response(conn, timeout=30)
rc = lsrv.proc.wait(30)  # no second signal: the drain's deadline alone ends it
lsrv.stop()
check("--drain-timeout passed" in lsrv.text(), "the log says the drain's deadline passed", lsrv.text()[-500:])
check(status == 503 and b"shutting down" in rbody and rc == 143 and time.time() - t0 < 20,
      "past --drain-timeout the work in flight is stopped: 503, exit 143", "(%s %r, exit %s, %.1f s)"
      % (status, rbody[:200], rc, time.time() - t0))
# a second signal during the drain stops it at once
lsrv, conn = lifecycle(["--drain-timeout", "600"], "lifecycle2")
lsrv.proc.send_signal(signal.SIGINT)
time.sleep(0.5)
lsrv.proc.send_signal(signal.SIGINT)
t0 = time.time()
status, _, rbody = read_response(conn, timeout=30)
rc = lsrv.proc.wait(30)
lsrv.stop()
check(status == 503 and rc == 130 and time.time() - t0 < 20, "a second SIGINT during the drain stops it: 503, exit 130",
      "(%s %r, exit %s, %.1f s)" % (status, rbody[:200], rc, time.time() - t0))
check("a second signal" in lsrv.text(), "the log says why", lsrv.text()[-500:])
# ... and does not wait for an upload that stalls (a client silent mid-body): the drain cut
# short leaves with the uploads still arriving (it had waited 10 s more, then _exit)
usrv = Server(sotto, model, ["-t", "1", "--workers", "1", "--timeout", "60"], os.path.join(work, "upload_stall.log"))
stall = socket.create_connection(("127.0.0.1", usrv.port))
stall.sendall(raw[:len(raw) // 3])
time.sleep(0.5)
usrv.proc.send_signal(signal.SIGTERM)
time.sleep(0.5)
usrv.proc.send_signal(signal.SIGTERM)
t0 = time.time()
rc = usrv.proc.wait(30)
stall.close()
usrv.stop()
check(rc == 143 and time.time() - t0 < 5, "a second SIGTERM does not wait for a stalled upload",
      "(exit %s after %.1f s) %s" % (rc, time.time() - t0, usrv.text()[-300:]))

# --cors: a browser's preflight answered without the key, every answer to an allowed
# origin carries Access-Control-Allow-Origin (errors too, so the page can read them);
# another origin's preflight gets 403, and without --cors no CORS header is sent
APP = "http://localhost:3000"
csrv = Server(sotto, model, [*DECODE, "-t", "1", "--workers", "1", "--api-key", KEY,
                             "--cors", "http://app.example, " + APP], os.path.join(work, "cors.log"))
pre = ["Origin: " + APP, "Access-Control-Request-Method: POST",
       "Access-Control-Request-Headers: authorization, content-type"]
status, h, _ = exchange(csrv.port, request_bytes("/v1/audio/transcriptions", b"", None, pre, method="OPTIONS"))
check(status == 204 and h.get("access-control-allow-origin") == APP and "POST" in h.get("access-control-allow-methods", "")
      and h.get("access-control-allow-headers") == "authorization, content-type" and h.get("vary") == "Origin",
      "--cors: the preflight of an allowed origin, without the key: 204 and its headers", "(%s %r)" % (status, h))
status, h, body = exchange(csrv.port, request_bytes("/v1/audio/transcriptions", b"", None,
                                                    ["Origin: http://evil.example", "Access-Control-Request-Method: POST"],
                                                    method="OPTIONS"))
check(status == 403 and "access-control-allow-origin" not in h, "--cors: another origin's preflight gets 403",
      "(%s %r %r)" % (status, h, body[:200]))
error_of(body, status, "origin_not_allowed", "--cors: the 403 in OpenAI's error shape")
ctype, mbody = multipart([("model", "whisper-1")], open(clip, "rb").read())
status, h, body = exchange(csrv.port, request_bytes("/v1/audio/transcriptions", mbody, ctype,
                                                    ["Origin: " + APP, "Authorization: Bearer " + KEY]))
check(status == 200 and h.get("access-control-allow-origin") == APP and body == cli_out["json"],
      "--cors: an allowed origin's transcription carries Access-Control-Allow-Origin", "(%s %r %r)" % (status, h, body[:200]))
status, h, body = exchange(csrv.port, request_bytes("/v1/audio/transcriptions", mbody, ctype, ["Origin: " + APP]))
check(status == 401 and h.get("access-control-allow-origin") == APP, "--cors: a 401 carries it too (the page reads it)",
      "(%s %r)" % (status, h))
status, h, _ = exchange(csrv.port, request_bytes("/v1/models", b"", None,
                                                 ["Origin: http://evil.example", "Authorization: Bearer " + KEY],
                                                 method="GET"))
check(status == 200 and "access-control-allow-origin" not in h, "--cors: no header for an origin not named", "(%s %r)" % (status, h))
csrv.stop()
csrv = Server(sotto, model, ["-t", "1", "--workers", "1", "--cors", "*"], os.path.join(work, "cors_any.log"))
status, h, _ = exchange(csrv.port, request_bytes("/v1/models", b"", None, ["Origin: http://any.example"], method="GET"))
check(status == 200 and h.get("access-control-allow-origin") == "*" and "vary" not in h, "--cors '*': any origin",
      "(%s %r)" % (status, h))
csrv.stop()
# without --cors (the first server's options, running again): no CORS header, OPTIONS as before
nsrv = Server(sotto, model, ["-t", "1", "--workers", "1"], os.path.join(work, "cors_none.log"))
status, h, _ = exchange(nsrv.port, request_bytes("/v1/models", b"", None, ["Origin: " + APP], method="GET"))
check(status == 200 and not any(k.startswith("access-control-") for k in h), "no --cors: no CORS header",
      "(%s %r)" % (status, h))
status, h, _ = exchange(nsrv.port, request_bytes("/v1/audio/transcriptions", b"", None, pre, method="OPTIONS"))
check(status == 405 and not any(k.startswith("access-control-") for k in h), "no --cors: a preflight gets 405",
      "(%s %r)" % (status, h))
nsrv.stop()
r = subprocess.run([sotto, "serve", "-m", model, "--cors", " , "], capture_output=True, text=True)
check(r.returncode == 1 and "--cors names no origin" in r.stderr, "--cors with no origin: exit 1", r.stderr)
# what serving needs is checked before the model loads: the address, a TMPDIR for uploads,
# an API key a header can carry; SIGHUP drains as SIGTERM does; beyond loopback without a
# key, a warning
busy = socket.socket()
busy.bind(("127.0.0.1", 0))
busy.listen()
r = subprocess.run([sotto, "serve", "-m", model, "--port", str(busy.getsockname()[1])], capture_output=True, text=True)
busy.close()
check(r.returncode == 2 and "Address already in use" in r.stderr and "worker" not in r.stderr,
      "a port in use: exit 2 before the model loads", r.stderr)
r = subprocess.run([sotto, "serve", "-m", model, "--port", "0"], capture_output=True, text=True,
                   env={**os.environ, "TMPDIR": os.path.join(work, "no-such-dir")})
check(r.returncode == 2 and "cannot store uploads in " + os.path.join(work, "no-such-dir") in r.stderr and
      "No such file or directory" in r.stderr, "an unusable TMPDIR: exit 2 at start, naming it", r.stderr)
r = subprocess.run([sotto, "serve", "-m", model, "--port", "0"], capture_output=True, text=True,
                   env={**os.environ, "SOTTO_API_KEY": "sk-abc\n"})
check(r.returncode == 1 and "SOTTO_API_KEY) holds a newline at character 7" in r.stderr,
      "an API key with a newline: refused", r.stderr)
hsrv = Server(sotto, model, ["-t", "1", "--workers", "1", "--host", "0.0.0.0"], os.path.join(work, "hup.log"))
check("warning: listening on 0.0.0.0 without an API key" in hsrv.text(), "0.0.0.0 without a key: a warning",
      hsrv.text())
hsrv.proc.send_signal(signal.SIGHUP)
rc = hsrv.proc.wait(30)
check(rc == 0 and "SIGHUP: finishing 0 requests" in hsrv.text() and "stopped" in hsrv.text(),
      "SIGHUP drains as SIGTERM does: exit 0", "%s %s" % (rc, hsrv.text()))
hsrv.stop()
check.done("serve_http")
