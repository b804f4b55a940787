"""CUDA replay for the warp-compile hook: compile what the app loaded for sm_N through NVRTC, after the app ran.

Copied next to the injected `sitecustomize` and imported by it only when WARP_COMPILE_CUDA_ARCH is set. Standard
library only, Python >= 3.9 grammar, no warp-compile imports. While the app runs it only notes which block_dim each
launch and preload asked for (a CPU launch resolves every block_dim to 1, so the request is read before that, from
`launch`'s frame when it calls `init()`). At interpreter exit, after the app's own exit handlers, it compiles every
(module, block_dim) for the CUDA architecture into a private temp dir (kernel cache pointed there too, so MathDx
LTO artifacts never reach the app's cache), timing codegen, MathDx LTO generation and the NVRTC build, then
compiles the same set again on a thread pool to measure what a concurrent preload would overlap. The module hash
has no device input, so these are the identities a GPU process would build. The whole replay is timed on its own
clock and reported, so the parent can take it out of the process wall time.
"""

import atexit
import json
import os
import shutil
import sys
import tempfile
import threading
import time

ENV_ARCH = "WARP_COMPILE_CUDA_ARCH"
MAX_WORKERS = 8  # the cap the CS-13 preload suggestion uses: min(os.cpu_count(), modules, 8)
SITE_SAMPLES = 256  # launches read per call site; a block_dim first requested after that is not replayed

_lock = threading.Lock()
_tls = threading.local()
_sites = {}  # (caller code, bytecode offset) of a launch -> launches read there
_pass = {}  # the replay pass running in this process: "header" -> {"root": its header dir, "cfg", "off": bool}
_state = {
    "modules": {},  # module name -> [module object, {block_dim: {"kernels": set, "via": set}}]
    "seen": set(),  # (id(module), kernel key, block_dim) already noted: the per-launch fast path
}


class _CudaDevice:
    """Stands in for a CUDA device when asking Warp how it would resolve a launch's block_dim."""

    is_cpu = False
    is_cuda = True


def _arch():
    raw = os.environ.get(ENV_ARCH, "")
    try:
        value = int(raw)
    except ValueError:
        return None
    return value if value > 0 else None


# ---------------------------------------------------------------------------------------------- recording


def _note(module, block_dim, kernel_key, via):
    name = str(getattr(module, "name", ""))
    with _lock:
        entry = _state["modules"].get(name)
        if entry is None or entry[0] is not module:
            entry = [module, {}]
            _state["modules"][name] = entry
        slot = entry[1].setdefault(block_dim, {"kernels": set(), "via": set()})
        if kernel_key:
            slot["kernels"].add(kernel_key)
        slot["via"].add(via)


def _launch_block_dim(ctx, module, requested):
    """The block_dim a CUDA launch with this request compiles (Warp's own resolution where it has one)."""
    resolve = getattr(ctx, "_resolve_launch_block_dim", None)
    if resolve is not None:
        try:
            return int(resolve(_CudaDevice(), requested))
        except Exception:
            pass
    if isinstance(requested, int) and requested > 0:
        return requested
    return _default_block_dim(module)


def _default_block_dim(module):
    try:
        return int(module.options.get("block_dim") or 256)
    except Exception:
        return 256


def _make_init_wrapper(orig, ctx, hook_error):
    launch = getattr(ctx, "launch", None)
    launch_code = getattr(launch, "__code__", None)
    resolved_type = getattr(ctx, "_ResolvedBlockDim", None)

    def init(*args, **kwargs):
        result = orig(*args, **kwargs)
        try:
            frame = sys._getframe(1)
            if frame.f_code is launch_code and not getattr(_tls, "tiled", False):
                back = frame.f_back
                site = (back.f_code, back.f_lasti) if back is not None else None
                n = _sites.get(site, 0)
                if n >= SITE_SAMPLES:  # reading launch's locals costs microseconds: sample each call site
                    return result
                _sites[site] = n + 1
                loc = frame.f_locals
                kernel = loc.get("kernel")
                requested = loc.get("block_dim")
                module = getattr(kernel, "module", None)
                if module is not None and not (resolved_type is not None and isinstance(requested, resolved_type)):
                    key = (id(module), getattr(kernel, "key", ""), requested)
                    if key not in _state["seen"]:
                        _state["seen"].add(key)
                        _note(module, _launch_block_dim(ctx, module, requested), str(kernel.key), "launch")
        except Exception as exc:
            hook_error("cuda.launch", exc)
        return result

    init.__warp_compile_hook__ = True
    init.__wrapped__ = orig
    init.__name__ = "init"
    init.__doc__ = getattr(orig, "__doc__", None)
    return init


