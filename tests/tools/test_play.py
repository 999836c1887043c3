"""`c8env play`: a human plays agents in the terminal (answers scripted here)."""

from __future__ import annotations

import itertools
import re
import subprocess
import sys

import pytest

from c8env.agents import load
from c8env.cards import parse_card
from c8env.engine import ANNOUNCE, DECLARE_BASE, DRAW, PASS, STOP, State
from c8env.observation import StateObservation
from c8env.tools.play import QuitGame, parse_move, play_game

LEGAL = [parse_card("8C"), parse_card("TD"), parse_card("QS"), DRAW]


@pytest.mark.parametrize("text, expected", [
    ("1", parse_card("8C")), (" 4 ", DRAW), ("8c", parse_card("8C")), ("play 10D", parse_card("TD")),
    ("q♠", parse_card("QS")), ("draw", DRAW), ("DRAW", DRAW),
])
def test_parse_move_names_legal_moves(text, expected):
    assert parse_move(text, LEGAL) == expected


def test_parse_move_suits_and_words():
    declares = [DECLARE_BASE + i for i in range(4)]
    assert parse_move("h", declares) == DECLARE_BASE + 2
    assert parse_move("declare S", declares) == DECLARE_BASE + 3
    assert parse_move("pass", [PASS, STOP]) == PASS
    assert parse_move("stop", [PASS, STOP]) == STOP
    assert parse_move("announce", [ANNOUNCE, DRAW]) == ANNOUNCE


@pytest.mark.parametrize("text, patterns", [
    ("5", ["'5'", "no move has that number", "1 = play 8C", "4 = draw"]),
    ("0", ["'0'", "no move has that number"]),
    ("9H", ["'9H' (play 9H) is not legal now", "2 = play TD"]),
    ("pass", ["'pass' (pass) is not legal now"]),
    ("S", ["'S' (declare S) is not legal now"]),
    ("banana", ["'banana' is not a move", "a card like 8H"]),
    ("", ["'' is not a move"]),
])
def test_parse_move_rejects_with_reason(text, patterns):
    with pytest.raises(ValueError) as info:
        parse_move(text, LEGAL)
    for pattern in patterns:
        assert pattern in str(info.value), str(info.value)


@pytest.mark.parametrize("text", ["q", "quit", "EXIT"])
def test_parse_move_quit(text):
    with pytest.raises(QuitGame):
        parse_move(text, LEGAL)


def _scripted(answers):
    answers = iter(answers)
    lines: list[str] = []
    return (lambda prompt: next(answers)), lines.append, lines


def _first_legal_forever():
    return itertools.repeat("1")


@pytest.mark.parametrize("players, rules, seat, seed", [(2, "standard", 0, 3), (3, "special_cards", 1, 8),
                                                          (4, "uno_like", 3, 21)])
def test_scripted_game_equals_the_same_moves_on_the_engine(players, rules, seat, seed):
    """Answering "1" every turn plays the first legal move; the agents see and do what they would on the engine."""
    ask, say, lines = _scripted(_first_legal_forever())
    final = play_game(["greedy"], players, rules, seat=seat, seed=seed, ask=ask, say=say)

    state = State.new(players, rules, seed=seed)
    agents = {s: load("greedy", rules=rules, num_players=players, seed=seed + s) for s in range(players) if s != seat}
    while not state.hand_over:
        current = state.current_player
        action = (state.legal_actions()[0] if current == seat
                  else agents[current].act(StateObservation(state, current)))
        state.apply(action)
    assert final.to_dict() == state.to_dict()
    winner = "you" if state.winner == seat else f"player_{state.winner}"
    assert lines[-players - 1] == f"hand over ({state.end_reason}): winner {winner}"
    assert lines[-1] == f"scores: {state.scores}"
    assert any(line.startswith("your hand: ") for line in lines)


def test_bad_answers_are_explained_and_asked_again():
    answers = itertools.chain(["nonsense", "77"], _first_legal_forever())
    ask, say, lines = _scripted(answers)
    play_game(["random"], 2, "standard", seed=5, ask=ask, say=say)
    assert any("'nonsense' is not a move" in line for line in lines)
    assert any("'77': no move has that number" in line for line in lines)
    assert lines[-3].startswith("hand over")


