#!/bin/sh
# Conformance-suite client command: `client_adapter.sh <serverUrl>` (the suite appends the URL
# and sets MCP_CONFORMANCE_*). Runs client_adapter.ts, which maps the scenario onto the real
# `cli.ts` client. The adapter may write and read only a fresh work directory (removed on exit),
# read only the MCP_CONFORMANCE_* variables, and run only `deno` (the CLI children); it opens no
# socket itself (each CLI child gets loopback network only).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/wmcp-conformance-XXXXXX")
trap 'rm -rf "$work"' EXIT
# Paths given to the CLI are absolute; an inherited INIT_CWD (deno task) must not re-root them.
unset INIT_CWD
status=0
deno run --quiet --no-prompt --no-config \
  --allow-read="$work" --allow-write="$work" \
  --allow-env=MCP_CONFORMANCE_SCENARIO,MCP_CONFORMANCE_PROTOCOL_VERSION,MCP_CONFORMANCE_CONTEXT \
  --allow-run=deno \
  "$here/client_adapter.ts" --work "$work" "$@" || status=$?
exit "$status"
