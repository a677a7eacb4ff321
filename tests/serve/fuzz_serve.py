"""Property test of `sotto serve` against hostile HTTP: seeded random malformed requests
(request lines, headers, Content-Length and chunked framing, multipart bodies with broken
boundaries, part headers, truncations, byte flips, duplicate and oversized parts, clients
that hang up mid-body) thrown at the running server. Properties: every answer is a well-
formed HTTP response with a 4xx status, or 200 for a request that is in fact valid, never
5xx; /health answers between rounds; a valid request is still transcribed right at the
end; SIGTERM then exits 0 with no sanitizer report on stderr (run under the ASan build
this is the leak and memory-error check). Before the random rounds, a fixed corpus (issue
23's 14-19: smuggling Content-Lengths, Transfer-Encoding with Content-Length, NUL bytes,
heads that are not HTTP, slow heads and bodies) must each get its exact answer.
The WebSocket route (GET /v1/realtime) joins in: after a valid upgrade, malformed frames,
fragmented messages with control frames between, unmasked client frames and reserved bits
(RFC 6455: closed with 1002), invalid UTF-8 (1007), a length past the limit, a close or a
hang-up in the middle of a message, random bytes, and event JSON valid and mutated; a
fixed corpus of them must get its exact close code, and /health and a new session answer
after them.

usage: fuzz_serve.py SOTTO MODEL CLIPS WORKDIR [SECONDS] [SEED]"""
import base64
import collections
import json
import os
import random
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import Checks, Server, cli, curl, exchange, multipart, openai_text, read_response, request_bytes

sotto, model, clips, work = sys.argv[1:5]
seconds = float(sys.argv[5]) if len(sys.argv) > 5 else 20
seed = int(sys.argv[6]) if len(sys.argv) > 6 else 17
os.makedirs(work, exist_ok=True)
rng = random.Random(seed)
clip = os.path.join(clips, "librivox-0880.wav")
audio = open(clip, "rb").read()
DECODE = ["--beam-size", "1", "--sample-len", "8"]
check = Checks()
srv = Server(sotto, model, [*DECODE, "-t", "1", "--workers", "1", "--queue", "4", "--timeout", "2",
                            "--max-upload-mb", "1", "--api-key", "k", "--max-audio-s", "20",
                            "--max-message-kb", "64", "--max-sessions", "64"], os.path.join(work, "serve.log"))
AUTH = "Authorization: Bearer k"
PATHS = ["/v1/audio/transcriptions", "/v1/audio/translations", "/v1/models", "/health", "/", "/v1/audio/",
         "/v1/audio/transcriptions?x=1", "/%00", "/" + "a" * 3000, "*"]
FIELDS = ["model", "language", "prompt", "temperature", "response_format", "timestamp_granularities[]",
          "file", "", "x" * 300, "file\"; filename=\"a", "stream"]
VALUES = ["", "json", "text", "srt", "vtt", "verbose_json", "word", "segment", "en", "de", "-1", "1e309", "nan",
          "0.3", "whisper-1", "tiny.en", "\xff\xfe", "x" * 5000, "\r\n--", "\x00"]


def rand_bytes(n):
    return bytes(rng.randrange(256) for _ in range(n))


def mutate(b):
    b = bytearray(b)
    for _ in range(rng.randrange(1, 6)):
        op = rng.randrange(4)
        i = rng.randrange(len(b) + 1)
        if op == 0 and b:
            b[min(i, len(b) - 1)] = rng.randrange(256)
        elif op == 1:
            b[i:i] = rng.choice([b"\r\n", b"--", b"\"", b";", b"\x00", b"\r\n\r\n", rand_bytes(rng.randrange(1, 9))])
        elif op == 2:
            del b[i:i + rng.randrange(1, 40)]
        else:
            b[i:i] = b[i:i + rng.randrange(1, 200)] * rng.randrange(1, 4)
    return bytes(b)


def form():
    fields = [(rng.choice(FIELDS), rng.choice(VALUES)) for _ in range(rng.randrange(0, 6))]
    f = None if rng.random() < 0.2 else rng.choice([b"", audio[:rng.randrange(1, 9000)], rand_bytes(500), audio])
    boundary = rng.choice(["b", "x" * 70, "sotto-fuzz", "a b", "\"q\"", "-" * 10])
    ctype, body = multipart(fields, f, rng.choice(["a.wav", "", "x" * 400, "../../etc/passwd", "é.mp3"]), boundary)
    if rng.random() < 0.3:
        ctype = rng.choice(["multipart/form-data", "multipart/form-data; boundary=", "multipart/form-data; boundary=zz",
                            "multipart/mixed; boundary=b", "text/plain", "multipart/form-data; boundary=\"unterminated",
                            ctype + "; charset=utf-8", ctype.upper()])
    if rng.random() < 0.6:
        body = mutate(body)
    return ctype, body


