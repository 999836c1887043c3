"""What the hidden cards are worth to the search: ``expert`` against greedy players when it is shown some of
the other hands or how many cards of each suit they hold (a cheat's bound on what inference from play could
give), or what each opponent's draws and plays showed.

    python -m training.research.information --players 4 --deals 1000 --shown next
    python -m training.research.information --players 4 --deals 2000 --track-draws
    python -m training.research.information --players 4 --deals 2000 --track-draws --track-plays
    python -m training.research.information --players 4 --deals 2000 --track-draws --explain-moves 100
    python -m training.research.information --players 4 --deals 2000 --track-draws --explain-hand 100
    python -m training.research.information --players 4 --deals 2000 --track-draws --suit-counts

Each deal is played once per seat of the searcher, the other seats greedy, as ``c8env eval SPEC greedy ...``
plays it (the same deals and search seeds: with nothing shown or tracked the results are that command's). The
searcher's samples keep the true hands of the opponents it is shown; with ``--track-draws`` it also reads what
each opponent's last draw showed (``expert:last_draws=1``, the observation's ``opponent_last_draws``): greedy
draws only when nothing fits, so none of his cards has fitted what he then had to follow since, until he draws
again (the env's ``voids`` forget it at his next play). With ``--track-plays`` it also reads greedy's plays since
each opponent's last draw (:func:`ruled_out_by_play`: he holds none of the cards greedy would have played instead);
with ``--explain-moves TRIES`` each sample is a deal in which greedy would have made every move of each opponent since
his last draw (holding the sample's hand plus the cards he has played since; the first of up to TRIES deals, else the
one that explains the most: the exact posterior of those moves); with ``--explain-hand TRIES``
(``expert:explain_hand=TRIES``) every greedy move of the hand, each opponent's hand rebuilt backward through his plays and draws (seat by seat: up to TRIES deals, then up
to TRIES swaps of one card; an approximate posterior); with ``--suit-counts`` its samples give each opponent
his true number of cards of each suit (wild cards counted apart). It prints the win rate with its 95% Wilson interval (training/research/NOTES.md has the figures).
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor, as_completed

from tqdm import tqdm

from c8env.actions import DRAW, PASS
from c8env.agents import Agent, load
from c8env.agents.decision_view import view_from_state
from c8env.agents.greedy import greedy_action
from c8env.cards import ALL_CARDS_MASK, NUM_CARDS, NUM_RANKS, SUIT_MASKS, iter_bits
from c8env.engine import Phase, State
from c8env.episode import MAX_HAND_STEPS, play_watched
from c8env.observation import StateObservation
from c8env.seeding import derive_seed
from c8env.tools.argcheck import Parser, int_at_least, int_between
from c8env.tools.evaluation.deals import agent_seed
from c8env.tools.evaluation.stats import wilson_interval
from training.oracle import pin_hands
from training.research.expert import ResearchExpert, load_research

#: ``--shown``: the opponents whose hands the search is told, as seats after the searcher's (None: all of them).
SHOWN = {"none": (), "next": (1,), "previous": (-1,), "all": None}
_CHUNK = 25  # deals per task


def ruled_out_by_play(state: State, card: int) -> int:
    """The cards a greedy player to act in ``state`` does not hold if he plays ``card`` (bit set): those of its
    suit he could play and would have played first, or after a wild card every other card he could play that
    greedy would have played first (0 outside a plain turn). Greedy weighs a card of the suit played against
    ``card`` whatever else he holds, and any other card at its lowest, so the set holds for every hand."""
    if state.phase is not Phase.PLAY or state.pending:
        return 0
    view = view_from_state(state)
    wild = state.wild_mask(state.current_player)
    rivals = state.follow_mask() & ~wild & ~(1 << card)
    if not (wild >> card) & 1:
        rivals &= SUIT_MASKS[card // NUM_RANKS]
    out = 0
    for rival in iter_bits(rivals):
        pair = sorted((card, rival))
        if greedy_action(view._replace(legal=pair, hand_bits=(1 << card) | (1 << rival), hand_dups=0),
                         state.rules) == rival:
            out |= 1 << rival
    return out


def track_play(ruled_out: list[int], state: State, action: int) -> None:
    """Update ``ruled_out`` (per seat, what his plays since his last draw ruled out) with the greedy move ``action`` of
    the player to act in ``state``: a draw or pass clears his set, a card adds :func:`ruled_out_by_play`'s."""
    player = state.current_player
    if action in (DRAW, PASS):
        ruled_out[player] = 0
    elif action < NUM_CARDS:
        ruled_out[player] |= ruled_out_by_play(state, action)


