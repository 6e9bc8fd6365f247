"""Programs: reading, printing, located errors, extreme input."""

import pytest

import elevate

DOUBLE = "def double(x: n.f32) = x |> map(fun(v => v * 2.0))"


def test_a_program_prints_as_text_that_parses_to_the_same_program(examples):
    for path in sorted(examples.glob("*.rise")):
        try:
            program = elevate.Program.load(str(path))
        except elevate.ElevateError:
            continue  # an example of an error (split.rise)
        again = elevate.Program.parse(str(program))
        # Printing may rename a bound nat (`n` to `n1`) once; then it is a fixed point.
        assert elevate.Program.parse(str(again)) == again, path
        assert again.signature["params"] == program.signature["params"]


def test_a_program_knows_its_entry_type_and_signature(matmul):
    assert matmul.entry == "mm"
    assert matmul.type == "n.k.f32 -> k.m.f32 -> n.m.f32"
    assert matmul.signature == {"nats": ["n", "k", "m"], "params": [("a", "n.k.f32"), ("b", "k.m.f32")]}
    assert elevate.Program.parse(DOUBLE + "\ndef other(x: f32) = x", entry="double").entry == "double"


def test_a_program_s_loop_program_shows_its_kernels_and_their_schedule(matmul):
    loops = matmul.emit("loops", strategy="blocking", nats={"n": 64, "k": 64, "m": 64})
    assert loops.startswith("// loop program: 3 buffers, 1 kernel")
    assert "Σ(d2) (in0 * in1)" in loops
    assert "reduce d2 by 4 (16 trips, into a block)" in loops
    with pytest.raises(ValueError, match="unknown stage `loop`"):
        matmul.emit("loop", nats={"n": 64, "k": 64, "m": 64})


def test_bad_text_is_a_parse_error_at_its_line_and_column():
    with pytest.raises(elevate.ParseError) as caught:
        elevate.Program.parse("def f(x: n.f32) =\n  x |> map(fun(v => v +))", file="bad.rise")
    e = caught.value
    assert (e.file, e.line, e.column) == ("bad.rise", 2, 24)
    assert str(e).startswith("bad.rise:2:24: parse error: expected an expression, found `)`")
    assert isinstance(e, elevate.ElevateError)


def test_ill_typed_programs_and_unknown_names_are_located_errors():
    with pytest.raises(elevate.TypeCheckError) as caught:
        elevate.Program.parse("def f(x: n.f32) = x |> map(fun(v => v + 1))")
    assert caught.value.line == 1 and caught.value.column is not None
    with pytest.raises(elevate.UnknownNameError) as caught:
        elevate.Program.parse("def f(x: n.f32) = x |> mapp(fun(v => v))")
    assert "mapp" in str(caught.value)
    with pytest.raises(elevate.UnknownNameError):
        elevate.Program.parse(DOUBLE, entry="missing")


def test_a_missing_file_is_an_os_error():
    with pytest.raises(OSError, match="cannot read"):
        elevate.Program.load("/nonexistent/program.rise")


def test_deep_nesting_is_read_or_refused_without_a_crash():
    depth = 100_000
    text = "def f(x: f32) = " + "(" * depth + "x" + ")" * depth
    try:
        program = elevate.Program.parse(text)
    except elevate.ElevateError as e:
        assert "deep" in str(e) or "nest" in str(e)
    else:
        assert program.type == "f32 -> f32"


def test_sizes_of_two_to_the_forty_are_refused_before_allocating(matmul):
    with pytest.raises(elevate.ElevateError):
        matmul.compile(nats={"n": 2**40, "k": 2**40, "m": 2**40})
