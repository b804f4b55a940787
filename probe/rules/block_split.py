"""CS-5's fix as edits: one named module per stable launch block_dim, or one block_dim at the app's launch sites.

The module keeps the kernels of its most common launch size; each other stable size's kernels move to a module of
their own (`@wp.kernel(module="<mod>_bd<N>")`) and a kernel launched at several sizes to a module of its own, so
each module is built at one block_dim. Moving a kernel is only possible where its `def` is the project's; a
dependency's kernels get the application-side lever instead (the app's own launches of them at one block_dim, a
performance judgement for a person), and without one an upstream report for the library's maintainers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..fix.place import cuda_edits as ce
from ..models.diagnosis import Applicability, Edit, UpstreamReport
from ..ownership import owner_of
from .context import RuleContext

LAUNCH_APIS = {"launch", "launch_tiled"}


def kernel_name(key: str) -> str:
    """A Warp kernel key's Python name (`Solver.step__locals__k` -> `k`)."""
    return key.split("__locals__")[-1].split(".")[-1]


@dataclass
class SplitPlan:
    stay: int | None  # the launch block_dim whose kernels stay in the module
    moves: dict[str, str] = field(default_factory=dict)  # kernel key -> the module it moves to
    own: list[str] = field(default_factory=list)  # kernels launched at several block_dims
    edits: list[Edit] = field(default_factory=list)
    applicability: Applicability | None = None
    review: str = ""
    upstream: UpstreamReport | None = None
    lever: str = "none"  # "split" | "launch" | "upstream" | "preload" | "none"

    def fix_text(self, mod: str) -> str:
        if not self.moves:
            return ""
        groups: dict[str, list[str]] = {}
        for key, name in self.moves.items():
            groups.setdefault(name, []).append(key)
        moved = "; ".join(
            f'@wp.kernel(module="{n}") on {", ".join(sorted(ks))}'
            + (" (its block_dim is not stable: a module of its own)" if set(ks) <= set(self.own) else "")
            for n, ks in sorted(groups.items())
        )
        if self.lever == "launch":
            return (
                f"{mod}'s kernels are a dependency's, so the application cannot move them; it can launch them at one "
                f"block_dim: pass block_dim={self.stay} at its launches of {', '.join(sorted(self.moves))} "
                "(the edits), "
                "so the module is built at one size."
            )
        if self.lever == "upstream":
            return (
                f"{mod}'s kernels and the launches that size them are a dependency's: nothing in the application "
                "decides their block_dim. The upstream report holds the evidence and the change for its maintainers "
                f"({moved})."
            )
        keep = f"the kernels launched at block_dim {self.stay} stay in {mod}" if self.stay is not None else ""
        return (
            "Give each stable launch block_dim its own named module, so no kernel is built at a block_dim it never "
            f"runs at: {moved}" + (f"; {keep}" if keep else "") + ". Launches and their block_dim values stay as "
            "they are."
        )

    def fields(self) -> dict[str, object]:
        return {"edits": self.edits, "applicability": self.applicability, "review": self.review,
                "upstream": self.upstream}


def _moves(mod: str, stable: dict[int | None, list[str]], own: list[str]) -> tuple[int | None, dict[str, str]]:
    stay = max(stable, key=lambda bd: (len(stable[bd]), -(bd or 0))) if stable else None
    moves: dict[str, str] = {}
    for bd, keys in sorted(stable.items(), key=lambda kv: kv[0] or 0):
        if bd != stay:
            moves.update({k: f"{mod}_bd{bd}" for k in keys})
    moves.update({k: f"{mod}_{kernel_name(k)}" for k in own})
    return stay, moves


def _options_note(ctx: RuleContext, mod: str, new: list[str]) -> str:
    """Module options written for `mod` in the sources do not follow its kernels into the new modules."""
    if ctx.scan is None:
        return ""
    writes = [m for m in ctx.scan.module_options if m.target == mod and set(m.options) - {"block_dim"}]
    if not writes:
        return ""
    where = ", ".join(f"{m.file}:{m.line} ({', '.join(sorted(m.options))})" for m in writes)
    return (
        f" Options written for {mod} at {where} do not reach {', '.join(new)}: set them on those modules too "
        "(wp.get_module(name).options.update(...)) before their first load."
    )


def _split_edits(ctx: RuleContext, moves: dict[str, str], defs: dict[str, tuple[str, int]]) -> list[Edit] | None:
    edits = []
    for key, name in sorted(moves.items()):
        where = defs.get(key)
        e = ce.kernel_module_edit(ctx.sources, where[0], where[1], name) if where is not None else None
        if e is None:
            return None
        edits.append(e)
    return edits


def _launch_edits(ctx: RuleContext, moves: dict[str, str], own: list[str], stay: int | None) -> list[Edit] | None:
    """block_dim=<stay> at every launch of the moved kernels in the project; None when one is not the app's."""
    scan = ctx.scan
    if scan is None or stay is None or any(k in own for k in moves):
        return None
    edits: list[Edit] = []
    for key in sorted(moves):
        sites = [la for la in scan.launches if la.kernel_name == kernel_name(key) and la.block_dim is not None]
        if not sites:
            return None  # launched from code the scan did not see (the dependency's own)
        for la in sites:
            calls = ce.calls_at(ctx.sources, la.file, la.line, LAUNCH_APIS)
            e = ce.keyword_edit(ctx.sources, la.file, calls[0], "block_dim", str(stay)) if len(calls) == 1 else None
            if e is None:
                return None
            edits.append(e)
    return edits


