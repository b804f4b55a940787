"""Small helpers every rule shares, defined once: Warp's kernel key, the CPU test, option truth, the first load of a
module, an options dict as source text, the one sentence that names a rebuild, and a ruled-out result.

Nothing here reads the file system or another rule; `context.py` re-exports `warp_key` and `norm_value`.
"""

from __future__ import annotations

import ast
import posixpath
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..dependency_advice import (  # noqa: F401 (re-exported for the rules)
    dependency_of,
    dist_relative,
    installed_owners,
    upstream_report,
)
from ..fix.transform.syntax import (  # noqa: F401 (re-exported for the rules)
    bound_names,
    dedent_lines,
    def_at,
    indent_of,
    literal_dict,
    module_bindings,
    norm_value,
    parents_of,
    read_names,
    span_of,
    top_statement,
)
from ..fix.transform.syntax import parsed as _parsed
from ..fmt import fmt_ms  # noqa: F401 (re-exported for the rules)
from ..hashdiff import content_hashed, warp_key  # noqa: F401 (re-exported for the rules)
from ..models import Build
from ..models.diagnosis import (
    Cause,
    Evidence,
    HashChange,
    RuledOut,
    RuleResult,
)
from ..models.report import Site, Trigger
from ..stats import band, median

if TYPE_CHECKING:
    from pathlib import Path

    from ..fix.edits import SourceView
    from ..models import Report


class RuleContext(Protocol):
    """What these helpers read of a rule's context (rules/context.py's RuleContext, which imports this module):
    named here as a protocol so the two modules do not import each other."""

    report: Report
    changes: list[HashChange]
    root: Path | None
    sources: SourceView
    memo: dict[str, Any]

    def owner(self, change: HashChange) -> str | None: ...

    def rel(self, file: str) -> str: ...

    @property
    def cold_compile_total(self) -> float: ...

__all__ = [
    "Claim",
    "MEDIUM_SHARE",
    "HIGH_SHARE",
    "first_load",
    "fmt_ms",
    "is_cpu",
    "is_false",
    "literal_dict",
    "material",
    "median",
    "noise_ms",
    "norm_value",
    "pch_off",
    "claims_of",
    "events_by_module",
    "rebuild_evidence",
    "rebuilt_sentence",
    "ruled_out",
    "NOTHING_COMPILED",
    "severity_of_share",
    "share_of_compile",
    "sized_here",
    "warp_key",
]


@dataclass(frozen=True)
class Claim:
    """A rule's declaration that it explains a rebuild event (the change's `to_seq`), with its priority.

    Several mechanisms can explain one rebuild (a kernel and an overload arrived together); the diagnose engine gives
    each event to its highest-priority claimant, which sizes it, and the others name it without counting it.
    """

    event: int
    mechanism: str
    priority: int


Events = dict[tuple[str, str], list[tuple[HashChange, list[Cause]]]]


def events_by_module(
    ctx: RuleContext, kinds: tuple[str, ...], keep: Callable[[HashChange], bool] | None = None
) -> Events:
    """Rebuilds (not failed loads) with causes of these kinds, per module and device, in load order: (change, the
    causes of those kinds). `keep` drops changes another notion excludes."""
    out: Events = defaultdict(list)
    for ch in ctx.changes:
        if ch.status.startswith("error") or (keep is not None and not keep(ch)):
            continue
        causes = [c for c in ch.causes if c.kind in kinds]
        if causes:
            out[(ch.module, ch.device)].append((ch, causes))
    return out


def claims_of(events: Events, mechanism: str, priority: int) -> list[Claim]:
    """The declaration of every rebuild in `events` for the engine's arbiter."""
    return [Claim(ch.to_seq, mechanism, priority) for items in events.values() for ch, _ in items]


def sized_here(ctx: RuleContext, changes: list[HashChange], mechanism: str) -> tuple[list[HashChange], str]:
    """(the rebuilds `mechanism` sizes, a basis note naming those the engine gave to another mechanism)."""
    mine = [ch for ch in changes if ctx.owner(ch) in (None, mechanism)]
    others: dict[str, list[int]] = {}
    for ch in changes:
        owner = ctx.owner(ch)
        if owner not in (None, mechanism):
            others.setdefault(str(owner), []).append(ch.to_seq)
    note = "".join(
        f"; rebuild(s) {', '.join(f'#{s}' for s in seqs)} also had another cause and are sized under {owner}"
        for owner, seqs in sorted(others.items())
    )
    return mine, note


