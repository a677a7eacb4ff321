"""64 concurrent requests from a second process against `sotto serve` (2 workers, the
queue's default size and deadline): every one is answered 200 and equals `sotto
transcribe`'s for its clip, and the
server's RSS after them is within 10 % of its RSS before (after one warm-up request per
worker, which sizes what the workers keep). The client is bounded: each request times
out, and the whole run stops at a deadline.

usage: test_load.py SOTTO MODEL CLIPS WORKDIR [N_REQUESTS]   (500 for the full run: 64
clients at a time, each sending its next request when one is answered)"""
import concurrent.futures
import http.client
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import Checks, Server, cli, multipart, openai_text

sotto, model, clips, work = sys.argv[1:5]
n_req = int(sys.argv[5]) if len(sys.argv) > 5 else 64
os.makedirs(work, exist_ok=True)
DECODE = ["--beam-size", "1", "--sample-len", "24"]
names = ["librivox-0880.wav", "espeak-ng-02.wav"]
paths = [os.path.join(clips, n) for n in names]
want = {p: openai_text(cli(sotto, model, "json", p, DECODE)) for p in paths}
bodies = {p: multipart([("model", "whisper-1"), ("response_format", "text")], open(p, "rb").read(),
                       os.path.basename(p)) for p in paths}
check = Checks()
# the queue's flags at their defaults: a burst of 64 is queued, not refused (issue 23's 8)
srv = Server(sotto, model, [*DECODE, "-t", "1", "--workers", "2"], os.path.join(work, "serve.log"))


def post(path):
    ctype, body = bodies[path]
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=120)
    try:
        c.request("POST", "/v1/audio/transcriptions", body, {"Content-Type": ctype})
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


with concurrent.futures.ThreadPoolExecutor(2) as ex:  # warm-up: one request per worker
    warm = list(ex.map(post, paths[:2]))
check(all(s == 200 for s, _ in warm), "warm-up answered", str(warm))
rss0 = srv.rss_kb()
t0 = time.time()
jobs = [paths[i % len(paths)] for i in range(n_req)]
with concurrent.futures.ThreadPoolExecutor(min(n_req, 64)) as ex:  # 500: waves of 64 clients
    futs = {ex.submit(post, p): p for p in jobs}
    done, late = concurrent.futures.wait(futs, timeout=300 if n_req <= 64 else 1800)
    ok = 0
    for f in done:
        try:
            status, body = f.result()
        except Exception as e:  # noqa: BLE001 - a failed request is reported, not raised
            status, body = repr(e), b""
        good = status == 200 and body == want[futs[f]]
        ok += good
        if not good:
            print("request for %s: %s %r" % (os.path.basename(futs[f]), status, body[:200]))
    for f in late:
        f.cancel()
wall = time.time() - t0
check(ok == n_req and not late, "%d requests answered correctly" % n_req, "(%d ok, %d late)" % (ok, len(late)))
rss1 = srv.rss_kb()
check(rss1 <= rss0 * 1.10, "RSS after within 10 % of before", "(%d kB -> %d kB)" % (rss0, rss1))
print("serve_load: %d requests in %.1f s; RSS %d kB before, %d kB after (%+.1f %%)"
      % (n_req, wall, rss0, rss1, 100.0 * (rss1 - rss0) / rss0))
rc = srv.stop()
check(rc == 0, "exit 0 after SIGTERM", str(rc))
check(srv.text().count("POST /v1/audio/transcriptions 200") == n_req + 2, "one log line per request")
check.done("serve_load")
