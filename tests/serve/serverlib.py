"""What the `sotto serve` tests share: starting the server on a free loopback port,
stopping it (SIGTERM: it must drain and exit 0), multipart bodies and raw HTTP exchanges,
curl, and what `sotto transcribe` writes for the same file (the answers must equal it)."""
import atexit
import json
import os
import re
import select
import socket
import subprocess
import sys
import time


class Server:
    """`sotto serve ARGS --port 0`; .port once it listens; its stderr goes to LOG."""

    def __init__(self, sotto, model, args, log, env=None):
        self.log_path = log
        self.log = open(log, "w")
        self.proc = subprocess.Popen([sotto, "serve", "-m", model, "--port", "0", *args],
                                     stdout=subprocess.DEVNULL, stderr=self.log,
                                     env={**os.environ, **(env or {})})
        atexit.register(self.kill)  # a test that fails on an exception leaves no server behind
        self.port = None
        deadline = time.time() + 60
        while time.time() < deadline and self.port is None:
            if self.proc.poll() is not None:
                raise SystemExit("sotto serve exited at start (%d):\n%s" % (self.proc.returncode, self.text()))
            m = re.search(r"listening on http://[^ ]*:(\d+)", self.text())
            if m:
                self.port = int(m.group(1))
            time.sleep(0.05)
        if self.port is None:
            self.proc.kill()
            raise SystemExit("sotto serve did not listen within 60 s:\n" + self.text())
        self.url = "http://127.0.0.1:%d" % self.port

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def text(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def rss_kb(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))

    def terminate(self):
        """SIGTERM, once: the drain begins (a second signal would cut it short)."""
        if self.proc.poll() is None and not getattr(self, "terminated", False):
            self.proc.terminate()
        self.terminated = True

    def stop(self, timeout=120):
        """SIGTERM unless sent already; the exit status (0 expected)."""
        self.terminate()
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = "did not stop within %d s" % timeout
        self.log.close()
        return rc


def multipart(fields, file_bytes=None, filename="audio.wav", boundary="sottoBoundary7MA4YWxk"):
    """A multipart/form-data body: (content type, bytes)."""
    out = []
    for k, v in fields:
        out.append(b"--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n"
                   % (boundary.encode(), k.encode(), v.encode() if isinstance(v, str) else v))
    if file_bytes is not None:
        out.append(b"--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"%s\"\r\n"
                   b"Content-Type: application/octet-stream\r\n\r\n" % (boundary.encode(), filename.encode()))
        out.append(file_bytes + b"\r\n")
    out.append(b"--%s--\r\n" % boundary.encode())
    return "multipart/form-data; boundary=" + boundary, b"".join(out)


def request_bytes(path, body, ctype, headers=(), method="POST"):
    head = "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" % (method, path)
    if ctype:
        head += "Content-Type: %s\r\n" % ctype
    head += "Content-Length: %d\r\n" % len(body)
    for h in headers:
        head += h + "\r\n"
    return head.encode() + b"\r\n" + body


def read_response(sock, timeout=60):
    """(status or None when the connection closed without one, headers dict, body)."""
    sock.settimeout(timeout)
    data = b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    except (ConnectionResetError, socket.timeout):
        pass
    m = re.match(rb"HTTP/1\.[01] (\d{3}) [^\r\n]*\r\n", data)
    if not m:
        return None, {}, data
    head, _, body = data.partition(b"\r\n\r\n")
    headers = {}
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        headers[k.strip().lower().decode()] = v.strip().decode(errors="replace")
    return int(m.group(1)), headers, body


def exchange(port, raw, timeout=60):
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        try:
            s.sendall(raw)
        except (BrokenPipeError, ConnectionResetError):
            pass
        return read_response(s, timeout)


