"""Self-play training of c8env policies with sb3-contrib's MaskablePPO, and their export.

- ``python -m training.train --config configs/train/default.yaml`` trains (see :mod:`training.train`);
- ``python -m training.export RUN_OR_CHECKPOINT OUT.npz`` writes the NumPy-only policy file
  that ``c8env.agents.load(path)`` plays (see :mod:`training.export`).

:mod:`training.config`, :mod:`training.pool` and :mod:`training.envs` import NumPy and
c8env only (the env worker processes never import torch); :mod:`training.model`,
:mod:`training.export` and :mod:`training.train` bring in torch and Stable-Baselines3
when their functions run.
"""
