"""warp-compile hook companion: which call made each kernel, with which arguments, when, into which module.

Copied by the sandbox next to the injected `sitecustomize` (probe/hook.py) and loaded by path; like the hook it
runs in the user's interpreter (Python >= 3.9): standard library only, no warp-compile imports, errors swallowed,
and it changes nothing the app does (it reads the creating frame's arguments, never calls or keeps them).

A kernel made inside a function (a factory, a method) is a version of that function's call. Recording the call's
arguments at the moment the kernel is created tells the transformation layer the versions the run made, so a plan
can create exactly those at import. Only values that can be written back as source are kept as such (numbers,
strings, None, bools, Warp and NumPy types, module-level functions, tuples of those, and any object bound to a
public module-level name of the app's own package, by that name); anything else is recorded by its type name, which
tells the plan that argument cannot be written at import. A kernel `wp.map` makes is described by what map was
given (`_mapped`: the mapped function and each input's family, dtype, ndim and size-1 dimensions, read from map's own
frame), so a plan can make the same map kernels at import. It also names kernels and launch arguments for the hook's
records (`kernel_info`, `dtype_name`).
"""

import sys
from threading import get_ident as _thread
from time import perf_counter as _clock
from types import FunctionType

_MAX_EVENTS = 2000
_HERE = globals().get("__file__")  # this file: its own wrappers (decorator_wrapper) are no frame of the app


def encode(value, depth=0):
    """A value as {"kind", "text"}: text is source a file can name it by (`float32` of `warp`, `4`, `'dense'`)."""
    try:
        if value is None or isinstance(value, (bool, int, float, str)):
            text = repr(value)
            return {"kind": type(value).__name__ if value is not None else "none", "text": text[:200]}
        if isinstance(value, tuple) and depth < 2 and len(value) <= 8:
            parts = [encode(v, depth + 1) for v in value]
            if all(p["kind"] != "other" for p in parts):
                return {"kind": "tuple", "items": parts}
        if isinstance(value, type):
            mod = getattr(value, "__module__", "") or ""
            name = getattr(value, "__qualname__", value.__name__)
            # the name a user writes it by: `wp.float32` / `np.float64` when the package exports it as such
            for top in ("warp", "numpy"):
                if mod.split(".")[0] == top and getattr(sys.modules.get(top), value.__name__, None) is value:
                    return {"kind": "type", "module": top, "name": value.__name__}
            return {"kind": "type", "module": mod, "name": name}
        key = getattr(value, "key", None)
        func = getattr(value, "func", None)
        if key is not None and callable(func):  # a wp.func: name the Python function it was made from
            return _captured({"kind": "function", "module": getattr(func, "__module__", ""),
                              "name": getattr(func, "__qualname__", getattr(func, "__name__", ""))}, func, depth)
        if callable(value) and hasattr(value, "__qualname__") and hasattr(value, "__module__"):
            return _captured({"kind": "function", "module": value.__module__ or "", "name": value.__qualname__},
                             value, depth)
    except Exception:
        pass
    return {"kind": "other", "type": type(value).__name__}


def _captured(out, func, depth):
    """A function defined inside another (`make_filter.<locals>.accept`) with the values its closure captured from
    that call (`{"mode": {"kind": "int", "text": "3"}}`): what the making call was given, as far as it kept it."""
    if depth < 2 and "<locals>" in out["name"]:
        try:
            code, cells = func.__code__, func.__closure__ or ()
            names = code.co_freevars[:8]
            out["cells"] = {n: encode(cells[i].cell_contents, depth + 1) for i, n in enumerate(names)}
        except Exception:
            pass
    return out


def _global_name(value, package):
    """{"kind": "global", "module", "name"} when `value` (an object no literal writes: an `@integrand` instance) is
    bound at module level of a module of the app's own package, so a file can import it by that name; else None.
    Reads the modules' dicts only (no attribute access that could run the app's code)."""
    if not package or package == "__main__":
        return None
    for name, mod in list(sys.modules.items()):
        if name != package and not name.startswith(package + "."):
            continue
        space = getattr(mod, "__dict__", None)
        if not isinstance(space, dict):
            continue
        for key, bound in list(space.items()):
            if bound is value and not key.startswith("_"):
                return {"kind": "global", "module": name, "name": key}
    return None


def _arguments(frame):
    code = frame.f_code
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    loc = frame.f_locals
    package = str(frame.f_globals.get("__name__", "")).split(".")[0]
    out = {}
    for n in names:
        if n in loc:
            out[n] = encode(loc[n])
            if out[n]["kind"] == "other":
                try:
                    out[n] = _global_name(loc[n], package) or out[n]
                except Exception:
                    pass
    return out


def _at_import(frame):
    """The call ran while a module was being imported: up from `frame`, a module body before any function body."""
    while frame is not None:
        code = frame.f_code
        if code.co_name == "<module>":
            return frame.f_globals.get("__name__") != "__main__"  # the entry script's body is the run, not import
        if code.co_flags & 0x02:  # CO_NEWLOCALS: a function's body (a class body has none)
            return False
        frame = frame.f_back
    return False


