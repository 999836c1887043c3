"""``expert``: a determinized Monte Carlo search agent that sees only its observation.

For each decision it samples the hidden cards (other hands, the stock) consistently
with the public information in its observation -- its own hand, the discard pile,
every hand's size, and the suits each opponent drew or passed on since his last
play (a greedy opponent holds no card of those suits, wild cards aside) -- then
plays every candidate action out to the hand's end with the greedy policy for all
players, on the same samples for every candidate (common random numbers), and picks
the candidate with the best mean result.

Budget: ``simulations`` samples per decision, or ``time_ms`` per decision (whichever
is given; both cap the search). Voluntary draws are pruned while a non-wild card
can be played, the main blunder of naive Monte Carlo on noisy estimates.

Guided by a trained network (``expert:policy=NAME``): only the network's ``top`` favourite
candidates are searched (the same samples, fewer rollouts), and ``prior`` times its
log-probability of each can be added to the mean results; with ``confident=P`` the network's favourite is
played without a search where it gives it probability P or more (the budget kept for the doubtful
decisions). Guided by a clone of the search (``expert:policy=NAME,prior=0.05``) it beats the plain expert in a
little less time per move (training/research/NOTES.md has the figures).
With ``rollouts=policy`` the network also plays the searcher's own moves in the rollouts
(its first ``POLICY_ROLLOUT_STEPS`` moves; the other players stay greedy, the model its
inference assumes), so a move is judged by how the network would go on (training/research/NOTES.md);
``rollouts=NAME`` has another network play them (a small one is fast enough to roll out with).

The research options (inference from play, samples that explain the moves seen, the recordings' hooks) are
:class:`training.research.expert.ResearchExpert`'s, a subclass beside the product.

Where numba is installed the samples and rollouts run compiled
(:mod:`c8env.agents.search_compiled`): the same decisions, many times faster.
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

import numpy as np

from c8env.actions import ANNOUNCE, DRAW
from c8env.agents.decision_view import view_from_state
from c8env.agents.greedy import greedy_action
from c8env.agents.policy import PolicyAgent
from c8env.cards import NUM_CARDS, NUM_SUITS, RANKS, SUIT_MASKS, SUITS, card_text
from c8env.engine import (
    ANY_SUIT,
    COUNTDOWN_START,
    PHASE_NAMES,
    Phase,
    State,
    declaration_data,
    draw_record_data,
    suit_draws_data,
    wild_mask_for,
)
from c8env.episode import MAX_HAND_STEPS, POLICY_ROLLOUT_STEPS, hand_rewards, play_hand
from c8env.observation import StateObservation, check_observation, decode_observation
from c8env.rules import RuleSet


def public_position(observation: dict, rules: RuleSet) -> tuple[dict, list[int], list[int]]:
    """The observer's position as a state dict with the observer at seat 0 and the other hands
    empty, the card ids nobody has seen, and the opponents' hand sizes (seats 1..n-1)."""
    seen = decode_observation(observation["observation"])
    n = seen.num_players
    decks = rules.num_decks(n)
    hand_counts, discard_counts, top = seen.hand, seen.discard_pile, seen.top_card
    discard = [c for c in range(NUM_CARDS) for _ in range(discard_counts[c] - (c == top))] + [top]
    unseen = [c for c in range(NUM_CARDS) for _ in range(decks - hand_counts[c] - discard_counts[c])]
    sizes = seen.opponent_sizes
    countdown = seen.countdown if rules.countdown else [COUNTDOWN_START] * n
    data = {
        "num_players": n,
        "hands": [[card_text(c) for c in range(NUM_CARDS) for _ in range(hand_counts[c])]] + [[] for _ in sizes],
        "stock": [],
        "discard": [card_text(c) for c in discard],
        "current_player": 0,
        "suit_to_follow": "*" if seen.suit == ANY_SUIT else SUITS[seen.suit],
        "rank_to_follow": RANKS[seen.rank] if seen.rank >= 0 else None,
        "direction": seen.direction,
        "phase": PHASE_NAMES[seen.phase],
        "pending_draw": seen.pending_draw,
        "draws_this_turn": seen.draws_this_turn,
        "scores": seen.scores,
        # unobserved: the fewest hands that give these totals and counts (a later hand of a match has some)
        "hands_played": max(int(any(seen.scores)), sum(COUNTDOWN_START - count for count in countdown)),
        "countdown": countdown,
        "voids": [[]] + [[SUITS[s] for s in range(NUM_SUITS) if (voids >> s) & 1] for voids in seen.opponent_voids],
        "last_draws": [None] + [draw_record_data(record) for record in seen.opponent_last_draws],
        "suit_draws": [{}] + [suit_draws_data(record) for record in seen.opponent_suit_draws],
        "declared": [None] + [declaration_data(record) for record in seen.opponent_declared],
    }
    return data, unseen, sizes


