"""The swarm's summary line: the energies and their spectrum (solverlib.spectra, imported here on first use)."""

import numpy as np
import warp as wp


def summary(energies: list[float]) -> str:
    from solverlib import spectra

    x = wp.array(np.resize(np.asarray(energies, dtype=np.float32), 64), device="cpu")
    return f"energy {sum(energies):.3f} spectrum {spectra.spectrum(x):.3f}"
