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


def config_snapshot(cfg):
    """wp.config's plain values (numbers, strings, short lists) as text: what the app ran with."""
    out = {}
    for name in dir(cfg) if cfg is not None else ():
        if name.startswith("_"):
            continue
        try:
            v = getattr(cfg, name)
        except Exception:
            continue
        if isinstance(v, (bool, int, float, str, type(None))) or (isinstance(v, (list, tuple)) and len(v) < 20):
            out[name] = str(v)
    return out


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


_REVERSE_OFF = "reverse mode disabled"  # the stub body Warp emits for a wp.func adjoint with backward off
_STUB_BYTES = 96  # what stays of such an adjoint with backward off: its braces and that stub line


def backward_bytes(src):
    """Bytes of generated code that `enable_backward=False` removes from this source.

    Counted against what Warp generates with backward off (verified on whole modules): a kernel's backward
    function, its backward task loop, dispatch and entry point (top-level names holding `_backward`) go entirely;
    a wp.func's `adj_*` function stays, signature included, with its body replaced by a one-line stub, so only its
    body counts. A body that is already that stub (no backward kernel calls the function), or a struct's empty
    adjoint helper, removes nothing.
    """
    total = 0
    mode = None  # "all": a backward function, counted whole; "adj": a wp.func adjoint, counted by its body
    body = []

    def adjoint_body(lines):
        text = "".join(lines)
        if _REVERSE_OFF in text:
            return 0
        i = text.find("\n{")
        j = text.rfind("}")
        if i < 0 or j <= i:
            return 0
        return max(0, len(text[i + 3 : j].encode("utf-8", "replace")) - _STUB_BYTES)

    for line in src.splitlines(True):
        top = line[:1].isalpha()
        if (top and "(" in line) or (top or line.startswith("//")):
            if mode == "adj":
                total += adjoint_body(body)
            body = []
            mode = None
            if top and "(" in line:
                head = line.split("(", 1)[0].split()
                name = head[-1] if head else ""
                mode = "all" if "_backward" in name else "adj" if name.startswith("adj_") else None
        if mode == "all":
            total += len(line.encode("utf-8", "replace"))
        elif mode == "adj":
            body.append(line)
    if mode == "adj":
        total += adjoint_body(body)
    return total