def _user_frames(frame, wd, depth=6):
    """Up to `depth` frames of the app's own code, innermost first, from `frame` up (warp's and importlib's frames
    skipped). A module body that ran because a function imported it is followed up to that function: an import
    late in a function is what made its kernels late."""
    out = []
    while frame is not None and len(out) < depth:
        code = frame.f_code
        if not (wd and code.co_filename.startswith(wd)) and "importlib" not in code.co_filename \
                and not code.co_filename.startswith("<frozen") and code.co_filename != _HERE:
            entry = {"file": code.co_filename, "line": frame.f_lineno,
                     "function": getattr(code, "co_qualname", code.co_name)}
            main = code.co_name == "<module>" and frame.f_globals.get("__name__") == "__main__"
            if code.co_name != "<module>":
                entry["args"] = _arguments(frame)
                entry["at_import"] = _at_import(frame.f_back)
            else:
                entry["at_import"] = not main
            out.append(entry)
            if main or (code.co_name == "<module>" and _at_import(frame.f_back)):
                break  # the entry script, or a module imported by another module's body: nothing later above
        frame = frame.f_back
    return out


def _made_via(frame, wd, kernel):
    """The Warp function the app called that made this kernel for it (wp.map, a warp.fem integrand's kernel), as
    {file, line, function} at the line in that function: the outermost Warp frame under the app's first frame,
    unless it is the file that defines the Kernel class (wp.kernel, wp.Kernel: the app made the kernel itself).
    None when no Warp frame lies between (a direct `wp.Kernel(...)` call) or Warp's directory is not known."""
    if not wd:
        return None
    defining = getattr(sys.modules.get(type(kernel).__module__), "__file__", None)
    outermost = None
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith(wd):
            outermost = frame
        elif name != _HERE and "importlib" not in name and not name.startswith("<frozen"):
            break  # the app's first frame
        frame = frame.f_back
    if outermost is None or outermost.f_code.co_filename == defining:
        return None
    code = outermost.f_code
    return {"file": code.co_filename, "line": outermost.f_lineno,
            "function": getattr(code, "co_qualname", code.co_name)}


def _mapped(frame, wd):
    """What `wp.map` was making this kernel of: the mapped function (as `encode` names it, with its Warp key) and,
    per input, an array's family, dtype, ndim and which dimensions are 1 (Warp's map picks its kernel by those) or a
    plain value's type; the `out` given, by family. Read from map's own frame (its locals `wp_func`, `inputs`, `out`,
    the same names in Warp 1.10 to 1.19); None when that frame or those names are not there (another release's
    map, or a kernel made otherwise). Reads attributes of Warp's arrays only, never calls the app's code."""
    while frame is not None:
        code = frame.f_code
        if code.co_name == "map" and wd and code.co_filename.startswith(wd):
            break
        frame = frame.f_back
    if frame is None:
        return None
    loc = frame.f_locals
    fn, inputs = loc.get("wp_func"), loc.get("inputs")
    if fn is None or not isinstance(inputs, tuple) or len(inputs) > 32:
        return None
    items = []
    for x in inputs:
        dt, shape = getattr(x, "dtype", None), getattr(x, "shape", None)
        if dt is not None and isinstance(shape, tuple) and isinstance(getattr(x, "ndim", None), int):
            items.append({"array": type(x).__name__, "dtype": encode(dt), "ndim": x.ndim,
                          "ones": [i for i, d in enumerate(shape) if d == 1]})
        else:
            items.append({"value": type(x).__name__, "module": str(type(x).__module__)})
    out = loc.get("out")
    outs = out if isinstance(out, (list, tuple)) else ([] if out is None else [out])
    return {"key": str(getattr(fn, "key", "")), "function": encode(fn), "inputs": items,
            "out": [type(o).__name__ for o in outs]}


def kernel_info(kernel, _hex):
    """A kernel of a build: key, hash, generic parent and signature, where it is defined, what its closure holds."""
    info = {"key": str(getattr(kernel, "key", "?"))}
    try:
        info["hash"] = _hex(getattr(kernel, "hash", None))[:16]
    except Exception:
        info["hash"] = ""
    parent = getattr(kernel, "generic_parent", None)
    if parent is not None:
        info["generic_parent"] = str(getattr(parent, "key", ""))
        info["signature"] = str(getattr(kernel, "sig", "") or "")
    try:  # the kernel's own enable_backward (its decorator's option, not its module's): False means no adjoint
        own = getattr(kernel, "options", None)
        if isinstance(own, dict) and "enable_backward" in own:
            info["enable_backward"] = bool(own["enable_backward"])
    except Exception:
        pass
    func = getattr(kernel, "func", None)
    code = getattr(func, "__code__", None)
    if code is not None:
        info["file"] = code.co_filename
        info["line"] = code.co_firstlineno
        try:  # the types a closure kernel captured: a value per call that could be a kernel argument instead
            cells = func.__closure__
            info["closure"] = {n: type(cells[i].cell_contents).__name__ for i, n in enumerate(code.co_freevars)}
        except Exception:
            pass
    return info


