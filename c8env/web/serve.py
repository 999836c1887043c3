"""``c8env serve``: play and watch Crazy Eights in the browser (needs the ``web`` extra).

Opens a local web page where you pick the rules, the player count, your seat, a hand or a
match, and the agents in the other seats (any built-in or shipped agent, ``expert`` with a
budget, or an uploaded ``.npz`` policy), then play; every finished game can be downloaded as a
replay and stepped through (also ``c8env replay FILE``). The server keeps every game's state;
the browser only gets what your seat may see. It listens on 127.0.0.1 unless ``--host`` says
otherwise.
"""

from __future__ import annotations

import argparse
import ipaddress
import sys


def is_loopback(host: str) -> bool:
    """Is ``host`` a loopback address or ``localhost``?"""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser (the docs' commands are checked against it)."""
    parser = argparse.ArgumentParser(prog="c8env serve", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0 exposes it)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--idle-timeout", type=float, default=1800.0, metavar="SECONDS",
                        help="drop games not touched for this long (default 1800)")
    parser.add_argument("--max-games", type=int, default=1000, help="games held at once (default 1000)")
    parser.add_argument("--max-upload-mb", type=float, default=8.0, help="largest uploaded policy file (default 8)")
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    for name in ("idle_timeout", "max_upload_mb"):
        if getattr(args, name) <= 0:
            parser.error(f"--{name.replace('_', '-')} must be > 0")
    if args.max_games < 1 or not 0 <= args.port <= 65535:
        parser.error("--max-games must be >= 1 and --port in 0..65535")
    try:
        import uvicorn

        from c8env.web.app import create_app
    except ImportError as err:
        parser.exit(2, f"c8env serve: error: {err.name or err} is not installed; install the web extra: "
                       "pip install 'c8env[web]'\n")
    from c8env.web.games import GameManager

    manager = GameManager(idle_seconds=args.idle_timeout, max_games=args.max_games,
                          max_upload_bytes=int(args.max_upload_mb * (1 << 20)))
    if is_loopback(args.host):
        print(f"c8env serve: open http://{args.host}:{args.port}/ (loopback only: this machine)", flush=True)
    else:
        print(f"c8env serve: WARNING: listening on {args.host}:{args.port}, reachable from other machines: anyone "
              "who can reach it can start games and upload policy files. Use --host 127.0.0.1 to keep it local.",
              file=sys.stderr, flush=True)
    try:
        uvicorn.run(create_app(manager), host=args.host, port=args.port, log_level="warning")
    finally:
        manager.close()


if __name__ == "__main__":
    main()
