"""The ``c8env`` command: ``c8env eval ...``, ``c8env play ...``, ``c8env demo ...``, ``c8env bench ...``."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    commands = {"eval": "c8env.evaluate", "play": "c8env.play", "demo": "c8env.demo", "bench": "c8env.bench"}
    if not argv or argv[0] not in commands:
        print("usage: c8env {eval,play,demo,bench} ...   (c8env COMMAND --help for each)", file=sys.stderr)
        raise SystemExit(2)
    import importlib

    importlib.import_module(commands[argv[0]]).main(argv[1:])


if __name__ == "__main__":
    main()
