"""Strategies: text, composition in Python, application, budgets, traces."""

import numpy as np
import pytest

import elevate
from elevate import rules


def test_strategy_text_round_trips():
    for text in ["tile(32, 32) ; defaultLowering", "DFNF ; try(topDown(mapFusion)) <+ id", "repeat(mapFusion)"]:
        strategy = elevate.Strategy.parse(text)
        assert elevate.Strategy.parse(str(strategy)) == strategy


def test_strategies_composed_in_python_equal_their_text():
    composed = rules.tile(32, 32) >> rules.default_lowering()
    assert composed == elevate.Strategy.parse("tile(32, 32) ; defaultLowering")
    assert str(composed) == "tile(32, 32) ; defaultLowering"
    choice = rules.map_fusion() | rules.id()
    assert choice == elevate.Strategy.parse("mapFusion <+ id")
    assert rules.DFNF() == elevate.Strategy.parse("DFNF")
    assert rules.top_down(rules.map_fusion()) == elevate.Strategy.parse("topDown(mapFusion)")
    assert rules.saturate("default") == elevate.Strategy.parse('saturate("default")')


def test_every_library_name_is_a_function():
    names = rules.names()
    assert "tile" in names and "defaultLowering" in names and len(names) > 100
    assert "tile" in rules.tile.__doc__
    with pytest.raises(AttributeError):
        rules.no_such_rule


def test_bad_strategy_text_is_a_parse_error_at_its_column():
    with pytest.raises(elevate.ParseError) as caught:
        elevate.Strategy.parse("tile(32, 32) ; ; defaultLowering")
    assert caught.value.line == 1
    assert caught.value.column == 16
    with pytest.raises(elevate.ParseError):
        elevate.Strategy.parse("noSuchStrategy")


def test_apply_gives_the_program_and_its_trace(matmul):
    result, trace = elevate.Strategy.parse("DFNF").apply(matmul, trace=True)
    assert isinstance(result, elevate.Program)
    assert result.signature["params"] == matmul.signature["params"]
    assert result != matmul
    assert trace and all(" @ " in step for step in trace)
    same, none = elevate.Strategy.parse("id").apply(matmul)
    assert same == matmul and none == []


def test_a_strategy_that_fails_or_never_stops_is_a_strategy_error(matmul):
    with pytest.raises(elevate.StrategyError, match="failed"):
        elevate.Strategy.parse("fail").apply(matmul)
    with pytest.raises(elevate.StrategyError):
        elevate.Strategy.parse("repeat(id)").apply(matmul, budget=10_000)
    with pytest.raises(elevate.StrategyError):
        elevate.Strategy.parse("repeat(id)").apply(matmul, budget={"steps": 10**12, "time": 0.2})


def test_saturation_and_sketch_guidance_from_python(matmul):
    saturated = elevate.saturate(matmul, "default", {"iterations": 3, "nodes": 5000, "ms": 5000})
    assert saturated.signature["params"] == matmul.signature["params"]
    with pytest.raises(ValueError):
        elevate.sketch_guided(matmul, [])


def test_sketch_guidance_reaches_each_sketch_in_turn():
    squares = elevate.Program.parse("def f(xs: 32.f32) = xs |> map(fun(x => x * x)) |> reduce(add, 0.0)")
    steps = [
        ("contains(map[8](map[4](?)))", "splitJoin(4),splitJoin(8)", {"iterations": 4}),
        ("contains(mapPar[8](map[4](?)))", "lowering", "iterations=4"),
    ]
    tiled = elevate.sketch_guided(squares, steps)
    assert "mapPar" in str(tiled)
    x = np.arange(32, dtype=np.float32)
    assert tiled.eval(x) == pytest.approx(squares.eval(x))
    with pytest.raises(elevate.StrategyError, match="sketchGuided"):
        elevate.sketch_guided(squares, [("contains(transpose)", "lowering", "iterations=2")])
