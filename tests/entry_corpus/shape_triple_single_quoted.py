#!/usr/bin/env python
'''A docstring in triple single quotes,
over two lines.'''
from __future__ import annotations
from __future__ import division

import argparse

if __name__ == "__main__":
    argparse.ArgumentParser(description="tsq").parse_args()
