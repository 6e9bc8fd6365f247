//! Register tiles inside tiles (`registerTile`, with `packB(w)` or without) compile to
//! a tiled, vectorized kernel: the bridge's Transform script tiles the tile, then the
//! register tile, steps through the reduction one element at a time around the
//! register tile, unrolls its rows and vectorizes its columns; and the code computes
//! what the interpreter computes.

use super::{assert_same, example, lowered, payload, sizes};
use elevate::bridge::{jit, Payload};
use elevate::rise::Term;

#[test]
fn register_tiles_inside_tiles_compile_to_their_schedule_and_match_the_interpreter() {
    let source = example("matmul.rise");
    let nats = sizes(&[("n", 128), ("k", 32), ("m", 128)]);
    for (pack, tile, (rows, lanes), parallel) in [
        ("packB ;; ", (64, 64), (8, 32), false),
        ("packB(64) ;; ", (32, 64), (4, 64), true),
        ("packB(16) ;; ", (16, 32), (8, 16), false),
        ("", (32, 64), (4, 32), false),
    ] {
        let mut strategy = format!(
            "{pack}DFNF ; try(fuseReduceMap @ topDown) ; tileNDList([{}, {}]) @ outermost(mapNest(2)) ;; registerTile({rows}, {lanes})",
            tile.0, tile.1
        );
        if parallel {
            strategy.push_str(" ; parallel @ outermost(isApplied(isMap))");
        }
        let term = lowered(&source, &nats, &strategy);
        let p = payload("f", &term);
        let script = p
            .transform()
            .unwrap_or_else(|| panic!("{strategy}: no script"));
        // The kernel of the product is the last one; the packing, if any, comes first.
        let k = usize::from(!pack.is_empty());
        let kernel = kernel_lines(script, k);
        let tiles: Vec<&str> = kernel
            .lines()
            .filter(|l| l.contains("tile_sizes"))
            .collect();
        let sizes: Vec<&str> = tiles
            .iter()
            .map(|l| {
                let at = l.find("tile_sizes [").unwrap() + "tile_sizes [".len();
                &l[at..at + l[at..].find(']').unwrap()]
            })
            .collect();
        // Rows by the tile, then by the register tile, and last (inside the
        // reduction's loop) the register tile's rows one by one: the unrolled loop.
        let first = sizes.first().copied().unwrap_or_default();
        assert!(
            first.starts_with(&format!("{}, ", tile.0)),
            "{strategy}: {sizes:?}"
        );
        assert!(
            sizes.iter().any(|s| s.starts_with(&format!("{rows}, "))),
            "{strategy}: {sizes:?}"
        );
        let last = sizes.last().copied().unwrap_or_default();
        assert!(last.starts_with("1, "), "{strategy}: {sizes:?}");
        assert_eq!(
            tiles[0].contains("tile_using_forall"),
            parallel,
            "{strategy}: {tiles:?}"
        );
        // One vector operation: the register tile's row of `lanes` columns.
        let vector = script
            .lines()
            .find_map(|l| l.split("vector_sizes [").nth(1))
            .and_then(|rest| rest.split(']').next())
            .unwrap_or_else(|| panic!("{strategy}: not vectorized: {script}"));
        let mut lanes_of = vector.split(", ").filter(|x| *x != "1");
        assert_eq!(
            lanes_of.next(),
            Some(&*lanes.to_string()),
            "{strategy}: {vector}"
        );
        assert_eq!(lanes_of.next(), None, "{strategy}: {vector}");
        assert!(
            script.contains(&format!("{{factor = {rows} : i64}}")),
            "{strategy}: {script}"
        );
        assert_same(&term, &strategy);
    }
}

