"""The reports the server keeps for its clients: `report_id` -> Report, newest last, bounded.

Kept for the life of the server process (under stdio: one process per client session). Ids are random enough
that a client of a shared HTTP server cannot guess another client's report.
"""

from __future__ import annotations

import re
import secrets
import threading
from collections import OrderedDict

from ..probe.models import Report

REPORT_URI = "warp-compile://reports/{report_id}"
_ID_RE = re.compile(r"^r\d+-[0-9a-f]{8}$")


def report_uri(report_id: str) -> str:
    return REPORT_URI.format(report_id=report_id)


def looks_like_id(text: str) -> bool:
    return bool(_ID_RE.match(text.strip()))


class ReportStore:
    def __init__(self, capacity: int = 64) -> None:
        self.capacity = capacity
        self._reports: OrderedDict[str, Report] = OrderedDict()
        self._lock = threading.Lock()
        self._count = 0

    def add(self, report: Report) -> str:
        with self._lock:
            self._count += 1
            report_id = f"r{self._count}-{secrets.token_hex(4)}"
            self._reports[report_id] = report
            while len(self._reports) > self.capacity:
                self._reports.popitem(last=False)
            return report_id

    def get(self, report_id: str) -> Report | None:
        with self._lock:
            return self._reports.get(report_id.strip())

    def ids(self) -> list[str]:
        with self._lock:
            return list(self._reports)

    def __len__(self) -> int:
        with self._lock:
            return len(self._reports)
