"""Throughput of `sotto serve` with N workers against 1 worker on the same cores: REQUESTS
transcriptions of the test clips (round robin, verbose_json) sent by 2 x workers clients at
once (--clients: that many), for each layout (workers x threads per worker, and bN for
--batch-size N: the chunks of up to N requests decoded together), the layouts alternated
ROUNDS times so that other load on the machine falls on each alike; prints the medians
(requests/s, audio seconds per wall second, latency, and the server's CPU seconds per
request) and the machine's load average (1 min) while it ran as a Markdown table for
docs/BENCHMARKS.md.

usage: python3 bench/serve.py [--model M] [--requests 24] [--rounds 3] [--clients N]
                              [--layouts 1x2,2x1,1x2b16] [--decode "--beam-size 1"]
issue 25's figure (16 concurrent requests, batching against none on the same 2 cores):
  python3 bench/serve.py --requests 48 --clients 16 --layouts 1x2,2x1,1x2b16"""
import argparse
import concurrent.futures
import glob
import http.client
import json
import os
import shlex
import statistics
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
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--layouts", default="1x%d,%dx1" % (os.cpu_count(), os.cpu_count()))
ap.add_argument("--decode", default="", help="sotto transcribe decoding flags for every request (default: its defaults)")
ap.add_argument("--clients", type=int, default=0, help="requests in flight at once (default: 2 x workers)")
ap.add_argument("--vad-model", default=os.path.join(root, "models", "silero-vad-fw.gguf"),
                help="the VAD of the batched layouts (faster-whisper's export)")
a = ap.parse_args()

clips = sorted(glob.glob(os.path.join(root, "tests", "data", "clips", "*.wav")))
bodies = [multipart([("model", "whisper-1"), ("response_format", "verbose_json")], open(p, "rb").read(),
                    os.path.basename(p)) for p in clips]


def run(layout):
    """(requests/s, audio s per s, median latency, load average) of one layout, one round."""
    shape, _, batch = layout.partition("b")
    workers, threads = (int(x) for x in shape.split("x"))
    log = tempfile.NamedTemporaryFile(suffix=".log", delete=False).name
    extra = ["--batch-size", batch, "--vad-model", a.vad_model] if batch else []
    srv = Server(a.sotto, a.model, [*shlex.split(a.decode), "--workers", str(workers), "-t", str(threads),
                                    "--queue", str(a.requests), *extra], log)

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
        return time.time() - t0, json.loads(data)["duration"]

    post(0)  # warm-up (page cache, first allocations)
    load0 = os.getloadavg()[0]
    cpu0 = cpu_s(srv.proc.pid)
    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(a.clients or 2 * workers) as ex:  # enough to keep every worker busy
        results = list(ex.map(post, range(a.requests)))
    wall = time.time() - t0
    cpu = cpu_s(srv.proc.pid) - cpu0
    load = (load0 + os.getloadavg()[0]) / 2
    srv.stop()
    os.unlink(log)
    return (a.requests / wall, sum(d for _, d in results) / wall, statistics.median(t for t, _ in results),
            cpu / a.requests, load)


def cpu_s(pid):
    """The user + system CPU seconds of process PID so far."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


layouts = a.layouts.split(",")
samples = {l: [] for l in layouts}
for r in range(a.rounds):
    for l in layouts:
        samples[l].append(run(l))
        print("round %d, %s: %.2f requests/s, %.1f audio s/s, median latency %.2f s, %.2f CPU s a request, load %.1f"
              % (r + 1, l, *samples[l][-1]), file=sys.stderr)
med = {l: [statistics.median(s[i] for s in samples[l]) for i in range(5)] for l in layouts}
base = med[layouts[0]][0]
print("| workers x threads | requests/s | audio s / s | median latency (s) | CPU s / request | vs %s | load average |"
      % layouts[0])
print("|---|---|---|---|---|---|---|")
for l in layouts:
    rps, aps, lat, cpu, load = med[l]
    name = l.replace("x", " x ").replace("b", ", batch ")
    print("| %s | %.2f | %.1f | %.2f | %.2f | %.2fx | %.1f |" % (name, rps, aps, lat, cpu, rps / base, load))
