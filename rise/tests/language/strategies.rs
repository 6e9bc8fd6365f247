//! The loop-nest strategies and the seven ELEVATE matrix-multiplication strategies:
//! each result re-parses, type-checks to the input's type and computes the same
//! values as the input (the interpreter is the oracle).

use super::{example, load};
use elevate_core::{Context, Traversable as _};
use elevate_rise::nat::NatVar;
use elevate_rise::{infer, io, print_definition, print_term, rules, NatEnv, Program, Term};

/// Sizes `n = k = m = size` for the matmul example.
fn square(size: i64) -> NatEnv {
    let mut nats = NatEnv::default();
    for name in ["n", "k", "m"] {
        nats.insert(NatVar::Named(name.into()), size);
    }
    nats
}

/// Prints `rewritten` as a definition, loads the text again, and checks that it has
/// `original`'s type and computes its values on random inputs.
fn reloads_with_same_meaning(original: &Program, rewritten: &Term, nats: &NatEnv) -> Program {
    let text = print_definition(&original.entry().name, rewritten);
    let reloaded = Program::load(&text, None)
        .unwrap_or_else(|e| panic!("the result does not load again: {e}\n{text}"));
    assert_eq!(
        reloaded.entry().term.ty(),
        original.entry().term.ty(),
        "{text}"
    );
    for seed in 0..2 {
        let expected = original.eval_random(nats, seed).unwrap().to_json().unwrap();
        let found = reloaded
            .eval_random(nats, seed)
            .unwrap_or_else(|e| panic!("{e}\n{text}"))
            .to_json()
            .unwrap();
        assert!(io::approx_eq(&expected, &found), "different values\n{text}");
    }
    reloaded
}

#[test]
fn the_seven_matmul_strategies_keep_the_meaning_of_matmul() {
    let original = load(&example("matmul.rise"));
    let nats = square(64);
    for (name, strategy) in rules::matmul_strategies() {
        let mut cx = Context::default();
        let rewritten = strategy
            .apply(&original.entry().term, &mut cx)
            .unwrap_or_else(|e| panic!("{name} failed: {e}"));
        assert!(cx.stats().steps > 0, "{name} did nothing");
        let text = print_term(&rewritten);
        reloads_with_same_meaning(&original, &rewritten, &nats);
        let has = |s: &str| text.contains(s);
        match name {
            "baseline" => assert!(has("reduceSeq") && !has("split"), "{text}"),
            "blocking" | "loopPerm" => assert!(has("split(32)") && has("split(4)"), "{text}"),
            "vectorization" => assert!(has("asVector(32)"), "{text}"),
            "arrayPacking" => assert!(has("toMem") && has("let"), "{text}"),
            "cacheBlocks" => assert!(has("reduceSeqUnroll"), "{text}"),
            "par" => assert!(has("mapPar") && has("asVector(32)"), "{text}"),
            _ => unreachable!("{name}"),
        }
    }
}

fn strategy(text: &str) -> elevate_core::Strategy<Term> {
    elevate_rise::registry()
        .parse(text)
        .unwrap_or_else(|e| panic!("{}", e.render("strategy", text)))
}

fn rewrite(source: &str, text: &str) -> (Program, Term) {
    let program = load(source);
    let result = strategy(text)
        .apply(&program.entry().term, &mut Context::default())
        .unwrap_or_else(|e| panic!("{text}: {e}"));
    (program, result)
}

