"""Average policy files into one: its logits are the mean of theirs (an average of clones of one teacher).

    python -m training.research.average OUT.npz POLICY.npz POLICY.npz [POLICY.npz ...]

Clones of one recording fitted from other seeds err differently, and the mean of their logits plays
better than each (training/research/NOTES.md). The average is written as one MLP of the same file format,
its networks side by side (:func:`training.research.surgery.average_policies`), so every agent, tool and
the compiled search play it as any policy file; its cost per move grows with the members' width.
"""

from __future__ import annotations

import argparse
import sys

from c8env.tools.argcheck import Parser, new_file
from training.research.surgery import average_policies


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m training.research.average", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", metavar="OUT", type=new_file(".npz", create_folder=True),
                        help="policy file to write (.npz; its folder is created if need be)")
    parser.add_argument("policies", metavar="POLICY", nargs="+",
                        help="policy files to average (2 or more; same activation, depth, players and rules)")
    parser.add_argument("--description", default="", help="the file's description (default: names its members)")
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    try:
        path = average_policies(args.policies, args.out, args.description)
    except ValueError as err:
        parser.fail(err)
    print(f"wrote {path}: the mean of {len(args.policies)} policies' logits", file=sys.stderr)


if __name__ == "__main__":
    main()
