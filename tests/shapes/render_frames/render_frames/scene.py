"""Scene description: spheres, a floor plane, optional boxes, directional lights."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import warp as wp

DEVICE = "cpu"
SPHERE, PLANE, BOX = 0, 1, 2


@dataclass
class Scene:
    spheres: np.ndarray  # (n, 4): center, radius
    plane: np.ndarray  # (4,): normal, offset
    boxes: np.ndarray = field(default_factory=lambda: np.zeros((0, 6)))  # (n, 6): center, half extents
    lights: np.ndarray = field(default_factory=lambda: np.array([[0.4, 1.0, 0.3]]))

    @property
    def geom_types(self) -> tuple[int, ...]:
        types = [PLANE]
        if len(self.spheres):
            types.append(SPHERE)
        if len(self.boxes):
            types.append(BOX)
        return tuple(sorted(types))

    @property
    def nlight(self) -> int:
        return len(self.lights)

    def device_arrays(self):
        lights = self.lights / np.linalg.norm(self.lights, axis=1, keepdims=True)
        boxes = self.boxes if len(self.boxes) else np.zeros((1, 6))
        return (
            wp.array(self.spheres.astype(np.float32), dtype=wp.vec4, device=DEVICE),
            wp.vec4(*self.plane.astype(np.float32).tolist()),
            wp.array(boxes[:, :3].astype(np.float32), dtype=wp.vec3, device=DEVICE),
            wp.array(boxes[:, 3:].astype(np.float32), dtype=wp.vec3, device=DEVICE),
            wp.array(lights.astype(np.float32), dtype=wp.vec3, device=DEVICE),
        )


def make_scene(seed: int) -> Scene:
    rng = np.random.default_rng(seed)
    centers = np.column_stack([rng.uniform(-1.5, 1.5, 4), rng.uniform(0.3, 0.8, 4), rng.uniform(-1.5, 1.5, 4)])
    radii = rng.uniform(0.25, 0.5, 4)
    return Scene(
        spheres=np.column_stack([centers, radii]),
        plane=np.array([0.0, 1.0, 0.0, 0.0]),
        lights=np.array([[0.4, 1.0, 0.3], [-0.6, 0.8, -0.2]]),
    )
