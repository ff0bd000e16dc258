#!/usr/bin/env python3
"""A small leader election for coup: the highest node heard from leads.

Every node sends a heartbeat to every other every BEAT seconds, and
believes in the highest node it has heard from within the last TIMEOUT,
itself included. It believes nothing until it has heard from every peer
(or ALONE has passed since init): a node that claimed at once, before it
could hear its peers, would believe in itself while a higher node is up,
and coup's two-leaders check finds that overlap at start-up. A wait of a
fixed time is not enough: nodes answer init hundreds of milliseconds
apart on a busy machine. Safe when a leader crashes; not under a pause or
a partition, which is what the checks are there to show.
"""
import json
import queue
import sys
import threading
import time

BEAT, TIMEOUT, ALONE = 0.1, 0.5, 5.0
me, peers, heard, leader, started, next_beat = None, [], {}, None, 0.0, 0.0


def send(dest, body):
    # One line per message, flushed at once: coup reads lines as they come.
    print(json.dumps({"src": me, "dest": dest, "body": body}), flush=True)


def read(lines):
    for line in sys.stdin:
        lines.put(line)
    lines.put(None)  # coup closed stdin: the run is over


lines = queue.Queue()
threading.Thread(target=read, args=(lines,), daemon=True).start()
while True:
    try:
        line = lines.get(timeout=BEAT / 2)
    except queue.Empty:
        line = ""
    if line is None:
        break
    now = time.monotonic()
    if line.strip():
        msg = json.loads(line)
        body = msg["body"]
        if body["type"] == "init":
            me, started, heard = body["node_id"], now, {}
            peers = [n for n in body["node_ids"] if n != me]
            send(msg["src"], {"type": "init_ok", "in_reply_to": body["msg_id"]})
        elif body["type"] == "beat":
            heard[msg["src"]] = now
    if me is None:
        continue  # nothing to do before init
    if now >= next_beat:
        for p in peers:
            send(p, {"type": "beat"})
        next_beat = now + BEAT
    if len(heard) < len(peers) and now - started < ALONE:
        continue  # the start-up wait: hear every peer before believing
    alive = [me] + [p for p, t in heard.items() if now - t < TIMEOUT]
    best = max(alive, key=lambda n: int(n.lstrip("n")))
    if best != leader:
        # Report the new belief before any message that depends on it.
        leader = best
        send("coup", {"type": "report", "what": "leader", "value": leader})
