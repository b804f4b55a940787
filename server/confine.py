"""Confinement: every path a tool touches must resolve (symlinks included) inside an allowed root.

Allowed roots are the server's `--root` directories plus the roots the client declares (`roots/list`, asked only
when a path is not already inside a server root and the client says it supports roots). A relative path is
taken relative to the first allowed root. The check runs before anything is read, written or started.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from urllib.parse import unquote, urlparse

from ..probe.errors import UsageError


class ConfinementError(UsageError):
    """A path outside every allowed root, or no root at all: refused before anything runs."""


def real(path: str | Path) -> Path:
    """Absolute, with every existing symlink followed (the file itself need not exist)."""
    return Path(os.path.realpath(os.path.expanduser(str(path))))


def roots_from_uris(uris: Iterable[str]) -> list[Path]:
    """`file://` root URIs as resolved directories; other schemes (and remote hosts) are ignored."""
    out: list[Path] = []
    for uri in uris:
        parsed = urlparse(str(uri))
        if parsed.scheme != "file" or parsed.netloc not in ("", "localhost") or not parsed.path:
            continue
        out.append(real(unquote(parsed.path)))
    return out


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


class Confinement:
    def __init__(self, roots: Sequence[str | Path]) -> None:
        self.roots: list[Path] = []
        for r in roots:
            p = real(r)
            if p not in self.roots:
                self.roots.append(p)

    def allowed(self, client_roots: Sequence[Path] = ()) -> list[Path]:
        out = list(self.roots)
        for r in client_roots:
            if r not in out:
                out.append(r)
        return out

    def locate(self, raw: str, client_roots: Sequence[Path] = ()) -> Path | None:
        """Where `raw` resolves to, or None when there is no root to resolve a relative path against."""
        text = os.path.expanduser(raw)
        if os.path.isabs(text):
            return real(text)
        roots = self.allowed(client_roots)
        return real(roots[0] / text) if roots else None

    def is_inside(self, raw: str | None, client_roots: Sequence[Path] = ()) -> bool:
        if raw is None:
            return True
        if not isinstance(raw, str) or not raw.strip() or "\0" in raw:
            return False
        where = self.locate(raw, client_roots)
        return where is not None and any(_inside(where, r) for r in self.allowed(client_roots))

    def check(self, raw: str, what: str, client_roots: Sequence[Path] = ()) -> Path:
        """The resolved path, or ConfinementError with one line the caller can act on."""
        if not isinstance(raw, str) or not raw.strip():
            raise ConfinementError(f"{what} is empty: give a path inside the project")
        if "\0" in raw:
            raise ConfinementError(f"{what} contains a NUL byte")
        roots = self.allowed(client_roots)
        if not roots:
            raise ConfinementError(
                f"{what} {raw!r} refused: no allowed roots (start the server with `warp-compile serve --root DIR`,"
                " or use a client that declares its workspace roots)"
            )
        where = self.locate(raw, client_roots)
        assert where is not None
        if not any(_inside(where, r) for r in roots):
            shown = ", ".join(str(r) for r in roots)
            resolved = "" if str(where) == raw else f" (resolves to {where})"
            raise ConfinementError(
                f"{what} {raw!r}{resolved} is outside the allowed roots [{shown}]: use a path inside them"
                " or restart the server with another --root"
            )
        return where

    def check_dir(self, raw: str, what: str, client_roots: Sequence[Path] = ()) -> Path:
        where = self.check(raw, what, client_roots)
        if not where.is_dir():
            raise UsageError(f"{what} {raw!r} does not exist or is not a directory")
        return where

    def check_new_file(self, raw: str, what: str, client_roots: Sequence[Path] = ()) -> Path:
        where = self.check(raw, what, client_roots)
        if where.is_dir():
            raise UsageError(f"{what} {raw!r} is a directory: give a file name, e.g. report.json")
        existing = where.parent
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent  # missing directories are created when the file is written
        if not existing.is_dir():
            raise UsageError(f"{what} {raw!r}: {existing} is a file, not a directory")
        return where
