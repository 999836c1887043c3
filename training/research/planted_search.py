"""A search response to a planted flaw (research; docs/exploitability.md, "The power check"): the ``expert`` search
whose rollouts play the flawed agent's rule at the other seats.

:class:`PlantedResponse` is the guided ``expert`` search (:class:`c8env.agents.expert.ExpertAgent`) with three
changes: in its rollouts the other seats play a model of the agent (a small network, :data:`MODEL`, standing in for
the agent's own, plus the flaw's rule exactly: :class:`DrawRule`); the draw is a candidate wherever it is legal as the
turn's first move (the product's search prunes voluntary draws, and drawing is what exploits ``complacent``; searched
after a draw too, it drew its hand to about 20 cards and into hands that did not end); and its samples deal the
unseen cards with no inference from the opponent's draws (a flawed agent draws while able to play). It is what
``c8env.tools.planted``'s flaws would need for a search response in ``c8env exploit``; NOTES.md ("A search response
to a planted flaw") has what it does against ``complacent``.

    PYTHONPATH=. c8env eval training.research.planted_search:versus_complacent c8env.tools.planted:complacent \
        --deals 2 --seed 59300
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from c8env.actions import DRAW
from c8env.agents.expert import ExpertAgent
from c8env.agents.policy import POLICY_DIR, PolicyAgent
from c8env.agents.search_compiled import (
    PUBLIC,
    ROLLOUT,
    WORLD,
    CompiledSearch,
    Hidden,
    Network,
    Work,
    copy_game,
    deal_hidden,
    network,
    playout_move,
    policy_action,
)
from c8env.cards import SUITS
from c8env.engine import State
from c8env.episode import MAX_HAND_STEPS, POLICY_ROLLOUT_STEPS
from c8env.observation import OBS_LAYOUT
from c8env.rules import RuleSet, load_rules
from c8env.tools.planted import BASE, COMPLACENT_AT
from c8env.vector import kernels
from c8env.vector.jit import jit
from c8env.vector.kernels import OVER, Games, Scratch, Table

#: The network that plays the agent's moves in the rollouts (the agent's own, ``BASE``, is 30 times the work).
MODEL = "rollout6-standard-2p"
#: The search's guide and the network that plays its own moves in the rollouts (as ``versus_greedy``'s).
GUIDE, ROLLOUTS = BASE, "rollout6-standard-2p"
#: Samples a decision and the guide's candidates searched (the draw is added where it is legal).
SIMULATIONS, TOP = 100, 4
_DRAWN = OBS_LAYOUT["draws_this_turn"].start


class DrawRule(NamedTuple):
    """A planted flaw in the kernels' form: the agent draws before it plays, while it has drawn fewer than
    ``draws`` cards this turn, where any of its observation's entries ``indices`` exceeds ``above`` (``draws`` 0:
    no flaw, the network's moves)."""

    indices: np.ndarray  # int64
    above: float
    draws: int


def draw_rule(flaw: str) -> DrawRule:
    """The :class:`DrawRule` of ``c8env.tools.planted``'s flaw ``flaw`` (``"none"``: the unflawed network)."""
    if flaw == "complacent":
        sizes = OBS_LAYOUT["opponent_hand_sizes"]
        return DrawRule(np.arange(sizes.start, sizes.stop), COMPLACENT_AT - 0.5, 2)
    if flaw == "clubs":
        declared = OBS_LAYOUT["opponent_declared"]
        return DrawRule(np.arange(declared.start + SUITS.index("C"), declared.stop, len(SUITS)), 0.0, 1)
    if flaw == "none":
        return DrawRule(np.zeros(0, dtype=np.int64), 0.0, 0)
    raise ValueError(f"planted flaw {flaw!r} is unknown; allowed: 'complacent', 'clubs' or 'none'")


@jit
def model_move(g: Games, b: int, t: Table, model: Network, rule: DrawRule, mask: np.ndarray) -> int:
    """The modelled agent's move in row ``b`` (its seat is to act): the rule's draw where it applies, else
    ``model``'s argmax."""
    seat = g.current[b]
    kernels.legal_mask(g, b, t, mask)
    if rule.draws > 0 and mask[DRAW]:
        kernels.encode(g, b, t, seat, model.obs)
        if model.obs[_DRAWN] < rule.draws:
            for i in rule.indices:
                if model.obs[i] > rule.above:
                    return DRAW
    return policy_action(g, b, t, model, mask, seat)


@jit
def rollout(g: Games, b: int, t: Table, action: int, net: Network, model: Network, rule: DrawRule, w: Work,
            s: Scratch) -> float:
    """Seat 0's reward after ``action`` in row ``b``: seat 0's first ``POLICY_ROLLOUT_STEPS`` moves ``net``'s (then
    greedy's), every other seat's the modelled agent's (0 for a hand still running after ``MAX_HAND_STEPS``)."""
    kernels.apply(g, b, t, action, s)
    steps = 0
    while g.phase[b] != OVER and steps < MAX_HAND_STEPS:
        if g.current[b] != 0:
            move = model_move(g, b, t, model, rule, w.mask)
        else:
            move = playout_move(g, b, t, 0 if steps < POLICY_ROLLOUT_STEPS else -1, net, w.mask)
        kernels.apply(g, b, t, move, s)
        steps += 1
    if g.phase[b] != OVER:
        return 0.0
    kernels.hand_rewards(g, b, t, s.row)
    return s.row[0]