def case():
    """(bytes to send, whether to hang up without reading)."""
    kind = rng.randrange(6)
    if kind == 0:
        return rand_bytes(rng.randrange(1, 2000)), False
    ctype, body = form()
    headers = [AUTH] if rng.random() < 0.85 else [rng.choice(["Authorization: Bearer", "Authorization: Basic aw==",
                                                              "Authorization: Bearer kk", "Authorization: " + "k" * 9000])]
    raw = request_bytes(rng.choice(PATHS) if rng.random() < 0.3 else "/v1/audio/transcriptions", body, ctype, headers,
                        rng.choice(["POST"] * 6 + ["GET", "PUT", "HEAD", "DELETE", "P\x00ST", "OPTIONS"]))
    if kind == 1:  # broken framing: lengths, chunked, versions, header lines
        head, _, rest = raw.partition(b"\r\n\r\n")
        head = head.replace(b"Content-Length: %d" % len(body), rng.choice([
            b"Content-Length: -5", b"Content-Length: 99999999999999999999", b"Content-Length: 12abc",
            b"Content-Length: %d\r\nContent-Length: 3" % len(body), b"Transfer-Encoding: chunked",
            b"Transfer-Encoding: gzip, chunked", b"Content-Length: 0"]))
        if b"chunked" in head and rng.random() < 0.7:
            rest = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in
                            (rest[i:i + 777] for i in range(0, len(rest), 777))) + b"0\r\n\r\n"
            if rng.random() < 0.5:
                rest = mutate(rest)
        if rng.random() < 0.3:
            head = head.replace(b"HTTP/1.1", rng.choice([b"HTTP/9.9", b"HTTP/1.0", b"HTTP/1", b""]), 1)
        if rng.random() < 0.3:
            head += rng.choice([b"\r\nX-Bad header", b"\r\n: empty", b"\r\nX-Big: " + b"y" * 40000,
                                b"\r\n\x00\x01\x02: \xff"])
        raw = head + b"\r\n\r\n" + rest
    if kind == 2:  # a client that hangs up part way
        return raw[:rng.randrange(1, len(raw))], True
    return raw, False


# The corpus of issue 23 (14-19): each case answers as RFC 9112 and OpenAI's error shape
# say: its status, one JSON error body with a message holding WHAT, Connection: close.
ctype0, body0 = multipart([("response_format", "text")], audio[:4000])
post0 = b"POST /v1/audio/transcriptions HTTP/1.1\r\nHost: a\r\n" + AUTH.encode() + b"\r\nContent-Type: " + ctype0.encode()
smuggled = b"GET /v1/models HTTP/1.1\r\nHost: a\r\n" + AUTH.encode() + b"\r\n\r\n"
CORPUS = [
    ("two differing Content-Lengths", post0 + b"\r\nContent-Length: 0\r\nContent-Length: %d\r\n\r\n" % len(smuggled)
     + smuggled, 400, "more than once"),
    ("Content-Length overflowing 64 bits", post0 + b"\r\nContent-Length: 18446744073709551617\r\n\r\n" + smuggled, 400,
     "not a length"),
    ("a negative Content-Length", post0 + b"\r\nContent-Length: -5\r\n\r\n" + smuggled, 400, "not a length"),
    ("Content-Length with a sign", post0 + b"\r\nContent-Length: +5\r\n\r\n" + smuggled, 400, "not a length"),
    ("Transfer-Encoding with Content-Length", post0 + b"\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
     b"0\r\n\r\n" + smuggled, 400, "both"),
    ("Transfer-Encoding twice", post0 + b"\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
     400, "more than once"),
    ("a NUL byte in a header", b"GET /v1/models HTTP/1.1\r\nHost: a\r\n" + AUTH.encode() + b"\0junk\r\n\r\n", 400, "NUL"),
    ("a NUL byte in a form value", request_bytes("/v1/audio/transcriptions", multipart(
        [("response_format", "json\0srt")], audio[:4000])[1], ctype0, [AUTH]), 400, "NUL"),
    ("HTTP/1.1 without Host", b"GET /health HTTP/1.1\r\n\r\n", 400, "Host"),
    ("a binary request line", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + rand_bytes(300), 400, "not HTTP"),
    ("HTTP/2.0", b"GET /health HTTP/2.0\r\nHost: a\r\n\r\n", 505, "HTTP/2.0"),
]


