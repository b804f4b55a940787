"""Settings rebuilds for the warp-compile hook: what a setting would change, measured in the run that needs it.

Copied next to the injected `sitecustomize` and loaded by it only when WARP_COMPILE_REBUILD is set (`diagnose` asks
for it in its first cold run). Standard library only, Python >= 3.9 grammar, no warp-compile imports. At interpreter
exit, after the app's own exit handlers, it rebuilds the CPU modules this process compiled (their final identity,
as the app left them) into a private directory (kernel cache and precompiled-header directory pointed there, so
nothing reaches the app's caches), each build timed on the building thread's CPU clock and on the wall clock:

* backward: each module with adjoint code, as it is and with enable_backward False, twice each (A B B A, then
  B A A B for the next module, ...) on one warm precompiled header, each side priced by the lesser of its two
  builds: the price of CS-10's fix, per module;
* header: with few modules, each module with the precompiled header off and on, after one build that makes a fresh
  header (timed on its own): the two sides of CS-12's trade.

A build that made a header it found missing is repeated, so every timed pair meets the same header. A CPU-time limit
(WARP_COMPILE_REBUILD's limit_s) bounds the work: a step whose predicted cost would pass it is skipped and listed.
The result is one `rebuild` event; the whole pass is also inside the hook's exit-work clock, which the parent takes
out of the run's wall and CPU time.
"""

import atexit
import json
import os
import shutil
import tempfile
import time

ENV = "WARP_COMPILE_REBUILD"
# the header step runs for at most this many modules when the run had the header on (from about the second module
# the header pays, so turning it off is not in question), and for any number when the run had it off
MAX_HEADER_MODULES = 2
# builds of each side per module in the backward step, when the limit allows (else one)
BACKWARD_SAMPLES = 2
HEADER_GUESS_MS = 1600.0  # a header build's CPU time for the budget when the run measured none (1.19, 2-core VM)

_mode = {}  # the build_cpu substitutions of the step running now: {"pch_dir": str | None, "use_pch": bool}
# takes_header: whether this Warp's build_cpu takes a header switch and directory; kept: a private directory holding
# links to the headers the app's builds made (Warp deletes its own header directories before exit handlers run)
_state = {"takes_header": False, "kept": None}


def _config():
    try:
        value = json.loads(os.environ.get(ENV) or "{}")
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def install(warp_mod, ctx, bld, emit, hook_error, targets, rebind):
    """Register the rebuilds to run at exit (after the app's own handlers); called by the hook's install."""
    cfg = _config()
    if cfg is None:
        targets["rebuild"] = "invalid"
        return
    fn = getattr(bld, "build_cpu", None)
    if fn is None:
        targets["rebuild"] = "missing:build_cpu"
        return
    new = _build_cpu_wrapper(fn)
    bld.build_cpu = new
    rebind(fn, new)
    _state["takes_header"] = new.takes_header and _version(warp_mod) >= (1, 13)  # the CPU header is from 1.13
    targets["rebuild"] = "at exit, limit %ss" % cfg.get("limit_s")
    atexit.register(_at_exit, warp_mod, ctx, emit, hook_error, cfg)


def _version(warp_mod):
    try:
        return tuple(int(x) for x in str(getattr(warp_mod, "__version__", "0.0")).split(".")[:2])
    except ValueError:
        return (0, 0)


def _accepts(fn, name):
    for _ in range(8):  # the hook's own wrappers take *args: read the wrapped function
        inner = getattr(fn, "__wrapped__", None)
        if inner is None:
            break
        fn = inner
    code = getattr(fn, "__code__", None)
    return code is not None and name in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]


def _build_cpu_wrapper(fn):
    """build_cpu as Warp calls it, except while a rebuild step runs: then its header directory and switch."""
    takes_header = _accepts(fn, "use_precompiled_headers") and _accepts(fn, "pch_dir")

    def build_cpu(*args, **kwargs):
        if _mode and takes_header:
            kwargs = dict(kwargs)
            kwargs["use_precompiled_headers"] = bool(_mode.get("use_pch"))
            kwargs["pch_dir"] = _mode.get("pch_dir") if _mode.get("use_pch") else None
            return fn(*args, **kwargs)
        result = fn(*args, **kwargs)
        if takes_header and kwargs.get("pch_dir"):
            _keep_headers(kwargs["pch_dir"])
        return result

    build_cpu.__warp_compile_hook__ = True
    build_cpu.__wrapped__ = fn
    build_cpu.__name__ = getattr(fn, "__name__", "build_cpu")
    build_cpu.__doc__ = getattr(fn, "__doc__", None)
    build_cpu.takes_header = takes_header
    return build_cpu


