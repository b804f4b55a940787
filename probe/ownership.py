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
import threading
from collections.abc import Iterable
from typing import Any

from .models import FileOwner

# Runs in the application's interpreter (Python >= 3.9, stdlib only): paths on stdin (JSON); on stdout the owners
# and the interpreter's sys.path (whose directories' mtimes tell a session cache when an install changed them).
# It does only the work the paths need: no distribution is read for stdlib paths, RECORD and top_level.txt only until
# every site-packages path's top-level name is claimed, direct_url.json only when a path lies outside site-packages
# and the stdlib, and a distribution's name and version from its metadata header only when it owns a path.
OWNER_SCRIPT = r"""
import json, os, sys, site, sysconfig

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
try:
    conf = sysconfig.get_paths()
except Exception:
    conf = {}
sites.update(conf.get(k) for k in ("purelib", "platlib"))
sites = sorted({real(s) for s in sites if s}, key=len, reverse=True)
stdlib = set(real(conf[k]) for k in ("stdlib", "platstdlib") if conf.get(k))
kind = {}  # path -> ("site", keys) | ("stdlib",) | ("other",)
for p in paths:
    rp = real(p)
    for s in sites:
        if rp.startswith(s + os.sep):
            first = rp[len(s) + 1:].split(os.sep)[0]
            kind[p] = ("site", (first, first[:-3] if first.endswith(".py") else first, first.split(".")[0]))
            break
    else:
        kind[p] = ("stdlib",) if any(rp.startswith(d + os.sep) for d in stdlib) else ("other", rp)
wanted = set(k for v in kind.values() if v[0] == "site" for k in v[1])
undecided = set(v[1][0] for v in kind.values() if v[0] == "site")  # a path is decided once its first key is claimed
need_editable = any(v[0] == "other" for v in kind.values())
top = {}
editable = []


def header(dist):
    text = None
    for name in ("METADATA", "PKG-INFO"):
        try:
            text = dist.read_text(name)
        except Exception:
            text = None
        if text is not None:
            break
    found = {}
    for line in (text or "").splitlines():
        if not line.strip():
            break
        key, sep, value = line.partition(":")
        if sep and key in ("Name", "Version") and key not in found:
            found[key] = value.strip()
    if "Name" not in found:
        try:
            return dist.metadata["Name"], dist.version
        except Exception:
            return None, None
    return found["Name"], found.get("Version", "")


def heads(dist):
    names = set()
    try:
        text = dist.read_text("top_level.txt")
    except Exception:
        text = None
    names.update(t.strip() for t in (text or "").splitlines() if t.strip())
    try:
        record = dist.read_text("RECORD")
    except Exception:
        record = None
    if record is not None:
        if '"' in record:
            import csv

            files = [row[0] for row in csv.reader(record.splitlines()) if row]
        else:
            files = [ln.split(",")[0] for ln in record.splitlines() if ln.strip()]
    else:
        try:
            files = [str(f) for f in (dist.files or [])]
        except Exception:
            files = []
    for f in files:
        head = f.replace("\\", "/").split("/")[0]
        if head.endswith((".dist-info", ".egg-info", ".pth")) or head in ("..", "__pycache__", ""):
            continue
        names.add(head)
    return names


class DirDist:  # a .dist-info/.egg-info directory read directly: what importlib.metadata reads, without its import

    def __init__(self, path):
        self.path = path

    def read_text(self, name):
        try:
            with open(os.path.join(self.path, name), encoding="utf-8") as f:
                return f.read()
        except (OSError, ValueError):
            return None

    def _full(self):
        from importlib import metadata

        return metadata.PathDistribution(__import__("pathlib").Path(self.path))

    files = property(lambda self: self._full().files)
    metadata = property(lambda self: self._full().metadata)
    version = property(lambda self: self._full().version)


def distributions():
    # importlib.metadata's distributions; for the editable check alone (where their order does not matter) a direct
    # scan of sys.path's directories, unless an entry is an archive or a finder of its own lists distributions
    import importlib.machinery

    plain = not undecided and not any(os.path.isfile(e) for e in sys.path if e) and all(
        f is importlib.machinery.PathFinder or getattr(f, "find_distributions", None) is None for f in sys.meta_path)
    if not plain:
        from importlib import metadata

        yield from metadata.distributions()
        return
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for n in names:
            if n.lower().endswith((".dist-info", ".egg-info")):
                yield DirDist(os.path.join(entry or ".", n))


if undecided or need_editable:
    for dist in distributions():
        if not undecided and not need_editable:
            break
        info = None
        mine = heads(dist) & (wanted - set(top)) if undecided else set()
        url = None
        if need_editable:
            try:
                direct = dist.read_text("direct_url.json")
                d = json.loads(direct) if direct else {}
                if (d.get("dir_info") or {}).get("editable") and str(d.get("url", "")).startswith("file:"):
                    url = d["url"]
            except Exception:
                url = None
        if not mine and url is None:
            continue
        name, version = header(dist)
        if not name:
            continue
        info = (name, version)
        for n in mine:
            top.setdefault(n, info)
        undecided -= mine
        if url is not None:
            from urllib.parse import unquote, urlparse

            editable.append((real(unquote(urlparse(url).path)), info))
out = {}
for p in paths:
    k = kind[p]
    hit = None
    if k[0] == "site":
        hit = next((top[key] for key in k[1] if key in top), ("", ""))  # no metadata claims it: ("", "")
    elif k[0] == "stdlib":
        hit = ("python", sys.version.split()[0])
    else:
        for root, info in sorted(editable, key=lambda e: len(e[0]), reverse=True):
            if k[1] == root or k[1].startswith(root + os.sep):
                hit = info + ("editable",)
                break
    out[p] = None if hit is None else {"distribution": hit[0], "version": hit[1], "editable": len(hit) > 2}
json.dump({"owners": out, "path": sys.path}, sys.stdout)
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


_ENV_KEYS = ("PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONNOUSERSITE", "PYTHONSAFEPATH", "VIRTUAL_ENV")
_cache_lock = threading.Lock()
_cache: dict[tuple[str, ...], tuple[tuple[tuple[str, int], ...], dict[str, Any]]] = {}  # key -> (stamp, answers)


def _key(python: str, cwd: str, env: dict[str, str] | None) -> tuple[str, ...]:
    e = os.environ if env is None else env
    return (python, cwd, *(e.get(k, "") for k in _ENV_KEYS))


def _stamp(dirs: Iterable[str], cwd: str) -> tuple[tuple[str, int], ...]:
    """Modification times of the interpreter's sys.path directories: an install or uninstall changes one."""
    out = []
    for d in dirs:
        path = os.path.join(cwd, d)
        try:
            out.append((path, os.stat(path).st_mtime_ns))
        except OSError:
            out.append((path, -1))
    return tuple(out)