NOTHING_COMPILED = "no module was compiled in the cold run"


def ruled_out(mechanism: str, signal: str) -> RuleResult:
    """A rule's whole result when its mechanism did not fire: one ruled-out line saying what was looked at."""
    return RuleResult(ruled_out=[RuledOut(mechanism=mechanism, signal=signal)])


def is_cpu(device: str) -> bool:
    """A CPU device alias (`cpu`, or a `cpu...` spelling)."""
    return device == "cpu" or device.startswith("cpu")


def is_false(text: str | None) -> bool:
    """Whether an option value turns the option off, by Warp's own test: Python truthiness.

    Warp reads boolean options with `if options[...]` and passes them on as `ctypes.c_bool`, so False, 0, None, ""
    and empty containers are off, while any non-empty string ("off", "no", "false" as a string) is on. The value is
    either source text (`False`, `'off'`) or the str() the hook records (`False`, `0`, `None`, ``); an expression
    that is not a literal (a name, a call) is not known to be false. The one blind spot: the hook's str() cannot
    tell the string "False" from the bool, so it counts as off.
    """
    if text is None:
        return False
    t = text.strip()
    if not t:
        return True  # str("") as recorded
    if t in _FALSY_LITERALS:
        return True
    try:
        return float(t.replace("_", "")) == 0.0  # 0, 0.0, -0, 0e3 ...
    except ValueError:
        return False  # a non-empty string, a name, a call: not known to be false


_FALSY_LITERALS = {"False", "None", "''", '""', "[]", "{}", "()", "set()", "dict()", "list()", "tuple()"}


def pch_off(build: Build) -> bool:
    """The build ran with `use_precompiled_headers` off (absent means Warp's default, on)."""
    v = build.options.get("use_precompiled_headers")
    return v is not None and is_false(v)


def first_load(builds: Iterable[Build], module: str, device: str) -> Build | None:
    """The earliest build (any status) of `module` on `device`."""
    loads = [b for b in builds if b.module == module and b.device == device]
    return min(loads, key=lambda b: b.seq) if loads else None


def rebuild_evidence(ch: HashChange, module: str, why: str, trigger: str = "; triggered at {}") -> Evidence:
    """The evidence line of one rebuild: `rebuilt_sentence` + why + where it was triggered, with its builds and ms."""
    return Evidence(
        fact=rebuilt_sentence(ch, module) + why + (trigger.format(ch.trigger) if ch.trigger else ""),
        builds=[ch.from_seq, ch.to_seq],
        ms=ch.cost_ms,
    )


def rebuilt_sentence(ch: HashChange, module: str) -> str:
    """`build #7 (0d422e6, compiled, 133 ms) rebuilt m after build #4 (6d3cdec)`: how every rebuild is named."""
    return (
        f"build #{ch.to_seq} ({ch.to_hash[:7]}, {ch.status}, {fmt_ms(ch.cost_ms)}) rebuilt {module} after "
        f"build #{ch.from_seq} ({ch.from_hash[:7]})"
    )


# ---------------------------------------------------------------------------------------------- materiality
#
# Every bar is relative to the run, never an absolute number of ms: a slower machine stretches a saving and the
# compile it belongs to alike, so the same project gets the same findings on any machine. A cold compile's
# run-to-run spread is wide (knowledge/CS-10.md: three baseline runs of one project spread from 2.45 s to 3.38 s),
# so a saving under a tenth of the wait is not worth a finding of its own.

MEDIUM_SHARE = 0.10  # a saving at least this share of the cold compile: medium severity, and worth a finding
HIGH_SHARE = 0.40  # ... at least this share: high severity


def share_of_compile(ctx: RuleContext, ms: float) -> float:
    """`ms` as a share of the run's cold compile (module loads plus precompiled headers; 0 when nothing built)."""
    total = ctx.cold_compile_total
    return ms / total if total > 0 else 0.0


def severity_of_share(share: float) -> Literal["high", "medium", "low"]:
    return "high" if share >= HIGH_SHARE else "medium" if share >= MEDIUM_SHARE else "low"


def noise_ms(ctx: RuleContext) -> float:
    """The run's own noise band on compile elapsed (stats.band: max(1 % of the median, 2 x raw MAD)); 0 with fewer
    than two samples, where the run cannot say how much it varies."""
    stat = ctx.report.compile_elapsed_ms
    if len(stat.values) < 2:
        return 0.0
    return band(stat) or 0.0


