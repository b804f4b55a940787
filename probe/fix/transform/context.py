"""What a transformation reads of the diagnosis it serves: the project's sources, the scan and the run's record.

A protocol, so the layer needs no rule module: `rules/context.py`'s RuleContext has these attributes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ...models import KernelInfo, Report
    from ...models.scan import KernelDef, ScanFacts
    from ..edits import SourceView


class Project(Protocol):
    report: Report
    scan: ScanFacts | None
    sources: SourceView

    def rel(self, file: str) -> str: ...

    def scan_kernel(self, info: KernelInfo) -> KernelDef | None: ...