def _keep_headers(pch_dir):
    """Link each header the app's build made into a private directory, so the rebuilds at exit can start from it."""
    try:
        kept = _state["kept"]
        if kept is None:
            base = os.environ.get("TMPDIR") or tempfile.gettempdir()
            kept = _state["kept"] = tempfile.mkdtemp(prefix="warp-compile-pch-", dir=base)
        for name in _headers(pch_dir) - _headers(kept):
            src, dst = os.path.join(pch_dir, name), os.path.join(kept, name)
            try:
                os.link(src, dst)
            except OSError:
                shutil.copyfile(src, dst)
    except Exception:
        pass


def _seed_headers(pch_dir):
    """Start a step's header directory with the app's own headers (links; nothing is rebuilt for them)."""
    kept = _state["kept"]
    for name in _headers(kept) if kept else ():
        try:
            os.link(os.path.join(kept, name), os.path.join(pch_dir, name))
        except OSError:
            pass


# ---------------------------------------------------------------------------------------------- what was built


def _compiled_here(path):
    """This process's compiled CPU builds, from the hook's own events file: the last one per (module, block_dim)."""
    out, headers = {}, 0
    me = os.getpid()
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if not isinstance(e, dict) or e.get("pid") != me:
                continue
            if e.get("kind") == "pch":
                headers += 1
            if e.get("kind") != "load" or e.get("status") != "compiled":
                continue
            if not str(e.get("device", "")).startswith("cpu"):
                continue
            out[(str(e.get("module", "")), e.get("block_dim"))] = e
    return list(out.values()), headers


def _method(obj, name):
    """obj.name when its class has it (Warp 1.11's Module.__getattr__ recurses on a missing name)."""
    if getattr(type(obj), name, None) is None:
        return None
    return getattr(obj, name)


def _hex(h):
    return h.hex() if isinstance(h, (bytes, bytearray)) else str(h or "")


def _current_hash(module, block_dim):
    try:
        return _hex(module.get_module_hash(block_dim))
    except TypeError:
        return _hex(module.get_module_hash())


def _backward_on(module, cfg):
    value = module.options.get("enable_backward")
    return bool(getattr(cfg, "enable_backward", True) if value is None else value)


def _entries(ctx, cfg, builds):
    """(entry, None) for each build whose module is still as it was built, else (None, why it is skipped)."""
    modules = dict(getattr(ctx, "user_modules", {}) or {})
    out = []
    for e in builds:
        name, bd = str(e.get("module", "")), e.get("block_dim")
        module = modules.get(name)
        why = None
        if module is None:
            why = "the module is gone by exit"
        else:
            try:
                if not _current_hash(module, bd).startswith(str(e.get("hash", ""))[:16] or "?"):
                    why = "the module changed after its last build"
            except Exception as exc:
                why = "its hash cannot be read (%s)" % type(exc).__name__
        opts = e.get("options") or {}
        entry = {
            "module": name,
            "block_dim": bd,
            "hash": str(e.get("hash", ""))[:16],
            "run_cpu_ms": e.get("cpu_ms"),
            "run_ms": e.get("ms"),
            "backward": bool(e.get("backward_source_bytes")) and module is not None and _backward_on(module, cfg),
            "use_pch": str(opts.get("use_precompiled_headers", "True")) != "False",
            "obj": module,
        }
        out.append((entry, why))
    return out


# ---------------------------------------------------------------------------------------------- building


def _cpu_device(warp_mod, ctx):
    runtime = getattr(ctx, "runtime", None)
    dev = getattr(runtime, "cpu_device", None)
    return dev if dev is not None else warp_mod.get_device("cpu")


def _compile(module, block_dim, cfg, device, out_dir, overrides):
    """Build one (module, block_dim) for the CPU into out_dir, with `overrides` changing its options (this build
    only; the module is left as it was)."""
    comp = _method(module, "_compile")
    resolve = _method(module, "resolve_options")
    if comp is not None and _accepts(comp, "options") and resolve is not None and _accepts(resolve, "block_dim"):
        options = resolve(cfg, block_dim=block_dim)  # >= 1.15: a variant is its resolved options
        comp(device, out_dir, options=dict(options, **overrides))
        return
    comp = comp or _method(module, "compile")  # <= 1.14: whatever module.options holds when it is built
    changes = dict(overrides)
    if block_dim is not None:
        changes["block_dim"] = block_dim
    old = {k: module.options.get(k) for k in changes}
    module.options.update(changes)
    module.mark_modified()
    try:
        comp(device, out_dir)
    finally:
        module.options.update(old)
        module.mark_modified()


