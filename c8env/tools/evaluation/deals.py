"""Playing duplicate deals: one hand at a time on the scalar engine, or many at once on the batched one.

Both give the same :class:`HandRecord` for every hand: deal ``d`` of seed ``s`` is
``State.new(..., seed=derive_seed(s, d))``, played once per rotation of the lineup through
the seats, and every agent's seed is :func:`agent_seed`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from c8env.actions import NUM_ACTIONS, action_text
from c8env.agents import Agent, batch_mode, is_own, load, observation_for, shipped_policies
from c8env.agents.batched import EXTERNAL, GREEDY, RandomAgents, autoplay
from c8env.engine import State
from c8env.episode import MAX_HAND_STEPS, play_watched
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
    """An agent failed: it raised, or its ``act_batch`` answered something that is not one action per row."""


class IllegalMove(AgentError):
    """An agent answered an illegal move; the message names the agent, its seat and the move (one line);
    ``index``: the agent's lineup index, ``steps``: the moves made before it. Evaluation counts it as that
    agent's loss and goes on."""

    def __init__(self, message: str, index: int, steps: int) -> None:
        super().__init__(message)
        self.index, self.steps = index, steps


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
    forfeit: int | None = None  # lineup index whose illegal move ended the hand (a loss for it, no winner)
    message: str = ""  # what the illegal move was


def illegal_message(name: str, seat: int, action: object, legal: Sequence[int]) -> str:
    """One line naming the agent, its seat, the move and the legal moves."""
    shown = f"{action} ({action_text(action)})" if isinstance(action, int) and 0 <= action < NUM_ACTIONS \
        else f"{action!r} (not an action id)"
    return (f"agent {name!r} (seat {seat}) chose {shown}, which is illegal; legal: "
            + ", ".join(f"{a} ({action_text(a)})" for a in legal))


def as_action(action: object) -> object:
    """An integer answer as a Python int (NumPy integers included); anything else unchanged (then illegal)."""
    return int(action) if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)) \
        else action


def play_deal(agents: Sequence[Agent], names: Sequence[str], rules: RuleSet, num_players: int, deal_seed: int,
              seats: Sequence[int], max_steps: int = MAX_HAND_STEPS) -> tuple[State, int]:
    """Play one hand from a seeded deal; ``seats[seat]`` is the index into ``agents``, each shown what
    :func:`c8env.agents.observation_for` gives it, and one of c8env's own agents that is ``watching`` every move
    (:func:`c8env.episode.play_watched`: the states, which another agent is never shown). Returns the final state
    and the number of steps. An illegal move raises :class:`IllegalMove` (with the lineup ``index``), an agent
    that raises :class:`AgentError`, each naming the agent."""

    moves = 0

    def choose(state: State) -> int:
        nonlocal moves
        seat = state.current_player
        index = seats[seat]
        agent = agents[index]
        try:
            action = as_action(agent.act(observation_for(agent, state, seat)))
        except Exception as err:
            raise AgentError(f"agent {names[index]!r} (seat {seat}) raised {type(err).__name__}: {err}") from err
        legal = state.legal_actions()
        if action not in legal:
            raise IllegalMove(illegal_message(names[index], seat, action, legal), index, moves)
        moves += 1
        return action  # type: ignore[return-value]

    state = State.new(num_players, rules, seed=deal_seed)
    return state, play_watched(state, choose, [agent for agent in agents if is_own(agent)], max_steps)