def _make_launch_tiled_wrapper(orig, ctx, hook_error):
    """launch_tiled resolves block_dim (1 on the CPU) before it calls launch: note the request here instead."""

    def launch_tiled(*args, **kwargs):
        try:
            kernel = kwargs.get("kernel", args[0] if args else None)
            module = getattr(kernel, "module", None)
            requested = kwargs.get("block_dim")
            if module is not None:
                key = (id(module), getattr(kernel, "key", ""), requested, "tiled")
                if key not in _state["seen"]:
                    _state["seen"].add(key)
                    _note(module, _launch_block_dim(ctx, module, requested), str(kernel.key), "launch_tiled")
        except Exception as exc:
            hook_error("cuda.launch_tiled", exc)
        outer = getattr(_tls, "tiled", False)
        _tls.tiled = True  # the inner launch sees the resolved block_dim: not a request
        try:
            return orig(*args, **kwargs)
        finally:
            _tls.tiled = outer

    launch_tiled.__warp_compile_hook__ = True
    launch_tiled.__wrapped__ = orig
    launch_tiled.__name__ = getattr(orig, "__name__", "launch_tiled")
    launch_tiled.__doc__ = getattr(orig, "__doc__", None)
    return launch_tiled


def _make_force_load_wrapper(orig, ctx, hook_error):
    names = ("device", "modules", "block_dim", "max_workers")

    def force_load(*args, **kwargs):
        try:
            bound = dict(kwargs)
            for i, value in enumerate(args[: len(names)]):
                bound[names[i]] = value
            mods = bound.get("modules")
            if mods is None:
                mods = list(getattr(ctx, "user_modules", {}).values())
            bd = bound.get("block_dim")
            for m in mods:
                _note(m, int(bd) if isinstance(bd, int) and bd > 0 else _default_block_dim(m), "", "preload")
        except Exception as exc:
            hook_error("cuda.force_load", exc)
        return orig(*args, **kwargs)

    force_load.__warp_compile_hook__ = True
    force_load.__wrapped__ = orig
    force_load.__name__ = getattr(orig, "__name__", "force_load")
    force_load.__doc__ = getattr(orig, "__doc__", None)
    return force_load


def install(warp_mod, ctx, bld, rebind, emit, hook_error, targets):
    """Start noting launch/preload block_dims; register the replay to run at exit. Called by the hook's install."""
    arch = _arch()
    if arch is None:
        targets["cuda_replay"] = "invalid:%s" % os.environ.get(ENV_ARCH, "")
        return
    init = getattr(ctx, "init", None)
    if init is not None and getattr(ctx, "launch", None) is not None:
        new = _make_init_wrapper(init, ctx, hook_error)
        rebind(init, new)
        targets["cuda.launch"] = "wrapped:init(launch frame)"
    else:
        targets["cuda.launch"] = "missing"
    tiled = getattr(ctx, "launch_tiled", None)
    if tiled is not None:
        rebind(tiled, _make_launch_tiled_wrapper(tiled, ctx, hook_error))
        targets["cuda.launch_tiled"] = "wrapped"
    fl = getattr(warp_mod, "force_load", None) or getattr(ctx, "force_load", None)
    if fl is not None:
        new = _make_force_load_wrapper(fl, ctx, hook_error)
        rebind(fl, new)
        targets["cuda.preload"] = "wrapped"
    targets["cuda_replay"] = "sm_%d" % arch
    atexit.register(_at_exit, warp_mod, ctx, bld, emit, hook_error, arch)


# ---------------------------------------------------------------------------------------------- phase timing


def _thread_cpu():
    """This thread's CPU seconds: NVRTC builds on the calling thread, so set against wall time it shows the share
    of a core the build had (a loaded machine stretches wall time, not this)."""
    try:
        return time.thread_time()
    except (AttributeError, OSError):
        return None


