"""``python -m training.information``: the search shown some of the other hands, or what the opponents' draws showed."""

from __future__ import annotations

import pytest

from c8env.agents import load
from c8env.agents.expert import public_position
from c8env.cards import RANK_MASKS, SUIT_MASKS
from c8env.engine import State
from c8env.episode import play_hand
from c8env.observation import StateObservation
from c8env.rules import load_rules
from c8env.tools.evaluation.deals import play_deals
from training.information import InformedSearch, main, play_informed, shown_seats

RULES = load_rules("standard")
SPEC = "expert:simulations=6"


def test_with_nothing_shown_it_plays_c8env_evals_hands() -> None:
    lineup = [SPEC, "greedy", "greedy", "greedy"]
    records = play_deals(lineup, ["expert", "g1", "g2", "g3"], RULES, 4, seed=11, deals=range(3))
    assert play_informed(SPEC, 4, 11, range(3), "none", False) == (sum(r.winner == 0 for r in records), 12)


@pytest.mark.parametrize("shown", ["next", "previous", "all"])
def test_the_samples_hold_the_hands_it_is_shown_and_not_their_cards_elsewhere(shown: str) -> None:
    seats = shown_seats(shown, 4)
    search = InformedSearch.from_expert(load(SPEC, num_players=4, seed=3), seats)
    greedy = load("greedy", num_players=4)
    checked = 0

    def choose(state: State) -> int:
        nonlocal checked
        view = StateObservation(state, state.current_player)
        if state.current_player != 1:
            return greedy.act(view)
        action = search.act(view)
        data, unseen, sizes = public_position(view, RULES)
        for _ in range(5):
            dealt = search._deal_hidden(unseen, sizes, search._requirements(data, sizes))
            shown_cards = {card for seat in seats for card in state.hand((1 + seat) % 4)}
            for seat in (1, 2, 3):
                if seat in seats:
                    assert sorted(dealt[seat]) == state.hand((1 + seat) % 4)
                else:
                    assert not shown_cards & set(dealt[seat])
            checked += 1
        return action

    for deal in range(2):
        play_hand(State.new(4, RULES, seed=deal), choose)
    assert shown_seats("previous", 4) == (3,) and shown_seats("all", 3) == (1, 2) and checked > 20


def test_tracked_draws_play_c8env_evals_hands_of_the_expert_that_reads_them() -> None:
    lineup = [SPEC + ",last_draws=1", "greedy", "greedy", "greedy"]
    records = play_deals(lineup, ["expert", "g1", "g2", "g3"], RULES, 4, seed=12, deals=range(3))
    assert play_informed(SPEC, 4, 12, range(3), "none", True) == (sum(r.winner == 0 for r in records), 12)


def test_a_greedy_players_cards_never_fit_what_his_last_draw_had_to_follow() -> None:
    # (as many of his cards as the state's last_draws counts, at every other player's turn)
    greedy = load("greedy", num_players=4)
    active = 0

    def choose(state: State) -> int:
        nonlocal active
        for seat, record in enumerate(state.last_draws):
            if record is None or seat == state.current_player:  # he may hold the card he just drew, which fits
                continue
            suits, ranks, held = record
            fitted = sum(SUIT_MASKS[s] for s in range(4) if (suits >> s) & 1)
            fitted |= sum(RANK_MASKS[r] for r in range(13) if (ranks >> r) & 1)
            assert (state.held_cards(seat)[0] & ~fitted).bit_count() >= held
            active += 1
        return greedy.act(StateObservation(state, state.current_player))

    for deal in range(20):
        play_hand(State.new(4, RULES, seed=deal), choose)
    assert active > 100


def test_the_command_prints_the_win_rate_and_refuses_an_agent_that_does_not_search(capsys) -> None:
    main(["--spec", SPEC, "--deals", "2", "--seed", "4", "--shown", "next", "--track-draws", "--workers", "2"])
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"{SPEC} (shown next, draws tracked) against 3 greedy: ") and "of 8 hands" in line
    with pytest.raises(SystemExit):
        main(["--spec", "greedy", "--deals", "1"])
    assert "--spec 'greedy' is not a search; allowed: expert[:options]" in capsys.readouterr().err
