"""Who may talk to `serve --transport streamable-http`: loopback by default, a bearer token for anything else.

`measure` runs any argv, so a reachable HTTP server without authentication is remote code execution. The rules:

- A `--host` that is not loopback (127.0.0.0/8, ::1, or a name resolving only to those) is refused unless a bearer
  token is configured (`--token-file FILE` or `WARP_COMPILE_TOKEN`).
- With a token, every request to the MCP endpoint must carry `Authorization: Bearer <token>`; the SDK's own
  `RequireAuthMiddleware` answers 401 otherwise. The token is checked in constant time by `StaticTokenVerifier`.
- DNS-rebinding protection (Host and Origin header checks, the SDK's `TransportSecuritySettings`) stays on for every
  host, with an explicit list: the loopback names, the bound host, and any `--allow-host` the user adds.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
import socket
from pathlib import Path

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings

from ..probe.errors import UsageError
from ..probe.fmt import clip

TOKEN_ENV = "WARP_COMPILE_TOKEN"
MIN_TOKEN_CHARS = 16
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
WILDCARD = ("0.0.0.0", "::", "")


class StaticTokenVerifier:
    """The SDK's TokenVerifier protocol for one shared secret (no OAuth server: the user hands the token out)."""

    def __init__(self, token: str) -> None:
        self._token = token.encode()

    async def verify_token(self, token: str) -> AccessToken | None:
        if secrets.compare_digest(token.encode(), self._token):
            return AccessToken(token=token, client_id="warp-compile-token", scopes=[])
        return None


def is_loopback(host: str) -> bool:
    """True when every address `host` stands for is a loopback address (names are resolved)."""
    text = host.strip().strip("[]")
    if not text or text in WILDCARD:
        return False
    try:
        return ipaddress.ip_address(text).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(text, None, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        return False
    addresses = {info[4][0] for info in infos}
    return bool(addresses) and all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addresses)


def read_token(token_file: str | None) -> str | None:
    """The bearer token from `--token-file` (wins) or `WARP_COMPILE_TOKEN`; None when neither is set."""
    if token_file is not None:
        try:
            token = Path(token_file).expanduser().read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            why = getattr(exc, "strerror", None) or exc
            raise UsageError(f"serve: --token-file {clip(token_file)}: cannot read ({why})") from None
        source = f"--token-file {clip(token_file)}"
    else:
        token = os.environ.get(TOKEN_ENV, "").strip()
        if not token:
            return None
        source = TOKEN_ENV
    if len(token) < MIN_TOKEN_CHARS or any(c.isspace() for c in token):
        raise UsageError(
            f"serve: {source}: the token must be at least {MIN_TOKEN_CHARS} characters without spaces"
            " (e.g. `python3 -c 'import secrets; print(secrets.token_urlsafe(32))'`)"
        )
    return token


def check_host(host: str, token: str | None) -> None:
    """Refuse a non-loopback bind without a token: anyone who reaches the port could run programs."""
    if token is None and not is_loopback(host):
        raise UsageError(
            f"serve: --host {clip(host)} is not loopback and no token is set: anyone reaching the port could run "
            f"commands; set {TOKEN_ENV} or --token-file FILE, or keep the default 127.0.0.1"
        )


def security_settings(host: str, allow_hosts: list[str]) -> TransportSecuritySettings:
    """DNS-rebinding protection on, with the Host / Origin values this server answers to (any port)."""
    names: list[str] = list(LOOPBACK_HOSTS)
    extra = list(allow_hosts)
    if host.strip() not in WILDCARD:
        extra.append(host.strip())
    else:  # bound to every interface: the machine's own name answers too
        extra.append(socket.gethostname())
    for h in extra:
        h = h.strip()
        if ":" in h and not h.startswith("["):
            h = f"[{h}]"  # an IPv6 literal in a Host header
        if h and h not in names:
            names.append(h)
    hosts = [f"{h}:*" for h in names] + names
    origins = [f"{scheme}://{h}{port}" for h in names for scheme in ("http", "https") for port in (":*", "")]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


def auth_settings(host: str, port: int) -> AuthSettings:
    """The SDK needs an issuer URL to enable its bearer middleware; no OAuth routes are served (no provider)."""
    shown = host if host.strip() not in WILDCARD else "127.0.0.1"
    if ":" in shown and not shown.startswith("["):
        shown = f"[{shown}]"
    return AuthSettings(issuer_url=f"http://{shown}:{port}", resource_server_url=None)
