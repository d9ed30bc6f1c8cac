"""`make bench`: each goal a line with a fixed prefix, a ratio of two sides measured in the same run, so the
figures mean the same on a fast machine and a busy one. `python -m bench NAME...` runs some of them; `real` (against
the real model servers) runs only when named."""

from __future__ import annotations

import sys

from bench import agents, fuzz, parser, pipeline, real, schema, server

BENCHES = {"parser": parser.bench, "pipeline": pipeline.bench, "server": server.bench, "schema": schema.bench,
           "fuzz": fuzz.bench, "agents": agents.bench, "real": real.bench}
DEFAULT = ("parser", "pipeline", "server", "schema", "fuzz", "agents")


def main(argv: list[str]) -> int:
    chosen = argv or list(DEFAULT)
    unknown = [name for name in chosen if name not in BENCHES]
    if unknown:
        print(f"bench: no benchmark {', '.join(unknown)}; there are {', '.join(BENCHES)}", file=sys.stderr)
        return 2
    for name in chosen:
        for line in BENCHES[name]():
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
