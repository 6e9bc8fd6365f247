//! Extreme but legal programs and inputs through the driver: compiled code stops with
//! an error where the interpreter reports one (integer division by zero, the smallest
//! integer divided by -1) instead of trapping the process; 100,000 additions in a row
//! compile and run; buffers too large are errors before anything is allocated.

use super::sizes;
use elevate::bridge::{compile, jit::Compiled, Error, Options, Trap};
use elevate::rise::limits::Limits;
use elevate::rise::{evaluate, NatEnv, Program, Value};

/// `source` compiled by the driver at `nats`, without a strategy.
fn compiled(source: &str, nats: &NatEnv, options: &Options) -> Result<(Program, Compiled), Error> {
    let program = Program::load(source, None).unwrap_or_else(|e| panic!("{e}"));
    let compiled = compile(&program, nats, None, options)?;
    Ok((program, compiled))
}

/// Runs the compiled program and the interpreter on `inputs`: both succeed with the
/// same value, or both fail; returns the compiled program's outcome.
fn agree(program: &Program, compiled: &Compiled, inputs: &[Value]) -> Result<Value, Error> {
    let found = compiled.run(inputs);
    let expected = evaluate(&program.entry().term, &NatEnv::default(), inputs);
    match (&found, &expected) {
        (Ok(a), Ok(b)) => assert_eq!(a.to_json(), b.to_json(), "{inputs:?}"),
        (Err(_), Err(_)) => {}
        _ => panic!("compiled {found:?} vs interpreted {expected:?} on {inputs:?}"),
    }
    found
}

fn trap(outcome: Result<Value, Error>) -> (Trap, &'static str) {
    match outcome {
        Err(Error::Trap { trap, op, span }) => {
            assert!(span.is_some(), "the trap is located");
            (trap, op)
        }
        other => panic!("expected a trap, found {other:?}"),
    }
}

#[test]
fn integer_division_by_zero_and_overflow_are_errors_as_in_the_interpreter() {
    let options = Options::default();
    for (ty, int, smallest) in [
        (
            "i32",
            (|v| Value::I32(v as i32)) as fn(i64) -> Value,
            i64::from(i32::MIN),
        ),
        ("i64", |v| Value::I64(v), i64::MIN),
    ] {
        let div = format!("def f(x: {ty}, y: {ty}) = x / y");
        let (program, f) = compiled(&div, &NatEnv::default(), &options).unwrap();
        assert_eq!(f.payload().traps.len(), 1, "{}", f.payload().mlir());
        let by_zero = agree(&program, &f, &[int(1), int(0)]);
        assert_eq!(trap(by_zero), (Trap::DivisionByZero, "div"));
        // The quotient does not fit: an error (as the interpreter reports it once it
        // checks this too), not the machine's trap.
        let (overflow, _) = trap(f.run(&[int(smallest), int(-1)]));
        assert!(matches!(overflow, Trap::Overflow(_)), "{overflow}");
        assert!(overflow.to_string().contains(ty), "{overflow}");
        for (x, y) in [(7, -1), (-7, 2), (smallest, 1), (smallest, 2), (0, -1)] {
            agree(&program, &f, &[int(x), int(y)]).unwrap();
        }
        // The remainder by zero stops; the smallest integer's remainder by -1 is 0.
        let rem = format!("def f(x: {ty}, y: {ty}) = x % y");
        let (program, f) = compiled(&rem, &NatEnv::default(), &options).unwrap();
        assert_eq!(
            trap(agree(&program, &f, &[int(5), int(0)])),
            (Trap::DivisionByZero, "mod")
        );
        for (x, y) in [(smallest, -1), (7, -2), (-7, 3)] {
            agree(&program, &f, &[int(x), int(y)]).unwrap();
        }
    }
}

