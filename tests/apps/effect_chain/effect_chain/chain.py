"""The chain: each filter stage from its factory, launched in turn, then the user's effects."""

from __future__ import annotations

import numpy as np
import warp as wp

from .effects import Effect
from .filters import make_gain, make_limit, make_offset, tune_filters


class Chain:
    def __init__(self, offset: float, gain: float, ceiling: float, effects: tuple[Effect, ...] = ()) -> None:
        self.offset, self.gain, self.ceiling = offset, gain, ceiling
        self.effects = effects

    def _apply(self, kernel, data, *values) -> None:
        wp.launch(kernel, dim=data.shape[0], inputs=[data, *values], device="cpu")

    def process(self, signal: np.ndarray) -> np.ndarray:
        data = wp.array(signal, dtype=float, device="cpu")
        self._apply(make_offset(), data, self.offset)
        tune_filters()
        self._apply(make_gain(), data, self.gain)
        self._apply(make_limit(), data, self.ceiling)
        for effect in self.effects:
            self._apply(effect.kernel(), data, effect.amount)
        return data.numpy()
