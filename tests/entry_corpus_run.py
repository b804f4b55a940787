"""Run many entry files as `python FILE ARGS` would, in one process: warp is imported once, each file runs in a fork.

    python tests/entry_corpus_run.py JOBS.json   ->   one JSON line per job on stdout

A job is {"path", "argv", "package", "reset"}: the file runs as `__main__` with `sys.argv = [basename, *argv]`
(`__package__` set, so a package's `__main__.py` resolves its relative imports against the installed package),
after `warp.config` is reset to `reset`. The result says how it ended (`exit:N` or `raised:Type`), what it
printed, the `warp.config` values afterwards, and the options of the Warp module its own kernels went to (created
when its first kernel was defined: the runtime proof that a setting ran before that). Used by
tests/test_entry_corpus.py; a fork per file keeps 100 runs to seconds.
"""

from __future__ import annotations

import builtins
import io
import json
import os
import select
import signal
import sys
from pathlib import Path

TIMEOUT_S = 60.0


def _modules() -> dict:
    import warp

    ctx = getattr(getattr(warp, "_src", None), "context", None) or getattr(warp, "context", None)
    return getattr(ctx, "user_modules", {})


def _run(job: dict) -> dict:
    import warp

    for key, value in job["reset"].items():
        setattr(warp.config, key, value)
    path = job["path"]
    code = compile(Path(path).read_bytes(), path, "exec", dont_inherit=True)
    env = {"__name__": "__main__", "__file__": path, "__package__": job.get("package"), "__builtins__": builtins,
           "__doc__": None, "__spec__": None, "__loader__": None}
    sys.argv = [os.path.basename(path), *job["argv"]]
    sys.path[0] = os.path.dirname(path)
    out, err = io.StringIO(), io.StringIO()
    sys.stdout, sys.stderr = out, err
    status = "exit:0"
    try:
        exec(code, env)
    except SystemExit as exc:
        status = f"exit:{exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1}"
    except BaseException as exc:  # noqa: BLE001 - the outcome is what is compared
        status = f"raised:{type(exc).__name__}"
    finally:
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    main = _modules().get("__main__")
    options = {k: main.options.get(k) for k in job["reset"]} if main is not None else None
    return {"status": status, "stdout": out.getvalue()[-4000:], "stderr": err.getvalue()[-1000:],
            "config": {k: getattr(warp.config, k) for k in job["reset"]}, "module_options": options}


def _fork(job: dict) -> dict:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run the file, send the result, leave without cleanup
        os.close(r)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        try:
            result = _run(job)
        except BaseException as exc:  # noqa: BLE001
            result = {"status": f"harness:{type(exc).__name__}: {exc}"}
        os.write(w, json.dumps(result, default=repr).encode())
        os._exit(0)
    os.close(w)
    chunks = []
    while True:
        ready, _, _ = select.select([r], [], [], TIMEOUT_S)
        if not ready:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(r)
            return {"status": "timeout"}
        data = os.read(r, 65536)
        if not data:
            break
        chunks.append(data)
    os.close(r)
    os.waitpid(pid, 0)
    text = b"".join(chunks).decode()
    return json.loads(text) if text else {"status": "child ended without a result"}


def main(jobs_path: str) -> int:
    import numpy  # noqa: F401 - imported once here, shared by every fork
    import warp
    import warp.fem  # noqa: F401
    import warp.render  # noqa: F401

    warp.config.quiet = True
    for job in json.loads(Path(jobs_path).read_text()):
        print(json.dumps({"path": job["path"], **_fork(job)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
