"""CS-13's fix as an edit: a concurrent preload of the measured CUDA modules at the entry point, before any launch.

The preload goes into the application's entry file, after its own imports, at module scope: that code runs before
`main()` and so before the first launch. It first imports the Python modules that define the preloaded modules'
kernels (so each named module exists and holds its kernels: `wp.get_module` of a name nothing registered yet would
make an empty module and preload nothing), then builds them on worker threads, one call per launch block_dim, and
only when the preferred device is a GPU: first CPU loads must stay serial (CS-8). Where the entry point is an
installed file, a launcher of the application's own carries the same lines. The preload builds the same identities
the launches would (same module, options and block_dim), so launches and results are unchanged; the gain is
scheduling, which only a run on a GPU can measure.
"""

from __future__ import annotations

from pathlib import Path

from ...models.diagnosis import Edit
from ..edits import create_file, launcher_name, launcher_text
from ..transform.context import Project
from . import cuda_edits as ce

MAX_WORKERS = 8


def _python_modules(ctx: Project, warp_modules: list[str]) -> dict[str, str] | None:
    """Warp module -> the Python module whose import registers its kernels; None when one cannot be imported by name.

    A module is its Python module's name unless kernels name it (`module="x"`); then the defining file's module.
    """
    scan = ctx.scan
    out: dict[str, str] = {}
    for mod in warp_modules:
        files = {k.file for b in ctx.report.builds if b.module == mod for k in b.kernels if k.file}
        names = set()
        for f in files:
            info = scan.module_of_file(ctx.rel(f)) if scan is not None else None
            if info is not None:
                names.add(info.name)
            elif Path(f).is_absolute() and ctx.sources.rel(f) is None:
                names.add(mod)  # a dependency's module: importable by the name Warp gives it
        if not names and mod != "__main__":
            names.add(mod)
        if len(names) != 1:
            return None
        name = names.pop()
        if name == "__main__" or name.endswith(".__main__"):
            return None  # defined by the entry script itself: its kernels exist only once it has run that far
        out[mod] = name
    return out


def _imported(ctx: Project, file: str, module: str, bound: str) -> bool:
    if ctx.scan is None:
        return False
    rel = ctx.rel(file)
    return any(i.module == module and bound in (i.names or [module]) and i.scope == "module"
               for i in ctx.scan.imports_in(rel))


def preload_block(
    ctx: Project, groups: dict[int | None, list[str]], file: str | None, device_expr: str
) -> str | None:
    """The lines of the preload (with the imports it needs), or None when a module cannot be named safely."""
    mods = sorted({m for ms in groups.values() for m in ms})
    pymods = _python_modules(ctx, mods)
    if pymods is None:
        return None
    head = []
    if file is None or not _imported(ctx, file, "importlib", "importlib"):
        head.append("import importlib")
    if file is None or not _imported(ctx, file, "os", "os"):
        head.append("import os")
    if file is None or not _imported(ctx, file, "warp", "wp"):
        head.append("import warp as wp")
    imports = ", ".join(f'"{n}"' for n in sorted(set(pymods.values())))
    body = [
        "",
        "# build the CUDA modules on worker threads before the first launch (CS-13); CPU loads stay serial (CS-8)",
        f"for _name in ({imports},):",
        "    importlib.import_module(_name)  # registers the kernels of the modules preloaded below",
        f"if {device_expr}.is_cuda:",
    ]
    for bd, ms in sorted(groups.items(), key=lambda kv: kv[0] or 0):
        names = ", ".join(f'wp.get_module("{m}")' for m in ms)
        bd_text = f", block_dim={bd}" if bd is not None else ""
        body.append(
            f"    wp.force_load(device={device_expr}, modules=[{names}]{bd_text}, "
            f"max_workers=min(os.cpu_count() or 1, {min(len(ms), MAX_WORKERS)}))"
        )
    return "\n".join(head + body) + "\n"


def preload_edit(ctx: Project, groups: dict[int | None, list[str]]) -> tuple[Edit | None, str]:
    """(the edit, why there is none) for a preload of `groups` (launch block_dim -> modules) at the entry point."""
    entry = ctx.report.entry
    if entry is None or not entry.file:
        return None, "the measurement did not record the command's entry point, so the place of the preload is unknown"
    device = "wp.get_preferred_device()"
    src = ctx.sources
    installed = entry.owner == "dependency" or (entry.owner is None and ce.is_dependency(ctx, entry.file))
    if not installed and src.lines(entry.file) is None:
        return None, f"the entry point {ctx.rel(entry.file)} could not be read from the project's sources"
    if installed:
        block = preload_block(ctx, groups, None, device)
        if block is None:
            return None, "a preloaded module is defined where the preload cannot import it by name"
        return create_file(launcher_name(entry, src), launcher_text(entry, block)), ""
    line = ce.after_imports_line(src, entry.file)
    if line is None:
        return None, f"{ctx.rel(entry.file)} has no leading imports after which the preload could go"
    block = preload_block(ctx, groups, entry.file, device)
    if block is None:
        return None, "a preloaded module is defined by the entry script itself, which cannot import it before it ran"
    return ce.insert_lines(src, entry.file, line, "\n" + block), ""
