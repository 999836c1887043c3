"""What every command line of c8env shares: bad input ends in exit status 2 and one line, before any work.

:class:`Parser` is an ``argparse.ArgumentParser`` whose errors are one line
(``c8env eval: error: argument --workers: 0 is invalid; allowed: an int >= 1``, no usage
block); the type functions check a value as it is parsed, so nothing runs first.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line on stderr and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())}\n")

    def fail(self, err: Exception) -> NoReturn:
        """End with an API error (``ValueError``/``TypeError``) as the command's one-line error."""
        self.error(str(err).splitlines()[0] if str(err) else type(err).__name__)


def int_at_least(low: int) -> Callable[[str], int]:
    """An argparse type: an int >= ``low``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an int; allowed: an int >= {low}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is invalid; allowed: an int >= {low}")
        return value

    parse.__name__ = f"int >= {low}"
    return parse


def int_between(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: an int from ``low`` to ``high``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an int; allowed: an int from {low} to {high}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is invalid; allowed: an int from {low} to {high}")
        return value

    parse.__name__ = f"int {low}..{high}"
    return parse


def writable_dir(text: str) -> Path:
    """An argparse type: a folder to write into, existing or creatable (nothing is created here)."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} exists and is not a folder; allowed: a folder (new or existing)")
    parent = path
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise argparse.ArgumentTypeError(f"{text!r} cannot be written ({str(parent)!r} is not a writable folder)")
    return path


def new_file(suffix: str, create_folder: bool = False) -> Callable[[str], Path]:
    """An argparse type: a file to write (its folder must exist, or with ``create_folder`` be creatable, nothing
    created here; an existing folder of that name is refused)."""

    def parse(text: str) -> Path:
        path = Path(text)
        if path.is_dir():
            raise argparse.ArgumentTypeError(f"{text!r} is a folder; allowed: a {suffix} file path")
        if suffix and path.suffix != suffix:
            raise argparse.ArgumentTypeError(f"{text!r} does not end in {suffix}; allowed: a {suffix} file path")
        if create_folder:
            writable_dir(str(path.parent))
        elif not path.parent.is_dir() or not os.access(path.parent, os.W_OK):
            raise argparse.ArgumentTypeError(f"{text!r}: the folder {str(path.parent)!r} does not exist or is not writable")
        return path

    return parse


def check_rules_arg(parser: Parser, rules: Any) -> Any:
    """Load ``--rules`` now (a bad preset name or YAML file ends the command at once); returns the RuleSet."""
    from c8env.rules import load_rules

    try:
        return load_rules(rules)
    except ValueError as err:
        parser.error(f"argument --rules: {err}")


__all__ = ["Parser", "check_rules_arg", "int_at_least", "int_between", "new_file", "writable_dir"]
