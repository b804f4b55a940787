"""The mechanism catalogue: `knowledge/CS-<n>.md` and `knowledge/WC-<n>.md` files turned into `Mechanism` models.

Two families of ids: CS-n are the compile-time mechanisms of NVIDIA's study, WC-n this project's own (costs paid at
every call rather than at the first load). Both are cited, listed and searched alike; CS-n come first.

Each file starts with front matter in a small YAML subset (read by `parse_front_matter`, no YAML library):

    ---
    id: CS-3
    title: Module options set after first load
    backends:
      - cpu
      - cuda
    ---

Only `key: value` scalars and `key:` followed by `  - item` lines are understood. The Markdown body after the
closing `---` is split into `## ` sections. Nothing here imports Warp; the files ship inside the installed
package `warp_compile.knowledge` and are read with `importlib.resources`.
"""

from __future__ import annotations

import difflib
import functools
import math
import re
from importlib import resources

from .errors import UsageError
from .fmt import clip
from .models.knowledge import Mechanism

PACKAGE = "warp_compile.knowledge"
SUGGEST_CHARS = 200  # characters of a query compared for suggestions
LIST_KEYS = (
    "backends",
    "signals",
    "applies_when",
    "does_not_apply_when",
    "fix",
    "verification",
    "observed",
    "keywords",
)
SCALAR_KEYS = ("id", "title")
REQUIRED_SECTIONS = ("What happens", "How warp-compile sees it", "Fix", "When not to", "Figures")
KNOWN_BACKENDS = ("cpu", "cuda", "cuda-tiles")

_ID_RE = re.compile(r"^\s*(cs|wc)?[\s_\-]*0*(\d{1,4})\s*$", re.IGNORECASE)
_ID_STRICT_RE = re.compile(r"^(CS|WC)-([1-9]\d*)$")
PREFIXES = ("CS", "WC")  # the families, in the order they are listed


def order(mechanism_id: str) -> tuple[int, int]:
    """Sort key of an id: its family (CS first), then its number; anything else last."""
    match = _ID_STRICT_RE.match(mechanism_id or "")
    if not match:
        return (len(PREFIXES), 99)
    return (PREFIXES.index(match.group(1)), int(match.group(2)))






class UnknownMechanism(UsageError):
    """No mechanism matches the id or words given; the message names the nearest ones."""


class KnowledgeError(Exception):
    """A knowledge file is malformed (a packaging bug, not a user error)."""