#[test]
fn divisions_in_loops_parallel_loops_and_vectors_trap_too() {
    let options = Options::default();
    let ints = |xs: &[i32]| Value::array(xs.iter().map(|x| Value::I32(*x)).collect());
    let x = ints(&[8, 9, 10, 11, 12, 13, 14, 15]);
    let fine = ints(&[1, 2, 3, 4, -1, -2, -3, -4]);
    let zero_at_5 = ints(&[1, 2, 3, 4, 5, 0, 7, 8]);
    for source in [
        "def f(x: 8.i32, y: 8.i32) = zip(x, y) |> mapSeq(fun(p => fst(p) / snd(p)))",
        "def f(x: 8.i32, y: 8.i32) = zip(x, y) |> mapPar(fun(p => fst(p) % snd(p)))",
        "def f(x: 8.i32, y: 8.i32) = zip(x, y) |> map(fun(p => fst(p) / snd(p))) |> reduceSeq(add, 0)",
        "def f(x: 8.i32, y: 8.i32) = zip(asVector(4)(x), asVector(4)(y)) |> mapSeq(fun(p => fst(p) / snd(p))) |> asScalar",
    ] {
        let (program, f) = compiled(source, &NatEnv::default(), &options)
            .unwrap_or_else(|e| panic!("{source}: {e}"));
        agree(&program, &f, &[x.clone(), fine.clone()]).unwrap();
        let (t, _) = trap(agree(&program, &f, &[x.clone(), zero_at_5.clone()]));
        assert_eq!(t, Trap::DivisionByZero, "{source}");
        // The trap record is cleared before each call.
        agree(&program, &f, &[x.clone(), fine.clone()]).unwrap();
    }
    // Dividing by a constant other than 0 and -1 needs no guard.
    let (_, f) = compiled(
        "def f(x: 8.i32) = x |> mapSeq(fun(v => v / 3))",
        &NatEnv::default(),
        &options,
    )
    .unwrap();
    assert!(f.payload().traps.is_empty(), "{}", f.payload().mlir());
}

#[test]
fn a_chain_of_100000_additions_compiles_and_runs() {
    let n = 100_000;
    let source = format!("def f(x: i32) = x{}", " + x".repeat(n - 1));
    let (program, f) = compiled(&source, &NatEnv::default(), &Options::default())
        .unwrap_or_else(|e| panic!("{e}"));
    // One kernel whose body is 100,000 operations long.
    assert_eq!(f.payload().kernels, 1);
    assert_eq!(f.payload().mlir().matches("arith.addi").count(), n - 1);
    let result = agree(&program, &f, &[Value::I32(3)]).unwrap();
    assert_eq!(result.to_json().unwrap(), serde_json::json!(3 * n));
}