@jit
def search(g: Games, t: Table, h: Hidden, candidates: np.ndarray, first: int, last: int, gen: np.ndarray,
           totals: np.ndarray, mass: np.ndarray, net: Network, model: Network, rule: DrawRule, w: Work,
           s: Scratch) -> None:
    """The product's search loop (:func:`c8env.agents.search_compiled.search`) with this module's rollouts."""
    for sample in range(first, last):
        world = PUBLIC
        if sample > 0:
            world = WORLD
            copy_game(g, PUBLIC, WORLD)
            deal_hidden(g, WORLD, h, gen, w)
        mass[0] += 1.0
        for i in range(candidates.shape[0]):
            copy_game(g, world, ROLLOUT)
            totals[i] += rollout(g, ROLLOUT, t, candidates[i], net, model, rule, w, s)


class ModelSearch(CompiledSearch):
    """The compiled search whose rollouts play ``model`` (a :class:`PolicyAgent`) and ``rule`` at the other seats."""

    def __init__(self, rules: RuleSet, num_players: int, reward: str, rollout_policy: tuple[Any, str] | None,
                 model: PolicyAgent, rule: DrawRule) -> None:
        super().__init__(rules, num_players, reward, rollout_policy)
        self.model = network(model.layers, model.meta["activation"])
        self.rule = rule

    def _samples(self, hidden: Hidden, candidates: np.ndarray, first: int, last: int, gen: np.ndarray,
                 totals: np.ndarray, mass: np.ndarray) -> None:
        search(self.games, self.table, hidden, candidates, first, last, gen, totals, mass, self.network, self.model,
               self.rule, self.work, self.scratch)


class PlantedResponse(ExpertAgent):
    """The guided ``expert`` search against a modelled flawed agent (see the module docstring)."""

    def __init__(self, rules: RuleSet, num_players: int, model: PolicyAgent, rule: DrawRule, **options: Any) -> None:
        super().__init__(rules, num_players, **options)
        if not self.compiled:
            raise ValueError("PlantedResponse runs in the compiled search only; it needs numba (pip install c8env[fast])")
        self.model, self.rule = model, rule

    def compiled_kernel(self) -> ModelSearch:
        if self._kernel is None:
            self._kernel = ModelSearch(self.rules, self.num_players, self.reward, self.rollout_network(), self.model,
                                       self.rule)
        return self._kernel

    def _candidates(self, public: State, legal: list[int]) -> list[int]:
        return legal

    def _guide(self, observation: dict, candidates: list[int]) -> tuple[list[int], np.ndarray, float]:
        top, bonus, favourite = super()._guide(observation, candidates)
        first_move = observation["observation"][_DRAWN] == 0
        if DRAW in candidates and DRAW not in top and first_move:
            top, bonus = [*top, DRAW], np.append(bonus, 0.0)
        return top, bonus, favourite

    def _infer(self, public: State) -> None:
        """No inference from the opponent's draws: a flawed agent draws while able to play."""

    def _requirements(self, data: dict, sizes: list[int]) -> dict[int, list[tuple[int, int]]]:
        return {seat: [(0, sizes[seat - 1])] for seat in range(1, len(sizes) + 1)}


def versus(flaw: str, rules: RuleSet | str = "standard", num_players: int = 2,
           seed: int | None = None) -> PlantedResponse:
    """The search response to ``c8env.tools.planted``'s ``flaw`` (``"none"``: to ``BASE`` itself); 2 players, the
    standard rules (its networks')."""
    ruleset = load_rules(rules)
    if num_players != 2 or ruleset != load_rules("standard"):
        raise ValueError("the planted search response plays 2 players under the standard rules (its networks')")
    return PlantedResponse(ruleset, 2, PolicyAgent(POLICY_DIR / f"{MODEL}.npz"), draw_rule(flaw),
                           simulations=SIMULATIONS, top=TOP, seed=seed,
                           policy=PolicyAgent(POLICY_DIR / f"{GUIDE}.npz"),
                           rollouts=PolicyAgent(POLICY_DIR / f"{ROLLOUTS}.npz"))


def versus_complacent(rules: RuleSet | str = "standard", num_players: int = 2, seed: int | None = None) -> PlantedResponse:
    """The search response to ``c8env.tools.planted:complacent``."""
    return versus("complacent", rules, num_players, seed)


def versus_clubs(rules: RuleSet | str = "standard", num_players: int = 2, seed: int | None = None) -> PlantedResponse:
    """The search response to ``c8env.tools.planted:clubs``."""
    return versus("clubs", rules, num_players, seed)