# ---------------------------------------------------------------------------------------------- parsing


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def parse_front_matter(text: str, source: str = "<text>") -> tuple[dict[str, str | list[str]], str]:
    """Split `text` into (front matter, body). Raises KnowledgeError on anything outside the subset."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise KnowledgeError(f"{source}: no front matter (first line must be '---')")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise KnowledgeError(f"{source}: front matter is not closed by '---'") from None
    data: dict[str, str | list[str]] = {}
    current: str | None = None
    for lineno, raw in enumerate(lines[1:end], start=2):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        if raw.startswith((" ", "\t")):
            item = raw.strip()
            if not item.startswith("- ") or current is None or not isinstance(data.get(current), list):
                raise KnowledgeError(f"{source}:{lineno}: expected '  - item' under a list key")
            data[current].append(_unquote(item[2:]))  # type: ignore[union-attr]
            continue
        key, sep, value = raw.partition(":")
        key = key.strip()
        if not sep or not re.fullmatch(r"[a-z_]+", key):
            raise KnowledgeError(f"{source}:{lineno}: expected 'key: value' or 'key:'")
        if key in data:
            raise KnowledgeError(f"{source}:{lineno}: duplicate key {key!r}")
        value = value.strip()
        if value:
            data[key] = _unquote(value)
            current = None
        else:
            data[key] = []
            current = key
    body = "\n".join(lines[end + 1 :]).strip() + "\n"
    return data, body


def split_sections(body: str) -> dict[str, str]:
    """Map each '## heading' of a Markdown body to its text (code fences are respected)."""
    sections: dict[str, str] = {}
    heading: str | None = None
    buf: list[str] = []
    in_code = False
    for line in body.splitlines():
        if line.lstrip().startswith("```"):
            in_code = not in_code
        if not in_code and line.startswith("## "):
            if heading is not None:
                sections[heading] = "\n".join(buf).strip()
            heading, buf = line[3:].strip(), []
        elif heading is not None:
            buf.append(line)
    if heading is not None:
        sections[heading] = "\n".join(buf).strip()
    return sections


def parse_mechanism(text: str, source: str = "<text>") -> Mechanism:
    data, body = parse_front_matter(text, source)
    for key in SCALAR_KEYS:
        if not isinstance(data.get(key), str) or not data[key]:
            raise KnowledgeError(f"{source}: front matter needs a non-empty scalar {key!r}")
    for key in LIST_KEYS:
        value = data.get(key)
        if not isinstance(value, list) or not value or not all(value):
            raise KnowledgeError(f"{source}: front matter needs a non-empty list {key!r}")
    unknown = set(data) - set(SCALAR_KEYS) - set(LIST_KEYS)
    if unknown:
        raise KnowledgeError(f"{source}: unknown front-matter keys {sorted(unknown)}")
    match = _ID_STRICT_RE.match(str(data["id"]))
    if not match:
        raise KnowledgeError(f"{source}: id must look like CS-<n> or WC-<n>, got {data['id']!r}")
    bad = [b for b in data["backends"] if b not in KNOWN_BACKENDS]  # type: ignore[union-attr]
    if bad:
        raise KnowledgeError(f"{source}: unknown backends {bad}; use {list(KNOWN_BACKENDS)}")
    sections = split_sections(body)
    missing = [s for s in REQUIRED_SECTIONS if not sections.get(s)]
    if missing:
        raise KnowledgeError(f"{source}: missing or empty sections {missing}")
    return Mechanism(number=int(match.group(2)), body=body, sections=sections, **data)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------- loading


@functools.lru_cache(maxsize=1)
def _load_all() -> tuple[Mechanism, ...]:
    root = resources.files(PACKAGE)
    found: list[Mechanism] = []
    for entry in root.iterdir():
        if entry.name.startswith(tuple(f"{p}-" for p in PREFIXES)) and entry.name.endswith(".md"):
            mech = parse_mechanism(entry.read_text(encoding="utf-8"), source=entry.name)
            if entry.name != f"{mech.id}.md":
                raise KnowledgeError(f"{entry.name}: file name does not match id {mech.id}")
            found.append(mech)
    if not found:
        raise KnowledgeError(f"no CS-*.md files found in package {PACKAGE}")
    return tuple(sorted(found, key=lambda m: order(m.id)))


def list_mechanisms() -> list[Mechanism]:
    """All mechanisms, CS-1..CS-n first, then this project's own (WC-1..)."""
    return list(_load_all())


def _by_id() -> dict[str, Mechanism]:
    return {m.id: m for m in _load_all()}


def normalize_id(text: str) -> str | None:
    """'CS-3', 'cs3', 'CS3', '3', ' cs-03 ' -> 'CS-3'; 'wc1', 'WC-1' -> 'WC-1'. None when the text does not look
    like an id at all. A bare number is a CS id.

    The result is only a canonical form; it may name a mechanism that does not exist (CS-99).
    """
    match = _ID_RE.match(text or "")
    if not match:
        return None
    return f"{(match.group(1) or 'CS').upper()}-{int(match.group(2))}"


# ---------------------------------------------------------------------------------------------- lookup


