"""The ``c8env`` command: ``c8env agents``, ``c8env eval ...``, ``c8env play ...``, ``c8env demo ...``, ``c8env speed ...``."""

from __future__ import annotations

import importlib
import sys

COMMANDS = {
    "agents": ("c8env.agents.catalog", "the shipped agents, their figures and the recommended opponent per setting"),
    "eval": ("c8env.tools.evaluation.cli", "evaluate agents: duplicate deals, win rates with 95% intervals, leagues, benchmarks"),
    "leaderboard": ("c8env.tools.evaluation.leaderboard", "rank benchmark results files: Markdown, CSV and a PNG"),
    "exploit": ("c8env.tools.exploit", "train a best response to a frozen agent: how far it can be beaten (train extra)"),
    "play": ("c8env.tools.play", "play against agents in the terminal"),
    "demo": ("c8env.tools.demo", "play and print one seeded hand"),
    "speed": ("c8env.tools.speed", "speed benchmarks of the engine, the env and the expert"),
    "serve": ("c8env.web.serve", "play and watch in the browser: a local web page (the web extra)"),
    "replay": ("c8env.tools.replay", "step through a replay file of a finished game"),
}
#: Old names kept working: ``c8env bench`` was the speed benchmark.
ALIASES = {"bench": "speed"}


def usage() -> str:
    lines = ["usage: c8env COMMAND [ARGS]   (c8env COMMAND --help for each)", "", "commands:"]
    lines += [f"  {name:<11} {text}" for name, (_, text) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-h", "--help"):
        print(usage())
        return
    name = ALIASES.get(argv[0], argv[0]) if argv else None
    if name not in COMMANDS:
        problem = "no command given" if not argv else f"unknown command {argv[0]!r}"
        print(f"c8env: error: {problem}; allowed: {', '.join(COMMANDS)}\n\n{usage()}", file=sys.stderr)
        raise SystemExit(2)
    importlib.import_module(COMMANDS[name][0]).main(argv[1:])


if __name__ == "__main__":
    main()