#[test]
fn tiling_a_two_deep_nest_blocks_both_dimensions_and_keeps_the_values() {
    let source = "def f(x: 8.12.f32) = x |> map(fun(r => r |> map(fun(v => v * 2.0))))";
    let (program, tiled) = rewrite(source, "DFNF ; (tile(4, 3) @ outermost(mapNest(2)))");
    let text = print_term(&tiled);
    assert!(
        text.contains("split(4)") && text.contains("split(3)"),
        "{text}"
    );
    reloads_with_same_meaning(&program, &tiled, &NatEnv::default());
    // Elevate's expected shape: J ∘ **J ∘ *T ∘ ****f ∘ *T ∘ **S ∘ S.
    let expected = elevate_rise::parse_term(
        "fun(x: 8.12.f32 => x |> split(4) |> map(fun(x2 => x2 |> map(fun(x3 => x3 |> split(3))))) \
         |> map(fun(x2 => x2 |> transpose)) \
         |> map(fun(x2 => x2 |> map(fun(x3 => x3 |> map(fun(x4 => x4 |> map(fun(v => v * 2.0)))))))) \
         |> map(fun(x2 => x2 |> transpose)) |> map(fun(x2 => x2 |> map(fun(x3 => x3 |> join)))) |> join)",
    )
    .unwrap();
    assert!(tiled.erase_types().alpha_eq(&expected), "{text}");
    let (_, nested) = rewrite(source, "DFNF ; (tileND(2)(2) @ outermost(mapNest(2)))");
    reloads_with_same_meaning(&program, &nested, &NatEnv::default());
}

#[test]
fn tiling_three_dimensions_keeps_the_values() {
    let source =
        "def f(x: 4.6.8.f32) = x |> map(fun(a => a |> map(fun(b => b |> map(fun(v => v + 1.0))))))";
    let (program, tiled) = rewrite(
        source,
        "DFNF ; (tileNDList([2, 3, 4]) @ outermost(mapNest(3)))",
    );
    let text = print_term(&tiled);
    for n in [2, 3, 4] {
        assert!(text.contains(&format!("split({n})")), "{text}");
    }
    reloads_with_same_meaning(&program, &tiled, &NatEnv::default());
}

#[test]
fn reorder_moves_a_reduction_outside_a_map_and_swaps_maps() {
    // Row sums: the reduction moves outside the map over rows.
    let source = "def f(x: 4.6.f32) = x |> map(fun(r => r |> reduce(add, 0.0)))";
    let (program, reordered) = rewrite(source, "reorder([2, 1])");
    let text = print_term(&reordered);
    assert!(
        text.starts_with("fun(x: 4.6.f32 => x |> transpose |> reduce"),
        "{text}"
    );
    reloads_with_same_meaning(&program, &reordered, &NatEnv::default());
    let source = "def f(x: 4.6.f32) = x |> map(fun(r => r |> map(fun(v => v * v))))";
    let (program, swapped) = rewrite(source, "reorder([2, 1])");
    reloads_with_same_meaning(&program, &swapped, &NatEnv::default());
    assert!(print_term(&swapped).contains("transpose"));
    // Not a permutation: an error where it is written, not a panic.
    let e = elevate_rise::registry()
        .parse("reorder([1, 1])")
        .err()
        .unwrap();
    assert!(e.message.contains("not a permutation"), "{}", e.message);
}

#[test]
fn vectorize_and_store_in_memory() {
    let source = "def f(x: 64.f32, y: 64.f32) = zip(x, y) |> map(fun(p => fst(p) * snd(p) + 1.0))";
    let (program, vectorized) = rewrite(source, "DFNF ; (vectorize(8) @ topDown)");
    let text = print_term(&vectorized);
    assert!(
        text.contains("asVector(8)") && text.contains("vectorFromScalar"),
        "{text}"
    );
    reloads_with_same_meaning(&program, &vectorized, &NatEnv::default());
    // 6 does not divide 64: no vectorization.
    assert!(strategy("vectorize(6) @ topDown")
        .apply(&program.entry().term, &mut Context::default())
        .is_err());
    let source = "def f(a: 8.4.f32, b: 4.8.f32) = a |> map(fun(r => transpose(b) |> map(fun(c => zip(r, c) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0)))))";
    let (program, stored) = rewrite(source, "storeInMemory(isTransposedB, copyAfter) @ inLambda");
    let text = print_term(&stored);
    assert!(
        text.contains("toMem") && text.matches("transpose").count() == 1,
        "{text}"
    );
    reloads_with_same_meaning(&program, &stored, &NatEnv::default());
}

