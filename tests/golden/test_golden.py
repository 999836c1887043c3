"""The golden playthroughs (``tests/golden/*.txt``, written by ``generate.py``): each game replayed in memory
gives its file line for line, the files on disk are exactly the generator's, and the batched engine deals
the cards recorded for the hand episodes."""

from __future__ import annotations

import pytest

import c8env
from c8env.vector import VectorGames
from tests.golden.generate import GAMES, GOLDEN_DIR, Game, deal_lines, file_lines, game_lines

REGENERATE = ("if the change is meant to alter behaviour, regenerate with `python tests/golden/generate.py` "
              "and say so in the commit (see its docstring)")


def where(lines: list[str], index: int) -> str:
    """What line ``index`` of a playthrough records: ``move N``, ``deal N`` (its block), ``header`` or ``end``."""
    line = lines[index]
    if line.startswith("move "):
        return line.partition(":")[0]
    if line.startswith(("deal ", "  ")):
        return next(earlier for earlier in reversed(lines[:index + 1]) if earlier.startswith("deal "))
    return "end" if any(earlier.startswith("deal ") for earlier in lines[:index]) else "header"


def first_difference(name: str, expected: list[str], got: list[str], first_line: int = 1) -> str | None:
    """The first line where ``got`` departs from ``expected`` (lines of the file ``name`` from line number
    ``first_line``), described; None if they are equal."""
    index = next((i for i, (e, g) in enumerate(zip(expected, got, strict=False)) if e != g), min(len(expected), len(got)))
    if index == len(expected) == len(got):
        return None
    shown_expected = expected[index] if index < len(expected) else "<end of file>"
    shown_got = got[index] if index < len(got) else "<end of the replay>"
    place = where(expected if index < len(expected) else got, index)
    return f"{name} line {first_line + index} ({place}) differs\n  expected: {shown_expected}\n  got:      {shown_got}"


def test_the_files_on_disk_are_the_generators() -> None:
    on_disk = {path.name for path in GOLDEN_DIR.glob("*.txt")}
    written = {game.path.name for game in GAMES}
    assert len(written) == len(GAMES), "two games share a name"
    assert on_disk == written, f"stale: {sorted(on_disk - written)}, missing: {sorted(written - on_disk)}; {REGENERATE}"


def test_the_games_cover_presets_players_episodes_rewards_and_agents() -> None:
    assert {game.preset for game in GAMES} == set(c8env.preset_names())
    assert all(sum(game.players == n for game in GAMES) >= 3 for n in (2, 3, 4, 7))
    assert {(game.episode, game.reward) for game in GAMES} == {(e, r) for e in ("hand", "match")
                                                               for r in ("win", "points")}
    assert {"random", "greedy", "mixed"} <= {game.agents[0] if len(set(game.agents)) == 1 else "mixed"
                                             for game in GAMES}


@pytest.mark.parametrize("game", GAMES, ids=lambda game: game.name)
def test_the_replay_equals_the_golden_file(game: Game) -> None:
    difference = first_difference(game.path.name, file_lines(game.path), game_lines(game))
    if difference:
        pytest.fail(f"{difference}\n{REGENERATE}", pytrace=False)


@pytest.mark.parametrize("game", [game for game in GAMES if game.episode == "hand" and game.env_version is None],
                         ids=lambda game: game.name)
def test_the_batched_engine_deals_the_recorded_cards(game: Game) -> None:
    """``VectorGames.reset_deals([seed])`` deals ``State.new(..., seed=seed)``: the file's first deal block."""
    lines = file_lines(game.path)
    start = lines.index("deal 1")
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("move "))
    batch = VectorGames(1, game.players, game.preset, autoreset=False)
    batch.reset_deals([game.seed])
    difference = first_difference(game.path.name, lines[start:end], deal_lines(batch.to_dict(0), 1), start + 1)
    if difference:
        pytest.fail(f"the batched engine's deal: {difference}", pytrace=False)
