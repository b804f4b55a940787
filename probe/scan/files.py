"""Which files a scan reads, what module name each has, and how import names resolve against them."""

from __future__ import annotations

import ast
import os
import stat
from collections import defaultdict
from pathlib import Path

from ..models.scan import SkippedFile
from .common import SKIP_DIRS

# ---- files and module names ------------------------------------------------------------------------------------


def module_name_for(rel: str, root_name: str = "", root_is_package: bool = False) -> tuple[str, bool]:
    """Python module name of a root-relative posix path: (name, is_package). A leading `src/` is stripped; when the
    scanned root is itself a package (has `__init__.py`), names are prefixed with its directory name."""
    parts = rel[:-3].split("/") if rel.endswith(".py") else rel.split("/")
    if parts[0] == "src" and len(parts) > 1 and not root_is_package:
        parts = parts[1:]
    if root_is_package and root_name:
        parts = [root_name, *parts]
    is_pkg = parts[-1] == "__init__"
    if is_pkg:
        parts = parts[:-1]
    return (".".join(parts) if parts else (root_name or "__init__")), is_pkg


_VIRTUAL_FS = frozenset({"proc", "sys", "dev"})


def _collect_files(root: Path, max_files: int, max_bytes: int) -> tuple[list[str], list[SkippedFile], bool]:
    files: list[str] = []
    skipped: list[SkippedFile] = []
    root_real = root.resolve()
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        keep = []
        for name in sorted(dirnames):
            sub = here / name
            try:
                if name.startswith(".") or name in SKIP_DIRS or sub.is_symlink():
                    continue
                if (sub / "pyvenv.cfg").exists() or (sub / "conda-meta").is_dir():
                    continue
                if name in _VIRTUAL_FS and os.path.ismount(sub):
                    continue  # /proc, /sys, /dev: kernel views, never a project's sources
            except OSError:  # unreadable: nothing to scan there
                continue
            keep.append(name)
        dirnames[:] = keep
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            path = here / name
            rel = path.relative_to(root).as_posix()
            if len(files) >= max_files:
                return files, skipped, True
            try:
                if path.is_symlink():
                    path.resolve().relative_to(root_real)
                st = path.stat()
            except ValueError:
                skipped.append(SkippedFile(file=rel, reason="symlink to outside the scanned root"))
                continue
            except OSError as exc:
                skipped.append(SkippedFile(file=rel, reason=f"unreadable: {exc.strerror or exc}"))
                continue
            if not stat.S_ISREG(st.st_mode):  # a FIFO or device named *.py would block the read forever
                skipped.append(SkippedFile(file=rel, reason="not a regular file"))
                continue
            size = st.st_size
            if size > max_bytes:
                skipped.append(SkippedFile(file=rel, reason=f"{size} bytes, over max_bytes={max_bytes}"))
                continue
            files.append(rel)
    return files, skipped, False


class _Project:
    """Module names of every scanned file, and import-name resolution against them."""

    def __init__(self, root_name: str, rels: list[str]):
        self.index: dict[str, str] = {}  # module name -> rel
        self.name_of: dict[str, tuple[str, bool]] = {}  # rel -> (name, is_package)
        root_is_package = "__init__.py" in rels
        for rel in rels:
            name, is_pkg = module_name_for(rel, root_name, root_is_package)
            self.name_of[rel] = (name, is_pkg)
            self.index.setdefault(name, rel)
        # sys.path-style names (directory of the topmost package ancestor on sys.path), e.g. lib/pkg/mod.py -> pkg.mod,
        # scripts/helpers.py -> helpers: a fallback for layouts other than flat / src.
        pkg_dirs = {rel.rpartition("/")[0] for rel in rels if rel.endswith("__init__.py") and "/" in rel}
        self.alt: dict[str, list[str]] = defaultdict(list)
        for rel in rels:
            dirparts = rel.split("/")[:-1]
            i = len(dirparts)
            while i > 0 and "/".join(dirparts[:i]) in pkg_dirs:
                i -= 1
            stem = rel.rsplit("/", 1)[-1][:-3]
            parts = dirparts[i:] + ([] if stem == "__init__" else [stem])
            alt = ".".join(parts)
            name = self.name_of[rel][0]
            if alt and alt != name and alt not in self.index:
                self.alt[alt].append(name)

    def resolve(self, dotted: str, importer_rel: str) -> str | None:
        if not dotted or dotted.startswith("."):
            return None
        if dotted in self.index:
            return dotted
        cands = self.alt.get(dotted)
        if not cands:
            return None
        if len(cands) == 1:
            return cands[0]

        def shared(name: str) -> int:
            a, b = self.index[name].split("/"), importer_rel.split("/")
            n = 0
            while n < min(len(a), len(b)) and a[n] == b[n]:
                n += 1
            return n

        return max(cands, key=shared)


def _parse(path: Path, rel: str) -> tuple[ast.Module | None, str | None, bytes]:
    """(tree, error, source bytes)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, f"unreadable: {exc.strerror or exc}", b""
    try:
        return ast.parse(data, filename=rel), None, data
    except SyntaxError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        return None, f"{type(exc).__name__}: {exc.msg}{where}", b""
    except Exception as exc:  # noqa: BLE001 - null bytes, bad encodings, recursion: never stop the scan
        return None, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": "), b""
