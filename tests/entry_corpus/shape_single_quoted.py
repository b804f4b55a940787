'A single-quoted one-line docstring.'
import argparse

if __name__ == "__main__":
    argparse.ArgumentParser(description="single").parse_args()
