"""solver_step: a relaxation solver whose step makes its kernels each time it runs."""
