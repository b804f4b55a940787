"""Keep what the server sends small: compact output schemas and an explain result without a second copy of the text.

Every byte of `tools/list` and of a tool result lands in the agent's context. Two things were heavy:

- Output schemas generated from the pydantic models (`$defs`, `$ref`, titles, defaults, every nested description):
  23 KB of the 27.7 KB `tools/list`. `compact_schema` publishes a `$ref`-free minimal form instead: the top-level
  properties with their types and enums, nested objects by type only.
  It only ever loosens the full schema (drops constraints, never adds one), so every real result still validates;
  the server itself still validates each result against the full pydantic model before sending it.
- `explain_mechanism` sent the Markdown twice (`body` and `sections`) next to a text copy: see
  `MechanismResult` (probe/models/served.py).
"""

from __future__ import annotations

from typing import Any

DESCRIPTION_CHARS = 90
KEEP = ("type", "enum", "const")
MAX_ENUM = 10  # a longer enum (the 16 clock names) is published as its type only: docs/report.md lists the values


def _resolve(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = defs.get(node["$ref"].rsplit("/", 1)[-1], {})
    return node


def _short(text: str) -> str:
    first = text.strip().split("\n")[0]
    return first if len(first) <= DESCRIPTION_CHARS else first[: DESCRIPTION_CHARS - 1].rstrip() + "…"


def _compact(node: dict[str, Any], defs: dict[str, Any], depth: int, describe: bool) -> dict[str, Any]:
    node = _resolve(node, defs)
    variants = node.get("anyOf") or node.get("oneOf")
    if variants:
        parts = [_compact(v, defs, depth, False) for v in variants]
        types: list[str] = []
        for p in parts:
            t = p.get("type")
            for x in t if isinstance(t, list) else [t]:
                if x is not None and x not in types:
                    types.append(x)
        if len(types) != len(parts) or any(set(p) - {"type"} for p in parts if p.get("type") != "null"):
            # a union of shapes: the non-null variant's shape when there is exactly one, else just the types
            shaped = [p for p in parts if p.get("type") != "null"]
            out = dict(shaped[0]) if len(shaped) == 1 else {}
            if types:
                out["type"] = types if len(types) > 1 else types[0]
        else:
            out = {"type": types if len(types) > 1 else types[0]} if types else {}
    else:
        out = {k: node[k] for k in KEEP if k in node}
        if len(out.get("enum") or ()) > MAX_ENUM:
            del out["enum"]
        if node.get("type") == "object" and depth > 0:
            props = node.get("properties") or {}
            if props:
                out["properties"] = {k: _compact(v, defs, depth - 1, False) for k, v in props.items()}
        elif node.get("type") == "array" and depth > 0 and isinstance(node.get("items"), dict):
            items = _compact(node["items"], defs, depth - 1, False)
            if items:
                out["items"] = items
    if describe and node.get("description"):
        out["description"] = _short(node["description"])
    return out


def _nullable(prop: dict[str, Any]) -> dict[str, Any]:
    """`{"anyOf": [{"type": T, ...}, {"type": "null"}], "default": null}` as `{"type": [T, "null"], ...}`: the same
    values validate (a keyword of T's applies to T's values only), in half the bytes; an absent default is null."""
    variants = prop.get("anyOf")
    if not isinstance(variants, list) or len(variants) != 2 or {"type": "null"} not in variants:
        return prop
    (other,) = [v for v in variants if v != {"type": "null"}]
    if not isinstance(other.get("type"), str) or "anyOf" in other:
        return prop
    out = {k: v for k, v in prop.items() if k != "anyOf" and not (k == "default" and v is None)}
    return {**other, **out, "type": [other["type"], "null"]}


def untitled(schema: dict[str, Any]) -> dict[str, Any]:
    """An input schema without pydantic's generated titles ("Timeout S"): they repeat the property names; optional
    parameters as a nullable type (`_nullable`)."""
    out = {k: v for k, v in schema.items() if k != "title"}
    if isinstance(out.get("properties"), dict):
        out["properties"] = {
            name: _nullable({k: v for k, v in prop.items() if k != "title"}) if isinstance(prop, dict) else prop
            for name, prop in out["properties"].items()
        }
    return out


def compact_schema(schema: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    """A `$ref`-free, loosened copy of a JSON schema: see the module docstring."""
    defs = schema.get("$defs", {})
    root = _resolve(schema, defs)
    props = root.get("properties") or {}
    # types only: an agent picks a tool by its description and input schema; the result's fields are described
    # in docs/report.md and carried, with their values, in the result itself
    properties = {k: _compact(v, defs, depth, False) for k, v in props.items()}
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if root.get("required"):
        out["required"] = list(root["required"])
    return out


ON_REQUEST = ("Figures",)  # long tables of measured figures; their headline numbers are in `observed`


def explain_text(m: Any, sections: bool) -> str:
    """The text content of `explain_mechanism` for mechanism `m` (a knowledge.Mechanism).

    Default: the Markdown once, without the sections in ON_REQUEST (named at the end, with how to get them).
    With `sections`: the structured content carries every section, so the text only lists the headings.
    """
    out = [f"{m.id}  {m.title}", f"backends: {', '.join(m.backends)}", ""]
    if sections:
        out.append("sections (full text in structured `sections`):")
        out += [f"- {h}" for h in m.sections]
        return "\n".join(out) + "\n"
    left = []
    for heading, text in m.sections.items():
        if heading in ON_REQUEST:
            left.append(f"## {heading} ({len(text.encode()) / 1024:.1f} KB)")
            continue
        out += [f"## {heading}", "", text.strip(), ""]
    out.append("## Verify the fix")
    out += [f"- {v}" for v in m.verification]
    if left:
        out += ["", f"Left out: {', '.join(left)}; call with sections=true or read warp-compile://mechanisms/{m.id}."]
    return "\n".join(out) + "\n"