#[test]
fn the_micro_kernel_carries_its_register_tile_into_the_script_and_matches_the_interpreter() {
    // microKernel(32, 64, 4, 32) on a 64 x 64 x 48 product: b packed in blocks of 32
    // columns (the product's dimensions: rows, blocks of columns, the reduction, the
    // columns of a block), 32 x 64 tiles on parallel threads, 4 rows unrolled around
    // 32 lanes inside the reduction's loop.
    let source = example("matmul.rise");
    let nats = sizes(&[("n", 64), ("k", 48), ("m", 64)]);
    let term = lowered(&source, &nats, "microKernel(32, 64, 4, 32)");
    let (_, script) = scheduled(&term);
    let product = kernel_lines(&script, 1);
    assert!(
        product
            .lines()
            .any(|l| l.contains("tile_using_forall") && l.contains("tile_sizes [32, 0, 0, 0]")),
        "{product}"
    );
    assert!(product.contains("tile_sizes [4, 0, 0, 0]"), "{product}");
    let reduction = product
        .find("tile_sizes [0, 0, 1, 0]")
        .expect("the reduction");
    let rows = product
        .find("tile_sizes [1, 0, 0, 0]")
        .expect("the rows one by one");
    assert!(reduction < rows, "{product}");
    assert!(product.contains("vector_sizes [1, 1, 1, 32]"), "{product}");
    // Its accumulators (4 x 32 floats) promoted onto the stack, not the heap: they
    // are promoted once per step of the loops around the reduction.
    assert!(
        product.contains("operands_to_promote = [2], use_alloca"),
        "{product}"
    );
    // The unrolled rows of the register tile, each a broadcast and an FMA per step.
    assert!(script.contains("transform.loop.unroll") && script.contains("factor = 4"));
    assert!(script.contains("lowering_strategy = parallelarith"));
    assert_same(&term, "microKernel(32, 64, 4, 32)");
    // Sizes the tiles do not divide are refused with the reason.
    let error = elevate::rise::registry()
        .parse("microKernel(32, 64, 5, 32)")
        .unwrap_err();
    assert!(
        error.to_string().contains("5 must divide the tile's 32"),
        "{error}"
    );
}

#[test]
fn a_micro_kernel_whose_tiles_do_not_divide_the_sizes_pads_and_matches_the_interpreter() {
    // 50 x 70 x 30 by microKernel(16, 32, 4, 16): the rows padded to 64, the columns to
    // 96, the padded product stored once, its first 50 rows and 70 columns copied out.
    let source = example("matmul.rise");
    let nats = sizes(&[("n", 50), ("k", 30), ("m", 70)]);
    let term = lowered(&source, &nats, "microKernel(16, 32, 4, 16)");
    let text = elevate::rise::print_term(&term);
    assert!(
        text.contains("padCst(0, 14,") && text.contains("padCst(0, 26,"),
        "{text}"
    );
    assert!(
        text.contains("toMem |> transpose |> take(70) |> transpose |> take(50)"),
        "{text}"
    );
    let (p, script) = scheduled(&term);
    assert!(!p.mlir().contains("scf.for"), "{}", p.mlir());
    assert!(p.mlir().contains("memref<64x96xf32>"), "{}", p.mlir());
    assert!(script.contains("vector_sizes [1, 1, 1, 16]"), "{script}");
    assert!(script.contains("factor = 4"), "{script}");
    assert_same(&term, "microKernel(16, 32, 4, 16) on 50 x 70 x 30");
    // Padding one dimension only: 64 rows divide, 70 columns do not.
    let nats = sizes(&[("n", 64), ("k", 8), ("m", 70)]);
    let term = lowered(&source, &nats, "microKernel(32, 32, 8, 16)");
    let text = elevate::rise::print_term(&term);
    assert!(!text.contains("take(64)"), "{text}");
    assert_same(&term, "microKernel(32, 32, 8, 16) on 64 x 70 x 8");
}

#[test]
fn a_padded_product_stores_its_operand_once_and_runs_the_copies_it_adds_in_parallel() {
    // 250 x 300 x 40 by microKernel(66, 64, 6, 16): `a`'s rows padded to 264, `b`'s
    // columns to 320. The padded `a` is written once (its guard's buffer is the
    // `toMem`'s: no second copy), and the passes over memory the bridge adds (the
    // padded copies, the product's start values, its first rows and columns copied
    // out) are vectorized where they read contiguously, and run across threads where
    // large, as the product is.
    let source = example("matmul.rise");
    let nats = sizes(&[("n", 250), ("k", 40), ("m", 300)]);
    let strategy = "microKernel(66, 64, 6, 16)";
    let term = lowered(&source, &nats, strategy);
    let (p, script) = scheduled(&term);
    let allocs = |ty: &str| {
        p.mlir()
            .matches(&format!("memref.alloc() {{alignment = 64 : i64}} : {ty}\n"))
            .count()
    };
    assert_eq!(allocs("memref<264x40xf32>"), 1, "{}", p.mlir());
    // Every kernel is in vectors but the one that transposes `b` (its padded copy
    // read column by column: vectors of it would gather).
    let kernels = p.mlir().matches("elevate.kernel = ").count();
    for n in 0..kernels {
        let payload_line = p
            .mlir()
            .lines()
            .find(|l| l.contains(&format!("elevate.kernel = {n} :")))
            .unwrap();
        // (Its maps are aliases defined at the top: `#map3 = affine_map<...>`.)
        let transposes = p.mlir().lines().any(|l| {
            l.split_once(" = affine_map<").is_some_and(|(alias, map)| {
                map.contains("-> (d1, d0)>")
                    && (payload_line.contains(&format!("{alias},"))
                        || payload_line.contains(&format!("{alias}]")))
            })
        });
        let lines = kernel_lines(&script, n);
        assert_eq!(
            lines.contains("vectorize"),
            !transposes,
            "kernel {n}: {payload_line}\n{script}"
        );
    }
    // The output's copy out (250 x 300) and the product's start values (264 x 320)
    // are large: across threads. The packing and the product run so by the strategy.
    let copy_out = kernel_lines(&script, kernels - 1);
    assert!(copy_out.contains("tile_using_forall"), "{copy_out}");
    // The fill's lines: from its match to the next.
    let fill = script
        .lines()
        .skip_while(|l| !l.contains("ops{[\"linalg.fill\"]}"))
        .skip(1)
        .take_while(|l| !l.contains("transform.structured.match"))
        .collect::<Vec<_>>();
    assert!(
        fill.iter().any(|l| l.contains("tile_using_forall")),
        "{script}"
    );
    assert_same(&term, "microKernel(66, 64, 6, 16) on 250 x 300 x 40");
    // A program that runs nothing in parallel gets no parallel loop from the bridge.
    let strategy = "padNest(66, 64) @ outermost(mapNest(2))";
    let term = lowered(&source, &nats, strategy);
    let (_, script) = scheduled(&term);
    assert!(script.contains("vectorize"), "{script}");
    assert!(!script.contains("tile_using_forall"), "{script}");
    assert_same(&term, strategy);
}

