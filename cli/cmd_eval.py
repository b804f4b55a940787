"""`warp-compile eval`: run an agent (built-in or a command) over the eval cases and grade it.

Per case and trial the harness (evals/harness.py) gives the agent a private copy of the project, reads the answer
it writes to $WARP_COMPILE_ANSWER, measures its copy against a fresh copy of the shipped project (interleaved
pairs), checks the app still prints what it printed, and grades diagnosis and fix (evals/scorer.py).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
from importlib import metadata
from pathlib import Path

from ..probe.errors import UsageError
from .io import check_json_dest, clip, clip_path, emit, progress_printer, seconds

USAGE = (
    "%(prog)s [--agent NAME | -- AGENT_CMD...] [--suite history [--role user|maintainer|both]] [--case ID ...]\n"
    "                         [--cases DIR] [--trials N] [--pairs N] [--shard I/N] [--out DIR] [--json FILE]\n"
    "                         [--markdown FILE] [--timeout S] [--quiet]\n"
    "       %(prog)s --list [--json FILE] | --contract\n"
    "       %(prog)s merge CARD.json... [--json FILE] [--markdown FILE]"
)

DESCRIPTION = """\
Grade an agent on the eval cases (default: the bundled evals/fixtures; --cases DIR: a private suite of the same
format). Each case: the agent works in a private copy of project/ with the request in $WARP_COMPILE_PROMPT and
writes its diagnosis JSON to $WARP_COMPILE_ANSWER (`--contract` prints the contract and schema); then its copy is
measured against a fresh copy of the shipped project, interleaved (--pairs), and its output is compared with the
original's. Case score: diagnosis (mechanism and location precision/recall) and fix credit (verdict, saving
relative to the reference fix, behaviour kept), 0..1.

--suite history: the cases from libraries' public history (evals/history): each runs the project on the library
release before the maintainers' fix (installed once from the package registry into a cached venv under
~/.cache/warp-compile/history) and measures the release with the fix as the reference in the same run; the user
role is scored (the cost named as the library's, the upstream report against the maintainers' change, the
application's saving as a fraction of the maintainers'). Cases with a maintainer role (newton, mujoco-warp) also run
with the release's own source as the project (its wheel downloaded once and unpacked; the agent edits it), judged
against the maintainers' change measured in the same run; --role picks user, maintainer or both (the default).

