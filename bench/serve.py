"""Throughput of `sotto serve` with N workers against 1 worker on the same cores: REQUESTS
transcriptions of the test clips (round robin) sent by CONCURRENCY clients at once, for
each layout (workers x threads per worker); prints requests/s, audio seconds per wall
second and the median latency, as a Markdown table for docs/BENCHMARKS.md.

usage: python3 bench/serve.py [--model M] [--requests 24] [--layouts 1x2,2x1,1x1]
                              [--decode "--beam-size 1"]"""
import argparse
import concurrent.futures
import glob
import http.client
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "tests", "serve"))
from serverlib import Server, multipart  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--sotto", default=os.path.join(root, "build", "sotto"))
ap.add_argument("--model", default=os.path.join(root, "models", "tiny.en.gguf"))
ap.add_argument("--requests", type=int, default=24)
ap.add_argument("--layouts", default="1x%d,%dx1" % (os.cpu_count(), os.cpu_count()))
ap.add_argument("--decode", default="", help="sotto transcribe decoding flags for every request (default: its defaults)")
a = ap.parse_args()

clips = sorted(glob.glob(os.path.join(root, "tests", "data", "clips", "*.wav")))
bodies = [multipart([("model", "whisper-1"), ("response_format", "verbose_json")], open(p, "rb").read(),
                    os.path.basename(p)) for p in clips]
audio_s = {}
rows = []
for layout in a.layouts.split(","):
    workers, threads = (int(x) for x in layout.split("x"))
    log = tempfile.NamedTemporaryFile(suffix=".log", delete=False).name
    srv = Server(a.sotto, a.model, [*shlex.split(a.decode), "--workers", str(workers), "-t", str(threads),
                                    "--queue", str(a.requests)], log)

    def post(i):
        ctype, body = bodies[i % len(bodies)]
        t0 = time.time()
        c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=600)
        c.request("POST", "/v1/audio/transcriptions", body, {"Content-Type": ctype})
        r = c.getresponse()
        data = r.read()
        c.close()
        if r.status != 200:
            raise SystemExit("request %d: %d %r" % (i, r.status, data[:200]))
        return time.time() - t0, data

    post(0)  # warm-up (page cache, first allocations)
    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(2 * workers) as ex:  # enough to keep every worker busy
        results = list(ex.map(post, range(a.requests)))
    wall = time.time() - t0
    srv.stop()
    os.unlink(log)
    import json
    total_audio = sum(json.loads(d)["duration"] for _, d in results)
    lat = statistics.median(t for t, _ in results)
    rows.append((layout, workers, threads, a.requests / wall, total_audio / wall, lat))
    print("%s: %.2f requests/s, %.1f audio s per s, median latency %.2f s" % (layout, rows[-1][3], rows[-1][4], lat),
          file=sys.stderr)

base = rows[0][3]
print("| workers x threads | requests/s | audio s / s | median latency (s) | vs %s |" % rows[0][0])
print("|---|---|---|---|---|")
for layout, w, t, rps, aps, lat in rows:
    print("| %d x %d | %.2f | %.1f | %.2f | %.2fx |" % (w, t, rps, aps, lat, rps / base))
