"""`python -m relax_objects`: seed a field, smooth it twice with different sweep counts, print it."""

from __future__ import annotations

import numpy as np
import warp as wp

from .passes import seed, smoothing


def main() -> None:
    values = wp.zeros(10, dtype=float, device="cpu")
    wp.launch(seed, dim=10, inputs=[values], device="cpu")
    smoothing(2)(values)
    smoothing(3)(values)
    print(np.round(values.numpy(), 5))


if __name__ == "__main__":
    main()
