"""A box set up for newton's Kamino solver on the CPU: the model converted to Kamino's, nothing stepped yet."""

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
    newton.solvers.SolverKamino(model)
    state = model.state()
    print(f"bodies {model.body_count} joints {model.joint_count} height {state.body_q.numpy()[0, 2]:.4f}")


if __name__ == "__main__":
    main()