def _check_compiled(compiled: bool | None) -> bool:
    from c8env.vector.jit import COMPILED

    if compiled is None:
        return COMPILED
    if not isinstance(compiled, bool):
        raise ValueError(f"expert compiled={compiled!r} is invalid; allowed: None, True or False")
    if compiled and not COMPILED:
        raise ValueError("expert compiled=True needs numba (pip install c8env[fast]) with NUMBA_DISABLE_JIT unset")
    return compiled


class _AfterMove(NamedTuple):
    """What the expert remembers of its own last decision (2 players)."""

    kept: int  # bit set of the cards it kept in hand
    scores: tuple[int, ...]
    opponent_to_move: bool  # the move ended its turn and the opponent plays next, owing no penalty
    follow: int  # bit set of the cards the opponent could then play (wild cards included)
    top: int
    opponent_size: int


class ExpertAgent:
    """Determinized Monte Carlo search with greedy rollouts (see the module docstring)."""

    def __init__(self, rules: RuleSet, num_players: int, simulations: int = 100, time_ms: float | None = None,
                 seed: int | None = None, reward: str = "win", compiled: bool | None = None,
                 policy: PolicyAgent | None = None, top: int = 3, prior: float = 0.0,
                 rollouts: str | PolicyAgent = "greedy", confident: float | None = None) -> None:
        """``compiled``: run the search with the compiled kernels (None: whenever numba is available;
        True where it is not raises ``ValueError``). Both loops make the same decisions.

        ``policy``: a trained network that guides the search (see :meth:`_guide`): only its ``top``
        candidates are searched, and the choice maximises the mean result plus ``prior`` times the
        network's log-probability of the move (renormalised over those candidates); ``confident``: where the
        network gives its favourite candidate this probability or more (softmax over the candidates), it is
        played without a search (None: every decision with a choice is searched). ``rollouts``:
        ``"greedy"`` (everyone plays greedy in the rollouts), ``"policy"`` (the network ``policy`` plays the
        searcher's moves) or a :class:`PolicyAgent` that plays them (a small, fast one beside a big guide)."""
        if not isinstance(simulations, int) or simulations < 1:
            raise ValueError(f"expert simulations={simulations!r} is invalid; allowed: an int >= 1")
        if time_ms is not None and not time_ms > 0:
            raise ValueError(f"expert time_ms={time_ms!r} is invalid; allowed: None or a number > 0")
        if reward not in ("win", "points"):
            raise ValueError(f"expert reward={reward!r} is invalid; allowed: 'win' or 'points'")
        if policy is not None and not isinstance(policy, PolicyAgent):
            raise ValueError(f"expert policy={policy!r} is invalid; allowed: None or a PolicyAgent")
        if not isinstance(top, int) or isinstance(top, bool) or top < 1:
            raise ValueError(f"expert top={top!r} is invalid; allowed: an int >= 1")
        if not (isinstance(prior, (int, float)) and prior >= 0):
            raise ValueError(f"expert prior={prior!r} is invalid; allowed: a number >= 0")
        if confident is not None:
            if policy is None:
                raise ValueError("expert confident= plays the guide's favourite unsearched; give policy=<name or .npz "
                                 "path>")
            if isinstance(confident, bool) or not (isinstance(confident, (int, float)) and 0 < confident <= 1):
                raise ValueError(f"expert confident={confident!r} is invalid; allowed: None or a number in (0, 1]")
        if not isinstance(rollouts, PolicyAgent) and rollouts not in ("greedy", "policy"):
            raise ValueError(f"expert rollouts={rollouts!r} is invalid; allowed: 'greedy', 'policy' or a "
                             "PolicyAgent")
        if rollouts == "policy" and policy is None:
            raise ValueError("expert rollouts='policy' plays a network in the rollouts; give policy=<name or .npz path>")
        self.rules = rules
        self.num_players = num_players
        self.simulations = simulations
        self.time_ms = time_ms
        self.reward = reward
        self.policy = policy
        self.top = top
        self.prior = float(prior)
        self.confident = None if confident is None else float(confident)
        self.rollouts = rollouts
        #: The network that plays the searcher's moves in the rollouts (None: greedy does).
        self.rollout_policy = (policy if rollouts == "policy"
                               else rollouts if isinstance(rollouts, PolicyAgent) else None)
        if self.rollout_policy is not None:
            self.rollout_policy.single_network("expert rollouts")  # the compiled kernels play one MLP
        self.rng = np.random.default_rng(seed)
        self.compiled = _check_compiled(compiled)
        self._kernel: Any = None  # the compiled search, built at the first search
        self._last: _AfterMove | None = None
        self._known: tuple[int, int] | None = None  # (cards the opponent cannot hold, how many of his cards)
        self.last_search: tuple[list[int], np.ndarray] | None = None
        """The last decision's searched candidates and their mean rollout results (None: it had one candidate)."""

    def act(self, observation: dict) -> int:
        check_observation(observation, "ExpertAgent")
        legal = np.flatnonzero(observation["action_mask"]).tolist()
        if not legal:
            raise ValueError("ExpertAgent.act: the action mask has no legal action (not this agent's turn?)")
        self.last_search = None
        if ANNOUNCE in legal:
            return ANNOUNCE
        data, unseen, sizes = public_position(observation, self.rules)
        requirements = self._requirements(data, sizes)
        first = self._deal_hidden(unseen, sizes, requirements)
        data["hands"][1:] = [[card_text(c) for c in first[seat]] for seat in range(1, len(sizes) + 1)]
        data["stock"] = [card_text(c) for c in first["stock"]]
        public = State.from_dict(data, rules=self.rules, seed=int(self.rng.integers(2**63)))
        if self.num_players == 2:
            self._infer(public)
        candidates = self._candidates(public, legal)
        bonus = np.zeros(len(candidates))
        if self.policy is not None and len(candidates) > 1:
            candidates, bonus, favourite = self._guide(observation, candidates)
            if self.confident is not None and favourite >= self.confident:
                candidates = candidates[:1]
        if len(candidates) == 1:
            action = candidates[0]
        else:
            action = self._search(public, unseen, sizes, requirements, candidates, bonus)
        if self.num_players == 2:
            self._remember(public, action)
        return action

    def _guide(self, observation: dict, candidates: list[int]) -> tuple[list[int], np.ndarray, float]:
        """The policy network's ``top`` candidates, best first, their bonus (``prior`` times the
        log-probability of each, softmax over those candidates) and the favourite's probability (softmax
        over all the candidates)."""
        logits = self.policy.logits(np.asarray(observation["observation"], dtype=np.float32))[candidates]
        order = np.argsort(-logits, kind="stable")
        shifted = logits[order].astype(np.float64) - float(logits[order[0]])  # best first, the best at 0
        weights = np.exp(shifted)
        log_probs = shifted[:self.top] - np.log(weights[:self.top].sum())
        return [candidates[i] for i in order[:self.top]], self.prior * log_probs, float(1 / weights.sum())

    def _search(self, public: State, unseen: list[int], sizes: list[int], requirements: dict,
                candidates: list[int], bonus: np.ndarray) -> int:
        """The candidate with the best mean rollout result plus ``bonus`` (zero without a policy)."""
        totals = np.zeros(len(candidates))
        deadline = None if self.time_ms is None else time.perf_counter() + self.time_ms / 1000
        if self.compiled:
            samples = self._compiled_search(public, unseen, sizes, requirements, candidates, totals, deadline)
        else:
            samples = self._python_search(public, unseen, sizes, requirements, candidates, totals, deadline)
        means = totals / samples
        self.last_search = (candidates, means)
        return candidates[int(np.argmax(means + bonus))]

    def _python_search(self, public: State, unseen: list[int], sizes: list[int], requirements: dict,
                       candidates: list[int], totals: np.ndarray, deadline: float | None) -> int:
        """The search loop without numba; the number of samples taken."""
        samples = 0
        for sample in range(self.simulations):
            if sample == 0:
                world = public
            else:
                dealt = self._deal_hidden(unseen, sizes, requirements)
                world = public.with_hidden_cards({s: dealt[s] for s in range(1, len(sizes) + 1)}, dealt["stock"])
            for i, action in enumerate(candidates):
                totals[i] += self._rollout(world, action)
            samples += 1
            if deadline is not None and time.perf_counter() > deadline:
                break
        return samples

    def compiled_kernel(self) -> Any:
        """The :class:`c8env.agents.search_compiled.CompiledSearch` that runs this search, built at the first call."""
        if self._kernel is None:
            from c8env.agents.search_compiled import CompiledSearch

            self._kernel = CompiledSearch(self.rules, self.num_players, self.reward, self.rollout_network())
        return self._kernel

    def rollout_network(self) -> tuple[Any, str] | None:
        """The layers and activation name of :attr:`rollout_policy` for the compiled kernels (None: greedy plays the
        rollouts)."""
        rolling = self.rollout_policy
        return None if rolling is None else (rolling.layers, rolling.meta["activation"])

    def _compiled_search(self, public: State, unseen: list[int], sizes: list[int], requirements: dict,
                         candidates: list[int], totals: np.ndarray, deadline: float | None) -> float:
        """The loop of :meth:`_search`, run by :class:`c8env.agents.search_compiled.CompiledSearch` (one call, or one
        call per sample under a time budget); the summed weights of the samples taken (their number: 1 each)."""
        kernel = self.compiled_kernel()
        hidden = kernel.hidden(unseen, sizes, requirements)
        mass = np.zeros(1)
        if deadline is None:
            kernel.run(public, hidden, candidates, 0, self.simulations, self.rng, totals, mass)
            return float(mass[0])
        for sample in range(self.simulations):
            kernel.run(public, hidden, candidates, sample, sample + 1, self.rng, totals, mass)
            if time.perf_counter() > deadline:
                break
        return float(mass[0])

    # ----- inference from the opponent's draws (2 players) ------------------------------------------
    def _remember(self, public: State, action: int) -> None:
        after = public.copy()
        after.apply(action)
        held = public.held_cards(0)[0]
        kept = held & ~(1 << action) if action < NUM_CARDS else held
        to_move = after.phase is Phase.PLAY and after.current_player == 1 and not after.pending
        follow = (after.follow_mask() | after.wild_mask(1)) if to_move else 0
        self._last = _AfterMove(kept, tuple(public.scores), to_move, follow, after.discard[-1], after.sizes[1])
        if after.hand_over:
            self._last, self._known = None, None

    def _infer(self, public: State) -> None:
        """A greedy opponent draws only when nothing fits and then plays the card that fits: after he
        drew (or passed), none of his cards fits what he had to follow."""
        last = self._last
        if last is None:
            return
        if last.kept & ~public.held_cards(0)[0] or tuple(public.scores) != last.scores:  # a new hand
            self._last, self._known = None, None
            return
        if not last.opponent_to_move:
            return
        played = public.discard[-1] != last.top
        drew = public.sizes[1] - last.opponent_size + played
        if drew >= 1 or not played:
            self._known = (last.follow, public.sizes[1])
        elif self._known is not None:
            self._known = (self._known[0], min(self._known[1], public.sizes[1]))

    def _requirements(self, data: dict, sizes: list[int]) -> dict[int, list[tuple[int, int]]]:
        """Per opponent seat: (cards he cannot hold, how many of his cards) constraints, strictest first."""
        out: dict[int, list[tuple[int, int]]] = {}
        for seat in range(1, len(sizes) + 1):
            wild = wild_mask_for(self.rules, data["countdown"][seat])
            void = 0
            for suit in data["voids"][seat]:
                void |= SUIT_MASKS[SUITS.index(suit)]
            void &= ~wild
            rules = [(void, sizes[seat - 1])]
            if seat == 1 and self._known is not None and self.num_players == 2:
                rules.insert(0, (self._known[0] | void, min(self._known[1], sizes[0])))
            out[seat] = rules
        return out

    def _candidates(self, public: State, legal: list[int]) -> list[int]:
        """Legal actions worth searching: no voluntary draw while a non-wild card fits."""
        wild = public.wild_mask(0)
        if DRAW in legal and not public.pending and any(a < NUM_CARDS and not (wild >> a) & 1 for a in legal):
            return [a for a in legal if a != DRAW]
        return legal

    def _deal_hidden(self, unseen: list[int], sizes: list[int], requirements: dict) -> dict:
        """Deal the unseen cards so that each opponent's constraints hold where possible;
        the rest, in random order, is the stock. Keys: seats 1..n-1 and "stock"."""
        pool = [unseen[i] for i in self.rng.permutation(len(unseen))]
        dealt: dict = {}
        for seat in range(1, len(sizes) + 1):
            take: list[int] = []
            for forbidden, count in requirements[seat]:
                want = min(count, sizes[seat - 1])
                rest = []
                for card in pool:
                    if len(take) < want and not (forbidden >> card) & 1:
                        take.append(card)
                    else:
                        rest.append(card)
                pool = rest
            while len(take) < sizes[seat - 1] and pool:
                take.append(pool.pop())
            dealt[seat] = take
        dealt["stock"] = pool
        return dealt

    def _rollout(self, world: State, action: int) -> float:
        """The observer's reward after ``action`` and greedy play by everyone to the hand's end, the
        observer's first moves :attr:`rollout_policy`'s if there is one (0 for a hand cut off unfinished)."""
        state = world.copy()
        state.apply(action)
        steps = 0 if self.rollout_policy is None else play_hand(state, self._policy_rollout_move, POLICY_ROLLOUT_STEPS)
        play_hand(state, self._rollout_move, MAX_HAND_STEPS - steps)
        return hand_rewards(state, self.reward)[0] if state.hand_over else 0.0

    def _rollout_move(self, state: State) -> int:
        legal = state.legal_actions()
        return legal[0] if len(legal) == 1 else greedy_action(view_from_state(state), self.rules)

    def _policy_rollout_move(self, state: State) -> int:
        if state.current_player != 0:
            return self._rollout_move(state)
        legal = state.legal_actions()
        return legal[0] if len(legal) == 1 else self.rollout_policy.act(StateObservation(state, 0))
