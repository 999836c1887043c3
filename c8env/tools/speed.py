"""Speed benchmarks that print figures (never timed assertions): ``c8env speed`` / ``python -m c8env.tools.speed``.

(How strong an agent is, rather than how fast, is measured by ``c8env eval`` and its
benchmark protocols: :mod:`c8env.tools.evaluation`.)

``python -m c8env.tools.speed env`` runs PettingZoo's standard random loop (``agent_iter``,
``last``, ``action_space(agent).sample(mask)``, ``step``) on ``c8env.env(num_players=2)`` (the newest
version), a no-op env under PettingZoo's wrappers and, when installed, Shimmy's OpenSpiel crazy_eights
and PettingZoo's ``connect_four_v3``: runs interleaved in one process, rates per second of this
process's CPU time, with the load average.

``python -m c8env.tools.speed expert`` times the expert's decisions against greedy; with
``--baseline SPEC`` it times ``--spec`` and the baseline on the same positions and prints
the ratio (how a guided search's time per move compares with the plain expert's).

``python -m c8env.tools.speed eval`` times the command ``c8env eval greedy random --deals N``
on the scalar engine (its default workers) and on the batched engine, each run as its
own process (start-up, imports and the compiled kernels' cache load included), median
of 3 runs, interleaved; and, apart, the batched engine's first call with an empty numba
cache (compiling the kernels) against one with the cache.

``python -m c8env.tools.speed vector`` times the batched engine (``VectorGames``) under masked-random play
at B = 1, 64 and 1024, with and without observations, beside the scalar engine and OpenSpiel's
C++ random loop; then B = 1024, 2 players, with observations, on one thread and on ``--threads N``
(2: both cores of the development machine) beside OpenSpiel's C++ loop, runs interleaved, with
the load average (other processes on the cores hold the threads back).

``python -m c8env.tools.speed jax`` times the JAX env (:mod:`c8env.jax`, the ``jax`` extra): ``jit(vmap(step))``
with observations, under masked-random play inside the same jitted ``lax.scan`` (with ``auto_reset``), at B =
1,024 to 65,536 on the JAX device there is, beside the batched engine (numba) at the same B on one thread and on
all the machine's cores, in the same run (docs/jax.md quotes it).

``python -m c8env.tools.speed engine`` measures engine decisions per second for random
play as an outside Python loop drives it (``state.legal_actions()``,
``random.Random.choice``, ``state.apply``), and, when the ``speed`` extra is installed,
OpenSpiel's C++ crazy_eights driven by the same kind of loop: runs interleaved in one
process, median of 5, rates per second of this process's CPU time, with the load average.

The engine and env rates count the process's CPU time (``time.process_time``), not the wall
clock: on a machine whose cores other work shares, a run's wall time depends on how long the
other processes held the core, its CPU time much less; both sides of a comparison are
measured alike, runs interleaved, so a change in the machine's speed hits them alike.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from c8env.engine import State
from c8env.episode import play_hand
from c8env.observation import OBS_SIZE
from c8env.rules import load_rules
from c8env.tools.argcheck import Parser, int_at_least

RUNS = 5


def load_average() -> str:
    """The load average (1, 5, 15 min) as text."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def engine_decisions(num_players: int, decisions: int, seed: int,
                     clock: Callable[[], float] = time.perf_counter) -> float:
    """Decisions per second (of ``clock``) of c8env's engine under uniformly random play (new hands dealt as needed;
    the rules loaded once, as OpenSpiel's loop loads its game once)."""
    rules = load_rules("standard")
    rng = random.Random(seed)
    deal = seed * 1_000_003
    state = State.new(num_players, rules, seed=deal)
    start = clock()
    for _ in range(decisions):
        if state.hand_over:
            deal += 1
            state = State.new(num_players, rules, seed=deal)
        state.apply(rng.choice(state.legal_actions()))
    return decisions / (clock() - start)


def openspiel_decisions(num_players: int, decisions: int, seed: int,
                        clock: Callable[[], float] = time.perf_counter) -> float | None:
    """Decisions per second (of ``clock``) of OpenSpiel's crazy_eights with the same loop; None if not installed."""
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("crazy_eights", {"players": num_players})
    rng = random.Random(seed)
    state = game.new_initial_state()
    done = 0
    start = clock()
    while done < decisions:
        if state.is_terminal():
            state = game.new_initial_state()
        elif state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(rng.choices(outcomes, probs)[0])
        else:
            state.apply_action(rng.choice(state.legal_actions()))
            done += 1
    return decisions / (clock() - start)


def aec_steps(make_env: Callable[[], object], steps: int, seed: int,
              clock: Callable[[], float] = time.perf_counter) -> float:
    """Steps per second (of ``clock``) of PettingZoo's standard random loop on an AEC env (episodes reset as
    needed)."""
    env = make_env()
    env.reset(seed=seed)
    done = 0
    start = clock()
    while done < steps:
        for agent in env.agent_iter():
            obs, reward, termination, truncation, info = env.last()
            if termination or truncation:
                action = None
            else:  # Shimmy's OpenSpiel envs carry the mask in info
                mask = obs["action_mask"] if isinstance(obs, dict) else info["action_mask"]
                action = env.action_space(agent).sample(mask)
            env.step(action)
            done += 1
        env.reset()
    return done / (clock() - start)


def _noop_env() -> object:
    """An AEC env that does nothing (fixed observation and mask, 100-step episodes) under
    PettingZoo's own three classic wrappers: the ceiling of the standard loop for any env
    wrapped like the classic envs."""
    import numpy as np
    from gymnasium import spaces
    from pettingzoo import AECEnv
    from pettingzoo.utils import wrappers

    class NoopEnv(AECEnv):
        metadata = {"name": "noop_v0", "is_parallelizable": False, "render_modes": []}

        def __init__(self) -> None:
            super().__init__()
            self.possible_agents = ["player_0", "player_1"]
            self.mask = np.zeros(60, dtype=np.int8)
            self.mask[[3, 17, 56]] = 1
            obs = spaces.Dict({"observation": spaces.Box(-1, 1e6, (OBS_SIZE,), np.float32),
                               "action_mask": spaces.Box(0, 1, (60,), np.int8)})
            self.observation_spaces = {a: obs for a in self.possible_agents}
            self.action_spaces = {a: spaces.Discrete(60) for a in self.possible_agents}

        def observation_space(self, agent: str) -> spaces.Space:
            return self.observation_spaces[agent]

        def action_space(self, agent: str) -> spaces.Space:
            return self.action_spaces[agent]

        def reset(self, seed: int | None = None, options: dict | None = None) -> None:
            self.agents = self.possible_agents[:]
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
            self.terminations = dict.fromkeys(self.agents, False)
            self.truncations = dict.fromkeys(self.agents, False)
            self.infos = {a: {} for a in self.agents}
            self.agent_selection, self.steps = "player_0", 0

        def observe(self, agent: str) -> dict:
            return {"observation": np.zeros(OBS_SIZE, dtype=np.float32), "action_mask": self.mask.copy()}

        def step(self, action: int | None) -> None:
            agent = self.agent_selection
            if self.terminations[agent] or self.truncations[agent]:
                self._was_dead_step(action)
                return
            self.steps += 1
            self._cumulative_rewards[agent] = 0.0
            if self.steps >= 100:
                self.terminations = dict.fromkeys(self.agents, True)
            self.agent_selection = self.possible_agents[self.steps % 2]
            self._accumulate_rewards()

    env = wrappers.TerminateIllegalWrapper(NoopEnv(), illegal_reward=-1)
    return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(env))


def _c8env_row() -> str:
    """The name of c8env's row in the env benchmark: the newest version, which ``c8env.env`` gives."""
    from c8env.versions import LATEST

    return f"c8env {LATEST.name}"


def _env_makers() -> dict[str, Callable[[], object] | None]:
    import c8env

    makers: dict[str, Callable[[], object] | None] = {
        _c8env_row(): lambda: c8env.env(num_players=2),
        "no-op env, PettingZoo wrappers": _noop_env,
    }
    try:
        from shimmy import OpenSpielCompatibilityV0

        # 2 players, as c8env here (OpenSpiel's crazy_eights defaults to 5): the same table on both sides
        makers["Shimmy OpenSpiel crazy_eights"] = lambda: OpenSpielCompatibilityV0(
            game_name="crazy_eights", config={"players": 2})
    except ImportError:
        makers["Shimmy OpenSpiel crazy_eights"] = None
    try:
        from pettingzoo.classic import connect_four_v3

        makers["PettingZoo connect_four_v3"] = connect_four_v3.env
    except ImportError:
        makers["PettingZoo connect_four_v3"] = None
    return makers


def bench_env(steps: int, runs: int = RUNS) -> None:
    """PettingZoo's random loop on c8env and each comparison, runs interleaved (c8env's rate over each comparison's:
    the ratio of the medians, and the per-run ratios' range)."""
    makers = _env_makers()
    before = load_average()
    rates: dict[str, list[float]] = {name: [] for name, make in makers.items() if make is not None}
    for name in rates:  # a first pass untimed: imports and first calls
        aec_steps(makers[name], 1_000, runs)
    for run in range(runs):
        for name in rates:
            rates[name].append(aec_steps(makers[name], steps, run, time.process_time))
    print(f"env: PettingZoo random loop, 2 players, steps per CPU second, median of {runs} interleaved runs of "
          f"~{steps:,} steps; load average (1, 5, 15 min) {before} before, {load_average()} after")
    ours = rates[_c8env_row()]
    print(f"{'env':<32} | {'steps/s':>10} | c8env is | per run")
    for name in makers:
        if name not in rates:
            print(f"{name:<32} | (not installed: pip install -e .[speed])")
            continue
        ratios = [a / b for a, b in zip(ours, rates[name], strict=True)]
        print(f"{name:<32} | {statistics.median(rates[name]):10,.0f} | "
              f"{statistics.median(ours) / statistics.median(rates[name]):7.2f}x | {min(ratios):.2f}-{max(ratios):.2f}x")


def bench_expert(hands: int, spec: str = "expert") -> None:
    """Time per decision of a search agent playing 2-player hands against greedy (forced moves included)."""
    from c8env.agents import load
    from c8env.observation import StateObservation

    times: list[float] = []
    searched: list[float] = []

    def timed(agents: list, expert_seat: int) -> Callable[[State], int]:
        def choose(state: State) -> int:
            seat = state.current_player
            start = time.perf_counter()
            action = agents[seat].act(StateObservation(state, seat))
            if seat == expert_seat:
                times.append(time.perf_counter() - start)
                if len(state.legal_actions()) > 1:
                    searched.append(times[-1])
            return action

        return choose

    for hand in range(hands):
        agents = [load(spec, num_players=2, seed=hand), load("greedy", num_players=2)]
        if hand % 2:
            agents.reverse()  # the expert sits in seat hand % 2
        play_hand(State.new(2, "standard", seed=hand), timed(agents, hand % 2))
    print(f"{spec}: {len(times)} decisions in {hands} hands vs greedy; ms per decision: "
          f"mean {1000 * statistics.mean(times):.1f}, median {1000 * statistics.median(times):.1f}; "
          f"with a choice ({len(searched)}): mean {1000 * statistics.mean(searched):.1f}")


def bench_expert_pair(hands: int, spec: str, baseline: str) -> None:
    """Time ``spec`` and ``baseline`` on the same positions: ``spec`` plays 2-player hands against greedy, and at
    each of its decisions with a choice both agents decide (the calls alternate which goes first, so a drift in
    the machine's speed hits both alike); prints the mean times, their ratio and the median per-position ratio."""
    from c8env.agents import load
    from c8env.observation import StateObservation

    times: dict[str, list[float]] = {spec: [], baseline: []}

    def decide(agent: Any, name: str, view: StateObservation) -> int:
        start = time.perf_counter()
        action = agent.act(view)
        times[name].append(time.perf_counter() - start)
        return action

    def paired(player: Any, other: Any, greedy: Any, seat: int) -> Callable[[State], int]:
        def choose(state: State) -> int:
            view = StateObservation(state, state.current_player)
            if state.current_player != seat:
                return greedy.act(view)
            if len(state.legal_actions()) == 1:
                return player.act(view)
            if len(times[spec]) % 2:
                decide(other, baseline, view)
                return decide(player, spec, view)
            action = decide(player, spec, view)
            decide(other, baseline, view)
            return action

        return choose

    warm = load(baseline, num_players=2, seed=0)  # compile the search kernels before any timing
    play_hand(State.new(2, "standard", seed=hands), lambda state: warm.act(StateObservation(state, state.current_player)))
    for hand in range(hands):
        agents = [load(s, num_players=2, seed=hand) for s in (spec, baseline, "greedy")]
        play_hand(State.new(2, "standard", seed=hand), paired(*agents, seat=hand % 2))
    ours, theirs = np.asarray(times[spec]), np.asarray(times[baseline])
    print(f"{len(ours)} positions with a choice in {hands} hands vs greedy; ms per decision: {spec} mean "
          f"{1000 * ours.mean():.2f}, median {1000 * np.median(ours):.2f}; {baseline} mean {1000 * theirs.mean():.2f}, "
          f"median {1000 * np.median(theirs):.2f}; ratio of the means {ours.mean() / theirs.mean():.2f}x, "
          f"median of the per-position ratios {np.median(ours / theirs):.2f}x")


def median_rate(measure: Callable[[int, int, int], float | None], num_players: int, decisions: int) -> float | None:
    rates = [measure(num_players, decisions, run) for run in range(RUNS)]
    return None if rates[0] is None else statistics.median(rates)


def bench_engine(decisions: int, runs: int = RUNS) -> None:
    """c8env's engine and OpenSpiel's crazy_eights under the same Python random loop, runs interleaved (the ratio of
    the medians, and the per-run ratios' range)."""
    before = load_average()
    ours: dict[int, list[float]] = {2: [], 4: []}
    theirs: dict[int, list[float | None]] = {2: [], 4: []}
    for run in range(runs):
        for num_players in ours:
            ours[num_players].append(engine_decisions(num_players, decisions, run, time.process_time))
            theirs[num_players].append(openspiel_decisions(num_players, decisions, run, time.process_time))
    print(f"engine: random play, standard rules, decisions per CPU second, median of {runs} interleaved runs of "
          f"{decisions:,} decisions; load average (1, 5, 15 min) {before} before, {load_average()} after")
    print(f"{'players':>7} | {'c8env':>12} | {'OpenSpiel':>12} | ratio | per run")
    for num_players, rates in ours.items():
        ours_rate = statistics.median(rates)
        other = theirs[num_players]
        if other[0] is None:
            print(f"{num_players:>7} | {ours_rate:12,.0f} | (OpenSpiel not installed: pip install -e .[speed])")
            continue
        ratios = [a / b for a, b in zip(rates, other, strict=True)]  # type: ignore[operator]
        theirs_rate = statistics.median(other)  # type: ignore[type-var]
        print(f"{num_players:>7} | {ours_rate:12,.0f} | {theirs_rate:12,.0f} | {ours_rate / theirs_rate:4.2f}x | "
              f"{min(ratios):.2f}-{max(ratios):.2f}x")


def vector_steps(num_players: int, batch: int, steps: int, seed: int, observations: bool = True,
                 threads: int = 1) -> float:
    """Game steps per second of the batched engine under masked-random play (all games step together, on
    ``threads`` threads)."""
    from c8env.vector import VectorGames

    games = VectorGames(batch, num_players, observations=observations, threads=threads)
    games.reset(seed)
    rounds = max(1, steps // batch)
    start = time.perf_counter()
    for _ in range(rounds):
        games.step(games.random_actions())
    return rounds * batch / (time.perf_counter() - start)


def openspiel_cpp_decisions(num_players: int, games: int, seed: int) -> float | None:
    """Decisions per second of OpenSpiel's own C++ random loop (``pyspiel.evaluate_bots`` with C++ uniform
    random bots: no Python per move, no observations); None if not installed. Decisions per game are
    counted on the same number of games played from Python (same distribution: uniformly random play)."""
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("crazy_eights", {"players": num_players})
    bots = [pyspiel.make_uniform_random_bot(p, seed + p) for p in range(num_players)]
    start = time.perf_counter()
    for i in range(games):
        pyspiel.evaluate_bots(game.new_initial_state(), bots, seed * 1_000_003 + i)
    seconds = time.perf_counter() - start
    rng, decisions = random.Random(seed), 0
    for _ in range(games):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(rng.choices(outcomes, probs)[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
                decisions += 1
    return decisions / seconds


def bench_threads(steps: int, threads: int, runs: int = RUNS, openspiel_games: int = 1000) -> None:
    """The batched engine at B = 1024, 2 players, with observations, on 1 and ``threads`` threads, and OpenSpiel's
    C++ random loop, runs interleaved (a change in the machine's load hits all three alike), with the load
    average before and after (other processes on the cores hold the threads back)."""
    counts = sorted({1, threads})
    vector_steps(2, 1024, 1024, 0, threads=threads)  # the kernels loaded and the threads started before timing
    before = os.getloadavg()
    rates: dict[str, list[float]] = {f"{n} thread{'s' * (n > 1)}": [] for n in counts}
    rates["OpenSpiel's C++ random loop"] = []
    for run in range(runs):
        for n in counts:
            rates[f"{n} thread{'s' * (n > 1)}"].append(vector_steps(2, 1024, steps, run, threads=n))
        cpp = openspiel_cpp_decisions(2, openspiel_games, run)
        if cpp is None:
            del rates["OpenSpiel's C++ random loop"]
            break
        rates["OpenSpiel's C++ random loop"].append(cpp)
    after = os.getloadavg()
    median = {name: statistics.median(values) for name, values in rates.items()}
    cpp = median.get("OpenSpiel's C++ random loop")
    print(f"vector, threads: 2 players, B = 1024, observation + mask, game steps/s (OpenSpiel: decisions/s of "
          f"{openspiel_games:,} games, no observations), median of {runs} interleaved runs of ~{steps:,} steps; "
          f"{os.cpu_count()} CPUs, load average (1, 5, 15 min) {' '.join(f'{x:.2f}' for x in before)} before, "
          f"{' '.join(f'{x:.2f}' for x in after)} after")
    print(f"{'':>27} | {'per second':>10} | {'vs 1 thread':>11} | vs OpenSpiel's C++ loop")
    for name, rate in median.items():
        versus = "(not installed: pip install -e .[speed])" if cpp is None else f"{rate / cpp:.2f}x"
        print(f"{name:>27} | {rate:10,.0f} | {rate / median['1 thread']:10.2f}x | {versus}")


def bench_vector(steps: int, threads: int = 1) -> None:
    """The batched engine at B = 1, 64, 1024 with and without observations, beside the scalar engine; then B = 1024
    on 1 and ``threads`` threads beside OpenSpiel's C++ loop (:func:`bench_threads`)."""
    from c8env.vector import COMPILED

    vector_steps(2, 2, 2, 0)  # compile the kernels (or load them from the cache) before timing
    print(f"vector: masked-random play, standard rules, game steps/s, median of {RUNS} runs of ~{steps:,} steps"
          f" (numba {'on' if COMPILED else 'OFF: plain Python kernels'})")
    print(f"{'players':>7} | {'batch':>5} | {'obs + mask':>12} | {'mask only':>12} | {'scalar engine':>13}")
    for num_players in (2, 4):
        scalar = median_rate(engine_decisions, num_players, min(steps, 100_000))
        for batch in (1, 64, 1024):
            with_obs = statistics.median(vector_steps(num_players, batch, steps, run) for run in range(RUNS))
            without = statistics.median(vector_steps(num_players, batch, steps, run, False) for run in range(RUNS))
            print(f"{num_players:>7} | {batch:>5} | {with_obs:12,.0f} | {without:12,.0f} | {scalar:13,.0f}")
        cpp = median_rate(openspiel_cpp_decisions, num_players, 300)
        if cpp:
            print(f"{num_players:>7} | OpenSpiel's C++ random loop (no observations): {cpp:,.0f} decisions/s")
    bench_threads(steps, threads)


def jax_steps(batch: int, scan: int, runs: int) -> tuple[float, float]:
    """Game steps per second of ``jit(vmap(step))`` in the JAX env (2 players, standard rules, observations on):
    ``scan`` moves per call of a jitted ``lax.scan`` that draws masked-random actions and steps every game (a
    finished hand dealt again at once, :func:`c8env.jax.auto_reset`); the median of ``runs`` timed calls after
    one that compiles, and the compile time."""
    import jax

    import c8env.jax as cj
    from c8env.jax import agents

    env = cj.env(2, "standard")
    step = jax.vmap(cj.auto_reset(env.step, env.init))
    choose = jax.vmap(agents.random_action)

    def move(state: Any, key: jax.Array) -> tuple[Any, None]:
        act_key, step_key = jax.random.split(key)
        actions = choose(jax.random.split(act_key, batch), state.legal_action_mask)
        return step(state, actions, jax.random.split(step_key, batch)), None

    rollout = jax.jit(lambda state, key: jax.lax.scan(move, state, jax.random.split(key, scan))[0])
    state = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.PRNGKey(0), batch))
    start = time.perf_counter()
    state = jax.block_until_ready(rollout(state, jax.random.PRNGKey(1)))
    compile_s = time.perf_counter() - start
    rates = []
    for run in range(runs):
        start = time.perf_counter()
        state = jax.block_until_ready(rollout(state, jax.random.PRNGKey(2 + run)))
        rates.append(batch * scan / (time.perf_counter() - start))
    return statistics.median(rates), compile_s


def bench_jax(batches: list[int], scan: int, runs: int = 3) -> None:
    """The JAX env's steps/s at each B beside the batched engine's on 1 thread and on every core."""
    import jax

    from c8env.vector import COMPILED

    cores = os.cpu_count() or 1
    vector_steps(2, 2, 2, 0)  # the kernels compiled (or loaded from the cache) before timing
    device = jax.devices()[0]
    print(f"jax: jit(vmap(step)) with observations, masked-random play, 2 players, standard rules, game steps/s, "
          f"median of {runs} calls of {scan} moves; JAX {jax.__version__} on {device.platform} ({device.device_kind}); "
          f"the batched engine (numba {'on' if COMPILED else 'OFF'}) on 1 thread and on {cores}")
    print(f"{'batch':>6} | {'JAX':>10} | {'compile s':>9} | {'numba 1 thread':>14} | {f'numba {cores} threads':>15}")
    for batch in batches:
        ours, compile_s = jax_steps(batch, scan, runs)
        steps = batch * scan
        one = statistics.median(vector_steps(2, batch, steps, run) for run in range(runs))
        every = statistics.median(vector_steps(2, batch, steps, run, threads=cores) for run in range(runs))
        print(f"{batch:>6,} | {ours:10,.0f} | {compile_s:9.1f} | {one:14,.0f} | {every:15,.0f}")


def eval_command_seconds(engine: str, deals: int, cache_dir: str | None = None) -> tuple[float, float]:
    """Wall time and CPU time (its processes', user + system) of ``c8env eval greedy random --deals N --engine E``
    as a new process; ``cache_dir``: numba's cache folder (an empty one: the kernels are compiled)."""
    import resource  # Unix only

    env = dict(os.environ)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    command = [sys.executable, "-m", "c8env.tools.evaluation", "greedy", "random", "--deals", str(deals), "--engine", engine,
               "--no-progress"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def bench_eval(deals: int) -> None:
    """The evaluation command on both engines (same results, tests/tools/test_evaluate_batched.py), and the kernels'
    compile time."""
    runs = 3
    eval_command_seconds("batched", 1)  # the kernels compiled into the cache, if they were not
    times: dict[str, list[tuple[float, float]]] = {"scalar": [], "batched": []}
    for _ in range(runs):
        for engine in times:
            times[engine].append(eval_command_seconds(engine, deals))
    wall = {e: statistics.median(w for w, _ in times[e]) for e in times}
    cpu = {e: statistics.median(c for _, c in times[e]) for e in times}
    print(f"eval: `c8env eval greedy random --deals {deals:,}`, 2 players, seconds of the whole command, "
          f"median of {runs} interleaved runs (scalar engine: {os.cpu_count()} workers, its default)")
    print(f"{'engine':>8} | {'wall s':>7} | {'CPU s':>7} | wall, CPU of each run")
    for engine, values in times.items():
        print(f"{engine:>8} | {wall[engine]:7.2f} | {cpu[engine]:7.2f} | "
              + ", ".join(f"{w:.2f} {c:.2f}" for w, c in values))
    print(f"batched is {wall['scalar'] / wall['batched']:.1f}x faster (wall), "
          f"{cpu['scalar'] / cpu['batched']:.1f}x less CPU")
    with tempfile.TemporaryDirectory() as empty:
        cold = eval_command_seconds("batched", 1, empty)
    warm = eval_command_seconds("batched", 1)
    print(f"first call, --deals 1 --engine batched: {cold[0]:.1f} s wall ({cold[1]:.1f} s CPU) with an empty numba "
          f"cache (the kernels compiled), {warm[0]:.1f} s ({warm[1]:.1f} s CPU) with the cache (in __pycache__)")


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser (the README's commands are checked against it)."""
    parser = Parser(prog="c8env speed", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["engine", "env", "eval", "expert", "vector", "jax", "all"],
                        help="what to benchmark (jax: the jax extra; not part of all)")
    parser.add_argument("--hands", type=int_at_least(1), default=50, help="hands for the expert timing")
    parser.add_argument("--spec", default="expert", help="search agent spec for the expert timing")
    parser.add_argument("--baseline", default=None,
                        help="a second agent spec timed on the same positions as --spec (expert timing)")
    parser.add_argument("--decisions", type=int_at_least(1), default=200_000, help="engine decisions per run")
    parser.add_argument("--steps", type=int_at_least(1), default=30_000, help="env steps per run")
    parser.add_argument("--vector-steps", type=int_at_least(1), default=200_000,
                        help="game steps per run of the batched engine")
    parser.add_argument("--threads", type=int_at_least(1), default=1,
                        help="threads of the batched engine timed beside one thread (vector; 2: both cores here)")
    parser.add_argument("--deals", type=int_at_least(1), default=10_000, help="deals of the eval timing")
    parser.add_argument("--jax-batches", type=int_at_least(1), nargs="+", default=[1024, 4096, 16384, 65536],
                        help="batch sizes of the jax timing")
    parser.add_argument("--jax-scan", type=int_at_least(1), default=8, help="moves per timed call of the jax timing")
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.what in ("expert", "all"):  # a bad --spec or --baseline ends the command before any timing
        from c8env.agents import load

        for flag, spec in (("--spec", args.spec), ("--baseline", args.baseline)):
            try:
                if spec is not None:
                    load(spec, rules="standard", num_players=2, seed=0)
            except ValueError as err:
                parser.error(f"argument {flag}: {err}")
    if args.what in ("engine", "all"):
        bench_engine(args.decisions)
    if args.what in ("env", "all"):
        bench_env(args.steps)
    if args.what in ("vector", "all"):
        bench_vector(args.vector_steps, args.threads)
    if args.what == "jax":
        try:
            import jax  # noqa: F401
        except ImportError:
            parser.error("c8env speed jax needs JAX: pip install c8env[jax]")
        bench_jax(args.jax_batches, args.jax_scan)
    if args.what in ("eval", "all"):
        bench_eval(args.deals)
    if args.what in ("expert", "all"):
        if args.baseline is None:
            bench_expert(args.hands, args.spec)
        else:
            bench_expert_pair(args.hands, args.spec, args.baseline)


if __name__ == "__main__":
    main()
