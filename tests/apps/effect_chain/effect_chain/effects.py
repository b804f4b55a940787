"""Effects a user can add after the filters, picked by name."""

from __future__ import annotations

from dataclasses import dataclass

import warp as wp


@dataclass(frozen=True)
class Effect:
    name: str
    amount: float = 0.0

    def kernel(self):
        if self.name == "shift":

            @wp.kernel(module="unique")
            def shift_effect(data: wp.array(dtype=float), amount: float):
                i = wp.tid()
                data[i] = data[i] + amount

            return shift_effect
        if self.name == "fold":

            @wp.kernel(module="unique")
            def fold_effect(data: wp.array(dtype=float), amount: float):
                i = wp.tid()
                data[i] = wp.abs(data[i]) - amount

            return fold_effect
        raise ValueError(f"unknown effect: {self.name}")
