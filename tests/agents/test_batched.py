"""The batched agents and the batch API they build on: greedy and seeded random agents equal to the scalar
agents decision for decision, explicit deals per slot, stepping a subset of the games."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from c8env import IllegalActionError, preset_names
from c8env.agents import batched, greedy
from c8env.agents.batched import EXTERNAL, GREEDY, RandomAgents, autoplay, greedy_actions
from c8env.agents.decision_view import view_from_state
from c8env.agents.greedy import GreedyAgent, greedy_action
from c8env.agents.random_agent import RandomAgent
from c8env.engine import State
from c8env.episode import Episode
from c8env.observation import StateObservation, encode_observation
from c8env.seeding import derive_seed
from c8env.vector import VectorGames, derive_seeds

ROOT = Path(__file__).resolve().parent.parent.parent
WEIGHTS = ("LONG_SUIT", "NEXT_VOID", "ATTACK_CLOSE", "ATTACK_FAR", "ANY_NEXT", "KEEP_WILD", "SUIT_HELD",
           "SUIT_NEXT_VOID")


def test_the_batched_greedy_reads_the_heuristics_weights() -> None:
    """Greedy's weights are written once, in c8env.agents.greedy; the batched greedy imports them."""
    assert all(getattr(batched, w) is getattr(greedy, w) for w in WEIGHTS)
    source = Path(batched.__file__).read_text()
    assert not [w for w in WEIGHTS if f"\n{w} =" in source or f", {w} =" in source], "a weight assigned again"


def assert_same(batch: VectorGames, states: list[State], where: str) -> None:
    for b, state in enumerate(states):
        assert batch.to_dict(b) == state.to_dict(), f"{where} game {b}"
        assert (batch.action_mask[b] == state.legal_mask()).all(), f"{where} game {b}"
        assert (batch.observation[b] == encode_observation(state, state.current_player)).all(), f"{where} game {b}"


@pytest.mark.parametrize("n", range(2, 8))
@pytest.mark.parametrize("preset", preset_names())
def test_greedy_equals_the_scalar_greedy_at_every_step(preset: str, n: int) -> None:
    """Games move by greedy or random actions (a coin per game and step); at every step, every game's
    greedy action is the scalar heuristic's for the same state, and the search's maskless greedy_move
    makes it too."""
    games, seed = 4, 11
    batch = VectorGames(games, n, preset)
    batch.reset(seed)
    started = [0] * games
    states = [State.new(n, preset, seed=derive_seed(seed, b, 0)) for b in range(games)]
    coins = np.random.default_rng(n)
    mask = np.zeros(60, dtype=np.int8)
    decisions = 0
    for step in range(250):
        greedy = greedy_actions(batch)
        for b, state in enumerate(states):
            assert greedy[b] == greedy_action(view_from_state(state), batch.rules), f"{preset} {n}p step {step} game {b}"
            assert greedy[b] == batched.greedy_move(batch.games, b, batch.table, mask), f"{preset} {n}p step {step}"
            decisions += len(state.legal_actions()) > 1
        actions = np.where(coins.random(games) < 0.5, greedy, batch.random_actions())
        _, terminated, truncated = batch.step(actions)
        for b, state in enumerate(states):
            state.apply(int(actions[b]))
            if state.hand_over:
                assert terminated[b]
                started[b] += 1
                states[b] = State.new(n, preset, seed=derive_seed(seed, b, started[b]))
    assert_same(batch, states, f"{preset} {n}p")
    assert decisions > 100


def test_random_agents_and_active_subsets_equal_the_scalar_path() -> None:
    """Seeded per-game random agents stepping random subsets of the games: each game and each agent goes
    as the scalar RandomAgent on the scalar engine; the games left out do not move, draw nothing and
    report reward 0, not ended; every mask and observation stays that of its game."""
    games, n, preset = 6, 3, "special_cards"
    deals = np.array([5, 2**64 - 1, 0, 123456789, 2**63, 7], dtype=np.uint64)
    agent_seeds = np.array([derive_seed(9, b) for b in range(games)], dtype=np.uint64)
    batch = VectorGames(games, n, preset, autoreset=False)
    batch.reset_deals(deals)
    states = [State.new(n, preset, seed=int(seed)) for seed in deals]
    agents = RandomAgents(agent_seeds)
    scalar_agents = [RandomAgent(int(seed)) for seed in agent_seeds]
    choose = np.random.default_rng(1)
    for step in range(1000):
        running = np.array([not s.hand_over for s in states])
        if not running.any():
            break
        active = running & (choose.random(games) < 0.6)
        actions = agents.actions(batch.action_mask, active)
        assert (actions[~active] == -1).all()
        for b in np.flatnonzero(active):
            assert actions[b] == scalar_agents[b].act(StateObservation(states[b], states[b].current_player))
        actions[~active] = 99  # neither read nor checked
        rewards, terminated, truncated = batch.step(actions, active)
        for b in np.flatnonzero(active):
            states[b].apply(int(actions[b]))
        assert (rewards[~active] == 0).all() and not (terminated | truncated)[~active].any()
        assert (terminated == (active & np.array([s.hand_over for s in states]))).all()
        assert_same(batch, states, f"step {step}")
    ended = [b for b, s in enumerate(states) if s.hand_over]
    assert ended
    with pytest.raises(RuntimeError, match="autoreset"):
        batch.step(np.zeros(games, dtype=np.int64), np.eye(games, dtype=bool)[ended[0]])


