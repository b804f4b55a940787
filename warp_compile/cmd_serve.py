"""`warp-compile serve [--transport stdio|streamable-http] [--host H] [--port P] [--root DIR ...]`: the MCP server."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from warp_compile.probe.errors import UsageError

DESCRIPTION = """\
Serve warp-compile to coding agents over MCP (Model Context Protocol): tools measure, diagnose, compare and
explain_mechanism with structured results, progress and cancellation; resources warp-compile://mechanisms/{id}
and warp-compile://reports/{report_id}; the prompt optimize_compile_time.

Every cwd, report path and json_path must resolve inside a --root directory or a root the client declares.
Register with Claude Code:  claude mcp add warp-compile -- warp-compile serve --root .
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve",
        help="run the MCP server for coding agents (stdio by default)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--transport",
        choices=["stdio", "streamable-http"],
        default="stdio",
        help="stdio (default: the client starts the server) or streamable-http (a long-running local server)",
    )
    p.add_argument("--host", default="127.0.0.1", help="streamable-http: address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="streamable-http: port (default 8000)")
    p.add_argument(
        "--root",
        action="extend",
        nargs="+",
        default=[],
        metavar="DIR",
        help="directory the tools may run in and read or write reports under (repeatable)",
    )
    p.add_argument(
        "--log-level",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        default="WARNING",
        help="log level on stderr (default WARNING); stdout carries only the protocol",
    )
    p.set_defaults(func=run)


def run(ns: argparse.Namespace) -> int:
    roots = []
    for r in ns.root:
        p = Path(r).expanduser()
        if not p.is_dir():
            raise UsageError(f"serve: --root {r}: not a directory")
        roots.append(p.resolve())
    if ns.port is not None and not (0 < ns.port < 65536):
        raise UsageError(f"serve: --port {ns.port}: not a port number")
    # Before the SDK configures logging: stderr only, never stdout (stdout is the protocol under stdio).
    logging.basicConfig(
        stream=sys.stderr, level=getattr(logging, ns.log_level), format="warp-compile serve: %(levelname)s %(message)s"
    )

    from warp_compile.server.app import create_server

    server = create_server(roots)
    if not roots:
        logging.getLogger("warp_compile.server").warning(
            "no --root given: only paths inside the roots the client declares are allowed"
        )
    try:
        if ns.transport == "stdio":
            server.run()
        else:
            _serve_http(server, ns.host, ns.port, ns.log_level)
    except KeyboardInterrupt:
        pass
    return 0


def _serve_http(server, host: str, port: int, log_level: str) -> None:  # type: ignore[no-untyped-def]
    """Streamable HTTP at http://HOST:PORT/mcp; uvicorn's own logs (access log included) go to stderr too."""
    import anyio
    import uvicorn

    config = uvicorn.Config(
        server.streamable_http_app(host=host), host=host, port=port, log_config=None, log_level=log_level.lower()
    )
    anyio.run(uvicorn.Server(config).serve)