#[test]
fn vectorize_puts_windows_read_at_constant_positions_side_by_side() {
    // A 2-D stencil: each window's neighbours become vectors of 8 windows' neighbours.
    let source = "def f(x: 6.18.f32) = x |> map(slide(3, 1)) |> slide(3, 1) |> map(transpose)
      |> map(map(fun(nbh => 0.5 * (idx(natAsIndex(3, 0i64), idx(natAsIndex(3, 1i64), nbh))
         + idx(natAsIndex(3, 2i64), idx(natAsIndex(3, 1i64), nbh))))))";
    let (program, vectorized) = rewrite(
        source,
        "DFNF ; (vectorize(8) @ innermost(isFullyAppliedMap))",
    );
    let text = print_term(&vectorized);
    assert!(
        text.contains("asVector(8)") && text.contains("vectorFromScalar(0.5)"),
        "{text}"
    );
    reloads_with_same_meaning(&program, &vectorized, &NatEnv::default());
    // A window reduced (not read at constant positions) stays on scalars.
    let source = "def f(x: 18.f32) = x |> slide(3, 1) |> map(fun(w => w |> reduce(add, 0.0)))";
    let program = load(source);
    assert!(strategy("vectorize(8) @ topDown")
        .apply(&program.entry().term, &mut Context::default())
        .is_err());
}

#[test]
fn default_lowering_makes_every_example_low_level() {
    for name in ["dot.rise", "scal.rise", "matmul.rise", "conv2d.rise"] {
        let program = load(&example(name));
        let lowered = rules::default_lowering()
            .apply(&program.entry().term, &mut Context::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let text = print_term(&lowered);
        assert!(
            !text.contains(" reduce(") && !text.contains("|> reduce("),
            "{name} still has reduce: {text}"
        );
        assert!(computing_maps_are_loops(&lowered), "{name}: {text}");
        let nats = square(8);
        let typed = infer(&lowered).unwrap();
        assert_eq!(typed.ty(), program.entry().term.ty());
        let _ = typed.size();
        reloads_with_same_meaning(&program, &lowered, &nats);
    }
}

#[test]
fn separable_convolution_becomes_a_vertical_then_a_horizontal_convolution() {
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/rise/separable.rise"
    ))
    .unwrap();
    let (program, separated) = rewrite(&source, "separableConvolution");
    let text = print_term(&separated);
    // P >> Sv >> *(T >> *(Dv)) >> *(Sh >> *(Dh)): the vertical dot products over the
    // whole image, then a horizontal sliding window over their results.
    let vertical = text.find("zip(wv, ").expect("a vertical dot product");
    let horizontal = text.find("zip(wh, ").expect("a horizontal dot product");
    let second_slide = text.rfind("slide(3, 1)").unwrap();
    assert!(
        vertical < second_slide && second_slide < horizontal,
        "{text}"
    );
    assert!(
        !text.contains("join"),
        "the 2-D dot product is gone: {text}"
    );
    let mut nats = NatEnv::default();
    nats.insert(NatVar::Named("n".into()), 7);
    nats.insert(NatVar::Named("m".into()), 9);
    reloads_with_same_meaning(&program, &separated, &nats);
    // Weights that are not an outer product: the rule does not apply.
    let (_, unchanged) = rewrite(&example("conv2d.rise"), "try(separableConvolution)");
    assert!(print_term(&unchanged).contains("join"));
}

