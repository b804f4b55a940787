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


def first_difference(want: list[str], got: list[str], volatile: Volatile | None = None) -> str | None:
    """None when `got` reproduces `want` (numbers within tolerance; `volatile` fields and lines, which differ
    between runs of the unchanged program, set aside); else one line saying where it differs."""
    if volatile is not None and volatile.lines:
        want, got, masks = volatile.align(want, got)
        if isinstance(masks, str):
            return masks
    else:
        masks = [frozenset()] * len(want)
    for i, (w, g) in enumerate(zip(want, got, strict=False)):
        wt, gt = w.split(), g.split()
        skip = masks[i] if i < len(masks) else frozenset()
        if len(wt) != len(gt) or not all(j in skip or _same_token(a, b)
                                         for j, (a, b) in enumerate(zip(wt, gt, strict=True))):
            return f"line {i + 1}: expected {w[:120]!r}, got {g[:120]!r}"
    if len(got) != len(want):
        extra = got[len(want)] if len(got) > len(want) else None
        return (f"printed {len(got)} line(s), expected {len(want)}"
                + (f"; first extra {extra[:120]!r}" if extra else f"; missing {want[len(got)][:120]!r}"))
    return None


# ---------------------------------------------------------------------------------------------- volatile output
#
# A program that prints its own elapsed time, a frame rate, a date or a temporary path prints something else on
# every run of the same code: that is not behaviour, and holding a fix to it refuses every fix. What differs between
# the original's own runs is found field by field: lines are matched by their shape (digits folded), a line whose
# shape is the same in every run keeps its fixed words and loses only the fields that moved; a line that is not in
# every run is set aside whole. Everything else is compared as before.

_DIGITS = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def shape(line: str) -> str:
    """The line with every number folded: `elapsed 47.5 s` and `elapsed -0.4 s` have one shape."""
    return _DIGITS.sub("#", line)


@dataclass
class Volatile:
    """Where the original's own runs disagree: (line of the first run) -> the field indices that moved, or None for
    the whole line; `seen` holds the shapes of lines set aside whole, so a copy that prints one of them is not
    blamed for an extra line."""

    lines: dict[int, frozenset[int] | None] = field(default_factory=dict)
    reference: list[str] = field(default_factory=list)  # the first run's lines (what `lines` indexes)
    seen: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)

    def align(self, want: list[str], got: list[str]) -> tuple[list[str], list[str], list[frozenset[int]] | str]:
        """(want, got, masks) with the whole-line volatile lines of both left out and the kept lines paired by
        shape; a string (the difference) when a stable line of `want` has no partner in `got`."""
        keep_want = [i for i in range(len(want)) if self.lines.get(i, frozenset()) is not None]
        if len(want) == len(got) and all(self.lines.get(i, frozenset()) is not None for i in range(len(want))):
            return want, got, [self.lines.get(i) or frozenset() for i in range(len(want))]
        pairs = _pairs([shape(want[i]) for i in keep_want], [shape(x) for x in got])
        matched = {b for _a, b in pairs}
        for j, line in enumerate(got):
            if j not in matched and shape(line) not in self.seen:
                return want, got, f"printed a line the original never printed: {line[:120]!r}"
        if len(pairs) < len(keep_want):
            hit = {a for a, _b in pairs}
            miss = next(keep_want[a] for a in range(len(keep_want)) if a not in hit)
            return want, got, f"missing {want[miss][:120]!r}"
        w2 = [want[keep_want[a]] for a, _b in pairs]
        g2 = [got[b] for _a, b in pairs]
        return w2, g2, [self.lines.get(keep_want[a]) or frozenset() for a, _b in pairs]


def _pairs(a: list[str], b: list[str]) -> list[tuple[int, int]]:
    """(index in a, index in b) of the lines the two sequences share, in order (difflib's matching blocks)."""
    import difflib

    out: list[tuple[int, int]] = []
    for blk in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_matching_blocks():
        out += [(blk.a + k, blk.b + k) for k in range(blk.size)]
    return out


def volatile_fields(runs: list[list[str]]) -> Volatile:
    """The fields and lines that differ between runs of the unchanged program (at least two runs needed)."""
    v = Volatile(reference=list(runs[0]) if runs else [])
    if len(runs) < 2:
        return v
    ref = runs[0]
    whole: set[int] = set()
    moved: dict[int, set[int]] = {}
    examples: dict[int, str] = {}
    for other in runs[1:]:
        pairs = dict(_pairs([shape(x) for x in ref], [shape(x) for x in other]))
        for i, line in enumerate(ref):
            j = pairs.get(i)
            if j is None:
                whole.add(i)
                v.seen.add(shape(line))
                continue
            a, b = line.split(), other[j].split()
            for k, (x, y) in enumerate(zip(a, b, strict=False)):
                if not _same_token(x, y):
                    moved.setdefault(i, set()).add(k)
                    examples.setdefault(i, f"{line[:60]!r} / {other[j][:60]!r}")
        unmatched = set(range(len(other))) - set(pairs.values())
        v.seen |= {shape(other[j]) for j in unmatched}
    for i in sorted(whole):
        v.lines[i] = None
        v.notes.append(f"line {i + 1} ({ref[i][:60]!r}) is not printed by every run of the original")
    for i in sorted(set(moved) - whole):
        v.lines[i] = frozenset(moved[i])
        fields = ", ".join(str(k + 1) for k in sorted(moved[i]))
        v.notes.append(f"line {i + 1} field {fields} ({examples[i]}) differs between runs of the original")
    return v


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
    """(behaviour kept, flags, what differed): `judge_runs` without the volatile fields it set aside."""
    v = judge_runs(expected, before, after, who)
    return v.ok, v.flags, v.note


@dataclass
class Verdict:
    ok: bool
    flags: list[str]
    note: str
    volatile: list[str] = field(default_factory=list)  # what was set aside, and why


def judge_runs(expected: list[str] | None, before: ArmRuns, after: ArmRuns,
               who: str = "the agent's copy") -> Verdict:
    """Behaviour kept or not. The original's recorded output wins; the baseline arm's own output stands in when a case
    records none (a private suite). Fields that differ between the original's own runs (a printed elapsed time, a
    date) are set aside in every comparison and named. `who` names the changed copy in the notes."""
    flags: list[str] = []
    notes: list[str] = []
    runs = [o for o in before.outputs if o is not None]
    if expected is None and not runs:
        return Verdict(True, flags, "no expected output")
    vol = volatile_fields(runs)  # from the original's own runs only: a recording from elsewhere is no evidence
    want = runs[0] if runs else list(expected or [])
    if expected is not None and runs:
        diff = first_difference(runs[0], expected, vol)
        if diff:
            # another Warp version rounds differently: what the original prints on this machine is the behaviour
            flags.append("baseline_output_mismatch")
            notes.append(f"the original's own output differed from the recorded one ({diff}); {who} is held to the "
                         "original's output on this machine")
    if vol.notes:
        notes.append("set aside as volatile: " + "; ".join(vol.notes))
    ok = True
    for out in after.outputs:
        diff = first_difference(want, out, vol)
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
    return Verdict(ok, flags, "; ".join(notes), vol.notes)


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
