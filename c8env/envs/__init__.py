"""The envs: the PettingZoo AEC env (:mod:`c8env.envs.crazy_eights`), the single-agent Gymnasium env
(:mod:`c8env.envs.single_agent`), the learner games and the Gymnasium vector envs, and their registration.

A regular package (its modules are imported by their full paths; this file only makes the folder one, so
that tools reading the source, such as the documentation's API reference, find them).
"""
