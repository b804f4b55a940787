"""What every rule reads: the measurement, the static scan and the hash diffs, plus small shared helpers.

Rules are pure functions `evaluate(ctx) -> RuleResult`; they read facts only, never a project's name or path, and
never the file system: whatever they quote from the sources (call sites, import lines) the scan put in ScanFacts,
and the exact lines an edit replaces come from `sources`, a read-only view of the project's files.
`root` only shortens the paths a finding prints.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..fix.edits import SourceView
from ..models import Build, KernelInfo, PchBuild, Report
from ..models.diagnosis import Cause, Evidence, HashChange, Location, Severity
from ..models.report import KernelCreation
from ..models.scan import CREATION_OPTIONS, CallFact, ConfigSetFact, ImportRef, KernelDef, ScanFacts
from .helpers import (  # noqa: F401 (fmt_ms, norm_value, warp_key re-exported)
    fmt_ms,
    is_entry,
    norm_value,
    reached,
    severity_of_share,
    share_of_compile,
    warp_key,
)


@dataclass
class RuleContext:
    report: Report
    scan: ScanFacts | None
    changes: list[HashChange] = field(default_factory=list)
    root: Path | None = None  # the scanned source root; locations are made relative to it
    owners: dict[int, str] = field(default_factory=dict)  # rebuild event (to_seq) -> the mechanism that sizes it
    removals: dict[int, Build | None] = field(default_factory=dict)  # owned event -> the build its fix removes
    # read-only lines of the project's own files, for the exact text an edit replaces (see probe/fix/edits.py)
    sources: SourceView = field(default_factory=SourceView)
    guard_index: Any = None  # rules/argv_flags.py: built once per context when the scan did not bring one
    memo: dict[str, Any] = field(default_factory=dict)  # per-context caches of pure queries (helpers.reached)

    def owner(self, change: HashChange) -> str | None:
        """The mechanism the diagnose engine gave this rebuild to (None: unarbitrated, every claimant sizes it)."""
        return self.owners.get(change.to_seq)

    @property
    def samples(self) -> int:
        return max(0, self.report.samples - self.report.failed_samples)

    @property
    def loads(self) -> list[Build]:
        """Cold-run builds that produced a loaded module (compiled or cached)."""
        return [b for b in self.report.builds if b.status in ("compiled", "cached")]

    @property
    def compiled(self) -> list[Build]:
        return [b for b in self.report.builds if b.status == "compiled"]

    @property
    def devices(self) -> set[str]:
        return {b.device for b in self.report.builds if b.device}

    @property
    def cpu_only(self) -> bool:
        devs = self.devices
        return bool(devs) and all(d == "cpu" or d.startswith("cpu") for d in devs)

    def rel(self, file: str) -> str:
        """A path relative to the source root when it lies inside it, else as recorded."""
        if self.root is None:
            return file
        try:
            p = Path(file)
            if not p.is_absolute():
                return file
            rel = os.path.relpath(p, self.root)
        except ValueError:
            return file
        return file if rel.startswith("..") else Path(rel).as_posix()

    def loc(self, file: str, line: int, note: str = "") -> Location:
        return Location(file=self.rel(file), line=line, note=note)

    # ---- measurement helpers ------------------------------------------------------------------------------------

    @property
    def cold_module_total(self) -> float:
        """Summed ms of the reference sample's cold loads (PCH excluded)."""
        return sum(b.ms for b in self.report.builds)

    @property
    def cold_compile_total(self) -> float:
        """Cold loads plus the precompiled headers of the reference sample: the compile time a user waits for.

        Build-derived savings are judged as a share of this: on the CPU the header dominates small apps, and a
        saving that looks large against module time alone may be a small part of the wait.
        """
        return self.cold_module_total + sum(p.ms for p in self.report.pch)

    def build(self, seq: int) -> Build | None:
        for b in self.report.builds:
            if b.seq == seq:
                return b
        return None

    def causes(self, *kinds: str) -> list[tuple[HashChange, Cause]]:
        """(change, cause) pairs of the given cause kinds, in load order."""
        return [(ch, c) for ch in self.changes for c in ch.causes if c.kind in kinds]

    def severity_for(self, ms: float | None) -> Severity:
        """Severity from what the fix would save as a share of the cold compile time (`helpers.severity_of_share`)."""
        if ms is None or ms <= 0:
            return "info"
        return severity_of_share(share_of_compile(self, ms))

    def trigger_loc(self, build: Build, note: str = "") -> Location | None:
        t = build.trigger
        if t is None:
            return None
        return self.loc(t.file, t.line, note or f"{t.api or 'load'} in {t.function or '?'}")

    # ---- scan helpers -------------------------------------------------------------------------------------------

    def scan_kernel(self, info: KernelInfo) -> KernelDef | None:
        """The scanned definition of a measured kernel: same file and Warp key (or name), nearest at/after its line.

        The measurement records the line of the first decorator (`co_firstlineno`); the scan records the `def`
        line, which is what a reader looks for. Matching by file keeps two same-named kernels apart.
        """
        if self.scan is None:
            return None
        found = self._scanned_kernel(info)
        if found is None:  # a project's own decorator the scan cannot follow: the line the run recorded
            from ..fix.transform.recorded_def import kernel_def_at

            found = kernel_def_at(self, info)
        return found

    def _scanned_kernel(self, info: KernelInfo) -> KernelDef | None:
        assert self.scan is not None
        key = info.generic_parent or info.key
        name = key.split("__locals__")[-1].split(".")[-1]
        file = self.rel(info.file) if info.file else None
        cands = [k for k in self.scan.kernels if warp_key(k.qualname) == key or k.name == name]
        if file is not None and not Path(file).is_absolute():
            cands = [k for k in cands if k.file == file]  # inside the scanned root: the file must agree
        if not cands:
            return None
        if info.line is not None:
            after = [k for k in cands if k.line >= info.line]
            if after:
                return min(after, key=lambda k: k.line)
        return cands[0] if len(cands) == 1 else None

    def kernel_loc(self, info: KernelInfo, note: str = "", module: str | None = None,
                   after_ms: float | None = None) -> Location | None:
        """Where a measured kernel is defined: the scan's `def` line, else the recorded decorator line. A kernel whose
        source Warp generated (`wp.map`'s `<string>`) has no line of its own: the app's line whose call made it, from
        the run's record (of `module`, the first made after `after_ms` when given, else the last)."""
        k = self.scan_kernel(info)
        if k is not None:
            return self.loc(k.file, k.line, note)
        if info.file and info.line and not info.file.startswith("<"):
            return self.loc(info.file, info.line, note)
        made = self._made(info, module)
        late = [c for c in made if after_ms is not None and c.start_ms >= after_ms]
        pick = late[0] if late else made[-1] if made else None
        if pick is not None:
            return self.loc(pick.file, pick.line, note)
        return self.loc(info.file, info.line, note) if info.file and info.line else None

    def _made(self, info: KernelInfo, module: str | None) -> list[KernelCreation]:
        return sorted((c for c in self.report.kernel_creations
                       if c.key == info.key and c.file and not c.file.startswith("<") and c.line
                       and (module is None or c.module == module)), key=lambda c: c.start_ms)

    def made_at(self, info: KernelInfo, module: str | None = None, after_ms: float | None = None,
                note: str = "") -> list[Location]:
        """The app's lines whose calls made a kernel of Warp-generated source (`info.key`, of `module`), from the
        run's record, in the order made: those after `after_ms` when given and any are, else all."""
        made = self._made(info, module)
        late = [c for c in made if after_ms is not None and c.start_ms >= after_ms]
        return dedupe_locations([self.loc(c.file, c.line, note) for c in (late or made)])


