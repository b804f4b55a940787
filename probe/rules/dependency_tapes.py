"""Where an installed library differentiates its own kernels in code the measured run did not reach.

A forward-only setting (CS-10) at the application's entry point is safe for what this run did; a library that builds
a `wp.Tape` or calls `backward` over the same kernels elsewhere (its optimiser, a fitting routine) would lose its
gradients when the application later calls that path. The library's sources are read through the source view (never
imported, never written) and searched line by line, so a large library costs a read, not a parse; its tests are
left out (they are not uses of the library by an application).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from . import helpers
from .context import RuleContext

_TAPE = re.compile(r"(?<![\w.])(?:\w+\.)*Tape\s*\(|\.backward\s*\(")
_TEST_PARTS = ("/tests/", "/test/", "/testing/")
MAX_SITES = 20


def _is_test(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return any(p in path for p in _TEST_PARTS) or name.startswith("test_") or name == "conftest.py"


def unreached_tapes(ctx: RuleContext, kernel_files: Iterable[str]) -> list[tuple[str, str, int]]:
    """(distribution, file as its maintainers name it, line) of each tape or backward call in the installed packages
    that define these kernels, outside their tests, at a line the measured run did not create a tape at."""
    ran = {(t.file, t.line) for t in ctx.report.tapes}
    out: list[tuple[str, str, int]] = []
    seen: set[str] = set()
    for file in kernel_files:
        dist = helpers.dependency_of(ctx, file)
        if dist is None:
            continue
        for path, lines in ctx.sources.installed_package(file):
            if path in seen or _is_test(path.replace("\\", "/")):
                continue
            seen.add(path)
            for n, text in enumerate(lines, 1):
                code = text.split("#", 1)[0]
                if _TAPE.search(code) and (path, n) not in ran and "class Tape" not in code and "def " not in code:
                    out.append((dist, helpers.dist_relative(path), n))
                    if len(out) >= MAX_SITES:
                        return out
    return out
