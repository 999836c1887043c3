"""The ``expert`` search with the research options (:class:`ResearchExpert`), and the spec parser that builds it
(:func:`load_research`): the options measured to gain nothing at play time, or that served to record demonstrations,
kept beside the product's :class:`c8env.agents.expert.ExpertAgent` (training/research/NOTES.md has the figures).

- ``belief=greedy`` or ``belief=<policy name or .npz path>`` (2 players, compiled search only): each sample of the
  hidden cards is weighted by how likely the opponent's last move was, had he held that sample's hand, under a model
  of him -- ``greedy`` (its move: 1, any other: :data:`GREEDY_EPSILON`) or a network's softmax -- and the candidates
  are ranked by weighted means. The move weighed is the opponent's turn since the expert's last decision when it was
  one card played from his hand without drawing (his hand then: the sample's plus that card) and the suit he then
  declared; other turns (draws, passes, several cards) leave the samples unweighted. ``draws=K``: each sample is the
  one kept of K deals, with probability in proportion to its weight.
- ``last_draws=1``: the samples read the observation's ``opponent_last_draws`` as a greedy player's: none of the cards
  an opponent then held fitted, so as many of his cards as he has held since lie outside the suits and ranks it names.
- ``explain_hand=TRIES`` (compiled search only): each sample explains every move of the other seats that
  :meth:`ResearchExpert.watch` showed it, as a greedy player's, each hand rebuilt backward through his plays and
  draws (up to TRIES deals per seat, then as many swaps of one card:
  :mod:`c8env.agents.search_explained`, as the product's local best response to greedy,
  :mod:`c8env.agents.best_response`, does). A harness shows it every move: :func:`c8env.episode.play_watched`.

The recordings' hooks are here too: :meth:`ResearchExpert.moved` and :meth:`ResearchExpert.unasked`, for a seat
whose moves another agent makes (``pretrain_behaviour``, ``pretrain_endgame_only``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from c8env.actions import ANNOUNCE
from c8env.agents import OPTIONS, Agent, ExpertAgent, Option, PolicyAgent, load, shipped_policies
from c8env.agents.best_response import HandMoves, last_draw_requirements
from c8env.engine import ANY_SUIT, State
from c8env.observation import check_observation
from c8env.rules import RuleSet, load_rules

#: The greedy belief model's probability of a move other than greedy's (greedy's own: 1).
GREEDY_EPSILON = 0.05
#: The research options of an ``expert`` spec (:func:`load_research`), beside the product's
#: (:data:`c8env.agents.OPTIONS`); :data:`c8env.agents.RESEARCH_OPTIONS` names them to refuse them.
EXPERT_OPTIONS: dict[str, Option] = {
    "belief": Option(str, lambda v: bool(v.strip()), "'greedy', a shipped policy name or a .npz path", "policy",
                     words=("greedy",)),
    "draws": Option(int, lambda v: v >= 1, "an int >= 1", "budget", cap=16),  # deals per sample
    "last_draws": Option(int, lambda v: v in (0, 1), "0 or 1", "setting"),
    "explain_hand": Option(int, lambda v: v >= 0, "an int >= 0", "budget", cap=100),  # deals and swaps per seat
}


class ResearchExpert(ExpertAgent):
    """:class:`~c8env.agents.expert.ExpertAgent` with the research options (see the module docstring); with none
    of them it makes the product's moves."""

    def __init__(self, rules: RuleSet, num_players: int, *, belief: str | PolicyAgent | None = None, draws: int = 1,
                 last_draws: bool = False, explain_hand: int = 0, **options: Any) -> None:
        """``options``: the product's (:class:`~c8env.agents.expert.ExpertAgent`). ``belief``: ``"greedy"`` or a
        :class:`PolicyAgent`, the model of the opponent whose observed moves weigh the samples (2 players,
        compiled); ``draws``: deals per sample under a belief, one kept in proportion to its weight;
        ``last_draws``: read the opponents' last voluntary draws; ``explain_hand``: deals (then swaps) per seat of the
        samples that explain the hand's moves (0: off; compiled)."""
        super().__init__(rules, num_players, **options)
        self._research(belief, draws, last_draws, explain_hand)

    @classmethod
    def of(cls, expert: ExpertAgent, belief: str | PolicyAgent | None = None, draws: int = 1, last_draws: bool = False,
           explain_hand: int = 0) -> ResearchExpert:
        """The research search of a product ``expert`` that has not played yet (its options and generator), with
        these research options."""
        agent = cls.__new__(cls)
        agent.__dict__.update(expert.__dict__)
        cls._research(agent, belief, draws, last_draws, explain_hand)
        return agent

    def _research(self, belief: str | PolicyAgent | None, draws: int, last_draws: bool, explain_hand: int) -> None:
        """Check and set the research options (see :meth:`__init__`)."""
        num_players = self.num_players
        if not isinstance(draws, int) or isinstance(draws, bool) or draws < 1:
            raise ValueError(f"expert draws={draws!r} is invalid; allowed: an int >= 1")
        if draws > 1 and belief is None:
            raise ValueError(f"expert draws={draws} chooses among deals by a belief's weights; give belief=")
        if belief is not None:
            if belief != "greedy" and not isinstance(belief, PolicyAgent):
                raise ValueError(f"expert belief={belief!r} is invalid; allowed: None, 'greedy' or a PolicyAgent")
            if num_players != 2:
                raise ValueError(f"expert belief weighs a single opponent's moves; num_players={num_players} "
                                 "is not allowed with it (2 players only)")
            if not self.compiled:
                raise ValueError("expert belief runs in the compiled search only; it needs numba (pip install "
                                 "c8env[fast]) and compiled=None or True")
            if isinstance(belief, PolicyAgent):
                belief.single_network("expert belief")  # the compiled kernels play one MLP
        if not isinstance(last_draws, bool):
            raise ValueError(f"expert last_draws={last_draws!r} is invalid; allowed: True or False")
        if not isinstance(explain_hand, int) or isinstance(explain_hand, bool) or explain_hand < 0:
            raise ValueError(f"expert explain_hand={explain_hand!r} is invalid; allowed: an int >= 0")
        if explain_hand and not self.compiled:
            raise ValueError("expert explain_hand runs in the compiled search only; it needs numba (pip install "
                             "c8env[fast]) and compiled=None or True")
        self.belief = belief
        self.draws = draws
        self.last_draws = last_draws
        self.explain_hand = explain_hand
        self.hand_moves = HandMoves()  # the hand's moves shown by watch
        self._observed: tuple[State, int, int] | None = None  # the opponent's last move to weigh (see _infer)
        self._before: State | None = None  # the position after the last move remembered (2 players)
        self._position: State | None = None  # the position of the last move chosen and remembered (2 players)

    def act(self, observation: dict) -> int:
        self._position = None
        if self.explain_hand:
            check_observation(observation, "ExpertAgent")
            mask = observation["action_mask"]
            if mask.any() and not mask[ANNOUNCE]:
                self._explain_hand(observation)
        return super().act(observation)

    # ----- the recordings' hooks ----------------------------------------------------------------------
    def moved(self, action: int) -> None:
        """Its seat made ``action``, not the move :meth:`act` chose last (another agent moved for it, e.g. a
        recording's behaviour agent): the inference from the opponent's draws follows the move made."""
        if self._position is not None:
            self._remember(self._position, action)

    def unasked(self) -> None:
        """Its seat moved without asking it (a recording's behaviour agent played a position left unlabelled): no
        inference follows from a move it does not know."""
        self._last, self._known, self._position = None, None, None

    @property
    def watching(self) -> bool:
        """Whether it reads the other seats' moves (``explain_hand``): harnesses then show it each one (:meth:`watch`,
        :func:`c8env.episode.play_watched`)."""
        return self.explain_hand > 0

    def watch(self, before: State, action: int, after: State) -> None:
        """A move of the hand: the player to act in ``before`` made ``action``, leading to ``after``; kept with
        ``explain_hand`` (:class:`c8env.agents.best_response.HandMoves`)."""
        if self.explain_hand:
            self.hand_moves.watch(before, action, after)

    def _explain_hand(self, observation: Any) -> None:
        """Give the compiled search the other seats' moves watched in this hand, in its numbering."""
        state = getattr(observation, "state", None)
        if not isinstance(state, State):
            raise ValueError("expert explain_hand reads the moves that watch() shows it and needs the StateObservation "
                             "of c8env's harnesses (play_watched, the recordings), not a plain observation dict")
        self.compiled_kernel().observe_hand(self.hand_moves.seen_by(state, observation.seat), self.explain_hand)

    # ----- the search -------------------------------------------------------------------------------
    def compiled_kernel(self) -> Any:
        """The :class:`training.research.search_kernels.ResearchSearch` that runs this search, built at the first
        call."""
        if self._kernel is None:
            from training.research.search_kernels import ResearchSearch

            model = self.belief
            if isinstance(model, PolicyAgent):
                model = (model.layers, model.meta["activation"])
            self._kernel = ResearchSearch(self.rules, self.num_players, self.reward, self.rollout_network(), model,
                                          GREEDY_EPSILON, self.draws)
        return self._kernel

    def _compiled_search(self, public: State, unseen: list[int], sizes: list[int], requirements: dict,
                         candidates: list[int], totals: np.ndarray, deadline: float | None) -> float:
        """The product's loop, its samples weighed by the opponent's last move under a belief: the summed weights
        of the samples taken."""
        self.compiled_kernel().weigh(self._observed)
        return super()._compiled_search(public, unseen, sizes, requirements, candidates, totals, deadline)

    # ----- inference -----------------------------------------------------------------------------------
    def _remember(self, public: State, action: int) -> None:
        super()._remember(public, action)
        self._position = public
        if self.belief is not None:
            self._before = public.copy()
            self._before.apply(action)

    def _infer(self, public: State) -> None:
        """The product's inference; under a belief the opponent's turn is also kept to weigh the samples by when it
        was one card played from his hand, without drawing."""
        last = self._last
        super()._infer(public)
        self._observed = None
        if self.belief is None or last is None or self._last is not last or not last.opponent_to_move:
            return
        before = self._before
        played = public.discard[-1] != last.top
        one_card = len(public.discard) == len(before.discard) + 1 and public.sizes[1] == last.opponent_size - 1
        if played and one_card:
            self._observed = (before, public.discard[-1], -1 if public.suit == ANY_SUIT else public.suit)

    def _requirements(self, data: dict, sizes: list[int]) -> dict[int, list[tuple[int, int]]]:
        """The product's constraints; with ``last_draws`` each opponent's last voluntary draw adds one before his
        voids (his last: :func:`c8env.agents.best_response.last_draw_requirements`)."""
        out = super()._requirements(data, sizes)
        return last_draw_requirements(out, data, sizes) if self.last_draws else out


