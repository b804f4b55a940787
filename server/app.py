"""The MCP server: four tools, three resources and a prompt over the probe/ core. It adapts; it does not decide.

Everything heavy (the sandbox, the scanner, the rules) is imported inside the tool calls, so building the server
and answering `tools/list` never imports Warp or the user's code.

No `from __future__ import annotations` here: the SDK reads the tools' `Annotated[..., Resolve(...)]` hints at
registration, and they must be real objects.
"""

import json
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, cast

from mcp.server.mcpserver import Context, ListRoots, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError, UnexpectedToolError
from mcp_types import CallToolResult, ListRootsResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from warp_compile import __version__
from warp_compile.probe.compare_models import Comparison
from warp_compile.probe.diagnosis_models import Diagnosis
from warp_compile.probe.errors import WarpCompileError
from warp_compile.probe.knowledge import Mechanism
from warp_compile.probe.models import Report
from warp_compile.probe.summary import MeasureSummary
from warp_compile.server import prompt as prompt_text
from warp_compile.server.confine import Confinement, roots_from_uris
from warp_compile.server.runner import Progress, run_core
from warp_compile.server.store import ReportStore, looks_like_id, report_uri

log = logging.getLogger("warp_compile.server")

INSTRUCTIONS = """\
warp-compile finds why an NVIDIA Warp app compiles kernels for seconds before its first launch.
Workflow: `measure` the app (cold + warm runs in a sandbox with empty caches) -> `diagnose` (mechanisms CS-1..CS-13,
the lines to change) -> change one thing -> `measure` again -> `compare` the two report ids (verdict + reason).
`explain_mechanism` explains a CS-n. Paths (cwd, json_path, report files) must lie inside the allowed roots;
commands are argv lists. One measurement runs at a time; runs report progress and stop when cancelled.
"""

RUNS_PROGRAMS = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
READS_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


class WarpCompileServer(MCPServer):
    """MCPServer plus the server's state (roots, kept reports) and one-line argument errors."""

    def __init__(self, roots: Sequence[Path], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.confinement = Confinement(roots)
        self.store = ReportStore()

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError) and not isinstance(exc, UnexpectedToolError):
                raise ToolError(f"Error executing tool {name}: invalid arguments: {_one_line(cause)}") from cause
            raise


def _one_line(exc: ValidationError) -> str:
    parts = []
    for e in exc.errors()[:3]:
        loc = ".".join(str(x) for x in e.get("loc", ())) or "(arguments)"
        msg = f"{loc}: {e.get('msg', 'invalid')}"
        if e.get("type") != "missing" and "input" in e:
            shown = repr(e["input"])
            msg += f" (got {shown[:60] + '...' if len(shown) > 60 else shown})"
        parts.append(msg)
    more = len(exc.errors()) - len(parts)
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def _server(ctx: Context) -> WarpCompileServer:
    return cast(WarpCompileServer, ctx.mcp_server)


@contextmanager
def _tool_errors() -> Iterator[None]:
    """The core's one-line errors (and OS errors) become tool errors the model reads and can act on."""
    try:
        yield
    except WarpCompileError as exc:
        raise ToolError(str(exc)) from None
    except OSError as exc:
        raise ToolError(f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else "")) from None


def _result(model: BaseModel, text: str) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text.rstrip() + "\n")],
        structured_content=model.model_dump(mode="json"),
    )


def _client_roots(result: ListRootsResult | None) -> list[Path]:
    if result is None:
        return []
    return roots_from_uris(str(r.uri) for r in result.roots)


# ------------------------------------------------------------------------------------------------ client roots
# Resolvers run before the tool body. They ask the client for its roots only when a path is not already inside a
# server root (and the client declared the roots capability), so the common case costs no round trip.


def _ask_roots(ctx: Context, paths: Sequence[str | None]) -> ListRoots | None:
    server = _server(ctx)
    outside = [
        p for p in paths if p is not None and server.store.get(p) is None and not server.confinement.is_inside(p)
    ]
    if not outside:
        return None
    caps = ctx.client_capabilities
    if caps is None or caps.roots is None:
        return None
    return ListRoots()


