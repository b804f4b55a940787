"""An application over the installed `solverlib`: a few smoothing steps on a grid and a particle step, forward
only."""

import numpy as np
import warp as wp

from solverlib import fields, particles


def main() -> None:
    wp.init()
    rng = np.random.default_rng(5)
    a = wp.array(rng.random((32, 32)).astype(np.float32), device="cpu")
    b = wp.zeros_like(a)
    for k in range(3):
        r = fields.step(a, b, 0.5 + 0.1 * k)
        a, b = b, a
    x = wp.array(rng.standard_normal((64, 3)) * 0.1, dtype=wp.vec3, device="cpu")
    e = particles.step(x, x, 0.3)
    print(f"residual {r:.3f} energy {e:.3f}")


if __name__ == "__main__":
    main()