class OwnerQuery:
    """One run of OWNER_SCRIPT in the app's interpreter, started at once, answered by `result()`.

    `measure` starts one after the first cold run (the app's interpreter and files are known then), so the query
    runs while the warm run does (at a low CPU priority, on the idle core) instead of after the last sample.
    `close()` stops it if nobody collected it (cancel, error): no child process is left behind.
    """

    def __init__(self, python: str, paths: Iterable[str], cwd: str, env: dict[str, str] | None = None,
                 timeout_s: float = 60.0, background: bool = False) -> None:
        self.python, self.cwd, self.env, self.timeout_s = python, cwd, env, timeout_s
        self.paths = sorted(set(paths))
        self.key = _key(python, cwd, env)
        self._proc: subprocess.Popen[str] | None = None
        self._answer: tuple[dict[str, Any], list[str]] | None = None
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(background,), daemon=True)
        self._thread.start()

    def _run(self, background: bool) -> None:
        try:
            self._proc = proc = subprocess.Popen(
                [self.python, "-c", OWNER_SCRIPT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True, cwd=self.cwd, env=self.env,
            )
        except (OSError, ValueError, subprocess.SubprocessError):
            return
        if self._closed.is_set():  # closed while it was starting
            proc.kill()
        elif background and hasattr(os, "setpriority"):
            try:
                os.setpriority(os.PRIO_PROCESS, proc.pid, 10)  # a tenth of a core when busy: done well in time
            except OSError:
                pass
        try:
            out, _err = proc.communicate(json.dumps(self.paths), timeout=self.timeout_s)
            data = json.loads(out or "{}") if proc.returncode == 0 else None
        except (OSError, ValueError, subprocess.SubprocessError):
            proc.kill()
            proc.wait()
            return
        if isinstance(data, dict) and isinstance(data.get("owners"), dict):
            self._answer = data["owners"], [str(p) for p in data.get("path") or []]

    def result(self) -> tuple[dict[str, Any], list[str]] | None:
        """(owners by path, the interpreter's sys.path), or None when the interpreter could not answer."""
        self._thread.join()
        return self._answer

    def close(self) -> None:
        self._closed.set()
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()
        self._thread.join(timeout=5)


def ask_interpreter(
    python: str, paths: Iterable[str], cwd: str, env: dict[str, str] | None = None, timeout_s: float = 60.0,
    pending: OwnerQuery | None = None,
) -> dict[str, Any] | None:
    """Owners of `paths` from OWNER_SCRIPT in the application's interpreter; None when it cannot answer (never a
    guess). Answers are kept for the session per interpreter, directory and environment, until a directory on that
    interpreter's sys.path changes; `pending` (a query started earlier for the same interpreter) is collected
    first, so only paths nobody asked about yet start a new run."""
    todo = sorted(set(paths))
    key = _key(python, cwd, env)
    if pending is not None and pending.key == key:
        got = pending.result()
        if got is not None:
            _remember(key, cwd, *got)
    with _cache_lock:
        stamp, known = _cache.get(key, ((), {}))
    if known and _stamp((d for d, _ in stamp), cwd) != stamp:
        known = {}
    missing = [p for p in todo if p not in known]
    if missing:
        got = OwnerQuery(python, missing, cwd, env, timeout_s).result()
        if got is None:
            return None
        known = _remember(key, cwd, *got)
    return {p: known[p] for p in todo}


def _remember(key: tuple[str, ...], cwd: str, owners: dict[str, Any], sys_path: list[str]) -> dict[str, Any]:
    stamp = _stamp(sys_path, cwd)
    with _cache_lock:
        old_stamp, known = _cache.get(key, ((), {}))
        known = dict(known) if old_stamp == stamp else {}
        known.update(owners)
        _cache[key] = (stamp, known)
    return known


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