def dtype_name(a):
    """A launch argument as the report names it: `array[float32;1d]`, a struct's name, a type name."""
    dt = getattr(a, "dtype", None)
    if dt is not None and hasattr(a, "shape"):
        name = getattr(dt, "__name__", None) or str(dt)
        ndim = getattr(a, "ndim", None)
        if ndim is None:
            try:
                ndim = len(a.shape)
            except Exception:
                ndim = "?"
        return "%s[%s;%sd]" % (type(a).__name__, name, ndim)
    struct = getattr(getattr(a, "_cls", None), "key", None)  # a struct instance's class is NewStructInstance
    return "None" if a is None else struct if isinstance(struct, str) else type(a).__name__


def _record(kind, kernel, frames, emit, state, extra=None):
    if state.get("kernel_events", 0) >= _MAX_EVENTS or not frames:
        return
    first = frames[0]
    module = getattr(kernel, "module", None)
    event = {"key": str(getattr(kernel, "key", "")), "module": str(getattr(module, "name", "")),
             "file": first["file"], "line": first["line"], "function": first["function"],
             "args": first.get("args", {}), "at_import": first.get("at_import", False), "made_by": kind,
             "outer": frames[1:]}
    if len(frames) > 1:
        event["caller"] = {k: frames[1][k] for k in ("file", "line", "function")}
    event.update(extra or {})
    state["kernel_events"] = state.get("kernel_events", 0) + 1
    emit("kernel_created", event)
    if kind == "kernel":  # emit numbered it: the decorator that is making it pairs its whole time with this event
        state.setdefault("last_created", {})[_thread()] = event.get("seq")


def creation_wrapper(orig, user_site, emit, hook_error, state):
    """Wrap Kernel.__init__: after the kernel exists, emit the app's frames that made it, with their arguments and
    the time its construction took (a kernel made at every call pays that at every call: WC-1)."""

    def __init__(self, *args, **kwargs):
        t0 = _clock()
        orig(self, *args, **kwargs)
        init_ms = (_clock() - t0) * 1000.0  # what constructing it cost (the decorator adds more: decorator_wrapper)
        if state.get("kernel_events", 0) >= _MAX_EVENTS:
            return  # nothing more is recorded: not even the frames are walked
        try:
            wd = state.get("warp_dir") or ""
            extra = {"init_ms": round(init_ms, 3)}
            via = _made_via(sys._getframe(1), wd, self)
            if via is not None:
                extra["via"] = via
                if via.get("function") == "map":
                    mapped = _mapped(sys._getframe(1), wd)
                    if mapped is not None:
                        extra["mapped"] = mapped
            _record("kernel", self, _user_frames(sys._getframe(1), wd), emit, state, extra)
        except Exception as exc:
            hook_error("kernel_created", exc)

    __init__.__warp_compile_hook__ = True
    __init__.__wrapped__ = orig
    return __init__


def overload_wrapper(orig, emit, hook_error, state):
    """Wrap Kernel.add_overload: a generic kernel's instance registered (wp.overload) or inferred at a launch."""

    def add_overload(self, *args, **kwargs):
        result = orig(self, *args, **kwargs)
        if state.get("kernel_events", 0) >= _MAX_EVENTS:
            return result  # Warp < 1.19 calls this at every launch of a generic kernel: past the cap it costs nothing
        try:
            frames = _user_frames(sys._getframe(1), state.get("warp_dir") or "")
            sig = str(getattr(result, "sig", "") or "")
            _record("overload", self, frames, emit, state, {"signature": sig})
        except Exception as exc:
            hook_error("overload_created", exc)
        return result

    add_overload.__warp_compile_hook__ = True
    add_overload.__wrapped__ = orig
    return add_overload


def decorator_wrapper(orig, emit, hook_error, state):
    """Wrap warp.kernel: time the whole making of a kernel, which is more than Kernel.__init__ (from 1.19 a unique
    module's hash and its reuse lookup follow it in the decorator), and emit it as `kernel_made` paired with the
    kernel_created event it completes. `@wp.kernel` makes the kernel in this call; `@wp.kernel(module=...)` returns
    the decorator, which is wrapped the same way. Results and exceptions pass through untouched."""

    def timed(make):
        def made(*args, **kwargs):
            last = state.setdefault("last_created", {})
            before = last.get(_thread())
            t0 = _clock()
            result = make(*args, **kwargs)
            ms = (_clock() - t0) * 1000.0
            try:
                seq = last.get(_thread())
                if seq is not None and seq != before:
                    emit("kernel_made", {"of_seq": seq, "ms": round(ms, 3)})
            except Exception as exc:
                hook_error("kernel_made", exc)
            return result

        made.__wrapped__ = make
        return made

    def kernel(*args, **kwargs):
        if args and callable(args[0]):  # @wp.kernel: this call makes the kernel
            return timed(orig)(*args, **kwargs)
        result = orig(*args, **kwargs)
        return timed(result) if isinstance(result, FunctionType) else result

    kernel.__warp_compile_hook__ = True
    kernel.__wrapped__ = orig
    kernel.__name__ = getattr(orig, "__name__", "kernel")
    kernel.__doc__ = getattr(orig, "__doc__", None)
    return kernel
