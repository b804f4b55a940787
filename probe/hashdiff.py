"""Why did a module load again? The diff of each load against the closest earlier load of the same module family.

Warp compiles whole modules, keyed by a hash of the live kernel set, the options and the block dimension. A second
load of one module therefore always has a reason, and the reason is in the two snapshots the hook recorded: a kernel
that was not there before, an option that moved, an overload that appeared, or (same hash) something that threw the
loaded binary away. This module names that reason the way torch's recompile log and JAX's cache-miss explainer do:
compared with the *closest* previous key, with the call site and what the reload cost, so a reader can go straight
from the line to the fix. Rules (CS-1, CS-3, CS-6, ...) read these causes instead of re-deriving them.

Cause fields beyond `detail`: `kernel` is the kernel (or wp.func) key, `option` the option name, `before`/`after`
the two values; for `same_hash_reload`, `option` names what dropped the loaded binary (`Module.unload`,
`clear_kernel_cache`, `cache_kernels`) and `file`/`line` the call site.

Pure: reads a Report, returns models; nothing here runs Warp. The one-line text of a change is
`render.diagnosis.render_change`.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from .fmt import short_path, trigger_text
from .models import ApiCall, Build, KernelInfo, Report
from .models.diagnosis import Cause, HashChange

# module="unique" modules are named `<kernel key>_<first 8 hex of the module hash>`
_UNIQUE_RE = re.compile(r"^(?P<key>.+)_(?P<hash>[0-9a-f]{8})$")
# APIs that drop loaded binaries: a later load of the same hash is a real reload, not a no-op
_DROPPING_APIS = ("Module.unload", "unload", "clear_kernel_cache")

Rel = Callable[[str], str]


# ---------------------------------------------------------------------------------------------- families


def unique_family(build: Build) -> str | None:
    """The kernel key when `build` is a module="unique" module, else None.

    A unique module's name embeds its own hash, so two versions of one factory kernel look like unrelated modules;
    grouping by the key is what lets a changed closure constant show up as a rebuild at all. The name pattern alone
    is not enough (a user module may be called `stage_deadbeef`), so the recorded kernels must all carry that key.
    """
    m = _UNIQUE_RE.match(build.module)
    if not m:
        return None
    key = m.group("key")
    if not build.kernels:
        return key  # a log-parsed build has no kernel list: the name pattern is all there is
    if all((k.generic_parent or k.key) == key for k in build.kernels):
        return key
    return None


def module_family(build: Build) -> str:
    """The name a module's loads are grouped under: the module name, or `<key> [unique]` for unique modules."""
    key = unique_family(build)
    return f"{key} [unique]" if key is not None else build.module


# ---------------------------------------------------------------------------------------------- kernel sets


def _kernel_versions(build: Build) -> dict[str, Counter[str]]:
    """Non-generic kernels: key -> multiset of hashes (closures re-created under one key give several versions)."""
    out: dict[str, Counter[str]] = defaultdict(Counter)
    for k in build.kernels:
        if k.generic_parent is None and k.signature is None:
            out[k.key][k.hash] += 1
    return out


def _overloads(build: Build) -> dict[str, dict[str, KernelInfo]]:
    """Generic kernels: parent key -> signature -> instance. Only instantiated overloads are in the hash."""
    out: dict[str, dict[str, KernelInfo]] = defaultdict(dict)
    for k in build.kernels:
        if k.generic_parent is not None or k.signature is not None:
            out[k.generic_parent or k.key][k.signature or ""] = k
    return out


def _first_info(build: Build, key: str) -> KernelInfo | None:
    for k in build.kernels:
        if k.key == key or k.generic_parent == key:
            return k
    return None


