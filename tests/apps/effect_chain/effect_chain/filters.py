"""Filter stages. A factory per stage, so a caller could give a stage a module of its own."""

from __future__ import annotations

import warp as wp


def make_offset(*, module="unique"):
    @wp.kernel(module=module)
    def offset_filter(data: wp.array(dtype=float), value: float):
        i = wp.tid()
        data[i] = data[i] - value

    return offset_filter


def make_gain(*, module="unique"):
    @wp.kernel(module=module)
    def gain_filter(data: wp.array(dtype=float), value: float):
        i = wp.tid()
        data[i] = data[i] * value

    return gain_filter


def make_limit(*, module="unique"):
    @wp.kernel(module=module)
    def limit_filter(data: wp.array(dtype=float), ceiling: float):
        i = wp.tid()
        data[i] = wp.clamp(data[i], -ceiling, ceiling)

    return limit_filter


def tune_filters() -> None:
    """Meant to make the filters faster; it sets an option on this file's module, which none of them is in."""
    wp.set_module_options({"fast_math": True})
