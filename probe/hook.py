"""warp-compile build hook, injected into the measured process as `sitecustomize`.

It runs inside the user's interpreter (Python >= 3.9, any warp-lang >= 1.10): standard library only, no imports from
warp-compile. It does nothing unless WARP_COMPILE_EVENTS names an output file. When `warp` is imported it wraps Warp's
module-load path and writes one JSON line per event (module builds, PCH builds, launches, cache calls, kernels made).
Every wrapper passes arguments and results through untouched and swallows its own errors (`hook_error` events), so
the app computes exactly what it would without the hook. Functions that inspect their caller's frame (launch,
load_module, set_module_options, decorators) are never wrapped; launches are seen from `ModuleExec.get_kernel_hooks`.
"""

import atexit
import itertools
import json
import os
import sys
import threading
import time

HOOK_VERSION = "2"  # 2: launch records aggregated per signature with counts at exit (1: run-length encoded)
_OUT = os.environ.get("WARP_COMPILE_EVENTS")
_MAX_LAUNCH_RECORDS = int(os.environ.get("WARP_COMPILE_MAX_LAUNCHES", "20000"))
_T0 = time.perf_counter()
_HERE = os.path.dirname(os.path.abspath(__file__))
_lock, _fd, _seq = threading.RLock(), None, [0]
_state = {
    "installed": False, "warp_dir": None, "in_clear": 0, "errors_reported": set(), "bulk_origin": None,
    "overflow": itertools.count(1),  # launches of signatures beyond _MAX_LAUNCH_RECORDS
}
_STDLIB_DIRS = ()
_launch_counters = {}  # cheap launch signature -> counter (shared by signatures with the same readable record)
_held = []  # the hooks whose id() is in a signature: kept alive, so a freed one's id never names another kernel
_launch_ids = {}  # readable launch record (JSON) -> its index in _launch_list
_launch_list = []  # one itertools.count per recorded launch record, in first-seen order
_COPIED_AT_CREATION = (
    "enable_backward", "max_unroll", "lineinfo", "compile_time_trace", "deterministic", "deterministic_max_records"
)


def _load_companion(name, module):
    """A stdlib companion file the sandbox copies next to this one (loaded by path: nothing else is imported)."""
    try:
        import importlib.util

        spec = importlib.util.spec_from_file_location(module, os.path.join(_HERE, name))
        mod = sys.modules[module] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    except Exception:
        return None


_reach = _load_companion("hook_reach.py", "_warp_compile_hook_reach") if _OUT else None
_clocks = _load_companion("hook_clocks.py", "_warp_compile_hook_clocks") if _OUT else None
_kernels = _load_companion("hook_kernels.py", "_warp_compile_hook_kernels") if _OUT else None
_cpu = _clocks.thread_cpu if _clocks is not None else (lambda: None)
_kernel_info = _kernels.kernel_info if _kernels is not None else (lambda k, _h: {"key": str(getattr(k, "key", "?"))})
_dtype_name = _kernels.dtype_name if _kernels is not None else (lambda a: type(a).__name__)
_EXPERIMENT = _reach.read_experiment() if _reach is not None else {}


def _mark(wrapper, orig):
    """A wrapper looks like what it wraps (name, doc) and says it is ours, so a second install does nothing."""
    wrapper.__warp_compile_hook__ = True
    wrapper.__wrapped__ = orig
    wrapper.__name__ = getattr(orig, "__name__", wrapper.__name__)
    wrapper.__doc__ = getattr(orig, "__doc__", None)
    return wrapper


def _now_ms():
    return (time.perf_counter() - _T0) * 1000.0


