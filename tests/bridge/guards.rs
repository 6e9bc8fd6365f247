//! Guards between computed values: a computed array padded (`padCst`, `padClamp`), a
//! `concat` or an array literal read across its parts. Each is structured: a buffer of
//! its own written box by box (each kernel computing one branch where it is defined),
//! which the kernel reading it reads in bounds.

use super::{assert_same, lowered, payload};
use elevate::bridge::Payload;
use elevate::rise::{NatEnv, Term};

fn structured(source: &str, strategy: &str) -> (Payload, Term) {
    let term = lowered(source, &NatEnv::default(), strategy);
    let p = payload("f", &term);
    assert!(!p.mlir().contains("scf.for"), "{}", p.mlir());
    (p, term)
}

#[test]
fn a_literal_read_at_every_position_is_written_item_by_item_then_reduced() {
    let source = "def f(x: 8.f32) : 8.f32 =
      x |> map(fun(v => [v, v * 2.0, v + 1.0, v - 1.0, 3.0 * v] |> reduce(add, 0.0)))";
    let (p, term) = structured(source, "id");
    // An item each into the literal's buffer (5 x 8), then the sum.
    assert_eq!(p.kernels, 6, "{}", p.mlir());
    assert!(p.mlir().contains("memref<5x8xf32>"), "{}", p.mlir());
    assert_same(&term, "a literal reduced");
    // Of three items (the sum computed in the body): the items themselves.
    let source = "def f(x: 8.f32) : 8.f32 =
      x |> map(fun(v => [v, v * 2.0, v + 1.0] |> reduce(add, 0.0)))";
    let (p, term) = structured(source, "id");
    assert_eq!(p.kernels, 1, "{}", p.mlir());
    assert_same(&term, "a literal reduced");
}

#[test]
fn a_padded_computed_array_is_padded_into_its_own_buffer() {
    // relu, padded, then a 3-point window sum (its taps in the body): the padding's
    // buffer (34 elements) is written in three boxes, relu computed in the interior
    // only; the middle tap, never outside, computes its relu where it reads it.
    let source = "def f(x: 32.f32) : 32.f32 =
      x |> map(fun(v => max(v, 0.0))) |> padCst(1, 1, 0.0) |> slide(3, 1)
        |> map(fun(w => w |> reduce(add, 0.0)))";
    let (p, term) = structured(source, "id");
    assert_eq!(p.kernels, 4, "{}", p.mlir());
    assert!(p.mlir().contains("memref<34xf32>"), "{}", p.mlir());
    assert_eq!(p.mlir().matches("arith.maxnumf").count(), 2, "{}", p.mlir());
    assert_same(&term, "relu padded");
}

#[test]
fn a_stencil_of_a_computed_image_is_structured_with_its_schedule() {
    // The Jacobi sweep of relu(img): the image padded on both sides (rows of a
    // constant array), with and without the library's vectorized schedule. The
    // neighbours above and below read one buffer (relu(img) between two rows of
    // zeros), those left and right another.
    let source = "def pad2d(img: h.w.f32) =
      img |> map(padCst(1, 1, 0.0)) |> padCst(1, 1, generate(fun(i => 0.0)))
    def at(r: i64, c: i64, nbh: 3.3.f32) =
      nbh |> idx(natAsIndex(3, r)) |> idx(natAsIndex(3, c))
    def f(img: 16.32.f32) : 16.32.f32 =
      img |> map(map(fun(v => max(v, 0.0)))) |> pad2d |> map(slide(3, 1)) |> slide(3, 1)
        |> map(transpose) |> map(map(fun(nbh =>
          0.2 * (at(0i64, 1i64, nbh) + at(1i64, 0i64, nbh) + at(1i64, 1i64, nbh)
                 + at(1i64, 2i64, nbh) + at(2i64, 1i64, nbh)))))";
    for strategy in ["id", "elementwise(8)"] {
        let (p, term) = structured(source, strategy);
        assert_eq!(
            p.mlir().matches("memref.alloc()").count(),
            2,
            "{}",
            p.mlir()
        );
        assert!(p.mlir().contains("memref<18x32xf32>"), "{}", p.mlir());
        assert_same(&term, strategy);
    }
}

#[test]
fn pad_clamp_repeats_the_edges_of_a_buffer_and_of_a_computed_array() {
    for body in ["x", "x |> map(fun(v => v * 2.0))"] {
        let source = format!(
            "def f(x: 12.f32) : 15.f32 = {body} |> padClamp(2, 1) |> map(fun(v => v + 1.0))"
        );
        let (_, term) = structured(&source, "id");
        assert_same(&term, &source);
    }
}

#[test]
fn a_concat_read_across_its_parts_is_written_part_by_part_then_read() {
    let source = "def f(x: 8.f32, y: 4.f32) : f32 =
      concat(x |> map(fun(v => v * 2.0)), y) |> reduce(add, 0.0)";
    let (p, term) = structured(source, "id");
    assert!(p.mlir().contains("memref<12xf32>"), "{}", p.mlir());
    assert_same(&term, "concat reduced");
}

#[test]
fn rows_no_loop_walks_get_a_loop_of_their_own() {
    // The rows of a joined `generate` are no loop of the program's: the kernel gets
    // one for them.
    let source = "def f(x: 8.f32) : 32.f32 =
      generate(fun(i => x |> mapSeq(fun(v => v + 1.0)))) : 4.8.f32 |> join";
    let (_, term) = structured(source, "id");
    assert_same(&term, "a joined generate");
}

