"""`python -m tools.targets install`: install every real server the project's tests start (`make targets`)."""

from __future__ import annotations

import argparse
import sys

from tools.targets.install import InstallError, default_cache_dir, install_all


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.targets", description=__doc__)
    parser.add_argument("action", choices=["install"])
    parser.parse_args(argv)
    try:
        install_all(default_cache_dir())
    except InstallError as error:
        print(f"lmconform targets: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