def _suggest(query: str, limit: int = 3) -> list[Mechanism]:
    """Nearest mechanisms to a query: by number for id-like text, else by title/keyword similarity."""
    mechs = list_mechanisms()
    canon = normalize_id(query)
    if canon is not None:
        family, wanted = order(canon)
        return sorted(mechs, key=lambda m: (order(m.id)[0] != family, abs(m.number - wanted), order(m.id)))[
            : min(limit, 2)
        ]
    q = query.strip().lower()[:SUGGEST_CHARS]  # similarity of a huge query costs seconds and says nothing more
    scored: dict[str, float] = {}
    for m in mechs:
        candidates = [m.title.lower(), m.id.lower(), *(k.lower() for k in m.keywords)]
        best = max(difflib.SequenceMatcher(None, q, c).ratio() for c in candidates)
        scored[m.id] = best
    for m, score in search(q):
        scored[m.id] = max(scored[m.id], 0.5 + score / 2)
    ranked = sorted(mechs, key=lambda m: -scored[m.id])
    return [m for m in ranked if scored[m.id] >= 0.3][:limit] or ranked[:limit]


def _suggestion_text(mechs: list[Mechanism]) -> str:
    return "; ".join(f"{m.id} ({m.title})" for m in mechs)


def get(query: str) -> Mechanism:
    """The mechanism named by an id form ('CS-3', 'cs3', '3'), an exact title or an exact keyword.

    Raises UnknownMechanism (a UsageError: one line, exit 2) naming the nearest mechanisms otherwise.
    """
    canon = normalize_id(query)
    table = _by_id()
    if canon is not None:
        if canon in table:
            return table[canon]
        ranges = []
        for prefix in PREFIXES:
            ids = [m.id for m in list_mechanisms() if m.id.startswith(prefix + "-")]
            if ids:
                ranges.append(f"{ids[0]} to {ids[-1]}" if len(ids) > 1 else ids[0])
        raise UnknownMechanism(
            f"unknown mechanism {clip(query.strip())!r}: ids run from {' and '.join(ranges)}; "
            f"nearest: {_suggestion_text(_suggest(query))}"
        )
    q = " ".join((query or "").lower().split())
    for m in table.values():
        if q and (q == m.title.lower() or q in (k.lower() for k in m.keywords)):
            return m
    raise UnknownMechanism(
        f"no mechanism is called {clip(query.strip())!r}; nearest: {_suggestion_text(_suggest(query))} "
        "(try: warp-compile explain --list)"
    )


# ---------------------------------------------------------------------------------------------- search

_STOP = frozenset(
    """a an and are as at be been but by can do does for from had has have how i if in into is it its of on or
    so than that the their then there these this to was were what when where which while who why will with
    without my our your we you they me not no get gets got keep keeps kept every each all any one two
    warp""".split()
)
_WORD_RE = re.compile(r"[a-z0-9_]+")
FIELD_WEIGHTS = {"title": 3.0, "keywords": 3.0, "signals": 2.0, "body": 1.0}
_OTHER_FIELDS = 0.3  # share of the weight of each further field a word is found in
MIN_WORD = 3  # shorter query and document words are ignored, like stop words
MIN_STEM = 4  # shorter stems match only the same whole word
MIN_SCORE = 0.1  # a mechanism scoring below this is no match at all
MIN_COVERAGE = 0.5  # share of the query's weight a mechanism must contain to match at all


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            word = word[: -len(suffix)]
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def _term(word: str) -> str:
    """The form a word is matched by: its stem when that is long enough to mean something, else the word itself.

    `options` and `option`, `cached` and `cache` meet at a stem of 4+ letters; `bar` and `bare` (stem `bar`) do not:
    a short stem is a prefix shared by unrelated words, so short words match only as whole words.
    """
    stem = _stem(word)
    return stem if len(stem) >= MIN_STEM else word


def _terms(text: str, *, drop_stop: bool = True) -> list[str]:
    words = _WORD_RE.findall(text.lower())
    out: list[str] = []
    for w in words:
        # split identifiers such as enable_backward / use_precompiled_headers into their parts as well
        parts = [w, *w.split("_")] if "_" in w else [w]
        for p in parts:
            # words under 3 characters (`cs` of a CS-n reference, digits, `wp`) say nothing about a mechanism
            if len(p) >= MIN_WORD and not (drop_stop and p in _STOP):
                out.append(_term(p))
    return out


