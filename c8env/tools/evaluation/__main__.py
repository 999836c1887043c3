"""``python -m c8env.tools.evaluation``: the ``c8env eval`` command."""

from c8env.tools.evaluation.cli import main

main()
