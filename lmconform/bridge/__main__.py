"""`python -m lmconform.bridge [options]`: `lmconform bridge` by its module's name, which a conformance run starts
once per case and a user can start without the console script. Either imports only the bridge's modules (0.1 s to
start, the echo agent's; the openai agent adds its SDK)."""

import argparse
import sys

from lmconform.bridge.cli import register

parser = argparse.ArgumentParser(prog="lmconform")
register(parser.add_subparsers(dest="command", required=True))
arguments = parser.parse_args(["bridge", *sys.argv[1:]])
sys.exit(arguments.handler(arguments))