#[test]
fn a_value_used_three_times_48_deep_is_a_kernel_of_two_operations_per_level() {
    // `x * x - x`, 48 times, each level reading the one before three times: as a tree,
    // 3^48 leaves; as the DAG the body is, two operations per level, each computed
    // once. Written with `let`, and as a function applied to its own result, which
    // `defaultLowering`'s BENF binds with `let` once the argument is larger than
    // MAX_COPIED_ARGUMENT. The first three levels, smaller, are copied into their
    // uses: 1 + 3 + 9 operations of each kind where 3 would do.
    let n = 48;
    let (mut with_let, mut prev) = (String::new(), "v".to_string());
    for k in 0..n {
        with_let.push_str(&format!("let x{k} = {prev} * {prev} - {prev} in "));
        prev = format!("x{k}");
    }
    with_let.push_str(&prev);
    let mut applied = "v".to_string();
    for _ in 0..n {
        applied = format!("({applied}) |> fun(y => y * y - y)");
    }
    // (2 and 0 are fixed points; the others fall towards 0, or rise to 2.)
    let inputs = Value::array(
        [2.0, 0.0, 1.0, 0.5, -0.25, 1.5, -1.0, 1e-3]
            .map(Value::F64)
            .to_vec(),
    );
    for (body, copies) in [(with_let, 0), (applied, 10)] {
        let source = format!("def f(xs: 8.f64) = xs |> mapSeq(fun(v => {body}))");
        let (program, f) = compiled(&source, &NatEnv::default(), &Options::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let mlir = f.payload().mlir();
        assert_eq!(mlir.matches("arith.mulf").count(), n + copies, "{mlir}");
        assert_eq!(mlir.matches("arith.subf").count(), n + copies, "{mlir}");
        agree(&program, &f, std::slice::from_ref(&inputs)).unwrap();
    }
}

#[test]
fn buffers_over_the_limits_are_errors_before_they_are_allocated() {
    let small = Options {
        limits: Limits::with_max_bytes(1 << 20),
        ..Options::default()
    };
    let scale = "def f(x: n.f32) = x |> mapSeq(fun(v => v * 2.0))";
    // A parameter over the limit, at translation.
    let e = compiled(scale, &sizes(&[("n", 1 << 20)]), &small)
        .err()
        .unwrap();
    assert!(
        matches!(&e, Error::Size { error, .. } if error.what == "parameter `x`" && error.elements == 1 << 20),
        "{e}"
    );
    // 2^40 elements, over the machine's memory.
    let e = compiled(scale, &sizes(&[("n", 1 << 40)]), &Options::default())
        .err()
        .unwrap();
    assert!(e.to_string().contains("1099511627776 elements"), "{e}");
    let e = compiled(
        "def f = generate(fun(i => 1.0)) : 1099511627776.f32",
        &NatEnv::default(),
        &Options::default(),
    )
    .err()
    .unwrap();
    assert!(
        matches!(&e, Error::Size { error, .. } if error.what == "the result"),
        "{e}"
    );
    // A buffer of the program's own, inside a loop.
    let e = compiled(
        "def f(x: 4.f32) = x |> mapSeq(fun(v => generate(fun(i => v)) : 1000000.f32 |> padCst(1, 1, 0.0) |> mapSeq(fun(w => w)) |> reduceSeq(add, 0.0)))",
        &NatEnv::default(),
        &small,
    )
    .err()
    .unwrap();
    assert!(
        matches!(&e, Error::Size { error, span } if error.what == "a buffer" && span.is_some()),
        "{e}"
    );
    // Each buffer fits, all of a call's together do not.
    let (_, f) = compiled(scale, &sizes(&[("n", 150_000)]), &small).unwrap();
    let x = Value::array(vec![Value::F32(1.0); 150_000]);
    let e = f.run(&[x]).err().unwrap();
    assert!(
        matches!(&e, Error::Size { error, .. } if error.what == "the buffers of a call"),
        "{e}"
    );
}

#[test]
fn inputs_that_do_not_fit_are_input_errors() {
    let (_, f) = compiled(
        "def f(x: 4.f32) = x |> mapSeq(fun(v => v))",
        &NatEnv::default(),
        &Options::default(),
    )
    .unwrap();
    let e = f.run(&[]).err().unwrap();
    assert!(matches!(e, Error::Input { .. }), "{e}");
    let e = f
        .run(&[Value::array(vec![Value::F32(1.0); 3])])
        .err()
        .unwrap();
    assert!(e.to_string().contains("an array of 3"), "{e}");
    let e = f
        .run(&[Value::array(vec![Value::I32(1); 4])])
        .err()
        .unwrap();
    assert!(e.to_string().contains("expected a f32"), "{e}");
}

#[test]
fn numbers_made_indices_out_of_range_are_errors_not_reads_outside_a_buffer() {
    let (program, f) = compiled(
        "def f(x: 4.f32, i: i64) = idx(natAsIndex(4)(i), x)",
        &NatEnv::default(),
        &Options::default(),
    )
    .unwrap();
    let x = Value::array((1..=4).map(|v| Value::F32(v as f32)).collect());
    for i in 0..4 {
        agree(&program, &f, &[x.clone(), Value::I64(i)]).unwrap();
    }
    for i in [4, -1, i64::MAX, i64::MIN] {
        let (t, op) = trap(agree(&program, &f, &[x.clone(), Value::I64(i)]));
        assert_eq!((t, op), (Trap::IndexOutOfRange { bound: 4 }, "natAsIndex"));
    }
}

#[test]
fn casts_of_floats_out_of_range_give_what_the_interpreter_gives() {
    let floats = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        3e9,
        -3e9,
        1e30,
        -1e30,
        2.7,
        -2.7,
        0.0,
    ];
    for (from, to) in [
        ("f32", "i32"),
        ("f64", "i32"),
        ("f32", "i64"),
        ("f64", "i64"),
        ("f64", "bool"),
    ] {
        let n = floats.len();
        let source = format!("def f(x: {n}.{from}) = x |> mapSeq(fun(v => cast(v) : {to}))");
        let (program, f) = compiled(&source, &NatEnv::default(), &Options::default()).unwrap();
        let x = Value::array(
            floats
                .iter()
                .map(|v| match from {
                    "f32" => Value::F32(*v as f32),
                    _ => Value::F64(*v),
                })
                .collect(),
        );
        agree(&program, &f, &[x]).unwrap_or_else(|e| panic!("{source}: {e}"));
    }
    // An i64 becomes an f32 by way of an f64 (rounded twice, as the interpreter does).
    let (program, f) = compiled(
        "def f(x: 3.i64) = x |> mapSeq(fun(v => cast(v) : f32))",
        &NatEnv::default(),
        &Options::default(),
    )
    .unwrap();
    let x = Value::array(
        [i64::MAX, (1 << 53) + 1, -(1 << 60) - 1]
            .map(Value::I64)
            .to_vec(),
    );
    agree(&program, &f, &[x]).unwrap();
}