def _headers(pch_dir):
    try:
        return {n for n in os.listdir(pch_dir) if n.endswith(".pch")}
    except OSError:
        return set()


class _Pass:
    """The rebuilds of one exit: a private root, a CPU-time budget, and what was built and skipped."""

    def __init__(self, warp_mod, ctx, cfg, limit_s, deadline=None):
        self.cfg, self.limit_ms = cfg, float(limit_s) * 1000.0
        self.deadline = deadline  # time.time() the run's timeout comes near: nothing starts that would pass it
        self.device = _cpu_device(warp_mod, ctx)
        base = os.environ.get("TMPDIR") or tempfile.gettempdir()
        self.root = tempfile.mkdtemp(prefix="warp-compile-rebuild-", dir=base)
        self.spent_ms = 0.0
        self.builds = 0
        self.skipped = []

    def afford(self, predicted_ms):
        return self.spent_ms + predicted_ms <= self.limit_ms and self.in_time(predicted_ms)

    def in_time(self, predicted_ms):
        """A step whose CPU time, twice over (a busy machine gives it half a core), ends before the deadline."""
        return self.deadline is None or time.time() + 2.0 * predicted_ms / 1000.0 <= self.deadline

    def why_not(self, predicted_ms):
        return "over the rebuild limit" if self.in_time(predicted_ms) else "too close to the run's timeout"

    def build(self, entry, tag, overrides, use_pch, pch_dir):
        """One timed build: (thread CPU ms, wall ms, whether it made a header)."""
        out_dir = os.path.join(self.root, "out", "%d-%s" % (self.builds, tag))
        self.builds += 1
        before = _headers(pch_dir) if use_pch and pch_dir else set()
        _mode.clear()
        _mode.update({"pch_dir": pch_dir, "use_pch": use_pch})
        cpu0, t0 = time.thread_time(), time.perf_counter()
        try:
            _compile(entry["obj"], entry["block_dim"], self.cfg, self.device, out_dir, overrides)
        finally:
            wall = (time.perf_counter() - t0) * 1000.0
            cpu = (time.thread_time() - cpu0) * 1000.0
            _mode.clear()
            self.spent_ms += cpu
            shutil.rmtree(out_dir, ignore_errors=True)
        made = bool(use_pch and pch_dir and _headers(pch_dir) - before)
        return round(cpu, 3), round(wall, 3), made

    def steady(self, entry, tag, overrides, use_pch, pch_dir):
        """A build on a header that already exists: built again at once if this one had to make it."""
        cpu, wall, made = self.build(entry, tag, overrides, use_pch, pch_dir)
        header = None
        if made:
            again = self.build(entry, tag + "-again", overrides, use_pch, pch_dir)
            header = {"cpu_ms": round(cpu - again[0], 3), "ms": round(wall - again[1], 3)}
            cpu, wall = again[0], again[1]
        return cpu, wall, header


def _predicted(entry):
    return float(entry.get("run_cpu_ms") or entry.get("run_ms") or 0.0)


def _skip(p, kind, entry, predicted, why):
    p.skipped.append({"step": kind, "module": entry["module"], "block_dim": entry["block_dim"],
                      "predicted_ms": round(predicted, 1), "why": why})


def _backward_pass(p, entries):
    """Each module with adjoint code, as it is (A) and forward-only (B), on one warm header: A B B A (or B A A B,
    alternating from module to module), each side priced by the lesser of its two builds. Other work on the machine
    only ever adds CPU time to a build (shared cores and caches), so the lesser is the nearer to what a quiet machine
    pays; where the limit leaves room for only one build a side, one (A B or B A)."""
    pch = os.path.join(p.root, "pch-backward")
    os.makedirs(pch, exist_ok=True)
    _seed_headers(pch)
    out, headers = [], []
    todo = sorted((e for e in entries if e["backward"]), key=lambda e: -_predicted(e))
    for i, e in enumerate(todo):
        cost = 2.0 * _predicted(e)
        if not p.afford(cost):
            _skip(p, "backward", e, cost, p.why_not(cost))
            continue
        rounds = BACKWARD_SAMPLES if p.afford(BACKWARD_SAMPLES * cost) else 1
        first = ("as_is", "forward") if i % 2 == 0 else ("forward", "as_is")
        got = {"as_is": [], "forward": []}
        for r in range(rounds):
            for variant in (first if r % 2 == 0 else first[::-1]):
                over = {"enable_backward": False} if variant == "forward" else {}
                cpu, wall, header = p.steady(e, variant, over, e["use_pch"], pch)
                got[variant].append((cpu, wall))
                if header is not None:
                    headers.append(header)
        least = {k: {"cpu_ms": min(c for c, _w in v), "ms": min(w for _c, w in v)} for k, v in got.items()}
        out.append({"module": e["module"], "block_dim": e["block_dim"], "hash": e["hash"], "as_is": least["as_is"],
                    "changed": least["forward"], "order": "AB" if i % 2 == 0 else "BA", "samples": rounds})
    return {"setting": {"enable_backward": False}, "entries": out, "headers": headers}