#[test]
fn strategy_text_with_programs_and_library_strategies_prints_back_to_itself() {
    let registry = elevate_rise::registry();
    for text in [
        "storeInMemory(isEqualTo(\"transpose(b)\"), copyAfter) @ inLambda",
        "contains(\"zip(arow, bcol)\") ; not(contains(\"fun(x => x)\"))",
        "tile(32, 32) @ outermost(mapNest(2))",
        "tileND(2)(4) ; tileNDList([2, 3, 4]) ; reorder([1, 2, 5, 6, 3, 4])",
        "vectorize(32) @ innermost(isFullyAppliedMap) ;; parallel @ outermost(isApplied(isMap))",
        "blockedReduce(4) ; splitStrategy(2) ; moveTowardsArgument(2)(liftReduce)",
        "baseline ; blocking ; vectorization ; loopPerm ; arrayPacking ; cacheBlocks ; par",
        "separableConvolution ; defaultLowering",
        "argumentOf(reduceSeq, body(id)) <+ isPrimitive(mapSeq) <+ freduce(id)",
    ] {
        let strategy = registry
            .parse(text)
            .unwrap_or_else(|e| panic!("{}", e.render("strategy", text)));
        let printed = strategy.to_string();
        let again = registry
            .parse(&printed)
            .unwrap_or_else(|e| panic!("{}", e.render("printed", &printed)));
        assert_eq!(again.to_string(), printed, "{text}");
    }
    let program = load(&example("matmul.rise"));
    let term = &program.entry().term;
    let run = |text: &str| strategy(text).apply(term, &mut Context::default());
    assert!(run("contains(\"zip(arow, bcol)\")").is_ok());
    assert!(run("contains(\"zip(bcol, arow)\")").is_err());
    assert!(run("isEqualTo(\"transpose(b)\")").is_err());
    let stored = run("storeInMemory(isEqualTo(\"transpose(b)\"), id) @ inLambda").unwrap();
    assert!(print_term(&stored).contains("let x = b |> transpose |> toMem in"));
    let Err(bad) = registry.parse("isEqualTo(\"map(\")") else {
        panic!("a malformed program argument parses");
    };
    assert!(bad.to_string().contains("not a RISE program"), "{bad}");
}

#[test]
fn mapped_reaches_into_nested_maps_and_fissions_back() {
    let source = "def f(x: 4.6.f32) = x |> map(fun(r => r |> map(fun(v => v * 2.0)))) |> map(fun(r => r |> reduce(add, 0.0)))";
    let (program, lowered) = rewrite(
        source,
        "body(mapped(isFullyAppliedReduce ; function(function(function(reduceSeq)))))",
    );
    let text = print_term(&lowered);
    assert!(
        text.contains("reduceSeq") && text.matches("|> map(").count() == 2,
        "{text}"
    );
    reloads_with_same_meaning(&program, &lowered, &NatEnv::default());
}

#[test]
fn reduce_map_undoes_lift_reduce() {
    let source = "def f(x: 4.6.f32) = x |> map(fun(r => r |> reduce(add, 0.0)))";
    let (program, there_and_back) = rewrite(source, "topDown(liftReduce) ; topDown(reduceMap)");
    assert!(
        there_and_back
            .erase_types()
            .alpha_eq(&program.entry().term.erase_types()),
        "{}",
        print_term(&there_and_back)
    );
}

/// Whether the bare primitive `p` occurs in `t`.
fn has_primitive(t: &Term, p: elevate_rise::prim::Prim) -> bool {
    matches!(t.expr(), elevate_rise::Expr::Prim(q) if *q == p)
        || (0..t.arity()).any(|i| has_primitive(t.child(i), p))
}

