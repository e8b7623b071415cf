"""A program that fails with a message on stderr."""

import sys

print("about to fail", file=sys.stderr)
sys.exit("could not open dataset.bin")