def _measure_roots(ctx: Context, cwd: str, json_path: str | None) -> ListRootsResult | ListRoots | None:
    return _ask_roots(ctx, [cwd, json_path])


def _diagnose_roots(ctx: Context, cwd: str | None, report: str | None) -> ListRootsResult | ListRoots | None:
    return _ask_roots(ctx, [cwd, report])


def _compare_roots(ctx: Context, before: str, after: str) -> ListRootsResult | ListRoots | None:
    return _ask_roots(ctx, [before, after])


# ------------------------------------------------------------------------------------------------ tools


async def measure(
    ctx: Context,
    command: Annotated[
        list[str],
        Field(description='the command as an argv list, e.g. ["python", "app.py"] (never a shell string)'),
    ],
    cwd: Annotated[str, Field(description="directory to run it in; must be inside an allowed root")],
    samples: Annotated[int, Field(ge=1, le=50, description="cold+warm pairs to run")] = 3,
    timeout_s: Annotated[float, Field(gt=0, description="seconds per run before its process tree is killed")] = 900,
    label: Annotated[str, Field(description="a name for this measurement, e.g. baseline")] = "",
    json_path: Annotated[
        str | None, Field(description="also write the full report JSON here (inside an allowed root)")
    ] = None,
    client_roots: Annotated[ListRootsResult | None, Resolve(_measure_roots)] = None,
) -> Annotated[CallToolResult, MeasureSummary]:
    """Measure cold and warm Warp compile time of a command: each sample runs it on empty kernel caches, then
    again on the caches it filled. Returns a compact summary (clocks as median and MAD, identities, modules, the
    largest builds, warnings) and a `report_id`; the full report is the resource warp-compile://reports/{report_id}.
    Takes tens of seconds per sample; reports progress; cancelling kills the run."""
    from warp_compile.io import write_json
    from warp_compile.probe.measure import check_inputs
    from warp_compile.probe.measure import measure as core_measure
    from warp_compile.probe.summary import render_summary, summarize

    server = _server(ctx)
    roots = _client_roots(client_roots)
    with _tool_errors():
        where = server.confinement.check_dir(cwd, "cwd", roots)
        out = server.confinement.check_new_file(json_path, "json_path", roots) if json_path is not None else None
        _check_command(command)
        check_inputs(command, where, samples, timeout_s)
        report = await run_core(
            lambda progress, cancel: core_measure(command, where, samples, timeout_s, label, progress, cancel),
            Progress(ctx, expected=2 * samples),
        )
        report_id = server.store.add(report)
        if out is not None:
            try:
                out.parent.mkdir(parents=True, exist_ok=True)  # inside a root (checked): e.g. .warp-compile/
                write_json(report, str(out))
            except (OSError, WarpCompileError) as exc:  # the measurement is kept: say where it is
                why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                kept = report_uri(report_id)
                raise ToolError(f"cannot write json_path {out}: {why}; the report is kept as {kept}") from None
        _all_failed(report, report_id)
    summary = summarize(report, report_id, report_uri(report_id), str(out) if out is not None else None)
    return _result(summary, render_summary(summary))


def _check_command(command: list[str]) -> None:
    if not command or not command[0].strip():
        raise ToolError('command is empty: give the argv list to run, e.g. ["python", "app.py"]')


def _all_failed(report: Report, report_id: str) -> None:
    if report.samples and report.failed_samples >= report.samples and report.sample_results:
        last = report.sample_results[-1]
        tail = last.cold.stderr_tail or (last.warm.stderr_tail if last.warm else "")
        lines = [ln.strip() for ln in tail.splitlines() if ln.strip()]
        why = f": {lines[-1][:200]}" if lines else ""
        raise ToolError(
            f"every sample failed ({last.failure or 'failed'}){why}; stderr and details in {report_uri(report_id)}"
        )