class _Clock:
    """Exclusive phase time on one thread: a nested phase's time is not charged to its parent."""

    def __init__(self):
        self.t0 = time.perf_counter()
        self.cpu0 = _thread_cpu()
        self.mark = self.t0
        self.stack = []
        self.phases = {}
        self.link_inputs = 0
        self.note = None  # why the output is PTX, when the cubin build failed
        self.header_dir = False  # Warp gave NVRTC somewhere to put a precompiled header
        self.pch_files = 0
        self.pch_bytes = 0
        self.pch_ms = 0.0

    def charge(self, now):
        phase = self.stack[-1] if self.stack else "other"
        self.phases[phase] = self.phases.get(phase, 0.0) + (now - self.mark)
        self.mark = now


def _timed(phase, fn):
    def wrapper(*args, **kwargs):
        clock = getattr(_tls, "clock", None)
        if clock is None:
            return fn(*args, **kwargs)
        if phase == "nvrtc":
            clock.link_inputs += len(kwargs.get("ltoirs") or ()) + len(kwargs.get("fatbins") or ())
            return _header_call(fn, clock, args, kwargs)
        clock.charge(time.perf_counter())
        clock.stack.append(phase)
        try:
            return fn(*args, **kwargs)
        finally:
            clock.charge(time.perf_counter())
            clock.stack.pop()

    wrapper.__wrapped__ = fn
    return wrapper


def _header_call(fn, clock, args, kwargs):
    """One NVRTC build with its precompiled header in the replay's own directory, or off for the header-off pass.

    Warp keeps NVRTC's header in a per-thread temporary directory (1.12-1.17, passed as `pch_dir`; None from toolkit
    13) or in the kernel cache directory (1.11: no `pch_dir` parameter, `config.use_precompiled_headers`; 1.10 has
    no header at all). At exit the temporary directory is
    already deleted (its finalizer ran before this handler), and NVRTC then fails with error code 6: the replay
    passes a directory of its own, one per pass and thread as Warp's are, and records the header files that
    appear there (a header built by this call: its bytes and, from its mtime, its time).
    """
    header = _pass.get("header") or {}
    cfg = header.get("cfg")
    kwargs = dict(kwargs)
    if "pch_dir" in kwargs or _accepts(fn, "pch_dir"):
        passed = kwargs.get("pch_dir") is not None
        if passed and header.get("root"):
            kwargs["pch_dir"] = _thread_dir(header["root"])
        where = kwargs.get("pch_dir") if passed else None
    elif cfg is not None and getattr(cfg, "use_precompiled_headers", False):
        # 1.11: the header goes to the kernel cache directory, which the replay points at its own per pass
        # (1.10 has no such setting: NVRTC gets no header there)
        where = getattr(cfg, "kernel_cache_dir", None)
        if where:
            os.makedirs(where, exist_ok=True)
    else:
        where = None
    switch_cfg = False
    if header.get("off"):
        if _accepts(fn, "use_precompiled_headers"):
            kwargs["use_precompiled_headers"] = False
        elif cfg is not None and hasattr(cfg, "use_precompiled_headers"):
            switch_cfg, saved = True, cfg.use_precompiled_headers
            cfg.use_precompiled_headers = False
    before = set(_files(where, ".pch")) if where else set()
    clock.header_dir = clock.header_dir or bool(where)
    t0_ns = time.time_ns()
    clock.charge(time.perf_counter())
    clock.stack.append("nvrtc")
    try:
        return fn(*args, **kwargs)
    finally:
        clock.charge(time.perf_counter())
        clock.stack.pop()
        if switch_cfg:
            cfg.use_precompiled_headers = saved
        if where:
            for path, size in _files(where, ".pch").items():
                if path in before:
                    continue
                clock.pch_files += 1
                clock.pch_bytes += size
                try:
                    clock.pch_ms += max(0.0, (os.stat(path).st_mtime_ns - t0_ns) / 1e6)
                except OSError:
                    pass


def _thread_dir(root):
    path = os.path.join(root, str(threading.get_ident()))
    os.makedirs(path, exist_ok=True)
    return path


def _patch_phases(ctx, bld):
    """Wrap the builder functions for the replay only; returns the (owner, name, original) list to restore."""
    patched = []

    def patch(owner, name, phase):
        fn = getattr(owner, name, None)
        if fn is None:
            return
        patched.append((owner, name, owner.__dict__.get(name, fn) if isinstance(owner, type) else fn))
        setattr(owner, name, _timed(phase, fn))

    module_cls = getattr(ctx, "Module", None)
    if module_cls is not None and hasattr(module_cls, "_run_codegen"):
        patch(module_cls, "_run_codegen", "codegen")
    else:
        builder = getattr(ctx, "ModuleBuilder", None)
        if builder is not None:
            for meth in ("__init__", "codegen", "build_meta"):
                patch(builder, meth, "codegen")
    for name in sorted(n for n in dir(bld) if n.startswith("build_lto_")):
        patch(bld, name, "lto")
    patch(bld, "build_cuda", "nvrtc")
    return patched


