//! `auto`: a space of schedules for every kind of program, every point a strategy that
//! applies (and computes what the program computes) or fails cleanly; `par` is a point;
//! the model finds points faster than `defaultLowering` alone.

use super::loop_nests::MATMUL;
use crate::search::{fingerprint, Auto, ModelCost};
use crate::{evaluate, io, registry, NatEnv, Program, Term};
use elevate_core::{Context, Traversable};
use elevate_strategies::search::{Cost, Space, State};
use rand::{RngExt, SeedableRng};
use std::sync::Arc;

fn instance(source: &str, nats: &[(&str, i64)]) -> Term {
    let program = Program::load(source, None).unwrap_or_else(|e| panic!("{e}"));
    let mut env = NatEnv::default();
    for (n, v) in nats {
        env.insert(crate::nat::NatVar::Named((*n).into()), *v);
    }
    program.instantiate(&env).unwrap()
}

/// Whether `found` computes what `term` computes on random inputs.
fn same_values(found: &Term, term: &Term) -> bool {
    let inputs = io::random_inputs(&io::signature(term), &NatEnv::default(), 1).unwrap();
    let run = |t: &Term| {
        evaluate(t, &NatEnv::default(), &inputs)
            .unwrap()
            .to_json()
            .unwrap()
    };
    io::approx_eq(&run(found), &run(term))
}

fn auto() -> Space<Term> {
    Space::parse_with_auto("auto", Arc::new(registry()), Auto::default()).unwrap()
}

/// The point reached by taking, at each decision, the first option `pick` accepts.
fn follow(start: State<Term>, picks: &[&dyn Fn(&str) -> bool]) -> State<Term> {
    let mut state = start;
    let mut picks = picks.iter();
    while !state.is_final() {
        let pick = picks.next().expect("a pick for each decision");
        let k = (0..state.options())
            .find(|&i| pick(&state.option_text(i).unwrap()))
            .unwrap_or_else(|| {
                let texts: Vec<String> = (0..state.options())
                    .map(|i| state.option_text(i).unwrap())
                    .collect();
                panic!("no option fits at decision {}: {texts:?}", state.depth())
            });
        state = state.choose(k).unwrap();
    }
    state
}

#[test]
fn par_is_a_point_of_the_matmul_s_space() {
    let term = instance(MATMUL, &[("n", 256), ("m", 256), ("k", 256)]);
    let start = auto().start(&term);
    // Tile sizes, splits, loop orders, vector widths, register tiles, the parallel
    // loop: thousands of points, not millions.
    let size = start.size_estimate();
    assert!((1000.0..100_000.0).contains(&size), "{size}");
    let point = follow(
        start,
        &[
            &|o| o.starts_with("packB ;; tileNDList([32, 32])"),
            &|o| o.contains("splitStrategy(4)"),
            &|o| o == "reorder([1, 2, 5, 3, 6, 4])",
            &|o| o == "unroll @ innermost(isReduceSeq)",
            &|o| o.starts_with("vectorize(32)"),
            &|o| o.starts_with("parallel"),
        ],
    );
    assert!(point.is_complete(), "{:?}", point.failure());
    let par = registry().parse("par ; defaultLowering").unwrap();
    let expected = par.apply(&term, &mut Context::default()).unwrap();
    assert!(point.program().alpha_eq(&expected), "{}", point.text());
    assert_eq!(fingerprint(point.program()), fingerprint(&expected));
    // The point replays as ordinary strategy text.
    let replayed = registry()
        .parse(&point.text())
        .unwrap()
        .apply(&term, &mut Context::default())
        .unwrap();
    assert!(replayed.alpha_eq(&expected));
}

#[test]
fn a_product_no_tile_divides_has_padded_micro_kernels_as_points() {
    // 196 rows: no tile of 4 to 64 rows a register tile of 4 or 8 fits divides them,
    // so `auto` offers `microKernel` with cache tiles that pad least (200 rows by 4,
    // 208 by 8), which pads the product (`padNest`) and computes what it computes.
    let term = instance(MATMUL, &[("n", 196), ("m", 64), ("k", 32)]);
    let start = auto().start(&term);
    let options: Vec<String> = (0..start.options())
        .map(|i| start.option_text(i).unwrap())
        .collect();
    let padded: Vec<&String> = options
        .iter()
        .filter(|o| o.contains("microKernel("))
        .collect();
    assert!(
        padded.contains(&&"microKernel(40, 64, 4, 64)".to_string()),
        "{options:?}"
    );
    let point = follow(
        start,
        &[&|o| o == "microKernel(40, 64, 4, 64)", &|o| o == "id"],
    );
    assert!(point.is_complete(), "{:?}", point.failure());
    assert!(crate::print_term(point.program()).contains("padCst(0, 4,"));
    assert!(same_values(point.program(), &term));
}