def dedupe_locations(locs: list[Location | None]) -> list[Location]:
    """Drop Nones and repeats of one file:line, keeping the first note."""
    out: list[Location] = []
    seen: set[tuple[str, int]] = set()
    for loc in locs:
        if loc is None or (loc.file, loc.line) in seen:
            continue
        seen.add((loc.file, loc.line))
        out.append(loc)
    return out


# ---------------------------------------------------------------------------------------------- option deadlines


@dataclass
class LateConfig:
    """A `wp.config.X = v` for an option modules copy at creation, run after a kernel-bearing module was imported.

    `confirmed` means the measurement saw it: a build of an affected module carried a different X than the live
    wp.config (Build.config_shadow), so the assignment never reached that module. Unconfirmed ones may still be
    harmless (the module sets X itself, or is created later), so rules should not report them as findings.
    """

    fact: ConfigSetFact
    option: str
    value: str
    imports: list[ImportRef]
    kernel_modules: list[str]  # Python modules whose Warp modules already existed at the assignment
    builds: list[Build]  # builds that show the option did not arrive
    confirmed: bool

    @property
    def modules(self) -> list[str]:
        """Warp modules the measurement shows missed the assignment."""
        return sorted({b.module for b in self.builds})


def late_config_assignments(ctx: RuleContext) -> list[LateConfig]:
    """Option deadlines missed at import time (shared by CS-3 and CS-10: enable_backward belongs to CS-10).

    A module copies enable_backward, max_unroll, lineinfo, deterministic, deterministic_max_records and
    compile_time_trace from wp.config when it is created; assigning the global afterwards changes nothing for it
    and produces no symptom but a missing effect. The scan says the assignment comes after an import that creates
    kernel modules; the measurement confirms when such a module's build shows the old value (config_shadow).
    """
    scan = ctx.scan
    if scan is None:
        return []
    out: list[LateConfig] = []
    for c in scan.config_sets:
        if not (c.copied_at_module_creation or c.name in CREATION_OPTIONS):
            continue
        if reached(ctx, c.file) is False and not is_entry(ctx, c.file):
            continue  # a file the measured run never imported: its assignment is no deadline of this run
        refs: list[ImportRef] = []
        seen: set[tuple[str, int]] = set()
        for r in c.after_kernel_imports + c.after_kernel_imports_transitive:
            if (r.module, r.line) not in seen:
                seen.add((r.module, r.line))
                refs.append(r)
        kernel_modules = sorted({m for r in refs for m in r.kernel_modules})
        if c.after_kernels_in_file:
            own = scan.module_of_file(c.file)
            if own is not None:
                kernel_modules = sorted({*kernel_modules, own.name, *([own.main_alias] if own.main_alias else [])})
        if not kernel_modules:
            continue
        files = {scan.python_modules_with_kernels.get(m) for m in kernel_modules} - {None}
        want = norm_value(c.value)
        builds = []
        for b in ctx.report.builds:
            shadow = b.config_shadow.get(c.name)
            if not shadow or len(shadow) < 2 or shadow[0] == shadow[1]:
                continue
            module_value, config_value = shadow[0], shadow[1]
            literal = want is not None and re.fullmatch(r"[\w.+-]+", want or "") is not None
            if literal and (config_value != want or module_value == want):
                continue
            in_scope = b.module in kernel_modules or any(k.file and ctx.rel(k.file) in files for k in b.kernels)
            if in_scope:
                builds.append(b)
        out.append(
            LateConfig(
                fact=c,
                option=c.name,
                value=c.value,
                imports=refs,
                kernel_modules=kernel_modules,
                builds=builds,
                confirmed=bool(builds),
            )
        )
    return out