def _unpatch(patched):
    for owner, name, orig in reversed(patched):
        try:
            setattr(owner, name, orig)
        except Exception:
            pass


# ---------------------------------------------------------------------------------------------- compiling


def _accepts(fn, name):
    for _ in range(8):  # the hook's own phase wrappers take *args: read the wrapped function
        inner = getattr(fn, "__wrapped__", None)
        if inner is None:
            break
        fn = inner
    code = getattr(fn, "__code__", None)
    return code is not None and name in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]


def _method(obj, name):
    """obj.name when its class has it, else None: looked up on the class first, because Warp 1.11's
    Module.__getattr__ recurses without end on a missing name (a RecursionError, which getattr's default misses)."""
    if getattr(type(obj), name, None) is None:
        return None
    return getattr(obj, name)


def _hex(h):
    if isinstance(h, (bytes, bytearray)):
        return h.hex()
    return str(h or "")


def _compile(ctx, module, block_dim, arch, out_dir, cfg, overrides=None):
    """Build one (module, block_dim) for sm_<arch> into out_dir; returns the module hash (hex).

    `overrides` (e.g. enable_backward False) changes the options of this build only; its hash is then not reported
    (the module's cached hash describes the options the app used).
    """
    comp = _method(module, "_compile")
    resolve = _method(module, "resolve_options")
    if comp is not None and _accepts(comp, "options") and resolve is not None and _accepts(resolve, "block_dim"):
        # >= 1.15: a variant is its resolved options; module.options is left alone
        options = resolve(cfg, block_dim=block_dim)
        mhash = "" if overrides else _hex(module.get_module_hash(block_dim))
        _cubin_or_ptx(lambda ptx: comp(None, out_dir, output_arch=arch, use_ptx=ptx,
                                       options=dict(options, **(overrides or {}))))
        return mhash
    # <= 1.14: the variant is whatever options["block_dim"] holds when the module is hashed and built
    comp = comp or _method(module, "compile")
    changes = dict(overrides or {}, block_dim=block_dim)
    old = {k: module.options.get(k) for k in changes}
    module.options.update(changes)
    module.mark_modified()
    try:
        try:
            mhash = _hex(module.get_module_hash(block_dim))
        except TypeError:
            mhash = _hex(module.get_module_hash())
        _cubin_or_ptx(lambda ptx: comp(None, out_dir, output_arch=arch, use_ptx=ptx))
        return "" if overrides else mhash
    finally:
        module.options.update(old)
        module.mark_modified()


def _cubin_or_ptx(build):
    """A cubin (what a GPU process of the same toolkit loads) where NVRTC can make one without a driver, else PTX.

    Every release 1.10-1.19 makes the sm_N cubin here (use_ptx=False; Warp's own default without a driver is PTX on
    some). If the cubin build fails, the PTX build is tried once; its success is reported as output "ptx" with the
    cubin's error kept in the build's `error` (status stays compiled: the module does build for sm_N).
    """
    try:
        build(False)
    except Exception as exc:
        note = ("cubin failed, PTX built instead: %s: %s" % (type(exc).__name__, exc))[:500]
        clock = getattr(_tls, "clock", None)
        build(True)
        if clock is not None:
            clock.note = note


def _backward_enabled(module, cfg):
    """Whether this module generates adjoint code by its own option (the app's fix target for CS-10)."""
    value = module.options.get("enable_backward")
    if value is None:
        value = getattr(cfg, "enable_backward", True)
    return bool(value)


def _backward_bytes(src):
    """Bytes of adjoint code, counted as the CPU hook counts them (hook_reach, loaded beside this file)."""
    reach = sys.modules.get("_warp_compile_hook_reach")
    return reach.backward_bytes(src) if reach is not None else 0


def _source_backward_bytes(out_dir):
    total = 0
    for path in _files(out_dir, ".cu"):
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                total += _backward_bytes(fh.read())
        except OSError:
            pass
    return total


