//! `vectorizeReduce(n)`, the vectorized reduction, against the interpreter: on random
//! reductions (operators, starts, element types, the work on each element, its three
//! forms, alone or inside a map), the rewritten program has the same type and, on
//! random inputs, the same values; where it does not apply, it says so by failing.

use elevate_core::Context;
use elevate_rise::{evaluate, infer, io, parse_term, print_term, rules, NatEnv, Term};
use quickcheck::{Arbitrary, Gen, QuickCheck, TestResult};

/// A reduction to vectorize: `op` from `init`, over `blocks * width` elements, in one
/// of three forms, on `f32` or `i32`, alone or per row of a matrix.
#[derive(Clone, Debug)]
struct Reduction {
    op: usize,
    work: usize,
    form: usize,
    width: i64,
    blocks: i64,
    integers: bool,
    per_row: bool,
    /// Whether `fuseReduceMap` runs first (the form `auto` meets).
    fuse: bool,
    /// The width given to the rule (usually `width`; sometimes one that does not divide).
    given: i64,
}

impl Arbitrary for Reduction {
    fn arbitrary(g: &mut Gen) -> Reduction {
        let width = *g.choose(&[2, 4, 8, 16]).unwrap();
        let given = if u8::arbitrary(g) % 8 == 0 {
            *g.choose(&[3, 5, 32]).unwrap()
        } else {
            width
        };
        Reduction {
            op: usize::arbitrary(g) % OPS.len(),
            work: usize::arbitrary(g) % WORK.len(),
            form: usize::arbitrary(g) % 3,
            width,
            blocks: i64::from(u8::arbitrary(g) % 6 + 1),
            integers: bool::arbitrary(g),
            per_row: bool::arbitrary(g),
            fuse: bool::arbitrary(g),
            given,
        }
    }
}

/// Operators, each with its start for `f32` and for `i32`.
const OPS: [(&str, &str, &str); 4] = [
    ("add", "0.0", "0"),
    ("mul", "1.0", "1"),
    ("max", "0.25", "1"),
    ("min", "0.5", "3"),
];

/// The work on each pair `p`, lane-wise; `K` is a constant of the element type.
const WORK: [&str; 4] = [
    "fst(p) * snd(p)",
    "fst(p) + K * snd(p)",
    "max(fst(p), snd(p))",
    "fst(p) - snd(p)",
];

impl Reduction {
    fn program(&self) -> String {
        let (op, init_f, init_i) = OPS[self.op];
        let (s, init, k) = match self.integers {
            true => ("i32", init_i, "2"),
            false => ("f32", init_f, "2.0"),
        };
        let len = self.width * self.blocks;
        let e = WORK[self.work].replace('K', k);
        let reduction = |xs: &str, ys: &str| match self.form {
            0 => format!("zip({xs}, {ys}) |> map(fun(p => {e})) |> reduce({op}, {init})"),
            1 => format!("zip({xs}, {ys}) |> reduceSeq(fun(acc, p => {op}(acc, {e})), {init})"),
            _ => format!("{xs} |> reduce({op}, {init})"),
        };
        match self.per_row {
            false => format!(
                "fun(x: {len}.{s} => fun(y: {len}.{s} => {}))",
                reduction("x", "y")
            ),
            true => format!(
                "fun(a: 3.{len}.{s} => fun(y: {len}.{s} => a |> map(fun(row => {}))))",
                reduction("row", "y")
            ),
        }
    }
}

fn values(term: &Term, seed: u64) -> serde_json::Value {
    let inputs = io::random_inputs(&io::signature(term), &NatEnv::default(), seed).unwrap();
    evaluate(term, &NatEnv::default(), &inputs)
        .unwrap_or_else(|e| panic!("{e}\n{}", print_term(term)))
        .to_json()
        .unwrap()
}

