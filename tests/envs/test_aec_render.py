"""The PettingZoo env's rendering through its public API (the env's docstring).

Positions are built as state dicts (``State.to_dict()`` format) and passed with
``env.reset(options={"state": d})``. Reminders: a card id is ``suit * 13 + rank``
(suits C, D, H, S; ranks A..K); the last element of ``stock`` is drawn next and the
last element of ``discard`` is the top card.
"""

from __future__ import annotations

import re

import pytest

from c8env import DECLARE_BASE, DRAW
from tests.envs.aec_helpers import SUITS, c, start

# ----- rendering -----------------------------------------------------------------------------------------
RENDER_POSITION = {
    "hands": [["5C", "KD"], ["2H", "3H", "4H"], ["9S"]],
    "discard": ["7D", "9C"], "stock": ["4D", "JD", "QD", "AS"], "current_player": 0,
    "scores": [12, 0, 40],
    "hands_played": 1,
}


def _seat_line(text, seat):
    lines = [line for line in text.splitlines() if f"player_{seat}" in line]
    assert len(lines) == 1, text
    return lines[0].replace("*", " ").split()


def test_render_ansi_shows_the_acting_hand_top_card_suit_counts_and_scores():
    env = start(RENDER_POSITION, render_mode="ansi")
    text = env.render()
    assert isinstance(text, str)
    assert "5C" in text and "KD" in text  # the acting player's hand
    for hidden in ("2H", "3H", "4H", "9S", "4D", "JD", "QD", "AS"):  # nobody else's cards, nor the stock
        assert hidden not in text
    assert "9C" in text  # top card
    follow = [line for line in text.splitlines() if "follow" in line]
    assert follow and re.search(r"follow\W+C\b", follow[0]), text
    assert re.search(r"stock\D+4\b", text)
    for seat, (size, score) in enumerate([(2, 12), (3, 0), (1, 40)]):
        tokens = _seat_line(text, seat)
        assert str(size) in tokens and str(score) in tokens, tokens
    # after a wild card and a declared suit the suit to follow shows
    env = start(dict(RENDER_POSITION, hands=[["8C", "KD"], ["2H", "3H", "4H"], ["9S"]]), render_mode="ansi")
    env.step(c("8C"))
    env.step(DECLARE_BASE + SUITS.index("H"))
    text = env.render()
    assert re.search(r"follow\W+H\b", [line for line in text.splitlines() if "follow" in line][0]), text
    assert "2H" in text and "3H" in text and "KD" not in text  # now player_1's hand shows


def test_render_human_prints(capsys):
    env = start(RENDER_POSITION, render_mode="human")
    printed_at_reset = capsys.readouterr().out
    assert env.render() is None
    out = capsys.readouterr().out
    expected = start(RENDER_POSITION, render_mode="ansi").render()
    assert out.strip() == expected.strip()
    assert printed_at_reset.strip() == expected.strip()
    env.step(DRAW)  # each step prints too
    assert "AS" in capsys.readouterr().out


def test_render_without_a_mode_returns_none():
    env = start(RENDER_POSITION)
    with pytest.warns(UserWarning, match="render_mode"):
        assert env.render() is None
