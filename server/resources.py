"""The server's resources: mechanisms, the allowed roots, and kept reports as a summary with parts on request.

A full report is 20-160 KB of JSON (every build, launch and sample); reading it whole fills an agent's context.
`warp-compile://reports/{id}` is therefore the measure summary plus an index of parts with their sizes, and each
part (`builds`, `launches`, ..., or `full`) is its own resource, read only when needed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from mcp.server.mcpserver.exceptions import ResourceNotFoundError

from .store import ReportStore, report_uri

if TYPE_CHECKING:
    from ..probe.models import Report
    from .confine import Confinement


class WarpCompileServer(Protocol):
    """What the resources read of the server (server/app.py's WarpCompileServer, which registers them): named here
    so the two modules do not import each other."""

    confinement: Confinement
    store: ReportStore

    def resource(self, uri: str, **kwargs: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]: ...

ROOTS_URI = "warp-compile://roots"
PARTS = (
    "builds",
    "warm_builds",
    "launches",
    "pch",
    "cache",
    "config_at_import",
    "module_creations",
    "sample_results",
    "hook",
    "warnings",
)


def part_uri(report_id: str, part: str) -> str:
    return f"{report_uri(report_id)}/{part}"


def report_index(rep: Report, report_id: str) -> str:
    """The summary of a kept report plus the URI and size in bytes of each part (and of the full JSON)."""
    from ..probe.summary import summarize

    data = summarize(rep, report_id, report_uri(report_id)).model_dump(mode="json")
    dumped = rep.model_dump(mode="json", include=set(PARTS))
    parts = {p: {"uri": part_uri(report_id, p), "bytes": len(json.dumps(dumped.get(p)))} for p in PARTS}
    parts["full"] = {"uri": part_uri(report_id, "full"), "bytes": len(rep.model_dump_json())}
    data["parts"] = parts
    return json.dumps(data)


def report_part(rep: Report, part: str) -> str:
    if part == "full":
        return rep.model_dump_json()
    if part not in PARTS:
        raise ResourceNotFoundError(f"unknown report part {part!r}: one of {', '.join(PARTS)}, full")
    return json.dumps(rep.model_dump(mode="json", include={part})[part])


def roots_text(server: WarpCompileServer) -> str:
    return json.dumps(
        {
            "server_roots": [str(r) for r in server.confinement.roots],
            "client_roots": "also allowed: the roots your client declares (roots/list), asked when a path is outside"
            " the server roots",
            "relative_paths": "taken relative to the first root",
        }
    )


def register(server: WarpCompileServer) -> None:
    @server.resource(
        ROOTS_URI,
        name="roots",
        title="Allowed roots",
        description="Directories the tools may run in and read or write reports under",
        mime_type="application/json",
    )
    def roots() -> str:
        return roots_text(server)

    @server.resource(
        "warp-compile://mechanisms",
        name="mechanisms",
        title="Compile-time mechanisms",
        description="Every mechanism (CS-n): id, title, backends and the URI of its text",
        mime_type="application/json",
    )
    def mechanisms() -> str:
        from ..probe.knowledge import list_mechanisms

        rows = [
            {"id": m.id, "title": m.title, "backends": m.backends, "uri": f"warp-compile://mechanisms/{m.id}"}
            for m in list_mechanisms()
        ]
        return json.dumps(rows)

    @server.resource(
        "warp-compile://mechanisms/{mechanism_id}",
        name="mechanism",
        title="A compile-time mechanism",
        description="One mechanism (CS-n) as Markdown: what happens, signals, fix, when not to, verification",
        mime_type="text/markdown",
    )
    def mechanism(mechanism_id: str) -> str:
        from ..probe.knowledge import UnknownMechanism, get
        from ..probe.render.mechanism import render_text

        try:
            return render_text(get(mechanism_id))
        except UnknownMechanism as exc:
            raise ResourceNotFoundError(str(exc)) from None

    def kept(report_id: str) -> Report:
        rep = server.store.get(report_id)
        if rep is None:
            raise ResourceNotFoundError(
                f"unknown report_id {report_id!r}: ids live as long as the server process (kept: "
                f"{', '.join(server.store.ids()[-5:]) or 'none'})"
            )
        return rep

    @server.resource(
        "warp-compile://reports/{report_id}",
        name="report",
        title="A measurement: summary and parts",
        description="A kept measurement's summary plus the URI and size of each part (builds, launches, ..., full)",
        mime_type="application/json",
    )
    def report(report_id: str) -> str:
        return report_index(kept(report_id), report_id)

    @server.resource(
        "warp-compile://reports/{report_id}/{part}",
        name="report_part",
        title="One part of a measurement",
        description=f"One part of a kept report as JSON: {', '.join(PARTS)}, or full (the whole Report)",
        mime_type="application/json",
    )
    def report_part_resource(report_id: str, part: str) -> str:
        return report_part(kept(report_id), part)