#[test]
fn a_register_tile_is_a_point_and_the_model_prefers_it_to_par() {
    let term = instance(MATMUL, &[("n", 1024), ("m", 1024), ("k", 1024)]);
    let point = follow(
        auto().start(&term),
        &[
            &|o| o.starts_with("packB ;; tileNDList([4, 32])"),
            &|o| o.starts_with("{id, reorder"),
            &|o| o == "reorder([1, 2, 5, 3, 4])",
            &|o| o.starts_with("vectorize(32)"),
            &|o| o.starts_with("function(mapSeqUnroll)"),
            &|o| o.starts_with("parallel"),
        ],
    );
    assert!(point.is_complete(), "{:?}", point.failure());
    let printed = crate::print_term(point.program());
    assert!(printed.contains("mapSeqUnroll"), "{printed}");
    let model = ModelCost::default();
    let tile = model.evaluate(point.program()).unwrap().cost;
    let par = registry().parse("par").unwrap();
    let par = model
        .evaluate(&par.apply(&term, &mut Context::default()).unwrap())
        .unwrap()
        .cost;
    assert!(tile < par, "register tile {tile} ms, par {par} ms");
}

#[test]
fn register_tiles_inside_tiles_are_points_and_the_model_prefers_them_to_par() {
    let term = instance(MATMUL, &[("n", 1024), ("m", 1024), ("k", 1024)]);
    let model = ModelCost::default();
    let par = registry().parse("par").unwrap();
    let par = model
        .evaluate(&par.apply(&term, &mut Context::default()).unwrap())
        .unwrap()
        .cost;
    for (option, vector) in [
        (
            "packB ;; tileNDList([64, 64]) @ outermost(mapNest(2)) ;; registerTile(8, 32)",
            "asVector(32)",
        ),
        (
            "packB(64) ;; tileNDList([32, 64]) @ outermost(mapNest(2)) ;; registerTile(4, 64)",
            "asVector(64)",
        ),
    ] {
        let point = follow(
            auto().start(&term),
            &[&|o| o == option, &|o| o.starts_with("parallel")],
        );
        assert!(point.is_complete(), "{option}: {:?}", point.failure());
        let printed = crate::print_term(point.program());
        assert!(
            printed.contains("mapSeqUnroll") && printed.contains(vector),
            "{printed}"
        );
        let replayed = registry()
            .parse(&point.text())
            .unwrap()
            .apply(&term, &mut Context::default())
            .unwrap();
        assert!(replayed.alpha_eq(point.program()), "{}", point.text());
        let tile = model.evaluate(point.program()).unwrap().cost;
        assert!(tile < par, "{option}: {tile} ms, par {par} ms");
    }
}

/// Random points of `auto` on `source` at small sizes: each completes or fails with a
/// reason, and each that completes computes what the program computes.
fn random_points_compute_what_the_program_computes(source: &str, nats: &[(&str, i64)]) {
    let term = instance(source, nats);
    let start = auto().start(&term);
    assert!(start.size_estimate() > 1.0, "{source}");
    let signature = io::signature(&term);
    let inputs = io::random_inputs(&signature, &NatEnv::default(), 7).unwrap();
    let expected = evaluate(&term, &NatEnv::default(), &inputs)
        .unwrap()
        .to_json()
        .unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let (mut complete, mut failed) = (0, 0);
    for _ in 0..12 {
        let mut s = start.clone();
        while !s.is_final() {
            s = s.choose(rng.random_range(0..s.options())).unwrap();
        }
        match s.failure() {
            Some(why) => {
                assert!(why.contains("failed"), "{why}");
                failed += 1;
            }
            None => {
                complete += 1;
                let got = evaluate(s.program(), &NatEnv::default(), &inputs)
                    .unwrap_or_else(|e| panic!("{}: {e}", s.text()))
                    .to_json()
                    .unwrap();
                assert!(io::approx_eq(&got, &expected), "{}", s.text());
            }
        }
    }
    assert!(
        complete > failed,
        "{source}: {complete} complete, {failed} failed"
    );
}