def _emit(kind, payload):
    """Append one JSON line; a single os.write keeps lines whole when threads or child processes share the file."""
    global _fd
    if _OUT is None:
        return
    with _lock:
        _seq[0] += 1
        payload["kind"] = kind
        payload["seq"] = _seq[0]
        payload["pid"] = os.getpid()
        payload["tid"] = threading.get_ident()
        payload["t_ms"] = round(_now_ms(), 3)
        try:
            line = json.dumps(payload, default=str, separators=(",", ":")) + "\n"
            if _fd is None:
                _fd = os.open(_OUT, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            os.write(_fd, line.encode("utf-8", "replace"))
        except Exception:
            pass


def _hook_error(where, exc):
    key = (where, type(exc).__name__)
    if key in _state["errors_reported"]:
        return
    _state["errors_reported"].add(key)
    try:
        _emit("hook_error", {"where": where, "error": "%s: %s" % (type(exc).__name__, exc)})
    except Exception:
        pass


# ---------------------------------------------------------------------------------------------- call sites


def _is_user_file(filename):
    if not filename or filename.startswith("<"):
        return False
    wd = _state["warp_dir"]
    if wd and filename.startswith(wd):
        return False
    if filename.startswith(_HERE):
        return False
    return not any(filename.startswith(d) and not _installed(filename) for d in _STDLIB_DIRS)


def _installed(filename):
    return "site-packages" in filename or "dist-packages" in filename


def _user_site(frame, depth=1):
    """The innermost user frame at or above `frame`, and the outermost Warp function below it (the API used).

    With depth > 1 the site also carries `stack`: up to `depth` user frames, innermost first, so a rule can see
    which caller a shared helper was reached from.
    """
    api = None
    wd = _state["warp_dir"]
    f = frame
    site = None
    stack = []
    while f is not None:
        fn = f.f_code.co_filename
        if _is_user_file(fn):
            entry = {"file": fn, "line": f.f_lineno, "function": f.f_code.co_name}
            if site is None:
                site = dict(entry)
                if depth <= 1:
                    return site, api
            stack.append(entry)
            if len(stack) >= depth:
                break
        elif site is None and wd and fn.startswith(wd):
            api = getattr(f.f_code, "co_qualname", f.f_code.co_name)
        f = f.f_back
    if site is not None and depth > 1:
        site["stack"] = stack
        if f is not None and len(stack) >= depth and all(_installed(e["file"]) for e in stack):
            g = f.f_back  # a deep library call: every kept frame is the library's; the program's own caller beyond
            while g is not None and (_installed(g.f_code.co_filename) or not _is_user_file(g.f_code.co_filename)):
                g = g.f_back
            if g is not None:
                site["outer"] = {"file": g.f_code.co_filename, "line": g.f_lineno, "function": g.f_code.co_name}
    return site, api


def _trigger(depth=2, stack=6):
    try:
        site, api = _user_site(sys._getframe(depth), stack)
    except Exception:
        site, api = None, None
    if site is None:
        origin = _state["bulk_origin"]
        if origin is not None:
            t = dict(origin)
            t["via"] = "force_load"
            return t
        return None
    site["api"] = _api_name(api)
    return site


def _api_name(qualname):
    if not qualname:
        return ""
    parts = qualname.split(".")
    if len(parts) >= 2 and parts[-2] == "Tape":
        return "Tape." + parts[-1]
    if len(parts) >= 2 and parts[-2] == "Launch":
        return "Launch"
    return parts[-1]


# ---------------------------------------------------------------------------------------------- load tracking


class _Load:
    __slots__ = (
        "t0", "mark", "stack", "phases", "ran", "source_bytes", "backward", "backward_bytes", "pch_ms", "pch_files",
        "module", "announced", "spans", "cpu0", "native_cpu",
    )

    def __init__(self, t0=None, module=None):
        self.t0 = self.mark = time.perf_counter() if t0 is None else t0
        self.cpu0, self.native_cpu = _cpu(), 0.0  # this thread's CPU clock: the build runs LLVM on it
        self.module, self.announced, self.stack, self.phases, self.ran = module, False, [], {}, set()
        self.spans = []  # [phase, start, end] of each outermost phase call, for the timeline
        self.source_bytes = self.backward = self.backward_bytes = None
        self.pch_ms, self.pch_files = 0.0, []

    def charge(self, now):
        phase = self.stack[-1] if self.stack else "other"
        self.phases[phase] = self.phases.get(phase, 0.0) + (now - self.mark)
        self.mark = now


_LOAD_CODE = [None]  # code object of the Module.load wrapper
_active_loads = {}  # id(frame of a running Module.load wrapper) -> _Load, created when its first phase runs


def _current_load():
    """The Module.load in progress on this thread, found by walking up to the load wrapper's frame.

    The wrapper itself stores nothing (every launch goes through it); a record exists only once a phase runs
    inside a load, so the fast path of an already loaded module costs one clock read and one dict lookup.
    """
    code = _LOAD_CODE[0]
    f = sys._getframe(2)  # skip this function and the phase wrapper
    while f is not None:
        if f.f_code is code:
            loc = f.f_locals
            t0 = loc.get("t0")
            cur = _active_loads.get(id(f))
            if cur is None or cur.t0 != t0:  # none yet, or left by an earlier load whose frame had this address
                cur = _Load(t0, loc.get("self"))
                _active_loads[id(f)] = cur
            return cur
        f = f.f_back
    return None


def _take_load(frame, t0, module):
    """The record the phases of this load filled (or a bare one), removed from the active set."""
    cur = _active_loads.pop(id(frame), None)
    if cur is None or cur.t0 != t0:
        cur = _Load(t0, module)
    return cur


_ANNOUNCED_PHASES = {"codegen": "compile", "native": "compile", "native_load": "load"}


def _announce(cur, phase):
    """A real build has begun (codegen or native work, not a re-hash): tell the parent now, for live progress."""
    cur.announced = True
    event = {"module": str(getattr(cur.module, "name", "")), "what": _ANNOUNCED_PHASES[phase]}
    _emit("load_start", dict(event, start_ms=round((cur.t0 - _T0) * 1000.0, 3)))


def _phase_wrap(phase, fn):
    def wrapper(*args, **kwargs):
        cur = _current_load()
        if cur is None:
            return fn(*args, **kwargs)
        if not cur.announced and phase in _ANNOUNCED_PHASES:
            try:
                _announce(cur, phase)
            except Exception as exc:
                _hook_error("load_start", exc)
        start = time.perf_counter()
        cur.charge(start)
        outermost = not cur.stack
        cur.stack.append(phase)
        cur.ran.add(phase)
        try:
            result = fn(*args, **kwargs)
            if phase == "codegen" and isinstance(result, str) and getattr(fn, "__name__", "") == "codegen":
                _note_source(cur, result)
            elif phase == "codegen" and isinstance(result, tuple) and result and isinstance(result[0], str):
                _note_source(cur, result[0])
            return result
        finally:
            end = time.perf_counter()
            cur.charge(end)
            cur.stack.pop()
            if outermost:
                _add_span(cur, phase, start, end)

    return _mark(wrapper, fn)


def _add_span(cur, phase, start, end):
    """Consecutive calls of one phase (ModuleBuilder.__init__, codegen, build_meta) make one span."""
    spans = cur.spans
    if spans and spans[-1][0] == phase and start - spans[-1][2] < 0.0005:
        spans[-1][2] = end
    else:
        spans.append([phase, start, end])


def _note_source(cur, src):
    cur.source_bytes = len(src.encode("utf-8", "replace"))
    cur.backward_bytes = _reach.backward_bytes(src) if _reach is not None else 0
    cur.backward = cur.backward_bytes > 0


def _native_wrap(fn):
    """build_cpu / build_cuda: native compile phase; a new file in pch_dir is a PCH this call built."""
    inner = _phase_wrap("native", fn)

    def wrapper(*args, **kwargs):
        cur = _current_load()
        pch_dir = kwargs.get("pch_dir")
        before = None
        if cur is not None and pch_dir:
            try:
                before = set(os.listdir(pch_dir)) if os.path.isdir(pch_dir) else set()
            except Exception:
                before = None
        t0_ns, t0, cpu0 = time.time_ns(), time.perf_counter(), _cpu()
        result = inner(*args, **kwargs)
        cpu = _clocks.since(cpu0) if cur is not None and _clocks is not None else None
        if cpu is not None:
            cur.native_cpu += cpu  # ms
        if cur is not None and before is not None:
            try:
                for name in sorted(set(os.listdir(pch_dir)) - before):
                    path = os.path.join(pch_dir, name)
                    if not name.endswith(".pch") or not os.path.isfile(path):
                        continue
                    ms = max(0.0, (os.stat(path).st_mtime_ns - t0_ns) / 1e6)
                    cur.pch_ms += ms
                    wall = (time.perf_counter() - t0) * 1000.0
                    cur.pch_files.append((name, ms, t0, _clocks.header_share(cpu, wall, ms) if _clocks else None))
            except Exception as exc:
                _hook_error("pch", exc)
        return result

    return _mark(wrapper, fn)


def _exec_block_dim(module, result, block_dim_arg):
    try:
        for key, value in list(module.execs.items()):
            if value is result:
                if isinstance(key, tuple) and len(key) == 2:
                    return key[1]
    except Exception:
        pass
    for attr in ("block_dim", "active_block_dim"):
        v = getattr(result, attr, None)
        if isinstance(v, int):
            return v
    if block_dim_arg is not None:
        return block_dim_arg
    try:
        return module.options.get("block_dim")
    except Exception:
        return None


def _hex(h):
    return "" if h is None else h.hex() if isinstance(h, (bytes, bytearray)) else str(h)


def _own(obj, name):
    """An instance attribute, read from the instance dict: Warp 1.11's Module.__getattr__ recurses on a missing one."""
    return getattr(obj, "__dict__", {}).get(name)


def _snapshot(module, block_dim, cfg):
    snap = {"kernels": [], "functions": {}, "options": {}, "options_source": "", "config_shadow": {}}
    hasher = None
    try:
        hashers = getattr(module, "hashers", None)
        if isinstance(hashers, dict):
            hasher = hashers.get(block_dim)
        if hasher is None:
            hasher = _own(module, "hasher")
    except Exception:
        hasher = None
    try:
        unique = getattr(hasher, "unique_kernels", None)
        kernels = unique.values() if isinstance(unique, dict) else getattr(module, "kernels", {}).values()
        snap["kernels"] = [_kernel_info(k, _hex) for k in list(kernels)]
        fh = getattr(hasher, "function_hashes", None) or {}
        snap["functions"] = {str(getattr(f, "key", f)): _hex(h)[:16] for f, h in list(fh.items())}
    except Exception as exc:
        _hook_error("snapshot.kernels", exc)
    try:
        resolved = _own(module, "resolved_options")
        if isinstance(resolved, dict) and resolved.get(block_dim) is not None:
            opts = resolved.get(block_dim)
            snap["options_source"] = "module.resolved_options"
        else:
            opts = dict(getattr(module, "options", {}))
            for extra in ("verify_fp", "line_directives", "enable_vector_component_overwrites", "mode"):
                if cfg is not None and hasattr(cfg, extra) and opts.get(extra) is None:
                    opts[extra] = getattr(cfg, extra)
            snap["options_source"] = "module.options+config"
        snap["options"] = {str(k): str(v) for k, v in dict(opts).items()}
        mopts = getattr(module, "options", {})
        for name in _COPIED_AT_CREATION:
            if cfg is not None and name in mopts and hasattr(cfg, name) and mopts[name] != getattr(cfg, name):
                snap["config_shadow"][name] = [str(mopts[name]), str(getattr(cfg, name))]
    except Exception as exc:
        _hook_error("snapshot.options", exc)
    return snap


def _source_on_disk(cfg, module_name, hash_hex):
    try:
        root = getattr(cfg, "kernel_cache_dir", None)
        if not root:
            return None
        mid = "wp_%s_%s" % (module_name, hash_hex[:7])
        for ext in (".cpp", ".cu"):
            p = os.path.join(root, mid, mid + ext)
            if os.path.isfile(p):
                return os.path.getsize(p), ext
    except Exception:
        return None
    return None


_seen_execs = {}  # id(ModuleExec) -> weak reference (or the id itself when the class refuses weak references)


def _mark_seen(result):
    import weakref

    try:
        _seen_execs[id(result)] = weakref.ref(result)
    except TypeError:
        _seen_execs[id(result)] = id(result)


_LOAD_PARAMS = ("self", "device", "block_dim", "binary_path", "output_arch", "meta_path")


def _plain_params(fn, names, defaults):
    """Exactly these positional parameters and defaults? Then a wrapper with the same list need not pack them
    (every launch calls Module.load and ModuleExec.get_kernel_hooks: packing is a measurable part of the cost)."""
    code = getattr(fn, "__code__", None)
    if code is None or code.co_flags & 0x0C or code.co_kwonlyargcount:
        return False
    return code.co_varnames[: code.co_argcount] == names and (getattr(fn, "__defaults__", None) or ()) == defaults


def _load_failed(module, args, kwargs, frame, t0, exc, warp_mod):
    try:
        _record_load(module, args, kwargs, None, _take_load(frame, t0, module), exc, warp_mod)
    except Exception as hexc:
        _hook_error("load.error", hexc)


def _load_done(module, args, kwargs, result, frame, t0, warp_mod):
    """After a load that did not return an already reported ModuleExec: a real build (or a skip) to record."""
    try:
        rec = _take_load(frame, t0, module)
        if result is None:  # <= 1.16 after a failed build: report the skip once per module
            skipped = _state.setdefault("skipped", set())
            if module.name not in skipped:
                skipped.add(module.name)
                _record_load(module, args, kwargs, None, rec, None, warp_mod)
            return
        _mark_seen(result)
        _record_load(module, args, kwargs, result, rec, None, warp_mod)
    except Exception as hexc:
        _hook_error("load", hexc)


def _make_load_wrapper(orig, warp_mod):
    """Module.load runs on every launch; its fast path (an already reported ModuleExec) costs one clock read and
    one dict lookup here. `t0` and `self` are read from this frame by _current_load when a phase runs."""
    clock = time.perf_counter
    seen = _seen_execs
    getframe = sys._getframe

    if _plain_params(orig, _LOAD_PARAMS, (None, None, None, None)):

        def load(self, device, block_dim=None, binary_path=None, output_arch=None, meta_path=None):
            t0 = clock()
            try:
                result = orig(self, device, block_dim, binary_path, output_arch, meta_path)
            except BaseException as exc:
                _load_failed(self, (device, block_dim), {}, getframe(), t0, exc, warp_mod)
                raise
            ref = seen.get(id(result))
            if ref is not None and (ref.__class__ is int or ref() is result):
                return result
            _load_done(self, (device, block_dim), {}, result, getframe(), t0, warp_mod)
            return result

    else:

        def load(self, *args, **kwargs):
            t0 = clock()
            try:
                result = orig(self, *args, **kwargs)
            except BaseException as exc:
                _load_failed(self, args, kwargs, getframe(), t0, exc, warp_mod)
                raise
            ref = seen.get(id(result))
            if ref is not None and (ref.__class__ is int or ref() is result):
                return result
            _load_done(self, args, kwargs, result, getframe(), t0, warp_mod)
            return result

    _LOAD_CODE[0] = load.__code__
    return _mark(load, orig)


def _record_load(module, args, kwargs, result, rec, exc, warp_mod):
    end = time.perf_counter()
    rec.charge(end)
    cfg = getattr(warp_mod, "config", None)
    device_arg = args[0] if args else kwargs.get("device")
    bd_arg = args[1] if len(args) > 1 else kwargs.get("block_dim")
    device = None
    if result is not None:
        device = getattr(result, "device", None)
    if device is None:
        device = device_arg
    if result is not None:
        block_dim = _exec_block_dim(module, result, bd_arg)
    else:
        block_dim = bd_arg if bd_arg is not None else getattr(module, "options", {}).get("block_dim")
    mhash = ""
    if result is not None:
        mhash = _hex(getattr(result, "module_hash", None))
    if not mhash:
        try:
            hashers = getattr(module, "hashers", {}) or {}
            h = hashers.get(block_dim) or hashers.get(1)
            if h is not None:
                mhash = _hex(getattr(h, "hash", None) or getattr(h, "module_hash", None))
        except Exception:
            pass
    if exc is not None:
        if "codegen" in rec.ran or "native" in rec.ran:
            status = "error"
        else:
            status = "error_no_build"
        key = (module.name, str(device), block_dim, type(exc).__name__)
        seen = _state.setdefault("failed", set())
        if key in seen and not rec.ran:
            return  # a replay of a failure already reported
        seen.add(key)
    elif result is None:
        status = "skipped_failed_build"
    elif "native" in rec.ran:
        status = "compiled"
    else:
        status = "cached"
    phases = dict(rec.phases)
    native = phases.get("native", 0.0) * 1000.0
    pch = min(rec.pch_ms, native) if native else rec.pch_ms
    wall = (end - rec.t0) * 1000.0
    pch_cpu = sum(f[3] or 0.0 for f in rec.pch_files)
    cpu = _clocks.since(rec.cpu0) if _clocks is not None else None
    snap = _snapshot(module, block_dim, cfg)
    source_bytes = rec.source_bytes
    if source_bytes is None and mhash:
        found = _source_on_disk(cfg, module.name, mhash)
        if found:
            source_bytes = found[0]
    event = {
        "module": module.name,
        "hash": mhash,
        "device": str(device) if device is not None else "",
        "block_dim": block_dim if isinstance(block_dim, int) else None,
        "status": status,
        "ms": round(wall - pch, 3),
        "native_ms": round(native - pch, 3),
        "pch_ms": round(pch, 3),
        "source_bytes": source_bytes or 0,
        "cpu_ms": None if cpu is None else round(max(0.0, cpu - pch_cpu), 3),
        "native_cpu_ms": None if cpu is None else round(max(0.0, rec.native_cpu - pch_cpu), 3),
        "backward_in_source": rec.backward,
        "backward_source_bytes": rec.backward_bytes,
        "start_ms": round((rec.t0 - _T0) * 1000.0, 3),
        "end_ms": round((end - _T0) * 1000.0, 3),
        "proc_cpu_end_ms": _clocks.process_cpu_ms() if _clocks is not None else None,
        "spans": [[p, round((a - _T0) * 1000.0, 3), round((b - _T0) * 1000.0, 3)] for p, a, b in rec.spans],
        "trigger": _trigger(3),
        "kernel_cache_dir": str(getattr(cfg, "kernel_cache_dir", "") or ""),
        "cache_kernels": getattr(cfg, "cache_kernels", None),
    }
    for name in ("hash", "codegen", "native_load", "other"):
        event[name + "_ms"] = round(phases.get(name, 0.0) * 1000.0, 3)
    event.update(snap)
    if exc is not None:
        event["error"] = ("%s: %s" % (type(exc).__name__, exc))[:500]
    _emit("load", event)
    for name, ms, t0, cpu_ms in rec.pch_files:
        _emit("pch", {"ms": round(ms, 3), "file": name, "during_module": module.name, "during_seq": _seq[0],
                      "start_ms": round((t0 - _T0) * 1000.0, 3), "cpu_ms": cpu_ms})


# ---------------------------------------------------------------------------------------------- launches


def _make_hooks_wrapper(orig):
    """Count launches by where they come from (the hooks Warp returns, one per compiled kernel and exec; the calling
    code and offset): a frame lookup, a dict lookup by the hooks' id, two checks that the place is the one it last
    counted in, a decrement and a counter step. Reading `launch`'s locals costs microseconds (f_locals builds a dict
    of ~40), so `_read_launch` does it for the launches it asks."""
    getframe, last = sys._getframe, _last_place
    # the two wrappers below repeat their body on purpose: it runs at every launch, and a shared helper would add a
    # call there and move the frame depths getframe reads

    if _plain_params(orig, ("self", "kernel"), ()):

        def get_kernel_hooks(self, kernel):
            result = orig(self, kernel)
            try:
                caller = getframe(2)  # launch's caller: no frame object is made for launch itself
                st = last.get(id(result))  # the place this kernel last launched from, unread
                if st is not None and st[0] > 0 and st[4] is caller.f_code and st[5] == caller.f_lasti:
                    st[0] -= 1  # two threads taking it below 0 make a read
                    next(st[1])
                else:
                    _read_launch(caller, getframe(1), kernel, self, result)
            except Exception as exc:
                _hook_error("launch", exc)
            return result

    else:

        def get_kernel_hooks(self, kernel, *args, **kwargs):
            result = orig(self, kernel, *args, **kwargs)
            try:
                caller = getframe(2)  # launch's caller: no frame object is made for launch itself
                st = last.get(id(result))  # the place this kernel last launched from, unread
                if st is not None and st[0] > 0 and st[4] is caller.f_code and st[5] == caller.f_lasti:
                    st[0] -= 1  # two threads taking it below 0 make a read
                    next(st[1])
                else:
                    _read_launch(caller, getframe(1), kernel, self, result)
            except Exception as exc:
                _hook_error("launch", exc)
            return result

    return _mark(get_kernel_hooks, orig)


def _norm_dim(dim):
    try:
        return [dim] if isinstance(dim, int) else [int(d) for d in dim] if hasattr(dim, "__iter__") else [int(dim)]
    except Exception:
        return []


_IGNORED = itertools.repeat(0)  # counter of a signature that is not a `wp.launch`: never reported
_READ_FIRST, _READ_EVERY = 32, (127, 113, 131, 109)  # primes in turn: a repeating pattern cannot hide between reads
_launch_keys = {}  # (id(hooks), id(calling code), offset) -> its place state (below)
_last_place = {}  # id(hooks) -> the place state it was last counted in: one int key on the fast path, no tuple
# a place state: [launches to count unread, counter, reads, unread, calling code, offset]
_late = [0]  # reads past _READ_FIRST that found a record other than the one the place counted into


def _dim_key(dim):
    return dim if isinstance(dim, int) else tuple(dim) if isinstance(dim, (tuple, list)) else str(dim)


def _read_launch(caller, frame, kernel, exec_, result):
    """Not the place this kernel last counted unread in, or its unread launches used up: count it unread if its own
    place (the full key) has launches left; else by its full signature (dim, adjoint, argument types from `launch`'s
    frame), and say how many launches from its place count unread into that record: none until the place was read
    _READ_FIRST times, and none for good once two reads there disagree; after that all but one in _READ_EVERY."""
    st = _launch_keys.get((id(result), id(caller.f_code), caller.f_lasti))
    if st is not None and st[0] > 0:
        st[0] -= 1
        next(st[1])
        _last_place[id(result)] = st
        return
    loc = frame.f_locals
    sig = (id(result), id(caller.f_code), caller.f_lasti, loc.get("adjoint"), _dim_key(loc.get("dim")),
           tuple(map(type, loc.get("inputs") or ())), tuple(map(type, loc.get("outputs") or ())))
    counter = _launch_counters.get(sig)
    if counter is None:
        counter = _first_launch(sig, frame, kernel, exec_, result)
    else:
        next(counter)
    if counter is _IGNORED:
        _last_place[sig[0]] = _launch_keys[sig[:3]] = [1 << 62, counter, 0, 0, caller.f_code, caller.f_lasti]
    elif st is None:
        _launch_keys[sig[:3]] = [0, counter, 1, 0, caller.f_code, caller.f_lasti]
    elif counter is not st[1]:  # the place launched another record: read every launch from now on
        _late[0] += st[2] >= _READ_FIRST
        st[1], st[2] = counter, -1
    elif st[2] >= 0:
        st[2] += 1
        if st[2] >= _READ_FIRST:
            st[0] = _READ_EVERY[st[2] % len(_READ_EVERY)] - 1
            st[3] += st[0]
            _last_place[sig[0]] = st


def _first_launch(sig, frame, kernel, exec_, hooks):
    """A new signature: build the readable record (from `launch`'s locals) once, and share one counter among all
    signatures with the same record (e.g. the same line after a rebuild gave a new module exec)."""
    code = frame.f_code
    wd = _state["warp_dir"]
    _held.append(hooks)
    if code.co_name != "launch" or not wd or not code.co_filename.startswith(wd):
        _launch_counters[sig] = _IGNORED
        return _IGNORED
    loc = frame.f_locals
    args = loc.get("fwd_args")
    if args is None:
        args = list(loc.get("inputs") or []) + list(loc.get("outputs") or [])
    caller = frame.f_back
    dim = loc.get("dim")
    device = loc.get("device")
    if device is None:
        device = getattr(exec_, "device", None)
    block_dim = loc.get("block_dim")
    adjoint = loc.get("adjoint", False)
    tiled = caller is not None and caller.f_code.co_name == "launch_tiled"
    site, _api = _user_site(caller)
    rec = {
        "kernel": str(getattr(kernel, "key", "?")),
        "module": str(getattr(getattr(kernel, "module", None), "name", "")),
        "dim": _norm_dim(dim),
        "device": str(device),
        "dtypes": [_dtype_name(a) for a in args],
        "block_dim": block_dim if isinstance(block_dim, int) else None,
        "adjoint": bool(adjoint),
        "tiled": bool(tiled),
        "site": {"file": site["file"], "line": site["line"], "function": site["function"]} if site else None,
    }
    with _lock:
        if sig in _launch_counters:  # another thread got here first
            next(_launch_counters[sig])
            return _launch_counters[sig]
        rkey = json.dumps(rec, sort_keys=True, default=str)
        lid = _launch_ids.get(rkey)
        if lid is None:
            if len(_launch_ids) >= _MAX_LAUNCH_RECORDS:
                counter = _state["overflow"]
            else:
                lid = len(_launch_ids)
                _launch_ids[rkey] = lid
                counter = itertools.count(1)
                _launch_list.append(counter)
                rec["lid"] = lid
                _emit("launch", rec)
        else:
            counter = _launch_list[lid]
        next(counter)
        _launch_counters[sig] = counter
    return counter


def _launch_counts():
    """Launches per recorded signature so far (reading an itertools.count advances it: read once, at exit), and
    how they were counted: launches counted without reading their frame, late changes (see _read_launch)."""
    counts = [next(c) - 1 for c in _launch_list]
    unread = sum(st[3] - st[0] for st in list(_launch_keys.values()) if st[1] is not _IGNORED)
    return counts, sum(counts) + next(_state["overflow"]) - 1, {"unread": unread, "late_changes": _late[0]}


# ---------------------------------------------------------------------------------------------- API calls


def _make_api_wrapper(orig, api, bulk=False):
    skip = api in ("clear_kernel_cache", "clear_lto_cache") and _EXPERIMENT.get("keep_kernel_cache") is True

    def wrapper(*args, **kwargs):
        site = None
        try:
            site = _trigger(2)
            keys = ("device", "modules", "block_dim", "max_workers") if bulk else ()
            detail = {k: repr(kwargs[k])[:200] for k in keys if k in kwargs}
            if bulk and args:
                detail["args"] = repr(args)[:200]
            if skip:
                detail["skipped"] = "experiment keep_kernel_cache"
            _emit("api", {"api": api, "site": site, "detail": detail})
        except Exception as exc:
            _hook_error("api." + api, exc)
        if skip:
            return None
        key = "bulk_origin" if bulk else "in_clear" if api == "clear_kernel_cache" else None
        if key is None:
            return orig(*args, **kwargs)
        prev = _state[key]  # a preload's first user call site, or "inside clear_kernel_cache"
        _state[key] = (dict(site, api=api) if site is not None and prev is None else prev) if bulk else prev + 1
        try:
            return orig(*args, **kwargs)
        finally:
            _state[key] = prev

    return _mark(wrapper, orig)


def _make_unload_wrapper(orig):
    def unload(self, *args, **kwargs):
        try:
            if not _state["in_clear"] and getattr(self, "execs", None):
                site, api = _user_site(sys._getframe(1))
                if site is not None:
                    _emit("api", {"api": "Module.unload", "module": self.name, "site": site, "detail": {}})
        except Exception as exc:
            _hook_error("api.unload", exc)
        return orig(self, *args, **kwargs)

    return _mark(unload, orig)


def _make_module_init_wrapper(orig):
    def __init__(self, *args, **kwargs):
        orig(self, *args, **kwargs)
        try:
            opts = {str(k): str(v) for k, v in dict(getattr(self, "options", {}) or {}).items()}
            site, _api = _user_site(sys._getframe(1))
            _emit("module_created", {"module": str(getattr(self, "name", "")), "options": opts, "site": site})
        except Exception as exc:
            _hook_error("module_created", exc)

    return _mark(__init__, orig)


def _make_init_wrapper(orig, ctx_mod):
    """After wp.init() the runtime exists: wrap the CPU object loader as the native-load phase, then put the
    original init back (wp.launch calls init() on every launch: a wrapper left there costs every launch)."""

    def init(*args, **kwargs):
        result = orig(*args, **kwargs)
        try:
            runtime = getattr(ctx_mod, "runtime", None)
            llvm = getattr(runtime, "llvm", None)
            for name in ("wp_load_obj", "load_obj") if llvm is not None else ():
                fn = getattr(llvm, name, None)
                if fn is not None and not getattr(fn, "__warp_compile_hook__", False):
                    setattr(llvm, name, _phase_wrap("native_load", fn))
                    _state["targets"]["native_load.cpu"] = "wrapped:runtime.llvm." + name
                    break
            if runtime is not None:
                _rebind(init, orig)
        except Exception as exc:
            _hook_error("init", exc)
        return result

    return _mark(init, orig)


# ---------------------------------------------------------------------------------------------- install


def _rebind(old, new):
    """Point every warp.* module attribute that held `old` at `new` (re-exports included)."""
    for name, mod in list(sys.modules.items()):
        if mod is None or not (name == "warp" or name.startswith("warp.")):
            continue
        d = getattr(mod, "__dict__", None)
        if not d:
            continue
        for attr, value in list(d.items()):
            if value is old:
                try:
                    setattr(mod, attr, new)
                except Exception:
                    pass


def _warp_module(name):
    """warp._src.<name> (1.10 on), else warp.<name> (older layouts)."""
    import importlib

    for full in ("warp._src." + name, "warp." + name):
        if sys.modules.get(full) is not None:
            return sys.modules[full]
    try:
        return importlib.import_module("warp._src." + name)
    except ImportError:
        return importlib.import_module("warp." + name)


def _install(warp_mod):
    if _state["installed"]:
        return
    _state["installed"] = True
    targets, opening = _state.setdefault("targets", {}), None
    try:
        _state["warp_dir"] = os.path.dirname(os.path.abspath(warp_mod.__file__))
        ctx, bld = _warp_module("context"), _warp_module("build")
        cfg = getattr(warp_mod, "config", None)
        experiment = _reach.apply_experiment(cfg, _EXPERIMENT) if _EXPERIMENT else {}
        Module = getattr(ctx, "Module", None)
        mode = "none"
        # WARP_COMPILE_FORCE_LOG=1 takes the fallback path on purpose (tests of the log parser on real output)
        forced = os.environ.get("WARP_COMPILE_FORCE_LOG") == "1"
        if Module is not None and callable(getattr(Module, "load", None)) and not forced:
            Module.load = _make_load_wrapper(Module.load, warp_mod)
            targets["Module.load"] = "wrapped"
            mode = "wrap"
        else:
            targets["Module.load"] = "missing"
        # phases
        _patch(targets, "hash", getattr(ctx, "ModuleHasher", None), "__init__", lambda f: _phase_wrap("hash", f),
               "wrapped:ModuleHasher.__init__")
        if Module is not None and hasattr(Module, "_run_codegen"):
            _patch(targets, "codegen", Module, "_run_codegen", lambda f: _phase_wrap("codegen", f),
                   "wrapped:Module._run_codegen")
        builder = getattr(ctx, "ModuleBuilder", None)
        for meth in ("__init__", "codegen", "build_meta") if builder is not None else ():
            if hasattr(builder, meth):
                setattr(builder, meth, _phase_wrap("codegen", getattr(builder, meth)))
        targets.setdefault("codegen", "wrapped:ModuleBuilder" if builder is not None else "missing")
        for name in ("build_cpu", "build_cuda"):
            _patch(targets, "native." + name, bld, name, _native_wrap, rebind=True)
        _patch(targets, "native_load.cuda", bld, "load_cuda", lambda f: _phase_wrap("native_load", f), rebind=True)
        init = getattr(ctx, "init", None)
        if init is not None:
            new = _make_init_wrapper(init, ctx)
            _rebind(init, new)
            targets["native_load.cpu"] = "pending:init"
        # launches, lifecycle and cache APIs
        _patch(targets, "launch", getattr(ctx, "ModuleExec", None), "get_kernel_hooks", _make_hooks_wrapper,
               "wrapped:ModuleExec.get_kernel_hooks")
        _patch(targets, "module_created", Module, "__init__", _make_module_init_wrapper)
        if _kernels is not None:  # which calls made each kernel or instance, with their arguments (hook_kernels.py)
            K, s = getattr(ctx, "Kernel", None), (_emit, _hook_error, _state)
            _patch(targets, "kernel_created", K, "__init__", lambda f: _kernels.creation_wrapper(f, _user_site, *s))
            _patch(targets, "overload_created", K, "add_overload", lambda f: _kernels.overload_wrapper(f, *s))
            _patch(targets, "kernel_made", warp_mod, "kernel", lambda f: _kernels.decorator_wrapper(f, *s),
                   rebind=True)
        _patch(targets, "Module.unload", Module, "unload", _make_unload_wrapper)
        tape = getattr(warp_mod, "Tape", None)
        if _reach is not None and isinstance(tape, type) and "__init__" in tape.__dict__:
            tape.__init__ = _mark(_reach.tape_wrapper(tape.__init__, _user_site, _emit, _hook_error), tape.__init__)
            targets["Tape"] = "wrapped"
        else:
            targets["Tape"] = "missing"
        for api, bulk in (("clear_kernel_cache", False), ("clear_lto_cache", False), ("force_load", True)):
            fn = getattr(warp_mod, api, None) or getattr(ctx, api, None)
            if fn is None:
                targets[api] = "missing"
                continue
            new = _make_api_wrapper(fn, api, bulk=bulk)
            _rebind(fn, new)
            targets[api] = "wrapped"
        opening = _clocks.exit_bracket(_emit) if _clocks is not None else None
        if os.environ.get("WARP_COMPILE_CUDA_ARCH"):
            _install_cuda(warp_mod, ctx, bld, targets)
        if _clocks is not None:
            _clocks.load_rebuild(_load_companion, warp_mod, ctx, bld, dict(emit=_emit, hook_error=_hook_error,
                                                                         targets=targets, rebind=_rebind))
        if mode != "wrap":
            _enable_log_fallback(warp_mod, cfg, targets)
            mode = "log"
        _emit(
            "warp_import",
            {
                "warp_version": str(getattr(warp_mod, "__version__", getattr(cfg, "version", ""))),
                "warp_dir": _state["warp_dir"],
                "config": (_reach.config_snapshot(cfg) if _reach is not None else {}),
                "mode": mode,
                "targets": targets,
                "experiment": experiment,
                "env": {k: os.environ.get(k) for k in ("CUDA_CACHE_DISABLE", "WARP_CACHE_PATH", "CUDA_CACHE_PATH")},
            },
        )
    except Exception as exc:
        _hook_error("install", exc)
    atexit.register(_at_exit, warp_mod)
    if opening is not None:
        atexit.register(opening)  # runs first at exit: the hook's exit work is timed from here


def _patch(targets, key, owner, name, make, label="wrapped", rebind=False):
    """Replace `owner.name` by `make(original)` and record it as `targets[key]` ("missing" where it is absent)."""
    fn = getattr(owner, name, None) if owner is not None else None
    if fn is None:
        targets[key] = "missing"
        return
    new = make(fn)
    setattr(owner, name, new)
    if rebind:
        _rebind(fn, new)
    targets[key] = label


def _install_cuda(warp_mod, ctx, bld, targets):
    """--cuda-arch: load hook_cuda.py (copied next to this file) to note launch block_dims and replay at exit."""
    try:
        mod = _load_companion("hook_cuda.py", "_warp_compile_hook_cuda")
        mod.install(warp_mod, ctx, bld, _rebind, _emit, _hook_error, targets)
    except Exception as exc:
        targets["cuda_replay"] = "missing"
        _hook_error("cuda.install", exc)


def _enable_log_fallback(warp_mod, cfg, targets):
    """Without a loader to wrap, raise Warp's own log level in this process so the parent can parse load lines."""
    try:
        level = getattr(warp_mod, "LOG_DEBUG", None)
        if level is not None and hasattr(cfg, "log_level"):
            cfg.log_level = level
            targets["fallback"] = "log_level=DEBUG"
        elif cfg is not None:
            cfg.verbose = True
            targets["fallback"] = "verbose=True"
    except Exception as exc:
        _hook_error("log_fallback", exc)


def _at_exit(warp_mod):
    try:
        cfg = getattr(warp_mod, "config", None)
        with _lock:
            counts, total, how = _launch_counts()
        _emit(
            "exit",
            {
                "kernel_cache_dir": str(getattr(cfg, "kernel_cache_dir", "") or ""),
                "cache_kernels": getattr(cfg, "cache_kernels", None),
                "config": (_reach.config_snapshot(cfg) if _reach is not None else {}),
                "launch_total": total,
                "launch_records": len(counts),
                "launch_counts": counts,
                "launch_reading": how,
                **(_reach.at_exit(cfg, _EXPERIMENT, _is_user_file) if _reach is not None else {}),
                "targets": _state.get("targets", {}),
                "env": {"CUDA_CACHE_DISABLE": os.environ.get("CUDA_CACHE_DISABLE")},
            },
        )
    except Exception:
        pass


class _WarpFinder:
    """Meta-path finder that lets the normal finders locate `warp`, then installs the hook after it executed."""

    def find_spec(self, name, path=None, target=None):
        if name != "warp":
            return None
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass
        spec = None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            try:
                spec = find(name, path, target)
            except Exception:
                spec = None
            if spec is not None:
                break
        if spec is None:
            _emit("warp_missing", {"executable": sys.executable, "prefix": sys.prefix})
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        orig_exec = spec.loader.exec_module

        def exec_module(module):
            orig_exec(module)
            try:
                _install(module)
            except Exception as exc:
                _hook_error("install", exc)

        try:
            spec.loader.exec_module = exec_module
        except Exception:
            pass
        return spec


def _chain_sitecustomize():
    """Run the `sitecustomize` this file shadows, so the user's environment behaves as without the hook."""
    try:
        import importlib.machinery
        import importlib.util

        paths = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", paths)
        if spec is None or spec.loader is None:
            return
        if spec.origin and os.path.abspath(spec.origin) == os.path.abspath(__file__):
            return
        mod = importlib.util.module_from_spec(spec)
        sys.modules["sitecustomize"] = mod
        spec.loader.exec_module(mod)
    except Exception as exc:
        _hook_error("chain_sitecustomize", exc)


def _start():
    global _STDLIB_DIRS
    if _OUT is None:
        return
    # the pure-Python standard library lives next to os.py (sysconfig would say the same, for ~10 ms per run)
    _STDLIB_DIRS = (os.path.dirname(os.__file__),)
    sys.modules.setdefault("_warp_compile_hook", sys.modules.get(__name__))
    _emit(
        "hello",
        {
            "hook_version": HOOK_VERSION,
            "python": sys.version.split()[0],
            "executable": sys.executable,
            "platform": sys.platform,
            "cwd": os.getcwd(),
            "env": {"CUDA_CACHE_DISABLE": os.environ.get("CUDA_CACHE_DISABLE")},
        },
    )
    if "warp" in sys.modules and getattr(sys.modules["warp"], "config", None) is not None:
        _install(sys.modules["warp"])
    else:
        sys.meta_path.insert(0, _WarpFinder())


if __name__ in ("sitecustomize", "_warp_compile_hook"):
    try:
        _start()
    except Exception:
        pass
    _chain_sitecustomize()