def _header_pass(p, entries, run_headers):
    """Few modules: each with the header off and on, after one build that makes a fresh header (timed alone)."""
    todo = list(entries)
    if not todo or (all(e["use_pch"] for e in todo) and len(todo) > MAX_HEADER_MODULES):
        return None
    header_guess = HEADER_GUESS_MS
    cost = header_guess + sum(2.0 * _predicted(e) + header_guess * 0.6 for e in todo)
    if not p.afford(cost):
        for e in todo:
            _skip(p, "header", e, cost / len(todo), p.why_not(cost))
        return None
    pch = os.path.join(p.root, "pch-header")
    os.makedirs(pch, exist_ok=True)
    headers = []
    # the first build makes the header; its time less the same build on that header is the header's cost
    first = p.build(todo[0], "on-first", {}, True, pch)
    out = []
    for e in todo:
        off = p.build(e, "off", {}, False, None)
        cpu, wall, header = p.steady(e, "on", {}, True, pch)
        if e is todo[0] and first[2]:
            headers.append({"cpu_ms": round(first[0] - cpu, 3), "ms": round(first[1] - wall, 3)})
        if header is not None:
            headers.append(header)
        out.append({"module": e["module"], "block_dim": e["block_dim"], "hash": e["hash"],
                    "as_is": {"cpu_ms": cpu, "ms": wall} if e["use_pch"] else {"cpu_ms": off[0], "ms": off[1]},
                    "changed": {"cpu_ms": off[0], "ms": off[1]} if e["use_pch"] else {"cpu_ms": cpu, "ms": wall},
                    "run_header": e["use_pch"]})
    return {"setting": {"use_precompiled_headers": "toggled"}, "entries": out, "headers": headers,
            "run_headers": run_headers}


def rebuild(warp_mod, ctx, cfg_req):
    """Both passes, as far as the limit allows; every change to Warp's config is restored."""
    cfg = getattr(warp_mod, "config", None)
    builds, run_headers = _compiled_here(os.environ.get("WARP_COMPILE_EVENTS", ""))
    p = _Pass(warp_mod, ctx, cfg, cfg_req.get("limit_s", 60), cfg_req.get("deadline"))
    saved_cache = getattr(cfg, "kernel_cache_dir", None)
    result = {"limit_s": cfg_req.get("limit_s"), "steps": {}, "skipped": p.skipped, "errors": []}
    try:
        cfg.kernel_cache_dir = os.path.join(p.root, "cache")
        os.makedirs(cfg.kernel_cache_dir, exist_ok=True)
        entries = []
        for e, why in _entries(ctx, cfg, builds):
            if why is None:
                entries.append(e)
            else:
                _skip(p, "any", e, _predicted(e), why)
        wanted = cfg_req.get("passes") or ["backward", "header"]
        for kind in wanted:
            try:
                if kind == "backward":
                    result["steps"]["backward"] = _backward_pass(p, entries)
                elif kind == "header" and _state["takes_header"]:
                    got = _header_pass(p, entries, run_headers)
                    if got is not None:
                        result["steps"]["header"] = got
            except Exception as exc:
                result["errors"].append(("%s: %s: %s" % (kind, type(exc).__name__, exc))[:500])
    finally:
        _mode.clear()
        try:
            cfg.kernel_cache_dir = saved_cache
        except Exception:
            pass
        shutil.rmtree(p.root, ignore_errors=True)
        if _state["kept"]:
            shutil.rmtree(_state["kept"], ignore_errors=True)
    result["cpu_ms"] = round(p.spent_ms, 3)
    result["builds"] = p.builds
    return result


def _at_exit(warp_mod, ctx, emit, hook_error, cfg_req):
    t0 = time.perf_counter()
    try:
        result = rebuild(warp_mod, ctx, cfg_req)
    except Exception as exc:
        hook_error("rebuild", exc)
        result = {"errors": [("%s: %s" % (type(exc).__name__, exc))[:500]], "steps": {}, "skipped": []}
    result["ms"] = round((time.perf_counter() - t0) * 1000.0, 3)
    try:
        emit("rebuild", result)
    except Exception as exc:
        hook_error("rebuild.emit", exc)
