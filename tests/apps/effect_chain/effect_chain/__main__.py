"""`python -m effect_chain`: filter a short signal and print it."""

from __future__ import annotations

import numpy as np

from .chain import Chain
from .effects import Effect


def main() -> None:
    chain = Chain(offset=0.5, gain=2.0, ceiling=1.25, effects=(Effect("shift", 0.25),))
    signal = np.linspace(-1.0, 1.0, 8, dtype=np.float32)
    print(np.round(chain.process(signal), 5))


if __name__ == "__main__":
    main()
