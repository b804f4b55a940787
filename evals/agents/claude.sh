#!/bin/sh
# Claude Code, headless, as a `warp-compile eval` agent:
#   warp-compile eval --out runs -- evals/agents/claude.sh
# The harness runs this in the agent's private copy of a case with WARP_COMPILE_PROMPT (the request and the
# deliverables) and WARP_COMPILE_ANSWER (where the diagnosis JSON goes) set; see `warp-compile eval --contract`.
# warp-compile's MCP server is given to Claude for this run only (--mcp-config, --strict-mcp-config), confined to
# the copy (--root .); the allowed tools are its four tools plus reading and editing files and running python.
# Override the binaries with CLAUDE_BIN / WARP_COMPILE_BIN; extra flags (e.g. --model) in CLAUDE_ARGS.
set -eu
: "${WARP_COMPILE_PROMPT:?run this under warp-compile eval}"
: "${WARP_COMPILE_ANSWER:?run this under warp-compile eval}"
wc_bin="${WARP_COMPILE_BIN:-$(command -v warp-compile)}"
cfg="$(mktemp "${TMPDIR:-/tmp}/warp-compile-mcp-XXXXXX")"
trap 'rm -f "$cfg"' EXIT INT TERM
printf '{"mcpServers": {"warp-compile": {"command": "%s", "args": ["serve", "--root", "%s"]}}}\n' \
  "$wc_bin" "$PWD" > "$cfg"
tools="mcp__warp-compile__measure,mcp__warp-compile__diagnose,mcp__warp-compile__compare"
tools="$tools,mcp__warp-compile__explain_mechanism,Read,Edit,Write,Glob,Grep,Bash(python:*)"
# shellcheck disable=SC2086
"${CLAUDE_BIN:-claude}" -p "$WARP_COMPILE_PROMPT" \
  --mcp-config "$cfg" --strict-mcp-config \
  --allowedTools "$tools" \
  --add-dir "$(dirname "$WARP_COMPILE_ANSWER")" \
  --permission-mode acceptEdits \
  --output-format stream-json --verbose ${CLAUDE_ARGS:-}