def material(ctx: RuleContext, ms: float) -> bool:
    """A saving worth a finding: at least MEDIUM_SHARE of the cold compile, and above the run's noise band."""
    total = ctx.cold_compile_total
    return (total <= 0 or ms / total >= MEDIUM_SHARE) and ms > noise_ms(ctx)


# ---- what the measured process reached, and names a user can write down ---------------------------------------

def reached(ctx: RuleContext, file: str) -> bool | None:
    """Did the measured process import `file` (relative to the scanned root, or absolute)? From the hook's record of
    imported files; None when the report has no such record (an older hook, or the log fallback)."""
    seen = ctx.report.imported_files
    if not seen:
        return None
    norm = ctx.memo.get("reached")
    if norm is None:  # asked per fact on a large project: normalise the record once per context
        norm = ctx.memo["reached"] = {_norm_path(f) for f in seen if not f.startswith("site:")}
    return _absolute(ctx, file) in norm


def is_entry(ctx: RuleContext, file: str) -> bool:
    """Is `file` the measured command's entry file? A script run as `python x.py` (or a package's __main__.py under
    `python -m`) runs as __main__, which the hook's record of imported files leaves out, though its module-level
    statements ran."""
    entry = ctx.report.entry
    return entry is not None and bool(entry.file) and _absolute(ctx, file) == _norm_path(entry.file or "")


def _absolute(ctx: RuleContext, file: str) -> str:
    """`file` (relative to the scanned root, or absolute) as a normalised absolute path."""
    base = str(ctx.root) if ctx.root is not None else ctx.report.cwd
    return _norm_path(file if file.startswith("/") else f"{base.rstrip('/')}/{file}")


def _norm_path(path: str) -> str:
    return posixpath.normpath(path)


def app_side_options(dists: list[str]) -> str:
    """What an application can do about compile cost that lives in code it does not own."""
    who = " and ".join(dists)
    return (
        f"These kernels belong to the installed {who}; do not edit it. From the application: keep Warp's kernel "
        "cache between runs (the default: do not clear it, and do not point WARP_CACHE_PATH or kernel_cache_dir at "
        "a temporary directory), so only the first run after an install pays this; pin the version of "
        f"{who} so an upgrade does not invalidate that cache unexpectedly; and, if the cost matters in the first "
        "run, raise it with the maintainers of " + who + "."
    )


# ---- the project's own source, parsed for edits ------------------------------------------------------------------
#
# Rules may parse the lines `ctx.sources` gives them (never the file system): the exact span of a definition, the
# names a kernel body reads, where a module-scope statement may go. None whenever the file is not the project's.


def parsed(ctx: RuleContext, file: str) -> tuple[list[str], ast.Module] | None:
    """(lines, module AST) of a project file, or None (not the project's, unreadable, not valid Python)."""
    return _parsed(ctx.sources, file)


def own_frame(ctx: RuleContext, t: Trigger) -> Site:
    """The application's own line that led to a load: the innermost frame of the trigger's stack that no installed
    distribution owns (a launch inside a library, `model.collide(state)`, is the app's call of it), else the
    trigger's line itself. A finding's location is where the user can act, never a file of an installed package."""
    for s in [*t.stack, t, *([t.outer] if t.outer is not None else [])]:
        if s.file and dependency_of(ctx, s.file) is None:
            return s
    return t


def place(ctx: RuleContext, file: str, line: int) -> str:
    """`file:line` for a fix's prose: relative inside the project; a dependency's file as its maintainers name it,
    with the distribution (`pkg/mod.py:12 in pkg`), never this machine's site-packages path."""
    dist = dependency_of(ctx, file)
    if dist is None:
        return f"{ctx.rel(file)}:{line}"
    return f"{dist_relative(file)}:{line} (in the installed {dist})"


# ---- load-call arguments (CS-8 and CS-13 both read max_workers) ------------------------------------------------


def _int_or_none(text: str | int | None) -> int | None:
    if isinstance(text, int):
        return text
    if text is None:
        return None
    try:
        return int(str(text).strip())
    except ValueError:
        return None


def parallel_value(value: str | int | None) -> tuple[bool, bool]:
    """(may run in parallel, certain) for a max_workers / load_module_max_workers value."""
    if value is None:
        return False, True
    n = _int_or_none(value)
    if n is not None:
        return n > 1, True
    if str(value).strip() == "None":
        return True, True  # None means min(cpu_count, 4)
    return True, False  # a variable or expression: may be > 1