def _research_options(items: list[str], spec: str, rules: RuleSet, num_players: int,
                      policies: Mapping[str, str | Path] | None) -> dict[str, Any]:
    """The research options among a spec's ``key=value`` items, typed and checked (a policy resolved)."""
    options: dict[str, Any] = {}
    for item in items:
        key, _, value = item.partition("=")
        key = key.strip()
        option = EXPERT_OPTIONS[key]
        if key in options:
            raise ValueError(f"agent spec option {key!r} for 'expert' is given twice ({spec}); give it once")
        try:
            typed = option.type(value)
        except ValueError:
            raise ValueError(f"agent spec option {key}={value[:60]!r} for 'expert' is not "
                             f"{'an' if option.type is int else 'a'} {option.type.__name__}") from None
        if not option.check(typed):
            raise ValueError(f"agent spec option {key}={typed!r:.60} is invalid for 'expert' (out of range); "
                             f"allowed: {option.allowed}")
        if option.kind == "policy" and typed not in option.words:
            known = typed in (policies or ()) or typed in shipped_policies()
            if not known and not (typed.endswith(".npz") and Path(typed).is_file()):
                raise ValueError(f"expert {key} {typed!r}: no such policy file; allowed: "
                                 f"{', '.join([*option.words, *shipped_policies(), *(policies or ())])}, or the path "
                                 "of an existing .npz policy file")
            typed = load(typed, rules=rules, num_players=num_players, policies=policies)
        options[key] = bool(typed) if key == "last_draws" else typed
    return options


