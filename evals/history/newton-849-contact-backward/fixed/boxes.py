"""Contacts of a few boxes resting on the ground, found by newton's collision pipeline (CPU, no gradients)."""

import warp as wp

wp.config.quiet = True
# no gradients here: newton's modules, made at its import, then compile no backward code
wp.config.enable_backward = False

import newton  # noqa: E402


def build() -> newton.Model:
    builder = newton.ModelBuilder()
    builder.add_ground_plane()
    for i in range(3):
        body = builder.add_body(xform=wp.transform(wp.vec3(1.5 * i, 0.0, 0.49), wp.quat_identity()), mass=1.0)
        builder.add_shape_box(body, hx=0.5, hy=0.5, hz=0.5)
    return builder.finalize(device="cpu")


def main() -> None:
    model = build()
    state = model.state()
    contacts = model.collide(state)
    count = int(contacts.rigid_contact_count.numpy()[0])
    depth = contacts.rigid_contact_point0.numpy()[:count, 2].min() if count else 0.0
    print(f"contacts {count} lowest {depth:.4f}")


if __name__ == "__main__":
    main()
