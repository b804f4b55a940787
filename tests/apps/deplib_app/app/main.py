"""An application whose kernels all live in the installed `deplib`: a float32 statistic, then a float64 audit, and
two filters created by the library on first use."""

import numpy as np
import warp as wp

import deplib
from deplib.ops import ramp


def main() -> None:
    wp.init()
    x = ramp(64, 0.25)
    w = wp.array(np.linspace(0.0, 1.0, 64), dtype=wp.float32)
    print(f"total32 {deplib.accumulate(x, w):.4f}")
    f = deplib.Filters()
    print(f"copy    {f.apply('copy', x).numpy().sum():.4f}")
    print(f"square  {f.apply('square', x).numpy().sum():.4f}")
    print(f"halve   {f.apply('halve', x).numpy().sum():.4f}")
    x64 = wp.array(x.numpy().astype(np.float64), dtype=wp.float64)
    w64 = wp.array(w.numpy().astype(np.float64), dtype=wp.float64)
    print(f"total64 {deplib.accumulate(x64, w64):.4f}")


if __name__ == "__main__":
    main()