def corpus_case(name, raw, want, what):
    t0 = time.time()
    status, headers, body = exchange(srv.port, raw, timeout=10)
    try:
        msg = json.loads(body)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        msg = None
    check(status == want and msg is not None and what in msg and headers.get("connection") == "close",
          "corpus: %s: %d, one error body, close" % (name, want), "(%s %r)" % (status, body[:300]))
    check(time.time() - t0 < 1.5, "corpus: %s: answered at once" % name, "%.1f s" % (time.time() - t0))


def trickle(raw, every, until):
    """Sends RAW a byte per EVERY seconds until the answer comes or UNTIL s pass: (status, seconds)."""
    t0 = time.time()
    answer = b""
    with socket.create_connection(("127.0.0.1", srv.port)) as s:
        s.settimeout(every)
        for i in range(min(len(raw), int(until / every) + 1)):
            try:
                s.sendall(raw[i:i + 1])
                answer += s.recv(65536)
                if answer:
                    break
            except socket.timeout:
                continue
            except OSError:
                break
    m = answer.split(b" ", 2)
    return (int(m[1]) if len(m) > 2 and m[0] == b"HTTP/1.1" else None), time.time() - t0


for name, raw, want, what in CORPUS:
    corpus_case(name, raw, want, what)


# ---- the WebSocket (GET /v1/realtime): frames as RFC 6455 section 5 lays them out ----
WS_HEAD = ("GET /v1/realtime?intent=transcription HTTP/1.1\r\nHost: a\r\n%s\r\nUpgrade: websocket\r\n"
           "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
           % AUTH).encode()


