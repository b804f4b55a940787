"""Contact writers: each pipeline hands its own data struct to the narrow phase."""

import warp as wp


@wp.struct
class DistanceOut:
    dist: wp.array(dtype=float)


@wp.struct
class CountedOut:
    dist: wp.array(dtype=float)
    hits: wp.array(dtype=int)


@wp.struct
class ImpulseOut:
    dist: wp.array(dtype=float)
    impulse: wp.array(dtype=wp.vec3)


@wp.struct
class DebugOut:
    dist: wp.array(dtype=float)
    hits: wp.array(dtype=int)
    pair_id: wp.array(dtype=int)
