"""What the hidden cards are worth to the search: ``expert`` against greedy players when it is shown some of
the other hands (a cheat's bound on what inference from play could give), or what each opponent's draws showed.

    python -m training.information --players 4 --deals 1000 --shown next
    python -m training.information --players 4 --deals 2000 --track-draws

Each deal is played once per seat of the searcher, the other seats greedy, as ``c8env eval SPEC greedy ...``
plays it (the same deals and search seeds: with nothing shown or tracked the results are that command's). The
searcher's samples keep the true hands of the opponents it is shown; with ``--track-draws`` it also reads what
each opponent's last draw showed (``expert:last_draws=1``, the observation's ``opponent_last_draws``): greedy
draws only when nothing fits, so none of his cards has fitted what he then had to follow since, until he draws
again (the env's ``voids`` forget it at his next play). It prints the win rate with its 95% Wilson interval
(docs/strength.md has the figures).
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor, as_completed

from tqdm import tqdm

from c8env.agents import Agent, load
from c8env.agents.expert import ExpertAgent
from c8env.engine import State
from c8env.episode import MAX_HAND_STEPS, play_hand
from c8env.observation import StateObservation
from c8env.seeding import derive_seed
from c8env.tools.argcheck import Parser, int_at_least, int_between
from c8env.tools.evaluation.deals import agent_seed
from c8env.tools.evaluation.stats import wilson_interval
from training.oracle import pin_hands

#: ``--shown``: the opponents whose hands the search is told, as seats after the searcher's (None: all of them).
SHOWN = {"none": (), "next": (1,), "previous": (-1,), "all": None}
_CHUNK = 25  # deals per task


class InformedSearch(ExpertAgent):
    """An ``expert`` whose samples keep the true hands of the opponents it is shown (seats after its own)."""

    shown: tuple[int, ...]
    _hands: dict[int, int]

    @classmethod
    def from_expert(cls, expert: ExpertAgent, shown: tuple[int, ...]) -> InformedSearch:
        """The informed search of ``expert`` (its options and generator)."""
        search = cls.__new__(cls)
        search.__dict__.update(expert.__dict__, shown=shown)
        return search

    def act(self, observation: StateObservation) -> int:
        """The search's move; it reads the hands it is shown from the state behind ``observation``."""
        state, seat = observation.state, observation.seat
        self._hands = {k: state.held_cards((seat + k) % state.num_players)[0] for k in self.shown}
        return super().act(observation)

    def _requirements(self, data: dict, sizes: list[int]) -> dict[int, list[tuple[int, int]]]:
        return pin_hands(super()._requirements(data, sizes), self._hands, sizes)


def shown_seats(shown: str, players: int) -> tuple[int, ...]:
    """The opponents' seats (after the searcher's) named by ``--shown``."""
    seats = SHOWN[shown]
    return tuple(range(1, players)) if seats is None else tuple(seat % players for seat in seats)


def expert_search(spec: str, players: int, seed: int | None = None) -> ExpertAgent:
    """The expert of ``spec``; any other agent is refused (``ValueError``)."""
    agent = load(spec, num_players=players, seed=seed)
    if not isinstance(agent, ExpertAgent):
        raise ValueError(f"--spec {spec!r} is not a search; allowed: expert[:options]")
    return agent


def won_by(search: ExpertAgent, seat: int, greedy: Agent, deal_seed: int, players: int) -> bool:
    """Whether ``search`` on ``seat`` wins the hand of ``deal_seed``, every other seat greedy."""

    def choose(state: State) -> int:
        player = state.current_player
        return (search if player == seat else greedy).act(StateObservation(state, player))

    state = State.new(players, seed=deal_seed)
    play_hand(state, choose, MAX_HAND_STEPS)
    return state.hand_over and state.winner == seat


def play_informed(spec: str, players: int, seed: int, deals: range, shown: str, track: bool) -> tuple[int, int]:
    """(hands won by the searcher, hands played) over every seating of ``deals``; the rest as :func:`main` says."""
    greedy = load("greedy", num_players=players)
    seats = shown_seats(shown, players)
    wins = hands = 0
    for deal in deals:
        deal_seed = derive_seed(seed, deal)
        for rotation in range(players):
            expert = expert_search(spec, players, agent_seed(deal_seed, rotation, 0))
            search = InformedSearch.from_expert(expert, seats)
            search.last_draws = search.last_draws or track
            seat = (players - rotation) % players  # where c8env eval seats lineup entry 0
            wins += won_by(search, seat, greedy, deal_seed, players)
            hands += 1
    return wins, hands


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m training.information", description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", default="expert", help="the search (an expert spec; default expert)")
    parser.add_argument("--players", type=int_between(2, 7), default=4, help="players at the table (default 4)")
    parser.add_argument("--deals", type=int_at_least(1), default=500, help="deals, each played from every seat")
    parser.add_argument("--seed", type=int, default=0, help="the deals' seed (as c8env eval --seed)")
    parser.add_argument("--shown", choices=list(SHOWN), default="none",
                        help="the opponents whose hands the search is told (default none)")
    parser.add_argument("--track-draws", action="store_true", help="read what each opponent's last draw showed (expert:last_draws=1)")
    parser.add_argument("--workers", type=int_at_least(1), default=1, help="processes (the same results for any)")
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        expert_search(args.spec, args.players)
    except ValueError as err:
        parser.fail(err)
    chunks = [range(start, min(start + _CHUNK, args.deals)) for start in range(0, args.deals, _CHUNK)]
    wins = hands = 0
    with ProcessPoolExecutor(args.workers) as executor, tqdm(total=args.deals, unit="deal") as bar:
        futures = {executor.submit(play_informed, args.spec, args.players, args.seed, chunk, args.shown,
                                   args.track_draws): len(chunk) for chunk in chunks}
        for future in as_completed(futures):
            won, played = future.result()
            wins, hands = wins + won, hands + played
            bar.update(futures[future])
    low, high = wilson_interval(wins, hands)
    told = f"shown {args.shown}" + (", draws tracked" if args.track_draws else "")
    print(f"{args.spec} ({told}) against {args.players - 1} greedy: {wins / hands:.1%} [{low:.1%}, {high:.1%}] of "
          f"{hands:,} hands ({args.deals:,} deals x {args.players} seats, seed {args.seed})")


if __name__ == "__main__":
    main()
