#!/bin/sh
# Runs examples/raft's node (main.go: coup.Serve(raftkv.Node)), building
# it first when there is none or a Go file of the example or of coup (the
# replace in go.mod points at this clone) is newer than it, so that a
# scenario can name this script and run from a fresh clone with only Go
# installed. It builds into a temporary file and renames it, so that
# nodes starting together never run a half-written binary, then execs the
# node: the node replaces this shell in the same process, and so stays in
# the process group that coup pauses (SIGSTOP) and kills (SIGKILL).
set -e
dir=$(cd "$(dirname "$0")" && pwd)
bin="$dir/raft-node"
if [ ! -x "$bin" ] || [ "$dir/go.mod" -nt "$bin" ] || [ "$dir/go.sum" -nt "$bin" ] ||
  [ -n "$(find "$dir/../.." -name '*.go' -newer "$bin" -print 2>/dev/null | head -n 1)" ]; then
  tmp="$bin.tmp.$$"
  (cd "$dir" && go build -o "$tmp" .) >&2
  mv -f "$tmp" "$bin"
fi
exec "$bin" "$@"
