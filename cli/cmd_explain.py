"""`warp-compile explain`: show a compile-time mechanism (CS-n), list them all, or search them by keywords.

warp-compile explain CS-3            one mechanism, for people
warp-compile explain cs3 --json      the same as JSON (the Mechanism model)
warp-compile explain --list          every mechanism, one line each
warp-compile explain "generic overload"   best match, or a ranked list when several are close

Words that match no mechanism (only whole words or long stems count) are an error, exit 2, naming the nearest.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..probe import knowledge
from ..probe.errors import UsageError
from ..probe.render.mechanism import render_list, render_text
from .args import add_command
from .io import clip

# a search hit is printed alone when the runner-up scores below this fraction of it
CLEAR_WINNER = 0.8
MAX_LISTED = 5


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(
        subparsers, "explain",
        "explain a mechanism (CS-1 ... CS-13, WC-1), list them, or search them by keywords",
        __doc__,
    )
    p.add_argument("query", nargs="*", help="a mechanism id (CS-3, cs3, 3) or keywords")
    p.add_argument("--list", action="store_true", help="list all mechanisms, or every match of the keywords")
    p.add_argument("--json", action="store_true", help="print the mechanism model(s) as JSON")
    p.set_defaults(func=run)


def _dump_one(m: knowledge.Mechanism) -> str:
    return m.model_dump_json(indent=2)


def _dump_many(rows: list[tuple[knowledge.Mechanism, float | None]]) -> str:
    items = []
    for m, score in rows:
        data = m.model_dump(mode="json")
        if score is not None:
            data["score"] = score
        items.append(data)
    return json.dumps(items, indent=2)


def _emit_list(rows: list[tuple[knowledge.Mechanism, float | None]], as_json: bool, hint: bool) -> None:
    if as_json:
        sys.stdout.write(_dump_many(rows) + "\n")
        return
    sys.stdout.write(render_list(rows))
    if hint:
        sys.stdout.write("\nrun `warp-compile explain CS-<n>` for the full text of one mechanism\n")


def _emit_one(m: knowledge.Mechanism, as_json: bool) -> None:
    sys.stdout.write((_dump_one(m) + "\n") if as_json else render_text(m))


def run(ns: argparse.Namespace) -> int:
    query = " ".join(ns.query).strip()

    if not query:
        if not ns.list:
            raise UsageError("explain needs a mechanism id (e.g. CS-3), some keywords, or --list")
        _emit_list([(m, None) for m in knowledge.list_mechanisms()], ns.json, hint=not ns.json)
        return 0

    if knowledge.normalize_id(query) is not None:
        _emit_one(knowledge.get(query), ns.json)  # unknown ids raise UnknownMechanism: one line, exit 2
        return 0

    hits = knowledge.search(query)
    if not hits:
        # get() tries exact titles/keywords and otherwise raises with the nearest suggestions
        _emit_one(knowledge.get(query), ns.json)
        return 0

    best = hits[0][1]
    close = [(m, s) for m, s in hits if s >= CLEAR_WINNER * best]
    if ns.list:
        _emit_list(list(hits[:MAX_LISTED]), ns.json, hint=not ns.json)
    elif len(close) == 1:
        _emit_one(close[0][0], ns.json)
    else:
        if not ns.json:
            sys.stdout.write(f"several mechanisms match {clip(query)!r}:\n")
        _emit_list(list(close[:MAX_LISTED]), ns.json, hint=not ns.json)
    return 0
