//! Programs of several arrays, kernel by kernel: each array is kernels of its own
//! (`linalg`), a long body beside a scheduled product included, and each keeps the
//! schedule its strategy gave it.

use super::{assert_same, long_body, lowered, payload};
use elevate::bridge::{jit, Error};
use elevate::rise::{io, NatEnv, Program};

/// A matrix product stored, then its rows gathered at positions read from data.
const PRODUCT_THEN_GATHER: &str = "def f(a: 64.48.f32, b: 48.64.f32, ids: 80.i64) : 80.64.f32 =
  let c = toMem(a |> map(fun(arow => transpose(b) |> map(fun(bcol =>
    zip(arow, bcol) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0)))))) in
  ids |> map(fun(i => c |> idx(natAsIndex(64, (i % 64i64 + 64i64) % 64i64))))";

/// A matrix product stored, then its elements doubled by a body a thousand operations
/// long ([`long_body`]).
fn product_then_long() -> String {
    format!(
        "def f(a: 64.48.f32, b: 48.64.f32) : 4096.f32 =
  let c = toMem(a |> map(fun(arow => transpose(b) |> map(fun(bcol =>
    zip(arow, bcol) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0)))))) in
  c |> join |> mapSeq(fun(v => {}))",
        long_body("v * 2.0", "0.0")
    )
}

/// Elements doubled by a body a thousand operations long, bound by `let`, then a
/// matrix product reading them.
fn long_then_product() -> String {
    format!(
        "def f(a: 32.48.f32, b: 48.64.f32) : 32.64.f32 =
  let ac = toMem(a |> join |> mapSeq(fun(v => {})) |> split(48)) in
  ac |> map(fun(arow => transpose(b) |> map(fun(bcol =>
    zip(arow, bcol) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0)))))",
        long_body("v * 2.0", "0.0")
    )
}

fn forms(source: &str, strategy: &str) -> (elevate::bridge::Payload, elevate::rise::Term) {
    let term = lowered(source, &NatEnv::default(), strategy);
    (payload("f", &term), term)
}

#[test]
fn a_long_body_is_a_kernel_of_its_own_and_the_product_keeps_its_schedule() {
    let (p, term) = forms(&product_then_long(), "microKernel(16, 32, 4, 8)");
    assert!(p.kernels >= 2, "{:?}", p.kernels);
    // The loop program holds the product's kernels and the long body's.
    let text = elevate::bridge::payload::loop_program_text(&term, &super::limits()).unwrap();
    assert!(
        text.contains("kernel 0: ") && text.contains("reduce "),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("kernel ") && l.matches(" + 0.0").count() == 1001),
        "{text}"
    );
    let script = p.transform().unwrap();
    // The register tile's schedule: vectorized, its rows unrolled.
    assert!(
        script.contains("transform.structured.vectorize"),
        "{script}"
    );
    assert!(script.contains("transform.loop.unroll"), "{script}");
    assert!(p.mlir().contains("linalg.generic") || p.mlir().contains("linalg.matmul"));
    assert!(!p.mlir().contains("scf.for"), "{}", p.mlir());
    assert_same(&term, "product then a long body");
}

