# Copyright (c) 2026 The particle_ship authors.
# SPDX-License-Identifier: Apache-2.0
"""particle_ship: center a particle cloud, damp it, settle it and export its energy through plugins."""

__version__ = "0.4.0"