def _files(root, suffix):
    out = {}
    if not os.path.isdir(root):
        return out
    for dirpath, _dirs, names in os.walk(root):
        for n in names:
            if n.endswith(suffix):
                p = os.path.join(dirpath, n)
                try:
                    out[p] = os.path.getsize(p)
                except OSError:
                    pass
    return out


def _build(ctx, cfg, entry, arch, out_dir, lto_root, overrides=None):
    """Compile one entry on this thread with a fresh phase clock; returns its report dict."""
    module, bd = entry["module"], entry["block_dim"]
    backward = _backward_enabled(module, cfg) if not overrides else False
    before = _files(lto_root, ".lto")
    clock = _Clock()
    _tls.clock = clock
    status, error, mhash = "compiled", None, ""
    try:
        mhash = _compile(ctx, module, bd, arch, out_dir, cfg, overrides)
    except Exception as exc:
        status, error = "error", ("%s: %s" % (type(exc).__name__, exc))[:500]
    finally:
        end = time.perf_counter()
        cpu1 = _thread_cpu()
        clock.charge(end)
        _tls.clock = None
    lto = {p: s for p, s in _files(lto_root, ".lto").items() if p not in before}
    src = _files(out_dir, ".cu")
    binaries = sorted(os.path.basename(p) for p in list(_files(out_dir, ".cubin")) + list(_files(out_dir, ".ptx")))
    phases = {k: round(v * 1000.0, 3) for k, v in sorted(clock.phases.items())}
    return {
        "module": str(module.name),
        "hash": mhash,
        "block_dim": bd,
        "arch": arch,
        "ms": round((end - clock.t0) * 1000.0, 3),
        "cpu_ms": round((cpu1 - clock.cpu0) * 1000.0, 3) if cpu1 is not None and clock.cpu0 is not None else None,
        "phases": phases,
        "source_bytes": sum(src.values()),
        "backward": backward,
        "backward_source_bytes": _source_backward_bytes(out_dir) if src else None,
        "lto_artifacts": {"count": len(lto), "bytes": sum(lto.values())},
        "link_inputs": clock.link_inputs,
        "binary": binaries[0] if binaries else "",
        "output": binaries[0].rsplit(".", 1)[-1] if binaries else "",
        "nvrtc_header": {
            "dir": clock.header_dir,
            "files": clock.pch_files,
            "bytes": clock.pch_bytes,
            "ms": round(clock.pch_ms, 3),
        },
        "status": status,
        "error": error or clock.note,
        "kernels": sorted(entry["kernels"]),
        "via": sorted(entry["via"]),
        "start_ms": round(clock.t0 * 1000.0, 3),
        "end_ms": round(end * 1000.0, 3),
    }


def _entries(ctx):
    """(module, block_dim) pairs to build: noted launches and preloads, plus modules loaded some other way."""
    with _lock:
        noted = {name: (m, dict(bds)) for name, (m, bds) in _state["modules"].items()}
    for name, m in list(getattr(ctx, "user_modules", {}).items()):
        if name not in noted and getattr(m, "execs", None):
            noted[name] = (m, {_default_block_dim(m): {"kernels": set(), "via": {"loaded"}}})
    out = []
    for name in sorted(noted):
        module, bds = noted[name]
        for bd in sorted(bds):
            out.append({"module": module, "block_dim": bd, "kernels": bds[bd]["kernels"], "via": bds[bd]["via"]})
    return out


def _cpu_ms():
    """CPU time this process used so far (all its threads), or None where the platform does not say.

    Set against a pass's wall time it gives the cores the pass actually had: a machine busy with other work can
    leave a concurrent pass no second core, which wall times alone would read as "overlap does not pay".
    """
    try:
        import resource

        r = resource.getrusage(resource.RUSAGE_SELF)
        return (r.ru_utime + r.ru_stime) * 1000.0
    except Exception:
        return None


