"""Run a few steps of two collision pipelines, each fed two kinds of contact output."""

import numpy as np
import warp as wp

from . import writers
from .narrow_phase import write_counted, write_distance
from .pipeline import CollisionPipeline, resolve, step


def main() -> None:
    wp.init()
    n = 64
    rng = np.random.default_rng(7)
    pos = wp.array(rng.random((n, 3)).astype(np.float32), dtype=wp.vec3, device="cpu")
    vel = wp.zeros(n, dtype=wp.vec3, device="cpu")
    target = wp.array(rng.random((n, 3)).astype(np.float32), dtype=wp.vec3, device="cpu")
    pairs = wp.array(np.stack([np.arange(n - 1), np.arange(1, n)], axis=1).astype(np.int32), dtype=wp.vec2i,
                     device="cpu")
    m = pairs.shape[0]

    def dist():
        return wp.zeros(m, dtype=float, device="cpu")

    plain = CollisionPipeline(write_distance)
    counting = CollisionPipeline(write_counted)
    outs = {
        "distance": writers.DistanceOut(),
        "impulse": writers.ImpulseOut(),
        "counted": writers.CountedOut(),
        "debug": writers.DebugOut(),
    }
    for o in outs.values():
        o.dist = dist()
    outs["impulse"].impulse = wp.zeros(m, dtype=wp.vec3, device="cpu")
    outs["counted"].hits = wp.zeros(1, dtype=int, device="cpu")
    outs["debug"].hits = wp.zeros(1, dtype=int, device="cpu")
    outs["debug"].pair_id = wp.zeros(m, dtype=int, device="cpu")

    for _ in range(3):
        step(pos, vel, target, 0.01)
        plain.collide(pos, pairs, outs["distance"])
        plain.collide(pos, pairs, outs["impulse"])
        counting.collide(pos, pairs, outs["counted"])
        counting.collide(pos, pairs, outs["debug"])
        resolve(pos, pairs, 0.1)
    total = sum(float(o.dist.numpy().sum()) for o in outs.values())
    print(f"contact distance sum {total:.4f}")
    print(f"hits {int(outs['counted'].hits.numpy()[0])}")


if __name__ == "__main__":
    main()