#[test]
fn contractions_that_reduce_several_elements_per_step_stay_outer_products() {
    // `par` vectorizes 4 unrolled steps of the reduction at once: its contraction is
    // lowered as outer products; a register tile's (one step) as broadcasts and FMAs.
    let source = example("matmul.rise");
    let nats = sizes(&[("n", 64), ("k", 64), ("m", 64)]);
    let script = |strategy: &str| {
        let p = payload("f", &lowered(&source, &nats, strategy));
        p.transform()
            .unwrap_or_else(|| panic!("{strategy}: no script"))
            .to_string()
    };
    let par = script("par");
    assert!(par.contains("vector_sizes [1, 1, 4, 32]"), "{par}");
    // (Outer products are the default strategy, which MLIR does not print.)
    assert!(
        par.contains("vector.lower_contraction\n")
            && !par.contains("lowering_strategy = parallelarith"),
        "{par}"
    );
    let tile = script("microKernel(32, 64, 4, 32)");
    assert!(tile.contains("lowering_strategy = parallelarith"), "{tile}");
}

#[test]
fn a_micro_kernel_with_reduction_blocks_tiles_the_reduction_outside_its_register_tiles() {
    // microKernel(32, 64, 4, 32, 16) on a 64 x 64 x 48 product: the reduction in three
    // blocks of 16, the loop over blocks between the cache tile's loops and the register
    // tiles', which accumulate into the cache tile's results (promoted to a buffer of
    // their own); the loop within a block inside the register tiles' loops.
    let source = example("matmul.rise");
    let nats = sizes(&[("n", 64), ("k", 48), ("m", 64)]);
    let term = lowered(&source, &nats, "microKernel(32, 64, 4, 32, 16)");
    let p = payload("f", &term);
    let script = p.transform().unwrap();
    let product = kernel_lines(script, 1);
    let at = |what: &str| {
        product
            .find(what)
            .unwrap_or_else(|| panic!("{what}: {product}"))
    };
    // The product's dimensions: rows, the reduction, blocks of columns, their lanes.
    let blocks = at("tile_sizes [0, 16, 0, 0]");
    let (tiles, steps) = (at("tile_sizes [4, 0, 0, 0]"), at("tile_sizes [0, 1, 0, 0]"));
    assert!(at("tile_sizes [32, 0, 0, 0]") < blocks, "{product}");
    assert!(blocks < tiles && tiles < steps, "{product}");
    assert!(
        product.contains("transform.structured.promote"),
        "{product}"
    );
    assert!(product.contains("vector_sizes [1, 1, 1, 32]"), "{product}");
    assert!(script.contains("transform.loop.unroll") && script.contains("factor = 4"));
    assert_same(&term, "microKernel(32, 64, 4, 32, 16)");
}

/// The payload of `term` and its Transform script.
fn scheduled(term: &Term) -> (Payload, String) {
    let p = payload("f", term);
    let script = p.transform().expect("a script").to_string();
    (p, script)
}

