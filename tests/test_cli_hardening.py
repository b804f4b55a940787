"""The command line's contract under bad input and signals: one line on stderr and exit 2 before anything runs,
nothing of the user's written or left behind, 128 + N when ended by signal N (the process tree and temp dir gone).

Most tests call `warp_compile.cli.main` in-process with a tiny non-Warp command; the signal tests run the real CLI.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import alive as _alive
from warp_compile.cli import app as cli
from warp_compile.cli import main
from warp_compile.probe import knowledge

ROOT = Path(__file__).resolve().parents[1]
LONG = "x" * 100_000


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    """The captured stderr must be exactly one `warp-compile: error:` line, without a traceback."""
    err = capsys.readouterr().err
    assert err.startswith("warp-compile: error: "), err[:500]
    assert err.count("\n") == 1, err[:2000]
    assert "Traceback" not in err
    return err.strip()


def exit_code(argv: list[str]) -> int:
    """main()'s exit status; argparse's own errors leave by SystemExit(2) after the same one-line message."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


def marker_command(marker: Path) -> list[str]:
    """A non-Warp command that leaves `marker` behind if it ever runs."""
    return [sys.executable, "-c", f"open({str(marker)!r}, 'w').close()"]


@pytest.fixture(scope="module")
def saved_report(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A real measurement report (of a plain Python command: no Warp, fast), as `measure --json` writes it."""
    from warp_compile.probe.measure import measure

    d = tmp_path_factory.mktemp("report")
    report = measure([sys.executable, "-c", "pass"], d, samples=1, timeout_s=60)
    return report.model_dump_json(indent=2) + "\n"


# ------------------------------------------------------------------------------------ 1. --json checked up front


def _runs_with_json(cmd: str, dest: str, marker: Path, work: Path) -> list[str]:
    command = marker_command(marker)
    if cmd == "measure":
        return ["measure", "--quiet", "--samples", "1", "--cwd", str(work), "--json", dest, "--", *command]
    if cmd == "diagnose":
        return ["diagnose", "--quiet", "--cwd", str(work), "--json", dest, "--", *command]
    return ["compare", "--quiet", "--before-cwd", str(work), "--after-cwd", str(work), "--samples", "1",
            "--json", dest, "--", *command]


@pytest.mark.parametrize("cmd", ["measure", "diagnose", "compare"])
@pytest.mark.parametrize("kind", ["directory", "parent_is_a_file"])
def test_json_dest_is_checked_before_anything_runs(tmp_path, capsys, cmd, kind):
    work = tmp_path / "work"
    work.mkdir()
    (work / "app.py").write_text("print(1)\n")
    marker = tmp_path / "ran"
    dest = str(tmp_path / "out") if kind == "directory" else str(work / "app.py" / "x.json")
    if kind == "directory":
        (tmp_path / "out").mkdir()
    assert main(_runs_with_json(cmd, dest, marker, work)) == 2
    err = one_line_error(capsys)
    assert not marker.exists(), "the command ran although --json could never be written"
    if kind == "directory":
        assert "is a directory" in err
    else:
        assert "is not a directory" in err and "File exists" not in err
        assert (work / "app.py").read_text() == "print(1)\n"


def test_eval_json_dest_is_checked_before_any_case(tmp_path, capsys):
    assert main(["eval", "--case", "wave_step", "--json", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert "is a directory" in captured.err and "case wave_step" not in captured.err


# ------------------------------------------------------------------------------------ 2. no directory created


def test_measure_json_in_a_missing_directory_is_refused_not_created(tmp_path, capsys):
    marker = tmp_path / "ran"
    dest = tmp_path / "missing" / "dir" / "r.json"
    argv = ["measure", "--quiet", "--samples", "1", "--cwd", str(tmp_path), "--json", str(dest), "--",
            *marker_command(marker)]
    assert main(argv) == 2
    err = one_line_error(capsys)
    assert "does not exist" in err and "cannot write" in err
    assert not (tmp_path / "missing").exists()
    assert not marker.exists()


def test_json_to_an_existing_directory_and_stdout_still_work(tmp_path, capsys):
    dest = tmp_path / "r.json"
    argv = ["measure", "--quiet", "--samples", "1", "--cwd", str(tmp_path), "--json", str(dest), "--",
            sys.executable, "-c", "pass"]
    assert main(argv) == 0
    assert json.loads(dest.read_text())["kind"]
    capsys.readouterr()
    assert main(["measure", "--quiet", "--samples", "1", "--cwd", str(tmp_path), "--json", "-", "--",
                 sys.executable, "-c", "pass"]) == 0
    assert json.loads(capsys.readouterr().out)["samples"] == 1


# ------------------------------------------------------------------------------------ 3. never overwrite an input


def test_compare_refuses_to_write_over_its_own_input(tmp_path, capsys, saved_report):
    x = tmp_path / "x.json"
    after = tmp_path / "after.json"
    x.write_text(saved_report)
    after.write_text(saved_report)
    (tmp_path / "link.json").symlink_to(x)
    for spelling in (str(x), str(tmp_path / "." / "x.json"), str(tmp_path / "link.json")):
        assert main(["compare", str(x), str(after), "--json", spelling]) == 2
        assert "input report" in one_line_error(capsys)
        assert x.read_text() == saved_report
    assert main(["compare", str(x), str(after), "--json", str(after)]) == 2
    one_line_error(capsys)
    assert after.read_text() == saved_report
    # another file is fine
    assert main(["compare", str(x), str(after), "--json", str(tmp_path / "c.json")]) == 0
    assert json.loads((tmp_path / "c.json").read_text())["verdict"]


def test_diagnose_refuses_to_write_over_its_report(tmp_path, capsys, saved_report):
    r = tmp_path / "R.json"
    r.write_text(saved_report)
    assert main(["diagnose", "--report", str(r), "--json", str(r)]) == 2
    assert "input report" in one_line_error(capsys)
    assert r.read_text() == saved_report


# ------------------------------------------------------------------------------------ 4. explain: no nonsense


@pytest.mark.parametrize("query", ["foo bar", "bar", "CS-", "CS-3.5", "foo launch"])
def test_explain_nonsense_is_exit_2_with_suggestions(capsys, query):
    assert main(["explain", query]) == 2
    err = one_line_error(capsys)
    assert "nearest: CS-" in err


def test_explain_short_stems_and_id_fragments_do_not_match():
    assert knowledge.search("bar") == []  # stem of "bare", but not the same word
    assert knowledge.search("CS-") == [] and knowledge.search("CS-3.5") == []
    assert knowledge.search("options")[0][0].id == "CS-3"  # a long stem still meets its inflections
    assert all(score >= knowledge.MIN_SCORE for _, score in knowledge.search("cuda"))


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["CS-3"], "CS-3"),
        (["cs3"], "CS-3"),
        (["3"], "CS-3"),
        (["CS-03"], "CS-3"),
        (["generic overload"], "CS-6"),
        (["generic", "overload"], "CS-6"),
        (["precompiled header"], "CS-12"),
        (["fast_math option change"], "CS-3"),
    ],
)
def test_explain_real_queries_still_answer(capsys, args, expected):
    assert main(["explain", *args]) == 0
    assert capsys.readouterr().out.startswith(f"{expected}  ")


# ------------------------------------------------------------------------------------ 5. echoed input is clipped


@pytest.mark.parametrize(
    "argv",
    [
        ["explain", LONG],
        ["explain", "foo bar " * 12_500],
        ["explain", "CS-" + LONG],
        ["eval", "--case", LONG],
        ["compare", LONG, LONG],
        ["diagnose", "--report", LONG],
        ["diagnose", "--report", "/nonexistent/" + "y" * 200 + ".json"],
        ["measure", "--cwd", LONG, "--", sys.executable, "-c", "pass"],
        ["compare", "--before-cwd", LONG, "--after-cwd", ".", "--", sys.executable, "-c", "pass"],
        ["measure", "--samples", LONG, "--", sys.executable, "-c", "pass"],
        ["measure", "--json", LONG, "--", sys.executable, "-c", "pass"],
        ["serve", "--root", LONG],
        [LONG],
    ],
    ids=lambda a: " ".join(x[:12] for x in a[:3]),
)
def test_echoed_input_is_clipped(capsys, argv):
    t0 = time.monotonic()
    assert exit_code(argv) == 2
    err = one_line_error(capsys)
    assert len(err) < 700, len(err)
    assert "…" in err or "xxxxx" not in err
    assert time.monotonic() - t0 < 5


def test_explain_clips_the_query_to_about_80_characters(capsys):
    assert main(["explain", LONG]) == 2
    err = one_line_error(capsys)
    assert "x" * 79 + "…" in err and "x" * 81 not in err


# ------------------------------------------------------------------------------------ 6. eval: bad input is exit 2


def test_eval_negative_timeout_is_bad_input(capsys):
    assert exit_code(["eval", "--timeout", "-1", "--case", "wave_step"]) == 2
    assert "--timeout" in one_line_error(capsys)


@pytest.mark.parametrize("agent", ["/nonexistent/agent", "no-such-agent-command-xyz", "not_executable"])
def test_eval_unrunnable_agent_is_bad_input(tmp_path, capsys, monkeypatch, agent):
    monkeypatch.chdir(tmp_path)
    if agent == "not_executable":
        (tmp_path / "agent.sh").write_text("#!/bin/sh\n")
        agent = "./agent.sh"
    assert main(["eval", "--case", "wave_step", "--", agent]) == 2
    err = one_line_error(capsys)
    assert "agent command" in err and "case wave_step" not in err


# ------------------------------------------------------------------------------------ 7. non-finite timeouts


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN", "0", "-1", "soon"])
@pytest.mark.parametrize(
    "argv",
    [
        ["measure", "--timeout", "{}", "--", sys.executable, "-c", "pass"],
        ["diagnose", "--timeout", "{}", "--", sys.executable, "-c", "pass"],
        ["compare", "--before-cwd", ".", "--after-cwd", ".", "--timeout", "{}", "--", sys.executable, "-c", "pass"],
        ["eval", "--case", "wave_step", "--timeout", "{}"],
    ],
    ids=lambda a: a[0],
)
def test_timeout_must_be_finite_and_positive(capsys, argv, value):
    assert exit_code([value if a == "{}" else a for a in argv]) == 2
    assert "--timeout" in one_line_error(capsys)


# ------------------------------------------------------------------------------------ 8. eval --list --json


def test_eval_list_honours_json(tmp_path, capsys):
    assert main(["eval", "--list", "--json", "-"]) == 0
    captured = capsys.readouterr()
    rows = json.loads(captured.out)["cases"]
    assert isinstance(rows, list) and len(rows) >= 15
    assert all({"id", "kind", "expected_mechanisms", "prompt"} <= set(r) for r in rows)
    assert {"id": "particle_prep", "expected_mechanisms": ["CS-3"]}.items() <= next(
        r for r in rows if r["id"] == "particle_prep"
    ).items()
    assert "particle_prep" in captured.err  # the text table goes to stderr, as with every `--json -`
    dest = tmp_path / "cases.json"
    assert main(["eval", "--list", "--case", "wave_step", "--json", str(dest)]) == 0
    assert [r["id"] for r in json.loads(dest.read_text())["cases"]] == ["wave_step"]
    assert main(["eval", "--list"]) == 0
    assert not capsys.readouterr().out.lstrip().startswith("[")


# ------------------------------------------------------------------------------------ 9. diagnose --report --label


def test_diagnose_report_rejects_label(tmp_path, capsys, saved_report):
    r = tmp_path / "R.json"
    r.write_text(saved_report)
    assert main(["diagnose", "--report", str(r), "--label", "x"]) == 2
    assert "--label" in one_line_error(capsys)
    assert main(["diagnose", "--report", str(r)]) == 0


# ------------------------------------------------------------------------------------ 10. serve: port in use


def test_serve_port_in_use_is_one_line_exit_2(capsys):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["serve", "--transport", "streamable-http", "--port", str(port)]) == 2
    assert capsys.readouterr().err == f"warp-compile: error: serve: port {port} on 127.0.0.1 is in use\n"


# ------------------------------------------------------------------------------------ 11. no arguments


def test_no_arguments_is_one_line(capsys):
    assert main([]) == 2
    err = one_line_error(capsys)
    assert "missing command" in err and "--help" in err and "measure" in err


# ------------------------------------------------------------------------------------ 12. signals


def test_terminating_signal_unwinds_once_and_main_restores_handlers():
    before = {s: signal.getsignal(s) for s in cli.TERMINATING}
    try:
        with pytest.raises(cli.Terminated) as info:
            cli._terminate(signal.SIGHUP, None)
        assert info.value.signum == signal.SIGHUP and isinstance(info.value, KeyboardInterrupt)
        assert all(signal.getsignal(s) == signal.SIG_IGN for s in cli.TERMINATING)  # a second one cannot interrupt
    finally:
        for s, h in before.items():
            signal.signal(s, h)
    assert main(["explain", "CS-3"]) == 0
    assert {s: signal.getsignal(s) for s in cli.TERMINATING} == before


def test_terminated_maps_to_128_plus_signal(monkeypatch, capsys):
    def terminated(ns: argparse.Namespace) -> int:
        raise cli.Terminated(signal.SIGTERM)

    monkeypatch.setattr("warp_compile.cli.cmd_explain.run", terminated)  # bound when main builds the parser
    assert main(["explain", "CS-3"]) == 143
    assert "interrupted; the measured process tree was stopped" in capsys.readouterr().err



GRAND_APP = """\
import os, subprocess, sys, time
p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
tmp = sys.argv[1] + ".tmp"
open(tmp, "w").write(f"{os.getpid()} {p.pid}")
os.replace(tmp, sys.argv[1])
time.sleep(120)
"""


def _interruptible() -> None:
    """In the child before exec: SIGINT back to its default. A test run started in the background of a
    non-interactive shell (`(cmd &)`) inherits SIGINT ignored, and Python then keeps ignoring it, as a user's
    Ctrl-C never would be."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _signal_measure(tmp_path: Path, sig: int) -> tuple[int, str, list[int], list[str]]:
    """Run `warp-compile measure` on an app that spawns a grandchild, send `sig` mid-run; report what is left."""
    app = tmp_path / "app.py"
    app.write_text(GRAND_APP)
    pids_file = tmp_path / "pids"
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "warp_compile", "measure", "--samples", "2", "--timeout", "120", "--quiet",
         "--cwd", str(tmp_path), "--", sys.executable, str(app), str(pids_file)],
        env=dict(os.environ, TMPDIR=str(tmpdir)), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=ROOT, preexec_fn=_interruptible,
    )
    pids: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while not pids_file.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert pids_file.exists(), proc.communicate(timeout=30)
        pids = [int(p) for p in pids_file.read_text().split()]
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        deadline = time.monotonic() + 5
        while any(_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = [p for p in pids if _alive(p)]
        return proc.returncode, err, left, sorted(os.listdir(tmpdir))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        for p in pids:  # only the processes this test started
            if _alive(p):
                os.kill(p, signal.SIGKILL)


@pytest.mark.parametrize(
    "sig", [signal.SIGHUP, signal.SIGTERM, signal.SIGQUIT], ids=lambda s: signal.Signals(s).name
)
def test_signal_stops_the_tree_removes_the_temp_root_and_exits_128_plus_n(tmp_path, sig):
    code, err, left, temp = _signal_measure(tmp_path, sig)
    assert code == 128 + sig, err
    assert "Traceback" not in err
    assert "interrupted; the measured process tree was stopped" in err
    assert left == [], "measured processes outlived warp-compile"
    assert [t for t in temp if t.startswith("warp-compile")] == []


def test_sigint_still_exits_130(tmp_path):
    code, err, left, temp = _signal_measure(tmp_path, signal.SIGINT)
    assert code == 130 and left == [] and temp == [], err


# ------------------------------------------------------------------------------------ 13. help


def _help(capsys, *args: str) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as info:
        main([*args, "--help"])
    assert info.value.code == 0
    return " ".join(capsys.readouterr().out.split())


def test_usage_lines_show_the_command_after_dashdash(capsys):
    assert "-- CMD..." in _help(capsys, "measure").split("options:")[0]
    diagnose = _help(capsys, "diagnose").split("Measure CMD")[0]
    assert "-- CMD..." in diagnose and "--report REPORT.json" in diagnose
    assert "-- CMD..." in _help(capsys, "compare").split("Compare two")[0]
    ev = _help(capsys, "eval")
    assert "-- AGENT_CMD..." in ev.split("Grade an agent")[0]
    assert "Grade an agent on the eval cases" in ev  # a description


def test_help_states_every_default():
    """Every option with a default says it in its help (the 900 s timeout above all)."""
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = []
    for name, p in sub.choices.items():
        for a in p._actions:
            if a.help in (None, argparse.SUPPRESS) or isinstance(a, argparse._HelpAction):
                continue
            if a.default in (None, False, "", [], argparse.SUPPRESS):
                continue
            if "default" not in a.help:
                missing.append(f"{name} {a.option_strings}")
    assert missing == []
    measure = sub.choices["measure"]
    timeout = next(a for a in measure._actions if "--timeout" in a.option_strings)
    assert "default 900" in timeout.help


def test_verify_limit_on_the_command_line_is_the_engines():
    """`diagnose --verify-max-pairs`'s default and its help are verify's own limit, not a second copy that drifts."""
    from warp_compile.probe.fix.verify import MAX_ROUNDS

    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    flag = next(a for a in sub.choices["diagnose"]._actions if "--verify-max-pairs" in a.option_strings)
    assert flag.default == MAX_ROUNDS
    assert f"(default {MAX_ROUNDS})" in flag.help
