"""An application over the installed `contactsim`: two of its collision pipelines, each fed two kinds of output.

The test installs tests/apps/narrow_phase/contactsim into a virtual environment, so to this app the narrow phase
is a dependency's code."""

import numpy as np
import warp as wp

from contactsim import writers
from contactsim.narrow_phase import write_counted, write_distance
from contactsim.pipeline import CollisionPipeline, step


def main() -> None:
    n = 48
    rng = np.random.default_rng(3)
    pos = wp.array(rng.random((n, 3)).astype(np.float32), dtype=wp.vec3, device="cpu")
    vel = wp.zeros(n, dtype=wp.vec3, device="cpu")
    target = wp.array(rng.random((n, 3)).astype(np.float32), dtype=wp.vec3, device="cpu")
    idx = np.stack([np.arange(n - 1), np.arange(1, n)], axis=1).astype(np.int32)
    pairs = wp.array(idx, dtype=wp.vec2i, device="cpu")
    m = pairs.shape[0]
    near, far = writers.DistanceOut(), writers.ImpulseOut()
    near.dist, far.dist = wp.zeros(m, dtype=float, device="cpu"), wp.zeros(m, dtype=float, device="cpu")
    far.impulse = wp.zeros(m, dtype=wp.vec3, device="cpu")
    hits = writers.CountedOut()
    hits.dist, hits.hits = wp.zeros(m, dtype=float, device="cpu"), wp.zeros(1, dtype=int, device="cpu")
    plain, counting = CollisionPipeline(write_distance), CollisionPipeline(write_counted)
    for _ in range(2):
        step(pos, vel, target, 0.02)
        plain.collide(pos, pairs, near)
        plain.collide(pos, pairs, far)
        counting.collide(pos, pairs, hits)
    print(f"near {float(near.dist.numpy().sum()):.4f} far {float(far.dist.numpy().sum()):.4f}")
    print(f"hits {int(hits.hits.numpy()[0])}")


if __name__ == "__main__":
    main()
