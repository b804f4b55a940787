"""A collision pipeline: the narrow-phase kernel made for its writer, launched with whatever data it is given."""

import warp as wp

from .narrow_phase import create_narrow_phase_kernel, friction, integrate, relax, solve_contacts


class CollisionPipeline:
    def __init__(self, writer_func, radius: float = 0.1):
        self.kernel = create_narrow_phase_kernel(writer_func)
        self.radius = radius

    def collide(self, pos, pairs, out) -> None:
        wp.launch(self.kernel, dim=pairs.shape[0], inputs=[pos, pairs, self.radius, out], device="cpu")


def step(pos, vel, target, dt: float) -> None:
    wp.launch(integrate, dim=pos.shape[0], inputs=[pos, vel, dt], device="cpu")
    wp.launch(relax, dim=pos.shape[0], inputs=[pos, target, 0.1], device="cpu")
    wp.launch(friction, dim=vel.shape[0], inputs=[vel, 0.05], device="cpu")


def resolve(pos, pairs, radius: float) -> None:
    wp.launch(solve_contacts, dim=pairs.shape[0], inputs=[pos, pairs, radius, 4], device="cpu")