def test_reset_deals_deals_the_given_games() -> None:
    batch = VectorGames(4, 4, "uno_like")
    batch.reset(3)
    before = [batch.to_dict(b) for b in range(4)]
    slots = np.array([False, True, False, True])
    batch.reset_deals(np.array([0, 17, 0, 2**64 - 2], dtype=np.uint64), slots)
    expected = [before[0], State.new(4, "uno_like", seed=17).to_dict(), before[2],
                State.new(4, "uno_like", seed=2**64 - 2).to_dict()]
    assert [batch.to_dict(b) for b in range(4)] == expected
    for b in range(4):
        state = State.from_dict(expected[b], rules="uno_like")
        assert (batch.action_mask[b] == state.legal_mask()).all()
        assert (batch.observation[b] == encode_observation(state, state.current_player)).all()
    fresh = VectorGames(2, 2)
    fresh.reset_deals([4, 5])  # a plain list of ints, before any reset
    assert [fresh.to_dict(b) for b in range(2)] == [State.new(2, seed=s).to_dict() for s in (4, 5)]
    fresh.step(fresh.random_actions())


@pytest.mark.parametrize("seeds,slots,message", [
    ([1, 2, 3], None, "shape"), ([1.0, 2.0], None, "int array"), ([1, -2], None, ">= 0"),
    ([1, 2], [1, 0], "bool array"), ([1, 2], [True], "shape"),
])
def test_reset_deals_refuses_bad_input(seeds: list, slots: list | None, message: str) -> None:
    batch = VectorGames(2, 2)
    with pytest.raises(ValueError, match=message):
        batch.reset_deals(seeds, slots)
    with pytest.raises(ValueError, match=message):
        RandomAgents([1, 2]).reseed(seeds, slots)


def test_step_checks_only_the_active_games() -> None:
    batch = VectorGames(3, 2)
    batch.reset(0)
    actions = batch.random_actions()
    illegal = int(np.flatnonzero(batch.action_mask[1] == 0)[0])
    actions[1] = illegal
    with pytest.raises(IllegalActionError, match="game 1"):
        batch.step(actions, np.array([False, True, False]))
    with pytest.raises(ValueError, match="active"):
        batch.step(actions, np.array([1, 0, 1]))
    with pytest.raises(ValueError, match="active"):
        batch.step(actions, np.array([True, False]))
    kept = batch.to_dict(1)
    batch.step(actions, np.array([True, False, True]))
    assert batch.to_dict(1) == kept


def test_random_agents_refuse_bad_input() -> None:
    for seeds in ([], 5, [[1, 2]]):
        with pytest.raises(ValueError, match="seeds"):
            RandomAgents(seeds)
    agents = RandomAgents([1, 2])
    with pytest.raises(ValueError, match="action_mask"):
        agents.actions(np.ones((2, 60), dtype=np.int64))
    with pytest.raises(ValueError, match="active"):
        agents.actions(np.ones((2, 60), dtype=np.int8), np.array([True]))
    assert (agents.actions(np.zeros((2, 60), dtype=np.int8)) == -1).all()


def test_greedy_before_any_reset_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="reset"):
        greedy_actions(VectorGames(2))


def test_same_agents_without_numba() -> None:
    """NUMBA_DISABLE_JIT=1: the agent kernels as plain Python choose the same actions."""
    script = (
        "import json, numpy as np\n"
        "from c8env.vector import VectorGames, COMPILED\n"
        "from c8env.agents.batched import RandomAgents, greedy_actions\n"
        "games = VectorGames(3, 4, 'special_cards')\n"
        "games.reset(2)\n"
        "agents = RandomAgents(np.array([1, 2, 3]))\n"
        "chosen = []\n"
        "for step in range(60):\n"
        "    actions = greedy_actions(games) if step % 2 else agents.actions(games.action_mask)\n"
        "    chosen.append(actions.tolist())\n"
        "    games.step(actions)\n"
        "print(json.dumps({'compiled': COMPILED, 'chosen': chosen}))\n"
    )
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    plain = json.loads(result.stdout)
    assert plain["compiled"] is False
    games = VectorGames(3, 4, "special_cards")
    games.reset(2)
    agents = RandomAgents(np.array([1, 2, 3]))
    chosen = []
    for step in range(60):
        actions = greedy_actions(games) if step % 2 else agents.actions(games.action_mask)
        chosen.append(actions.tolist())
        games.step(actions)
    assert plain["chosen"] == chosen


