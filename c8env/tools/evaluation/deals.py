"""Playing duplicate deals: one hand at a time on the scalar engine, or many at once on the batched one.

Both give the same :class:`HandRecord` for every hand: deal ``d`` of seed ``s`` is
``State.new(..., seed=derive_seed(s, d))``, played once per rotation of the lineup through
the seats, and every agent's seed is :func:`agent_seed`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from c8env.actions import action_text
from c8env.agents import Agent, PolicyAgent, batch_mode, load
from c8env.agents.batched import EXTERNAL, GREEDY, RandomAgents, autoplay
from c8env.engine import State
from c8env.episode import MAX_HAND_STEPS, play_hand
from c8env.observation import StateObservation
from c8env.rules import RuleSet
from c8env.seeding import derive_seed
from c8env.vector import VectorGames, derive_seeds

#: Deals per task of the scalar engine's worker processes. A hand still running after MAX_HAND_STEPS moves is
#: cut off on both engines: no winner, counted as ``truncated`` in the table.
CHUNK = 25
ENGINES = ("auto", "scalar", "batched")
#: Hands the batched engine plays at once.
BATCH = 1024


class AgentError(ValueError):
    """An agent returned an action that is not legal."""


@dataclass
class HandRecord:
    """One hand: which lineup index sat in each seat, and what happened."""

    deal: int
    rotation: int
    seats: list[int]  # seats[seat] = lineup index
    winner: int | None  # lineup index of the winner
    transfers: list[int]  # per lineup index
    steps: int
    truncated: bool


def play_deal(agents: Sequence[Agent], names: Sequence[str], rules: RuleSet, num_players: int, deal_seed: int,
              seats: Sequence[int], max_steps: int = MAX_HAND_STEPS) -> tuple[State, int]:
    """Play one hand from a seeded deal; ``seats[seat]`` is the index into ``agents``. Returns the final
    state and the number of steps. An illegal action raises :class:`AgentError` naming agent and move."""

    def choose(state: State) -> int:
        seat = state.current_player
        index = seats[seat]
        action = agents[index].act(StateObservation(state, seat))
        legal = state.legal_actions()
        if action not in legal:
            raise AgentError(
                f"agent {names[index]!r} (seat {seat}) chose {action!r} ({action_text(action) if isinstance(action, int) else '?'}), "
                f"which is illegal; legal: {', '.join(f'{a} ({action_text(a)})' for a in legal)}"
            )
        return action

    state = State.new(num_players, rules, seed=deal_seed)
    return state, play_hand(state, choose, max_steps)


def play_deals(specs: Sequence[str], rules: RuleSet, num_players: int, seed: int,
               deals: Sequence[int]) -> list[HandRecord]:
    """Play every rotation of some deals (one worker's share)."""
    lineup = len(specs)
    base = [seat % lineup for seat in range(num_players)]
    policies: dict[str, PolicyAgent] = {}
    records = []
    for deal in deals:
        deal_seed = derive_seed(seed, deal)
        for rotation in range(num_players):
            seats = [base[(seat + rotation) % num_players] for seat in range(num_players)]
            agents = [policies.get(spec) or load(spec, rules=rules, num_players=num_players,
                                                 seed=agent_seed(deal_seed, rotation, i))
                      for i, spec in enumerate(specs)]
            policies.update((spec, agent) for spec, agent in zip(specs, agents, strict=True)
                            if isinstance(agent, PolicyAgent))  # deterministic: load each file once
            state, steps = play_deal(agents, specs, rules, num_players, deal_seed, seats, MAX_HAND_STEPS)
            transfers = [0] * lineup
            truncated = not state.hand_over
            if not truncated:
                for seat, value in enumerate(state.hand_transfers()):
                    transfers[seats[seat]] += value
            winner = None if truncated or state.winner is None else seats[state.winner]
            records.append(HandRecord(deal, rotation, list(seats), winner, transfers, steps, truncated))
    return records


def agent_seed(deal_seed: int, rotation: int, index: int) -> int:
    """The seed of lineup entry ``index``'s agent in one rotation of a deal (both engines)."""
    return derive_seed(deal_seed, 1000 * rotation + index)


def play_deals_batched(agents: Sequence[Agent], rules: RuleSet, num_players: int, seed: int, deals: int,
                       update: Callable[[int], None]) -> list[HandRecord]:
    """Every rotation of deals ``0..deals-1`` on the batched engine; the same records as :func:`play_deals`.

    ``agents``: one loaded agent per lineup entry, each with a :func:`c8env.agents.batch_mode`: ``random`` and
    ``greedy`` agents play as compiled kernels (a random agent seeded per hand as on the scalar engine), the
    others through their ``act_batch``; ``update`` is told of each deal whose rotations have all been played."""
    n, lineup = num_players, len(agents)
    kinds = [batch_mode(agent) for agent in agents]
    base = [seat % lineup for seat in range(n)]
    seating = np.array([[base[(seat + rotation) % n] for seat in range(n)] for rotation in range(n)])
    total = deals * n  # hand h: deal h // n, rotation h % n
    hand_deal, hand_rotation = np.arange(total) // n, np.arange(total) % n
    deal_seeds = derive_seeds(np.full(deals, seed, dtype=np.uint64), np.arange(deals, dtype=np.uint64))
    hand_seeds = deal_seeds[hand_deal]
    random_indices = [i for i, kind in enumerate(kinds) if kind == "random"]
    agent_seeds = [derive_seeds(hand_seeds, (1000 * hand_rotation + i).astype(np.uint64))  # as agent_seed
                   for i in random_indices]
    codes = np.array([GREEDY if kind == "greedy" else EXTERNAL for kind in kinds])
    codes[random_indices] = np.arange(len(random_indices))
    size = min(BATCH, total)
    games = VectorGames(size, n, rules, reward="points", max_steps=MAX_HAND_STEPS, autoreset=False,
                        observations="act_batch" in kinds)
    randoms = [RandomAgents(np.zeros(size, dtype=np.uint64)) for _ in random_indices]
    slot_hand = np.full(size, -1)
    seats_of_slot = np.zeros((size, n), dtype=np.int64)
    winner_seat, steps, truncated_at = (np.zeros(total, dtype=np.int64) for _ in range(3))
    transfers_at = np.zeros((total, n), dtype=np.int64)  # per seat
    left = np.full(deals, n)  # hands of each deal still to finish
    started = 0

    def deal_into(slots: np.ndarray) -> None:
        nonlocal started
        slots = slots & (np.cumsum(slots) <= total - started)  # fewer hands left than free slots
        hands = np.arange(started, started + int(slots.sum()))
        started += len(hands)
        slot_hand[slots] = hands
        seats_of_slot[slots] = seating[hand_rotation[hands]]
        seeds = np.zeros(size, dtype=np.uint64)
        seeds[slots] = hand_seeds[hands]
        games.reset_deals(seeds, slots)
        for agent, chosen in zip(randoms, agent_seeds, strict=True):
            seeds[slots] = chosen[hands]
            agent.reseed(seeds, slots)

    def settle(rewards: np.ndarray, terminated: np.ndarray, truncated: np.ndarray) -> None:
        ended = terminated | truncated
        if not ended.any():
            return
        hands = slot_hand[ended]
        winner_seat[hands] = games.games.winner[ended]
        steps[hands] = games.games.hand_steps[ended]
        truncated_at[hands] = truncated[ended]
        transfers_at[hands] = rewards[ended]
        np.subtract.at(left, hand_deal[hands], 1)
        touched = np.unique(hand_deal[hands])
        completed = int((left[touched] == 0).sum())
        if completed:
            update(completed)
        slot_hand[ended] = -1
        if started < total:
            deal_into(ended)

    deal_into(np.ones(size, dtype=bool))
    actions = np.zeros(size, dtype=np.int64)
    while (slot_hand >= 0).any():
        settle(*autoplay(games, codes[seats_of_slot], randoms, slot_hand >= 0))  # random and greedy moves
        waiting = slot_hand >= 0  # and a policy to act (the hands just dealt are played first)
        waiting &= codes[seats_of_slot[np.arange(size), games.current_player]] == EXTERNAL
        if not waiting.any():
            continue
        acting = seats_of_slot[np.arange(size), games.current_player]
        for i, agent in enumerate(agents):
            turn = waiting & (acting == i)
            if turn.any():
                actions[turn] = agent.act_batch(games.observation[turn], games.action_mask[turn])
        settle(*games.step(actions, waiting))
    records = []
    for hand, (winner, count, cut, paid) in enumerate(zip(winner_seat.tolist(), steps.tolist(),
                                                          truncated_at.tolist(), transfers_at.tolist(), strict=True)):
        seats = seating[hand % n].tolist()
        transfers = [0] * lineup
        if not cut:
            for seat, value in enumerate(paid):
                transfers[seats[seat]] += value
        records.append(HandRecord(hand // n, hand % n, seats, None if cut or winner < 0 else seats[winner], transfers,
                                  count, bool(cut)))
    return records


__all__ = ["BATCH", "CHUNK", "ENGINES", "AgentError", "HandRecord", "agent_seed", "play_deal", "play_deals",
           "play_deals_batched"]