class InformedSearch(ResearchExpert):
    """An ``expert`` whose samples keep the true hands of the opponents it is shown (seats after its own), and
    optionally every other opponent's true count of each suit (``suit_counts``) or the cards his plays since his
    last draw ruled out (``plays``, per seat after its own, kept up to date by :func:`won_by`)."""

    shown: tuple[int, ...]
    suit_counts: bool
    plays: dict[int, int]
    _hands: dict[int, int]
    _counts: dict[int, list[tuple[int, int]]]

    @classmethod
    def from_expert(cls, expert: ResearchExpert, shown: tuple[int, ...], suit_counts: bool = False) -> InformedSearch:
        """The informed search of ``expert`` (its options and generator)."""
        search = cls.__new__(cls)
        search.__dict__.update(expert.__dict__, shown=shown, suit_counts=suit_counts, plays={}, _counts={})
        return search

    def act(self, observation: StateObservation) -> int:
        """The search's move; it reads the hands (or suit counts) it is told from the state behind ``observation``."""
        state, seat = observation.state, observation.seat
        n = state.num_players
        self._hands = {k: state.held_cards((seat + k) % n)[0] for k in self.shown}
        if self.suit_counts:
            self._counts = {k: _suit_groups(state, (seat + k) % n) for k in range(1, n) if k not in self.shown}
        return super().act(observation)

    def _requirements(self, data: dict, sizes: list[int]) -> dict[int, list[tuple[int, int]]]:
        out = super()._requirements(data, sizes)
        for seat, ruled_out in self.plays.items():
            out[seat] = [(forbidden | ruled_out, count) for forbidden, count in out[seat]]
        for seat, groups in self._counts.items():
            always = 0  # what every one of his cards lies outside of
            for forbidden, count in out[seat]:
                if count >= sizes[seat - 1]:
                    always |= forbidden
            out[seat] = [(ALL_CARDS_MASK & ~group | always, count) for group, count in groups]
        return pin_hands(out, self._hands, sizes)


def _suit_groups(state: State, seat: int) -> list[tuple[int, int]]:
    """A seat's cards by group (wild cards, then each suit's others): (group, cards held in it and the groups
    before), the nested form of the search's constraints (each dealt only from its own group)."""
    held = state.held_cards(seat)
    wild = state.wild_mask(seat)
    groups, total = [], 0
    for group in (wild, *(mask & ~wild for mask in SUIT_MASKS)):
        total += (held[0] & group).bit_count() + (held[1] & group).bit_count()
        groups.append((group, total))
    return groups


def shown_seats(shown: str, players: int) -> tuple[int, ...]:
    """The opponents' seats (after the searcher's) named by ``--shown``."""
    seats = SHOWN[shown]
    return tuple(range(1, players)) if seats is None else tuple(seat % players for seat in seats)


def expert_search(spec: str, players: int, seed: int | None = None) -> ResearchExpert:
    """The expert of ``spec`` (research options allowed: :func:`training.research.expert.load_research`); any other
    agent is refused (``ValueError``)."""
    agent = load_research(spec, num_players=players, seed=seed)
    if not isinstance(agent, ResearchExpert):
        raise ValueError(f"--spec {spec!r} is not a search; allowed: expert[:options]")
    return agent


def track_move(moves: list[list[list]], state: State, action: int) -> None:
    """Update ``moves`` (per seat, his moves with a choice since his last draw: ``[position, move, cards played
    since]``) with the move ``action`` of the player to act in ``state``: a draw or pass clears his list."""
    player = state.current_player
    if action in (DRAW, PASS):
        moves[player] = []
        return
    if len(state.legal_actions()) > 1:
        moves[player].append([state.copy(), action, 0])
    if action < NUM_CARDS:
        for move in moves[player]:
            move[2] |= 1 << action


