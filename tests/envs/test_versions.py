"""The env versions (:mod:`c8env.versions`): each released id keeps what it was released with, for ever.

- The table's rows are pinned here, layout by layout: a change of the code's observation without a new row fails
  (and the golden playthroughs ``tests/golden/*_v<N>.txt`` pin each version's observations move by move).
- Every env (the AEC env, the single-agent env, both vector envs, the learner games) and every id gives its
  version's observation size, layout and default ``max_steps``; an older version's vector is the newest's prefix.
- A model saved against the v1 spaces loads unchanged against today's ``c8env/SingleAgent-v1`` and plays;
  ``agents.load`` and ``c8env eval`` play models of any released observation size, and refuse any other in one line.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import c8env
from c8env.agents import load
from c8env.agents.policy import PolicyAgent, save_policy
from c8env.envs.learner_games import LearnerGames
from c8env.envs.registration import GYMNASIUM_ENVS, PETTINGZOO_ENVS
from c8env.envs.single_agent import SingleAgentEnv
from c8env.envs.vector_envs import LearnerVectorEnv, SelfPlayVectorEnv
from c8env.observation import ENCODED_SIZES, OBS_LAYOUT, OBS_SIZE, StateObservation, encode_observation
from c8env.versions import LATEST, OBS_SIZES, VERSIONS, get_version

pytestmark = pytest.mark.filterwarnings("ignore:.*is out of date:DeprecationWarning")  # Gymnasium's, on older ids

V1_LAYOUT = {
    "hand": (0, 52), "top_card": (52, 104), "suit_to_follow": (104, 108), "rank_to_follow": (108, 121),
    "any_card": (121, 122), "discard_pile": (122, 174), "opponent_hand_sizes": (174, 180), "stock_size": (180, 181),
    "pending_draw": (181, 182), "direction": (182, 183), "phase": (183, 187), "draws_this_turn": (187, 188),
    "num_players": (188, 194), "scores": (194, 201), "wild_rank": (201, 214), "opponent_voids": (214, 238),
    "countdown": (238, 245),
}
V2_LAYOUT = {**V1_LAYOUT, "opponent_last_draws": (245, 353), "opponent_suit_draws": (353, 377),
             "opponent_declared": (377, 401)}
#: What each released version was released with, written out: (observation size, layout, default max_steps).
RELEASED = {0: (245, V1_LAYOUT, 100_000), 1: (245, V1_LAYOUT, 10_000), 2: (401, V2_LAYOUT, 10_000)}


def spans(layout: dict[str, slice]) -> dict[str, tuple[int, int]]:
    return {name: (part.start, part.stop) for name, part in layout.items()}


def test_the_table_holds_what_each_version_was_released_with() -> None:
    assert [row.number for row in VERSIONS] == sorted(RELEASED), "a version was added without pinning it here"
    for row in VERSIONS:
        size, layout, max_steps = RELEASED[row.number]
        assert (row.obs_size, spans(row.layout), row.max_steps) == (size, layout, max_steps), row.name
        assert max(stop for _, stop in layout.values()) == size


def test_the_codes_observation_is_the_newest_rows() -> None:
    """The observation the code writes is the newest version's: growing or reordering it needs a new row."""
    assert LATEST is VERSIONS[-1] and (OBS_SIZE, spans(OBS_LAYOUT)) == (LATEST.obs_size, spans(LATEST.layout))
    assert OBS_SIZES == ENCODED_SIZES == (401, 245) and c8env.raw_env.version is LATEST


def test_every_version_has_its_ids() -> None:
    for row in VERSIONS:
        assert PETTINGZOO_ENVS[f"c8env/crazy_eights-v{row.number}"] == f"c8env.envs.{row.name}:env"
        for name in ("SingleAgent", "LearnerVector", "SelfPlayVector"):
            assert GYMNASIUM_ENVS[f"c8env/{name}-v{row.number}"]["kwargs"] == {"version": row.number}


@pytest.mark.parametrize("row", VERSIONS, ids=lambda row: row.name)
def test_every_env_gives_its_versions_observation_and_defaults(row) -> None:
    size, layout, max_steps = RELEASED[row.number]
    module = importlib.import_module(f"c8env.envs.{row.name}")
    aec = module.env(num_players=3, rules="special_cards")
    aec.reset(seed=4)
    agent = aec.agent_selection
    observation = aec.observe(agent)["observation"]
    seat = aec.unwrapped.game.current_player
    assert observation.shape == (size,) and aec.observation_space(agent)["observation"].shape == (size,)
    assert np.array_equal(observation, encode_observation(aec.unwrapped.game, seat)[:size])  # the newest's prefix
    assert aec.unwrapped.state().shape == aec.unwrapped.state_space.shape == (7 * size,)
    assert aec.unwrapped.max_steps == max_steps and aec.metadata["name"] == row.name

    single = gymnasium.make(f"c8env/SingleAgent-v{row.number}", num_players=3, opponents="greedy")
    first, _ = single.reset(seed=0)
    assert first.shape == single.observation_space.shape == (size,) and single.unwrapped.max_steps == max_steps
    learner = gymnasium.make_vec(f"c8env/LearnerVector-v{row.number}", num_envs=3, opponents="greedy")
    batch, info = learner.reset(seed=0)
    assert batch.shape == (3, size) and learner.single_observation_space.shape == (size,)
    step = learner.step(np.array([np.flatnonzero(mask)[0] for mask in info["action_mask"]]))
    assert step[0].shape == (3, size) and learner.games.max_steps == max_steps
    newest = gymnasium.make_vec(f"c8env/LearnerVector-v{LATEST.number}", num_envs=3, opponents="greedy")
    assert np.array_equal(batch, newest.reset(seed=0)[0][:, :size])  # the same games: the newest's prefix
    selfplay = gymnasium.make_vec(f"c8env/SelfPlayVector-v{row.number}", num_envs=2)
    assert selfplay.reset(seed=0)[0].shape == (2, size) and selfplay.games.max_steps == max_steps
    assert LearnerGames(2, version=row.number).observation.shape == (2, size)
    assert isinstance(learner, LearnerVectorEnv) and isinstance(selfplay, SelfPlayVectorEnv)


