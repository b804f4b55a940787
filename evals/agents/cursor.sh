#!/bin/sh
# Cursor's CLI agent, headless (`cursor-agent -p`), as a `warp-compile eval` agent:
#   warp-compile eval --out runs -- evals/agents/cursor.sh
# Contract: `warp-compile eval --contract`. Cursor reads MCP servers from .cursor/mcp.json in the project, so
# this writes one into the copy for the run and removes it afterwards (the judge measures the copy after this
# script exits; a leftover file would count as a change). --force lets it write files without asking;
# --approve-mcps approves the server without a prompt. Override with CURSOR_BIN / WARP_COMPILE_BIN; extra flags
# (e.g. --model) in CURSOR_ARGS.
set -eu
: "${WARP_COMPILE_PROMPT:?run this under warp-compile eval}"
: "${WARP_COMPILE_ANSWER:?run this under warp-compile eval}"
wc_bin="${WARP_COMPILE_BIN:-$(command -v warp-compile)}"
made_dir=""
[ -d .cursor ] || made_dir=1
mkdir -p .cursor
[ ! -e .cursor/mcp.json ] || { echo "cursor.sh: .cursor/mcp.json already exists in the project" >&2; exit 2; }
cleanup() { rm -f .cursor/mcp.json; [ -z "$made_dir" ] || rmdir .cursor 2>/dev/null || true; }
trap cleanup EXIT INT TERM
printf '{"mcpServers": {"warp-compile": {"command": "%s", "args": ["serve", "--root", "%s"]}}}\n' \
  "$wc_bin" "$PWD" > .cursor/mcp.json
# shellcheck disable=SC2086
"${CURSOR_BIN:-cursor-agent}" -p "$WARP_COMPILE_PROMPT" \
  --force --approve-mcps \
  --output-format text ${CURSOR_ARGS:-}
