//! Tiles inside tiles: `subTile` tiles the element loops of a tiled nest again,
//! `registerTile(r, w)` makes register tiles of a matrix product's tiles (the
//! reduction outside them, the columns on vectors, the rows unrolled), and `packB(w)`
//! packs the transposed input in blocks of `w` columns. Each keeps the meaning of the
//! program (the interpreter is the oracle), and a bad argument is an error where it
//! is written.

use super::{example, load};
use elevate_core::Context;
use elevate_rise::nat::NatVar;
use elevate_rise::{evaluate, io, print_term, registry, NatEnv, Program, Term};
use quickcheck::{Arbitrary, Gen, QuickCheck};

fn strategy(text: &str) -> elevate_core::Strategy<Term> {
    registry()
        .parse(text)
        .unwrap_or_else(|e| panic!("{}", e.render("strategy", text)))
}

/// The matmul example at `n x k` times `k x m`.
fn matmul(n: i64, k: i64, m: i64) -> Term {
    let mut nats = NatEnv::default();
    for (name, value) in [("n", n), ("k", k), ("m", m)] {
        nats.insert(NatVar::Named(name.into()), value);
    }
    load(&example("matmul.rise")).instantiate(&nats).unwrap()
}

/// What `term` (closed, concrete sizes) computes on the random inputs of `seed`.
fn outputs(term: &Term, seed: u64) -> serde_json::Value {
    let signature = io::signature(term);
    let inputs = io::random_inputs(&signature, &NatEnv::default(), seed).unwrap();
    evaluate(term, &NatEnv::default(), &inputs)
        .unwrap_or_else(|e| panic!("{e}\n{}", print_term(term)))
        .to_json()
        .unwrap()
}

/// `text` applied to `term`: the result, which computes what `term` computes.
fn keeps_the_meaning(term: &Term, text: &str) -> Term {
    let result = strategy(text)
        .apply(term, &mut Context::default())
        .unwrap_or_else(|e| panic!("{text}: {e}"));
    let typed = elevate_rise::infer(&result).unwrap_or_else(|e| panic!("{text}: {e}"));
    assert_eq!(typed.ty(), term.ty(), "{text}");
    for seed in 0..2 {
        assert!(
            io::approx_eq(&outputs(term, seed), &outputs(&typed, seed)),
            "{text}: other values\n{}",
            print_term(&typed)
        );
    }
    typed
}

/// A matrix product, a tiling of its result and a register tile that divides it.
#[derive(Clone, Debug)]
struct Case {
    rows: i64,
    lanes: i64,
    tile: (i64, i64),
    sizes: (i64, i64, i64),
    packed: bool,
}

impl Arbitrary for Case {
    fn arbitrary(g: &mut Gen) -> Case {
        let pick = |g: &mut Gen, xs: &[i64]| *g.choose(xs).unwrap();
        let rows = pick(g, &[1, 2, 3, 4]);
        let lanes = pick(g, &[2, 4, 8]);
        let tile = (rows * pick(g, &[1, 2, 3]), lanes * pick(g, &[1, 2]));
        let sizes = (
            tile.0 * pick(g, &[1, 2]),
            pick(g, &[1, 3, 4]),
            tile.1 * pick(g, &[1, 2]),
        );
        Case {
            rows,
            lanes,
            tile,
            sizes,
            packed: bool::arbitrary(g),
        }
    }
}

impl Case {
    fn text(&self) -> String {
        let pack = match self.packed {
            true => format!("packB({}) ;; ", self.lanes),
            false => String::new(),
        };
        format!(
            "{pack}DFNF ; try(fuseReduceMap @ topDown) ; tileNDList([{}, {}]) @ outermost(mapNest(2)) ;; registerTile({}, {})",
            self.tile.0, self.tile.1, self.rows, self.lanes
        )
    }
}

/// Register tiles of every shape in tiles of every size compute the product; the
/// rows of a register tile are unrolled inside the reduction, around the vectors.
#[test]
fn register_tiles_keep_the_meaning_of_a_matrix_product() {
    fn holds(case: Case) -> bool {
        let (n, k, m) = case.sizes;
        let text = case.text();
        let tiled = keeps_the_meaning(&matmul(n, k, m), &text);
        let printed = print_term(&tiled);
        let vector = format!("asVector({})", case.lanes);
        let reduction = printed.find("reduceSeq(fun(acc").expect("a reduction");
        let rows = printed.find("mapSeqUnroll(").expect("unrolled rows");
        assert!(
            reduction < rows,
            "{text}: the rows are inside the reduction\n{printed}"
        );
        assert!(printed[rows..].contains(&vector), "{text}\n{printed}");
        assert_eq!(printed.contains("toMem"), case.packed, "{text}");
        true
    }
    QuickCheck::new()
        .tests(24)
        .max_tests(24)
        .quickcheck(holds as fn(Case) -> bool);
}

