"""CS-6: a generic kernel's new type instance arrived after its module loaded.

Launching a generic kernel with argument types it has not seen instantiates an overload; the overload joins the
module's hashed kernel set, so the module builds again with every kernel in it. The hash diff names the instance
(`overload_added`). The fix registers the routine instances with `wp.overload` at module scope before the first
launch; the types are read from the measured launches of that kernel (one distinct argument-type list per
instance), so the suggested code is the project's own. Saving: the measured rebuilds.
"""

from __future__ import annotations

import re
from collections import defaultdict

from warp_compile.probe.diagnosis_models import Cause, Evidence, Finding, HashChange, RuledOut, RuleResult
from warp_compile.probe.models import Build, KernelInfo, Site
from warp_compile.probe.rules.context import RuleContext, dedupe_locations, fmt_ms

MECHANISM = "CS-6"

_SCALAR_CODES = {
    "float16": "f2",
    "float32": "f4",
    "float64": "f8",
    "int8": "i1",
    "int16": "i2",
    "int32": "i4",
    "int64": "i8",
    "uint8": "u1",
    "uint16": "u2",
    "uint32": "u4",
    "uint64": "u8",
    "float": "f4",
    "int": "i4",
}
_ARRAY_RE = re.compile(r"^array\[(?P<dtype>[^;\]]+);(?P<ndim>\d)d\]$")


def _code(dtype: str) -> str | None:
    """Warp's short type code for a recorded launch dtype, when it is one we can spell (else None: no opinion)."""
    m = _ARRAY_RE.match(dtype)
    if m:
        inner = _SCALAR_CODES.get(m.group("dtype"))
        return f"a{m.group('ndim')}{inner}" if inner else None
    return _SCALAR_CODES.get(dtype)


def _matches(sig: str, dtypes: list[str]) -> bool:
    tokens = sig.split("_") if sig else []
    if len(tokens) != len(dtypes):
        return False
    return all(_code(d) in (None, t) for t, d in zip(tokens, dtypes, strict=True))


def _wp_type(dtype: str) -> str:
    """A launch dtype as the Python expression that names it in `wp.overload(...)`."""
    m = _ARRAY_RE.match(dtype)
    if m:
        inner = m.group("dtype")
        inner_expr = inner if inner in ("float", "int") else f"wp.{inner}"
        ctor = "wp.array" if m.group("ndim") == "1" else f"wp.array{m.group('ndim')}d"
        return f"{ctor}(dtype={inner_expr})"
    if dtype in ("float", "int", "bool"):
        return dtype
    return f"wp.{dtype}"


def _dtype_lists(ctx: RuleContext, kernel: str, module: str) -> list[list[str]]:
    """Distinct argument-type lists the kernel was launched with, in first-launch order."""
    seen: list[list[str]] = []
    for la in ctx.report.launches:
        if la.kernel == kernel and la.module == module and la.dtypes and la.dtypes not in seen:
            seen.append(la.dtypes)
    return seen


def _types_for(sigs: list[str], lists: list[list[str]]) -> dict[str, list[str] | None]:
    """Signature -> launch dtypes: by type-code match, else by order of first appearance."""
    out: dict[str, list[str] | None] = {}
    free = list(lists)
    for sig in sigs:
        hit = next((d for d in free if _matches(sig, d)), None)
        if hit is not None:
            free.remove(hit)
        out[sig] = hit
    for sig in sigs:
        if out[sig] is None and free:
            out[sig] = free.pop(0)
    return out


def _instances(build: Build | None, parent: str) -> list[KernelInfo]:
    if build is None:
        return []
    return [k for k in build.kernels if k.generic_parent == parent]


def _divergence(first: Build | None, later: Build) -> Site | None:
    """Where the later load's call path leaves the first load's: the caller that brought the new types in.

    Both loads often go through one shared helper line; the first differing outer frame is the code to look at.
    """
    if first is None or first.trigger is None or later.trigger is None:
        return None
    a, b = first.trigger.stack, later.trigger.stack
    for i, entry in enumerate(b):
        if i >= len(a) or (a[i].file, a[i].line) != (entry.file, entry.line):
            return entry if i > 0 else None
    return None


