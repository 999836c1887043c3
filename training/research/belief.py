"""How much of the other hands each observation tells: a network fitted to predict every opponent's share of each
suit (his non-wild cards of it over his hand size) from the observation's first entries, per vector size.

    python -m training.research.belief --players 4 --hands 5000

Greedy players play the hands (the positions a network meets at greedy tables); at a random 30% of the decisions
with a choice, the mover's observation and the true shares of his opponents are kept. For each size (245: the
vector before ``opponent_last_draws``, 353: before ``opponent_suit_draws``, 401: today's) a 256x256 network is
fitted to the shares (squared error, the last tenth of the positions held out), and the held-out R^2 is printed
(1: the hands' suits known; 0: no better than the mean). training/research/NOTES.md has the figures.
"""

from __future__ import annotations

import numpy as np
import torch
from tqdm import tqdm

from c8env.agents import load
from c8env.cards import SUIT_MASKS
from c8env.engine import State
from c8env.episode import play_hand
from c8env.observation import LEGACY_OBS_SIZE, OBS_LAYOUT, OBS_SIZE, StateObservation, encode_observation
from c8env.tools.argcheck import Parser, int_at_least, int_between
from c8env.tools.maskable_ppo import obs_scale

#: The vectors compared: v1's (245 entries), the vector before ``opponent_suit_draws`` (353), v2's (401).
SIZES = (LEGACY_OBS_SIZE, OBS_LAYOUT["opponent_suit_draws"].start, OBS_SIZE)


def suit_shares(state: State, seat: int) -> list[float]:
    """Each opponent's (seats after ``seat``) share of each suit among his cards, wild cards counted in none."""
    n = state.num_players
    out = []
    for k in range(1, n):
        other = (seat + k) % n
        held = state.held_cards(other)[0] & ~state.wild_mask(other)
        out += [(held & mask).bit_count() / max(1, state.sizes[other]) for mask in SUIT_MASKS]
    return out


def positions(players: int, hands: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Scaled observations float32[k, OBS_SIZE] and the opponents' suit shares float32[k, 4 (players - 1)] of
    greedy hands dealt from ``seed``."""
    greedy = load("greedy", num_players=players)
    rng = np.random.default_rng(seed)
    scale = obs_scale()
    observations, shares = [], []

    def choose(state: State) -> int:
        seat = state.current_player
        if len(state.legal_actions()) > 1 and rng.random() < 0.3:
            observations.append(encode_observation(state, seat) * scale)
            shares.append(suit_shares(state, seat))
        return greedy.act(StateObservation(state, seat))

    for hand in tqdm(range(hands), unit="hand", desc="greedy hands"):
        play_hand(State.new(players, seed=int(rng.integers(2**63)) + hand), choose)
    return np.array(observations, dtype=np.float32), np.array(shares, dtype=np.float32)


def held_out_r2(inputs: np.ndarray, targets: np.ndarray, seed: int, epochs: int = 6) -> float:
    """The held-out R^2 of a 256x256 tanh network fitted to ``targets`` (the last tenth of the rows held out)."""
    torch.manual_seed(seed)
    held = len(inputs) // 10
    x, y = torch.as_tensor(inputs), torch.as_tensor(targets)
    net = torch.nn.Sequential(torch.nn.Linear(x.shape[1], 256), torch.nn.Tanh(), torch.nn.Linear(256, 256),
                              torch.nn.Tanh(), torch.nn.Linear(256, y.shape[1]))
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    train = len(inputs) - held
    for _ in range(epochs):
        order = torch.randperm(train)
        for start in range(0, train, 256):
            batch = order[start:start + 256]
            loss = torch.nn.functional.mse_loss(net(x[batch]), y[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    with torch.no_grad():
        error = torch.nn.functional.mse_loss(net(x[train:]), y[train:]).item()
    spread = float(((targets[train:] - targets[:train].mean(0)) ** 2).mean())
    return 1.0 - error / spread


def build_parser() -> Parser:
    parser = Parser(prog="python -m training.research.belief", description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int_between(2, 7), default=4, help="players at the table (default 4)")
    parser.add_argument("--hands", type=int_at_least(10), default=5000, help="greedy hands played (default 5000)")
    parser.add_argument("--seed", type=int, default=0, help="the hands' and the fits' seed")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    observations, shares = positions(args.players, args.hands, args.seed)
    print(f"{len(observations):,} positions of {args.hands:,} greedy hands, {args.players} players")
    for size in SIZES:
        r2 = held_out_r2(observations[:, :size], shares, args.seed)
        print(f"the first {size} entries: held-out R^2 {r2:.3f} of the opponents' suit shares")


if __name__ == "__main__":
    main()
