"""A PureJaxRL-style PPO on c8env's JAX env: the whole update jitted, rollouts by ``lax.scan``, greedy inside jit.

The shape of PureJaxRL's ``ppo.py`` (an actor and a critic, GAE, clipped surrogate, value loss, entropy bonus,
epochs of shuffled minibatches, all of one update in one jitted function and the updates in a ``lax.scan``) on
``c8env.jax.env(2, "standard")``: seat 0 learns; seat 1 is :func:`c8env.jax.agents.greedy`, played inside the
env step (between two learner decisions) and so inside jit; a finished hand is dealt again at once, and one cut
off after ``--max-hand-steps`` moves counts as lost (no stalling). Logits of
illegal actions are set very low. Plain JAX (an MLP and Adam written out): no Flax or Optax needed. The trained
actor is exported to c8env's ``.npz`` policy format and played by ``c8env eval`` against ``random`` and
``greedy``.

    python examples/jax_ppo.py --steps 2000000
    python examples/jax_ppo.py --quick          # a tiny run: what the test suite runs

Needs the ``jax`` extra (``pip install -e ".[jax]"``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

import c8env
import c8env.jax as cj
from c8env.agents.policy import save_policy
from c8env.jax import agents
from c8env.tools.evaluation import evaluate

LEARNER = 0
Params = dict[str, list[tuple[jax.Array, jax.Array]]]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300_000, help="learner decisions to train for")
    parser.add_argument("--num-envs", type=int, default=64, help="games stepped as one batch")
    parser.add_argument("--num-steps", type=int, default=128, help="rollout length per game and update")
    parser.add_argument("--epochs", type=int, default=4, help="passes over each rollout")
    parser.add_argument("--minibatches", type=int, default=4, help="minibatches per pass")
    parser.add_argument("--opponent", choices=["greedy", "random"], default="greedy", help="seat 1's agent")
    parser.add_argument("--max-hand-steps", type=int, default=300,
                        help="moves after which a training hand is cut off, counted as lost by the learner")
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--eval-deals", type=int, default=1000, help="deals of each c8env eval (2 hands each)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("runs/examples/jax_ppo"))
    parser.add_argument("--quick", action="store_true", help="a tiny run (the test suite's)")
    return parser


# ----- the learner's env: seat 0 against greedy, inside jit ----------------------------------------------------
def learner_env(env: cj.Env, opponent: str = "greedy") -> tuple[Any, Any]:
    """``reset(key)`` and ``step(state, action, key) -> (state, reward, done)`` of one game seen by seat 0: the
    opponent (``greedy`` or ``random``) plays every other seat's moves inside the step, and a finished hand is
    dealt again (the opponent moving first where it leads). A hand cut off after ``env.max_steps`` moves counts as
    lost (-1): under the standard rules a player may draw for ever, and a learner that cannot yet win would
    otherwise learn to stall, a cut-off hand being worth more than a lost one."""
    greedy = agents.greedy(env)

    def choose(s: cj.State, key: jax.Array) -> jax.Array:
        if opponent == "random":
            return agents.random_action(key, s.legal_action_mask)
        return greedy(s.observation, s.legal_action_mask)

    def others(state: cj.State, key: jax.Array) -> tuple[cj.State, jax.Array]:
        def waiting(carry: tuple[cj.State, jax.Array, jax.Array]) -> jax.Array:
            s = carry[0]
            return (s.current_player != LEARNER) & ~(s.terminated | s.truncated)

        def move(carry: tuple[cj.State, jax.Array, jax.Array]) -> tuple[cj.State, jax.Array, jax.Array]:
            s, k, reward = carry
            k, sub, pick = jax.random.split(k, 3)
            s = env.step(s, choose(s, pick), sub)
            return s, k, reward + s.rewards[LEARNER]

        state, _, reward = jax.lax.while_loop(waiting, move, (state, key, jnp.zeros(())))
        return state, reward

    def reset(key: jax.Array) -> cj.State:
        deal_key, play_key = jax.random.split(key)
        return others(env.init(deal_key), play_key)[0]

    def step(state: cj.State, action: jax.Array, key: jax.Array) -> tuple[cj.State, jax.Array, jax.Array]:
        step_key, play_key, reset_key = jax.random.split(key, 3)
        state = env.step(state, action, step_key)
        reward = state.rewards[LEARNER]
        state, later = others(state, play_key)
        done = state.terminated | state.truncated
        cut_off = jnp.where(state.truncated, -1.0, 0.0)
        fresh = reset(reset_key)
        state = jax.tree_util.tree_map(lambda a, b: jnp.where(done, a, b), fresh, state)
        return state, reward + later + cut_off, done

    return reset, step


# ----- the networks and Adam ----------------------------------------------------------------------------------
def mlp_init(key: jax.Array, sizes: list[int], last_scale: float) -> list[tuple[jax.Array, jax.Array]]:
    """Orthogonal weights (scale sqrt 2, the last layer ``last_scale``), zero biases; weights ``(in, out)``."""
    keys = jax.random.split(key, len(sizes) - 1)
    layers = []
    for i, (k, fan_in, fan_out) in enumerate(zip(keys, sizes[:-1], sizes[1:], strict=True)):
        scale = last_scale if i == len(sizes) - 2 else np.sqrt(2)
        layers.append((jax.nn.initializers.orthogonal(scale)(k, (fan_in, fan_out)), jnp.zeros(fan_out)))
    return layers


def mlp(layers: list[tuple[jax.Array, jax.Array]], x: jax.Array) -> jax.Array:
    for i, (w, b) in enumerate(layers):
        x = x @ w + b
        if i < len(layers) - 1:
            x = jnp.tanh(x)
    return x


def masked_logits(params: Params, obs: jax.Array, mask: jax.Array) -> jax.Array:
    return jnp.where(mask, mlp(params["actor"], obs), -1e9)


class Adam(NamedTuple):
    mu: Any
    nu: Any
    count: jax.Array


def adam_update(grads: Any, opt: Adam, params: Any, lr: float, max_norm: float = 0.5) -> tuple[Any, Adam]:
    """Adam (beta 0.9, 0.999, eps 1e-5) after clipping the gradient's global norm to ``max_norm``."""
    norm = jnp.sqrt(sum(jnp.sum(g ** 2) for g in jax.tree_util.tree_leaves(grads)))
    grads = jax.tree_util.tree_map(lambda g: g * jnp.minimum(1.0, max_norm / (norm + 1e-6)), grads)
    count = opt.count + 1
    mu = jax.tree_util.tree_map(lambda m, g: 0.9 * m + 0.1 * g, opt.mu, grads)
    nu = jax.tree_util.tree_map(lambda v, g: 0.999 * v + 0.001 * g ** 2, opt.nu, grads)
    params = jax.tree_util.tree_map(
        lambda p, m, v: p - lr * (m / (1 - 0.9 ** count)) / (jnp.sqrt(v / (1 - 0.999 ** count)) + 1e-5),
        params, mu, nu)
    return params, Adam(mu, nu, count)


