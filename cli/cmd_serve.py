"""`warp-compile serve [--transport stdio|streamable-http] [--host H] [--port P] [--root DIR ...]`: the MCP server."""

from __future__ import annotations

import argparse
import errno
import logging
import os
import signal
import socket
import sys

from ..probe.errors import UsageError
from ..probe.sandbox import shutdown
from .args import add_command
from .io import check_dir, clip

DESCRIPTION = """\
Serve warp-compile to coding agents over MCP (Model Context Protocol): tools measure, diagnose, compare,
compare_interleaved and explain_mechanism with structured results, progress and cancellation; resources
warp-compile://roots, warp-compile://mechanisms/{id} and warp-compile://reports/{report_id}[/{part}]; the prompt
optimize_compile_time.

Every cwd, report path and json_path must resolve inside a --root directory or a root the client declares.
Register with Claude Code:  claude mcp add warp-compile -- warp-compile serve --root .

streamable-http listens on loopback; another --host needs a bearer token (WARP_COMPILE_TOKEN or --token-file),
and with a token every request without `Authorization: Bearer <token>` gets 401.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "serve", "run the MCP server for coding agents (stdio by default)", DESCRIPTION)
    p.add_argument(
        "--transport",
        choices=["stdio", "streamable-http"],
        default="stdio",
        help="stdio (default: the client starts the server) or streamable-http (a long-running local server)",
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="streamable-http: address to bind (default 127.0.0.1); a non-loopback address needs a token",
    )
    p.add_argument("--port", type=int, default=8000, help="streamable-http: port (default 8000)")
    p.add_argument(
        "--token-file",
        metavar="FILE",
        help="streamable-http: require `Authorization: Bearer <token>` with the token in FILE (else the"
        " WARP_COMPILE_TOKEN environment variable, when set); every request without it gets 401",
    )
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="streamable-http: another Host/Origin name clients use to reach the server (DNS-rebinding check;"
        " loopback names and --host are always allowed; repeatable)",
    )
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
    roots = [check_dir(r, "serve: --root") for r in ns.root]
    if ns.port is not None and not (0 < ns.port < 65536):
        raise UsageError(f"serve: --port {ns.port}: not a port number")
    # Imported here: the SDK takes seconds to import and other subcommands never need it.
    from ..server.http_access import (
        StaticTokenVerifier,
        auth_settings,
        check_host,
        read_token,
        security_settings,
    )

    token = None
    if ns.transport == "streamable-http":
        token = read_token(ns.token_file)
        check_host(ns.host, token)
        _check_port(ns.host, ns.port)  # before any log line: a port in use is one line and exit 2
    elif ns.token_file is not None or ns.allow_host:
        raise UsageError("serve: --token-file and --allow-host apply only to --transport streamable-http")
    # Before the SDK configures logging: stderr only, never stdout (stdout is the protocol under stdio).
    logging.basicConfig(
        stream=sys.stderr, level=getattr(logging, ns.log_level), format="warp-compile serve: %(levelname)s %(message)s"
    )

    from ..server.app import create_server

    if token is not None:
        server = create_server(roots, token_verifier=StaticTokenVerifier(token), auth=auth_settings(ns.host, ns.port))
    else:
        server = create_server(roots)
    if not roots:
        logging.getLogger("warp_compile.server").warning(
            "no --root given: only paths inside the roots the client declares are allowed"
        )
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, _stop)
    try:
        if ns.transport == "stdio":
            server.run()
        else:
            _serve_http(server, ns.host, ns.port, ns.log_level, security_settings(ns.host, ns.allow_host))
    except KeyboardInterrupt:
        pass
    finally:
        shutdown()  # the client went away mid-run: stop the measured tree, remove its sandbox
    return 0


def _stop(signum: int, frame: object) -> None:
    """Terminated (a client stopping us, a closed terminal): measured trees and sandboxes go first, at once.

    A run's worker thread may be blocked for seconds and its `finally` would come too late (the SDK's stdio client
    escalates to SIGKILL after 2 s), so the cleanup happens here and the process exits without unwinding.
    """
    shutdown()
    os._exit(128 + signum)


def _check_port(host: str, port: int) -> None:
    """Bind HOST:PORT once, the way the HTTP server will (SO_REUSEADDR, every address HOST resolves to), and let go.

    A port another process listens on is refused here with one line, instead of uvicorn's log lines and exit 3.
    """
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        why = getattr(exc, "strerror", None) or exc
        raise UsageError(f"serve: --host {clip(host)}: cannot resolve ({why})") from None
    for family, kind, proto, _, address in addresses:
        with socket.socket(family, kind, proto) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6 and hasattr(socket, "IPV6_V6ONLY"):
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                sock.bind(address)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    raise UsageError(f"serve: port {port} on {clip(host)} is in use") from None
                raise UsageError(f"serve: cannot listen on {clip(host)} port {port}: {exc.strerror or exc}") from None


def _serve_http(server, host: str, port: int, log_level: str, security) -> None:  # type: ignore[no-untyped-def]
    """Streamable HTTP at http://HOST:PORT/mcp; uvicorn's own logs (access log included) go to stderr too."""
    import anyio
    import uvicorn

    app = server.streamable_http_app(host=host, transport_security=security)
    config = uvicorn.Config(app, host=host, port=port, log_config=None, log_level=log_level.lower())
    anyio.run(uvicorn.Server(config).serve)