# ---------------------------------------------------------------------------------------------- what a fix removes

# options that are part of the CPU precompiled header's key: a build under other values needs another header
PCH_KEY_OPTIONS = ("mode", "optimization_level", "verify_fp", "cpu_compiler_flags", "block_dim")

BuildKey = tuple[str, str, int | None]


def build_key(b: Build) -> BuildKey:
    """What Warp compiles separately: one module, device and block_dim."""
    return (b.module, b.device, b.block_dim)


def remaining_builds(ctx: RuleContext) -> dict[BuildKey, Build]:
    """Per module, device and block_dim: the build that remains once every rebuild is fixed.

    That is the compiled build of the last identity loaded (its hash); a last identity never compiled in this run
    leaves the last compiled build, and a key with no compiled build at all leaves its last load. The same choice
    CS-10 makes when it counts only the remaining build.
    """
    last_load: dict[BuildKey, Build] = {}
    compiled: dict[BuildKey, list[Build]] = defaultdict(list)
    for b in sorted(ctx.report.builds, key=lambda b: b.seq):
        if b.status in ("compiled", "cached"):
            last_load[build_key(b)] = b
        if b.status == "compiled":
            compiled[build_key(b)].append(b)
    out: dict[BuildKey, Build] = {}
    for key, final in last_load.items():
        builds = compiled.get(key, [])
        same = [b for b in builds if b.hash == final.hash]
        out[key] = same[-1] if same else builds[-1] if builds else final
    return out


@dataclass
class Superseded:
    """What fixing a set of rebuilds removes: the builds they superseded, and headers only those builds needed."""

    builds: list[Build]
    headers: list[PchBuild]
    remaining: list[Build]  # the builds of the same modules that stay after the fix (for the basis text)
    events: int  # rebuild events sized

    @property
    def module_ms(self) -> float:
        return sum(b.ms for b in self.builds)

    @property
    def pch_ms(self) -> float:
        return sum(p.ms for p in self.headers)

    @property
    def ms(self) -> float:
        return self.module_ms + self.pch_ms

    def removal_evidence(self, module: str, condition: str) -> Evidence:
        """`with <condition> m builds once, as the final build #7 (..); the fix removes the superseded build(s) ..`."""
        fact = (
            f"with {condition} {module} builds once, as the final build "
            + ", ".join(f"#{b.seq} ({fmt_ms(b.ms)})" for b in self.remaining)
            + "; the fix removes the superseded build(s) "
            + ", ".join(f"#{b.seq} ({fmt_ms(b.ms)})" for b in self.builds)
        )
        if self.headers:
            fact += f" and the precompiled header only they needed ({fmt_ms(self.pch_ms)})"
        return Evidence(fact=fact, builds=[b.seq for b in self.builds + self.remaining], ms=self.ms)

    def basis(self, cause: str) -> str:
        """`the build(s) of m superseded by <cause>, which the fix removes: #4 (109 ms); the final build #7 ...`."""
        seqs = ", ".join(f"#{b.seq} ({fmt_ms(b.ms)})" for b in self.builds) or "none"
        mods = ", ".join(sorted({b.module for b in self.builds} | {b.module for b in self.remaining}))
        text = f"the build(s) of {mods} superseded by {cause}, which the fix removes: {seqs}"
        if self.headers:
            text += f", plus the precompiled header only they needed ({fmt_ms(self.pch_ms)})"
        if self.remaining:
            rest = ", ".join(f"#{b.seq} ({fmt_ms(b.ms)})" for b in self.remaining)
            text += f"; the final build {rest} remains (it carries everything)"
        return text