#[test]
fn every_cast_and_not_is_a_kernel_that_computes_what_the_interpreter_computes() {
    // Each scalar type to each, and `not`: a structured kernel, its values the
    // interpreter's on values at the edges.
    let values = |s: &str| -> Vec<Value> {
        let floats = [f64::NAN, -3e9, -2.7, -0.0, 0.5, 1.0, 2.7, 3e9];
        (0..8)
            .map(|k| match s {
                "bool" => Value::Bool(k % 3 == 0),
                "i32" => Value::I32([i32::MIN, -7, -1, 0, 1, 2, 7, i32::MAX][k]),
                "i64" => Value::I64([i64::MIN, -(1 << 40), -1, 0, 1, 3, 1 << 53, i64::MAX][k]),
                "f32" => Value::F32(floats[k] as f32),
                _ => Value::F64(floats[k]),
            })
            .collect()
    };
    let types = ["bool", "i32", "i64", "f32", "f64"];
    let mut bodies: Vec<(String, &str)> = types
        .iter()
        .flat_map(|from| {
            types
                .iter()
                .map(move |to| (format!("cast(v) : {to}"), *from))
        })
        .collect();
    bodies.push(("not(v)".to_string(), "bool"));
    for (body, from) in &bodies {
        let source = format!("def f(x: 8.{from}) = x |> map(fun(v => {body}))");
        let (program, f) = compiled(&source, &NatEnv::default(), &Options::default()).unwrap();
        agree(&program, &f, &[Value::array(values(from))])
            .unwrap_or_else(|e| panic!("{source}: {e}"));
    }
}

#[test]
fn an_index_as_a_number_is_its_position_in_the_kernel_s_loops() {
    // Each element plus its position, the positions counted through a split: a
    // structured kernel, its rows in parallel or not.
    let x = Value::array((0..24).map(Value::I64).collect());
    for map in ["mapSeq", "mapPar"] {
        let source = format!(
            "def f(x: 24.i64) = zip(x, generate(fun(i => indexAsNat(i))) : 24.i64) |> split(6) \
             |> {map}(fun(r => r |> mapSeq(fun(p => fst(p) * 100i64 + snd(p))))) |> join"
        );
        let (program, f) = compiled(&source, &NatEnv::default(), &Options::default()).unwrap();
        agree(&program, &f, std::slice::from_ref(&x)).unwrap();
    }
}