#[test]
fn a_long_literal_read_at_every_position_is_a_kernel_per_item() {
    // 100 items, each a kernel writing its part of the literal's buffer.
    let items = (0..100).map(|k| format!("v + {k}.0")).collect::<Vec<_>>();
    let source = format!(
        "def f(x: 8.f32) : 8.f32 = x |> map(fun(v => [{}] |> reduce(add, 0.0)))",
        items.join(", ")
    );
    let term = lowered(&source, &NatEnv::default(), "id");
    let p = payload("f", &term);
    assert!(p.kernels > 100, "{:?}", p.kernels);
    assert_same(&term, "a long literal reduced");
}

#[test]
fn paddings_of_paddings_of_a_computed_array_are_one_guard_however_deep() {
    // Padded twice: one buffer, the conditions merged.
    let source = "def f(x: 16.f32) : 22.f32 =
      x |> map(fun(v => v * 2.0)) |> padCst(1, 2, 0.0) |> padCst(2, 1, 0.0)
        |> map(fun(v => v + 1.0))";
    let (p, term) = structured(source, "id");
    assert!(p.mlir().contains("memref<22xf32>"), "{}", p.mlir());
    assert_same(&term, "padded twice");
    // 20,000 times: evaluated, merged and written without recursion.
    let n = 20_000;
    let pads = " |> padCst(1, 0, 0.0)".repeat(n);
    let source = format!(
        "def f(x: 4.f32) : {}.f32 = x |> map(fun(v => v * 2.0)){pads} |> map(fun(v => v + 1.0))",
        n + 4
    );
    let (p, _) = structured(&source, "id");
    assert!(
        p.mlir().contains(&format!("memref<{}xf32>", n + 4)),
        "{}",
        p.mlir().len()
    );
}

#[test]
fn a_joined_concat_of_rows_is_written_over_its_rows_and_columns() {
    // Rows of two constant blocks, joined: element `p` is row `p / 2`'s column
    // `p mod 2`, guarded at both. The output is written over its rows and columns
    // (12 as 6 x 2), where each guard is on one of them, box by box.
    let source = "def f(x: 4.f32) : 12.f32 =
      concat(generate(fun(i => [x |> idx(i), -4.0])) : 4.2.f32,
             generate(fun(i => [0.0, 2.0])) : 2.2.f32) |> join";
    let (p, term) = structured(source, "id");
    assert!(p.mlir().contains("memref<6x2xf32>"), "{}", p.mlir());
    assert_same(&term, "a joined concat of rows");
}

#[test]
fn windows_over_joined_and_split_joined_arrays_read_affinely() {
    // A window over a joined buffer reads it through a strided view (rows of 4 at a
    // stride of 4, windows overlapping); a mapped joined array is written over its
    // rows and columns; an array split then joined is the array.
    for (source, what) in [
        (
            "def f(x: 4.2.4.f32) : 7.2.4.f32 = x |> join |> slide(2, 1)",
            "a window over a joined buffer",
        ),
        (
            "def f(x: 3.6.f32) : 18.f32 = x |> join |> map(fun(v => abs(v)))",
            "a joined array mapped",
        ),
        (
            "def f(x: 6.f32) : 6.f32 =
               zip(x |> split(3) |> join, x) |> map(fun(p => fst(p) * snd(p)))",
            "an array split then joined",
        ),
    ] {
        let (_, term) = structured(source, "id");
        assert_same(&term, what);
    }
}

#[test]
fn a_concat_inside_mapped_rows_joined_or_dropped_is_written_into_strided_parts() {
    // Each row is a joined row of `x` then two constants; the rows are joined (or the
    // first dropped first). Each part of the `concat` is written at a mixed-radix
    // position of the output (`2 * a + b`, 4 of each row's 6), through a strided view.
    for (source, what) in [
        (
            "def f(x: 2.2.2.f32) : 12.f32 =
               x |> map(fun(r => concat(r |> join, generate(fun(i => 0.5)) : 2.f32)
                 |> map(fun(v => 3.0 + v)))) |> join",
            "a concat in mapped rows, joined",
        ),
        (
            "def f(x: 2.2.2.f32) : 6.f32 =
               x |> map(fun(r => concat(r |> join, generate(fun(i => 0.5)) : 2.f32)
                 |> map(fun(v => 3.0 + v)))) |> drop(1) |> join",
            "a concat in mapped rows, one dropped, joined",
        ),
    ] {
        let (p, term) = structured(source, "id");
        assert!(p.mlir().contains("memref.reinterpret_cast"), "{}", p.mlir());
        assert_same(&term, what);
    }
}

#[test]
fn a_reduction_read_inside_a_guard_is_computed_only_where_the_guard_reads_it() {
    // The clamped rows read a reduction of the padded rows at `j - 2` only where
    // `j >= 2`: it is computed over those 2 positions, not over all 4 (where it would
    // read before the array's start).
    let source = "def f(x: 4.2.2.f32) : 4.4.2.f32 =
      x |> drop(2) |> padCst(2, 0, generate(fun(i => [0.0, 3.0])) : 2.2.f32)
        |> map(fun(r => r
          |> map(map(fun(v => generate(fun(i => v)) : 2.f32 |> reduce(add, 0.0))))
          |> padClamp(2, 0)))";
    let (p, term) = structured(source, "id");
    assert!(!p.mlir().contains("[2, -2"), "{}", p.mlir());
    assert_same(&term, "a reduction read inside a clamp");
}
