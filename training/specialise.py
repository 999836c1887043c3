"""Put a specialist's logits of some actions into another policy: one policy file that plays as BASE except where
SPECIALIST chooses.

    python -m training.specialise OUT.npz BASE.npz SPECIALIST.npz [--actions declare]

A declaration specialist (a run of ``pretrain_decisions: declare``, fitted to the suit declarations of recordings
alone) chooses the suit after each wild card, the base network every other move (docs/strength.md). The two run side
by side in one MLP of the same file format (:func:`c8env.agents.policy.specialise_policies`), so every agent, tool and
the compiled search play it as any policy file.
"""

from __future__ import annotations

import argparse
import sys

from c8env.actions import DECLARE_ACTIONS
from c8env.agents.policy import specialise_policies
from c8env.tools.argcheck import Parser, new_file

#: The action sets a specialist may take over, by name.
ACTION_SETS = {"declare": list(DECLARE_ACTIONS)}


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m training.specialise", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", metavar="OUT", type=new_file(".npz", create_folder=True),
                        help="policy file to write (.npz; its folder is created if need be)")
    parser.add_argument("base", metavar="BASE", help="policy file that makes every other move")
    parser.add_argument("specialist", metavar="SPECIALIST", help="policy file whose logits of --actions are taken")
    parser.add_argument("--actions", choices=sorted(ACTION_SETS), default="declare",
                        help="the moves the specialist chooses (default: declare, the suit declarations)")
    parser.add_argument("--description", default="", help="the file's description (default: names both files)")
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    try:
        path = specialise_policies(args.base, args.specialist, ACTION_SETS[args.actions], args.out, args.description)
    except ValueError as err:
        parser.fail(err)
    print(f"wrote {path}: {args.base}, its {args.actions} logits from {args.specialist}", file=sys.stderr)


if __name__ == "__main__":
    main()
