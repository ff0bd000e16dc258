#!/usr/bin/env python3
"""An example node for coup, in Python with the standard library alone: a
leader election by majority vote in numbered terms, as Raft elects its
leaders. docs/your-node.md walks through it.

It contains a bug, on purpose. A candidate that hears nothing at all from
the others during its election (no vote, no refusal) concludes that every
other node is down and that it is alone, and declares itself the leader of
its term without a majority. A node cut off by a partition is not alone:
the others may be electing a leader of the same term on their side, and
two nodes then claim one term, which one-leader-per-term judges false.
Its scenarios (scenarios/python-election*.toml) show both runs: with the
leader crashed, the others elect a new one in a higher term and every
check holds; with the leader cut off, it steps down, finds no one, and
claims the term the others elected a leader in.

How it works:

- A leader sends a heartbeat every 50ms; each follower answers it. A
  leader that has not heard answers from a majority (itself included)
  for 400ms steps down (Raft's check-quorum).
- A follower that hears no heartbeat for its election timeout (400ms
  plus 150ms per place in node_ids, so that the first in line goes first
  and votes do not split) starts a new term, votes for itself and asks
  the others for theirs. Each node gives one vote per term. A majority
  makes it the leader of that term. A node that hears of a higher term
  moves to it and follows.
- It reports to coup whom it believes leads, with the term, whenever
  either changes, before any message that depends on it.
- When init says "defer_start" (the scenario's defer_start = true), its
  election timer starts only on coup's {"type": "start"}, which comes to
  every node together once all have answered init, or on a first message
  from a peer: a node that starts fast does not lead alone, before the
  slowest is up, at the start.

Every line it writes is flushed at once (print(..., flush=True)): coup
reads lines as they come, and a line left in a buffer is never read.
"""

import json
import queue
import sys
import threading
import time

HEARTBEAT = 0.050
CHECK_QUORUM = 0.400
ELECTION_TIMEOUT = 0.400  # plus ELECTION_STAGGER per place in node_ids
ELECTION_STAGGER = 0.150
TICK = 0.005


def log(*args):
    """Writes a line to stderr, which coup keeps as the node's log."""
    print(*args, file=sys.stderr, flush=True)


class Node:
    def __init__(self):
        self.me = None
        self.peers = []
        self.place = 0
        self.term = 0
        self.voted_for = None
        self.leader = ""
        self.role = "follower"  # follower, candidate or leader
        self.votes = set()
        self.answered = set()  # who answered this candidacy at all
        self.heard = {}  # a leader's: when each follower last answered
        self.last_heard = time.monotonic()
        self.election_started = 0.0
        self.last_beat = 0.0
        self.reported = None
        self.started = True  # its timers run (init with defer_start: on start)

    def send(self, dest, body):
        print(json.dumps({"src": self.me, "dest": dest, "body": body}), flush=True)

    def broadcast(self, body):
        for p in self.peers:
            self.send(p, body)

    def majority(self):
        return (len(self.peers) + 1) // 2 + 1

    def report(self):
        """Tells coup whom this node believes leads, and in which term,
        when either changed."""
        belief = (self.leader, self.term)
        if belief != self.reported:
            self.reported = belief
            self.send("coup", {"type": "report", "what": "leader", "value": self.leader, "term": self.term})

    def handle(self, msg):
        src, body = msg.get("src"), msg.get("body") or {}
        kind, term = body.get("type"), body.get("term", 0)
        if kind == "init":
            self.me = body["node_id"]
            ids = body["node_ids"]
            self.place = ids.index(self.me)
            self.peers = [n for n in ids if n != self.me]
            self.last_heard = time.monotonic()
            self.started = not body.get("defer_start", False)
            self.send(src, {"type": "init_ok", "in_reply_to": body["msg_id"]})
            self.report()
            return
        if not self.started and (kind == "start" or src in self.peers):
            self.started, self.last_heard = True, time.monotonic()
        if kind == "start":
            return
        if not isinstance(term, int):
            return
        if term > self.term:
            self.step_down(term, "")
        if kind == "vote_req":
            granted = term == self.term and self.role == "follower" and self.voted_for in (None, src)
            if granted:
                self.voted_for = src
                self.last_heard = time.monotonic()
            self.send(src, {"type": "vote", "term": self.term, "granted": granted})
        elif kind == "vote" and self.role == "candidate" and term == self.term:
            self.answered.add(src)
            if body.get("granted"):
                self.votes.add(src)
                if len(self.votes) >= self.majority():
                    self.lead()
        elif kind == "beat":
            if term < self.term:
                self.send(src, {"type": "beat_ok", "term": self.term})  # a stale leader: tell it the term
                return
            if self.leader != src or self.role != "follower":
                self.step_down(term, src)
            self.last_heard = time.monotonic()
            self.send(src, {"type": "beat_ok", "term": self.term})
        elif kind == "beat_ok" and self.role == "leader" and term == self.term:
            self.heard[src] = time.monotonic()

    def tick(self, now):
        if self.me is None or not self.started:
            return
        if self.role == "leader":
            fresh = 1 + sum(1 for t in self.heard.values() if now - t < CHECK_QUORUM)
            if fresh < self.majority() and now - self.led_since >= CHECK_QUORUM:
                log(f"{self.me}: no majority has answered for {CHECK_QUORUM}s: stepping down")
                self.step_down(self.term, "")
                self.last_heard = now
                return
            if now - self.last_beat >= HEARTBEAT:
                self.last_beat = now
                self.broadcast({"type": "beat", "term": self.term})
            return
        timeout = ELECTION_TIMEOUT + ELECTION_STAGGER * self.place
        if self.role == "candidate" and now - self.election_started >= timeout:
            if not self.answered:
                # THE BUG, on purpose: nobody answered, so this node takes
                # it that every other node is down and leads alone. Cut off
                # by a partition, it claims a term that the others may be
                # electing a leader of on their side.
                log(f"{self.me}: nobody answered in term {self.term}: leading alone")
                self.lead()
                return
            self.campaign(now)
        elif self.role == "follower" and now - self.last_heard >= timeout:
            self.campaign(now)

    def campaign(self, now):
        self.term += 1
        self.role, self.voted_for, self.leader = "candidate", self.me, ""
        self.votes, self.answered = {self.me}, set()
        self.election_started = now
        self.report()
        self.broadcast({"type": "vote_req", "term": self.term})

    def lead(self):
        self.role, self.leader = "leader", self.me
        self.heard = {}
        self.led_since = self.last_beat = time.monotonic()
        self.report()
        self.broadcast({"type": "beat", "term": self.term})

    def step_down(self, term, leader):
        if term > self.term:
            self.term, self.voted_for = term, None
        self.role, self.leader = "follower", leader
        self.report()


def main():
    lines = queue.Queue()

    def read():
        for line in sys.stdin:
            lines.put(line)
        lines.put(None)  # coup closed stdin: the run is over

    threading.Thread(target=read, daemon=True).start()
    node = Node()
    while True:
        try:
            line = lines.get(timeout=TICK)
        except queue.Empty:
            line = ""
        if line is None:
            return
        if line.strip():
            try:
                msg = json.loads(line)
            except ValueError:
                log("dropped a line that does not parse:", line[:100])
                continue
            if isinstance(msg, dict):
                node.handle(msg)
        node.tick(time.monotonic())


if __name__ == "__main__":
    main()
