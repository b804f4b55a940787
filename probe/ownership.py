"""Who owns a file the report points at: the project, or an installed distribution (and which one).

Advice differs by owner: a user can edit their project, never an installed distribution. The answer comes from the
installed metadata of the interpreter that ran the application (which may not be this tool's interpreter): the
script below runs there, maps each file to the distribution whose RECORD lists it, or whose top-level package holds
it, or whose editable install points at a directory holding it. A file no distribution claims belongs to the
project. When the interpreter cannot be asked, nothing is guessed from path patterns: the owner stays unknown.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterable
from typing import Any

from warp_compile.probe.models import FileOwner

# Runs in the application's interpreter (Python >= 3.9, stdlib only): paths on stdin (JSON), owners on stdout.
OWNER_SCRIPT = r"""
import json, os, sys, site, sysconfig
from importlib import metadata
from urllib.parse import unquote, urlparse

paths = json.load(sys.stdin)
real = lambda p: os.path.normcase(os.path.realpath(p))
sites = set()
try:
    sites.update(site.getsitepackages())
except Exception:
    pass
try:
    sites.add(site.getusersitepackages())
except Exception:
    pass
for key in ("purelib", "platlib"):
    try:
        sites.add(sysconfig.get_paths()[key])
    except Exception:
        pass
sites = sorted({real(s) for s in sites if s}, key=len, reverse=True)
stdlib = set()
for key in ("stdlib", "platstdlib"):
    try:
        stdlib.add(real(sysconfig.get_paths()[key]))
    except Exception:
        pass
top = {}
editable = []
exact = {}
for dist in metadata.distributions():
    try:
        name = dist.metadata["Name"]
        version = dist.version
    except Exception:
        continue
    if not name:
        continue
    info = (name, version)
    text = None
    try:
        text = dist.read_text("top_level.txt")
    except Exception:
        pass
    names = set(t.strip() for t in (text or "").splitlines() if t.strip())
    files = []
    try:
        files = list(dist.files or [])
    except Exception:
        pass
    for f in files:
        head = str(f).replace("\\", "/").split("/")[0]
        if head.endswith((".dist-info", ".egg-info", ".pth")) or head in ("..", "__pycache__", ""):
            continue
        names.add(head)
    for n in names:
        top.setdefault(n, info)
    try:
        direct = dist.read_text("direct_url.json")
        d = json.loads(direct) if direct else {}
        if (d.get("dir_info") or {}).get("editable") and str(d.get("url", "")).startswith("file:"):
            editable.append((real(unquote(urlparse(d["url"]).path)), info))
    except Exception:
        pass
out = {}
for p in paths:
    rp = real(p)
    hit = None
    for s in sites:
        if rp.startswith(s + os.sep):
            first = rp[len(s) + 1:].split(os.sep)[0]
            for key in (first, first[:-3] if first.endswith(".py") else first, first.split(".")[0]):
                if key in top:
                    hit = top[key]
                    break
            if hit is None:
                hit = ("", "")  # inside site-packages, yet no metadata claims it
            break
    if hit is None and any(rp.startswith(d + os.sep) for d in stdlib):
        hit = ("python", sys.version.split()[0])
    if hit is None:
        for root, info in sorted(editable, key=lambda e: len(e[0]), reverse=True):
            if rp == root or rp.startswith(root + os.sep):
                hit = info + ("editable",)
                break
    out[p] = None if hit is None else {"distribution": hit[0], "version": hit[1], "editable": len(hit) > 2}
json.dump(out, sys.stdout)
"""


def report_files(data: Any) -> set[str]:
    """Every absolute path stored under a key named `file` anywhere in a dumped report."""
    found: set[str] = set()
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for k, v in item.items():
                if k == "file" and isinstance(v, str) and os.path.isabs(v):
                    found.add(v)
                else:
                    stack.append(v)
        elif isinstance(item, list):
            stack.extend(item)
    return found


def ask_interpreter(
    python: str, paths: Iterable[str], cwd: str, env: dict[str, str] | None = None, timeout_s: float = 60.0
) -> dict[str, Any] | None:
    """Run OWNER_SCRIPT in the application's interpreter; None when it cannot answer (never a guess)."""
    todo = sorted(set(paths))
    if not todo:
        return {}
    try:
        proc = subprocess.run([python, "-c", OWNER_SCRIPT], input=json.dumps(todo), capture_output=True, text=True,
                              cwd=cwd, env=env, timeout=timeout_s, check=False)
        if proc.returncode != 0:
            return None
        answer = json.loads(proc.stdout or "{}")
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return answer if isinstance(answer, dict) else None


def _inside(path: str, root: str | None) -> bool:
    if not root:
        return False
    try:
        real, top = os.path.realpath(path), os.path.realpath(root)
        return os.path.commonpath([real, top]) == top
    except ValueError:
        return False


def owners_from_answer(answer: dict[str, Any], project_root: str | None = None) -> dict[str, FileOwner]:
    """A file no distribution claims is the project's; so is an editable install's file inside the project."""
    out: dict[str, FileOwner] = {}
    for path, hit in answer.items():
        if hit is None or (hit.get("editable") and _inside(path, project_root)):
            out[path] = FileOwner(
                owner="project",
                distribution=(str(hit.get("distribution") or "") or None) if hit else None,
                editable=bool(hit and hit.get("editable")),
            )
        else:
            out[path] = FileOwner(
                owner="dependency",
                distribution=str(hit.get("distribution") or "") or None,
                version=str(hit.get("version") or "") or None,
                editable=bool(hit.get("editable")),
            )
    return out


def owner_of(file: str, owners: dict[str, FileOwner], root: str | None) -> FileOwner | None:
    """The owner of a location's file (relative to the scanned root, or absolute), as resolved at measure time.

    Pure (no file system): a relative path lies inside the scanned project, so without a recorded owner it is the
    project's; an absolute path nobody recorded stays unknown."""
    path = file if os.path.isabs(file) or not root else os.path.join(root, file)
    hit = owners.get(path) or owners.get(os.path.normpath(path))
    if hit is None:
        want = os.path.normpath(path)
        hit = next((o for p, o in owners.items() if os.path.normpath(p) == want), None)
    if hit is None and not os.path.isabs(file):
        return FileOwner(owner="project")
    return hit
