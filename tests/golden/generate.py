"""Golden playthroughs: seeded games written out move by move, to pin the engine's behaviour.

Each ``tests/golden/<name>.txt`` is one game of :data:`GAMES` (a preset, a player count, a hand or
match episode, a reward, a seed and an agent per seat), played through the public API
(``c8env.State``, ``c8env.episode.Episode``, ``c8env.observation``, ``c8env.agents.load``):

- a header: the game's settings and each seat's agent (a random agent's seed is derived from the
  game's seed and the seat);
- for each deal (the first, then in a match each new hand): the dealer, the seat to act, the match
  scores, every hand, the stock and the discard pile (bottom to top: the last card is the top);
- one line per decision: move number, seat, legal action ids, the action (id and text), the first
  16 hex digits of the SHA-256 of the acting seat's observation vector and action mask, and the
  rewards when the move ended a hand;
- the end: moves, hands, terminated/truncated, and ``Episode.result``.

The games named ``..._v<N>`` are played through env version N's PettingZoo env (``c8env.crazy_eights_vN``,
dealt by its ``reset(seed=...)``), and their digests are of that env's ``observe``: they pin what each released
version gives a learner (:mod:`c8env.versions`). The others digest the newest observation.

``tests/golden/test_golden.py`` replays every game and compares line by line.

Regenerate every file (from the repository root, with c8env installed)::

    python tests/golden/generate.py          # or: make golden
    python tests/golden/generate.py --check  # compare only; exit 1 listing the files that differ

Regenerating is legitimate only when a change is meant to alter behaviour (a rule fix, a new
observation feature, another deal or agent decision): review the diff of the files and say in the
commit that they were regenerated and why. A difference after a refactoring or an optimisation is a
bug to fix, not a reason to regenerate.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import c8env
from c8env.agents import load
from c8env.episode import Episode
from c8env.observation import StateObservation, action_mask, encode_observation
from c8env.versions import VERSIONS, get_version

GOLDEN_DIR = Path(__file__).resolve().parent
RANDOM, GREEDY = "random", "greedy"


@dataclass(frozen=True)
class Game:
    """One golden game: ``<name>.txt`` holds its playthrough."""

    name: str
    preset: str
    players: int
    episode: str
    reward: str
    seed: int
    agents: tuple[str, ...]
    """Agent spec per seat (``random`` or ``greedy``)."""
    max_steps: int | None = None
    env_version: int | None = None
    """Played through this env version's PettingZoo env (its observation digested), or None: the engine."""

    @property
    def path(self) -> Path:
        """The golden file of this game."""
        return GOLDEN_DIR / f"{self.name}.txt"


def _seats(players: int, *specs: str) -> tuple[str, ...]:
    """``specs`` repeated round the table: ``_seats(4, RANDOM, GREEDY)`` alternates from seat 0."""
    return tuple(specs[seat % len(specs)] for seat in range(players))


def _game(preset: str, players: int, episode: str, reward: str, seed: int, *specs: str,
          max_steps: int | None = None, env_version: int | None = None) -> Game:
    """A game named ``<preset>_<players>p_<episode>_<agents>`` (``mixed`` when the seats differ; ``_v<N>`` when
    played through env version N)."""
    agents = _seats(players, *specs)
    kind = agents[0] if len(set(agents)) == 1 else "mixed"
    suffix = ("" if max_steps is None else f"_max{max_steps}") + ("" if env_version is None else f"_v{env_version}")
    return Game(f"{preset}_{players}p_{episode}_{kind}{suffix}", preset, players, episode, reward, seed, agents,
                max_steps, env_version)