#[test]
fn a_gather_at_indices_read_from_data_is_a_kernel_beside_the_scheduled_product() {
    // The gather is a `linalg.generic` whose body checks the number and reads the
    // product's buffer where it lies; the product keeps its register tile.
    let (p, term) = forms(PRODUCT_THEN_GATHER, "microKernel(16, 32, 4, 8)");
    assert!(!p.mlir().contains("scf.for"), "{}", p.mlir());
    let gather = &p.mlir()[p.mlir().rfind("linalg.generic").unwrap()..];
    for op in [
        "arith.index_cast",
        "memref.atomic_rmw",
        "memref.load %alloc",
        "linalg.index",
    ] {
        assert!(gather.contains(op), "{op}: {gather}");
    }
    assert!(!p.traps.is_empty());
    let script = p.transform().unwrap();
    assert!(script.contains("transform.loop.unroll"), "{script}");
    assert_same(&term, "product then gather");
    // A number outside the rows is a located trap, as the interpreter reports it.
    let source = "def f(x: 4.3.f32, ids: 5.i64) : 5.3.f32 =
      ids |> map(fun(i => x |> idx(natAsIndex(4, i)) |> map(fun(v => v * 2.0))))";
    let program = Program::load(source, None).unwrap();
    let (p, _) = forms(source, "id");
    let compiled = jit::compile_payload(&p, &super::limits()).unwrap_or_else(|e| panic!("{e}"));
    let sig = io::signature(&program.entry().term);
    let inputs = |ids: &str| {
        let json: Vec<serde_json::Value> = ["[[1,2,3],[4,5,6],[7,8,9],[10,11,12]]", ids]
            .iter()
            .map(|t| serde_json::from_str(t).unwrap())
            .collect();
        io::bind_inputs(&sig, &json).unwrap().1
    };
    assert_eq!(
        compiled
            .run(&inputs("[3,0,1,0,2]"))
            .unwrap()
            .to_json()
            .unwrap()
            .to_string(),
        "[[20.0,22.0,24.0],[2.0,4.0,6.0],[8.0,10.0,12.0],[2.0,4.0,6.0],[14.0,16.0,18.0]]"
    );
    match compiled.run(&inputs("[3,0,4,0,2]")) {
        Err(Error::Trap { span, .. }) => assert!(span.is_some(), "the trap is located"),
        other => panic!("expected a trap, found {other:?}"),
    }
}

#[test]
fn a_read_at_digits_that_do_not_divide_its_position_is_a_load_in_the_kernel_body() {
    // Position `p` of the 17 reads `x[p mod 5][p / 5]`: digits of 5, which do not
    // divide 17, so no affine map of the loop reads it; the body computes the index
    // from `linalg.index` and loads the element.
    let source = "def f(x: 8.6.f32) : 17.f32 =
      x |> take(5) |> transpose |> join |> take(17) |> map(fun(v => v * 2.0))";
    let (p, term) = forms(source, "id");
    assert!(!p.mlir().contains("scf.for"), "{}", p.mlir());
    let body = &p.mlir()[p.mlir().find("linalg.generic").unwrap()..];
    for op in ["linalg.index", "arith.floordivsi", "memref.load"] {
        assert!(body.contains(op), "{op}: {body}");
    }
    assert!(p.traps.is_empty());
    assert_same(&term, "a read at digits that do not divide");
    // Rows of such reads on threads.
    let source = "def f(x: 8.6.f32) : 4.17.f32 =
      generate(fun(i => x |> take(5) |> transpose |> join |> take(17))) : 4.17.f32
      |> mapPar(fun(r => r |> mapSeq(fun(v => v * 2.0))))";
    let (p, term) = forms(source, "id");
    assert!(p.transform().unwrap().contains("tile_using_forall"));
    assert_same(&term, "rows of reads at digits that do not divide");
}

#[test]
fn a_product_reads_what_a_long_body_wrote_through_a_let() {
    let (p, term) = forms(&long_then_product(), "id");
    assert!(p.kernels >= 2, "{:?}", p.kernels);
    assert!(p.mlir().contains("linalg.matmul"), "{}", p.mlir());
    assert_same(&term, "a long body then product");
    // And with the product scheduled (without the `let`, which the strategies do not
    // look through).
    let source = long_then_product()
        .replace("let ac = toMem(", "toMem(")
        .replace(") in\n  ac |>", ") |>");
    let (p, term) = forms(&source, "microKernel(16, 32, 4, 8)");
    assert!(p
        .transform()
        .unwrap()
        .contains("transform.structured.vectorize"));
    assert_same(&term, "a long body then tiled product");
}

