"""The examples of examples/python run, and the policy-gradient agent learns."""

import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "python"
sys.path.insert(0, str(EXAMPLES))

import policy_gradient  # noqa: E402
import random_agent  # noqa: E402


def test_the_random_agent_reports_its_mean_speedup():
    result = random_agent.run(episodes=40, size=64, seed=1)
    assert result["episodes"] == 40 and result["speedup"] > 0


def test_the_policy_gradient_agent_beats_the_random_agent(tmp_path):
    png = tmp_path / "curve.png"
    result = policy_gradient.run(episodes=800, size=128, seed=0, png=png)
    assert result["beats_random"], result
    assert result["trained_speedup"] > 1.5 * result["random_speedup"], result
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
