"""Where kernels that stop being unique go, decided once from the run's record and the scan.

Kernels leave `module="unique"` to share one build. The module they join must give each of them exactly the options
it compiled with before: a unique module never sees `wp.set_module_options()`, so a kernel moved into its Python
module would start to get whatever an option call sets there (c01's inert `fast_math`, which never reached a
kernel, would then change numerics), and a call that runs after the first load would rebuild the module (CS-3).
They should also end in as few modules as those options allow.

So the target is their Python module when that holds: every kernel in one Python module, and nothing sets an option
on it (a call in the source, or the module's own builds) to a value these kernels did not compile with. Otherwise a
named Warp module (`wp.kernel(module="pkg.kernels")`, Warp 1.10 and newer) that no option call names: it starts
from Warp's defaults, which is what a unique module without `module_options=` compiled with, and gathers the
kernels of several files into one build.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..models import Build
from ..models.report import Report
from ..models.scan import KernelDef, ScanFacts
from .transform.syntax import norm_value


@dataclass(frozen=True)
class Target:
    """The module the kernels share."""

    named: str | None  # None: each joins its own Python module; else this Warp module name
    python_modules: tuple[str, ...]
    reached: dict[str, str] = field(default_factory=dict)  # option -> value an option call would give them there
    why: str = ""  # why a named module, in a clause (empty when the Python module is the target)

    @property
    def decorator_value(self) -> str:
        """What `module=` becomes: the name as a string literal, or None (the kernel's Python module)."""
        return "None" if self.named is None else repr(self.named).replace("'", '"')

    @property
    def label(self) -> str:
        return self.named if self.named is not None else ", ".join(self.python_modules)


def compiled_options(builds: Iterable[Build]) -> dict[str, str]:
    """The options the kernels' own (unique) modules compiled with, block_dim aside (a launch sets it)."""
    out: dict[str, str] = {}
    for b in builds:
        out.update({k: v for k, v in b.options.items() if k != "block_dim"})
    return out


def reached_options(report: Report, scan: ScanFacts | None, modules: Iterable[str]) -> dict[str, str]:
    """Option -> value that the Python modules `modules` get in the run or from a call in the source, at any time."""
    targets = set(modules)
    out: dict[str, str] = {}
    for b in report.builds:
        if b.module in targets and b.status in ("compiled", "cached"):
            out.update({k: v for k, v in b.options.items() if k != "block_dim"})
    for f in scan.module_options if scan is not None else []:
        if f.target in targets:
            out.update({k: norm_value(v) or v for k, v in f.options.items()})
    return out


def differing(mine: dict[str, str], theirs: dict[str, str]) -> dict[str, str]:
    """The options `theirs` would change for kernels that compiled with `mine`."""
    return {k: theirs[k] for k in sorted(theirs) if k in mine and norm_value(mine[k]) != norm_value(theirs[k])}


def _taken(report: Report, scan: ScanFacts | None) -> set[str]:
    """Names a new Warp module must not take: every module the run built, every Python module of the project, every
    module an option call or a kernel names."""
    names = {b.module for b in report.builds}
    if scan is not None:
        names |= {k.python_module for k in scan.kernels} | set(scan.python_modules_with_kernels)
        names |= {f.target for f in scan.module_options if f.target}
        names |= {k.module_arg for k in scan.kernels if k.module_arg}
        names |= {m.name for m in scan.modules}
    return names


def _common_package(modules: Iterable[str]) -> str:
    parts = [m.split(".") for m in modules]
    common: list[str] = []
    for level in zip(*parts, strict=False):
        if len(set(level)) != 1:
            break
        common.append(level[0])
    if common and len(common) == min(len(p) for p in parts) and len(parts) > 1:
        common = common[:-1] or common
    return ".".join(common) if common else parts[0][0]


def named_module(report: Report, scan: ScanFacts | None, python_modules: Iterable[str]) -> str:
    """A Warp module name for the shared kernels, under their common package, taken by nothing else."""
    mods = sorted(set(python_modules))
    base = _common_package(mods) if len(mods) > 1 else mods[0].rsplit(".", 1)[0] if "." in mods[0] else mods[0]
    taken = _taken(report, scan)
    for suffix in ("kernels", "shared_kernels", *(f"kernels_{i}" for i in range(2, 100))):
        name = f"{base}.{suffix}"
        if name not in taken:
            return name
    return f"{base}.kernels_shared"


def shared_target(report: Report, scan: ScanFacts | None, defs: list[KernelDef], builds: list[Build]) -> Target:
    """The module `defs` (kernels leaving module="unique", built as `builds`) share: see the module docstring."""
    modules = tuple(sorted({k.python_module for k in defs}))
    mine = compiled_options(builds)
    per_module = {m: differing(mine, reached_options(report, scan, [m])) for m in modules}
    changed = {k: v for d in per_module.values() for k, v in d.items()}
    if not changed and len(modules) == 1:
        return Target(named=None, python_modules=modules)
    name = named_module(report, scan, modules)
    if changed:
        reached = [m for m, d in per_module.items() if d]
        shown = ", ".join(f"{k}={v}" for k, v in changed.items())
        why = (f"{' and '.join(reached)} get{'s' if len(reached) == 1 else ''} {shown} from an option call these "
               f"kernels never compiled with, so they share {name}, which no option call names")
    else:
        why = f"they are defined in {len(modules)} Python modules, and one named module builds them once"
    return Target(named=name, python_modules=modules, reached=changed, why=why)
