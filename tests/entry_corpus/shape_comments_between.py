"""Comments between the docstring and the __future__ import."""

# A comment Python allows here.
# Another one.
from __future__ import annotations  # this must stay first

# --- standard library
import argparse

# --- third party
import warp as wp

if __name__ == "__main__":
    argparse.ArgumentParser(description=str(wp.config.mode)).parse_args()