def frame(opcode, payload, fin=True, mask=True, rsv=0, length=None):
    n = len(payload) if length is None else length
    head = bytes([(0x80 if fin else 0) | rsv << 4 | opcode])
    m = 0x80 if mask else 0
    if n < 126:
        head += bytes([m | n])
    elif n < 65536:
        head += bytes([m | 126]) + struct.pack(">H", n)
    else:
        head += bytes([m | 127]) + struct.pack(">Q", n)
    if not mask:
        return head + payload
    key = rand_bytes(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def ws_open():
    """A socket past a 101 (and the session.created frame read), or None."""
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    s.sendall(WS_HEAD)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            s.close()
            return None, data
        data += chunk
    if not data.startswith(b"HTTP/1.1 101"):
        s.close()
        return None, data
    return s, data.partition(b"\r\n\r\n")[2]


def ws_frames(s, data=b"", timeout=3):
    """The server's frames [(opcode, payload)] until it closes or TIMEOUT passes; the
    frames must be well formed (unmasked, as a server sends them)."""
    s.settimeout(0.2)
    t_end = time.time() + timeout
    out = []
    while time.time() < t_end:
        try:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        except socket.timeout:
            pass
        except OSError:
            break
        while len(data) >= 2:
            op, n, at = data[0] & 0x0f, data[1] & 0x7f, 2
            check(not data[1] & 0x80, "the server's frames are unmasked")
            if n == 126:
                n, at = (struct.unpack(">H", data[2:4])[0], 4) if len(data) >= 4 else (None, 0)
            elif n == 127:
                n, at = (struct.unpack(">Q", data[2:10])[0], 10) if len(data) >= 10 else (None, 0)
            if n is None or len(data) < at + n:
                break
            out.append((op, data[at:at + n]))
            data = data[at + n:]
        if out and out[-1][0] == 8:
            break
    return out


def close_code(frames):
    closes = [p for op, p in frames if op == 8]
    return struct.unpack(">H", closes[0][:2])[0] if closes and len(closes[0]) >= 2 else None


EVENTS = [b'{"type": "input_audio_buffer.append", "audio": "AAAAAAAA"}', b'{"type": "input_audio_buffer.commit"}',
          b'{"type": "input_audio_buffer.clear"}', b'{"type": "session.update", "session": {"type": "transcription", '
          b'"audio": {"input": {"format": {"type": "audio/pcm", "rate": 16000}, "turn_detection": null}}}}',
          b'{"type": "transcription_session.update", "session": {"turn_detection": {"type": "server_vad"}}}',
          b'{"type": "x"}', b'[]', b'{"type": "input_audio_buffer.append", "audio": "' + b"QUFB" * 3000 + b'"}']
ev_audio = base64.b64encode(audio[44:44 + 16000]).decode()
EVENTS.append(('{"type": "input_audio_buffer.append", "audio": "%s"}' % ev_audio).encode())


def ws_case():
    """Random frames on a session: (bytes after the handshake, whether to hang up)."""
    kind = rng.randrange(8)
    ev = rng.choice(EVENTS)
    if rng.random() < 0.4:
        ev = mutate(ev)
    if kind == 0:
        return rand_bytes(rng.randrange(1, 600)), False
    if kind == 1:  # fragmented, a ping between
        k = rng.randrange(1, max(2, len(ev)))
        return (frame(1, ev[:k], fin=False) + frame(9, b"p") + frame(0, ev[k:])), False
    if kind == 2:
        return frame(1, ev, mask=False), False
    if kind == 3:
        return frame(rng.choice([1, 2, 0, 3, 11, 9]), ev, fin=rng.random() < 0.7, rsv=rng.randrange(8)), False
    if kind == 4:  # a length past anything, then nothing or a little
        return frame(1, rand_bytes(rng.randrange(0, 50)), length=rng.choice([70000, 2 ** 31, 2 ** 63 - 1])), True
    if kind == 5:  # a close in the middle of a message
        return frame(1, ev[:5], fin=False) + frame(8, struct.pack(">H", 1000)), False
    if kind == 6:  # a hang-up in the middle of a frame
        f = frame(1, ev)
        return f[:rng.randrange(1, len(f))], True
    return b"".join(frame(1, rng.choice(EVENTS)) for _ in range(rng.randrange(1, 5))) + frame(8, b""), False


WS_CORPUS = [
    ("an unmasked client frame", frame(1, EVENTS[1], mask=False), 1002),
    ("a reserved bit", frame(1, EVENTS[1], rsv=4), 1002),
    ("a continuation with no message", frame(0, EVENTS[1]), 1002),
    ("an unknown opcode", frame(3, b"x"), 1002),
    ("a fragmented ping", frame(9, b"x", fin=False), None),  # wslay's frame reader refuses it: a close, no code
    ("invalid UTF-8 in a text message", frame(1, b'{"type": "\xff\xfe"}'), 1007),
    ("a message past twice --max-message-kb", frame(1, b"x" * 10, length=2 ** 40), 1009),
    ("a close mid-message", frame(1, b"{", fin=False) + frame(8, struct.pack(">H", 1000)), 1000),
]
for name, raw, want in WS_CORPUS:
    s, rest = ws_open()
    check(s is not None, "ws corpus: %s: 101" % name, repr(rest[:200]))
    if s is None:
        continue
    try:
        s.sendall(raw)
    except OSError:
        pass
    frames = ws_frames(s, rest)
    s.close()
    check(close_code(frames) == want and frames[-1][0] == 8, "ws corpus: %s: close %s" % (name, want),
          str(frames)[:300])
# fragments with a ping between them join into one event: the session answers it
s, rest = ws_open()
ev = EVENTS[6]  # [] : an error event for a message that is not an object
s.sendall(frame(1, ev[:1], fin=False) + frame(9, b"hi") + frame(0, ev[1:]))
frames = ws_frames(s, rest, timeout=1)
s.sendall(frame(8, struct.pack(">H", 1000)))
frames += ws_frames(s)
s.close()
texts = [json.loads(p) for op, p in frames if op == 1]
check([op for op, _ in frames if op == 10] == [10] and any(t.get("type") == "error" and
      t["error"]["code"] == "invalid_event" for t in texts) and close_code(frames) == 1000,
      "ws corpus: a fragmented message with a ping between: pong, its error event, close", str(frames)[:400])


def wav(rate, n_frames, declared=None):
    """A 16-bit mono WAV of N_FRAMES at RATE whose data chunk declares DECLARED bytes."""
    data = b"\0\1" * n_frames
    n = len(data) if declared is None else declared
    return (b"RIFF" + struct.pack("<I", (36 + n) & 0xffffffff) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 1, 1, rate,
            2 * rate, 2, 16) + b"data" + struct.pack("<I", n & 0xffffffff) + data)


# a tiny file of enormous duration (100 s at 1 kHz in 200 kB, past --max-audio-s 20): 413 at once
big_ctype, big_body = multipart([], wav(1000, 100000))
t0 = time.time()
status, _, body = exchange(srv.port, request_bytes("/v1/audio/transcriptions", big_body, big_ctype, [AUTH]), 30)
try:
    err = json.loads(body)["error"]
except (ValueError, KeyError, TypeError):
    err = {}
check(status == 413 and err.get("code") == "audio_too_long" and "--max-audio-s" in err.get("message", "")
      and time.time() - t0 < 10, "corpus: audio past --max-audio-s: 413 naming it, at once",
      "(%s %r %.1f s)" % (status, body[:200], time.time() - t0))
