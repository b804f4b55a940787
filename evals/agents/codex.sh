#!/bin/sh
# OpenAI Codex CLI, non-interactive (`codex exec`), as a `warp-compile eval` agent:
#   warp-compile eval --out runs -- evals/agents/codex.sh
# Contract: `warp-compile eval --contract`. Codex has no per-run MCP config file, so the server is declared with
# -c overrides for this run only (nothing is written to ~/.codex). Edits stay in the copy (workspace-write
# sandbox); the answer's folder is added as a writable directory. Codex asks before MCP tool calls, which a
# non-interactive run cannot answer: set CODEX_ARGS (e.g. an approval policy your Codex version accepts) if its
# tool calls are cancelled. Override the binaries with CODEX_BIN / WARP_COMPILE_BIN.
set -eu
: "${WARP_COMPILE_PROMPT:?run this under warp-compile eval}"
: "${WARP_COMPILE_ANSWER:?run this under warp-compile eval}"
wc_bin="${WARP_COMPILE_BIN:-$(command -v warp-compile)}"
# shellcheck disable=SC2086
exec "${CODEX_BIN:-codex}" exec \
  --skip-git-repo-check \
  --sandbox workspace-write \
  --add-dir "$(dirname "$WARP_COMPILE_ANSWER")" \
  -c "mcp_servers.warp-compile.command=\"$wc_bin\"" \
  -c "mcp_servers.warp-compile.args=[\"serve\", \"--root\", \"$PWD\"]" \
  ${CODEX_ARGS:-} \
  "$WARP_COMPILE_PROMPT"
