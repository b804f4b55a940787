"""Run the user's argv in a private sandbox: fresh Warp/CUDA caches and TMPDIR, own process session, capped output.

Everything the run writes outside the user's tree lands under one `warp-compile-*` temp root that is always
removed, and the whole process tree is killed on timeout, cancellation or when the main process exits.

The tree is the child's process group plus, on Linux, every process whose environment carries this run's events
path (a grandchild that started its own session still inherited it). Open sandboxes and live runs are registered,
so `shutdown()` (called on SIGTERM or at exit) can stop them all and remove their roots even when the thread that
runs them never gets to its `finally`.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import py_compile
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from .contention import clock_ticks, other_share, read_cpu_times
from .errors import UsageError

OUTPUT_CAP = 64 * 1024  # bytes kept from the head and from the tail of each stream
EVENTS_ENV = "WARP_COMPILE_EVENTS"
TICK_S = 0.05  # how often a run's wait loop checks cancellation and the deadline, and tails live progress


class Cancelled(Exception):
    """The caller cancelled the run; the child tree was killed and the sandbox removed."""


# live state, for shutdown(): open sandbox roots and running children (pid -> (process, events-path marker))
_registry_lock = threading.Lock()
_open_roots: set[Path] = set()
_live: dict[int, tuple[subprocess.Popen, str]] = {}  # type: ignore[type-arg]
_shutting_down = threading.Event()


def shutdown() -> None:
    """Stop every run of this process at once and remove every open sandbox root; no new run starts after it.

    For a server being terminated (SIGTERM, the client went away): there is no time for the polite SIGTERM grace
    period of `kill_tree`, and the worker thread that owns a run may never reach its `finally`.
    """
    _shutting_down.set()
    with _registry_lock:
        live = list(_live.values())
        roots = list(_open_roots)
    for proc, marker in live:
        _signal_group(proc.pid, signal.SIGKILL)
        _kill_marked(marker, signal.SIGKILL)
    for root in roots:
        shutil.rmtree(root, ignore_errors=True)


atexit.register(shutdown)


@dataclass
class CappedStream:
    """Keeps the first and last OUTPUT_CAP bytes of a stream and counts what was dropped in between."""

    cap: int = OUTPUT_CAP
    head: bytearray = field(default_factory=bytearray)
    tail: bytearray = field(default_factory=bytearray)
    dropped: int = 0

    def feed(self, chunk: bytes) -> None:
        room = self.cap - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail += chunk
        if len(self.tail) > self.cap:
            cut = len(self.tail) - self.cap
            self.dropped += cut
            del self.tail[:cut]

    def text(self) -> str:
        middle = f"\n[... {self.dropped} bytes dropped ...]\n" if self.dropped else ""
        return self.head.decode("utf-8", "replace") + middle + self.tail.decode("utf-8", "replace")


@dataclass
class RunOutcome:
    exit_code: int | None
    wall_ms: float
    timed_out: bool
    stdout: str
    stderr: str
    events_path: Path
    # the child's CPU time and that of every descendant it waited for (os.wait4), in ms; None where not available
    user_ms: float | None = None
    sys_ms: float | None = None
    # the share of the machine's CPU time other processes used over the run's window (probe/contention.py)
    other_share: float | None = None

    @property
    def cpu_ms(self) -> float | None:
        """User + system CPU time of the run: what the work needed, whatever else ran on the machine."""
        return None if self.user_ms is None or self.sys_ms is None else self.user_ms + self.sys_ms


def last_lines(text: str, n: int = 15) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return "\n".join(lines[-n:])


def _hook_source(name: str = "hook.py") -> str:
    return resources.files("warp_compile.probe").joinpath(name).read_text(encoding="utf-8")


_bytecode: dict[tuple[str, str], bytes] = {}  # (file name, its source) -> hash-checked bytecode, compiled once


def write_hook(hook_dir: Path, name: str = "hook.py", target: str = "sitecustomize.py") -> None:
    """A hook file (the hook itself as `sitecustomize.py`), plus its bytecode for this Python: the child runs with
    PYTHONDONTWRITEBYTECODE=1, so without a ready .pyc it would compile 1,100 lines on every run (15-30 ms, a
    measurable share of a warm run). The bytecode is checked against a hash of the source, not its mtime, so one
    compile serves every sandbox of this process. Another interpreter version ignores the .pyc (its tag differs)
    and compiles the source as before."""
    src = hook_dir / target
    source = _hook_source(name)
    src.write_text(source, encoding="utf-8")
    cfile = Path(importlib.util.cache_from_source(str(src)))
    code = _bytecode.get((target, source))
    try:
        if code is None:
            py_compile.compile(str(src), cfile=str(cfile), doraise=True,
                               invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
            _bytecode[(target, source)] = cfile.read_bytes()
        else:
            cfile.parent.mkdir(exist_ok=True)
            cfile.write_bytes(code)
    except (py_compile.PyCompileError, OSError):
        pass  # the source alone works


def _merge_pythonpath(hook_dir: str, existing: str | None) -> str:
    return hook_dir if not existing else hook_dir + os.pathsep + existing


def prepare_argv(command: list[str], hook_dir: str, sandbox_vars: dict[str, str]) -> list[str]:
    """Merge the hook into an `env VAR=... cmd` prefix (env would otherwise override or drop our variables)."""
    if not command or os.path.basename(command[0]) != "env":
        return list(command)
    out = [command[0]]
    for arg in command[1:]:
        if arg.startswith("PYTHONPATH="):
            arg = "PYTHONPATH=" + _merge_pythonpath(hook_dir, arg.split("=", 1)[1])
        out.append(arg)
    if any(a in ("-i", "--ignore-environment", "-") for a in command[1:3]):
        i = 1
        while i < len(out) and out[i].startswith("-"):
            i += 1
        out[i:i] = [f"{k}={v}" for k, v in sandbox_vars.items()]
    return out


class Sandbox:
    """One private temp root per sample; cold and warm runs of that sample share its caches."""

    def __init__(self, extra_env: dict[str, str] | None = None) -> None:
        self.extra_env = dict(extra_env or {})  # an experiment's settings for the hook (`warp-compile try`)
        if _shutting_down.is_set():
            raise Cancelled("warp-compile is shutting down")
        base = os.environ.get("TMPDIR") or tempfile.gettempdir()
        self.root = Path(tempfile.mkdtemp(prefix="warp-compile-", dir=base))
        with _registry_lock:
            _open_roots.add(self.root)
        self.warp_cache = self.root / "warp-cache"
        self.warp_root = self.root / "warp-root"
        self.cuda_cache = self.root / "cuda-cache"
        self.tmp = self.root / "tmp"
        self.hook_dir = self.root / "hook"
        for d in (self.warp_cache, self.warp_root, self.cuda_cache, self.tmp, self.hook_dir):
            d.mkdir()
        write_hook(self.hook_dir)
        for name in ("hook_reach.py", "hook_clocks.py", "hook_kernels.py"):  # loaded by path in every run
            write_hook(self.hook_dir, name, name)
        # only --cuda-arch and diagnose's rebuilds load these: their source is enough (compiling them would cost
        # every other measurement)
        for name in ("hook_cuda.py", "hook_rebuild.py"):
            (self.hook_dir / name).write_text(_hook_source(name), encoding="utf-8")
        self._runs = 0

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
        with _registry_lock:
            _open_roots.discard(self.root)

    def env(self, events_path: Path) -> dict[str, str]:
        env = dict(os.environ)
        sandbox_vars = {
            "WARP_CACHE_PATH": str(self.warp_cache),
            "WARP_CACHE_ROOT": str(self.warp_root),
            "CUDA_CACHE_PATH": str(self.cuda_cache),
            "TMPDIR": str(self.tmp),
            "TEMP": str(self.tmp),
            "TMP": str(self.tmp),
            "PYTHONDONTWRITEBYTECODE": "1",
            EVENTS_ENV: str(events_path),
        }
        sandbox_vars.update(self.extra_env)
        env.update(sandbox_vars)
        # an arm's own path entries (a patched copy of a library, see fix) go after the hook, before the user's
        paths = os.pathsep.join(p for p in (self.extra_env.get("PYTHONPATH"), os.environ.get("PYTHONPATH")) if p)
        env["PYTHONPATH"] = _merge_pythonpath(str(self.hook_dir), paths or None)
        self.vars = sandbox_vars | {"PYTHONPATH": env["PYTHONPATH"]}
        return env

    def lto_artifacts(self) -> int:
        return sum(1 for p in self.warp_cache.rglob("*.lto") if p.is_file())

    def run(
        self,
        command: list[str],
        cwd: Path,
        timeout_s: float,
        cancel: threading.Event | None = None,
        on_tick: Callable[[Path], None] | None = None,
        extra_env: dict[str, str] | None = None,
    ) -> RunOutcome:
        """`on_tick(events_path)` is called from the wait loop (every 50 ms) while the child runs: live progress."""
        self._runs += 1
        events = self.root / f"events-{self._runs}.jsonl"
        env = self.env(events)
        if extra_env:  # e.g. WARP_COMPILE_CUDA_ARCH for the cold run only
            env.update(extra_env)
            self.vars = self.vars | extra_env
        argv = prepare_argv(command, str(self.hook_dir), self.vars)
        out, err = CappedStream(), CappedStream()
        if _shutting_down.is_set():
            raise Cancelled("warp-compile is shutting down")
        machine_at_start = read_cpu_times()
        t0 = time.perf_counter()
        try:
            with _registry_lock:
                proc = subprocess.Popen(
                    argv,
                    cwd=str(cwd),
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    start_new_session=True,
                )
                _live[proc.pid] = (proc, str(events))
        except FileNotFoundError as exc:
            raise UsageError(f"command not found: {command[0]!r}{_shell_hint(command)}") from exc
        except PermissionError as exc:
            raise UsageError(f"command is not executable: {command[0]!r}") from exc
        readers = [
            threading.Thread(target=_pump, args=(proc.stdout, out), daemon=True),
            threading.Thread(target=_pump, args=(proc.stderr, err), daemon=True),
        ]
        for t in readers:
            t.start()
        timed_out = False
        exited = threading.Event()
        usage: list = []
        threading.Thread(target=_wait_exit, args=(proc, exited, usage), daemon=True).start()
        try:
            deadline = t0 + timeout_s
            # the exit is seen the moment it happens (a thread blocks in waitpid); this loop only wakes every 50 ms
            # for cancellation, the deadline and live progress
            while not exited.wait(timeout=max(0.0, min(TICK_S, deadline - time.perf_counter()))):
                if (cancel is not None and cancel.is_set()) or _shutting_down.is_set():
                    raise Cancelled("measurement cancelled")
                if on_tick is not None:
                    on_tick(events)
                if time.perf_counter() > deadline:
                    timed_out = True
                    break
            wall_ms = (time.perf_counter() - t0) * 1000.0
        finally:
            kill_tree(proc, marker=str(events))
            with _registry_lock:
                _live.pop(proc.pid, None)
            for t in readers:
                t.join(timeout=5)
        ru = usage[0] if usage and not timed_out else None
        own_ms = (ru.ru_utime + ru.ru_stime) * 1000.0 if ru is not None else None
        other = other_share(machine_at_start, read_cpu_times(), own_ms, clock_ticks())
        return RunOutcome(
            exit_code=None if timed_out else proc.returncode,
            wall_ms=wall_ms,
            timed_out=timed_out,
            stdout=out.text(),
            stderr=err.text(),
            events_path=events,
            user_ms=ru.ru_utime * 1000.0 if ru is not None else None,
            sys_ms=ru.ru_stime * 1000.0 if ru is not None else None,
            other_share=other,
        )


def _wait_exit(proc: subprocess.Popen, exited: threading.Event, usage: list) -> None:  # type: ignore[type-arg]
    """Block until the child exits (no polling: the wall clock stops when it does), then say so.

    Where the platform has os.wait4 the child is reaped here, which also returns its resource usage: its CPU time
    and that of the descendants it waited for. Popen's own lock is held meanwhile, as Popen.wait holds it, so no
    other caller reaps the same child."""
    try:
        lock = getattr(proc, "_waitpid_lock", None)
        if hasattr(os, "wait4") and lock is not None:
            with lock:
                if proc.returncode is None:
                    try:
                        _pid, status, ru = os.wait4(proc.pid, 0)
                    except ChildProcessError:
                        pass
                    else:
                        proc.returncode = os.waitstatus_to_exitcode(status)
                        usage.append(ru)
        proc.wait()
    except Exception:  # noqa: BLE001  (the caller's deadline and kill_tree still apply)
        return
    exited.set()


def _pump(stream, sink: CappedStream) -> None:  # type: ignore[no-untyped-def]
    try:
        while True:
            chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
            if not chunk:
                break
            sink.feed(chunk)
    except (OSError, ValueError):
        pass
    finally:
        try:
            stream.close()
        except OSError:
            pass


def kill_tree(proc: subprocess.Popen, marker: str | None = None) -> None:  # type: ignore[type-arg]
    """Terminate the child's whole session (it may have spawned workers), politely first, then for sure.

    `marker` (the run's events path) also finds descendants that left the session: they inherited it in their
    environment.
    """
    pgid = proc.pid  # start_new_session: the child leads its own process group, even after it exited
    if proc.poll() is None:
        _signal_group(pgid, signal.SIGTERM)
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass
    _signal_group(pgid, signal.SIGKILL)  # stragglers that outlived the main process
    if marker:
        _kill_marked(marker, signal.SIGKILL)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def _kill_marked(marker: str, sig: int) -> None:
    """Signal every process whose environment holds EVENTS_ENV=marker (Linux /proc; elsewhere a no-op)."""
    needle = f"{EVENTS_ENV}={marker}".encode()
    proc_dir = Path("/proc")
    if not proc_dir.is_dir():
        return
    me = os.getpid()
    for entry in proc_dir.iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:  # gone, or not ours to read
            continue
        if needle in environ.split(b"\0"):
            try:
                os.kill(int(entry.name), sig)
            except OSError:
                pass


def _shell_hint(command: list[str]) -> str:
    if len(command) == 1 and any(c in command[0] for c in " |;&<>$"):
        return " (it looks like a shell string: pass the command as separate arguments, e.g. ['python', '-m', 'app'])"
    return ""


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass
