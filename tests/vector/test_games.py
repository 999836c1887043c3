"""The batched engine (``c8env.vector``): NumPy's generator reproduced, and every game equal to the
scalar engine's game move by move (state, mask, observation, rewards, episode ends) for every preset
and 2-7 players, and for generated custom rule sets (``tests/vector/custom_rules.py``), in hand and match
episodes that reach every kind of end, compiled and (in a subprocess) without numba."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from c8env import IllegalActionError, preset_names
from c8env.actions import NUM_ACTIONS
from c8env.agents.batched import greedy_actions, greedy_move
from c8env.agents.decision_view import view_from_state
from c8env.agents.greedy import greedy_action
from c8env.engine import PLAY, State
from c8env.episode import Episode
from c8env.observation import encode_observation
from c8env.rules import Effect, RuleSet, load_rules
from c8env.seeding import derive_seed
from c8env.vector import VectorGames, rng
from c8env.vector.kernels import END_REASONS
from tests.vector.custom_rules import FIELD_CHOICES, MATCH_KINDS, field_values, generated_games, match_kind

ROOT = Path(__file__).resolve().parent.parent.parent


def generator(parts: list[int]) -> np.ndarray:
    words = np.zeros(16, dtype=np.uint64)
    count = 0
    for part in parts:
        count += rng.entropy_words(words[count:], np.uint64(part))
    gen = np.zeros(6, dtype=np.uint64)
    rng.seed_generator(words, count, gen, np.zeros(16, dtype=np.uint64))
    return gen


def test_generator_equals_numpys() -> None:
    draws = np.random.default_rng(7)
    order = np.zeros(104, dtype=np.int64)
    for trial in range(200):
        parts = [int(draws.integers(2**63)) if trial % 2 else int(draws.integers(2**20)), trial % 5, trial % 9]
        words = np.zeros(16, dtype=np.uint64)
        count = sum(rng.entropy_words(words[i:], np.uint64(p)) for i, p in [(0, parts[0])])
        count += rng.entropy_words(words[count:], np.uint64(parts[1]))
        count += rng.entropy_words(words[count:], np.uint64(parts[2]))
        state = np.zeros(4, dtype=np.uint64)
        rng.seed_state(words, count, state, np.zeros(16, dtype=np.uint64))
        assert (state == np.random.SeedSequence(parts).generate_state(4, np.uint64)).all()
        ours, theirs = generator(parts), np.random.default_rng(parts)
        assert [rng.next64(ours) for _ in range(3)] == list(theirs.bit_generator.random_raw(3))
        ours, theirs = generator(parts), np.random.default_rng(parts)
        players = 2 + trial % 6
        assert rng.below(ours, players) == theirs.integers(players)
        length = 1 + trial % 104
        rng.permute(ours, order, length)
        assert (order[:length] == theirs.permutation(length)).all()


#: A move made facing a pending draw with a draw card in hand that matches but is wild for the player (countdown).
OWN_WILD_DRAW = "pending draw: own wild draw card held"


def play_both(rules: str | RuleSet, n: int, games: int = 3, steps: int = 300, seed: int = 3, episode: str = "hand",
              reward: str = "win", max_steps: int | None = None, greedy: float = 0.0) -> Counter[str]:
    """Step a batch and, beside it, one scalar Episode per slot with the same seeds and actions: the batch's
    random actions or, in a share ``greedy`` of the moves (a seeded coin per game and step), the batched greedy's,
    which must be the scalar greedy's (and the search rollouts' greedy_move's). Returns what happened: each hand
    that ended by its reason (``"hand: out"``...), each truncated episode (``"episode: truncated"``), each match
    that ended by :func:`match_kind`, and each move made facing a pending draw with one's own wild card among the
    draw cards that match (:data:`OWN_WILD_DRAW`)."""
    batch = VectorGames(games, n, rules, episode=episode, reward=reward, max_steps=max_steps)
    batch.reset(seed)
    rules = batch.rules
    label = rules.spec()
    started = [0] * games
    tied = [False] * games  # the match's end was reached in a tie (sudden death follows)
    coins = np.random.default_rng(seed)
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)

    def scalar(b: int) -> Episode:
        episode_ = Episode(episode, reward, max_steps)
        episode_.start(State.new(n, rules, seed=derive_seed(seed, b, started[b])))
        return episode_

    scalars = [scalar(b) for b in range(games)]
    events: Counter[str] = Counter()
    for step in range(steps):
        picks = greedy_actions(batch) if greedy else None
        for b, ep in enumerate(scalars):
            state = ep.state
            where = f"{label} {n}p game {b} step {step}"
            assert batch.to_dict(b) == state.to_dict(), where
            assert batch.current_player[b] == state.current_player, where
            assert (batch.action_mask[b] == state.legal_mask()).all(), where
            assert (batch.observation[b] == encode_observation(state, state.current_player)).all(), where
            if picks is not None:  # greedy's move, and its twin that the search's rollouts play, read from the hands
                assert picks[b] == greedy_action(view_from_state(state), rules), where
                assert picks[b] == greedy_move(batch.games, b, batch.table, mask), where
            seat = state.current_player
            if state.phase is PLAY and state.pending and (state.held_cards(seat)[0] & state.follow_mask()
                                                          & rules.draw_cards_mask & state.wild_mask(seat)):
                events[OWN_WILD_DRAW] += 1  # (his own wild card may not answer the draw)
        actions = batch.random_actions()
        if picks is not None:
            actions = np.where(coins.random(games) < greedy, picks, actions)
        rewards, terminated, truncated = batch.step(actions)
        for b, ep in enumerate(scalars):
            where = f"{label} {n}p game {b} step {step}"
            expected = ep.step(int(actions[b]))
            assert np.allclose(rewards[b], np.zeros(n) if expected is None else expected), where
            assert (terminated[b], truncated[b]) == (ep.terminated, ep.truncated), where
            res = batch.results
            assert res.hand_over[b] == (expected is not None), where
            if expected is not None:  # the hand's result, as the scalar Episode's info has it
                got = {"hand_winner": None if res.hand_winner[b] < 0 else int(res.hand_winner[b]),
                       "end_reason": END_REASONS[int(res.end_reason[b])], "scores": res.scores[b].tolist()}
                if "match_winner" in ep.result:
                    got["match_winner"] = None if res.match_winner[b] < 0 else int(res.match_winner[b])
                assert got == ep.result, where
                events[f"hand: {ep.result['end_reason']}"] += 1
                if episode == "match" and not ep.done and not rules.countdown:
                    scores, played = ep.result["scores"], ep.state.hands_played
                    tied[b] |= (played >= rules.match_hands if rules.match_hands is not None
                                else max(scores) >= rules.target(n))
            if ep.done:
                assert (batch.final_observation[b] == encode_observation(ep.state, ep.state.current_player)).all()
                if ep.truncated:
                    events["episode: truncated"] += 1
                elif episode == "match":
                    events[match_kind(rules, tied[b])] += 1
                started[b] += 1
                tied[b] = False
                scalars[b] = scalar(b)
    return events


@pytest.mark.slow
@pytest.mark.parametrize("n", range(2, 8))
@pytest.mark.parametrize("preset", preset_names())
def test_every_preset_and_player_count_equals_the_scalar_engine(preset: str, n: int) -> None:
    play_both(preset, n, max_steps=150)  # short hands: many deals, truncations and autoresets


@pytest.mark.parametrize("preset,n", [("standard", 2), ("five_hands", 3), ("countdown", 2), ("uno_like", 4),
                                      ("penalty", 2), ("last_card", 5)])
def test_matches_with_points_equal_the_scalar_engine(preset: str, n: int) -> None:
    """Matches played mostly by greedy (random play ends few hands): they end, as the preset says they do."""
    ends = play_both(preset, n, games=2, steps=2500, episode="match", reward="points", greedy=0.8)
    assert ends[match_kind(load_rules(preset), tied=False)] > 0, ends


def test_whole_hands_end_in_both() -> None:
    ends = play_both("special_cards", 2, games=4, steps=1500)
    assert sum(count for end, count in ends.items() if end.startswith("hand: ")) > 0, ends


#: Every kind of end an episode can reach: each reason a hand ends for, truncation, each way a match ends.
END_KINDS = (*(f"hand: {reason}" for reason in END_REASONS[1:]), "episode: truncated", *MATCH_KINDS)
#: The custom games that test_generated_rules_equal_the_scalar_engine plays (tests/vector/custom_rules.py).
GENERATED = generated_games(48, seed=55)


def test_every_rule_set_field_is_generated() -> None:
    """The custom rules draw every RuleSet field (a field added to RuleSet fails here until the generator draws
    it), and every field takes several values in the games played, every effect among them, and so does the
    player count."""
    assert set(FIELD_CHOICES) == {f.name for f in dataclasses.fields(RuleSet)}
    rule_sets = [rules for rules, _, _ in GENERATED]
    assert {name: len(values) for name, values in field_values(rule_sets).items() if len(values) < 2} == {}
    effects = {Effect(code) for rules in rule_sets for code in rules.effect_table}
    assert effects == set(Effect)
    assert {n for _, n, _ in GENERATED} == set(range(2, 8))


def test_generated_rules_equal_the_scalar_engine() -> None:
    """Custom rule sets (every field varied), in hands and in matches long enough that every kind of end happens
    (counted): the batched engine plays as the scalar engine, and the batched greedy as the scalar greedy, move by
    move."""
    seen: Counter[str] = Counter()
    for k, (rules, n, settings) in enumerate(GENERATED):
        seen += play_both(rules, n, games=2, seed=k, greedy=0.8, **settings)
    assert [kind for kind in (*END_KINDS, OWN_WILD_DRAW) if not seen[kind]] == [], seen


def test_illegal_actions_are_refused_and_change_nothing() -> None:
    batch = VectorGames(3, 2)
    batch.reset(0)
    before = [batch.to_dict(b) for b in range(3)]
    actions = batch.random_actions()
    actions[1] = int(np.flatnonzero(batch.action_mask[1] == 0)[0])
    with pytest.raises(IllegalActionError, match="game 1"):
        batch.step(actions)
    actions[1] = 60
    with pytest.raises(IllegalActionError, match="out of range"):
        batch.step(actions)
    with pytest.raises(ValueError, match="shape"):
        batch.step(actions[:2])
    assert [batch.to_dict(b) for b in range(3)] == before


def test_bad_arguments() -> None:
    for kwargs, named in [({"num_envs": 0}, "num_envs"), ({"num_envs": 2, "num_players": 8}, "num_players"),
                          ({"num_envs": 2, "episode": "game"}, "episode"), ({"num_envs": 2, "rules": "nope"}, "nope")]:
        with pytest.raises(ValueError, match=named):
            VectorGames(**kwargs)
    with pytest.raises(RuntimeError, match="reset"):
        VectorGames(2).step(np.zeros(2, dtype=np.int64))
    with pytest.raises(ValueError, match="seed"):
        VectorGames(2).reset(-1)


def test_without_autoreset_a_finished_game_must_be_reset() -> None:
    batch = VectorGames(2, 2, max_steps=3, autoreset=False)
    batch.reset(1)
    for _ in range(3):
        batch.step(batch.random_actions())
    assert batch.truncated.all()
    with pytest.raises(RuntimeError, match="autoreset"):
        batch.step(batch.random_actions())


def test_same_game_without_numba() -> None:
    """NUMBA_DISABLE_JIT=1 runs the same kernels as plain Python: the same games."""
    script = (
        "import json, numpy as np\n"
        "from c8env.vector import VectorGames, COMPILED\n"
        "games = VectorGames(2, 3, 'special_cards')\n"
        "games.reset(5)\n"
        "for _ in range(40):\n"
        "    games.step(games.random_actions())\n"
        "print(json.dumps({'compiled': COMPILED, 'games': [games.to_dict(b) for b in range(2)]}))\n"
    )
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    plain = json.loads(result.stdout)
    assert plain["compiled"] is False
    games = VectorGames(2, 3, "special_cards")
    games.reset(5)
    for _ in range(40):
        games.step(games.random_actions())
    assert plain["games"] == [games.to_dict(b) for b in range(2)]