async def diagnose(
    ctx: Context,
    command: Annotated[
        list[str] | None, Field(description='argv to measure and diagnose, e.g. ["python", "app.py"]')
    ] = None,
    cwd: Annotated[str | None, Field(description="directory to run the command in (default: the first root)")] = None,
    report: Annotated[
        str | None,
        Field(description="diagnose an existing measurement instead: a report_id or a report JSON path"),
    ] = None,
    samples: Annotated[int, Field(ge=1, le=50, description="cold+warm pairs when measuring")] = 1,
    client_roots: Annotated[ListRootsResult | None, Resolve(_diagnose_roots)] = None,
) -> Annotated[CallToolResult, Diagnosis]:
    """Name why the app compiles: findings per mechanism (CS-1..CS-13) ranked by estimated saving, each with its
    evidence, the line to change, the fix and caveats; plus every module rebuilt under a new identity and why,
    and what was ruled out. Give `command` (+ `cwd`) to measure now, or `report` to reuse a measurement."""
    server = _server(ctx)
    roots = _client_roots(client_roots)
    with _tool_errors():
        if report is not None and (command is not None or cwd is not None):
            raise ToolError("give either report (a report_id or path) or command and cwd, not both")
        if report is None and not command:
            raise ToolError("nothing to diagnose: give command (an argv list) and cwd, or report (a report_id or path)")
        if report is not None:
            rep, report_id = await _load_report(server, report, "report", roots)
            root = _source_root(server, rep, roots)

            def work(progress: Any, cancel: Any) -> Diagnosis:
                return _diagnose_report(rep, root, progress)

            diagnosis = await run_core(work, Progress(ctx, expected=2), exclusive=False)
            if root is None:
                diagnosis.warnings = [w for w in diagnosis.warnings if not w.startswith("no source scan")]
                diagnosis.warnings.append(
                    f"no source scan: the report's cwd {rep.cwd} is not a directory inside the allowed roots, so "
                    "locations come from the measurement only"
                )
        else:
            from warp_compile.probe.measure import check_inputs

            assert command is not None
            where = server.confinement.check_dir(cwd if cwd is not None else ".", "cwd", roots)
            _check_command(command)
            check_inputs(command, where, samples, 900.0)
            from warp_compile.probe.diagnose import diagnose_command

            rep, diagnosis = await run_core(
                lambda progress, cancel: diagnose_command(
                    command, where, samples=samples, progress=progress, cancel=cancel
                ),
                Progress(ctx, expected=2 * samples + 2),
            )
            report_id = server.store.add(rep)
            _all_failed(rep, report_id)
    from warp_compile.probe.diagnose import render_text

    diagnosis.report_id = report_id
    text = render_text(diagnosis)
    if report_id:
        text = text.rstrip() + f"\nfull report: {report_uri(report_id)}\n"
    return _result(diagnosis, text)


def _source_root(server: WarpCompileServer, rep: Report, roots: Sequence[Path]) -> Path | None:
    """The report's cwd, to scan, when it is a directory inside the allowed roots (else the scan is skipped)."""
    if not rep.cwd or not server.confinement.is_inside(rep.cwd, roots):
        return None
    where = server.confinement.locate(rep.cwd, roots)
    return where if where is not None and where.is_dir() else None


def _diagnose_report(rep: Report, root: Path | None, progress: Any) -> Diagnosis:
    from warp_compile.probe.diagnose import diagnose_sources

    return diagnose_sources(rep, root, progress)


async def _load_report(
    server: WarpCompileServer, ref: str, what: str, roots: Sequence[Path]
) -> tuple[Report, str | None]:
    """A kept report by id, or a report JSON file inside the allowed roots."""
    import anyio.to_thread

    from warp_compile.probe.compare import load_report

    kept = server.store.get(ref)
    if kept is not None:
        return kept, ref.strip()
    if looks_like_id(ref):
        raise ToolError(
            f"{what}: unknown report_id {ref!r}: ids live as long as the server process; pass a report JSON path"
        )
    path = server.confinement.check(ref, what, roots)
    return await anyio.to_thread.run_sync(load_report, path), None