@pytest.mark.parametrize("episode,reward", [("hand", "win"), ("match", "points")])
def test_autoplay_equals_the_scalar_agents(episode: str, reward: str) -> None:
    """Built-in seats (greedy, two random agents) autoplayed, the other seats stepped from outside: every game
    goes as the scalar agents on the scalar engine, episodes (autoreset, truncation) included."""
    games, n, preset, seed = 5, 3, "special_cards", 4
    seat_agents = np.array([[GREEDY, 0, EXTERNAL], [1, GREEDY, 0], [0, 1, GREEDY], [EXTERNAL, EXTERNAL, 0],
                            [GREEDY, GREEDY, GREEDY]])
    batch = VectorGames(games, n, preset, episode=episode, reward=reward, max_steps=70)
    batch.reset(seed)
    agent_seeds = [np.array([derive_seed(k, b) for b in range(games)], dtype=np.uint64) for k in range(2)]
    randoms = [RandomAgents(s) for s in agent_seeds]
    scalar_randoms = [[RandomAgent(int(s[b])) for b in range(games)] for s in agent_seeds]
    greedy = GreedyAgent(batch.rules)
    started = [0] * games

    def start(b: int) -> Episode:
        ep = Episode(episode, reward, 70)
        ep.start(State.new(n, preset, seed=derive_seed(seed, b, started[b])))
        return ep

    episodes = [start(b) for b in range(games)]

    def scalar_move(b: int, action: int, totals: np.ndarray) -> bool:
        got = episodes[b].step(action)
        if got is not None:
            totals[b] += got
        if episodes[b].done:
            started[b] += 1
            episodes[b] = start(b)
            return True
        return False

    ended_episodes = 0
    for _ in range(60):
        rewards, terminated, truncated = autoplay(batch, seat_agents, randoms)
        totals = np.zeros((games, n))
        for b in range(games):
            while True:
                state = episodes[b].state
                code = seat_agents[b, state.current_player]
                if code == EXTERNAL:
                    assert not (terminated[b] or truncated[b])
                    break
                seen = StateObservation(state, state.current_player)
                action = greedy.act(seen) if code == GREEDY else scalar_randoms[code][b].act(seen)
                if scalar_move(b, action, totals):
                    assert terminated[b] or truncated[b]
                    ended_episodes += 1
                    break
        assert np.allclose(rewards, totals)
        assert_same(batch, [ep.state for ep in episodes], "after autoplay")
        waiting = seat_agents[np.arange(games), batch.current_player] == EXTERNAL
        actions = batch.random_actions()
        rewards, terminated, truncated = batch.step(actions, waiting)
        totals = np.zeros((games, n))
        for b in np.flatnonzero(waiting):
            assert scalar_move(b, int(actions[b]), totals) == (terminated[b] or truncated[b])
        assert np.allclose(rewards, totals)
        assert_same(batch, [ep.state for ep in episodes], "after step")
    assert ended_episodes > 5


def test_autoplay_refuses_bad_input() -> None:
    batch = VectorGames(2, 2)
    batch.reset(0)
    randoms = [RandomAgents([1, 2])]
    for seat_agents, message in [(np.zeros((2, 3), dtype=np.int64), "shape"), (np.full((2, 2), 1), "holds 1"),
                                 (np.full((2, 2), -3), "holds -3"), (np.zeros((2, 2)), "int array")]:
        with pytest.raises(ValueError, match=message):
            autoplay(batch, seat_agents, randoms)
    with pytest.raises(ValueError, match=r"holds 0; allowed: GREEDY \(-2\), EXTERNAL \(-1\) \(no random agents given\)"):
        autoplay(batch, np.zeros((2, 2), dtype=np.int64))
    with pytest.raises(ValueError, match="RandomAgents for 2 games"):
        autoplay(batch, np.zeros((2, 2), dtype=np.int64), [RandomAgents([1, 2, 3])])


def test_derive_seeds_is_derive_seed() -> None:
    first = np.array([0, 1, 2**64 - 1, 2**32, 77], dtype=np.uint64)
    second = np.array([5, 0, 3, 2**40 + 1, 2**64 - 1], dtype=np.uint64)
    assert derive_seeds(first, second).tolist() == [derive_seed(int(a), int(b)) for a, b in zip(first, second, strict=True)]
    with pytest.raises(ValueError, match="same length"):
        derive_seeds(first, second[:2])
