"""Where the measured command enters Python: the file a process-wide setting must go in, and who owns it.

A fix such as `wp.config.enable_backward = False` works only where it runs before the kernel modules are created:
at the top of the entry point. That place depends on how the command starts Python: a script (`python app.py`),
a module (`python -m pkg.tool`, which may live in an installed distribution, e.g. Warp's own examples), or a
console script (a generated launcher in the venv's bin that imports `pkg.mod:main`). When the entry point belongs
to an installed distribution the user cannot edit it, so the fix goes in a small launcher of their own instead.
Resolved once, when measuring (the files are read here, at the edge), and kept in the report.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .models import EntryPoint, FileOwner

_ENV_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_CONSOLE = re.compile(r"^from\s+([\w.]+)\s+import\s+(\w+)", re.MULTILINE)
_PY_FLAGS_WITH_VALUE = {"-W", "-X", "-Q"}


def _strip_env(argv: list[str]) -> list[str]:
    """`env A=1 python ...` and `A=1 python ...` run the same Python as `python ...`."""
    i = 0
    if argv and os.path.basename(argv[0]) == "env":
        i = 1
        while i < len(argv) and (argv[i].startswith("-") or _ENV_ASSIGN.match(argv[i])):
            i += 1
    while i < len(argv) and _ENV_ASSIGN.match(argv[i]):
        i += 1
    return argv[i:]


def _is_python(exe: str) -> bool:
    return bool(re.match(r"^python(\d+(\.\d+)*)?$", os.path.basename(exe)))


def _module_file(name: str, search: list[Path]) -> Path | None:
    rel = Path(*name.split("."))
    for base in search:
        for cand in (base / rel / "__main__.py", base.joinpath(*rel.parts[:-1], rel.name + ".py")):
            if cand.is_file():
                return cand
    return None


def find_entry(
    command: list[str], cwd: Path, main_file: str | None = None, imported: list[str] | None = None
) -> EntryPoint:
    """The entry point of `command` run in `cwd`. `main_file` is what the hook saw as `__main__.__file__` (the
    truth for scripts and `-m` modules, wherever installed); `imported` (files the run imported) finds a console
    script's module."""
    entry = _from_argv(command, cwd, imported)
    if main_file and entry.kind in ("script", "module"):
        entry = entry.model_copy(update={"file": main_file})
    return entry


def _from_argv(command: list[str], cwd: Path, imported: list[str] | None) -> EntryPoint:
    argv = _strip_env(list(command))
    if not argv:
        return EntryPoint(kind="unknown")
    exe = argv[0]
    if _is_python(exe):
        rest = argv[1:]
        i = 0
        while i < len(rest) and rest[i].startswith("-") and rest[i] not in ("-m", "-c", "-"):
            i += 2 if rest[i] in _PY_FLAGS_WITH_VALUE else 1
        if i >= len(rest) or rest[i] in ("-c", "-"):
            return EntryPoint(kind="unknown", detail="code given inline (-c or stdin)")
        if rest[i] == "-m" and i + 1 < len(rest):
            name = rest[i + 1]
            found = _module_file(name, [cwd])
            if found is None and imported:
                tail = [f"/{'/'.join(name.split('.'))}/__main__.py", f"/{'/'.join(name.split('.'))}.py"]
                found = next((Path(f) for f in imported if any(f.endswith(t) for t in tail)), None)
            return EntryPoint(kind="module", name=name, file=str(found) if found else None)
        script = Path(rest[i])
        script = script if script.is_absolute() else cwd / script
        return EntryPoint(kind="script", name=rest[i], file=str(script) if script.is_file() else None)
    launcher = Path(exe) if os.sep in exe else None
    if launcher is None:
        from shutil import which

        hit = which(exe)
        launcher = Path(hit) if hit else None
    if launcher is not None and launcher.is_file():
        try:
            head = launcher.read_text(encoding="utf-8", errors="replace")[:4000]
        except OSError:
            head = ""
        m = _CONSOLE.search(head) if head.startswith("#!") and "python" in head.splitlines()[0] else None
        if m:
            found = _module_file(m.group(1), [cwd])
            if found is None and imported:
                tail = f"/{'/'.join(m.group(1).split('.'))}.py"
                found = next((Path(f) for f in imported if f.endswith(tail)), None)
            return EntryPoint(
                kind="console_script", name=f"{m.group(1)}:{m.group(2)}", launcher=str(launcher),
                file=str(found) if found else None,
            )
    return EntryPoint(kind="unknown", detail=f"{exe} is not a Python interpreter or a Python console script")


def with_owner(entry: EntryPoint, owners: dict[str, FileOwner], root: str) -> EntryPoint:
    """The entry point's owner: the ownership map when it has the file, else the project when inside its root."""
    if entry.file is None:
        if entry.kind == "module":  # not under the project and not among the imported files: installed
            return entry.model_copy(update={"owner": "dependency"})
        return entry
    hit = owners.get(entry.file)
    if hit is not None:
        dist = hit.distribution if hit.owner == "dependency" else None
        return entry.model_copy(update={"owner": hit.owner, "distribution": dist})
    try:
        inside = os.path.commonpath([os.path.realpath(entry.file), os.path.realpath(root)]) == os.path.realpath(root)
    except ValueError:
        inside = False
    return entry.model_copy(update={"owner": "project" if inside else None})
