"""The tools: the ``c8env`` command (:mod:`c8env.tools.cli`), evaluation, terminal play, the demo, replays and
speed benchmarks.

A regular package (its modules are imported by their full paths; this file only makes the folder one, so
that tools reading the source, such as the documentation's API reference, find them).
"""