const GEMV: &str = "def gemv(a: n.m.f32, x: m.f32) : n.f32 = a |> map(fun(row => zip(row, x) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0)))";
const STENCIL: &str = "def stencil(x: n.f32) : n.f32 = x |> padCst(1, 1, 0.0) |> slide(3, 1) |> map(fun(w => w |> reduce(add, 0.0)))";
const CHAIN: &str = "def chain(x: n.f32, y: n.f32) : n.f32 = zip(x, y) |> map(fun(p => fst(p) * snd(p))) |> map(fun(v => v + 1.0)) |> map(fun(v => v * v))";
const SUM: &str = "def sum(x: n.f32) = x |> reduce(add, 0.0)";
const DOT: &str = include_str!("../../../../examples/rise/dot.rise");
const CONV: &str = include_str!("../../../../examples/rise/conv2d.rise");
const SCAL: &str = include_str!("../../../../examples/rise/scal.rise");

#[test]
fn points_of_auto_compute_what_each_kind_of_program_computes() {
    random_points_compute_what_the_program_computes(MATMUL, &[("n", 32), ("m", 64), ("k", 16)]);
    random_points_compute_what_the_program_computes(GEMV, &[("n", 64), ("m", 32)]);
    random_points_compute_what_the_program_computes(STENCIL, &[("n", 256)]);
    random_points_compute_what_the_program_computes(CHAIN, &[("n", 256)]);
    random_points_compute_what_the_program_computes(SUM, &[("n", 4096)]);
    random_points_compute_what_the_program_computes(DOT, &[("n", 4096)]);
    random_points_compute_what_the_program_computes(CONV, &[("n", 32), ("m", 32)]);
    random_points_compute_what_the_program_computes(SCAL, &[("n", 256)]);
}

/// The model's best of `samples` random points of `auto`, and `defaultLowering`'s
/// estimate.
fn best_and_baseline(source: &str, nats: &[(&str, i64)], samples: usize) -> (f64, f64) {
    let term = instance(source, nats);
    let model = ModelCost::default();
    let baseline = model.evaluate(&term).unwrap().cost;
    let start = auto().start(&term);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let mut best = f64::INFINITY;
    for _ in 0..samples {
        let mut s = start.clone();
        while !s.is_final() {
            s = s.choose(rng.random_range(0..s.options())).unwrap();
        }
        if s.is_complete() {
            best = best.min(model.evaluate(s.program()).unwrap().cost);
        }
    }
    (best, baseline)
}

#[test]
fn the_model_finds_points_faster_than_default_lowering() {
    for (source, nats) in [
        (GEMV, &[("n", 1024), ("m", 1024)][..]),
        (STENCIL, &[("n", 1 << 20)]),
        (CHAIN, &[("n", 1 << 20)]),
        (DOT, &[("n", 1 << 20)]),
        (CONV, &[("n", 512), ("m", 512)]),
        (MATMUL, &[("n", 256), ("m", 512), ("k", 128)]),
    ] {
        let (best, baseline) = best_and_baseline(source, nats, 16);
        assert!(
            best < 0.8 * baseline,
            "{source}: best {best}, defaultLowering {baseline}"
        );
    }
}

#[test]
fn auto_needs_concrete_sizes_and_says_so() {
    let program = Program::load(GEMV, None).unwrap();
    let state = auto().start(&program.entry().term);
    let why = state.failure().expect("no space for symbolic sizes");
    assert!(
        why.contains("concrete") || why.contains("not a known constant"),
        "{why}"
    );
}

/// The parts of a point's text: cut at each ` ; ` outside brackets and strings.
fn parts_of(text: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut quoted, mut from) = (Vec::new(), 0i32, false, 0);
    for (i, c) in text.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '(' | '[' if !quoted => depth += 1,
            ')' | ']' if !quoted => depth -= 1,
            ';' if !quoted
                && depth == 0
                && text[i..].starts_with("; ")
                && text[..i].ends_with(' ') =>
            {
                parts.push(text[from..i].trim());
                from = i + 1;
            }
            _ => {}
        }
    }
    parts.push(text[from..].trim());
    parts
}