# ----- PPO ----------------------------------------------------------------------------------------------------
class Transition(NamedTuple):
    obs: jax.Array
    mask: jax.Array
    action: jax.Array
    log_prob: jax.Array
    value: jax.Array
    reward: jax.Array
    done: jax.Array


def make_train(args: argparse.Namespace, updates: int) -> Any:
    """PureJaxRL's ``make_train``: ``train(key)`` runs ``updates`` jitted updates and returns the parameters and
    the per-update mean reward of the learner's finished hands."""
    env = cj.env(2, "standard", max_steps=args.max_hand_steps)
    reset, env_step = learner_env(env, args.opponent)
    n, t = args.num_envs, args.num_steps
    gamma, lam, clip, vf_coef, ent_coef = 0.99, 0.95, 0.2, 0.5, 0.01
    minibatch = n * t // args.minibatches

    def train(key: jax.Array) -> tuple[Params, jax.Array]:
        key, actor_key, critic_key, reset_key = jax.random.split(key, 4)
        size = env.observation_shape[0]
        params = {"actor": mlp_init(actor_key, [size, args.hidden, args.hidden, env.num_actions], 0.01),
                  "critic": mlp_init(critic_key, [size, args.hidden, args.hidden, 1], 1.0)}
        zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
        opt = Adam(zeros, zeros, jnp.zeros((), jnp.int32))
        state = jax.vmap(reset)(jax.random.split(reset_key, n))

        def collect(carry: tuple[cj.State, Params, jax.Array], _: None) -> tuple[Any, Transition]:
            state, params, key = carry
            key, act_key, step_key = jax.random.split(key, 3)
            logits = masked_logits(params, state.observation, state.legal_action_mask)
            action = jax.random.categorical(act_key, logits)
            log_prob = jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None], 1)[:, 0]
            value = mlp(params["critic"], state.observation)[:, 0]
            after, reward, done = jax.vmap(env_step)(state, action, jax.random.split(step_key, n))
            return (after, params, key), Transition(state.observation, state.legal_action_mask, action, log_prob,
                                                    value, reward, done)

        def advantages(batch: Transition, last_value: jax.Array) -> tuple[jax.Array, jax.Array]:
            def back(carry: tuple[jax.Array, jax.Array], tr: Transition) -> tuple[Any, jax.Array]:
                gae, next_value = carry
                delta = tr.reward + gamma * next_value * (1 - tr.done) - tr.value
                gae = delta + gamma * lam * (1 - tr.done) * gae
                return (gae, tr.value), gae

            _, adv = jax.lax.scan(back, (jnp.zeros_like(last_value), last_value), batch, reverse=True)
            return adv, adv + batch.value

        def loss(params: Params, tr: Transition, adv: jax.Array, target: jax.Array) -> jax.Array:
            logits = masked_logits(params, tr.obs, tr.mask)
            log_probs = jax.nn.log_softmax(logits)
            log_prob = jnp.take_along_axis(log_probs, tr.action[:, None], 1)[:, 0]
            value = mlp(params["critic"], tr.obs)[:, 0]
            ratio = jnp.exp(log_prob - tr.log_prob)
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            actor = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - clip, 1 + clip) * adv).mean()
            entropy = -(jnp.exp(log_probs) * jnp.where(tr.mask, log_probs, 0.0)).sum(-1).mean()
            return actor + vf_coef * ((value - target) ** 2).mean() - ent_coef * entropy

        def update(carry: tuple[Params, Adam, cj.State, jax.Array], _: None) -> tuple[Any, jax.Array]:
            params, opt, state, key = carry
            (state, _, key), batch = jax.lax.scan(collect, (state, params, key), None, t)
            adv, target = advantages(batch, mlp(params["critic"], state.observation)[:, 0])
            flat = jax.tree_util.tree_map(lambda x: x.reshape(n * t, *x.shape[2:]), (batch, adv, target))

            def epoch(carry: tuple[Params, Adam, jax.Array], _: None) -> tuple[Any, None]:
                params, opt, key = carry
                key, sub = jax.random.split(key)
                order = jax.random.permutation(sub, n * t).reshape(args.minibatches, minibatch)

                def step(carry: tuple[Params, Adam], rows: jax.Array) -> tuple[Any, None]:
                    params, opt = carry
                    tr, a, g = jax.tree_util.tree_map(lambda x: x[rows], flat)
                    grads = jax.grad(loss)(params, tr, a, g)
                    return adam_update(grads, opt, params, args.lr), None

                (params, opt), _ = jax.lax.scan(step, (params, opt), order)
                return (params, opt, key), None

            (params, opt, key), _ = jax.lax.scan(epoch, (params, opt, key), None, args.epochs)
            finished = batch.done.sum()
            mean_reward = jnp.where(finished > 0, (batch.reward * batch.done).sum() / jnp.maximum(finished, 1), 0.0)
            return (params, opt, state, key), mean_reward

        (params, *_), rewards = jax.lax.scan(update, (params, opt, state, key), None, updates)
        return params, rewards

    return jax.jit(train)


