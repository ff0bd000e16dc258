#!/bin/sh
# Runs a program of the tcp-leader example, building it first when its
# source is newer than the binary (or there is none), so that a scenario
# can name this script and run from a fresh clone with only Go installed.
# It builds into a temporary file and renames it, so that programs
# starting together never run a half-written binary, then execs the
# program: it replaces this shell in the same process, and so stays in the
# process group that coup pauses (SIGSTOP) and kills (SIGKILL).
#
# The first argument may name the program: "adapter" runs the client
# adapter (adapter/, built as adapter/adapter), "tcp-leader" the server;
# without either, it runs the server. The other arguments are the
# program's:
#
#   run.sh --id n1 --listen ... (the server)
#   run.sh adapter --port client
set -e
dir=$(cd "$(dirname "$0")" && pwd)
src="$dir"
bin="$dir/tcp-leader"
case "${1-}" in
adapter)
  shift
  src="$dir/adapter"
  bin="$src/adapter"
  ;;
tcp-leader)
  shift
  ;;
esac
stale=
if [ ! -x "$bin" ]; then
  stale=1
else
  for f in "$src"/*.go "$dir"/../../go.mod; do
    if [ "$f" -nt "$bin" ]; then
      stale=1
    fi
  done
fi
if [ -n "$stale" ]; then
  tmp="$bin.tmp.$$"
  (cd "$src" && go build -o "$tmp" .) >&2
  mv -f "$tmp" "$bin"
fi
exec "$bin" "$@"