async def compare(
    ctx: Context,
    before: Annotated[str, Field(description="the baseline: a report_id from measure, or a report JSON path")],
    after: Annotated[str, Field(description="the changed run: a report_id, or a report JSON path")],
    client_roots: Annotated[ListRootsResult | None, Resolve(_compare_roots)] = None,
) -> Annotated[CallToolResult, Comparison]:
    """Judge a change by measurement: was the same work done (launch structure), and was less or sooner compiled?
    Verdict IMPROVED / INCONCLUSIVE / REGRESSION / INVALID / UNVERIFIED with the reason, each clock against its
    noise band, and the module hashes that changed."""
    from warp_compile.probe.compare import compare as core_compare
    from warp_compile.probe.compare import render_text

    server = _server(ctx)
    roots = _client_roots(client_roots)
    with _tool_errors():
        b, b_id = await _load_report(server, before, "before", roots)
        a, a_id = await _load_report(server, after, "after", roots)
        result = core_compare(
            b,
            a,
            before_label=(b_id or before) + (f" [{b.label}]" if b.label else ""),
            after_label=(a_id or after) + (f" [{a.label}]" if a.label else ""),
        )
    return _result(result, render_text(result))


def explain_mechanism(
    mechanism: Annotated[
        str, Field(description='an id ("CS-3", "cs3", "3") or keywords (e.g. "set_module_options after launch")')
    ],
) -> Annotated[CallToolResult, Mechanism]:
    """Explain a compile-time mechanism: what happens, how warp-compile sees it, the fix, when not to apply it,
    and how to verify the fix; with the structured fields (signals, applies_when, fix, verification, ...)."""
    from warp_compile.probe.knowledge import UnknownMechanism, get, normalize_id, render_text, search

    note = ""
    try:
        mech = get(mechanism)
    except UnknownMechanism as exc:
        hits = search(mechanism) if normalize_id(mechanism) is None else []
        if not hits:
            raise ToolError(str(exc)) from None
        mech = hits[0][0]
        others = "; ".join(f"{m.id} ({m.title})" for m, _ in hits[1:4])
        note = f"best match for {mechanism!r}: {mech.id}" + (f" (other matches: {others})" if others else "")
    text = render_text(mech)
    return _result(mech, f"{note}\n\n{text}" if note else text)


# ------------------------------------------------------------------------------------------------ server


def create_server(roots: Sequence[Path]) -> WarpCompileServer:
    server = WarpCompileServer(
        roots,
        name="warp-compile",
        title="warp-compile",
        description="Why does this NVIDIA Warp app compile kernels for seconds before its first launch?",
        instructions=INSTRUCTIONS,
        version=__version__,
    )
    server.add_tool(measure, title="Measure Warp compile time", annotations=RUNS_PROGRAMS)
    server.add_tool(diagnose, title="Diagnose Warp compile time", annotations=RUNS_PROGRAMS)
    server.add_tool(compare, title="Compare two measurements", annotations=READS_ONLY)
    server.add_tool(explain_mechanism, title="Explain a compile-time mechanism", annotations=READS_ONLY)

    @server.resource(
        "warp-compile://mechanisms",
        name="mechanisms",
        title="Compile-time mechanisms",
        description="Every mechanism (CS-n): id, title, backends and the URI of its text",
        mime_type="application/json",
    )
    def mechanisms() -> str:
        from warp_compile.probe.knowledge import list_mechanisms

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
        from warp_compile.probe.knowledge import UnknownMechanism, get, render_text

        try:
            return render_text(get(mechanism_id))
        except UnknownMechanism as exc:
            raise ResourceNotFoundError(str(exc)) from None

    @server.resource(
        "warp-compile://reports/{report_id}",
        name="report",
        title="A full measurement report",
        description="The full Report JSON of a measurement kept by this server (report_id from measure/diagnose)",
        mime_type="application/json",
    )
    def report(report_id: str) -> str:
        rep = server.store.get(report_id)
        if rep is None:
            raise ResourceNotFoundError(
                f"unknown report_id {report_id!r}: ids live as long as the server process (kept: "
                f"{', '.join(server.store.ids()[-5:]) or 'none'})"
            )
        return rep.model_dump_json()

    @server.prompt(
        name="optimize_compile_time",
        title="Optimize Warp compile time",
        description="Walk through measure -> diagnose -> change -> compare -> report, with a ledger of the options"
        " declined",
    )
    def optimize_compile_time(command: str = "", cwd: str = ".") -> str:
        return prompt_text.render(command, cwd)

    return server