def test_a_version_is_refused_in_one_line_naming_the_released_ones() -> None:
    for bad in (3, -1, "v9", True, None, 1.5):
        with pytest.raises(ValueError, match=r"allowed: 0, 1, 2 \(the newest, 2, is the default\)$"):
            SingleAgentEnv(version=bad)
    assert get_version("v1") is VERSIONS[1] and get_version(2) is LATEST


# ----- saved models keep working --------------------------------------------------------------------------------
class ReleasedSpacesEnv(gymnasium.Env):
    """An env with exactly the spaces ``c8env/SingleAgent-v1`` was released with, written out (not read from
    c8env): what a model trained on that id before v2 existed was saved against."""

    observation_space = gymnasium.spaces.Box(-1.0, 1e6, (245,), np.float32)
    action_space = gymnasium.spaces.Discrete(60)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        return np.zeros(245, np.float32), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        return np.zeros(245, np.float32), 0.0, True, False, {}

    def action_masks(self) -> np.ndarray:
        return np.ones(60, dtype=bool)


@pytest.fixture(scope="module")
def v1_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A MaskablePPO model saved against the v1 spaces."""
    sb3_contrib = pytest.importorskip("sb3_contrib")
    model = sb3_contrib.MaskablePPO("MlpPolicy", ReleasedSpacesEnv(), n_steps=16, batch_size=16, seed=0,
                                    policy_kwargs={"net_arch": [16]})
    path = tmp_path_factory.mktemp("sb3") / "v1-model.zip"
    model.save(path)
    return path


@pytest.mark.slow
def test_a_model_saved_against_v1_loads_against_todays_v1_and_plays_legal_moves(v1_model: Path) -> None:
    from sb3_contrib import MaskablePPO

    env = gymnasium.make("c8env/SingleAgent-v1", opponents="greedy", illegal_action="raise")
    model = MaskablePPO.load(v1_model, env=env)  # SB3 checks the spaces: they must be the ones it was saved with
    for seed in range(3):
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            action, _ = model.predict(obs, action_masks=env.unwrapped.action_masks(), deterministic=True)
            assert info["action_mask"][int(action)]
            obs, _, terminated, truncated, info = env.step(int(action))
            done = terminated or truncated


@pytest.mark.slow
def test_agents_load_and_eval_play_models_of_every_released_size(v1_model: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture) -> None:
    from c8env.tools.cli import main

    agent = load(str(v1_model))
    assert agent.inputs == 245
    state = c8env.State.new(2, seed=3)
    assert agent.act(StateObservation(state, state.current_player)) in state.legal_actions()
    small = tmp_path / "small.npz"
    rng = np.random.default_rng(0)
    save_policy(small, [(rng.normal(size=(8, 245)).astype(np.float32), np.zeros(8, np.float32)),
                        (rng.normal(size=(60, 8)).astype(np.float32), np.zeros(60, np.float32))],
                "tanh", 2, {"preset": "standard"})
    assert PolicyAgent(small).inputs == 245
    for model in (v1_model, small):
        main(["eval", str(model), "greedy", "--deals", "3", "--seed", "1", "--workers", "1"])
        assert "greedy" in capsys.readouterr().out


def test_a_model_of_any_other_size_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "wide.npz"
    layers = [(np.zeros((8, 300), np.float32), np.zeros(8, np.float32)), (np.zeros((60, 8), np.float32),
                                                                           np.zeros(60, np.float32))]
    with pytest.raises(ValueError, match=r"takes observations of 300 entries; c8env's observations have 401 or 245 "
                                         r"entries \(v0 245, v1 245, v2 401\)$"):
        save_policy(path, layers, "tanh", 2, {"preset": "standard"})
    good = tmp_path / "good.npz"
    save_policy(good, [(np.zeros((8, 245), np.float32), layers[0][1]), layers[1]], "tanh", 2, {})
    with np.load(good) as data:
        arrays = dict(data)
    meta = json.loads(str(arrays["meta"]))
    arrays["meta"] = np.array(json.dumps({**meta, "obs_size": 353}))
    np.savez(path, **arrays)
    with pytest.raises(ValueError, match=r"takes observations of 353 entries; .*\(v0 245, v1 245, v2 401\)$") as error:
        load(str(path))
    assert "\n" not in str(error.value)


def test_a_245_input_policy_plays_a_v1_observation_and_a_401_input_one_refuses_it() -> None:
    env = c8env.crazy_eights_v1.env(num_players=2)
    env.reset(seed=0)
    observation = env.observe(env.agent_selection)
    small = load("ppo-standard-2p")  # 245 inputs
    assert observation["action_mask"][small.act(observation)]
    with pytest.raises(ValueError, match=r"PolicyAgent reads 401 entries; the env versions' observations have 401 "
                                         r"or 245"):
        load("ensemble-standard-4p", num_players=4).act(observation)