#[test]
fn divisions_that_may_trap_in_two_kernels_are_each_checked_in_its_body() {
    // The first part divides in a kernel, the second in a kernel of a body a thousand
    // operations long: each checked in its kernel's body, each trap with its own
    // code, reported at its own division.
    let source = format!(
        "def f(x: 8.i32, d: 8.i32, y: 1032.i32) : 16.i32 =
      concat(toMem(zip(x, d) |> map(fun(p => fst(p) / snd(p)))),
             toMem(y |> mapSeq(fun(v => {})) |> split(129) |> map(fun(r => r |> reduce(add, 0)))))",
        long_body("16 / v", "0")
    );
    let source = source.as_str();
    let program = Program::load(source, None).unwrap();
    let term = lowered(source, &NatEnv::default(), "id");
    let p = payload("f", &term);
    assert_eq!(p.traps.len(), 2, "{}", p.mlir());
    // A check in each kernel's body.
    assert_eq!(
        p.mlir().matches("memref.atomic_rmw maxs").count(),
        2,
        "{}",
        p.mlir()
    );
    let compiled = jit::compile_payload(&p, &super::limits()).unwrap_or_else(|e| panic!("{e}"));
    let sig = io::signature(&program.entry().term);
    let inputs = |d: &str, zero_at: Option<usize>| {
        let mut y = vec!["1"; 1032];
        if let Some(i) = zero_at {
            y[i] = "0";
        }
        let y = format!("[{}]", y.join(","));
        let json: Vec<serde_json::Value> = ["[1,2,3,4,5,6,7,8]", d, &y]
            .iter()
            .map(|t| serde_json::from_str(t).unwrap())
            .collect();
        io::bind_inputs(&sig, &json).unwrap().1
    };
    let ok = inputs("[1,1,1,1,2,2,2,2]", None);
    assert_eq!(
        compiled.run(&ok).unwrap().to_json().unwrap().to_string(),
        "[1,2,3,4,2,3,3,4,2064,2064,2064,2064,2064,2064,2064,2064]"
    );
    let divisions: Vec<usize> = source.match_indices(" / ").map(|(i, _)| i).collect();
    for (zero, division) in [
        (inputs("[1,1,1,0,2,2,2,2]", None), divisions[0]),
        (inputs("[1,1,1,1,2,2,2,2]", Some(5)), divisions[1]),
    ] {
        let Err(Error::Trap {
            span: Some(span), ..
        }) = compiled.run(&zero)
        else {
            panic!("expected a located trap");
        };
        assert!(
            (span.start as usize..span.end as usize).contains(&division),
            "{span:?} {division}"
        );
        let expected = elevate::rise::evaluate(&program.entry().term, &NatEnv::default(), &zero);
        assert!(expected.is_err(), "the interpreter reports it too");
    }
}

#[test]
fn select_is_an_arith_select_in_the_kernel_body() {
    // On scalars, and on arrays (element by element), with a condition on data.
    let source = "def f(x: 16.8.f32, y: 16.8.f32) : 16.8.f32 =
      zip(x, y) |> map(fun(r => select(reduce(add, 0.0)(fst(r)) > 0.0, fst(r), zip(fst(r), snd(r)) |> map(fun(p =>
        select(fst(p) > snd(p), fst(p) * 2.0, snd(p)))))))";
    let (p, term) = forms(source, "id");
    assert!(p.mlir().contains("arith.select"), "{}", p.mlir());
    assert_same(&term, "select");
}

#[test]
fn a_result_of_pairs_is_a_kernel_per_component() {
    // An array of pairs is stored as a pair of arrays: each component its kernel, with
    // the loops (and the schedule) of the program.
    let source = "def f(x: 32.16.f32, y: 16.24.f32) : 32.24.(f32, f32) =
      x |> map(fun(r => transpose(y) |> map(fun(c =>
        (zip(r, c) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0), r |> reduce(max, 0.0))))))";
    let (p, term) = forms(source, "id");
    assert!(p.kernels >= 2, "{:?}", p.kernels);
    assert!(
        p.mlir().contains("outs(%arg2") && p.mlir().contains("outs(%arg3"),
        "{}",
        p.mlir()
    );
    assert_same(&term, "a result of pairs");
}

#[test]
fn concat_is_two_kernels_into_the_two_parts_of_its_buffer() {
    // concat(product, b): the product into the first 64 rows, b copied into the next
    // 48, each a kernel writing a subview of the result.
    let source = "def f(a: 64.48.f32, b: 48.64.f32) : 112.64.f32 =
      concat(a |> map(fun(arow => transpose(b) |> map(fun(bcol =>
        zip(arow, bcol) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0))))), b)";
    let (p, term) = forms(source, "id");
    assert!(
        p.mlir().contains("memref.subview %arg2[64, 0] [48, 64]"),
        "{}",
        p.mlir()
    );
    assert_same(&term, "concat");
    // Nested, with the product scheduled.
    let nested = source
        .replace("112.64.f32", "160.64.f32")
        .replace(", b)", ", concat(b, b))");
    let (p, term) = forms(&nested, "microKernel(16, 32, 4, 8)");
    assert!(
        p.mlir().contains("memref.subview %arg2[112, 0] [48, 64]"),
        "{}",
        p.mlir()
    );
    assert_same(&term, "nested concat");
}