def _kernel_causes(prev: Build, cur: Build, rel: Rel) -> list[Cause]:
    causes: list[Cause] = []
    pv, cv = _kernel_versions(prev), _kernel_versions(cur)
    for key in sorted(set(pv) | set(cv)):
        before, after = pv.get(key, Counter()), cv.get(key, Counter())
        info = _first_info(cur, key) or _first_info(prev, key)
        file = rel(info.file) if info and info.file else None
        line = info.line if info else None
        where = f" ({_short(file)}:{line})" if file and line else ""
        here: dict[str, Any] = {"kernel": key, "file": file, "line": line}  # every cause below names this place
        if not before:
            causes.append(Cause(kind="kernel_added", detail=f"kernel added: {key}{where}", **here))
        elif not after:
            causes.append(Cause(kind="kernel_removed", detail=f"kernel removed: {key}{where}", **here))
        elif before != after:
            added, removed = after - before, before - after
            nb, na = sum(before.values()), sum(after.values())
            if na > nb and not removed:
                detail = f"kernel version added: {key}{where} (another live closure with the same name)"
                causes.append(Cause(kind="kernel_added", detail=detail, **here))
            elif nb > na and not added:
                causes.append(Cause(kind="kernel_removed", detail=f"kernel version removed: {key}{where}", **here))
            else:
                old = ",".join(h[:8] for h in sorted(removed)) or "?"
                new = ",".join(h[:8] for h in sorted(added)) or "?"
                causes.append(
                    Cause(
                        kind="kernel_changed",
                        detail=f"kernel changed: {key}{where}: {old} -> {new}",
                        before=old,
                        after=new,
                        **here,
                    )
                )
    po, co = _overloads(prev), _overloads(cur)
    for parent in sorted(set(po) | set(co)):
        before_sigs, after_sigs = po.get(parent, {}), co.get(parent, {})
        for kind, side, only, other in (
            ("added", "after", after_sigs, before_sigs),
            ("removed", "before", before_sigs, after_sigs),
        ):
            for sig in sorted(set(only) - set(other)):
                info = only[sig]
                causes.append(
                    Cause(
                        kind=f"overload_{kind}",
                        detail=f"overload {kind}: {parent}[{sig}]",
                        kernel=parent,
                        file=rel(info.file) if info.file else None,
                        line=info.line,
                        **{side: sig},
                    )
                )
        for sig in sorted(set(before_sigs) & set(after_sigs)):
            b, a = before_sigs[sig], after_sigs[sig]
            if b.hash and a.hash and b.hash != a.hash:
                file = rel(a.file) if a.file else None
                causes.append(
                    Cause(
                        kind="kernel_changed",
                        detail=f"kernel changed: {parent}[{sig}]: {b.hash[:8]} -> {a.hash[:8]}",
                        kernel=parent,
                        before=b.hash[:8],
                        after=a.hash[:8],
                        file=file,
                        line=a.line,
                    )
                )
    return causes


def _function_causes(prev: Build, cur: Build) -> list[Cause]:
    causes = []
    for key in sorted(set(prev.functions) | set(cur.functions)):
        a, b = prev.functions.get(key), cur.functions.get(key)
        if a == b:
            continue
        if a is None:
            detail = f"function added: {key}"
        elif b is None:
            detail = f"function removed: {key}"
        else:
            detail = f"function changed: {key}: {a[:8]} -> {b[:8]}"
        causes.append(Cause(kind="function_changed", detail=detail, kernel=key, before=a, after=b))
    return causes


def _option_causes(prev: Build, cur: Build) -> list[Cause]:
    causes = []
    if prev.block_dim != cur.block_dim and prev.block_dim is not None and cur.block_dim is not None:
        causes.append(
            Cause(
                kind="block_dim_variant",
                detail=f"block_dim variant: {prev.block_dim} -> {cur.block_dim} (whole module compiled per block_dim)",
                option="block_dim",
                before=str(prev.block_dim),
                after=str(cur.block_dim),
            )
        )
    if not prev.options or not cur.options:
        return causes  # a log-parsed build has no options: absence is not a change
    for name in sorted(set(prev.options) | set(cur.options)):
        if name == "block_dim":
            continue
        a, b = prev.options.get(name), cur.options.get(name)
        if a != b:
            causes.append(
                Cause(kind="option_changed", detail=f"option {name}: {a} -> {b}", option=name, before=a, after=b)
            )
    return causes


# ---------------------------------------------------------------------------------------------- same-hash reloads


def _dropping_calls(calls: Iterable[ApiCall], module: str, after_seq: int, before_seq: int) -> list[ApiCall]:
    """Calls between two loads that discard `module`'s loaded binary (unload of it, or any cache clear)."""
    out = []
    for c in calls:
        if not (after_seq < c.seq < before_seq):
            continue
        if c.api in ("Module.unload", "unload") and c.module not in (None, module):
            continue
        if c.api in _DROPPING_APIS:
            out.append(c)
    return out


def _call_text(c: ApiCall, rel: Rel) -> str:
    where = f" at {_short(rel(c.site.file))}:{c.site.line}" if c.site else ""
    return f"{c.api}{where}"


def _same_hash_causes(prev: Build, cur: Build, report: Report, rel: Rel) -> list[Cause]:
    if prev.device != cur.device:
        return [
            Cause(
                kind="different_device",
                detail=f"same module for another device: {prev.device} -> {cur.device}",
                before=prev.device,
                after=cur.device,
            )
        ]
    if prev.status.startswith("error"):
        return [Cause(kind="same_hash_reload", detail="same hash reloaded: the previous load attempt failed")]
    calls = _dropping_calls(report.cache.calls, cur.module, prev.seq, cur.seq)
    if calls:
        c = calls[-1]
        file = rel(c.site.file) if c.site else None
        line = c.site.line if c.site else None
        recompiled = " and compiled again" if cur.status == "compiled" else ""
        return [
            Cause(
                kind="same_hash_reload",
                detail=f"same hash reloaded{recompiled}: unloaded since the previous load by {_call_text(c, rel)}",
                option=c.api,
                file=file,
                line=line,
            )
        ]
    if cur.status == "compiled" and report.cache.cache_kernels is False:
        return [
            Cause(
                kind="same_hash_reload",
                detail="same hash compiled again: wp.config.cache_kernels is False",
                option="cache_kernels",
            )
        ]
    return [Cause(kind="unexplained", detail="same hash loaded again with no recorded unload or cache clear")]