/// The lines of a Transform script that schedule kernel `n`.
/// The lines of `script` that schedule kernel `n`.
pub fn kernel_lines(script: &str, n: usize) -> String {
    // From the match of kernel `n` to the next match.
    let start = format!("attributes {{elevate.kernel = {n} : i64}}");
    let mut lines = script.lines().skip_while(|l| !l.contains(&start));
    let first = lines.next().unwrap_or_default();
    std::iter::once(first)
        .chain(lines.take_while(|l| !l.contains("transform.structured.match")))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_padded_b_is_packed_from_b_itself() {
    // 20 columns padded to 32 for tiles of 16: `b` is copied once into its padded
    // buffer, which the packing reads as it lies (no transposed copy in between), and
    // the product matches the interpreter.
    let nats = sizes(&[("n", 24), ("k", 12), ("m", 20)]);
    let term = lowered(&example("matmul.rise"), &nats, "microKernel(8, 16, 4, 16)");
    let p = payload("f", &term);
    assert_eq!(p.mlir().matches("ins(%arg1").count(), 1, "{}", p.mlir());
    assert!(!p.mlir().contains("memref<32x12xf32>"), "{}", p.mlir());
    assert_same(&term, "a padded, packed product");
}

/// The operations around line `at` of MLIR's printing (each op with regions ends its
/// line with `{`, its regions' lines indented two more), innermost first.
fn enclosing<'a>(lines: &[&'a str], at: usize) -> Vec<&'a str> {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut want = indent(lines[at]);
    let mut found = Vec::new();
    for l in lines[..at].iter().rev() {
        if indent(l) < want && l.trim_end().ends_with('{') {
            found.push(*l);
            want = indent(l);
        }
    }
    found
}

#[test]
fn a_register_tile_s_stack_buffer_is_freed_at_each_step_of_its_loop() {
    // LLVM frees a loop's stack allocations only at the function's return: a promoted
    // accumulator tile allocated at every step of the product's loops, and never
    // freed, overflowed the stack of the thread running it.
    let nats = sizes(&[("n", 128), ("k", 64), ("m", 128)]);
    let term = lowered(&example("matmul.rise"), &nats, "microKernel(64, 64, 4, 16)");
    let p = super::built_payload("f", &term);
    let text = jit::transformed(&p).unwrap_or_else(|e| panic!("{e}"));
    let lines: Vec<&str> = text.lines().collect();
    let allocas: Vec<usize> = (0..lines.len())
        .filter(|k| lines[*k].contains("memref.alloca("))
        .collect();
    assert!(
        !allocas.is_empty(),
        "the accumulators are on the stack: {text}"
    );
    for at in allocas {
        let around = enclosing(&lines, at);
        let first = |what: &[&str]| {
            around
                .iter()
                .position(|l| what.iter().any(|w| l.contains(w)))
                .unwrap_or(around.len())
        };
        assert!(
            first(&["memref.alloca_scope", "scf.forall", "func.func"]) < first(&["scf.for "]),
            "{}: {around:?}",
            lines[at]
        );
    }
    assert_same(&term, "a product with its tiles on the stack");
}

#[test]
fn an_array_accumulator_read_through_vectors_of_its_rows_is_one_structured_kernel() {
    // A product whose 16x32 accumulator block is updated, at each step of the
    // reduction, row by row as vectors of 8 lanes (so each element of the block is read
    // at `8 * (j / 8) + j mod 8`, which is `j`): one kernel of the loop program, computing what the interpreter computes.
    let source = r#"
        def f(a: 64.64.f32, b: 64.64.f32) : 64.64.f32 = (a |> split(16) |> map(map(fun(arow => b
        |> transpose |> split(32) |> map(map(zip(arow)))))) |> map(transpose)
        |> map(map(map(map(split(4))))) |> map(map(map(transpose))) |> map(map(transpose))
        |> mapPar(mapSeq(reduceSeq(fun(acc, y => zip(acc, y)
        |> map(fun(q => zip(fst(q), snd(q)))) |> map(map(snd)) |> map(transpose) |> transpose
        |> reduceSeqUnroll(fun(acc2, y2 => zip(acc2, y2) |> map(fun(q => zip(fst(q), snd(q))))
        |> mapSeq(fun(x => zip(fst(x |> unzip) |> asVector(8), zip(fst(snd(x |> unzip) |> unzip)
        |> asVector(8), snd(snd(x |> unzip) |> unzip) |> asVector(8)))
        |> mapSeq(fun(q => fst(q) + fst(snd(q)) * snd(snd(q)))) |> asScalar))), zip(acc, y)
        |> map(fun(q => zip(fst(q), snd(q)))) |> map(map(fst))
        |> toMem)), generate(fun(i => generate(fun(i2 => 0.0))))))) |> map(transpose)
        |> map(map(join)) |> join)
    "#;
    let term = lowered(source, &sizes(&[]), "id");
    let p = payload("f", &term);
    assert_eq!(p.kernels, 1);
    assert_same(&term, "an accumulator block read through vectors");
}
