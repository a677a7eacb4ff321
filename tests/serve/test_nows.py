"""A `sotto serve` built without wslay or jansson (CMake found no WebSocket library): the
WebSocket route, GET /v1/realtime, answers 501 in OpenAI's error shape naming the packages
to install, and the other routes are served.

usage: test_nows.py SOTTO MODEL CLIPS WORKDIR"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import Checks, Server, curl, exchange

sotto, model, clips, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
check = Checks()
srv = Server(sotto, model, ["--beam-size", "1", "-t", "1", "--workers", "1"], os.path.join(work, "serve.log"))
st, _, body = exchange(srv.port, b"GET /v1/realtime?intent=transcription HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                                 b"Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                                 b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
try:
    e = json.loads(body)["error"]
except (ValueError, KeyError):
    e = {}
check(st == 501 and e.get("code") == "not_implemented" and "libwslay-dev" in e.get("message", ""),
      "GET /v1/realtime: 501 naming libwslay-dev", "%s %r" % (st, body[:300]))
check(curl(srv.url + "/health")[0] == 200, "the other routes are served")
check(srv.stop() == 0, "exit 0 after SIGTERM")
check.done("serve_nows")
