"""A box dropped on the ground, stepped with newton's Kamino solver (CPU, a few steps)."""

import numpy as np
import warp as wp

wp.config.quiet = True

import newton  # noqa: E402


def build() -> newton.Model:
    builder = newton.ModelBuilder(up_axis=newton.Axis.Z)
    newton.solvers.SolverKamino.register_custom_attributes(builder)
    builder.add_ground_plane()
    body = builder.add_body(xform=wp.transform(wp.vec3(0.0, 0.0, 0.3), wp.quat_identity()), mass=1.0)
    builder.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
    return builder.finalize(device="cpu")


def main() -> None:
    model = build()
    solver = newton.solvers.SolverKamino(model)
    state_0, state_1, control = model.state(), model.state(), model.control()
    for _ in range(4):
        state_0.clear_forces()
        solver.step(state_0, state_1, control, None, 0.01)
        state_0, state_1 = state_1, state_0
    z = state_0.body_q.numpy()[0, 2]
    print(f"steps 4 height {z:.4f} finite {bool(np.isfinite(state_0.body_q.numpy()).all())}")


if __name__ == "__main__":
    main()
