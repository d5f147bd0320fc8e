#!/usr/bin/env python3
"""Drives the live camera route of `netrunner serve` (/v1/live, a WebSocket) as the web page
does: one encoded frame per binary message, one JSON answer per text message, the next frame
sent when the answer arrives. Prints what it got as JSON lines for the Swift test.

Usage: .venv-test/bin/python tools/serve/live_check.py URL MODEL FRAME...
"""
import asyncio
import json
import sys

import websockets


async def main():
    url, model, frames = sys.argv[1], sys.argv[2], sys.argv[3:]
    live = url.replace("http://", "ws://") + f"/v1/live?model={model}&preview=1&maxResults=3"
    async with websockets.connect(live, max_size=2**25) as socket:
        for frame in frames:
            with open(frame, "rb") as handle:
                await socket.send(handle.read())
            reply = json.loads(await socket.recv())
            input_image = reply.pop("input", None) or ""
            reply["input_prefix"] = input_image[:22]
            reply["input_length"] = len(input_image)
            print(json.dumps(reply))
    # A model that is not served: the reason comes as the first message, then the socket closes.
    async with websockets.connect(url.replace("http://", "ws://") + "/v1/live?model=nope") as socket:
        reply = json.loads(await socket.recv())
        try:
            await socket.recv()
            closed = False
        except websockets.exceptions.ConnectionClosed:
            closed = True
        print(json.dumps({"unknown_model": reply["result"].get("error_description", ""), "closed": closed}))


asyncio.run(main())