#[test]
fn a_pair_accumulator_that_starts_from_values_reads_them_at_its_first_step() {
    // argmax of each row, from a start of the program's (each row's threshold, and
    // -1): one kernel, its body reading the start where the reduction's position is
    // 0 (filled with anything before), on rows on threads.
    let source = "def f(x: 8.16.f32, t: 8.f32, ids: 16.i32) : 8.(f32, i32) =
      zip(x, t) |> mapPar(fun(rt => zip(fst(rt), ids)
        |> reduceSeq(fun(acc, p => select(fst(p) > fst(acc), p, acc)), (snd(rt), -1))))";
    let (p, term) = forms(source, "id");
    assert_eq!(p.kernels, 1, "{}", p.mlir());
    assert!(!p.mlir().contains("scf.for"), "{}", p.mlir());
    for op in ["linalg.index", "arith.cmpi eq"] {
        assert!(p.mlir().contains(op), "{op}: {}", p.mlir());
    }
    assert!(p.transform().unwrap().contains("tile_using_forall"));
    assert_same(&term, "argmax from a threshold");
    // A scalar fold from a parameter, its step no `acc ⊕ x`.
    let source = "def f(x: 4.32.f32, s: f32) : 4.f32 =
      x |> mapSeq(fun(r => r |> reduceSeq(fun(acc, v => acc * 0.5 + v), s)))";
    let (_, term) = forms(source, "id");
    assert_same(&term, "a fold from a parameter");
}

#[test]
fn a_pair_accumulator_is_one_kernel_with_an_output_per_component() {
    // argmax of each row: the largest value and where it is. One `linalg.generic`
    // whose reduction carries both (two outputs, each filled with its start value,
    // the step an `arith.select` of each), beside the kernel that stores the rows.
    let source = "def f(x: 8.16.f32, ids: 16.i32) : 8.(f32, i32) =
      toMem(x |> map(fun(r => r |> map(fun(v => v * 2.0))))) |> map(fun(r =>
        zip(r, ids) |> reduce(fun(acc, p => select(fst(p) > fst(acc), p, acc)), (-1000.0, 0))))";
    let (p, term) = forms(source, "id");
    assert_eq!(p.kernels, 2, "{:?}", p.kernels);
    assert!(!p.mlir().contains("scf.for"), "{}", p.mlir());
    assert!(
        p.mlir()
            .contains("outs(%arg2, %arg3 : memref<8xf32>, memref<8xi32>)"),
        "{}",
        p.mlir()
    );
    assert_eq!(p.mlir().matches("linalg.fill").count(), 2, "{}", p.mlir());
    // The step reads each element's value twice and its position once: one operand
    // each, however often the body reads it.
    let argmax = p
        .mlir()
        .lines()
        .find(|l| l.contains("linalg.generic") && l.contains("outs(%arg2, %arg3"))
        .expect("the argmax kernel");
    let ins = argmax
        .split("ins(")
        .nth(1)
        .and_then(|rest| rest.split(" : ").next())
        .expect("operands");
    assert_eq!(ins.matches('%').count(), 2, "{argmax}");
    assert_same(&term, "argmax");
    // Its components read by a computation after it: the same one kernel, its
    // outputs in buffers of their own (one buffer each, none left over).
    let read = source.replace(": 8.(f32, i32) =", ": 8.f32 =").replace(
        ", (-1000.0, 0))))",
        ", (-1000.0, 0)) |> fun(m => select(snd(m) > 3, fst(m), 0.0))))",
    );
    let (p, term) = forms(&read, "id");
    assert_eq!(p.mlir().matches("memref.alloc").count(), 3, "{}", p.mlir());
    assert_same(&term, "argmax read");
}

