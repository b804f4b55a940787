"""warp-compile hook companion: experiments, and what the measured process reached.

Copied by the sandbox next to the injected `sitecustomize` (probe/hook.py) and loaded by path; like the hook it
runs in the user's interpreter (Python >= 3.9): standard library only, no warp-compile imports, errors swallowed.
It applies the settings a `warp-compile try` experiment asked for at `import warp` and reports whether the app
kept them, records where a `wp.Tape` was first created per call site, and at exit which of the app's files the
process imported and which file it ran as `__main__` (the entry point a process-wide fix belongs in).
"""

import json
import os
import sys


def read_experiment():
    """Settings an experiment asked for (WARP_COMPILE_SET, JSON); empty in an ordinary measurement."""
    raw = os.environ.get("WARP_COMPILE_SET")
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except Exception:
        return {}
    return value if isinstance(value, dict) else {}


def apply_experiment(cfg, experiment):
    """Set the experiment's wp.config values right after `import warp`, before the app creates a module."""
    applied = {}
    for key, value in experiment.items():
        if key == "keep_kernel_cache":
            applied[key] = "hook"  # the hook's cache-clear wrappers skip the call
        elif cfg is not None and hasattr(cfg, key):
            try:
                setattr(cfg, key, value)
                applied[key] = "applied"
            except Exception as exc:
                applied[key] = "error: " + str(exc)[:120]
        else:
            applied[key] = "unsupported"
    return applied


def tape_wrapper(orig, user_site, emit, hook_error):
    """wp.Tape.__init__ that reports the first tape created at each call site: this process differentiates."""
    seen = set()

    def __init__(self, *args, **kwargs):
        try:
            site, _api = user_site(sys._getframe(1))
            key = (site or {}).get("file"), (site or {}).get("line")
            if key not in seen:
                seen.add(key)
                emit("tape", {"site": site})
        except Exception as exc:
            hook_error("tape", exc)
        return orig(self, *args, **kwargs)

    return __init__


def imported_files(is_user_file, limit=5000):
    """Source files of the modules this process imported outside installed packages (not the stdlib's, not
    Warp's), and installed packages only by name ("site:numpy"): short even where thousands of files load."""
    files, packages = set(), set()
    for mod in list(sys.modules.values()):
        f = getattr(mod, "__file__", None)
        if not f or not is_user_file(f):
            continue
        parts = f.replace("\\", "/").split("/")
        marker = next((m for m in ("site-packages", "dist-packages") if m in parts), None)
        if marker is not None:
            i = parts.index(marker)
            if i + 1 < len(parts):
                top = parts[i + 1]
                packages.add("site:" + (top[:-3] if top.endswith(".py") else top))
        elif f.endswith(".py"):
            files.add(f)
        if len(files) >= limit:
            break
    return sorted(files) + sorted(packages)


def main_module():
    """The entry point this process ran: `__main__`'s file and, under `python -m`, its module name."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    return {"file": getattr(main, "__file__", None), "module": getattr(spec, "name", None)}


def experiment_final(cfg, experiment):
    """Experiment settings the app assigned again after import (its value wins, and the result must say so)."""
    out = {}
    for key, value in experiment.items():
        if key != "keep_kernel_cache" and cfg is not None and hasattr(cfg, key) and getattr(cfg, key) != value:
            out[key] = "overridden"
    return out


def at_exit(cfg, experiment, is_user_file):
    """The fields this companion adds to the hook's exit event; never raises."""
    out = {}
    for key, fn in (
        ("imported_files", lambda: imported_files(is_user_file)),
        ("main", main_module),
        ("experiment_final", lambda: experiment_final(cfg, experiment)),
    ):
        try:
            out[key] = fn()
        except Exception:
            pass
    return out


def backward_bytes(src):
    """Bytes of generated adjoint code: top-level functions named *_backward* or adj_* (kernels and wp.func)."""
    total = 0
    in_backward = False
    for line in src.splitlines(True):
        if line[:1].isalpha() and "(" in line:
            head = line.split("(", 1)[0]
            name = head.split()[-1] if head.split() else ""
            in_backward = "_backward" in name or name.startswith("adj_")
        if in_backward:
            total += len(line)
    return total
