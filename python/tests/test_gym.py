"""The Gymnasium environment: the checker, masks, undo, rewards."""

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import elevate
import elevate.gym

SIZES = {"n": 64, "k": 64, "m": 64}


@pytest.fixture
def env(matmul):
    return gymnasium.make(elevate.gym.ENV_ID, program=matmul, cost="model", nats=SIZES).unwrapped


def test_the_environment_passes_gymnasiums_checker(env):
    check_env(env, skip_render_check=False)


def test_it_is_made_from_a_path_too(examples):
    env = gymnasium.make("elevate/Schedule-v0", program=str(examples / "matmul.rise"), nats=SIZES)
    observation, info = env.reset(seed=1)
    assert env.observation_space.contains(observation)
    assert info["baseline"] > 0


def test_an_episode_under_the_masks_never_takes_an_illegal_action(env):
    rng = np.random.default_rng(0)
    transformations, parameters = env.action_space.nvec
    for episode in range(30):
        env.reset(seed=episode)
        done = False
        while not done:
            mask = env.action_masks()
            assert mask.shape == (transformations + parameters,)
            t = rng.choice(np.flatnonzero(mask[:transformations]))
            p = rng.choice(np.flatnonzero(mask[transformations:]))
            observation, reward, done, truncated, info = env.step(np.array([t, p]))
            assert not info["illegal"]
            assert env.observation_space.contains(observation)
        assert np.isfinite(reward)
        assert info["strategy"]


def test_an_illegal_action_ends_the_episode_with_the_failed_reward(env):
    env.reset()
    transformations = env.action_space.nvec[0]
    # Later decisions have fewer options than the widest: find one with an illegal one.
    while True:
        illegal = np.flatnonzero(~env.action_masks()[:transformations])
        if len(illegal):
            break
        _, _, done, _, _ = env.step(np.array(env.legal_actions()[0]))
        assert not done, "every decision of the episode had every option legal"
    _, reward, done, _, info = env.step(np.array([illegal[0], 0]))
    assert done and info["illegal"] and reward == elevate.gym.FAILED_REWARD


def test_undo_restores_the_program_and_the_mask(env):
    env.reset()
    before = env.current_program
    mask = env.joint_mask()
    steps = 0
    while True:
        legal = env.legal_actions()
        _, _, done, _, _ = env.step(np.array(legal[-1]))
        steps += 1
        if done:
            break
    for _ in range(steps):
        assert env.undo()
    assert not env.undo()
    assert env.current_program == before
    assert (env.joint_mask() == mask).all()


def test_the_reward_is_the_log_speedup_by_the_model(env, matmul):
    env.reset()
    done = False
    while not done:
        _, reward, done, _, info = env.step(np.array(env.legal_actions()[0]))
    if isinstance(info["cost"], float):
        assert reward == pytest.approx(np.log(info["baseline"] / info["cost"]))
    else:
        assert reward == elevate.gym.FAILED_REWARD


def test_the_loop_nest_features_describe_the_program_as_it_changes(matmul):
    env = gymnasium.make(elevate.gym.ENV_ID, program=matmul, nats=SIZES, features="loops").unwrapped
    check_env(env)
    first, _ = env.reset()
    assert first.shape == (3 + 1 + 3 * 18,)
    assert first[3] == 1.0, "one nest"
    seen = {first[3:].tobytes()}
    # Random legal decisions: programs whose loop nests differ (a parallel map of one
    # iteration is no loop, so some decisions leave the nests as they were).
    rng = np.random.default_rng(1)
    for _ in range(20):
        env.reset()
        done = False
        while not done:
            legal = env.legal_actions()
            action = legal[rng.integers(len(legal))]
            observation, _, done, _, _ = env.step(np.array(action))
            seen.add(observation[3:].tobytes())
    assert len(seen) > 2, "the program's features change as it is rewritten"
    with pytest.raises(ValueError, match="features"):
        elevate.gym.ScheduleEnv(matmul, nats=SIZES, features="pixels")


def test_a_space_without_decisions_has_one_no_op_action_worth_its_reward(matmul):
    # MaskablePPO samples every dimension under its mask: each needs a legal entry. A
    # space of one point gives one-step episodes whose only action is the no-op.
    env = gymnasium.make(elevate.gym.ENV_ID, program=matmul, space="id", nats=SIZES).unwrapped
    check_env(env)
    for _ in range(2):
        env.reset()
        transformations, parameters = env.action_space.nvec
        mask = env.action_masks()
        assert mask[:transformations].any() and mask[transformations:].any()
        assert env.legal_actions() == [(0, 0)]
        assert env.joint_mask()[0, 0] and env.joint_mask().sum() == 1
        _, reward, done, truncated, info = env.step(np.array([0, 0]))
        assert done and not truncated and not info["illegal"]
        assert reward == 0.0, "id's point is the start program: log(1)"
        assert info["cost"] == info["baseline"] and info["strategy"] == "id"
        assert not env.action_masks().any() and env.legal_actions() == []
    assert env.undo() and not env.undo()
    assert env.legal_actions() == [(0, 0)]


def test_a_fixed_strategy_is_a_space_of_one_point_rewarded_by_its_speedup(matmul):
    env = elevate.gym.ScheduleEnv(matmul, space="blocking", nats=SIZES)
    env.reset()
    assert env.legal_actions() == [(0, 0)]
    _, reward, done, _, info = env.step(np.array([0, 0]))
    assert done and not info["illegal"]
    assert reward == pytest.approx(np.log(info["baseline"] / info["cost"]))
    assert reward != 0.0, "blocking changes the model's cost"
    # Under auto, a program without loops has nothing to choose either.
    scalar = elevate.Program.parse("def twice(x: f32) = x + x")
    env = elevate.gym.ScheduleEnv(scalar)
    env.reset()
    _, reward, done, _, info = env.step(np.array([0, 0]))
    assert done and not info["illegal"] and np.isfinite(reward)

