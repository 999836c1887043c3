"""``python -m training.research.regret``: a small search's moves judged by the same search's means at many samples."""

from __future__ import annotations

import pytest

from training.research.regret import hand_regrets, main, positions


def test_positions_are_seat_0s_choices_in_the_drivers_hands() -> None:
    found = positions("greedy", 4, seed=3, hand=0)
    assert found and all(s.current_player == 0 and len(s.legal_actions()) > 1 for s in found)


def test_regrets_are_never_negative_and_a_one_sample_search_has_some() -> None:
    rows = [row for hand in range(3) for row in hand_regrets("expert", "greedy", 4, 5, hand, (1, 40), 200)]
    assert len(rows) > 10 and all(len(row) == 2 and min(row) >= 0 for row in rows)
    assert sum(row[0] > 0 for row in rows) > 0


def test_the_command_prints_each_budget_and_refuses_simulations_in_the_spec(capsys) -> None:
    main(["--spec", "expert", "--driver", "greedy", "--hands", "2", "--budgets", "2", "8", "--reference", "30",
          "--workers", "2"])
    out = capsys.readouterr().out
    assert "expert against 3 greedy" in out and "  2 samples: regret " in out and "  8 samples: regret " in out
    assert "points of win rate)" in out
    with pytest.raises(SystemExit):
        main(["--spec", "expert:simulations=5"])
    assert "names simulations=" in capsys.readouterr().err
