# Copyright (c) 2026 The particlekit authors.
# SPDX-License-Identifier: MIT
"""particlekit: prepare a particle cloud (center, condition, settle) before export."""

__version__ = "1.4.0"