def _pch_key(b: Build) -> tuple[str | None, ...]:
    return (b.device, *(b.options.get(k) for k in PCH_KEY_OPTIONS))


def plan_removals(ctx: RuleContext, changes: list[HashChange]) -> dict[int, Build | None]:
    """Which build each rebuild event's fix removes (event `to_seq` -> build, None when nothing is left to remove).

    Without the late arrival the module would have built once, as the build that remains (`remaining_builds`), so
    the saving is every other build of that module/device/block_dim, not the sum of the rebuilds: a rebuild
    carries everything and the last one stays. Each event is charged the build it replaced (its `from` build);
    when that is the build that remains, or another event already took it, it falls back to the event's own
    rebuild, then to any still uncounted superseded build of the events' modules. The diagnose engine plans every
    owned event at once, so two mechanisms never charge the same build.
    """
    keep_seqs = {b.seq for b in remaining_builds(ctx).values()}
    by_seq = {b.seq: b for b in ctx.report.builds}

    def superseded(b: Build | None) -> bool:
        return b is not None and b.status in ("compiled", "cached") and b.seq not in keep_seqs

    plan: dict[int, Build | None] = {}
    taken: set[int] = set()
    unsized: list[HashChange] = []
    for ch in sorted(changes, key=lambda c: c.to_seq):
        b = by_seq.get(ch.from_seq)
        if superseded(b) and b is not None and b.seq not in taken:
            taken.add(b.seq)
            plan[ch.to_seq] = b
        else:
            unsized.append(ch)
    keys = {build_key(by_seq[s]) for ch in changes for s in (ch.from_seq, ch.to_seq) if s in by_seq}
    for ch in unsized:
        b = by_seq.get(ch.to_seq)
        if not (superseded(b) and b is not None and b.seq not in taken):
            spare = [
                x
                for x in sorted(ctx.report.builds, key=lambda x: x.seq)
                if build_key(x) in keys and superseded(x) and x.seq not in taken and x.seq <= ch.to_seq
            ]
            b = spare[0] if spare else None
        if b is not None:
            taken.add(b.seq)
        plan[ch.to_seq] = b
    return plan


def superseded_by(ctx: RuleContext, changes: list[HashChange]) -> Superseded:
    """Size the fix of these rebuild events: each event removes one build, the one it superseded (`plan_removals`;
    the engine's plan when it made one, else planned here for these events alone).

    A precompiled header built during a superseded build counts too when no other compiled build shares its key
    (mode, optimization level, verify_fp, CPU flags, block_dim): with the fix nothing needs it.
    """
    keep = remaining_builds(ctx)
    by_seq = {b.seq: b for b in ctx.report.builds}
    own = [ch for ch in changes if ch.to_seq not in ctx.removals]  # events the engine did not plan
    planned = {ch.to_seq: ctx.removals[ch.to_seq] for ch in changes if ch.to_seq in ctx.removals}
    planned.update(plan_removals(ctx, own))
    builds = sorted({b.seq: b for b in planned.values() if b is not None}.values(), key=lambda b: b.seq)
    old = {b.seq for b in builds}
    keys = {build_key(by_seq[s]) for ch in changes for s in (ch.from_seq, ch.to_seq) if s in by_seq}
    still_used = {_pch_key(b) for b in ctx.compiled if b.seq not in old}
    headers = [p for p in ctx.report.pch if p.during_seq in old and _pch_key(by_seq[p.during_seq]) not in still_used]
    remaining = sorted({keep[k].seq: keep[k] for k in keys if k in keep}.values(), key=lambda b: b.seq)
    return Superseded(builds=builds, headers=headers, remaining=remaining, events=len(changes))


# ---------------------------------------------------------------------------------------------- call sites

CallSite = CallFact  # a call `name(...)` / `obj.name(...)` in the scanned sources (the scan's fact, by its old name)


def call_sites(ctx: RuleContext, name: str) -> list[CallSite]:
    """The scanned calls of a function or method named `name`, in file and walk order. The scan keeps the calls on
    the way to a function-scope wp.overload registration (ScanFacts.calls), which is what CS-6 follows."""
    return ctx.scan.calls_named(name) if ctx.scan is not None else []
