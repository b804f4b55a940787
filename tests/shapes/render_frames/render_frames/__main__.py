"""Command-line entry point: `python -m render_frames [--frames N]`."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from .render import RenderConfig, render
from .scene import make_scene


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="render_frames")
    parser.add_argument("--frames", type=int, default=5)
    args = parser.parse_args(argv)
    cfg = RenderConfig()
    scene = make_scene(seed=71)
    sums = []
    for frame in range(args.frames):
        if frame == 3:  # a box is dropped into the scene
            scene.boxes = np.array([[0.0, 0.35, 0.0, 0.35, 0.35, 0.35]])
        image = render(scene, cfg, angle=0.3 * frame)
        sums.append(float(np.round(image.astype(np.float64), 4).sum()))
    print("pixel sums " + " ".join(f"{s:.2f}" for s in sums[:3]))
    print("pixel sums " + " ".join(f"{s:.2f}" for s in sums[3:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
