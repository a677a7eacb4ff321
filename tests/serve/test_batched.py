"""`sotto serve --batch-size N`: concurrent requests' chunks decoded together (a worker takes
up to N waiting requests and runs them as one sotto_transcribe_batch), and every answer
equal to `sotto transcribe --batch-size N` for the same file (verbose_json as -f json, text
as the json's text, word timestamps as --word-timestamps); the server's log says requests were
pooled; a prompt is every chunk's (sotto transcribe --batch-size N --prompt); --batch-window-ms
without --batch-size is refused.

usage: test_batched.py SOTTO MODEL VAD_FW CLIPS WORKDIR"""
import concurrent.futures
import http.client
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import Checks, Server, cli, multipart, openai_text, openai_verbose, verbose_with_words  # noqa: E402

sotto, model, vad, clips, work = sys.argv[1:6]
os.makedirs(work, exist_ok=True)
check = Checks()
N = 4
DECODE = ["--beam-size", "1", "--vad-model", vad]
names = ["espeak-ng-01", "espeak-ng-02", "espeak-ng-03", "librivox-0880", "espeak-ng-04", "librivox-0870"]
paths = [os.path.join(clips, n + ".wav") for n in names]

r = subprocess.run([sotto, "serve", "-m", model, "--batch-window-ms", "5"], capture_output=True, text=True)
check(r.returncode != 0 and "--batch-window-ms goes with --batch-size" in r.stderr, "window without batching refused",
      r.stderr)

srv = Server(sotto, model, [*DECODE, "--batch-size", str(N), "--batch-window-ms", "400", "--workers", "1", "-t", "2",
                            "--queue", "16"], os.path.join(work, "serve.log"))


def post(fields, path):
    ctype, body = multipart([("model", "whisper-1"), *fields], open(path, "rb").read(), os.path.basename(path))
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=300)
    c.request("POST", "/v1/audio/transcriptions", body, {"Content-Type": ctype})
    resp = c.getresponse()
    data = resp.read()
    c.close()
    return resp.status, data


# what each request asks: (form fields, the CLI's format and flags for the same answer)
asks = []
for i, p in enumerate(paths):
    if i == 2:
        asks.append(([("response_format", "verbose_json"), ("timestamp_granularities[]", "word")], "json",
                     ["--word-timestamps"]))
    elif i % 2:
        asks.append(([("response_format", "text")], "text", []))
    else:
        asks.append(([("response_format", "verbose_json")], "json", []))
with concurrent.futures.ThreadPoolExecutor(len(paths)) as ex:
    answers = list(ex.map(lambda k: post(asks[k][0], paths[k]), range(len(paths))))
for k, (status, body) in enumerate(answers):
    fields, fmt, extra = asks[k]
    want = cli(sotto, model, "json" if fmt == "text" else fmt, paths[k], [*DECODE, "--batch-size", str(N), *extra])
    if fmt == "text":
        want = openai_text(want)
    if extra:
        want = verbose_with_words(want)
    elif fmt == "json":
        want = openai_verbose(want)
    check(status == 200 and body == want, "%s (%s) equals sotto transcribe --batch-size %d -f %s %s"
          % (names[k], fields[0][1], N, fmt, " ".join(extra)), "(status %d)\n  server: %r\n  cli:    %r"
          % (status, body[:300], want[:300]))
    if fmt == "json" and status == 200:
        check(json.loads(body)["text"].strip() != "", names[k] + " has text")

# a prompt: every chunk's (the pipeline's initial_prompt), as sotto transcribe --batch-size --prompt
status, body = post([("prompt", "Dashwood, Norland."), ("response_format", "verbose_json")], paths[5])
want = openai_verbose(cli(sotto, model, "json", paths[5], [*DECODE, "--batch-size", str(N), "--prompt",
                                                            "Dashwood, Norland."]))
check(status == 200 and body == want, "a prompt equals sotto transcribe --batch-size %d --prompt" % N,
      "(status %d)\n  server: %r\n  cli:    %r" % (status, body[:300], want[:300]))
plain = cli(sotto, model, "json", paths[5], [*DECODE, "--batch-size", str(N)])
check(json.loads(want)["segments"][0]["tokens"] != json.loads(plain)["segments"][0]["tokens"] or
      json.loads(want)["segments"][0]["avg_logprob"] != json.loads(plain)["segments"][0]["avg_logprob"],
      "the prompt changes the decoding", want[:200])

rc = srv.stop()
check(rc == 0, "SIGTERM: exit 0", str(rc))
m = re.search(r"(\d+) batched runs? held (\d+) requests", srv.text())
check(m and int(m.group(2)) >= N, "requests pooled into batched runs", srv.text()[-600:])
if m:
    print("%s batched runs held %s of %d requests" % (m.group(1), m.group(2), len(paths) + 1))
check.done("serve_batched")
