"""The MCP server: four tools, three resources and a prompt over the probe/ core. It adapts; it does not decide.

Everything heavy (the sandbox, the scanner, the rules) is imported inside the tool calls, so building the server
and answering `tools/list` never imports Warp or the user's code.

No `from __future__ import annotations` here: the SDK reads the tools' `Annotated[..., Resolve(...)]` hints at
registration, and they must be real objects.
"""

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, cast

from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, ListRoots, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp_types import CallToolResult, ListRootsResult, TextContent, Tool, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from .. import __version__
from ..probe.errors import WarpCompileError
from ..probe.models import Report, Warn, WarningCode, warn
from ..probe.models.comparison import Comparison
from ..probe.models.diagnosis import Diagnosis
from ..probe.models.fix import FixResult
from ..probe.models.served import MechanismResult, ServedDiagnosis
from ..probe.models.summary import MeasureSummary
from . import prompt as prompt_text
from . import resources
from .confine import Confinement, real, roots_from_uris
from .interpreter import interpreter_line, resolve_python
from .lean import compact_schema, explain_text, untitled
from .resources import part_uri
from .runner import Progress, run_core
from .store import ReportStore, looks_like_id, report_uri

log = logging.getLogger("warp_compile.server")

INSTRUCTIONS = """\
warp-compile finds why an NVIDIA Warp app compiles kernels for seconds before its first launch.
Workflow: `measure` the app (cold + warm runs in a sandbox with empty caches) -> `diagnose` (mechanisms CS-1..CS-13,
the lines to change) -> change one thing -> `measure` again -> `compare` the two report ids (verdict + reason).
`compare_interleaved` measures two trees alternately until the verdict is decided. `explain_mechanism` explains
a CS-n. Commands are argv lists; command[0] should be the project's interpreter (the absolute path of its venv
python). Paths (cwd, json_path, report files) must lie inside the allowed roots ({roots}); the resource
warp-compile://roots lists them. One measurement runs at a time; runs report progress and stop when cancelled.
"""

COMMAND = "argv; command[0]: the project's venv python, absolute (a bare name is looked up on the server's PATH)"

# parameter types several tools share (same schema, same description)
TimeoutS = Annotated[float, Field(gt=0, description="seconds per run, then its process tree is killed")]
CudaArch = Annotated[
    int | None,
    Field(ge=50, le=199, description="also replay every module for sm_N via NVRTC, no GPU (CS-5/7/13)"),
]


# only the hints that differ from MCP's defaults (read-only false, destructive true, idempotent false, open-world true)
RUNS_PROGRAMS = ToolAnnotations(destructive_hint=False, open_world_hint=False)
READS_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