#[test]
fn reductions_nested_as_deep_as_the_bridge_allows_compile_and_run() {
    // Each level a reduction (of one element) around the next, the element read at an
    // index computed from data: one kernel per level (a reduction inside another
    // computation is a kernel of its own), which MLIR parses, schedules and compiles
    // on this test thread's small stack.
    let levels = 250;
    let f = (0..levels).fold("fun(v => v * 2.0)".to_string(), |f, _| {
        format!(
            "fun(v => generate(fun(i => [v] |> idx(natAsIndex(1, cast(v * 0.0) : i64)))) : 1.f32 \
             |> mapSeq({f}) |> reduceSeq(add, 0.0))"
        )
    });
    let source = format!("def f(x: f32) = x |> {f}");
    let (program, f) = compiled(&source, &NatEnv::default(), &Options::default()).unwrap();
    assert_eq!(f.payload().kernels, levels);
    let result = agree(&program, &f, &[Value::F32(1.5)]).unwrap();
    assert_eq!(result.to_json().unwrap(), serde_json::json!(3.0));
}

#[test]
fn a_module_llvm_cannot_compile_is_an_error_not_a_crash() {
    // A point of `auto` on the pooling that its search met: at this size its lowered
    // module keeps an `unrealized_conversion_cast` inside an OpenMP loop, which LLVM
    // cannot translate. MLIR then makes no execution engine; calling into that null
    // engine crashed the process (a whole search with it). It must be an error that
    // says so, or, once the lowering handles it, code that computes what the plain
    // loops compute.
    let source = std::fs::read_to_string(format!(
        "{}/examples/rise/ops/maxpool.rise",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let nats = sizes(&[("c", 64), ("h", 55), ("w", 55)]);
    let strategy = "DFNF ; try(fuseReduceMap @ topDown) ; tileNDList([32, 8, 4]) @ \
        outermost(mapNest(3)) ;; reorder([1, 2, 3, 4, 5, 7, 6]) ;; (unroll <+ reduceSeqUnroll) \
        @ innermost(isReduceSeq <+ isReduce) ;; vectorize(4) @ innermost(isFullyAppliedMap) \
        ;; id ; parallel @ outermost(isApplied(isMap))";
    let program = Program::load(&source, None).unwrap();
    let strategy = elevate::rise::registry().parse(strategy).unwrap();
    let options = Options::default();
    match compile(&program, &nats, Some(&strategy), &options) {
        Err(e) => assert!(
            e.to_string()
                .contains("LLVM could not translate or compile"),
            "{e}"
        ),
        Ok(fast) => {
            let plain = compile(&program, &nats, None, &options).unwrap();
            let term = fast.payload().program.clone();
            let inputs = elevate::rise::io::random_inputs(
                &elevate::rise::io::signature(&term),
                &NatEnv::default(),
                3,
            )
            .unwrap();
            let (a, b) = (fast.run(&inputs).unwrap(), plain.run(&inputs).unwrap());
            assert!(elevate::rise::io::approx_eq(
                &a.to_json().unwrap(),
                &b.to_json().unwrap()
            ));
        }
    }
}

#[test]
fn empty_arrays_are_structured_a_reduction_of_none_being_its_start() {
    for (source, kernels, expected) in [
        (
            "def f(x: 4.0.f32) = x |> map(fun(r => r |> reduce(add, 1.5)))",
            1,
            serde_json::json!([1.5, 1.5, 1.5, 1.5]),
        ),
        // Nothing to write: no kernel.
        (
            "def f(x: 0.4.f32) = x |> map(map(fun(v => v * 2.0)))",
            0,
            serde_json::json!([]),
        ),
        (
            "def f(x: 3.0.i32) = x |> map(fun(r => r |> map(fun(v => v + 1)) |> reduce(max, 7)))",
            1,
            serde_json::json!([7, 7, 7]),
        ),
    ] {
        let term = super::lowered(source, &NatEnv::default(), "id");
        let p = super::payload("f", &term);
        assert!(p.transform().is_some(), "{source}");
        assert_eq!(p.kernels, kernels, "{source}: {}", p.mlir());
        let (found, interpreted) = super::compiled_and_interpreted(&term, 0);
        assert_eq!(found, interpreted, "{source}");
        assert_eq!(found, expected, "{source}");
    }
}