def won_by(search: ResearchExpert, seat: int, greedy: Agent, deal_seed: int, players: int,
           track_plays: bool = False, explain_tries: int = 0) -> bool:
    """Whether ``search`` on ``seat`` wins the hand of ``deal_seed``, every other seat greedy; with ``track_plays``
    the search (an :class:`InformedSearch`) is told what each greedy player's plays since his last draw ruled out;
    with ``explain_tries`` its samples must explain every greedy move since each player's last draw (up to that many
    deals per sample, :meth:`training.research.search_kernels.ResearchSearch.observe`). A search with
    ``explain_hand`` watches every move (:meth:`training.research.expert.ResearchExpert.watch`)."""
    ruled_out = [0] * players
    moves: list[list[list]] = [[] for _ in range(players)]

    def choose(state: State) -> int:
        player = state.current_player
        if player == seat:
            if track_plays:
                search.plays = {k: ruled_out[(seat + k) % players] for k in range(1, players)}
            if explain_tries:
                search.compiled_kernel().observe(
                    [(position, (actor - seat) % players, action, extra) for actor in range(players)
                     for position, action, extra in moves[actor]], explain_tries)
            return search.act(StateObservation(state, player))
        action = greedy.act(StateObservation(state, player))
        if track_plays:
            track_play(ruled_out, state, action)
        if explain_tries:
            track_move(moves, state, action)
        return action

    state = State.new(players, seed=deal_seed)
    play_watched(state, choose, [search], MAX_HAND_STEPS)
    return state.hand_over and state.winner == seat


def play_informed(spec: str, players: int, seed: int, deals: range, shown: str, track: bool, plays: bool = False,
                  suit_counts: bool = False, explain_tries: int = 0, hand_tries: int = 0) -> tuple[int, int]:
    """(hands won by the searcher, hands played) over every seating of ``deals``; the rest as :func:`main` says."""
    greedy = load("greedy", num_players=players)
    seats = shown_seats(shown, players)
    wins = hands = 0
    for deal in deals:
        deal_seed = derive_seed(seed, deal)
        for rotation in range(players):
            expert = expert_search(spec, players, agent_seed(deal_seed, rotation, 0))
            search = InformedSearch.from_expert(expert, seats, suit_counts)
            search.last_draws = search.last_draws or track
            search.explain_hand = search.explain_hand or hand_tries
            seat = (players - rotation) % players  # where c8env eval seats lineup entry 0
            wins += won_by(search, seat, greedy, deal_seed, players, plays, explain_tries)
            hands += 1
    return wins, hands


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m training.research.information", description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", default="expert", help="the search (an expert spec; default expert)")
    parser.add_argument("--players", type=int_between(2, 7), default=4, help="players at the table (default 4)")
    parser.add_argument("--deals", type=int_at_least(1), default=500, help="deals, each played from every seat")
    parser.add_argument("--seed", type=int, default=0, help="the deals' seed (as c8env eval --seed)")
    parser.add_argument("--shown", choices=list(SHOWN), default="none",
                        help="the opponents whose hands the search is told (default none)")
    parser.add_argument("--track-draws", action="store_true", help="read what each opponent's last draw showed (expert:last_draws=1)")
    parser.add_argument("--track-plays", action="store_true",
                        help="read what greedy's plays since each opponent's last draw ruled out")
    parser.add_argument("--suit-counts", action="store_true",
                        help="the samples give each opponent his true count of each suit (wild cards apart)")
    parser.add_argument("--explain-moves", type=int_at_least(0), default=0, metavar="TRIES",
                        help="each sample explains every greedy move since each opponent's last draw (up to TRIES "
                             "deals per sample; default 0: off)")
    parser.add_argument("--explain-hand", type=int_at_least(0), default=0, metavar="TRIES",
                        help="each sample explains every greedy move of the hand, each opponent's hand rebuilt through "
                             "his draws (up to TRIES deals per opponent; default 0: off)")
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
                                   args.track_draws, args.track_plays, args.suit_counts, args.explain_moves,
                                   args.explain_hand): len(chunk)
                   for chunk in chunks}
        for future in as_completed(futures):
            won, played = future.result()
            wins, hands = wins + won, hands + played
            bar.update(futures[future])
    low, high = wilson_interval(wins, hands)
    told = (f"shown {args.shown}" + (", draws tracked" if args.track_draws else "")
            + (", plays tracked" if args.track_plays else "") + (", suit counts told" if args.suit_counts else "")
            + (f", moves explained ({args.explain_moves} tries)" if args.explain_moves else "")
            + (f", the hand's moves explained ({args.explain_hand} tries)" if args.explain_hand else ""))
    print(f"{args.spec} ({told}) against {args.players - 1} greedy: {wins / hands:.1%} [{low:.1%}, {high:.1%}] of "
          f"{hands:,} hands ({args.deals:,} deals x {args.players} seats, seed {args.seed})")


if __name__ == "__main__":
    main()