#: The golden games: every preset, 2, 3, 4 and 7 players, hand and match episodes, both rewards, random,
#: greedy and mixed seats, and one truncated hand. Seeds were picked for short games that still show the
#: presets' features: a wild starter declared by the dealer, "last card" announced and missed, stops, a
#: blocked hand, a hand ended by the empty stock, a match decided by an extra hand.
GAMES: tuple[Game, ...] = (
    # hand episodes
    _game("standard", 2, "hand", "win", 3, RANDOM),
    _game("standard", 3, "hand", "points", 2, GREEDY),
    _game("standard", 4, "hand", "win", 0, RANDOM),
    _game("standard", 7, "hand", "win", 0, GREEDY),
    _game("standard", 2, "hand", "points", 0, RANDOM, max_steps=40),
    _game("action_cards", 4, "hand", "win", 5, GREEDY, RANDOM),
    _game("countdown", 3, "hand", "win", 1, RANDOM),
    _game("crazy_aces", 4, "hand", "points", 0, RANDOM),
    _game("dealer_declares", 2, "hand", "win", 7, GREEDY),
    _game("draw_one", 7, "hand", "win", 3, RANDOM),
    _game("draw_three", 3, "hand", "points", 2, RANDOM),
    _game("five_hands", 7, "hand", "win", 0, RANDOM),
    _game("last_card", 3, "hand", "win", 21, RANDOM),
    _game("no_reshuffle", 4, "hand", "points", 6, RANDOM),
    _game("penalty", 2, "hand", "points", 9, GREEDY),
    _game("special_cards", 4, "hand", "win", 3, RANDOM, GREEDY),
    _game("stop_the_round", 2, "hand", "points", 4, GREEDY, RANDOM),
    _game("uno_like", 7, "hand", "win", 0, GREEDY),
    # match episodes
    _game("five_hands", 2, "match", "points", 4, GREEDY),
    _game("five_hands", 3, "match", "win", 19, RANDOM),
    _game("five_hands", 7, "match", "points", 0, GREEDY),
    _game("countdown", 2, "match", "win", 9, RANDOM, GREEDY),
    _game("countdown", 2, "match", "points", 1, GREEDY),
    _game("penalty", 3, "match", "points", 0, GREEDY),
    _game("penalty", 4, "match", "win", 2, RANDOM, GREEDY),
    _game("stop_the_round", 4, "match", "points", 1, GREEDY, RANDOM),
    _game("stop_the_round", 7, "match", "win", 16, GREEDY),
    # through each env version's PettingZoo env: what each released version gives a learner
    *(_game(preset, players, episode, "win", seed, RANDOM, GREEDY, env_version=version.number)
      for version in VERSIONS
      for preset, players, episode, seed in (("standard", 2, "hand", 3), ("countdown", 3, "match", 1),
                                             ("special_cards", 4, "hand", 3))),
)


def agent_seed(game_seed: int, seat: int) -> int:
    """The seed of a seat's agent: NumPy's first 64-bit ``SeedSequence([game_seed, seat])`` word."""
    return int(np.random.SeedSequence([game_seed, seat]).generate_state(1, np.uint64)[0])


def _cards(cards: list[str]) -> str:
    return " ".join(cards) if cards else "-"


def deal_lines(data: Mapping[str, Any], number: int) -> list[str]:
    """The block of a fresh deal from ``State.to_dict()`` data (``number``: the episode's 1st, 2nd... deal)."""
    lines = [
        f"deal {number}",
        f"  dealer: {data['dealer']}",
        f"  to act: seat {data['current_player']} ({data['phase']})",
        f"  scores: {' '.join(str(x) for x in data['scores'])}",
    ]
    lines += [f"  hand {seat} ({len(hand)}): {_cards(hand)}" for seat, hand in enumerate(data["hands"])]
    lines.append(f"  stock ({len(data['stock'])}, bottom to top): {_cards(data['stock'])}")
    lines.append(f"  discard ({len(data['discard'])}, bottom to top): {_cards(data['discard'])}")
    return lines


def digest(observation: np.ndarray, mask: np.ndarray) -> str:
    """First 16 hex digits of the SHA-256 of an observation vector and action mask (little-endian)."""
    data = np.asarray(observation).astype("<f4").tobytes() + np.asarray(mask).astype("i1").tobytes()
    return hashlib.sha256(data).hexdigest()[:16]


