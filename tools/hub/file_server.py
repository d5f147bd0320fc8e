#!/usr/bin/env python3
"""A loopback file server for the download and import tests, with the faults a real network has.

    python3 tools/hub/file_server.py FOLDER      # prints the port it listens on, then serves

GET /NAME             the file FOLDER/NAME (Content-Length, 200)
GET /redirect/NAME    302 to /NAME
GET /huge             claims Content-Length: 10 GB, sends 1 MiB, then closes
GET /short/NAME       the file's full Content-Length, half its bytes, then closes
GET /slow/NAME        the file, 64 KiB every 50 ms

Binds 127.0.0.1 on a free port; stops when its standard input closes (the test ended).
"""
import http.server
import os
import sys
import threading
import time


def make_handler(folder):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def file(self, name):
            path = os.path.realpath(os.path.join(folder, name))
            if not path.startswith(os.path.realpath(folder) + os.sep) or not os.path.isfile(path):
                return None
            with open(path, "rb") as handle:
                return handle.read()

        def do_GET(self):
            path = self.path.split("?", 1)[0].lstrip("/")
            if path == "huge":
                self.send_response(200)
                self.send_header("Content-Type", "application/zip")
                self.send_header("Content-Length", str(10 * 1000**3))
                self.end_headers()
                try:
                    self.wfile.write(b"\0" * (1 << 20))
                except OSError:
                    pass
                self.close_connection = True
                return
            if path.startswith("redirect/"):
                self.send_response(302)
                self.send_header("Location", "/" + path[len("redirect/"):])
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            mode = None
            for prefix in ("short/", "slow/"):
                if path.startswith(prefix):
                    mode, path = prefix[:-1], path[len(prefix):]
            data = self.file(path)
            if data is None:
                body = b"<html><body>404 Not Found</body></html>"
                self.send_response(404)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            try:
                if mode == "short":
                    self.wfile.write(data[: len(data) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                elif mode == "slow":
                    for start in range(0, len(data), 65536):
                        self.wfile.write(data[start:start + 65536])
                        self.wfile.flush()
                        time.sleep(0.05)
                else:
                    self.wfile.write(data)
            except OSError:
                self.close_connection = True

    return Handler


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), make_handler(sys.argv[1]))
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()  # until the test closes it
    server.shutdown()


if __name__ == "__main__":
    main()