/// `subTile` tiles the element loops of a tiled nest once more: a map nest of 8 x 12
/// in tiles of 4 x 6, each in tiles of 2 x 3, as six loops.
#[test]
fn sub_tiles_split_the_element_loops_of_a_tiled_nest() {
    let source = "def f(x: 8.12.f32) = x |> map(fun(r => r |> map(fun(v => v * 2.0))))";
    let program = load(source);
    let term = program.instantiate(&NatEnv::default()).unwrap();
    let tiled = keeps_the_meaning(
        &term,
        "DFNF ; tile(4, 6) @ outermost(mapNest(2)) ;; subTile([2, 3])",
    );
    let text = print_term(&tiled);
    for n in [4, 6, 2, 3] {
        assert!(text.contains(&format!("split({n})")), "{text}");
    }
    assert!(
        text.contains("map(fun(x5 => x5 |> map(fun(x6 => x6 |> map(fun(v => v * 2.0)))))"),
        "six loops deep: {text}"
    );
    // Without a tiled nest two levels down there is nothing to tile: a clean failure.
    let failure = strategy("subTile([2, 3])")
        .apply(&term, &mut Context::default())
        .unwrap_err();
    assert!(!failure.is_budget(), "{failure}");
}

/// On random programs, where a tiling and a tiling of its tiles apply, the meaning is
/// kept.
#[test]
fn sub_tiles_keep_random_programs_meaning() {
    use elevate_rise::generate::Generator;
    let mut tiled = 0;
    for seed in 0..60u64 {
        let mut generator = Generator::new(seed + 7000);
        generator.favourite = Some(elevate_rise::prim::Prim::Map);
        let term = elevate_rise::infer(&generator.program(10 + (seed % 20) as usize)).unwrap();
        let program = Program::load(&elevate_rise::print_definition("f", &term), None).unwrap();
        let text = "DFNF ; tile(2, 2) @ outermost(mapNest(2)) ;; subTile([1, 2])";
        let Ok(result) = strategy(text).apply(&term, &mut Context::default()) else {
            continue;
        };
        let again = elevate_rise::print_definition("f", &result);
        let reloaded = Program::load(&again, None).unwrap_or_else(|e| panic!("{e}\n{again}"));
        for seed in 0..2 {
            let expected = program.eval_random(&NatEnv::default(), seed).unwrap();
            let found = reloaded.eval_random(&NatEnv::default(), seed).unwrap();
            assert!(
                io::approx_eq(&expected.to_json().unwrap(), &found.to_json().unwrap()),
                "{again}"
            );
        }
        tiled += 1;
    }
    println!("{tiled} random programs tiled twice");
    assert!(tiled > 0, "no random program was tiled twice");
}

/// `packB(w)` packs `b` in blocks of `w` columns; `packB` is `packB(32)` and prints as
/// it is written; a width that does not divide the columns fails cleanly.
#[test]
fn pack_b_takes_the_width_of_its_blocks() {
    let term = matmul(4, 3, 64);
    for w in [2, 8, 16, 64] {
        let packed = keeps_the_meaning(&term, &format!("packB({w})"));
        let text = print_term(&packed);
        assert!(text.contains(&format!("split({w})")), "{text}");
        assert!(text.contains(&format!("asVector({w})")), "{text}");
    }
    let plain = keeps_the_meaning(&term, "packB");
    let wide = keeps_the_meaning(&term, "packB(32)");
    assert!(plain.alpha_eq(&wide));
    assert_eq!(strategy("packB(32)").to_string(), "packB");
    assert_eq!(strategy("packB(16)").to_string(), "packB(16)");
    assert_eq!(strategy("permuteB(16)").to_string(), "permuteB(16)");
    assert!(strategy("packB(6)")
        .apply(&term, &mut Context::default())
        .is_err());
}

#[test]
fn bad_tile_arguments_are_errors_where_they_are_written() {
    for (text, at, why) in [
        ("id ; registerTile(8, 1)", "1)", "at least 2"),
        ("id ; registerTile(0, 32)", "0, 32)", "positive"),
        (
            "id ; registerTile(8)",
            "registerTile(8)",
            "expects 2 or 3 sizes",
        ),
        ("id ; registerTile(8, 16, 0)", "0)", "positive"),
        ("id ; registerTile(8, 1, 16)", "1, 16)", "at least 2"),
        ("id ; microKernel(48, 64, 6, 16, 0)", "0)", "positive"),
        (
            "id ; microKernel(48, 64, 5, 16, 64)",
            "5, 16, 64)",
            "must divide",
        ),
        ("id ; elementwise(1)", "1)", "at least 2"),
        ("id ; reductionTiles(8, 16, 3, 8)", "3, 8)", "must divide"),
        ("id ; reductionTiles(8, 16, 4, 1)", "1)", "at least 2"),
        (
            "id ; reductionTiles(8, 16, 4)",
            "reductionTiles(8, 16, 4)",
            "expects 4 sizes",
        ),
        ("id ; elementwise(8, 8)", "elementwise(8, 8)", "one width"),
        ("id ; subTile([2, 0])", "[2, 0])", "must be positive"),
        ("id ; packB(1)", "1)", "at least 2"),
        ("id ; permuteB(0)", "0)", "at least 2"),
        ("id ; permuteB(2, 4)", "permuteB(2, 4)", "at most one width"),
    ] {
        let e = registry().parse(text).map(|s| s.to_string()).unwrap_err();
        assert_eq!(&text[e.offset..], at, "{text}: {}", e.message);
        assert!(e.message.contains(why), "{text}: {}", e.message);
    }
    // A register tile needs a tiled nest with a reduction: elsewhere it fails, cleanly.
    let term = matmul(8, 4, 8);
    for text in [
        "registerTile(2, 2)",
        "DFNF ; tile(4, 4) @ outermost(mapNest(2)) ;; registerTile(3, 2)",
    ] {
        let failure = strategy(text)
            .apply(&term, &mut Context::default())
            .unwrap_err();
        assert!(!failure.is_budget(), "{text}: {failure}");
    }
}
