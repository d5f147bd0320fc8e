#!/usr/bin/env python3
"""deploy/nginx/netrunner-serve.conf as shipped, pointed at other hosts, and a main nginx.conf
to run it from a folder of its own (scripts/test-cluster.sh).

    python3 tools/cluster/nginx_site.py SITE FOLDER SERVERS LISTEN

SITE's two `server 127.0.0.1:PORT ...;` lines are replaced by SERVERS (whole lines), its
`listen 127.0.0.1:8080;` by LISTEN, with an access log of when, status and upstream(s) each
request had; FOLDER gets site.conf, nginx.conf, the logs and nginx's temporary folders. Exits 1
when SITE no longer has the lines it replaces.
"""
import os
import re
import sys


def main():
    site, folder, servers, listen = sys.argv[1:5]
    text = open(site, encoding="utf-8").read()
    shipped = re.findall(r"^    server 127\.0\.0\.1:\d+ max_fails=1 fail_timeout=2s;\n", text, re.M)
    if len(shipped) != 2 or "listen 127.0.0.1:8080;" not in text:
        sys.exit(f"{site}: not the two upstream servers and the listen line this script replaces")
    text = text.replace("".join(shipped), servers)
    text = text.replace("listen 127.0.0.1:8080;", f"listen {listen};\n    access_log {folder}/access.log timed;")
    # When (seconds since 1970), status, the upstream addresses tried ("a, b" when retried) and theirs.
    text = "log_format timed '$msec $status $upstream_addr $upstream_status';\n" + text
    with open(os.path.join(folder, "site.conf"), "w", encoding="utf-8") as handle:
        handle.write(text)
    temporary = " ".join(
        f"{name}_temp_path {folder}/{name};" for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    main_conf = (
        ("user root;\n" if os.getuid() == 0 else "")
        + f"daemon off; worker_processes 1; pid {folder}/nginx.pid; error_log {folder}/error.log warn;\n"
        + "events { worker_connections 512; }\n"
        + f"http {{ access_log off; {temporary} include {folder}/site.conf; }}\n")
    with open(os.path.join(folder, "nginx.conf"), "w", encoding="utf-8") as handle:
        handle.write(main_conf)


if __name__ == "__main__":
    main()
