#!/usr/bin/env python3
"""A scripted, lying hub for the client's hostile-hub tests.

    python3 tools/hub/fake_hub.py SCRIPT.json LOG.jsonl   # prints the port it listens on, then serves

Every request is appended to LOG.jsonl as one JSON line: {"method", "path", "authorization"}
(the Authorization header, or null). SCRIPT.json is read again for every request, so a test can
change the answers between runs:

    {"routes": {"/v1/models/m/resolve": {"json": {...}},
                "/blob": {"bytes": 100000, "content_length": "none"},
                "/moved": {"status": 302, "headers": {"Location": "http://..."}}}}

A route (matched on the path without its query) answers `status` (default 200) with `headers`,
and a body: `json` (an object, sent as JSON), `raw` (text sent as JSON: NaN, 1e400), `file` (a file's bytes), or `bytes` (that many zero bytes), or `endless`
(zero bytes until the client goes). `content_length` is the header sent: a number (which may lie),
"none" (no header: the body ends when the connection closes), or absent (the body's true length).
`close_after_body`: true reads the request's body and closes the connection without an answer
(an upload that may or may not have been stored). Any other path is 404. Binds 127.0.0.1 on a free port; stops when its standard input closes.
"""
import http.server
import json
import sys
import threading


def make_handler(script_path, log_path, lock):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def answer(self, send_body):
            with lock:
                with open(log_path, "a") as log:
                    log.write(json.dumps({
                        "method": self.command, "path": self.path,
                        "authorization": self.headers.get("Authorization"),
                    }) + "\n")
            with open(script_path) as handle:
                routes = json.load(handle).get("routes", {})
            route = routes.get(self.path.split("?", 1)[0])
            if route is not None and route.get("close_after_body"):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.close_connection = True
                return
            if route is None:
                route = {"status": 404, "json": {"error": True, "error_description": "no such path"}}
            body = b""
            endless = route.get("endless", False)
            if "json" in route:
                body = json.dumps(route["json"]).encode()
            elif "raw" in route:
                body = route["raw"].encode()
            elif "file" in route:
                with open(route["file"], "rb") as handle:
                    body = handle.read()
            elif "bytes" in route:
                body = b"\0" * int(route["bytes"])
            self.send_response(route.get("status", 200))
            for name, value in route.get("headers", {}).items():
                self.send_header(name, value)
            if "json" in route or "raw" in route:
                self.send_header("Content-Type", "application/json")
            length = route.get("content_length")
            if length == "none" or (endless and length is None):
                self.send_header("Connection", "close")
                self.close_connection = True
            else:
                self.send_header("Content-Length", str(len(body) if length is None else length))
            self.end_headers()
            if not send_body:
                return
            try:
                self.wfile.write(body)
                while endless:
                    self.wfile.write(b"\0" * 65536)
                self.wfile.flush()
            except OSError:
                self.close_connection = True
            if length is not None:
                # A lying Content-Length: close rather than leave the client waiting.
                self.close_connection = True

        def do_GET(self):
            self.answer(True)

        def do_HEAD(self):
            self.answer(False)

        def do_PUT(self):
            self.answer(True)

        def do_POST(self):
            self.answer(True)

    return Handler


def main():
    script_path, log_path = sys.argv[1], sys.argv[2]
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), make_handler(script_path, log_path, threading.Lock()))
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