@functools.lru_cache(maxsize=1)
def _index() -> tuple[dict[str, dict[str, set[str]]], dict[str, float]]:
    fields: dict[str, dict[str, set[str]]] = {}
    df: dict[str, int] = {}
    mechs = list_mechanisms()
    for m in mechs:
        f = {
            "title": set(_terms(m.title)),
            "keywords": set(_terms(" ".join(m.keywords))),
            "signals": set(_terms(" ".join(m.signals))),
            "body": set(_terms(" ".join([m.body, *m.applies_when, *m.does_not_apply_when, *m.fix, *m.verification]))),
        }
        fields[m.id] = f
        for term in set().union(*f.values()):
            df[term] = df.get(term, 0) + 1
    n = len(mechs)
    idf = {t: math.log(1.0 + n / d) for t, d in df.items()}
    return fields, idf


def search(keywords: str | list[str]) -> list[tuple[Mechanism, float]]:
    """Rank mechanisms by keyword overlap with title, keywords, signals and body. Scores are in (0, 1].

    Each query word counts with an IDF weight (a word found in every file says little) times the weight of the
    best field it appears in (title and keywords 3, signals 2, body 1), plus a little for every other field that
    also has it. Consecutive query words found together in one keyword phrase or the title add a bonus, and a
    query whose words all sit in one keyword phrase adds another. Mechanisms without any overlap are left out.
    """
    text = keywords if isinstance(keywords, str) else " ".join(keywords)
    query = list(dict.fromkeys(_terms(text)))
    if not query:
        return []
    fields, idf = _index()
    max_idf = math.log(1.0 + len(fields))
    weights = {t: idf.get(t, max_idf) for t in query}
    total = sum(weights.values())
    best_field = max(FIELD_WEIGHTS.values())
    spread = _OTHER_FIELDS * (sum(FIELD_WEIGHTS.values()) - best_field)
    bigrams = list(zip(query, query[1:], strict=False))
    possible = total * (best_field + spread) + sum(0.5 * (weights[a] + weights[b]) for a, b in bigrams)
    possible += total if len(query) > 1 else 0.0
    results: list[tuple[Mechanism, float]] = []
    for m in list_mechanisms():
        f = fields[m.id]
        score = matched = 0.0
        for t in query:
            hits = sorted((FIELD_WEIGHTS[name] for name, terms in f.items() if t in terms), reverse=True)
            if hits:
                score += weights[t] * (hits[0] + _OTHER_FIELDS * sum(hits[1:]))
                matched += weights[t]
        if score <= 0 or matched < MIN_COVERAGE * total:
            continue  # no overlap, or most of the query (by weight) is found nowhere in this mechanism
        phrases = [set(_terms(k)) for k in m.keywords + [m.title]]
        for a, b in bigrams:
            if any(a in p and b in p for p in phrases):
                score += 0.5 * (weights[a] + weights[b])
        if len(query) > 1 and any(set(query) <= p for p in phrases):
            score += total
        score = round(min(1.0, score / possible), 4)
        if score >= MIN_SCORE:
            results.append((m, score))
    results.sort(key=lambda pair: (-pair[1], order(pair[0].id)))
    return results


# ---------------------------------------------------------------------------------------------- excerpts


def _plain(markdown: str) -> str:
    """Markdown prose as plain text: code blocks dropped, inline markup removed, whitespace collapsed."""
    text = re.sub(r"```.*?```", " ", markdown, flags=re.DOTALL)
    text = re.sub(r"^\s*(?:[-*]|\d+\.)\s+", "", text, flags=re.MULTILINE)
    text = text.replace("**", "").replace("`", "")
    return " ".join(text.split())


def excerpt(mechanism_id: str, max_chars: int = 600) -> str:
    """A short passage for a diagnosis finding: the 'What happens' section cut at a sentence boundary."""
    mech = get(mechanism_id)
    text = _plain(mech.sections.get("What happens", "") or mech.body)
    if len(text) <= max_chars:
        return text
    window = text[: max_chars + 1]
    ends = [m.end() for m in re.finditer(r"[.!?](?=\s)", window)]
    if ends and ends[-1] >= max_chars // 3:
        return window[: ends[-1]].strip()
    cut = window[:max_chars].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + "…"