def curl(url, fields=(), file=None, key=None, extra=()):
    """curl -F ...: (status, body bytes, headers text)."""
    cmd = ["curl", "-sS", "-D", "-", "-o", "-", "--max-time", "120"]
    for k, v in fields:
        cmd += ["-F", "%s=%s" % (k, v)]
    if file:
        cmd += ["-F", "file=@" + file]
    if key:
        cmd += ["-H", "Authorization: Bearer " + key]
    cmd += [*extra, url]
    out = subprocess.run(cmd, capture_output=True, check=True).stdout
    # curl -D - writes every header block (a 100 Continue first), then the body
    while True:
        head, _, out = out.partition(b"\r\n\r\n")
        status = int(head.split(b" ")[1])
        if status != 100:
            return status, out, head.decode(errors="replace")


def cli(sotto, model, fmt, audio, args=()):
    """What `sotto transcribe -f FMT` writes on stdout."""
    r = subprocess.run([sotto, "transcribe", "-m", model, "-f", fmt, "--quiet", *args, audio],
                       capture_output=True)
    if r.returncode != 0:
        raise SystemExit("sotto transcribe failed: %s" % r.stderr.decode(errors="replace"))
    return r.stdout


def openai_json(cli_json):
    """OpenAI's json answer for the text of `sotto transcribe -f json` (without the leading
    space openai-whisper's text has, as OpenAI's)."""
    return ('{"text": %s}\n' % json.dumps(json.loads(cli_json)["text"].lstrip(" "))).encode()


def openai_text(cli_json):
    """OpenAI's text answer for `sotto transcribe -f json`'s: its text in one paragraph (no
    leading space) and a newline."""
    return (json.loads(cli_json)["text"].lstrip(" ") + "\n").encode()


LANGUAGE_NAMES = {"en": "english", "de": "german", "fr": "french", "es": "spanish"}  # the tests' languages


def openai_verbose(cli_json, task="transcribe"):
    """The verbose_json answer for the output of `sotto transcribe -f json`: those bytes
    with OpenAI's "task" first and the language by openai-whisper's name ("english")."""
    assert cli_json.startswith(b"{")
    at = cli_json.rindex(b', "language": "') + len(b', "language": "')
    end = cli_json.index(b'"', at)
    name = LANGUAGE_NAMES[cli_json[at:end].decode()].encode()
    return b'{"task": "' + task.encode() + b'", ' + cli_json[1:at] + name + cli_json[end:]


def verbose_with_words(cli_json):
    """The verbose_json answer to timestamp_granularities[]=word for the output of
    `sotto transcribe --word-timestamps -f json`: openai_verbose of those bytes with
    OpenAI's top-level "words" ({word, start, end}, the word without its leading space)
    added last."""
    assert cli_json.endswith(b"}\n")
    words = [{"word": w["word"].lstrip(" "), "start": w["start"], "end": w["end"]}
             for s in json.loads(cli_json)["segments"] for w in s["words"]]
    return openai_verbose(cli_json)[:-2] + b', "words": ' + json.dumps(words).encode() + b"}\n"


TURN_CLIPS = ("espeak-ng-02", "librivox-0880", "espeak-ng-05")


def turns_wav(clips, path, pause_s=1.5):
    """Three 16 kHz mono clips with PAUSE_S of silence after each, written to PATH as one
    WAV (several segments, and turns a VAD hears apart); its PCM16 bytes."""
    import wave
    pcm = b""
    for name in TURN_CLIPS:
        with wave.open(os.path.join(clips, name + ".wav")) as w:
            assert w.getframerate() == 16000 and w.getnchannels() == 1 and w.getsampwidth() == 2
            pcm += w.readframes(w.getnframes()) + b"\0\0" * int(16000 * pause_s)
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(pcm)
    return pcm


class Checks:
    def __init__(self):
        self.n = 0
        self.failed = []

    def __call__(self, ok, what, detail=""):
        self.n += 1
        if not ok:
            self.failed.append(what)
            print("FAIL: %s %s" % (what, detail), flush=True)

    def done(self, name):
        if self.failed:
            print("%s: %d of %d checks failed" % (name, len(self.failed), self.n))
            sys.exit(1)
        print("%s: all %d checks passed" % (name, self.n))
