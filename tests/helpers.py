"""Small helpers several test files share: a process-liveness check and a source-tree writer."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path


def alive(pid: int) -> bool:
    """True for a running process; a zombie waiting for its reaper counts as dead."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state not in ("Z", "X")


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """Write {relative path: dedented source} under `root` (directories as needed); returns `root`."""
    for rel, src in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(src).lstrip("\n"))
    return root


ROOT = Path(__file__).resolve().parents[1]

# A measured command that never ends by itself and leaves a grandchild: what cancel and timeout must clean up
# (it writes its own and its child's pids to pids.txt in its cwd).
SLOW_APP = """\
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
with open("pids.txt", "w") as f:
    f.write(f"{os.getpid()}\\n{child.pid}\\n")
time.sleep(120)
"""


def warp110_python() -> str | None:
    """The second interpreter, with the oldest supported warp-lang (scripts/venv-warp110.sh makes it)."""
    explicit = os.environ.get("WARP110_PYTHON")
    if explicit:
        return explicit
    candidate = Path(os.environ.get("WARP110_VENV", ROOT / ".venv-warp110")) / "bin" / "python"
    return str(candidate) if candidate.exists() else None


def interpreters() -> list:
    """pytest params: this interpreter (newest warp) and the warp 1.10.1 one, skipped when it was not made."""
    import sys

    import pytest

    py110 = warp110_python()
    marks = [] if py110 else [pytest.mark.skip(reason="no warp-lang 1.10.1 interpreter: run scripts/venv-warp110.sh")]
    return [
        pytest.param(sys.executable, id="newest"),
        pytest.param(py110 or "missing", id="warp-1.10.1", marks=marks),
    ]


def synth_build(seq: int, module: str, fill: str, **fields):  # type: ignore[no-untyped-def]
    """A Build for rule tests: its hash is `fill` repeated to 64 characters; CPU, block_dim 1, compiled unless given."""
    from warp_compile.probe.models import Build

    full = (fill * 64)[:64]
    fields = {"device": "cpu", "block_dim": 1, "status": "compiled"} | fields
    return Build(seq=seq, module=module, hash=full, hash_short=full[:7], **fields)


def speed_ratio(run, other) -> float:  # type: ignore[no-untyped-def]
    """How much slower `run` went than `other`, read from the one build both did alike: the CPU precompiled header.

    Two measurements of one change on a shared machine each see their own load; the header (same header, same
    flags, built once per run) is the same work in both, so the ratio of its build times puts the other run's
    milliseconds at this run's speed. 1.0 when either run built no header (warp < 1.13).
    """
    a, b = (sum(p.ms for p in r.pch) / len(r.pch) if r.pch else 0.0 for r in (run, other))
    return a / b if a > 0 and b > 0 else 1.0



def wall_of(report, finding) -> float:  # type: ignore[no-untyped-def]
    """A finding's estimate back on the wall clock of the builds it sums: probe/pricing.py restates such a sum on the
    CPU clock by the CPU share (CPU over wall) of the builds its evidence names; this undoes that, so a test can check
    which builds were counted against the builds' own wall times."""
    est = finding.estimated_saving_ms or 0.0
    if finding.saving_clock != "compile_cpu":
        return est
    seqs = {s for ev in finding.evidence for s in ev.builds}
    builds = [b for b in report.builds if b.seq in seqs and b.status == "compiled"]
    return est * sum(b.ms for b in builds) / sum(b.cpu_ms for b in builds)
