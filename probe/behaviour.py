"""Did a changed copy (fix's, or an agent's) still do the app's work? Its printed output against the original's, and its

A faster app that prints different numbers, or that no longer runs Warp at all, has not been fixed: the judge reads
the output of every measured run of both arms (the interleaved compare runs each arm cold and warm per pair).
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field
from typing import Any

# Warp's own stdout lines: the init banner (a header line and its indented block) and the per-module load lines,
# which an app may silence (wp.config.quiet) without changing what it computes
_BANNER = re.compile(r"^Warp \d+\.\d+\S* initialized:")
_MODULE_LINE = re.compile(r"^Module \S+ \S+ load on device ")
_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
REL_TOL = 1e-4


def app_lines(stdout: str) -> list[str]:
    """The app's own output lines: Warp's banner and module load lines removed, trailing blanks stripped."""
    out: list[str] = []
    in_banner = False
    for raw in stdout.splitlines():
        line = raw.rstrip()
        if _BANNER.match(line):
            in_banner = True
            continue
        if in_banner and line.startswith((" ", "\t")):
            continue
        in_banner = False
        if _MODULE_LINE.match(line) or not line:
            continue
        out.append(line)
    return out


def _decimals(token: str) -> int:
    mantissa = token.lower().split("e")[0]
    return len(mantissa.split(".")[1]) if "." in mantissa else 0


def _same_token(want: str, got: str) -> bool:
    if want == got:
        return True
    if not (_NUMBER.match(want) and _NUMBER.match(got)):
        return False
    a, b = float(want), float(got)
    if not (math.isfinite(a) and math.isfinite(b)):
        return False
    exp = int(want.lower().split("e")[1]) if "e" in want.lower() else 0
    # a printed value is rounded: allow two units of its last printed digit plus a relative tolerance, so a fix
    # that changes summation order or fast-math rounding passes, and a gutted kernel (0.00000) does not
    unit = 10.0 ** (exp - _decimals(want))
    return abs(a - b) <= 2 * unit + REL_TOL * max(abs(a), abs(b))


def first_difference(want: list[str], got: list[str]) -> str | None:
    """None when `got` reproduces `want` (numbers within tolerance); else one line saying where it differs."""
    for i, (w, g) in enumerate(zip(want, got, strict=False)):
        wt, gt = w.split(), g.split()
        if len(wt) != len(gt) or not all(_same_token(a, b) for a, b in zip(wt, gt, strict=True)):
            return f"line {i + 1}: expected {w[:120]!r}, got {g[:120]!r}"
    if len(got) != len(want):
        extra = got[len(want)] if len(got) > len(want) else None
        return (f"printed {len(got)} line(s), expected {len(want)}"
                + (f"; first extra {extra[:120]!r}" if extra else f"; missing {want[len(got)][:120]!r}"))
    return None


@dataclass
class ArmRuns:
    """What one arm printed and launched in each measured run (cold and warm of every sample)."""

    outputs: list[list[str]] = field(default_factory=list)
    launches: list[int] = field(default_factory=list)
    exit_codes: list[int | None] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # the stderr tail of each run that exited with an error

    def add(self, run: Any) -> None:
        if run is None:
            return
        self.outputs.append(app_lines(getattr(run, "stdout", "") or ""))
        self.launches.append(int(run.result.launches))
        self.exit_codes.append(run.result.exit_code)
        if run.result.exit_code not in (0, None):
            self.errors.append(getattr(run.result, "stderr_tail", "") or "")


def recording(run_sample: Any, arms: dict[str, ArmRuns]) -> Any:
    """Wrap `measure.run_sample` so every run's stdout and launch count is kept per cwd (warm-ups included)."""

    def run(command: list[str], cwd: Any, index: int, **kw: Any) -> Any:
        sample = run_sample(command, cwd, index, **kw)
        arm = arms.setdefault(str(cwd), ArmRuns())
        arm.add(sample.cold)
        arm.add(sample.warm)
        return sample

    return run


def judge(expected: list[str] | None, before: ArmRuns, after: ArmRuns,
          who: str = "the agent's copy") -> tuple[bool, list[str], str]:
    """(behaviour kept, flags, what differed). The original's recorded output wins; the baseline arm's own output
    stands in when a case records none (a private suite). `who` names the changed copy in the notes."""
    flags: list[str] = []
    notes: list[str] = []
    want = expected
    if want is None and before.outputs:
        want = before.outputs[0]
    if want is None:
        return True, flags, "no expected output"
    for out in before.outputs:
        diff = first_difference(want, out)
        if diff:
            flags.append("baseline_output_mismatch")
            notes.append(f"the original's own output differed from the recorded one ({diff})")
            if all(o == before.outputs[0] for o in before.outputs):
                # the original prints the same thing run after run here (another Warp version rounds differently):
                # what it prints on this machine is the behaviour the agent's copy must keep
                want = before.outputs[0]
                notes.append(f"{who} is held to the original's output on this machine")
            break
    ok = True
    for out in after.outputs:
        diff = first_difference(want, out)
        if diff:
            ok = False
            flags.append("output_changed")
            notes.append(f"output changed: {diff}")
            break
    base_launches = max(before.launches, default=0)
    got_launches = min(after.launches, default=0)
    if base_launches > 0 and after.launches and got_launches == 0:
        ok = False
        flags.append("warp_removed")
        notes.append(f"the original launched {base_launches} kernels per run, {who} none")
    elif base_launches > 0 and after.launches and got_launches < base_launches:
        ok = False
        flags.append("launches_removed")
        notes.append(f"launches per run fell from {base_launches} to {got_launches}")
    if any(code not in (0, None) for code in after.exit_codes):
        ok = False
        flags.append("run_failed")
        code = next(c for c in after.exit_codes if c not in (0, None))
        last = next((t.strip().splitlines()[-1] for t in after.errors if t.strip()), "")
        detail = f": {last[:160]}" if last else ""
        notes.append(f"{who} exited with an error in a measured run (exit code {code}{detail})")
    return ok, flags, "; ".join(notes)


def _package_imports(source: bytes, package: str) -> set[str]:
    """Modules of `package` that one of its files imports (relative imports, or absolute ones naming it)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level > 0 or (node.module or "").split(".")[0] == package:
                out.add("." * node.level + (node.module or "") or ".")
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == package}
    return out


def entry_bypassed(command: list[str], original: dict[str, bytes], copy: dict[str, bytes]) -> str | None:
    """One line when the copy's entry module no longer imports anything of its own package while the original's did:
    the program was replaced (e.g. by prints of the expected output), which output alone cannot tell from a fix.

    Only for `python -m PACKAGE`; files are keyed by their path relative to the project folder."""
    if len(command) < 3 or command[1] != "-m":
        return None
    package = command[2].split(".")[0]
    entry = f"{package}/__main__.py"
    if entry not in original:
        return None
    before = _package_imports(original[entry], package)
    if not before:
        return None
    after = _package_imports(copy.get(entry, b""), package)
    if after:
        return None
    return (f"{entry} no longer imports anything of {package} (it imported {', '.join(sorted(before))}): the program "
            "was replaced, not fixed")