class WarpCompileServer(MCPServer):
    """MCPServer plus the server's state (roots, kept reports) and one-line argument errors."""

    def __init__(self, roots: Sequence[Path], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.confinement = Confinement(roots)
        self.store = ReportStore()

    async def list_tools(self) -> list[Tool]:
        """The tools with compact output schemas (server/lean.py): results are still validated against the models."""
        tools = await super().list_tools()
        for t in tools:
            t.input_schema = untitled(t.input_schema)
            if t.output_schema is not None:
                t.output_schema = compact_schema(t.output_schema)
        return tools

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


def _fix_roots(ctx: Context, cwd: str) -> ListRootsResult | ListRoots | None:
    return _ask_roots(ctx, [cwd])


def _interleaved_roots(ctx: Context, before_cwd: str, after_cwd: str) -> ListRootsResult | ListRoots | None:
    return _ask_roots(ctx, [before_cwd, after_cwd])


# ------------------------------------------------------------------------------------------------ tools


async def measure(
    ctx: Context,
    command: Annotated[list[str], Field(description=COMMAND)],
    cwd: Annotated[str, Field(description="directory to run it in (inside an allowed root)")],
    samples: Annotated[int, Field(ge=1, le=50, description="cold+warm pairs to run")] = 3,
    timeout_s: TimeoutS = 900,
    label: Annotated[str, Field(description="a name for this measurement, e.g. baseline")] = "",
    cuda_arch: CudaArch = None,
    json_path: Annotated[
        str | None, Field(description="also write the report JSON here")
    ] = None,
    client_roots: Annotated[ListRootsResult | None, Resolve(_measure_roots)] = None,
) -> Annotated[CallToolResult, MeasureSummary]:
    """Measure a command's Warp compile time, cold (empty caches) then warm, per sample. Returns a summary
    (clocks, modules, largest builds, warnings) and a report_id: warp-compile://reports/{report_id} serves the
    parts (builds, launches, ..., full). Tens of seconds per sample; cancel kills the run."""
    from ..probe.jsonio import write_json
    from ..probe.measure import check_inputs
    from ..probe.measure import measure as core_measure
    from ..probe.render.summary import render_summary
    from ..probe.summary import summarize

    server = _server(ctx)
    roots = _client_roots(client_roots)
    with _tool_errors():
        where = server.confinement.check_dir(cwd, "cwd", roots)
        out = server.confinement.check_new_file(json_path, "json_path", roots) if json_path is not None else None
        command, note = _command(command)
        check_inputs(command, where, samples, timeout_s)
        report = await run_core(
            lambda progress, cancel: core_measure(
                command, where, samples, timeout_s, label, progress, cancel, **_cuda_kw(cuda_arch)
            ),
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
    if note:
        summary.warnings.insert(0, note)
    return _result(summary, f"{render_summary(summary).rstrip()}\n{interpreter_line(report)}")


def _cuda_kw(cuda_arch: int | None) -> dict[str, int]:
    """cuda_arch only when asked for (the measuring core's callers without it stay as they were)."""
    return {"cuda_arch": cuda_arch} if cuda_arch is not None else {}


def _command(command: list[str]) -> tuple[list[str], Warn | None]:
    """The argv to run (a bare python resolved) and the note saying so; an empty command is a tool error."""
    if not command or not command[0].strip():
        raise ToolError('command is empty: give the argv list to run, e.g. ["/proj/.venv/bin/python", "app.py"]')
    return resolve_python(command)


def _all_failed(report: Report, report_id: str) -> None:
    if report.all_failed:
        failure, tail = report.last_failure()
        lines = [ln.strip() for ln in tail.splitlines() if ln.strip()]
        why = f": {lines[-1][:200]}" if lines else ""
        raise ToolError(
            f"every sample failed ({failure}){why}; stderr and details in " + part_uri(report_id, "sample_results")
        )


async def diagnose(
    ctx: Context,
    command: Annotated[list[str] | None, Field(description=COMMAND)] = None,
    cwd: Annotated[str | None, Field(description="directory to run it in (default: the first root)")] = None,
    report: Annotated[
        str | None,
        Field(description="instead of measuring: a report_id or report JSON path"),
    ] = None,
    samples: Annotated[int, Field(ge=1, le=50, description="cold+warm pairs when measuring")] = 1,
    timeout_s: TimeoutS = 900,
    cuda_arch: CudaArch = None,
    verify: Annotated[
        bool, Field(description="then measure each finding's fix on a copy (as fix, no write): the measured saving "
                    "beside the estimate; minutes")
    ] = False,
    client_roots: Annotated[ListRootsResult | None, Resolve(_diagnose_roots)] = None,
) -> Annotated[CallToolResult, ServedDiagnosis]:
    """Why the app compiles: findings (CS-1..CS-13) ranked by estimated saving, each with evidence, the line to
    change, the fix and caveats; rebuilt modules and why; what was ruled out. Give command (+ cwd) to measure,
    or report to reuse one."""
    server = _server(ctx)
    roots = _client_roots(client_roots)
    note = None
    with _tool_errors():
        if report is not None and cuda_arch is not None:
            raise ToolError("cuda_arch applies when measuring: give command and cwd, not report")
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
                diagnosis.warnings = [w for w in diagnosis.warnings if w.code != WarningCode.NO_SOURCE_SCAN]
                diagnosis.warnings.append(warn(WarningCode.NO_SOURCE_SCAN, cwd=rep.cwd))
        else:
            from ..probe.measure import check_inputs

            assert command is not None
            where = server.confinement.check_dir(cwd if cwd is not None else ".", "cwd", roots)
            run, note = _command(command)
            check_inputs(run, where, samples, timeout_s)
            from ..probe.diagnose import diagnose_command
            from ..probe.pricing import DEFAULT_LIMIT_S

            rep, diagnosis = await run_core(
                lambda progress, cancel: diagnose_command(
                    run, where, samples=samples, progress=progress, cancel=cancel, timeout_s=timeout_s,
                    rebuild_limit_s=DEFAULT_LIMIT_S, **_cuda_kw(cuda_arch),
                ),
                Progress(ctx, expected=2 * samples + 2),
            )
            report_id = server.store.add(rep)
            _all_failed(rep, report_id)
        if verify and not rep.all_failed:
            diagnosis = await _verify(ctx, diagnosis, rep, roots, timeout_s, cuda_arch)
    from ..probe.render.diagnosis import render_text

    if note:
        diagnosis.warnings.insert(0, note)
    text = render_text(diagnosis).rstrip() + f"\n{interpreter_line(rep)}"
    if report_id:
        text += f"\nreport (summary and parts): {report_uri(report_id)}\n"
    return _result(ServedDiagnosis.of(diagnosis, report_id), text)


async def _verify(
    ctx: Context, diagnosis: Diagnosis, rep: Report, roots: Sequence[Path], timeout_s: float,
    cuda_arch: int | None = None,
) -> Diagnosis:
    """Run each finding's experiment in the report's own directory (inside the roots), with progress and cancel."""
    from ..probe.fix.verify import verify

    server = _server(ctx)
    where = server.confinement.check_dir(rep.cwd, "the report's cwd", roots)
    runs = sum(1 for f in diagnosis.findings if f.experiment or f.edits)
    return await run_core(
        lambda progress, cancel: verify(
            diagnosis, list(rep.command), where, timeout_s=timeout_s, progress=progress, cancel=cancel,
            cuda_arch=cuda_arch,
        ),
        Progress(ctx, expected=max(1, runs) * 4),
    )


def _source_root(server: WarpCompileServer, rep: Report, roots: Sequence[Path]) -> Path | None:
    """The report's cwd, to scan, when it is a directory inside the allowed roots (else the scan is skipped)."""
    if not rep.cwd or not server.confinement.is_inside(rep.cwd, roots):
        return None
    where = server.confinement.locate(rep.cwd, roots)
    return where if where is not None and where.is_dir() else None


def _diagnose_report(rep: Report, root: Path | None, progress: Any) -> Diagnosis:
    from ..probe.diagnose import diagnose_sources

    return diagnose_sources(rep, root, progress)


async def _load_report(
    server: WarpCompileServer, ref: str, what: str, roots: Sequence[Path]
) -> tuple[Report, str | None]:
    """A kept report by id, or a report JSON file inside the allowed roots."""
    import anyio.to_thread

    kept = server.store.get(ref)
    if kept is not None:
        return kept, ref.strip()
    if looks_like_id(ref):
        raise ToolError(
            f"{what}: unknown report_id {ref!r}: ids live as long as the server process; pass a report JSON path"
        )
    path = server.confinement.check(ref, what, roots)
    return await anyio.to_thread.run_sync(Report.load, path), None


async def compare(
    ctx: Context,
    before: Annotated[str, Field(description="baseline: a report_id or report JSON path")],
    after: Annotated[str, Field(description="changed run: a report_id or report JSON path")],
    client_roots: Annotated[ListRootsResult | None, Resolve(_compare_roots)] = None,
) -> Annotated[CallToolResult, Comparison]:
    """Judge two saved measurements: same work (launch structure), and less compiled? A verdict (IMPROVED,
    REGRESSION, ...) with its reason, each clock against its noise band, the module hashes that changed."""
    from ..probe.compare import compare_reports as core_compare  # drift-corrected (saved reports)
    from ..probe.render.comparison import render_comparison

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
    return _result(result, render_comparison(result))


async def compare_interleaved(
    ctx: Context,
    command: Annotated[list[str], Field(description=COMMAND)],
    before_cwd: Annotated[str, Field(description="the tree before the change")],
    after_cwd: Annotated[str, Field(description="the tree after it (same command)")],
    samples: Annotated[
        int | None, Field(ge=1, le=50, description="pairs to run (default 5; with until_decided the minimum, 3)")
    ] = None,
    until_decided: Annotated[bool, Field(description="stop once the verdict cannot change")] = False,
    max_samples: Annotated[int, Field(ge=1, le=50, description="with until_decided: at most this many pairs")] = 20,
    warmup: Annotated[int, Field(ge=0, le=5, description="discarded runs of each tree first")] = 1,
    timeout_s: TimeoutS = 900,
    client_roots: Annotated[ListRootsResult | None, Resolve(_interleaved_roots)] = None,
) -> Annotated[CallToolResult, Comparison]:
    """Measure two trees (before/after a change) alternately, A B, B A, ..., and judge them like compare;
    until_decided stops once the verdict is settled. Minutes; cancel kills the run."""
    from ..probe import measure as core
    from ..probe.compare import interleaved_compare
    from ..probe.render.comparison import render_comparison as render_text

    server = _server(ctx)
    roots = _client_roots(client_roots)
    with _tool_errors():
        before = server.confinement.check_dir(before_cwd, "before_cwd", roots)
        after = server.confinement.check_dir(after_cwd, "after_cwd", roots)
        run, note = _command(command)
        core.check_inputs(run, before, 1, timeout_s)
        if until_decided and max_samples < max(3, samples or 3):
            raise ToolError(f"max_samples {max_samples} is below the minimum of {max(3, samples or 3)} pairs")
        pairs = max_samples if until_decided else (samples or 5)

        def work(progress: Any, cancel: Any) -> Comparison:
            def run_sample(*args: Any, **kwargs: Any) -> Any:
                return core.run_sample(*args, cancel=cancel, **kwargs)

            return interleaved_compare(
                run,
                before,
                after,
                samples=samples,
                until_decided=until_decided,
                max_samples=max_samples,
                timeout_s=timeout_s,
                progress=progress,
                warmup=warmup,
                run_sample=run_sample,
                build_report=core.build_report,
            )

        result = await run_core(work, Progress(ctx, expected=2 * warmup + 6 * pairs))
    if note:
        result.warnings.insert(0, note)
    return _result(result, render_text(result))


async def fix(
    ctx: Context,
    command: Annotated[list[str], Field(description=COMMAND)],
    cwd: Annotated[str, Field(description="the project (copied)")],
    findings: Annotated[list[str] | None, Field(description='only these, e.g. ["CS-10"]')] = None,
    write: Annotated[bool, Field(description="write proven automatic fixes")] = False,
    unsafe_fixes: Annotated[bool, Field(description="and review-rated ones")] = False,
    pairs: Annotated[int | None, Field(ge=1, le=20, description="samples per fix (default: until decided)")] = None,
    timeout_s: TimeoutS = 900,
    cuda_arch: CudaArch = None,
    client_roots: Annotated[ListRootsResult | None, Resolve(_fix_roots)] = None,
) -> Annotated[CallToolResult, FixResult]:
    """Diagnose, apply each finding's edits to a scratch copy, measure against one shared original until decided;
    check output, launches, must-keep paths. Per fix: verdict, saving, behaviour, diff. Minutes."""
    from ..probe.fix.engine import FixOptions, run_fix
    from ..probe.measure import check_inputs
    from ..probe.render.fix import render_fix

    server = _server(ctx)
    roots = _client_roots(client_roots)
    with _tool_errors():
        where = server.confinement.check_dir(cwd, "cwd", roots)
        run, note = _command(command)
        check_inputs(run, where, 1, timeout_s)
        options = FixOptions(wanted=list(findings or []), write=write, unsafe_fixes=unsafe_fixes, rounds=pairs,
                             until_decided=pairs is None, timeout_s=timeout_s)
        result, _ = await run_core(
            lambda progress, cancel: run_fix(run, where, options, progress=progress, cancel=cancel,
                                             cuda_arch=cuda_arch),
            Progress(ctx, expected=2 + 4 * (pairs or options.max_rounds)),
        )
    if note:
        result.warnings.insert(0, note)
    return _result(result, render_fix(result))


def explain_mechanism(
    mechanism: Annotated[
        str, Field(description='an id ("CS-3", "cs3", "3") or keywords (e.g. "set_module_options after launch")')
    ],
    sections: Annotated[
        bool, Field(description="the text split by '## ' heading, in sections")
    ] = False,
) -> Annotated[CallToolResult, MechanismResult]:
    """Explain a mechanism (CS-n or keywords): what happens, its signals, the fix, when not to apply it, how to
    verify. Markdown as text once; the structured content has the fields."""
    from ..probe.knowledge import UnknownMechanism, get, normalize_id, search

    note = None
    try:
        mech = get(mechanism)
    except UnknownMechanism as exc:
        hits = search(mechanism) if normalize_id(mechanism) is None else []
        if not hits:
            raise ToolError(str(exc)) from None
        mech = hits[0][0]
        others = "; ".join(f"{m.id} ({m.title})" for m, _ in hits[1:4])
        note = f"best match for {mechanism!r}: {mech.id}" + (f" (other matches: {others})" if others else "")
    result = MechanismResult(
        **mech.model_dump(include=set(MechanismResult.model_fields) - {"sections", "note"}),
        sections=dict(mech.sections) if sections else None,
        note=note,
    )
    text = explain_text(mech, sections)
    return _result(result, f"{note}\n\n{text}" if note else text)


# ------------------------------------------------------------------------------------------------ server


def create_server(
    roots: Sequence[Path], *, token_verifier: TokenVerifier | None = None, auth: AuthSettings | None = None
) -> WarpCompileServer:
    """The server; `token_verifier` + `auth` make the HTTP transport require a bearer token (see http_access)."""
    server = WarpCompileServer(
        roots,
        token_verifier=token_verifier,
        auth=auth,
        name="warp-compile",
        title="warp-compile",
        description="Why does this NVIDIA Warp app compile kernels for seconds before its first launch?",
        instructions=INSTRUCTIONS.format(
            roots=", ".join(str(real(r)) for r in roots) or "none given: those your client declares"
        ),
        version=__version__,
    )
    for fn, title, annotations in (
        (measure, "Measure Warp compile time", RUNS_PROGRAMS),
        (diagnose, "Diagnose Warp compile time", RUNS_PROGRAMS),
        (compare, "Compare two measurements", READS_ONLY),
        (compare_interleaved, "Measure two trees interleaved", RUNS_PROGRAMS),
        (fix, "Prove (and write) the fixes", RUNS_PROGRAMS),
        (explain_mechanism, "Explain a compile-time mechanism", READS_ONLY),
    ):
        # the docstring as one paragraph: its line breaks and indentation are bytes in every tools/list
        description = " ".join((fn.__doc__ or "").split())
        server.add_tool(fn, title=title, description=description, annotations=annotations)

    resources.register(server)

    @server.prompt(
        name="optimize_compile_time",
        title="Optimize Warp compile time",
        description="Walk through measure -> diagnose -> change -> compare -> report, with a ledger of the options"
        " declined",
    )
    def optimize_compile_time(command: str = "", cwd: str = ".") -> str:
        return prompt_text.render(command, cwd)

    return server
