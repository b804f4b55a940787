"""The static scan: read a project's Python sources with `ast` and collect Warp compile-time facts.

User code is never imported or executed: files are read as bytes and parsed. A file that does not parse is listed in
`ScanFacts.parse_errors` and the scan goes on; `scan()` raises only when `root` does not exist.

Two passes: each file is scanned on its own (aliases, scopes, facts), then facts are linked across files
(which modules define kernels, what an import brings in, which launches a tape block reaches, ...).

Layout: `files` (which files, module names, import resolution), `visitor` (the per-file walk: scopes, bindings,
dispatch), one mixin per fact family that the visitor is made of (`imports`, `options`, `caches`, `kernels`,
`calls`), `common` (shared names and helpers), `link` (the cross-file pass). Everything a rule needs from the
sources (also the call sites and import lines a fix quotes) ends up in ScanFacts, so no rule reads a file.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from pathlib import Path

from ..errors import UsageError
from ..models.scan import FACT_LISTS, ModuleInfo, ParseError, ScanFacts, SkippedFile
from .common import SETTING_NAMES, SKIP_DIRS
from .files import _collect_files, _parse, _Project, module_name_for
from .link import _link
from .visitor import _FileScan

__all__ = ["scan", "SKIP_DIRS", "SETTING_NAMES", "module_name_for"]


_RELEVANT = (b"warp", b"CUDA_CACHE", b"rmtree")


PROGRESS_EVERY_S = 2.0


def _scan_files(
    root: Path, rels: list[str], project: _Project, facts: ScanFacts, progress: Callable[[str], None] | None = None
) -> list[_FileScan]:
    scans: list[_FileScan] = []
    last = time.monotonic()
    for i, rel in enumerate(rels):  # one tree alive at a time: keeping them all makes the garbage collector crawl
        if progress is not None and time.monotonic() - last >= PROGRESS_EVERY_S:
            last = time.monotonic()
            progress(f"scan: {i} of {len(rels)} files read, reading {rel}")
        tree, err, data = _parse(root / rel, rel)
        if tree is None:
            facts.parse_errors.append(ParseError(file=rel, reason=err or "unknown error"))
            continue
        fs = _FileScan(rel, tree, project, data)
        try:
            fs.run() if any(k in data for k in _RELEVANT) else fs.run_light()
        except RecursionError:
            facts.parse_errors.append(
                ParseError(file=rel, reason="RecursionError: source nested too deeply to analyse")
            )
            continue
        finally:
            fs.release()
        scans.append(fs)
    return scans


def scan(
    root: Path | str,
    *,
    max_files: int = 5000,
    max_bytes: int = 2_000_000,
    progress: Callable[[str], None] | None = None,
) -> ScanFacts:
    """Scan the Python sources under `root` (AST only; nothing is imported or executed). `progress` hears, every
    couple of seconds, how far the reading got (a large checkout takes seconds)."""
    root = Path(root)
    if root.is_file():
        base = root.parent
        rels = [root.name] if root.suffix == ".py" else []
        skipped: list[SkippedFile] = []
        truncated = False
        root = base
    elif root.is_dir():
        rels, skipped, truncated = _collect_files(root, max_files, max_bytes)
    else:
        raise UsageError(f"cannot scan {root}: no such directory")
    facts = ScanFacts(root=str(root.resolve()), truncated=truncated, skipped_files=skipped)
    project = _Project(root.resolve().name, rels)
    with warnings.catch_warnings():  # SyntaxWarnings of user code are not ours to print
        warnings.simplefilter("ignore")
        scans = _scan_files(root, rels, project, facts, progress)
    facts.files_scanned = len(scans)
    for fs in scans:
        name, is_pkg = project.name_of[fs.rel]
        is_root_level = "/" not in fs.rel
        dirname = fs.rel.rpartition("/")[0]
        in_package = (f"{dirname}/__init__.py" in project.name_of) if dirname else False
        main_alias = (
            "__main__"
            if fs.rel.endswith("__main__.py") or is_root_level or (fs.has_main_guard and not in_package and not is_pkg)
            else None
        )
        facts.modules.append(
            ModuleInfo(
                file=fs.rel,
                name=name,
                main_alias=main_alias,
                is_package=is_pkg,
                has_main_guard=fs.has_main_guard,
                imports_warp=fs.imports_warp,
            )
        )
        for attr in FACT_LISTS:
            getattr(facts, attr).extend(getattr(fs, attr))
    if progress is not None and len(rels) > 50:
        progress(f"scan: linking the facts of {len(scans)} files (imports, callers, factory calls)")
    _link(facts, scans, project)
    return facts