def _finding(ctx: RuleContext, module: str, parent: str, items: list[tuple[HashChange, list[Cause]]]) -> Finding:
    saving = sum(ch.cost_ms for ch, _ in items)
    last = ctx.build(max(ch.to_seq for ch, _ in items))
    first_seq = min(ch.from_seq for ch, _ in items)
    first = ctx.build(first_seq)
    added = [c.after or "" for _, causes in items for c in causes]
    initial = [k.signature or "" for k in _instances(first, parent)]
    all_sigs = list(dict.fromkeys(initial + added))
    types = _types_for(all_sigs, _dtype_lists(ctx, parent, module))
    evidence = []
    locations = []
    info = (_instances(last, parent) or _instances(first, parent) or [None])[0]
    kdef = ctx.scan_kernel(info) if info is not None else None
    if info is not None:
        locations.append(ctx.kernel_loc(info, f"generic kernel {parent}: register its routine instances here"))
    for ch, causes in items:
        later = ctx.build(ch.to_seq)
        new = ", ".join(f"[{', '.join(types.get(c.after or '') or [c.after or '?'])}]" for c in causes)
        evidence.append(
            Evidence(
                fact=f"build #{ch.to_seq} ({ch.to_hash[:7]}, {ch.status}, {fmt_ms(ch.cost_ms)}) rebuilt {module} after "
                f"build #{ch.from_seq} ({ch.from_hash[:7]}) because {parent} was launched with new argument types "
                f"{new}" + (f" at {ch.trigger}" if ch.trigger else ""),
                builds=[ch.from_seq, ch.to_seq],
                ms=ch.cost_ms,
            )
        )
        if later is not None:
            locations.append(ctx.trigger_loc(later, f"launch of {parent} with a new type instance"))
            entry = _divergence(ctx.build(ch.from_seq), later)
            if entry is not None:
                locations.append(
                    ctx.loc(entry.file, entry.line, f"the call path that brings the new types to {parent}")
                )
    lines = []
    for sig in all_sigs:
        dt = types.get(sig)
        if dt is None:
            continue
        suffix = "_".join(dict.fromkeys(_suffix(d) for d in dt if _suffix(d))) or sig.replace("_", "")
        lines.append(f"{parent}_{suffix} = wp.overload({parent}, [{', '.join(_wp_type(d) for d in dt)}])")
    where = f" right after its definition ({kdef.file}:{kdef.line})" if kdef is not None else ""
    code = "; ".join(f"`{ln}`" for ln in lines)
    fix = (
        f"Register the instances {parent} is routinely launched with at module scope{where}, before the first launch "
        f"of anything in {module}, and keep the returned objects: {code}."
        if lines
        else f"Register {parent}'s routine type instances with wp.overload({parent}, [...]) at module scope{where}, "
        f"before the first launch of anything in {module}, and keep the returned objects."
    )
    fix += " Launches stay as they are; they resolve to the registered overloads."
    return Finding(
        mechanism=MECHANISM,
        title=f"{module} rebuilt because {parent} got a new type instance after the module loaded",
        severity=ctx.severity_for(saving),
        confidence="high",
        modules=[module],
        evidence=evidence,
        locations=dedupe_locations(locations),
        fix=fix,
        estimated_saving_ms=round(saving, 1),
        saving_basis=f"sum of the {len(items)} rebuild(s) of {module} caused by late instances (it still builds once "
        "with all of them), reference sample",
        samples=1 if ctx.samples else 0,
        caveats=[
            "Register only types the application routinely uses: each registered instance is generated and "
            "compiled on every cold start, and registering rarely used ones can cost more than the rebuild.",
            "A rare or diagnostic type can instead live in a module with its own lifecycle, or stay lazy.",
        ],
    )


def _suffix(dtype: str) -> str:
    m = _ARRAY_RE.match(dtype)
    return (m.group("dtype") if m else dtype) if dtype else ""


def evaluate(ctx: RuleContext) -> RuleResult:
    groups: dict[tuple[str, str], list[tuple[HashChange, list[Cause]]]] = defaultdict(list)
    for ch in ctx.changes:
        if ch.status.startswith("error"):
            continue
        per_parent: dict[str, list[Cause]] = defaultdict(list)
        for c in ch.causes:
            if c.kind == "overload_added" and c.kernel:
                per_parent[c.kernel].append(c)
        for parent, causes in per_parent.items():
            groups[(ch.module, parent)].append((ch, causes))
    findings = [_finding(ctx, module, parent, items) for (module, parent), items in groups.items()]
    if findings:
        return RuleResult(findings=findings)
    generic = {k.generic_parent for b in ctx.loads for k in b.kernels if k.generic_parent}
    detail = f" ({len(generic)} generic kernel(s) loaded, all instances present at first load)" if generic else ""
    return RuleResult(
        ruled_out=[
            RuledOut(
                mechanism=MECHANISM,
                signal=f"no module was rebuilt by a generic kernel instance added after it loaded{detail}",
            )
        ]
    )