def _start(game: Game) -> tuple[c8env.State, Episode, Callable[[int], str]]:
    """The game's first state, its episode, and the digest of a seat's view: the engine's (newest observation),
    or through env version ``game.env_version``'s PettingZoo env (its ``reset(seed)`` deals; its ``observe``)."""
    if game.env_version is None:
        state = c8env.State.new(game.players, game.preset, seed=game.seed)
        episode = Episode(game.episode, game.reward, game.max_steps)
        episode.start(state)
        return state, episode, lambda seat: digest(encode_observation(state, seat), action_mask(state, seat))
    module = importlib.import_module(f"c8env.envs.{get_version(game.env_version).name}")
    env = module.raw_env(num_players=game.players, rules=game.preset, episode=game.episode, reward=game.reward,
                         max_steps=game.max_steps)
    env.reset(seed=game.seed)

    def seen(seat: int) -> str:
        view = env.observe(env.possible_agents[seat])
        return digest(view["observation"], view["action_mask"])

    return env.game, env._episode, seen


def game_lines(game: Game) -> list[str]:
    """Play ``game`` and return its playthrough text, one string per line (no newlines)."""
    seeds = [agent_seed(game.seed, seat) for seat in range(game.players)]
    agents = [load(spec, rules=game.preset, num_players=game.players, seed=seed)
              for spec, seed in zip(game.agents, seeds, strict=True)]
    described = " ".join(f"{seat}={spec}" + (f"(seed={seed})" if spec == RANDOM else "")
                         for seat, (spec, seed) in enumerate(zip(game.agents, seeds, strict=True)))
    lines = [
        "# c8env golden playthrough; regenerate with `python tests/golden/generate.py` (see its docstring)",
        f"game: {game.name}",
        f"preset: {game.preset}",
        f"players: {game.players}",
        f"episode: {game.episode}",
        f"reward: {game.reward}",
        f"max_steps: {game.max_steps if game.max_steps is not None else 'default'}",
        f"seed: {game.seed}",
        f"agents: {described}",
    ]
    if game.env_version is not None:
        lines.insert(8, f"env: crazy_eights_v{game.env_version}")
    state, episode, seen_by = _start(game)
    deals = moves = 0
    new_deal = True
    while not episode.done:
        if new_deal:
            deals += 1
            lines += deal_lines(state.to_dict(), deals)
        seat = state.current_player
        legal = state.legal_actions()
        seen = seen_by(seat)
        action = agents[seat].act(StateObservation(state, seat))
        rewards = episode.step(action)
        moves += 1
        line = (f"move {moves}: seat {seat} legal [{' '.join(map(str, legal))}] "
                f"action {action} ({c8env.action_text(action)}) obs {seen}")
        if rewards is not None:
            line += f" rewards [{' '.join(f'{r:+.6f}' for r in rewards)}]"
        lines.append(line)
        new_deal = rewards is not None
    lines.append(f"end: moves {moves}, deals {deals}, terminated {episode.terminated}, "
                 f"truncated {episode.truncated}")
    lines.append(f"result: {json.dumps(episode.result, sort_keys=True)}")
    return lines


def file_lines(path: Path) -> list[str]:
    """The lines of a golden file (no newlines)."""
    return path.read_text(encoding="utf-8").splitlines()


def stale_files() -> list[Path]:
    """Golden files on disk that no game of :data:`GAMES` writes."""
    names = {game.path.name for game in GAMES}
    return sorted(p for p in GOLDEN_DIR.glob("*.txt") if p.name not in names)


def main(argv: list[str] | None = None) -> int:
    """Write every golden file (and remove stale ones), or with ``--check`` list those that differ."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the files; write nothing; exit 1 on a difference")
    args = parser.parse_args(argv)
    stale = stale_files()
    differ = [f"{path.name} (stale: no game writes it)" for path in stale]
    for game in GAMES:
        lines = game_lines(game)
        if game.path.exists() and file_lines(game.path) == lines:
            continue
        differ.append(f"{game.path.name} ({'differs' if game.path.exists() else 'missing'})")
        if not args.check:
            game.path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    if not args.check:
        for path in stale:
            path.unlink()
    if not differ:
        print(f"all {len(GAMES)} golden files match")
        return 0
    print(("differ:" if args.check else "rewritten or removed:"), *differ, sep="\n  ")
    return 1 if args.check else 0


if __name__ == "__main__":
    sys.exit(main())
