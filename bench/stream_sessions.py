#!/usr/bin/env python3
"""Concurrent live sessions of issue 26 ("real time held"), in one command:
1. `sotto serve --max-sessions N` with N WebSocket sessions (/v1/realtime?intent=transcription,
   server VAD) each sending AUDIO at real-time pace (0.1 s a message): for every turn,
   the lag = the wall time its transcript is completed minus the wall time its audio
   ended (speech_stopped's audio_end_ms after the session's first byte). A server that
   keeps real time keeps this bounded: reported at its maximum, its mean and over the last
   minute per session.
2. While the N are open, session N+1 must be refused: HTTP 503 naming --max-sessions.
3. With --cli, N `sotto stream --realtime --jsonl` processes too (bench/stream.py
   --sessions N --threads T's loop): the processing lag of each at its maximum.
Prints one JSON line per part, with the load average before and after.

usage: .venv-openai/bin/python bench/stream_sessions.py --sotto build/sotto -m models/tiny.en.gguf
           [--vad-model models/silero-vad.gguf] [--sessions 2] [--threads 1] [--cli] AUDIO.wav
(the websockets package: .venv-openai has it, scripts/setup-openai-venv.sh installs it)
"""
import argparse
import base64
import json
import os
import re
import subprocess
import sys
import threading
import time
import wave

from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect


def start_server(a, log):
    args = [a.sotto, "serve", "-m", a.model, "--port", "0", "-t", str(a.threads), "--workers", str(a.sessions),
            "--max-sessions", str(a.sessions), "--beam-size", "1"]
    if a.vad_model:
        args += ["--vad-model", a.vad_model]
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=open(log, "w"))
    deadline = time.time() + 60
    while time.time() < deadline:
        m = re.search(r"listening on http://[^ ]*:(\d+)", open(log).read())
        if m:
            return p, int(m.group(1))
        if p.poll() is not None:
            break
        time.sleep(0.05)
    p.kill()
    sys.exit("stream_sessions.py: sotto serve did not start:\n" + open(log).read())


def session(url, pcm, out):
    """One session: real-time appends from a thread, events read here until every turn is
    completed after the last append; OUT gets the per-turn lags."""
    with connect(url, max_size=None) as ws:
        ws.recv(timeout=30)  # session.created
        ws.send(json.dumps({"type": "session.update", "session": {"type": "transcription", "audio": {"input": {
            "format": {"type": "audio/pcm", "rate": 16000},
            "turn_detection": {"type": "server_vad", "threshold": 0.5, "silence_duration_ms": 500}}}}}))
        t0 = time.monotonic()
        step = 3200  # 0.1 s of PCM16 at 16 kHz

        def feed():
            for i in range(0, len(pcm), step):
                wait = t0 + i / 32000 - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                ws.send(json.dumps({"type": "input_audio_buffer.append",
                                    "audio": base64.b64encode(pcm[i:i + step]).decode()}))
            time.sleep(1.0)  # the last pause, heard
            ws.send(json.dumps({"type": "input_audio_buffer.commit"}))
        sender = threading.Thread(target=feed)
        sender.start()
        ends, lags, errors, n_done, n_commit = {}, [], [], 0, 0
        audio_s = len(pcm) / 32000
        while True:
            try:
                e = json.loads(ws.recv(timeout=120))
            except TimeoutError:
                break
            now = time.monotonic() - t0
            kind = e["type"]
            if kind == "input_audio_buffer.speech_stopped":
                ends[e["item_id"]] = e["audio_end_ms"] / 1000
            elif kind == "input_audio_buffer.committed":
                n_commit += 1
            elif kind.endswith("transcription.completed"):
                n_done += 1
                end = ends.get(e["item_id"], min(now, audio_s))
                lags.append((end, now - end))
            elif kind == "error" or kind.endswith(".failed"):
                errors.append(e)
            if not sender.is_alive() and n_done >= n_commit and n_commit:
                break
        sender.join()
    last = [lag for t, lag in lags if t > audio_s - 60]
    out.update({"turns": n_done, "lag_max_s": max((x for _, x in lags), default=None),
                "lag_mean_s": sum(x for _, x in lags) / len(lags) if lags else None,
                "lag_last_minute_max_s": max(last, default=None), "errors": errors[:3]})


def refused(url):
    try:
        with connect(url):
            return {"refused": False}
    except InvalidStatus as e:
        body = e.response.body.decode(errors="replace")
        return {"refused": e.response.status_code == 503 and "--max-sessions" in body,
                "status": e.response.status_code, "body": body.strip()}


def cli_sessions(a):
    vad = ["--vad-model", a.vad_model] if a.vad_model else []
    procs = []
    for i in range(a.sessions):
        path = os.path.join(a.out, f"cli{i}.jsonl")
        cmd = [a.sotto, "stream", "-m", a.model, *vad, "-t", str(a.threads), "--realtime", "--jsonl", a.audio]
        procs.append((subprocess.Popen(cmd, stdout=open(path, "w"), stderr=subprocess.DEVNULL), path))
    res = []
    for p, path in procs:
        p.wait()
        ev = [json.loads(line) for line in open(path)]
        end = max(e["audio_time"] for e in ev)
        lags = [e["emission_time"] - e["audio_time"] for e in ev]
        late = [e["emission_time"] - e["audio_time"] for e in ev if e["audio_time"] > end - 60]
        res.append({"exit": p.returncode, "lag_max_s": max(lags), "lag_last_minute_max_s": max(late),
                    "committed_words": sum(len(e["words"]) for e in ev if e["type"] == "final")})
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sotto", required=True)
    ap.add_argument("-m", "--model", required=True)
    ap.add_argument("--vad-model")
    ap.add_argument("--sessions", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cli", action="store_true", help="also N `sotto stream --realtime` processes")
    ap.add_argument("--out", default="build-bench/sessions")
    ap.add_argument("audio")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    with wave.open(a.audio) as w:
        if w.getframerate() != 16000 or w.getnchannels() != 1 or w.getsampwidth() != 2:
            sys.exit("stream_sessions.py: AUDIO must be 16 kHz mono PCM16 (bench/make_long.sh's long.wav)")
        pcm = w.readframes(w.getnframes())
    load0 = os.getloadavg()
    srv, port = start_server(a, os.path.join(a.out, "serve.log"))
    url = "ws://127.0.0.1:%d/v1/realtime?intent=transcription" % port
    try:
        results = [{} for _ in range(a.sessions)]
        threads = [threading.Thread(target=session, args=(url, pcm, r)) for r in results]
        for t in threads:
            t.start()
        time.sleep(2)
        extra = refused(url)
        for t in threads:
            t.join()
    finally:
        srv.terminate()
        srv.wait(timeout=60)
    load = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps({"part": "serve", "sessions": results, "session_past_the_limit": extra,
                      "threads": a.threads, "loadavg_before": [round(x, 2) for x in load0], "loadavg_after": load}))
    if a.cli:
        load0 = os.getloadavg()
        res = cli_sessions(a)
        print(json.dumps({"part": "cli", "sessions": res, "threads": a.threads,
                          "loadavg_before": [round(x, 2) for x in load0],
                          "loadavg_after": [round(x, 2) for x in os.getloadavg()]}))


if __name__ == "__main__":
    main()
