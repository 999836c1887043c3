"""Put specialists into another policy: one policy file that plays as BASE except where a specialist chooses.

    python -m training.research.specialise OUT.npz BASE.npz [SPECIALIST.npz] [--actions declare]
        [--endgame ENDGAME.npz ... --endgame-cards K]

A declaration specialist (a run of ``pretrain_decisions: declare``, fitted to the suit declarations of recordings
alone) chooses the suit after each wild card, the base network every other move (training/research/NOTES.md). The two
run side by side in one MLP of the same file format (:func:`training.research.surgery.specialise_policies`), so
every agent, tool and the compiled search play it as any policy file. An endgame network (a run of
``pretrain_decisions: endgame``) joins the moves once some player holds at most K cards, its logits added to the
others' there (several ``--endgame`` networks: all of theirs) (:func:`training.research.surgery.with_endgame`): a
version 2 file, which every agent and tool plays, but not the compiled search's rollouts.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from c8env.actions import DECLARE_ACTIONS
from c8env.tools.argcheck import Parser, int_at_least, new_file
from training.research.surgery import specialise_policies, with_endgame

#: The action sets a specialist may take over, by name.
ACTION_SETS = {"declare": list(DECLARE_ACTIONS)}


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m training.research.specialise", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", metavar="OUT", type=new_file(".npz", create_folder=True),
                        help="policy file to write (.npz; its folder is created if need be)")
    parser.add_argument("base", metavar="BASE", help="policy file that makes every other move")
    parser.add_argument("specialist", metavar="SPECIALIST", nargs="?",
                        help="policy file whose logits of --actions are taken")
    parser.add_argument("--actions", choices=sorted(ACTION_SETS), default="declare",
                        help="the moves the specialist chooses (default: declare, the suit declarations)")
    parser.add_argument("--endgame", metavar="ENDGAME", action="append",
                        help="policy file of an endgame network, whose logits are added once some player holds at "
                        "most --endgame-cards cards (declarations aside); repeat it to add several")
    parser.add_argument("--endgame-cards", type=int_at_least(1), default=1,
                        help="the most cards some player holds for the endgame network to play (default 1)")
    parser.add_argument("--description", default="", help="the file's description (default: names the files)")
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.specialist is None and args.endgame is None:
        parser.error("give a SPECIALIST, an --endgame network, or both")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    try:
        if args.endgame is None:
            specialise_policies(args.base, args.specialist, ACTION_SETS[args.actions], args.out, args.description)
        else:
            with tempfile.TemporaryDirectory() as folder:
                first = args.base
                if args.specialist is not None:
                    first = specialise_policies(args.base, args.specialist, ACTION_SETS[args.actions],
                                                Path(folder) / "first.npz")
                with_endgame(first, args.endgame, args.endgame_cards, args.out, args.description or (
                    f"{args.base}" + (f", with the logits of {args.actions} from {args.specialist}"
                                      if args.specialist else "")
                    + f", and the endgame network(s) {', '.join(args.endgame)} once some player holds at most "
                    f"{args.endgame_cards} card(s)"))
    except ValueError as err:
        parser.fail(err)
    parts = [f"its {args.actions} logits from {args.specialist}"] if args.specialist else []
    parts += [f"the endgame network(s) {', '.join(args.endgame)} (at most {args.endgame_cards} card(s))"] \
        if args.endgame else []
    print(f"wrote {args.out}: {args.base}, {' and '.join(parts)}", file=sys.stderr)


if __name__ == "__main__":
    main()
