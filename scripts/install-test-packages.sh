#!/usr/bin/env bash
# What the browser and stream tests need besides the build: Debian's chromium and
# chromium-driver (the real browser the web app is tested in, driven by selenium) and ffmpeg
# (the fake camera's clip and the stream tests' videos), nginx (the load balancer in front of
# several `serve` processes), node (Debian's nodejs: `make lint` parses the web page's JavaScript).
# Installs them if missing; checks they run.
set -euo pipefail
missing=()
for pair in chromium:chromium chromedriver:chromium-driver ffmpeg:ffmpeg nginx:nginx node:nodejs; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || [ -x "/usr/sbin/${pair%%:*}" ] || missing+=("${pair##*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -q
    $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
chromium --version
chromedriver --version | head -1
ffmpeg -hide_banner -version | head -1
/usr/sbin/nginx -v
node --version