/// Whether every `map(f)` left has an `f` that only rearranges data (no arithmetic,
/// comparison, reduction or lambda on scalars: what `defaultLowering` leaves as a view).
fn computing_maps_are_loops(t: &Term) -> bool {
    use elevate_rise::prim::Prim;
    fn computes(f: &Term) -> bool {
        use elevate_rise::types::TypeKind;
        use Prim::*;
        let here = match f.expr() {
            elevate_rise::Expr::Prim(p) => matches!(
                p,
                Neg | Not
                    | Add
                    | Sub
                    | Mul
                    | Div
                    | Mod
                    | Max
                    | Min
                    | Exp
                    | Sqrt
                    | Abs
                    | Lt
                    | Gt
                    | Equal
                    | Cast
                    | Reduce
                    | ReduceSeq
                    | ReduceSeqUnroll
            ),
            elevate_rise::Expr::Lambda(..) => matches!(
                f.ty().map(|t| t.kind()),
                Some(TypeKind::Fun(p, _)) if matches!(p.kind(), TypeKind::Scalar(_))
            ),
            _ => false,
        };
        here || (0..f.arity()).any(|i| computes(f.child(i)))
    }
    if let elevate_rise::Expr::App(m, f) = t.expr() {
        if matches!(m.expr(), elevate_rise::Expr::Prim(Prim::Map)) && computes(f) {
            return false;
        }
    }
    (0..t.arity()).all(|i| computing_maps_are_loops(t.child(i)))
}

#[test]
fn default_lowering_and_tiling_keep_random_programs_meaning() {
    use elevate_rise::generate::Generator;
    use elevate_rise::prim::Prim;
    let (mut lowered, mut tiled) = (0, 0);
    for seed in 0..80u64 {
        let mut generator = Generator::new(seed + 5000);
        generator.favourite = Some(if seed % 2 == 0 {
            Prim::Map
        } else {
            Prim::Reduce
        });
        let term = infer(&generator.program(10 + (seed % 20) as usize)).unwrap();
        let program = Program::load(&print_definition("f", &term), None).unwrap();
        let low = rules::default_lowering()
            .apply(&term, &mut Context::default())
            .unwrap_or_else(|e| panic!("{e}\n{}", print_term(&term)));
        assert!(!has_primitive(&low, Prim::Reduce), "{}", print_term(&low));
        assert!(computing_maps_are_loops(&low), "{}", print_term(&low));
        reloads_with_same_meaning(&program, &low, &NatEnv::default());
        lowered += 1;
        if let Ok(t) = strategy("DFNF ; (tile(2, 2) @ outermost(mapNest(2)))")
            .apply(&term, &mut Context::default())
        {
            reloads_with_same_meaning(&program, &t, &NatEnv::default());
            tiled += 1;
        }
    }
    println!("lowered {lowered} random programs, tiled {tiled}");
    assert_eq!(lowered, 80);
}

#[test]
fn every_registered_name_prints_back_to_its_text() {
    let registry = elevate_rise::registry();
    let mut checked = 0;
    for entry in registry.entries() {
        let text = match entry.params.as_str() {
            "" => entry.name.clone(),
            "(n)" | "(d)" | "(u)" | "(l)" => format!("{}(2)", entry.name),
            "(s)" => format!("{}(id)", entry.name),
            "(p)(s)" => format!("{}(isMap)(id)", entry.name),
            _ => continue,
        };
        let Ok(strategy) = registry.parse(&text) else {
            panic!("{text} does not parse");
        };
        let printed = strategy.to_string();
        let again = registry.parse(&printed).unwrap_or_else(|e| {
            panic!(
                "{text} prints as {printed}: {}",
                e.render("printed", &printed)
            )
        });
        assert_eq!(again.to_string(), printed, "{text}");
        checked += 1;
    }
    assert!(checked > 150, "{checked}");
}

/// `text` applied to the entry of example `name` under `budget`.
fn run_with(
    name: &str,
    text: &str,
    budget: elevate_core::Budget,
) -> (Result<Term, elevate_core::Failure>, elevate_core::Stats) {
    let program = load(&example(name));
    let mut cx = Context::new(budget);
    let result = strategy(text).apply(&program.entry().term, &mut cx);
    (result, cx.stats())
}