fn keeps_the_values(r: Reduction, seed: u64) -> TestResult {
    let text = r.program();
    let program = infer(&parse_term(&text).unwrap()).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let rule = elevate_rise::registry()
        .parse(&format!(
            "{}vectorizeReduce({}) @ innermost(isApplied(isApplied(isApplied(isReduce <+ isReduceSeq))))",
            if r.fuse { "try(fuseReduceMap @ topDown) ; " } else { "" },
            r.given
        ))
        .unwrap();
    let rewritten = match rule.apply(&program, &mut Context::default()) {
        Ok(t) => t,
        // It applies exactly where the width divides the length.
        Err(_) => return TestResult::from_bool((r.width * r.blocks) % r.given != 0),
    };
    if (r.width * r.blocks) % r.given != 0 {
        return TestResult::error(format!("applied with a width that does not divide\n{text}"));
    }
    let printed = print_term(&rewritten);
    let retyped = infer(&parse_term(&printed).unwrap())
        .unwrap_or_else(|e| panic!("{e}\n{text}\n=> {printed}"));
    if retyped.ty() != program.ty() || !printed.contains("vectorFromScalar") {
        return TestResult::error(format!("{text}\n=> {printed}"));
    }
    let (expected, found) = (values(&program, seed), values(&retyped, seed));
    match io::first_difference(&expected, &found) {
        None => TestResult::passed(),
        Some(d) => TestResult::error(format!("{d}\n{text}\n=> {printed}")),
    }
}

#[test]
fn vectorized_reductions_compute_what_the_reductions_compute() {
    QuickCheck::new()
        .tests(300)
        .quickcheck(keeps_the_values as fn(Reduction, u64) -> TestResult);
}

#[test]
fn the_rule_is_in_the_library_with_its_equation() {
    let info = rules::library()
        .into_iter()
        .find(|r| r.name.starts_with("vectorizeReduce"))
        .expect("vectorizeReduce in the catalogue");
    assert!(
        info.equation.contains("vectorFromScalar(init)"),
        "{}",
        info.equation
    );
    // A width below 2 is refused where it is written.
    let Err(err) = elevate_rise::registry().parse("vectorizeReduce(1)") else {
        panic!("a width of 1 is refused");
    };
    assert!(err.message.contains("at least 2"), "{}", err.message);
}

/// `auto` puts a reduction's elements in vector lanes where the reduction reads memory
/// in a row and the innermost map does not (gemv's rows), not where the map does (the
/// matmul's columns of a transposed input, a convolution's pixels).
#[test]
fn auto_vectorizes_the_reductions_that_read_in_a_row() {
    use elevate_rise::search::auto::Shape;
    use elevate_rise::search::Auto;
    let shape = |file: &str, nats: &[(&str, i64)]| {
        let mut env = NatEnv::default();
        for (n, v) in nats {
            env.insert(elevate_rise::nat::NatVar::Named((*n).into()), *v);
        }
        let term = super::load(&super::example(file))
            .instantiate(&env)
            .unwrap();
        Shape::of(&term).unwrap()
    };
    let gemv = shape("gemv.rise", &[("n", 64), ("m", 256)]);
    assert_eq!(
        (gemv.maps.as_slice(), gemv.reduction),
        (&[64][..], Some(256))
    );
    assert!(gemv.reduction_vectors);
    let text = Auto::default().text(&gemv);
    assert!(
        text.contains("tileNDList([8]) @ outermost(mapNest(1)) ;; vectorizeReduce(16)"),
        "{text}"
    );
    for (file, nats) in [
        ("matmul.rise", &[("n", 32), ("k", 32), ("m", 32)][..]),
        ("conv2d.rise", &[("n", 32), ("m", 32)]),
        ("stencil1d.rise", &[("n", 256)]),
    ] {
        let s = shape(file, nats);
        assert!(
            s.reduction.is_some() && !s.reduction_vectors,
            "{file}: {s:?}"
        );
        assert!(
            !Auto::default().text(&s).contains("vectorizeReduce"),
            "{file}"
        );
    }
    // A lone reduction: whole or in blocks, each on vectors or not.
    let dot = shape("dot.rise", &[("n", 4096)]);
    assert!(dot.maps.is_empty());
    let text = Auto::default().text(&dot);
    assert!(text.starts_with("{id, vectorizeReduce(4) @ "), "{text}");
    let blocks = text.find("splitJoin2(256)").expect("blocks of 256");
    assert!(
        text[blocks..].contains("; {id, vectorizeReduce(4) @ "),
        "{text}"
    );
}
