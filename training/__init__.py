"""Self-play training of c8env policies with sb3-contrib's MaskablePPO, and their export.

- ``python -m training.train --config configs/train/default.yaml`` trains;
- ``python -m training.export RUN_OR_CHECKPOINT OUT.npz`` writes the NumPy-only policy file
  that ``c8env.agents.load(path)`` plays;
- ``python -m training.plot RUN_DIR`` draws a run's learning curves.

Modules:

- :mod:`training.config`: ``TrainConfig`` (pydantic), YAML loading, ``--set`` overrides, the ``--help`` field list;
- :mod:`training.pool`: the opponent pool sampled per episode, and the learner's snapshot files;
- :mod:`training.envs`: the training env (``SingleAgentEnv`` against the pool) and the env worker loop;
- :mod:`training.vec`: ``MaskedSubprocVecEnv``, several envs per worker process;
- :mod:`training.model`: the MaskablePPO model, its exportable layers and the ``linear`` learning rate;
- :mod:`training.imitation`: demonstrations of an agent and the behaviour-cloning warm start;
- :mod:`training.callback`: the ``Recorder`` callback (training logs, progress bar, stop flag) and log writers;
- :mod:`training.train`: the run as one function, ``train(config)``, and its command line;
- :mod:`training.export`: NumPy policy files from a model or a run's checkpoint;
- :mod:`training.plot`: the learning curves of a run's evaluations;
- :mod:`training.research`: the research beside the product (the experiments' entry points and configs, the
  policy-file surgery, the recordings and the retired policy files).

:mod:`training.config`, :mod:`training.pool` and :mod:`training.envs` import NumPy, pydantic
and c8env only: the env worker processes never import torch. Nor does importing
:mod:`training.train` or :mod:`training.export` (the workers import ``training.train`` as
their main module); their functions bring in torch and Stable-Baselines3 when they run.
"""

import os

# torch's CPU build computes with Intel MKL, whose results may differ in the last bits with the memory alignment of
# the arrays (so with the directory a run starts in) unless its conditional numerical reproducibility is on: with it,
# one machine gives one policy for one config and seed. Set on importing this package, before any training module
# imports torch (an environment that sets MKL_CBWR keeps its own).
os.environ.setdefault("MKL_CBWR", "AUTO,STRICT")
