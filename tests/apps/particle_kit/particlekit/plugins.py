# Copyright (c) 2026 The particlekit authors.
# SPDX-License-Identifier: MIT
"""Export plugins: each scales one channel of the cloud by its own gain."""

from __future__ import annotations

import warp as wp


class Plugin:
    def __init__(self, name: str, gain: float):
        self.name = name
        self.gain = gain

    def make_kernel(self):
        gain = self.gain

        @wp.kernel
        def apply(values: wp.array(dtype=float), out: wp.array(dtype=float)):
            i = wp.tid()
            out[i] = out[i] + gain * values[i]

        return apply

    def run(self, values, out) -> None:
        wp.launch(self.make_kernel(), dim=values.shape[0], inputs=[values, out], device=values.device)


def load_plugins(spec: str) -> list[Plugin]:
    """`name:gain,name:gain` as given on the command line or in a config file."""
    out = []
    for item in spec.split(","):
        name, gain = item.split(":")
        out.append(Plugin(name, float(gain)))
    return out