# ---------------------------------------------------------------------------------------------- the diff


def _moved(kind: str, what: str, before: str, after: str) -> Cause:
    """A cause that is one value replaced by another: `what before -> after`."""
    return Cause(kind=kind, detail=f"{what} {before} -> {after}", before=before, after=after)  # type: ignore[arg-type]


def diff_builds(prev: Build, cur: Build, report: Report | None = None, rel: Rel | None = None) -> list[Cause]:
    """Every recorded reason `cur` is not `prev`, in Warp's own order: family, block_dim, options, kernels."""
    rel = rel or (lambda f: f)
    causes: list[Cause] = []
    if prev.module != cur.module:
        causes.append(_moved("unique_module_member", "unique-module family member", prev.module, cur.module))
    if prev.hash == cur.hash:
        return causes + _same_hash_causes(prev, cur, report or Report(command=[], cwd="", samples=0), rel)
    if prev.device != cur.device:
        causes.append(_moved("different_device", "another device:", prev.device, cur.device))
    causes += _option_causes(prev, cur)
    causes += _kernel_causes(prev, cur, rel)
    kernel_level = any(c.kind.startswith(("kernel", "overload")) for c in causes)
    func = _function_causes(prev, cur)
    if func and not kernel_level:
        causes += func  # a changed wp.func only matters on its own when no kernel diff already explains the hash
    elif func:
        causes += [c for c in func if c.detail.startswith("function changed")]
    if not [c for c in causes if c.kind not in ("unique_module_member", "different_device")]:
        if not prev.kernels and not cur.kernels:
            why = "no snapshot to compare (the builds were parsed from Warp's log)"
        else:
            why = "no recorded input differs (kernel details, constants or an unrecorded config value)"
        causes.append(Cause(kind="unexplained", detail=f"hash changed {prev.hash_short} -> {cur.hash_short}: {why}"))
    return causes


def _weight(causes: list[Cause]) -> int:
    """How far apart two loads are: the number of differences, with a device switch counted as far."""
    return sum(10 if c.kind in ("different_device", "unexplained") else 1 for c in causes)


def _default_rel(report: Report) -> Rel:
    root = report.cwd
    return lambda file: short_path(file, root)


def explain_changes(report: Report, rel: Rel | None = None) -> list[HashChange]:
    """One HashChange per cold-run load that is not the first of its module family on its device.

    Each is compared with the closest previous load of its family (fewest differences; the most recent on a tie),
    preferring the same device. Paths pass through `rel` (default: relative to the report's cwd).
    """
    rel = rel or _default_rel(report)
    builds = sorted(report.builds, key=lambda b: b.seq)
    seen: dict[str, list[Build]] = defaultdict(list)
    changes: list[HashChange] = []
    for cur in builds:
        fam = module_family(cur)
        previous = list(seen[fam])
        seen[fam].append(cur)
        if not previous:
            continue
        same_dev = [p for p in previous if p.device == cur.device]
        pool = same_dev or previous
        best: tuple[int, int, Build, list[Cause]] | None = None
        for i, p in enumerate(pool):
            causes = diff_builds(p, cur, report, rel)
            key = (_weight(causes), -i)
            if best is None or key < best[:2]:
                best = (key[0], key[1], p, causes)
        assert best is not None
        prev, causes = best[2], best[3]
        changes.append(
            HashChange(
                module=cur.module, device=cur.device, from_hash=prev.hash, to_hash=cur.hash, from_seq=prev.seq,
                to_seq=cur.seq, status=cur.status, cost_ms=round(cur.ms, 3),
                causes=causes,
                trigger=trigger_text(cur, rel),
            )
        )
    return changes


def _short(file: str | None) -> str:
    return file or "?"


def warp_key(qualname: str) -> str:
    """The key Warp gives a kernel with this Python qualname (`a.<locals>.k` -> `a__locals__k`), as
    codegen.make_full_qualified_name builds it."""
    return re.sub("[^0-9a-zA-Z_]+", "", qualname.replace(".", "__"))


_CONTENT_HASH = re.compile(r"_[0-9a-f]{8}$")


def content_hashed(module: str) -> bool:
    """A module name Warp derived from a content hash (`..._e9110762`): it changes whenever the kernel does, so a
    fix must never name it."""
    return bool(_CONTENT_HASH.search(module))
