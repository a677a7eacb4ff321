"""Property test of `sotto serve` against hostile HTTP: seeded random malformed requests
(request lines, headers, Content-Length and chunked framing, multipart bodies with broken
boundaries, part headers, truncations, byte flips, duplicate and oversized parts, clients
that hang up mid-body) thrown at the running server. Properties: every answer is a well-
formed HTTP response with a 4xx status, or 200 for a request that is in fact valid, never
5xx; /health answers between rounds; a valid request is still transcribed right at the
end; SIGTERM then exits 0 with no sanitizer report on stderr (run under the ASan build
this is the leak and memory-error check).

usage: fuzz_serve.py SOTTO MODEL CLIPS WORKDIR [SECONDS] [SEED]"""
import collections
import os
import random
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import Checks, Server, cli, curl, exchange, multipart, read_response, request_bytes

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
                            "--max-upload-mb", "1", "--api-key", "k"], os.path.join(work, "serve.log"))
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


statuses = collections.Counter()
t_end = time.time() + seconds
n = 0
while time.time() < t_end:
    raw, hang_up = case()
    n += 1
    if hang_up:
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
check(status == 200 and body == cli(sotto, model, "txt", clip, DECODE), "a valid request is answered right at the end",
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