#[test]
fn absurd_location_arguments_are_bounded_by_the_program() {
    let unlimited = elevate_core::Budget::unlimited;
    // mapNest(d) walks down at most as far as the program goes.
    let (result, _) = run_with(
        "matmul.rise",
        "tile(32, 32) @ outermost(mapNest(99999999))",
        unlimited(),
    );
    assert_eq!(result.unwrap_err().strategy(), "topDown");
    let (result, _) = run_with(
        "matmul.rise",
        "tile(32, 32) @ outermost(mapNest(2))",
        unlimited(),
    );
    assert!(print_term(&result.unwrap()).contains("split(32)"));
    for text in [
        "position(1000000000000)(id)",
        "skip(1000000000000)(id)",
        "moveTowardsArgument(100000)(id)",
        "id @ applyN(100000, one)",
    ] {
        let (result, stats) = run_with("matmul.rise", text, unlimited());
        assert!(!result.unwrap_err().is_budget(), "{text}");
        assert!(stats.applications < 1_000, "{text}: {stats:?}");
    }
}

#[test]
fn budgets_stop_endless_rise_strategies_within_a_tenth() {
    use elevate_core::{Budget, BudgetLimit, FailureKind};
    // Each application of `normalize(splitJoin(1))` makes the program larger, and
    // the next ones slower: a small limit.
    const LIMIT: u64 = 3_000;
    for text in ["repeatN(100000000000, id)", "normalize(splitJoin(1))"] {
        let (result, stats) = run_with("dot.rise", text, Budget::unlimited().applications(LIMIT));
        assert_eq!(
            result.unwrap_err().kind(),
            FailureKind::Budget(BudgetLimit::Applications(LIMIT)),
            "{text}"
        );
        assert!(
            (LIMIT..=LIMIT + LIMIT / 10).contains(&stats.applications),
            "{text}: {stats:?}"
        );
    }
    let budget = Budget::unlimited().time(std::time::Duration::from_millis(100));
    let (result, _) = run_with("dot.rise", "normalize(splitJoin(1))", budget);
    assert_eq!(
        result.unwrap_err().kind(),
        FailureKind::Budget(BudgetLimit::Time(100))
    );
}

#[test]
fn loop_nest_strategies_say_when_a_depth_is_too_large() {
    let registry = elevate_rise::registry();
    for (text, fragment) in [
        ("tileND(65)(2)", "argument 1 is too large: at most 64"),
        (
            "interchange(1000000)",
            "argument 1 is too large: at most 64",
        ),
        (
            "loopInterchangeAtLevel(99999999)",
            "argument 1 is too large",
        ),
        (
            "moveTowardsArgument(100001)(id)",
            "too large: at most 100000",
        ),
        ("tileND(-1)(2)", "must be non-negative"),
    ] {
        let e = registry.parse(text).map(|s| s.to_string()).unwrap_err();
        assert!(e.message.contains(fragment), "{text}: {}", e.message);
        assert!(e.offset > 0, "{text}: points at the argument");
    }
}

#[test]
fn library_strategies_print_their_arguments_only_when_printed() {
    // f_i passes `s ; s` on: f0 receives a strategy of 2^40 leaves, shared, whose
    // text no strategy may write when it is built.
    let mut text = String::from(
        "def f0(s) = stage(s) <+ mapped(s) <+ freduce(s) <+ fmapRNF(s) <+ inLambda(s) \
         <+ moveTowardsArgument(2)(s)\n",
    );
    for i in 1..=40 {
        text.push_str(&format!("def f{i}(s) = f{}(s ; s)\n", i - 1));
    }
    text.push_str("f40(id)");
    let s = strategy(&text);
    // The definitions print in front, as written, and the reference as written.
    assert!(s.to_string() == text);
    let budget = elevate_core::Budget::unlimited().applications(10_000);
    let (result, stats) = {
        let program = load(&example("dot.rise"));
        let mut cx = Context::new(budget);
        (s.apply(&program.entry().term, &mut cx), cx.stats())
    };
    assert!(result.unwrap_err().is_budget(), "{stats:?}");
    // Small arguments still print in full.
    assert_eq!(
        strategy("stage(mapped(freduce(fmapRNF(inLambda(id)))))").to_string(),
        "stage(mapped(freduce(fmapRNF(inLambda(id)))))"
    );
}
