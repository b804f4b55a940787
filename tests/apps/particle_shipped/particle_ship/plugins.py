# Copyright (c) 2026 The particle_ship authors.
# SPDX-License-Identifier: Apache-2.0
"""Export plugins: each turns particle speeds into one energy channel."""

from __future__ import annotations

from dataclasses import dataclass

import warp as wp


@dataclass(frozen=True)
class Plugin:
    kind: str
    gain: float

    def kernel(self):
        if self.kind == "kinetic":

            @wp.kernel
            def export_kinetic(speed: wp.array(dtype=float), out: wp.array(dtype=float), gain: float):
                i = wp.tid()
                out[i] = out[i] + gain * 0.5 * speed[i] * speed[i]

            return export_kinetic
        elif self.kind == "potential":

            @wp.kernel
            def export_potential(speed: wp.array(dtype=float), out: wp.array(dtype=float), gain: float):
                i = wp.tid()
                out[i] = out[i] + gain * wp.abs(speed[i])

            return export_potential

        @wp.kernel
        def export_spread(speed: wp.array(dtype=float), out: wp.array(dtype=float), gain: float):
            i = wp.tid()
            out[i] = out[i] + gain * wp.sqrt(wp.abs(speed[i]))

        return export_spread

    def run(self, speed, out) -> None:
        wp.launch(self.kernel(), dim=speed.shape[0], inputs=[speed, out, self.gain], device=speed.device)


def load_plugins(spec: str) -> list[Plugin]:
    """`kind:gain,kind:gain` as given on the command line or in a config file."""
    out = []
    for item in spec.split(","):
        kind, gain = item.split(":")
        out.append(Plugin(kind, float(gain)))
    return out
