"""A late option and a late generic instance in one project (CS-3 and CS-6), for `fix` on a loaded machine."""
