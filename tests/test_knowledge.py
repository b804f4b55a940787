"""The mechanism catalogue (knowledge/CS-*.md), its loader, search, and `warp-compile explain`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from warp_compile.cli import main
from warp_compile.probe import knowledge
from warp_compile.probe.errors import UsageError
from warp_compile.probe.render.mechanism import render_text

REPO = Path(__file__).resolve().parents[1]
SEED_DIR = REPO.parent / "shared" / "seed"
FIELDS = ("title", *knowledge.LIST_KEYS)
OWN_FIGURES = ("CS-1", "CS-3", "CS-6", "CS-10", "CS-12")


ALL_IDS = [f"CS-{n}" for n in range(1, 14)] + ["WC-1"]  # the study's thirteen, then this project's own


def test_all_load_with_every_field_filled():
    mechs = knowledge.list_mechanisms()
    assert [m.id for m in mechs] == ALL_IDS
    for m in mechs:
        assert m.number == int(m.id.split("-")[1])
        for field in FIELDS:
            value = getattr(m, field)
            assert value, f"{m.id}: {field} is empty"
            if isinstance(value, list):
                assert all(isinstance(v, str) and v.strip() for v in value), f"{m.id}: blank item in {field}"
        assert set(m.backends) <= {"cpu", "cuda", "cuda-tiles"}
        for section in knowledge.REQUIRED_SECTIONS:
            assert m.sections.get(section, "").strip(), f"{m.id}: section {section!r} missing"
        assert m.body.strip()


def test_loading_is_cached():
    assert knowledge.list_mechanisms()[0] is knowledge.list_mechanisms()[0]


def test_own_figures_are_recorded():
    for mid in OWN_FIGURES:
        m = knowledge.get(mid)
        own = [o for o in m.observed if o.startswith("warp-compile, CPU, warp-lang 1.19.0")]
        assert own, f"{mid} has no figure measured by this project"
        assert all("median of 3 cold runs" in o and "ms" in o for o in own)
        assert "MEASURED" not in m.body


@pytest.mark.parametrize("text", ["CS-3", "cs3", "CS3", "3", " cs-03 ", "cs_3", "Cs 3"])
def test_id_forms(text):
    assert knowledge.normalize_id(text) == "CS-3"
    assert knowledge.get(text).id == "CS-3"


@pytest.mark.parametrize("text", ["", "generic overload", "cs-", "3a", "CS-3-4"])
def test_not_an_id(text):
    assert knowledge.normalize_id(text) is None


@pytest.mark.parametrize("text", ["CS-14", "99", "cs0", "CS-099"])
def test_unknown_id_names_nearest(text):
    with pytest.raises(knowledge.UnknownMechanism) as info:
        knowledge.get(text)
    msg = str(info.value)
    assert isinstance(info.value, UsageError)
    assert "\n" not in msg
    assert re.search(r"CS-1[23]|CS-1\b", msg)


def test_unknown_words_suggest_by_title():
    with pytest.raises(knowledge.UnknownMechanism) as info:
        knowledge.get("kernel cach never reused")
    assert "CS-2" in str(info.value)


def test_get_accepts_exact_title_and_keyword():
    assert knowledge.get("Module boundaries too granular").id == "CS-4"
    assert knowledge.get("use_precompiled_headers").id == "CS-12"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("generic overload", "CS-6"),
        ("cache cleared every run", "CS-2"),
        ("precompiled header", "CS-12"),
        ("block_dim", "CS-5"),
        ("Failed to find module", "CS-8"),
        ("module unique", "CS-9"),
        ("tile_matmul", "CS-7"),
        ("max_unroll", "CS-11"),
        ("set_module_options after launch", "CS-3"),
    ],
)
def test_search_ranks_expected_first(query, expected):
    hits = knowledge.search(query)
    assert hits and hits[0][0].id == expected
    scores = [s for _, s in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(0 < s <= 1 for s in scores)


def test_search_without_overlap_is_empty():
    assert knowledge.search("xyzzy plugh") == []
    assert knowledge.search("the and of") == []


def test_excerpt_is_short_and_ends_at_a_sentence():
    for m in knowledge.list_mechanisms():
        text = knowledge.excerpt(m.id)
        assert 80 < len(text) <= 600
        assert text[-1] in ".!?…"
        assert "```" not in text and "`" not in text
    short = knowledge.excerpt("cs6", max_chars=150)
    assert len(short) <= 151


def test_render_text_has_header_and_sections():
    text = render_text(knowledge.get("CS-10"))
    assert text.startswith("CS-10  Backward code generated but never used")
    for section in knowledge.REQUIRED_SECTIONS:
        assert f"## {section}" in text


def test_front_matter_parser_rejects_malformed_input():
    good = "---\nid: CS-1\ntitle: t\nbackends:\n  - cpu\n---\nbody\n"
    data, body = knowledge.parse_front_matter(good)
    assert data == {"id": "CS-1", "title": "t", "backends": ["cpu"]}
    assert body.strip() == "body"
    for bad in ("no front matter\n", "---\nid: CS-1\n", "---\n  - orphan\n---\n", "---\nid CS-1\n---\n"):
        with pytest.raises(knowledge.KnowledgeError):
            knowledge.parse_front_matter(bad)


# ------------------------------------------------------------------------------------------------ CLI


def test_cli_explain_id(capsys):
    assert main(["explain", "cs3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("CS-3  Module options set after first load")


def test_cli_explain_json(capsys):
    assert main(["explain", "CS-6", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["id"] == "CS-6" and data["sections"]["Fix"]


def test_cli_list(capsys):
    assert main(["explain", "--list"]) == 0
    out = capsys.readouterr().out
    assert all(f"{i} " in out for i in ALL_IDS)
    assert main(["explain", "--list", "--json"]) == 0
    assert [d["id"] for d in json.loads(capsys.readouterr().out)] == ALL_IDS


def test_cli_keywords(capsys):
    assert main(["explain", "generic", "overload"]) == 0
    assert capsys.readouterr().out.startswith("CS-6  ")
    assert main(["explain", "parallel", "compile", "--list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["id"] == "CS-13" and "score" in rows[0]


@pytest.mark.parametrize("args", [["explain", "CS-14"], ["explain", "99"], ["explain", "xyzzy"], ["explain"]])
def test_cli_errors_are_one_line_exit_2(capsys, args):
    assert main(args) == 2
    captured = capsys.readouterr()
    err = captured.err
    assert err.startswith("warp-compile: error: ")
    assert err.count("\n") == 1
    assert "Traceback" not in err
    if args[1:] and args[1] != "xyzzy":
        assert "nearest" in err


def test_cli_unknown_id_real_process():
    proc = subprocess.run(
        [sys.executable, "-m", "warp_compile", "explain", "CS-99"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "CS-99" in lines[0] and "CS-13" in lines[0]
    assert "Traceback" not in proc.stderr


# ------------------------------------------------------------------------------------------------ wording


def _runs(text: str, n: int = 14) -> set[tuple[str, ...]]:
    tokens = re.findall(r"[a-z0-9_]+", text.lower())
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def test_no_fourteen_word_run_shared_with_the_seed():
    seeds = sorted(SEED_DIR.glob("*.txt")) if SEED_DIR.is_dir() else []
    if not seeds:
        pytest.skip(f"seed text not present at {SEED_DIR}")
    seed_runs: set[tuple[str, ...]] = set()
    for path in seeds:
        seed_runs |= _runs(path.read_text(encoding="utf-8", errors="replace"))
    files = sorted((REPO / "knowledge").glob("*.md"))
    assert len(files) == 15  # CS-1 ... CS-13, WC-1 and README
    shared = {}
    for path in files:
        common = _runs(path.read_text(encoding="utf-8")) & seed_runs
        if common:
            shared[path.name] = [" ".join(run) for run in sorted(common)[:3]]
    assert not shared, f"14-word runs copied from the seed: {shared}"
