"""The README's Python blocks run as they are written, from the repository's root
(its Rust block is a doctest of the `elevate` crate)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def python_blocks() -> list[str]:
    return BLOCK.findall((ROOT / "README.md").read_text())


def test_the_readme_has_a_python_block():
    assert python_blocks(), "README.md has no ```python block"


@pytest.mark.parametrize("index", range(len(python_blocks())))
def test_a_readme_python_block_runs(index: int):
    block = python_blocks()[index]
    done = subprocess.run([sys.executable, "-c", block], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, f"block {index}:\n{block}\nstderr:\n{done.stderr}"