def _concurrent(ctx, cfg, entries, arch, root):
    """The same builds on worker threads, one task per module (its block_dims in turn), as a preload would run.

    Plain threads: concurrent.futures refuses new work once the interpreter is shutting down (we run at exit).
    """
    by_module = {}
    for i, e in enumerate(entries):
        by_module.setdefault(e["module"].name, []).append((i, e))
    tasks = list(by_module.values())
    workers = max(1, min(os.cpu_count() or 1, len(tasks), MAX_WORKERS))
    lto_root = os.path.join(root, "concurrent-cache", "lto")
    results = []
    pending = list(tasks)

    def work():
        while True:
            with _lock:
                if not pending:
                    return
                task = pending.pop(0)
            for i, e in task:
                r = _build(ctx, cfg, e, arch, os.path.join(root, "concurrent", str(i)), lto_root)
                with _lock:
                    results.append(r)

    cpu0 = _cpu_ms()
    t0 = time.perf_counter()
    threads = [threading.Thread(target=work, name="warp-compile-cuda-%d" % n, daemon=True) for n in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = (time.perf_counter() - t0) * 1000.0
    cpu1 = _cpu_ms()
    try:
        load = round(os.getloadavg()[0], 2)  # other work on the machine takes the cores the threads would use
    except (AttributeError, OSError):
        load = None
    return {
        "cpu_ms": round(cpu1 - cpu0, 3) if cpu0 is not None and cpu1 is not None else None,
        "cpus": os.cpu_count() or 0,
        "load_avg": load,
        "workers": workers,
        "tasks": len(tasks),
        "wall_ms": round(wall, 3),
        "summed_ms": round(sum(r["ms"] for r in results), 3),
        "errors": sum(1 for r in results if r["status"] != "compiled"),
    }


def _read_all(fd):
    chunks = []
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _write_all(fd, payload):
    while payload:
        payload = payload[os.write(fd, payload) :]


_open_child_fds = set()  # the parent's ends of every live child's pipes: a later fork must not keep them open


class _Child:
    """A forked copy of this process, taken before any CUDA build ran here, that runs one job when asked.

    NVRTC keeps an in-process header cache per set of compile options (the first build at each block_dim pays for
    it; an identical second build here took a third of the time), so a pass measured after the serial one would
    look faster for a reason that has nothing to do with it. The child keeps this process's state with that cache
    still cold until it is asked, then sends back one JSON document. Without fork (Windows), or with other threads
    running, there is no child (`ask` returns None) and the caller measures in-process, saying so.
    """

    def __init__(self, job):
        self.pid = None
        if not hasattr(os, "fork") or threading.active_count() > 1:
            return
        req_r, req_w = os.pipe()
        res_r, res_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: wait for the request, answer it, leave without running exit handlers
            code = 0
            try:
                os.close(req_w)
                os.close(res_r)
                # an earlier child's request pipe must reach EOF when the parent closes it: a copy of its write
                # end held here would leave that child waiting for ever (and the parent waiting on it)
                for fd in list(_open_child_fds):
                    try:
                        os.close(fd)
                    except OSError:
                        pass
                raw = _read_all(req_r)
                if raw:
                    try:
                        data = job(json.loads(raw.decode("utf-8")))
                    except BaseException as exc:
                        data = {"error": ("%s: %s" % (type(exc).__name__, exc))[:500]}
                    _write_all(res_w, json.dumps(data).encode("utf-8"))
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        os.close(req_r)
        os.close(res_w)
        self.pid, self.req, self.res = pid, req_w, res_r
        _open_child_fds.update((req_w, res_r))

    def ask(self, request):
        if self.pid is None:
            return None
        _write_all(self.req, json.dumps(request).encode("utf-8"))
        os.close(self.req)
        _open_child_fds.discard(self.req)
        raw = _read_all(self.res)
        self._reap()
        try:
            return json.loads(raw.decode("utf-8"))
        except ValueError:
            return {"error": "the measuring process ended without a result"}

    def close(self):
        """End an unasked child: an empty request makes it exit at once."""
        if self.pid is not None:
            try:
                os.close(self.req)
            except OSError:
                pass
            _open_child_fds.discard(self.req)
            self._reap()

    def _reap(self):
        try:
            os.close(self.res)
        except OSError:
            pass
        _open_child_fds.discard(self.res)
        try:
            os.waitpid(self.pid, 0)
        except OSError:
            pass
        self.pid = None


def _forward_builds(ctx, cfg, entries, arch, root, indices):
    """Forward-only builds (enable_backward False) of the given entries, in serial order: what CS-10's fix leaves.

    NVRTC's first build at each set of options (block_dim among them) carries a start-up cost that later builds
    skip. The serial pass paid it in the first entry at each block_dim; so that each forward build is compared
    with its serial build on equal terms, an entry that was not first at its block_dim is preceded here by an
    untimed build of the one that was.
    """
    lto_root = _begin_pass(cfg, root, "forward")
    first = {}
    for j, e in enumerate(entries):
        first.setdefault(e["block_dim"], j)
    warmed = set()
    out = {}
    for i in sorted(indices):
        bd = entries[i]["block_dim"]
        if bd not in warmed and first[bd] != i:
            _build(ctx, cfg, entries[first[bd]], arch, os.path.join(root, "forward-warm", str(i)), lto_root)
        warmed.add(bd)
        r = _build(
            ctx, cfg, entries[i], arch, os.path.join(root, "forward", str(i)), lto_root, {"enable_backward": False}
        )
        out[str(i)] = {
            k: r[k] for k in ("ms", "phases", "source_bytes", "lto_artifacts", "link_inputs", "status", "error")
        }
    return out


def _begin_pass(cfg, root, name, header_off=False):
    """Point the kernel cache and NVRTC's header at this pass's own directories; returns its LTO cache dir."""
    cache = os.path.join(root, name + "-cache")
    os.makedirs(cache, exist_ok=True)
    cfg.kernel_cache_dir = cache
    _pass["header"] = {"root": os.path.join(root, name + "-pch"), "cfg": cfg, "off": header_off}
    return os.path.join(cache, "lto")


def _header_off_builds(ctx, cfg, entries, arch, root, indices):
    """The given entries rebuilt in serial order with NVRTC's precompiled header off: the other side of CS-12.

    Runs in a process forked before any CUDA build, like the serial pass it is compared with, and in the same
    order: each build meets NVRTC's in-process state as its serial counterpart did, so the two differ by the header
    alone (same source, same options, same module identity: only the build call's header switch changes).
    """
    lto_root = _begin_pass(cfg, root, "noheader", header_off=True)
    out = {}
    for i in sorted(indices):
        r = _build(ctx, cfg, entries[i], arch, os.path.join(root, "noheader", str(i)), lto_root)
        out[str(i)] = {k: r[k] for k in ("ms", "cpu_ms", "phases", "status", "error", "nvrtc_header")}
    return out


def _header_builds(builds):
    """Indices of the builds to rebuild without the header: once NVRTC wrote one in any build, every build that had
    a header directory (the later ones read the header the first wrote: they gain what it costs the first)."""
    if not any(b["status"] == "compiled" and b["nvrtc_header"]["files"] > 0 for b in builds):
        return []
    return [i for i, b in enumerate(builds) if b["status"] == "compiled" and b["nvrtc_header"]["dir"]]


def _needs_forward(build):
    """A build with backward code: its cost on CUDA is measured by one forward-only rebuild, since the adjoint
    share of the source says little about it (NVRTC's fixed per-build cost stays; MathDx adjoint GEMMs multiply
    the LTO work). The rebuild costs less than the backward build it is compared with."""
    return build["status"] == "compiled" and bool(build["backward"])


def _toolkit(ctx):
    runtime = getattr(ctx, "runtime", None)
    tk = getattr(runtime, "toolkit_version", None)
    return ".".join(str(x) for x in tk) if isinstance(tk, (tuple, list)) else (str(tk) if tk else "")


def replay(warp_mod, ctx, bld, arch):
    """Serial builds (one report dict each) and the concurrent measurement; restores every change it made."""
    cfg = getattr(warp_mod, "config", None)
    entries = _entries(ctx)
    base = os.environ.get("TMPDIR") or tempfile.gettempdir()
    root = tempfile.mkdtemp(prefix="warp-compile-cuda-", dir=base)
    saved_cache = getattr(cfg, "kernel_cache_dir", None)
    patched = _patch_phases(ctx, bld)
    builds, conc = [], None
    forward_child = conc_child = header_child = None
    try:
        if any(_backward_enabled(e["module"], cfg) for e in entries):
            forward_child = _Child(lambda idx: _forward_builds(ctx, cfg, entries, arch, root, idx))
        if entries:  # asked only if the serial pass shows NVRTC building a precompiled header
            header_child = _Child(lambda idx: _header_off_builds(ctx, cfg, entries, arch, root, idx))
        several = len({e["module"].name for e in entries}) > 1  # something to overlap
        if several:  # first, so both passes start with NVRTC's header cache cold
            _begin_pass(cfg, root, "concurrent")
            conc_child = _Child(lambda _req: _concurrent(ctx, cfg, entries, arch, root))
            conc = conc_child.ask(True)
        lto_root = _begin_pass(cfg, root, "serial")
        cpu0 = _cpu_ms()
        for i, e in enumerate(entries):
            builds.append(_build(ctx, cfg, e, arch, os.path.join(root, "serial", str(i)), lto_root))
        cpu1 = _cpu_ms()
        if several and conc is None:
            _begin_pass(cfg, root, "concurrent")
            conc = _concurrent(ctx, cfg, entries, arch, root)
            conc["warm_cache"] = True
        _repeat_first_builds(ctx, cfg, entries, builds, arch, root)
        if conc is not None:
            conc["serial_ms"] = round(sum(b["ms"] for b in builds), 3)
            conc["serial_cpu_ms"] = round(cpu1 - cpu0, 3) if cpu0 is not None and cpu1 is not None else None
        wanted = [i for i, b in enumerate(builds) if _needs_forward(b)]
        _rebuild(builds, "forward", wanted, forward_child,
                 lambda idx: _forward_builds(ctx, cfg, entries, arch, root, idx))
        wanted = _header_builds(builds)  # the builds NVRTC's precompiled header took part in
        _rebuild(builds, "no_header", wanted, header_child,
                 lambda idx: _header_off_builds(ctx, cfg, entries, arch, root, idx))
    finally:
        _pass.clear()
        for child in (forward_child, conc_child, header_child):
            if child is not None:
                child.close()
        _unpatch(patched)
        try:
            cfg.kernel_cache_dir = saved_cache
        except Exception:
            pass
        shutil.rmtree(root, ignore_errors=True)
    return builds, conc


def _repeat_first_builds(ctx, cfg, entries, builds, arch, root):
    """Rebuild the first build at each block_dim once more, at once, in this process: NVRTC's in-process header
    cache is warm for that block_dim now, so the first time less the repeat is the start-up a module split keeps
    once per size (CS-5's estimate). Only when launches use more than one block_dim: nothing else reads it."""
    firsts = {}
    for i, e in enumerate(entries):
        if builds[i]["status"] == "compiled":
            firsts.setdefault(e["block_dim"], i)
    if len(firsts) < 2:
        return
    cache = os.path.join(root, "repeat-cache")  # a fresh kernel cache; NVRTC's header stays the serial pass's
    os.makedirs(cache, exist_ok=True)
    cfg.kernel_cache_dir = cache
    lto_root = os.path.join(cache, "lto")
    for i in firsts.values():
        r = _build(ctx, cfg, entries[i], arch, os.path.join(root, "repeat", str(i)), lto_root)
        if r["status"] == "compiled":
            builds[i]["repeat_ms"] = r["ms"]


def _rebuild(builds, key, wanted, child, in_process):
    """Rebuild the `wanted` builds another way (forward-only, header off): in the forked child, cold like the serial
    pass, or without one in this process after it (NVRTC's state warm, and said so); the result goes to build[key]."""
    if not wanted:
        return
    got = child.ask(wanted) if child is not None else None
    warm = got is None
    if warm:
        got = in_process(wanted)
    for i in wanted:
        r = got.get(str(i)) if isinstance(got, dict) else None
        if r is None:
            r = {"status": "error", "error": str(got.get("error") if isinstance(got, dict) else got)}
        r["warm_cache"] = warm
        builds[i][key] = r


def _at_exit(warp_mod, ctx, bld, emit, hook_error, arch):
    t0 = time.perf_counter()
    builds, conc, error = [], None, None
    try:
        builds, conc = replay(warp_mod, ctx, bld, arch)
    except Exception as exc:
        error = ("%s: %s" % (type(exc).__name__, exc))[:500]
        hook_error("cuda.replay", exc)
    try:
        for b in builds:
            emit("cuda_build", b)
        if conc is not None:
            emit("cuda_concurrent", conc)
        emit(
            "cuda_replay",
            {
                "arch": arch,
                "ms": round((time.perf_counter() - t0) * 1000.0, 3),
                "toolkit": _toolkit(ctx),
                "nvrtc_pch": any(b.get("nvrtc_header", {}).get("files") for b in builds)
                if any(b.get("status") == "compiled" for b in builds)
                else None,
                "driver": bool(getattr(getattr(ctx, "runtime", None), "driver_version", None)),
                "error": error,
            },
        )
    except Exception as exc:
        hook_error("cuda.emit", exc)