# a WAV whose header declares 4 GB of samples at 8 kHz (74 hours) over 2 kB of them: the
# 0.125 s that are there are transcribed (a truncated WAV is read with a warning), never 74
# hours: the bound is that of one short decode with fallback, loose for a sanitized build on
# a loaded machine (19 s seen there), where 74 hours would take days
lie_ctype, lie_body = multipart([], wav(8000, 1000, declared=0xfffffff0))
t0 = time.time()
status, _, body = exchange(srv.port, request_bytes("/v1/audio/transcriptions", lie_body, lie_ctype, [AUTH]), 120)
check(status in (200, 400, 413) and time.time() - t0 < 90, "corpus: a header declaring 74 hours over 2 kB",
      "(%s %r %.1f s)" % (status, body[:200], time.time() - t0))
# slow heads and bodies (--timeout 2): the 408 comes at the deadline, while the client still trickles
status, took = trickle(b"GET /health HTTP/1.1\r\nHost: a\r\nX-Slow: " + b"z" * 100 + b"\r\n\r\n", 0.3, 6)
check(status == 408 and took < 3.5, "corpus: a slow head gets 408 at --timeout", "(%s after %.1f s)" % (status, took))
slow_body = request_bytes("/v1/audio/transcriptions", body0, ctype0, [AUTH])
head_len = slow_body.index(b"\r\n\r\n") + 4
t0 = time.time()
with socket.create_connection(("127.0.0.1", srv.port)) as s:
    s.sendall(slow_body[:head_len])
    status, took = None, 0
    s.settimeout(0.3)
    answer = b""
    for i in range(head_len, min(len(slow_body), head_len + 20)):
        try:
            s.sendall(slow_body[i:i + 1])
            answer += s.recv(65536)
            if answer:
                break
        except socket.timeout:
            continue
        except OSError:
            break
    took = time.time() - t0
check(answer.startswith(b"HTTP/1.1 408 ") and took < 3.5, "corpus: a slow body gets 408 at --timeout",
      "(%r after %.1f s)" % (answer[:60], took))

statuses = collections.Counter()
t_end = time.time() + seconds
n = 0
while time.time() < t_end:
    raw, hang_up = case()
    n += 1
    if n % 4 == 0:  # a WebSocket session
        s, rest = ws_open()
        statuses["ws " + ("101" if s else rest[9:12].decode(errors="replace"))] += 1
        if s:
            raw, hang_up = ws_case()
            try:
                s.sendall(raw)
                if not hang_up:
                    ws_frames(s, rest, timeout=0.5)
            except OSError:
                pass
            s.close()
    elif hang_up:
        with socket.create_connection(("127.0.0.1", srv.port)) as s:
            s.sendall(raw)
        statuses["hung up"] += 1
    else:
        status, _, body = exchange(srv.port, raw, timeout=30)
        statuses[status] += 1
        check(status is None or 200 <= status < 500 or status in (501, 503, 505), "case %d: no 5xx" % n,
              "(status %s, body %r, request %r)" % (status, body[:200], raw[:300]))
    if srv.proc.poll() is not None:
        crash = os.path.join(work, "crash-%d.bin" % n)
        with open(crash, "wb") as f:
            f.write(raw)
        check(False, "alive after case %d" % n, "(exit %s; the request is in %s)" % (srv.proc.returncode, crash))
        break
    if n % 10 == 0:
        try:
            alive = curl(srv.url + "/health")[0] == 200
        except Exception as e:  # noqa: BLE001 - reported as a failed check
            time.sleep(0.5)
            alive = "%s (server exit status %s)" % (e, srv.proc.poll())
        check(alive is True, "/health after case %d" % n, str(alive))
        if alive is not True:
            break

status, body, _ = curl(srv.url + "/v1/audio/transcriptions", [("response_format", "text")], clip, "k")
check(status == 200 and body == openai_text(cli(sotto, model, "json", clip, DECODE)), "a valid request is answered right at the end",
      "%s %r" % (status, body[:200]))
rc = srv.stop()
log = srv.text()
check(rc == 0, "exit 0 after SIGTERM", str(rc))
for bad in ["AddressSanitizer", "LeakSanitizer", "runtime error:", "UndefinedBehaviorSanitizer"]:
    check(bad not in log, "no '%s' on stderr" % bad)
if check.failed:
    print(log[-4000:])
print("serve_fuzz: %d cases in %.0f s (seed %d): %s" % (n, seconds, seed,
      ", ".join("%s: %d" % (k, v) for k, v in sorted(statuses.items(), key=str))))
check.done("serve_fuzz")
