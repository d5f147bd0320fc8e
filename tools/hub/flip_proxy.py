#!/usr/bin/env python3
"""A loopback proxy that damages downloads, for the hub's integrity tests.

    python3 tools/hub/flip_proxy.py http://127.0.0.1:HUBPORT     # prints its own port

Forwards every request to the hub (method, path, headers, body) and returns the hub's answer,
except that in a file download (/v1/blobs/...) one bit of the byte at offset 1000 of the body
is flipped: the length and headers stay right, only the bytes are wrong, as a bad network or
disk would make them. Stops when its standard input closes.
"""
import http.client
import http.server
import sys
import threading
import urllib.parse


def make_handler(target):
    parsed = urllib.parse.urlparse(target)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def forward(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=60)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
            connection.request(self.command, self.path, body=body, headers=headers)
            reply = connection.getresponse()
            data = reply.read()
            if self.path.startswith("/v1/blobs/") and len(data) > 1000:
                data = data[:1000] + bytes([data[1000] ^ 0x01]) + data[1001:]
            self.send_response(reply.status)
            for key, value in reply.getheaders():
                if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = forward

    return Handler


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), make_handler(sys.argv[1]))
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