def load_research(spec: str | Path | Agent | Callable[..., Agent], rules: str | dict | RuleSet = "standard",
                  num_players: int = 2, seed: int | None = None,
                  policies: Mapping[str, str | Path] | None = None) -> Agent:
    """:func:`c8env.agents.load`, with an ``expert`` spec built as a :class:`ResearchExpert` that also takes the
    research options (:data:`EXPERT_OPTIONS`), e.g. ``expert:simulations=300,last_draws=1,explain_hand=10``; any
    other spec as ``load`` builds it."""
    if not isinstance(spec, str) or spec.partition(":")[0] != "expert":
        return load(spec, rules=rules, num_players=num_players, seed=seed, policies=policies)
    rules = load_rules(rules)
    allowed = {**OPTIONS["expert"], **EXPERT_OPTIONS}
    items = [item for item in spec.partition(":")[2].split(",") if item]
    for item in items:
        key, sep, _ = item.partition("=")
        if not sep or key.strip() not in allowed:
            raise ValueError(f"agent spec option {item!r} for 'expert' is invalid; allowed: "
                             + ", ".join(f"{k}=<{o.type.__name__}>" for k, o in allowed.items()))
    research = [item for item in items if item.partition("=")[0].strip() in EXPERT_OPTIONS]
    product = [item for item in items if item not in research]
    options = _research_options(research, spec, rules, num_players, policies)
    expert = load("expert" + (":" + ",".join(product) if product else ""), rules=rules, num_players=num_players,
                  seed=seed, policies=policies)
    return ResearchExpert.of(expert, **options)


__all__ = ["EXPERT_OPTIONS", "GREEDY_EPSILON", "ResearchExpert", "load_research"]
