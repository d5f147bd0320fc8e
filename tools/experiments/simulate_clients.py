#!/usr/bin/env python3
"""Simulated clients of an experiment, for docs/experiments.md: each client id resolves the
alias as an app would (GET /v1/models/NAME/resolve?ref=ALIAS&client=ID: its variant), then reports
a batch of events to POST /v1/events, as NetRunnerHub's ExperimentReporter sends them: a few
inferences with their latency, and as many outcomes of the goal, each a success with the chance
given for its version (--rate VERSION=P). Standard library only; seeded, so a run is the same.

The Swift client measures what it reports (docs/experiments.md); this script only stands in for
many apps at once, so that the guide's blocks run in seconds.

Usage: simulate_clients.py --hub URL --model NAME --alias ALIAS --clients N --rate 1=0.4 --rate 2=0.85
       [--events N] [--crash VERSION=P] [--seed N]
(reporting's key: NETRUNNER_REPORT_KEY, else NETRUNNER_HUB_TOKEN; a private hub's read key:
NETRUNNER_READ_KEY)
"""
import argparse
import json
import os
import random
import sys
import urllib.error
import urllib.parse
import urllib.request


def chances(pairs, name):
    """`['1=0.4', '2=0.85']` as `{1: 0.4, 2: 0.85}`, each chance in [0, 1]."""
    table = {}
    for pair in pairs:
        version, _, chance = pair.partition("=")
        try:
            table[int(version)] = float(chance)
        except ValueError:
            sys.exit(f"--{name} {pair}: expected VERSION=CHANCE, such as 2=0.85")
        if not 0 <= table[int(version)] <= 1:
            sys.exit(f"--{name} {pair}: a chance is 0 to 1")
    return table


class Refused(Exception):
    """The hub's answer was not 2xx: its status and message."""

    def __init__(self, url, status, message):
        super().__init__(f"{url}: {status} {message}")
        self.status = status


def request(url, key, body=None):
    """The JSON answer of a GET, or of a POST of `body`; raises Refused with the hub's message."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers), timeout=30) as reply:
            return json.load(reply)
    except urllib.error.HTTPError as error:
        raise Refused(url, error.code, error.read().decode(errors="replace")[:300]) from None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hub", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--alias", required=True)
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--events", type=int, default=4, help="outcomes (and inferences) per client")
    parser.add_argument("--rate", action="append", default=[], help="VERSION=CHANCE of the goal")
    parser.add_argument("--crash", action="append", default=[], help="VERSION=CHANCE that a client crashes")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--prefix", default="app", help="the client ids' prefix")
    options = parser.parse_args()
    if not 1 <= options.clients <= 100_000 or not 1 <= options.events <= 200:
        sys.exit("--clients is 1 to 100000, --events 1 to 200")
    rates = chances(options.rate, "rate")
    crashes = chances(options.crash, "crash")
    # Resolving is a read (anonymous on a public hub, as the apps' downloads are); reporting
    # takes a key, NETRUNNER_REPORT_KEY's (a key of the report scope may do nothing else).
    key = os.environ.get("NETRUNNER_REPORT_KEY") or os.environ.get("NETRUNNER_HUB_TOKEN")
    read_key = os.environ.get("NETRUNNER_READ_KEY")
    generator = random.Random(options.seed)
    hub = options.hub.rstrip("/")
    name = urllib.parse.quote(options.model, safe="")
    counted = refused = 0
    per_version = {}
    for number in range(options.clients):
        client = f"{options.prefix}-{number}"
        query = urllib.parse.urlencode({"ref": options.alias, "client": client})
        version = request(f"{hub}/v1/models/{name}/resolve?{query}", read_key)["version"]
        per_version[version] = per_version.get(version, 0) + 1
        if generator.random() < crashes.get(version, 0):
            events = [{"id": f"{client}-crash", "client": client, "version": version, "kind": "crash"}]
        else:
            events = []
            for index in range(options.events):
                events.append({"id": f"{client}-i{index}", "client": client, "version": version,
                               "kind": "inference", "latency_ms": round(generator.uniform(20, 40), 3),
                               "failed": False})
                events.append({"id": f"{client}-o{index}", "client": client, "version": version,
                               "kind": "outcome", "name": "accepted",
                               "success": generator.random() < rates.get(version, 0.5)})
        body = {"model": options.model, "alias": options.alias, "events": events}
        try:
            receipt = request(f"{hub}/v1/events", key, body)
        except Refused as refusal:
            # A guardrail stopped the experiment: the hub counts no more (409).
            if refusal.status == 409:
                print(f"client {number}: {refusal}")
                break
            raise
        counted += receipt["accepted"]
        refused += len(receipt["refused"])
        if receipt["stopped"]:
            print(f"client {number}: a guardrail stopped the experiment")
            break
    shares = ", ".join(f"version {v}: {n}" for v, n in sorted(per_version.items()))
    print(f"{sum(per_version.values())} clients ({shares}); {counted} events counted, {refused} refused")


if __name__ == "__main__":
    try:
        main()
    except Refused as refusal:
        sys.exit(str(refusal))
