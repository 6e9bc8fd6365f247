"""Shared fixtures: the repository's example programs."""

from pathlib import Path

import pytest

import elevate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "rise"


@pytest.fixture
def examples() -> Path:
    return EXAMPLES


@pytest.fixture
def matmul() -> elevate.Program:
    return elevate.Program.load(str(EXAMPLES / "matmul.rise"))
