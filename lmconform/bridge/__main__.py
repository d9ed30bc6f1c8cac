"""`python -m lmconform.bridge [options]`: `lmconform bridge` without loading the rest of the command line, for a
process a conformance run may start once per case (measured here: 0.15 s to start instead of 0.9 s with the echo
agent, 0.5 s instead of 1 s with the openai SDK)."""

import argparse
import sys

from lmconform.bridge.cli import register

parser = argparse.ArgumentParser(prog="lmconform")
register(parser.add_subparsers(dest="command", required=True))
arguments = parser.parse_args(["bridge", *sys.argv[1:]])
sys.exit(arguments.handler(arguments))
