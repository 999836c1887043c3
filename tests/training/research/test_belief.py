"""``python -m training.research.belief``: how much of the other hands each observation size tells."""

from __future__ import annotations

import numpy as np

from c8env.engine import State
from c8env.observation import OBS_SIZE
from training.research.belief import SIZES, held_out_r2, main, positions, suit_shares


def test_suit_shares_are_each_opponents_non_wild_cards_of_each_suit_over_his_hand() -> None:
    state = State.from_dict({"hands": [["KS"], ["2C", "3C", "8H", "4D"], ["5S"]], "discard": ["6H"], "stock": []})
    assert suit_shares(state, 0) == [0.5, 0.25, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]


def test_the_record_of_the_draws_and_declarations_tells_more_than_the_vector_before_it() -> None:
    observations, shares = positions(4, 400, seed=1)
    assert observations.shape[1] == OBS_SIZE and shares.shape == (len(observations), 12) and len(observations) > 3000
    assert np.all((shares >= 0) & (shares <= 1))
    before, after = (held_out_r2(observations[:, :size], shares, seed=0) for size in (353, OBS_SIZE))
    assert after > before + 0.05


def test_the_command_prints_each_size(capsys) -> None:
    main(["--players", "3", "--hands", "20"])
    out = capsys.readouterr().out
    assert all(f"the first {size} entries: held-out R^2" in out for size in SIZES)
