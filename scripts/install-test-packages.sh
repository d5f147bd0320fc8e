#!/usr/bin/env bash
# What the browser and stream tests need besides the build: Debian's chromium and
# chromium-driver (the real browser the web app is tested in, driven by selenium) and ffmpeg
# (the fake camera's clip and the stream tests' videos), nginx (the load balancer in front of
# several `serve` processes), node (Debian's nodejs: `make lint` parses the web page's JavaScript),
# Debian's python3-faiss (FaissIndexTests: the system Python reads the FAISS indexes we write).
# Installs them if missing; checks they run.
set -euo pipefail
missing=()
for pair in chromium:chromium chromedriver:chromium-driver ffmpeg:ffmpeg nginx:nginx node:nodejs; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || [ -x "/usr/sbin/${pair%%:*}" ] || missing+=("${pair##*:}")
done
/usr/bin/python3 -c 'import faiss' >/dev/null 2>&1 || missing+=(python3-faiss)
if [ ${#missing[@]} -gt 0 ]; then
    # shellcheck source=lib/apt.sh
    source "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"
    apt_install "${missing[@]}"
fi
chromium --version
chromedriver --version | head -1
ffmpeg -hide_banner -version | head -1
/usr/sbin/nginx -v
node --version
/usr/bin/python3 -c 'import faiss; print("python3-faiss", faiss.__version__)'
