"""An application over the installed `solverlib`, run as `python -m swarm`: particles, then the spectrum of their
energies (a library module imported on demand), forward only."""

import numpy as np
import warp as wp

import solverlib
from swarm.report import summary


def main() -> None:
    n = 64
    rng = np.random.default_rng(11)
    x = wp.array(rng.standard_normal((n, 3)) * 0.1, dtype=wp.vec3, device="cpu")
    v = wp.array(rng.standard_normal((n, 3)) * 0.1, dtype=wp.vec3, device="cpu")
    energies = [solverlib.particles.step(x, v, 0.2 * k) for k in range(3)]
    print(summary(energies))


if __name__ == "__main__":
    main()