def test_opponents_hands_stay_hidden_until_the_hand_ends():
    ask, say, lines = _scripted(_first_legal_forever())
    final = play_game(["greedy"], 3, "standard", seed=3, ask=ask, say=say)
    end = next(i for i, line in enumerate(lines) if line.startswith("hand over"))
    public_move = re.compile(r"player_[12]: (play \w\w|declare [CDHS]|(draw|pass)( \(\d+ cards?\))?"
                             r"|announce last card|stop)$")
    allowed_prefixes = ("Crazy Eights", "--- hand", "top card ", "your hand: ", "your move ", "you: ",
                        "  (")  # what a move did (public: effects, counts, reshuffles)
    for line in lines[:end]:
        assert line.startswith(allowed_prefixes) or public_move.match(line), line
    assert any(public_move.match(line) and "draw (" in line for line in lines[:end])  # a draw shows a count only
    for seat in (1, 2):
        assert f"  player_{seat} held: {' '.join(final.to_dict()['hands'][seat]) or '-'}" in lines[end:]


def test_match_plays_hands_until_the_target():
    ask, say, lines = _scripted(_first_legal_forever())
    final = play_game(["greedy"], 2, {"preset": "standard", "match_target": 60}, seed=2, episode="match",
                      ask=ask, say=say)
    assert final.match_over
    assert final.hands_played >= 1
    assert sum(line.startswith("--- hand ") for line in lines) == final.hands_played
    assert lines[-1] in ("match over: you win", "match over: player_1 wins")
    assert (lines[-1] == "match over: you win") == (final.match_winner == 0)


@pytest.mark.parametrize("kwargs, pattern", [
    ({"seat": 2}, "seat=2 is invalid; allowed: an int from 0 to 1"),
    ({"episode": "set"}, "episode='set' is invalid"),
    ({"agent_specs": []}, "give at least one agent spec"),
    ({"agent_specs": ["champion"]}, "'champion'"),
])
def test_play_game_bad_arguments(kwargs, pattern):
    args = {"agent_specs": ["greedy"], "num_players": 2, "seed": 1, **kwargs}
    with pytest.raises(ValueError, match=pattern):
        play_game(**args, ask=lambda prompt: "1", say=lambda line: None)


def test_cli_plays_from_stdin_and_quits():
    done = subprocess.run([sys.executable, "-m", "c8env.tools.cli", "play", "--agent", "ppo-standard-2p", "--seed", "4"],
                          input="1\n" * 400, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "player_1 is ppo-standard-2p" in done.stdout
    assert "hand over (" in done.stdout

    quit_ = subprocess.run([sys.executable, "-m", "c8env.tools.cli", "play", "--seed", "4"],
                           input="quit\n", capture_output=True, text=True, timeout=120)
    assert quit_.returncode == 0 and "game abandoned" in quit_.stdout

    bad = subprocess.run([sys.executable, "-m", "c8env.tools.cli", "play", "--players", "9"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--players: 9 is invalid; allowed: an int from 2 to 7" in bad.stderr


# ----- messages a person follows ---------------------------------------------------------------------
def test_parse_move_says_you_do_not_hold_the_card():
    hand = [parse_card("8C"), parse_card("TD"), parse_card("QS"), parse_card("2H")]
    with pytest.raises(ValueError, match=r"'8H': you do not hold 8H; legal: 1 = play 8C"):
        parse_move("8H", LEGAL, hand)
    with pytest.raises(ValueError, match=r"'2H' \(play 2H\) is not legal now"):  # held, but it does not fit
        parse_move("2H", LEGAL, hand)


def test_play_shows_direction_effects_and_the_cost_of_declining():
    from c8env.tools.play import move_label

    ask, say, lines = _scripted(_first_legal_forever())
    play_game(["greedy"], 3, "uno_like", seed=21, ask=ask, say=say)
    text = "\n".join(lines)
    assert "direction clockwise" in text
    assert re.search(r"\((skips player_\d|.* reverses play: now|.*must draw \d|.* is wild: )", text), text
    state = State.from_dict({"hands": [["5C"], ["2H", "3H"]], "stock": ["4D"], "discard": ["9C"],
                             "phase": "announce"}, rules="last_card")
    assert move_label(state, PASS) == "pass (decline to announce: you draw 2 penalty cards)"


def test_demo_is_a_short_narrated_hand_with_a_summary():
    from c8env.tools.demo import play_demo

    lines: list[str] = []
    state = play_demo(2, "standard", 7, say=lines.append)
    assert state.hand_over and len(lines) < 200
    assert lines[0].startswith("Crazy Eights: 2 players, rules 'standard'")
    assert any("(greedy)" in line for line in lines) and any("(expert)" in line for line in lines)
    assert any(line.startswith("Summary: ") for line in lines)
    assert any("-> " in line for line in lines)  # what special moves did