#[test]
fn a_softmax_in_one_pass_over_its_row_is_structured() {
    // The running maximum and the sum rescaled to it: a pair accumulator whose step
    // is no `acc ⊕ x`; then each element divided by the sum.
    let source = "def f(x: 16.64.f32) : 16.64.f32 =
      x |> map(fun(r =>
        let ms = r |> reduceSeq(fun(acc, v =>
          let m = max(fst(acc), v) in
          (m, snd(acc) * exp(fst(acc) - m) + exp(v - m))), (-1000.0, 0.0)) in
        r |> map(fun(v => exp(v - fst(ms)) / snd(ms)))))";
    let (p, term) = forms(source, "id");
    assert_eq!(p.kernels, 2, "{:?}", p.kernels);
    assert!(
        p.mlir()
            .contains("iterator_types = [\"parallel\", \"reduction\"]"),
        "{}",
        p.mlir()
    );
    assert_same(&term, "online softmax");
    // A scalar accumulator whose step is no `acc ⊕ x` (a discounted sum) is a fold
    // too, its order kept.
    let source = "def f(x: 16.64.f32) : 16.f32 =
      x |> map(fun(r => r |> reduceSeq(fun(acc, v => acc * 0.5 + v), 0.0)))";
    let (_, term) = forms(source, "id");
    assert_same(&term, "discounted sum");
}

#[test]
fn an_array_literal_read_at_a_known_position_is_that_item() {
    // Inside a map (so not hoisted), read at a constant position: the item itself.
    let source = "def f(x: 8.f32) : 8.f32 =
      x |> map(fun(v => [v, v * 2.0, v + 1.0] |> idx(natAsIndex(3, 2i64))))";
    let (p, term) = forms(source, "id");
    assert!(!p.mlir().contains("scf.for"), "{}", p.mlir());
    assert_same(&term, "a literal read at a known position");
}

#[test]
fn the_maps_of_a_pair_s_two_components_over_one_position_are_one_loop() {
    // Each component's kernel records both maps over the row's position: one loop.
    let source = "def f(x: 6.3.f32) : 6.3.(f32, f32) =
      generate(fun(i => zip(idx(i, x) |> mapSeq(fun(v => v * 2.0)),
                            idx(i, x) |> mapSeq(fun(v => v + 1.0))))) : 6.3.(f32, f32)";
    let (_, term) = forms(source, "id");
    assert_same(&term, "the maps of a pair");
}

#[test]
fn a_reduction_from_a_value_that_is_no_constant_is_structured() {
    // A dot product from its bias, a row's maximum from a value of the row, a
    // product from a parameter: each reduction starts from its operation's identity
    // in a kernel of its own, and the value is combined where it is read.
    for (source, what) in [
        (
            "def f(a: 32.48.f32, w: 48.64.f32, b: 64.f32) : 32.64.f32 =
               a |> map(fun(r => zip(transpose(w), b) |> map(fun(cb =>
                 zip(r, fst(cb)) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, snd(cb))))))",
            "a dense layer summed from its bias",
        ),
        (
            "def f(x: 8.16.f32) : 8.f32 =
               x |> map(fun(r => r |> reduce(min, idx(natAsIndex(16, 3i64), r))))",
            "a minimum from a value of the row",
        ),
        (
            "def f(x: 8.16.i32, s: i32) : 8.i32 = x |> map(fun(r => r |> reduce(mul, s)))",
            "a product from a parameter",
        ),
    ] {
        let (p, term) = forms(source, "id");
        assert!(p.mlir().contains("linalg.fill"), "{what}: {}", p.mlir());
        assert_same(&term, what);
    }
}

#[test]
fn gpu_address_spaces_are_memory_on_the_cpu() {
    // `toGlobal` at the top level stores its array as `toMem` does (a kernel of its
    // own, read by the next); `toShared` and `toPrivate` inside loops name values.
    let source = "def f(x: 16.8.f32) : 16.8.f32 =
      toGlobal(x |> map(fun(r => r |> map(fun(v => v * 2.0)))))
        |> map(fun(r => toShared(r) |> map(fun(v => toPrivate(v + 1.0)))))";
    let (p, term) = forms(source, "id");
    assert_eq!(p.kernels, 2, "{:?}", p.kernels);
    assert_same(&term, "address spaces");
}
