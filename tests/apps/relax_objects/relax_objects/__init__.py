"""relax_objects: smoothing passes whose kernels are built when a pass object is first asked for."""