def _upstream(ctx: RuleContext, mod: str, moves: dict[str, str], defs: dict[str, tuple[str, int]],
              measured_ms: float) -> UpstreamReport:
    places = [ctx.loc(f, ln, f"move to module {moves[k]}") for k, (f, ln) in sorted(defs.items()) if k in moves]
    root = str(ctx.root) if ctx.root is not None else None
    dists = {o.distribution for p in places if (o := owner_of(p.file, ctx.report.owners, root)) and o.distribution}
    dist = sorted(dists)[0] if len(dists) == 1 else None
    change = "; ".join(f'@wp.kernel(module="{n}") on {kernel_name(k)}' for k, n in sorted(moves.items()))
    text = (
        f"On CUDA, block_dim is part of a Warp module's identity: {mod} is launched at several block_dim values and "
        f"is built once per value, each build holding all its kernels ({measured_ms:.0f} ms of NVRTC builds "
        f"measured for all variants). Giving each launch size its own module builds each kernel once: {change}."
    )
    return UpstreamReport(distribution=dist, places=places, measured_ms=round(measured_ms, 1), change=change,
                          text=text)


def plan_split(
    ctx: RuleContext,
    mod: str,
    stable: dict[int | None, list[str]],
    own: list[str],
    defs: dict[str, tuple[str, int]],
    measured_ms: float = 0.0,
) -> SplitPlan:
    """The edits of CS-5's fix for one module: split it by launch block_dim, or the app's launch lever, or upstream.

    `stable` maps a launch block_dim to the kernels always launched at it, `own` lists kernels launched at several,
    `defs` gives each kernel's file and line (a decorator or def line, absolute or relative to the project root).
    """
    stay, moves = _moves(mod, stable, own)
    plan = SplitPlan(stay=stay, moves=moves, own=list(own))
    if not moves:
        plan.applicability = "manual"
        plan.review = "every launched kernel of the module already shares one block_dim: there is nothing to split"
        return plan
    edits = _split_edits(ctx, moves, defs)
    new = sorted(set(moves.values()))
    if edits is not None:
        plan.lever, plan.edits, plan.applicability = "split", edits, "review"
        plan.review = (
            f"The kernels move to new named modules ({', '.join(new)}): code that names {mod} (wp.get_module, "
            "set_module_options(module=...), a force_load list) then reaches only the kernels left in it. On the CPU "
            "every launch runs at block_dim 1, so there the split costs one more, smaller module."
            + _options_note(ctx, mod, new)
        )
        return plan
    launch = _launch_edits(ctx, moves, own, stay)
    if launch:
        plan.lever, plan.edits, plan.applicability = "launch", launch, "review"
        plan.review = (
            f"Every launch of {mod}'s kernels then runs at block_dim {stay}: a block size tuned for the device can "
            "matter for the kernels' speed there, so time them on the GPU before keeping it; a kernel that uses "
            "tiles or reads its block size may also compute differently."
        )
        return plan
    if not any(ce.is_dependency(ctx, f) for f, _ln in defs.values()):
        plan.lever, plan.applicability = "split", "manual"
        plan.review = (
            "no edit: the definitions of the kernels to move could not be read from the project's sources (not "
            "scanned, or a kernel made by calling wp.kernel(f)); add module= by hand as the fix says"
        )
        return plan
    plan.lever, plan.applicability = "upstream", "manual"
    plan.upstream = _upstream(ctx, mod, moves, defs, measured_ms)
    plan.review = (
        f"the kernels of {mod} are defined outside the project and the launches that pick their block_dim are not "
        "the application's: no edit of the project removes the variants (see the upstream report)"
    )
    return plan



def preload_block_dim(ctx: RuleContext, plan: SplitPlan, mod: str) -> bool:
    """A variant no launch uses was built by a preload without block_dim (the module default): give the project's
    one such call the launches' block_dim. Adds the edit to `plan`; False when there is not exactly one such call."""
    scan = ctx.scan
    if scan is None or plan.stay is None:
        return False
    calls = [lc for lc in scan.load_calls if lc.block_dim is None and not ce.is_dependency(ctx, lc.file)]
    if len(calls) != 1:
        return False
    lc = calls[0]
    found = ce.calls_at(ctx.sources, lc.file, lc.line, {lc.api})
    e = ce.keyword_edit(ctx.sources, lc.file, found[0], "block_dim", str(plan.stay)) if len(found) == 1 else None
    if e is None:
        return False
    plan.edits.append(e)
    plan.applicability = "review"
    plan.review = (plan.review + " " if plan.review and plan.lever != "none" else "") + (
        f"The preload at {lc.file}:{lc.line} then builds every module it names at block_dim {plan.stay}: check that "
        f"the other modules it loads are launched at that size too, or give {mod} a call of its own."
    )
    if plan.lever == "none":
        plan.lever = "preload"
    return True
