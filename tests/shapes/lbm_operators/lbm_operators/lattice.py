"""The D2Q9 velocity set."""

from __future__ import annotations

import numpy as np

Q = 9
CX = (0, 1, 0, -1, 0, 1, -1, -1, 1)
CY = (0, 0, 1, 0, -1, 1, 1, -1, -1)
WEIGHTS = (4.0 / 9.0,) + (1.0 / 9.0,) * 4 + (1.0 / 36.0,) * 4


def equilibrium_numpy(rho: np.ndarray, ux: np.ndarray, uy: np.ndarray) -> np.ndarray:
    f = np.empty((Q,) + rho.shape)
    usq = ux * ux + uy * uy
    for k in range(Q):
        cu = CX[k] * ux + CY[k] * uy
        f[k] = WEIGHTS[k] * rho * (1.0 + 3.0 * cu + 4.5 * cu * cu - 1.5 * usq)
    return f