def play_deals(entries: Sequence[object], names: Sequence[str], rules: RuleSet, num_players: int, seed: int,
               deals: Sequence[int]) -> list[HandRecord]:
    """Play every rotation of some deals (one worker's share). ``entries``: a spec, agent object or factory per
    lineup index (:func:`c8env.agents.load`: a factory is called, a spec loaded, for every hand with that hand's
    seed; a policy file is loaded once)."""
    lineup = len(entries)
    base = [seat % lineup for seat in range(num_players)]
    policies: dict[int, Agent] = {}
    files = {i for i, entry in enumerate(entries) if isinstance(entry, (str, Path))
             and (str(entry).endswith((".npz", ".onnx", ".zip")) or entry in shipped_policies())}
    records = []
    for deal in deals:
        deal_seed = derive_seed(seed, deal)
        for rotation in range(num_players):
            seats = [base[(seat + rotation) % num_players] for seat in range(num_players)]
            agents = [policies.get(i) or load(entry, rules=rules, num_players=num_players,
                                              seed=agent_seed(deal_seed, rotation, i))
                      for i, entry in enumerate(entries)]
            policies.update((i, agent) for i, agent in enumerate(agents) if i in files)  # deterministic: load once
            transfers = [0] * lineup
            try:
                state, steps = play_deal(agents, names, rules, num_players, deal_seed, seats, MAX_HAND_STEPS)
            except IllegalMove as err:
                records.append(HandRecord(deal, rotation, list(seats), None, transfers, err.steps, False, err.index,
                                          str(err)))
                continue
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
                       update: Callable[[int], None], names: Sequence[str] | None = None) -> list[HandRecord]:
    """Every rotation of deals ``0..deals-1`` on the batched engine; the same records as :func:`play_deals`.

    ``agents``: one loaded agent per lineup entry, each with a :func:`c8env.agents.batch_mode`: ``random`` and
    ``greedy`` agents play as compiled kernels (a random agent seeded per hand as on the scalar engine), the
    others through their ``act_batch`` (fresh arrays of their rows only); ``update`` is told of each deal whose
    rotations have all been played; ``names`` word the illegal moves (default: the agents' class names)."""
    n, lineup = num_players, len(agents)
    names = list(names) if names is not None else [type(agent).__name__ for agent in agents]
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
    forfeit_at = np.full(total, -1)
    messages: dict[int, str] = {}
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

    def finish(ended: np.ndarray) -> None:
        """The hands in these slots are recorded: count them, deal the next ones."""
        hands = slot_hand[ended]
        np.subtract.at(left, hand_deal[hands], 1)
        touched = np.unique(hand_deal[hands])
        completed = int((left[touched] == 0).sum())
        if completed:
            update(completed)
        slot_hand[ended] = -1
        if started < total:
            deal_into(ended)

    def settle(rewards: np.ndarray, terminated: np.ndarray, truncated: np.ndarray) -> None:
        ended = terminated | truncated
        if ended.any():
            hands = slot_hand[ended]
            winner_seat[hands] = games.games.winner[ended]
            steps[hands] = games.games.hand_steps[ended]
            truncated_at[hands] = truncated[ended]
            transfers_at[hands] = rewards[ended]
            finish(ended)

    def answers(index: int, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Agent ``index``'s moves on these slots and whether each is legal; the hands it answered illegally
        are forfeited (recorded, their slots dealt anew)."""
        masks = games.action_mask[rows]
        try:
            chosen = agents[index].act_batch(games.observation[rows], masks.copy())
        except Exception as err:
            raise AgentError(f"agent {names[index]!r} raised {type(err).__name__} in act_batch: {err}") from err
        chosen = np.asarray(chosen)
        if chosen.shape != (len(rows),) or not np.issubdtype(chosen.dtype, np.integer):
            raise AgentError(f"agent {names[index]!r}: act_batch answered {chosen.dtype}{list(chosen.shape)} for "
                             f"{len(rows)} observations; allowed: one integer action per row")
        inside = (chosen >= 0) & (chosen < NUM_ACTIONS)
        legal = inside & (masks[np.arange(len(rows)), np.where(inside, chosen, 0)] == 1)
        if not legal.all():
            ended = np.zeros(size, dtype=bool)
            ended[rows[~legal]] = True
            for row, action in zip(rows[~legal].tolist(), chosen[~legal].tolist(), strict=True):
                hand = int(slot_hand[row])
                seat = int(games.current_player[row])
                forfeit_at[hand] = index
                messages[hand] = illegal_message(names[index], seat, action, np.flatnonzero(games.action_mask[row]).tolist())
            hands = slot_hand[ended]
            winner_seat[hands] = -1
            steps[hands] = games.games.hand_steps[ended]
            finish(ended)
        return chosen, legal

    deal_into(np.ones(size, dtype=bool))
    actions = np.zeros(size, dtype=np.int64)
    while (slot_hand >= 0).any():
        settle(*autoplay(games, codes[seats_of_slot], randoms, slot_hand >= 0))  # random and greedy moves
        waiting = slot_hand >= 0  # and a policy to act (the hands just dealt are played first)
        waiting &= codes[seats_of_slot[np.arange(size), games.current_player]] == EXTERNAL
        if not waiting.any():
            continue
        acting = seats_of_slot[np.arange(size), games.current_player]
        for i in range(lineup):
            rows = np.flatnonzero(waiting & (acting == i))
            if len(rows):
                chosen, legal = answers(i, rows)
                actions[rows] = np.where(legal, chosen, 0)
                waiting[rows[~legal]] = False
        settle(*games.step(actions, waiting))
    records = []
    for hand, (winner, count, cut, paid) in enumerate(zip(winner_seat.tolist(), steps.tolist(),
                                                          truncated_at.tolist(), transfers_at.tolist(), strict=True)):
        seats = seating[hand % n].tolist()
        transfers = [0] * lineup
        if not cut:
            for seat, value in enumerate(paid):
                transfers[seats[seat]] += value
        forfeit = int(forfeit_at[hand])
        records.append(HandRecord(hand // n, hand % n, seats, None if cut or winner < 0 else seats[winner], transfers,
                                  count, bool(cut), None if forfeit < 0 else forfeit, messages.get(hand, "")))
    return records


__all__ = ["BATCH", "CHUNK", "ENGINES", "AgentError", "HandRecord", "IllegalMove", "illegal_message", "agent_seed", "play_deal", "play_deals",
           "play_deals_batched"]