/// `text`'s parts, each as one strategy in a run of its own, applied to `term`.
fn parts_applied_whole(text: &str, term: &Term) -> Result<Term, elevate_core::Failure> {
    parts_of(text)
        .into_iter()
        .try_fold(term.clone(), |t, part| {
            let strategy = registry()
                .parse(part)
                .unwrap_or_else(|e| panic!("{part}: {e}"));
            strategy.apply(&t, &mut Context::default())
        })
}

#[test]
fn states_are_what_their_parts_give_applied_whole_and_the_same_decisions_reuse_them() {
    let term = instance(MATMUL, &[("n", 32), ("m", 64), ("k", 16)]);
    let start = auto().start(&term);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let (mut complete, mut failed) = (0, 0);
    for _ in 0..8 {
        let (mut s, mut decisions) = (start.clone(), Vec::new());
        while !s.is_final() {
            let text = s.text();
            decisions.push(rng.random_range(0..s.options()));
            s = s.choose(*decisions.last().unwrap()).unwrap();
            // Where a part has just ended, the program is what the parts so far give,
            // each as one strategy in a run of its own (what the space gave before it
            // applied the items of a part one at a time), names included.
            if s.text() != text && s.failure().is_none() {
                let expected = parts_applied_whole(&s.text(), &term);
                assert!(
                    expected.as_ref().is_ok_and(|e| e == s.program()),
                    "{}: {:?}",
                    s.text(),
                    expected.err()
                );
            }
        }
        match s.failure() {
            None => complete += 1,
            Some(_) => {
                assert!(
                    parts_applied_whole(&s.text(), &term).is_err(),
                    "{}",
                    s.text()
                );
                failed += 1;
            }
        }
        // The same decisions again: the very same program, kept from the first time.
        let again = decisions
            .iter()
            .fold(start.clone(), |s, &i| s.choose(i).unwrap());
        assert!(again.program().node_id() == s.program().node_id());
    }
    assert!(complete > failed, "{complete} complete, {failed} failed");
}

#[test]
fn batched_products_have_register_tiles_and_element_wise_chains_elementwise_as_points() {
    let batched = "def bmm(a: b.n.k.f32, bb: b.k.m.f32) =
      zip(a, bb) |> map(fun(ab => fst(ab) |> map(fun(arow =>
        transpose(snd(ab)) |> map(fun(bcol =>
          zip(arow, bcol) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0)))))))";
    let chain = "def f(x: n.m.f32, y: n.m.f32) =
      zip(x, y) |> map(fun(r => zip(fst(r), snd(r)) |> map(fun(p => fst(p) + snd(p)))))
        |> map(map(fun(v => max(v, 0.0))))";
    type Case<'a> = (&'a str, &'a [(&'a str, i64)], &'a str);
    let cases: [Case; 3] = [
        (
            batched,
            &[("b", 2), ("n", 16), ("k", 8), ("m", 32)],
            "reductionTiles(16, 32, 4, 32)",
        ),
        // A short reduction is also offered unrolled (into the kernel's body).
        (
            batched,
            &[("b", 2), ("n", 16), ("k", 8), ("m", 32)],
            "reductionTiles(16, 32, 4, 32) ; tryAll(unroll)",
        ),
        (chain, &[("n", 4), ("m", 16)], "elementwise(8)"),
    ];
    for (source, nats, wanted) in cases {
        let term = instance(source, nats);
        // At each decision the point `wanted` where it is offered, else `id`.
        let mut state = auto().start(&term);
        let mut offered = false;
        while !state.is_final() {
            let options: Vec<String> = (0..state.options())
                .map(|i| state.option_text(i).unwrap())
                .collect();
            let k = match options.iter().position(|o| o == wanted) {
                Some(k) => {
                    offered = true;
                    k
                }
                None => options.iter().position(|o| o == "id").unwrap(),
            };
            state = state.choose(k).unwrap();
        }
        assert!(offered, "{wanted} is not a point");
        let point = state;
        assert!(point.is_complete(), "{wanted}: {:?}", point.failure());
        assert!(same_values(point.program(), &term), "{wanted}");
    }
}