Agents: --agent builtin:oracle (reference answer and fix), builtin:null (does nothing), builtin:self (this
project's diagnose, no edits; the default; also builtin:diagnose), builtin:fix (`warp-compile fix --write
--unsafe-fixes`: the diagnosis and the fixes it proved), or any command after `--`. A copy the agent left
unchanged is not measured unless --measure-unchanged (the A/A control; a history case always measures it, so the
maintainers' release is measured too).

Exit status: 0 scored, 1 some case flagged, 2 unusable input.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("eval", help="grade an agent (or warp-compile itself) on the eval cases", usage=USAGE,
                       description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("rest", nargs="*", metavar="merge CARD", help="`merge CARD.json...`: one scorecard from shards")
    p.add_argument("--agent", metavar="NAME", help="builtin:oracle|null|self (default)|fix")
    p.add_argument("--case", action="append", default=[], metavar="ID", help="case id (repeatable; default: all)")
    p.add_argument("--cases", metavar="DIR", help="a suite folder of <case>/{case.json,project/,fixed/}")
    p.add_argument("--suite", choices=("fixtures", "history"), default="fixtures",
                   help="the bundled synthetic fixtures (default) or the history suite (real releases)")
    p.add_argument("--json", metavar="FILE", help="write the scorecard (with --list: the cases) as JSON (`-`: stdout)")
    p.add_argument("--markdown", metavar="FILE", help="write the scorecard as a Markdown table")
    p.add_argument("--out", metavar="DIR", help="keep per case and trial: transcript, answer, comparison, result")
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    p.add_argument("--contract", action="store_true", help="print the agent contract and the answer schema")
    p.add_argument("--role", choices=("user", "maintainer", "both"), default="both",
                   help="--suite history: the user role, the maintainer role (the release's source as the project) "
                        "or both where a case has both (default)")
    p.add_argument("--trials", type=int, default=1, metavar="N", help="runs of each case (default 1)")
    p.add_argument("--pairs", type=int, default=4, metavar="N",
                   help="interleaved pairs that judge a fix (default 4; up to twice as many while the medians' "
                        "verdict is not yet borne out by its 95%% interval)")
    p.add_argument("--shard", metavar="I/N", help="run only the I-th of N slices of the cases (1-based)")
    p.add_argument("--measure-unchanged", action="store_true",
                   help="measure the agent's copy even when it is unchanged (the A/A control)")
    p.add_argument("--timeout", type=seconds, default=900.0, metavar="S",
                   help="seconds per measured run, and for each agent run (default 900)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=run)


def _shard(spec: str | None) -> tuple[int, int] | None:
    if spec is None:
        return None
    m = re.fullmatch(r"(\d+)/(\d+)", spec.strip())
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise UsageError(f"eval: --shard must be I/N with 1 <= I <= N, got {clip(spec)!r}")
    return int(m.group(1)), int(m.group(2))


def _suite(ns: argparse.Namespace):  # type: ignore[no-untyped-def]
    from ..evals import manifest
    from ..evals.scorer import fixtures_root, load_cases

    root = fixtures_root()
    if ns.suite == "history":
        from ..evals.history import history_root

        if ns.cases:
            raise UsageError("eval: give either --suite history or --cases DIR, not both")
        root = history_root()
    if ns.cases:
        root = Path(ns.cases).expanduser()
        if not root.is_dir():
            raise UsageError(f"eval: --cases {clip_path(ns.cases)} is not a directory")
    try:
        cases = load_cases(root)
    except (OSError, ValueError) as exc:
        raise UsageError(f"eval: cannot load the cases in {clip_path(str(root))}: {str(exc).splitlines()[0]}") \
            from None
    if not cases:
        raise UsageError(f"eval: no <case>/case.json under {clip_path(str(root))}")
    if ns.case:
        known = {c.id for c in cases}
        unknown = [c for c in ns.case if c not in known]
        if unknown:
            raise UsageError(f"unknown case {', '.join(clip(c) for c in unknown[:3])}"
                             f"{' ...' if len(unknown) > 3 else ''}; known: {', '.join(sorted(known))}")
        cases = [c for c in cases if c.id in ns.case]
    shard = _shard(ns.shard)
    if shard:
        i, n = shard
        cases = [c for k, c in enumerate(cases) if k % n == i - 1]
    return root, manifest.load(root), cases


def _agent(ns: argparse.Namespace):  # type: ignore[no-untyped-def]
    from ..evals.builtin_agents import BUILTINS, builtin_agent
    from ..evals.harness import Agent

    if ns.cmd_argv and ns.agent:
        raise UsageError("eval: give either --agent or an agent command after `--`, not both")
    if ns.cmd_argv:
        argv = _check_agent(ns.cmd_argv)
        return Agent(name=" ".join(argv), argv=argv)
    name = ns.agent or "builtin:self"
    agent = builtin_agent(name)
    if agent is None:
        raise UsageError(f"eval: unknown agent {clip(name)!r}; built-in: {', '.join(BUILTINS)} (or a command "
                         "after `--`)")
    return agent


def _check_agent(command: list[str]) -> list[str]:
    """The agent must be runnable before any case starts (it runs in each case's copy, so a relative path with a
    slash, and any argument naming a file here, is made absolute); a missing one is bad input, not a failed case."""
    exe = command[0]
    if not exe:
        raise UsageError("eval: empty agent command after `--`")
    if os.sep in exe:
        path = Path(exe).expanduser()
        try:
            if not path.exists():
                raise UsageError(f"eval: agent command not found: {clip_path(exe)}")
            if path.is_dir() or not os.access(path, os.X_OK):
                raise UsageError(f"eval: agent command is not executable: {clip_path(exe)}")
        except OSError as exc:
            raise UsageError(f"eval: agent command {clip_path(exe)}: {exc.strerror or exc}") from None
        return [str(path.absolute()), *_absolute_files(command[1:])]
    if shutil.which(exe) is None:
        raise UsageError(f"eval: agent command not found on PATH: {clip_path(exe)}")
    return [exe, *_absolute_files(command[1:])]


def _absolute_files(args: list[str]) -> list[str]:
    """`-- python evals/agents/x.py`: an argument naming an existing file here is made absolute, since the agent
    runs in its copy of the project, not in the current directory."""
    out = []
    for a in args:
        try:
            here = not a.startswith("-") and not Path(a).is_absolute() and Path(a).is_file()
        except (OSError, ValueError):
            here = False
        out.append(str(Path(a).absolute()) if here else a)
    return out


def _check_dest(dest: str | None, flag: str) -> None:
    if dest is None:
        return
    try:
        check_json_dest(dest)
    except UsageError as exc:
        raise UsageError(str(exc).replace("--json", flag)) from None


def _warp_version() -> str:
    try:
        return metadata.version("warp-lang")
    except metadata.PackageNotFoundError:
        return ""


def run(ns: argparse.Namespace) -> int:
    from ..evals.card import render_markdown, render_text, summarize

    if ns.rest:
        return _merge(ns)
    if ns.contract:
        from ..evals.contract import contract_text

        print(contract_text(), end="")
        return 0
    if ns.trials < 1 or ns.pairs < 1:
        raise UsageError("eval: --trials and --pairs must be at least 1")
    _root, shipped, cases = _suite(ns)
    check_json_dest(ns.json)
    _check_dest(ns.markdown, "--markdown")
    if ns.list:
        return _list(cases, ns.json)
    agent = _agent(ns)
    out = None
    if ns.out:
        out = Path(ns.out).expanduser()
        if not out.parent.is_dir() or (out.exists() and not out.is_dir()):
            raise UsageError(f"eval: --out {clip_path(ns.out)}: its parent must be an existing directory")
    from ..evals.harness import Settings, run_case

    settings = Settings(pairs=ns.pairs, timeout_s=ns.timeout, out=out, measure_unchanged=ns.measure_unchanged,
                        warp_version=_warp_version(), manifest=shipped)
    progress = progress_printer(ns.quiet)
    history = ns.suite == "history"
    runs = _runs(cases, ns.role if history else "user")
    if not runs:
        raise UsageError("eval: no case has the maintainer role" + (f" among {', '.join(ns.case)}" if ns.case else ""))
    # installs (and, for the maintainer role, downloads and unpacks) first, then runs: a registry that cannot be
    # reached stops the eval with one line before any case starts
    prepared = {(case.id, role): _case_settings(case, role, settings, progress) for case, role in runs}
    results = []
    for trial in range(ns.trials):
        for case, role in runs:
            label = case.id + (" (maintainer role)" if role == "maintainer" else "")
            progress(f"case {label}" + (f" (trial {trial + 1}/{ns.trials})" if ns.trials > 1 else ""))
            case_settings, files = prepared[(case.id, role)]
            if role == "maintainer":
                from ..evals.history_maintainer import run_maintainer

                results.append(run_maintainer(case, agent, case_settings, files, trial=trial, progress=progress))
            else:
                results.append(run_case(case, agent, case_settings, trial=trial, progress=progress))
    card = summarize(agent.name, results, ns.trials, "" if history else settings.warp_version, shard=ns.shard or "",
                     suite="history" if history else "")
    if ns.markdown:
        Path(ns.markdown).expanduser().write_text(render_markdown(card), encoding="utf-8")
    emit(card, render_text(card), ns.json)
    return 1 if any(c.flags for c in card.cases) else 0


def _runs(cases, role: str):  # type: ignore[no-untyped-def]
    """(case, role) pairs to run, in case order: --role picks among the roles each case has."""
    from ..evals.history_maintainer import roles

    return [(case, r) for case in cases for r in (roles(case, role) if case.history is not None else ["user"])]


def _case_settings(case, role: str, settings, progress):  # type: ignore[no-untyped-def]
    """(settings, files) of one case and role. A history case runs on its own releases (installed once into the
    cache; a registry that cannot be reached is one line and exit 2, before any case runs); its maintainer role on
    a venv of the release's dependencies, with the unpacked release and the maintainers' change as its trees
    (files; None: the case folder's own); every other case on this interpreter."""
    if case.history is None:
        return settings, None
    import dataclasses

    if role == "maintainer":
        from ..evals import history_maintainer as hm

        python = hm.interpreter(case, progress=progress)
        files = hm.trees(case, progress=progress)
        return dataclasses.replace(settings, python=python, reference_python=None,
                                   warp_version=hm.pinned_warp(case)), files
    from ..evals.history import interpreters, release_version

    before, after = interpreters(case, progress=progress)
    return dataclasses.replace(settings, python=before, reference_python=after,
                               warp_version=release_version(case, "warp-lang")), None


def _list(cases, dest: str | None) -> int:  # type: ignore[no-untyped-def]
    from ..evals.contract import agent_prompt

    rows = [{"id": c.id, "kind": c.kind, "expected_mechanisms": list(c.expected.mechanisms),
             "prompt": agent_prompt(c), "title": c.title} for c in cases]
    text = "\n".join(f"{r['id']:<22} {r['kind']:<9} {','.join(r['expected_mechanisms']) or '-':<8} {r['title']}"
                     for r in rows)
    emit({"cases": rows}, text, dest)
    return 0


def _merge(ns: argparse.Namespace) -> int:
    from ..evals.card import merge, render_markdown, render_text
    from ..evals.models import Scorecard

    if ns.rest[0] != "merge" or len(ns.rest) < 2:
        raise UsageError("eval: positional arguments are only `merge CARD.json...`")
    check_json_dest(ns.json, ns.rest[1:])
    _check_dest(ns.markdown, "--markdown")
    cards = []
    for name in ns.rest[1:]:
        try:
            cards.append(Scorecard.model_validate(json.loads(Path(name).expanduser().read_text(encoding="utf-8"))))
        except (OSError, ValueError) as exc:
            raise UsageError(f"eval merge: cannot read {clip_path(name)}: {str(exc).splitlines()[0][:200]}") \
                from None
    card = merge(cards)
    if ns.markdown:
        Path(ns.markdown).expanduser().write_text(render_markdown(card), encoding="utf-8")
    emit(card, render_text(card), ns.json)
    return 0