def export(params: Params, path: Path, description: str) -> Path:
    """The actor as a c8env policy file (weights ``(out, in)``, tanh): what ``c8env eval`` and ``PolicyAgent`` play."""
    layers = [(np.asarray(w).T, np.asarray(b)) for w, b in params["actor"]]
    path.parent.mkdir(parents=True, exist_ok=True)
    return save_policy(path, layers, "tanh", 2, c8env.load_rules("standard").to_dict(), description)


def report(policy: Path, deals: int, seed: int) -> None:
    """``c8env eval POLICY random`` and ``c8env eval POLICY greedy``: the policy's win rate, 95% interval."""
    for opponent in ("random", "greedy"):
        table = evaluate([str(policy), opponent], deals=deals, seed=seed)
        stats = table.stats[0]
        low, high = stats.interval
        print(f"c8env eval {policy} {opponent} --deals {deals}: win rate {stats.win_rate:.1%} "
              f"[{low:.1%}, {high:.1%}] over {stats.hands:,} hands")


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    if args.quick:
        args.steps, args.num_envs, args.num_steps, args.epochs, args.minibatches, args.eval_deals = \
            256, 8, 16, 1, 2, 10
    updates = max(1, args.steps // (args.num_envs * args.num_steps))
    train = make_train(args, updates)
    start = time.perf_counter()
    params, rewards = jax.block_until_ready(train(jax.random.PRNGKey(args.seed)))
    seconds = time.perf_counter() - start
    steps = updates * args.num_envs * args.num_steps
    rewards = np.asarray(rewards)
    for i in range(0, updates, max(1, updates // 10)):
        print(f"update {i + 1}/{updates}: mean reward of the learner's finished hands {rewards[i]:+.3f}")
    print(f"trained {steps:,} learner steps in {seconds:.1f} s (compile included): {steps / seconds:,.0f} steps/s "
          f"(jax {jax.__version__} on {jax.devices()[0].platform}, c8env {c8env.__version__})")
    policy = export(params, args.out / "policy.npz", "examples/jax_ppo.py")
    print(f"wrote {policy}")
    report(policy, args.eval_deals, args.seed)


if __name__ == "__main__":
    main()
