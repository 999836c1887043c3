"""Self-play training on Ray RLlib (PPO, new API stack), exported to the same NumPy policy file as the SB3 path.

- ``python -m training.rllib --config configs/rllib/default.yaml`` trains (locally, or with
  ``--address`` on a running Ray cluster); the run's ``policy.npz`` plays with ``c8env.agents.load(path)``.

Modules: :mod:`training.rllib.config` (``RLlibConfig``), :mod:`training.rllib.env` (the AEC env as an
RLlib ``MultiAgentEnv``), :mod:`training.rllib.modules` (the masked PPO module, the built-in agents
as frozen modules), :mod:`training.rllib.train` (the run, the policy mapping, export, evaluation),
:mod:`training.rllib.cli` (the command line). Only ``config`` and ``cli`` import without Ray.
"""
