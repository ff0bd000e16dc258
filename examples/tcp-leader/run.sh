#!/bin/sh
# Runs the tcp-leader example server, building it first when its source is
# newer than the binary (or there is none), so that a scenario can name
# this script and run from a fresh clone with only Go installed. It builds
# into a temporary file and renames it, so that servers starting together
# never run a half-written binary, then execs the server: it replaces this
# shell in the same process, and so stays in the process group that coup
# pauses (SIGSTOP) and kills (SIGKILL).
set -e
dir=$(cd "$(dirname "$0")" && pwd)
bin="$dir/tcp-leader"
stale=
if [ ! -x "$bin" ]; then
  stale=1
else
  for f in "$dir"/*.go "$dir"/../../go.mod; do
    if [ "$f" -nt "$bin" ]; then
      stale=1
    fi
  done
fi
if [ -n "$stale" ]; then
  tmp="$bin.tmp.$$"
  (cd "$dir" && go build -o "$tmp" .) >&2
  mv -f "$tmp" "$bin"
fi
exec "$bin" "$@"
