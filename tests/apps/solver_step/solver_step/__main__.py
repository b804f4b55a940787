"""`python -m solver_step`: three steps towards a target, then the values."""

import numpy as np

from .solver import Solver


def main() -> None:
    solver = Solver(6, 0.25)
    for target in (1.0, 2.0, 0.5):
        solver.step(target)
    print(np.round(solver.values.numpy(), 5))


if __name__ == "__main__":
    main()
