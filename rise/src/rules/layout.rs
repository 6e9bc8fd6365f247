//! Layout rules: moving `slide`, `split`, `join`, `transpose`, `take` and `drop` past
//! each other, widening slides, inserting layout pairs, and indexing
//! (`docs/elevate-rise-library.md`, §3.1–3.3).
//!
//! Rules whose right-hand side needs sizes read them from the inferred types and the
//! nat arguments. Where the equation is only right under a divisibility or positivity
//! fact, the rule checks it on constant sizes and fails when it cannot tell.

use super::catalogue::{Param, RuleDef};
use super::pattern::{applied, call, rule};
use super::typing::typed_result;
use crate::nat::Nat;
use crate::prim::Prim;
use crate::term::{Expr, Literal, Term};
use crate::types::TypeKind;
use elevate_core::{Name, NameSupply, Rule, Strategy};

pub(super) fn map(f: Term, x: Term) -> Term {
    call(Prim::Map, &[], [f, x])
}

pub(super) fn transpose(x: Term) -> Term {
    call(Prim::Transpose, &[], [x])
}

pub(super) fn join(x: Term) -> Term {
    call(Prim::Join, &[], [x])
}

fn take(n: Nat, x: Term) -> Term {
    call(Prim::Take, &[n], [x])
}

fn drop(n: Nat, x: Term) -> Term {
    call(Prim::Drop, &[n], [x])
}

fn slide(size: Nat, step: Nat, x: Term) -> Term {
    call(Prim::Slide, &[size, step], [x])
}

/// The length of an array-typed node.
pub(super) fn array_length(x: &Term) -> Option<Nat> {
    match x.ty()?.kind() {
        TypeKind::Array(len, _) => Some(len.clone()),
        _ => None,
    }
}

/// The value of a constant nat that is at least 1.
fn positive(n: &Nat) -> Option<i64> {
    n.as_const().filter(|c| *c >= 1)
}

/// `S(args...)` for `S` = `slide(n, m)` or `split(n)` with `values` value arguments:
/// the primitive, its nat arguments and its value arguments.
pub(super) fn window(t: &Term, values: usize) -> Option<(Prim, Vec<Nat>, Vec<Term>)> {
    [Prim::Slide, Prim::Split]
        .into_iter()
        .find_map(|p| applied(t, p, values).map(|(nats, args)| (p, nats, args)))
}

/// `transposeBeforeSlide`: `S(transpose(y)) -> map(transpose)(transpose(map(S)(y)))`
/// for `S` = `slide(n, m)` or `split(n)` (`T >> S -> *S >> T >> *T`).
pub fn transpose_before_slide() -> Strategy<Term> {
    rule("transposeBeforeSlide", |t: &Term| {
        let (p, nats, outer) = window(t, 1)?;
        let (_, inner) = applied(&outer[0], Prim::Transpose, 1)?;
        let rows = map(call(p, &nats, []), inner[0].clone());
        Some(map(Term::prim(Prim::Transpose), transpose(rows)))
    })
}

/// `transposeBeforeMapSlide`: `map(S)(transpose(y)) -> transpose(map(transpose)(S(y)))`
/// for `S` = `slide(n, m)` or `split(n)` (`T >> *S -> S >> *T >> T`).
pub fn transpose_before_map_slide() -> Strategy<Term> {
    rule("transposeBeforeMapSlide", |t: &Term| {
        let (_, m) = applied(t, Prim::Map, 2)?;
        let (p, nats, _) = window(&m[0], 0)?;
        let (_, inner) = applied(&m[1], Prim::Transpose, 1)?;
        let windows = call(p, &nats, [inner[0].clone()]);
        Some(transpose(map(Term::prim(Prim::Transpose), windows)))
    })
}

/// `mapSlideBeforeTranspose`: `transpose(map(S)(y)) -> map(transpose)(S(transpose(y)))`
/// for `S` = `slide(n, m)` or `split(n)` (`*S >> T -> T >> S >> *T`).
pub fn map_slide_before_transpose() -> Strategy<Term> {
    rule("mapSlideBeforeTranspose", |t: &Term| {
        let (_, outer) = applied(t, Prim::Transpose, 1)?;
        let (_, m) = applied(&outer[0], Prim::Map, 2)?;
        let (p, nats, _) = window(&m[0], 0)?;
        let windows = call(p, &nats, [transpose(m[1].clone())]);
        Some(map(Term::prim(Prim::Transpose), windows))
    })
}

/// `transposeBeforeMapJoin`: `map(join)(transpose(y)) -> transpose(join(map(transpose)(y)))`
/// (`T >> *J -> *T >> J >> T`).
pub fn transpose_before_map_join() -> Strategy<Term> {
    rule("transposeBeforeMapJoin", |t: &Term| {
        let (_, m) = applied(t, Prim::Map, 2)?;
        if !matches!(m[0].expr(), Expr::Prim(Prim::Join)) {
            return None;
        }
        let (_, inner) = applied(&m[1], Prim::Transpose, 1)?;
        let swapped = map(Term::prim(Prim::Transpose), inner[0].clone());
        Some(transpose(join(swapped)))
    })
}

/// `mapJoinBeforeTranspose`: `transpose(map(join)(y)) -> join(map(transpose)(transpose(y)))`
/// (`*J >> T -> T >> *T >> J`).
pub fn map_join_before_transpose() -> Strategy<Term> {
    rule("mapJoinBeforeTranspose", |t: &Term| {
        let (_, outer) = applied(t, Prim::Transpose, 1)?;
        let (_, m) = applied(&outer[0], Prim::Map, 2)?;
        if !matches!(m[0].expr(), Expr::Prim(Prim::Join)) {
            return None;
        }
        let swapped = map(Term::prim(Prim::Transpose), transpose(m[1].clone()));
        Some(join(swapped))
    })
}

/// `slide(m', k)(slide(n, s)(y)) -> map(slide(n, s))(slide((m' - 1)*s + n, k*s)(y))`
/// with constant `s, k, m' >= 1`: window `j` of the outer slide holds the inner windows
/// `j*k ..= j*k + m' - 1`, which cover `(m' - 1)*s + n` elements of `y` starting at
/// `j*k*s`.
fn slide_of_slide(outer_size: &Nat, outer_step: &Nat, inner: &[Nat], y: &Term) -> Option<Term> {
    let (size, step) = (&inner[0], &inner[1]);
    let (m, k, s) = (
        positive(outer_size)?,
        positive(outer_step)?,
        positive(step)?,
    );
    let wide = Nat::cst((m - 1).checked_mul(s)?).add(size);
    let wide_step = Nat::cst(k.checked_mul(s)?);
    Some(map(
        call(Prim::Slide, inner, []),
        slide(wide, wide_step, y.clone()),
    ))
}

/// `slideBeforeSplit`: `split(k)(slide(n, s)(y)) -> map(slide(n, s))(slide((k - 1)*s + n, k*s)(y))`
/// for constant `k, s >= 1`.
///
/// The public rule rewrites to `slide(k + n - s, k)`, which is only right for `s = 1`
/// (its source carries a "probably wrong if s != 1" note): chunk `c` of the split
/// holds the windows `c*k ..= c*k + k - 1`, which start at `c*k*s` and span
/// `(k - 1)*s + n` elements.
pub fn slide_before_split() -> Strategy<Term> {
    rule("slideBeforeSplit", |t: &Term| {
        let (k, outer) = applied(t, Prim::Split, 1)?;
        let (inner, y) = applied(&outer[0], Prim::Slide, 1)?;
        slide_of_slide(&k[0], &k[0], &inner, &y[0])
    })
}

/// `slideBeforeSlide`: `slide(m, k)(slide(n, s)(y)) -> map(slide(n, s))(slide((m - 1)*s + n, k*s)(y))`
/// for constant `m, k, s >= 1`; with the inner step `s = 1` this is the public rule's
/// `slide(m + n - 1, k)`. (The public rule is restricted to `s = 1`; one version of it
/// writes the size as `m + n - s` with `s` unbound.)
pub fn slide_before_slide() -> Strategy<Term> {
    rule("slideBeforeSlide", |t: &Term| {
        let (outer_w, outer) = applied(t, Prim::Slide, 1)?;
        let (inner, y) = applied(&outer[0], Prim::Slide, 1)?;
        slide_of_slide(&outer_w[0], &outer_w[1], &inner, &y[0])
    })
}

/// `x : n.m.t`: `(n, m)`.
fn shape2(x: &Term) -> Option<(Nat, Nat)> {
    let TypeKind::Array(n, row) = x.ty()?.kind() else {
        return None;
    };
    let TypeKind::Array(m, _) = row.kind() else {
        return None;
    };
    Some((n.clone(), m.clone()))
}

/// `dropBeforeJoin`: `drop(d)(join(x)) -> drop(d % m)(join(drop(d / m)(x)))` for
/// `x : n.m.t` with constant `d` and `m >= 1`; whole rows are dropped before the join.
/// Fails when no whole row is dropped (`d < m`), and leaves out the outer `drop` when
/// `m` divides `d`.
pub fn drop_before_join() -> Strategy<Term> {
    rule("dropBeforeJoin", |t: &Term| {
        let (d, outer) = applied(t, Prim::Drop, 1)?;
        let (_, inner) = applied(&outer[0], Prim::Join, 1)?;
        let x = &inner[0];
        let (_, m) = shape2(x)?;
        let (d, m) = (d[0].as_const()?, positive(&m)?);
        let (rows, rest) = (d / m, d % m);
        if d < 0 || rows == 0 {
            return None;
        }
        let joined = join(drop(Nat::cst(rows), x.clone()));
        Some(if rest == 0 {
            joined
        } else {
            drop(Nat::cst(rest), joined)
        })
    })
}

/// `takeBeforeJoin`: `take(k)(join(x)) -> take(k)(join(take(⌈k / m⌉)(x)))` for
/// `x : n.m.t` with constant `k` and `m >= 1`: only the rows holding the first `k`
/// elements are joined. (This is the public `take(n*m - d) -> take(t1*m - d % m) ∘ join
/// ∘ take(t1)` with `t1 = n - d / m = ⌈k / m⌉`, so `t1*m - d % m = k`.) Fails when every
/// row is needed, and leaves out the outer `take` when `m` divides `k`.
pub fn take_before_join() -> Strategy<Term> {
    rule("takeBeforeJoin", |t: &Term| {
        let (k, outer) = applied(t, Prim::Take, 1)?;
        let (_, inner) = applied(&outer[0], Prim::Join, 1)?;
        let x = &inner[0];
        let (n, m) = shape2(x)?;
        let (k, m) = (k[0].as_const()?, positive(&m)?);
        if k < 0 {
            return None;
        }
        let rows = (k + m - 1) / m;
        if Nat::cst(rows) == n {
            return None;
        }
        let joined = join(take(Nat::cst(rows), x.clone()));
        Some(if rows * m == k {
            joined
        } else {
            take(Nat::cst(k), joined)
        })
    })
}

/// `splitJoin2(n)`: `e -> join(split(n)(e))` for an array `e` whose length `n`
/// divides: a constant length is checked; a symbolic one is split as RISE does, the
/// type `(len/n).n` recording that `n` divides it (as `splitJoin`).
struct SplitJoin2(i64);

impl Rule<Term> for SplitJoin2 {
    fn name(&self) -> Name {
        Name::new("splitJoin2")
    }

    fn rewrite(&self, t: &Term, _names: &mut NameSupply) -> Option<Term> {
        let TypeKind::Array(len, _) = t.ty()?.kind() else {
            return None;
        };
        let n = Nat::cst(self.0);
        if self.0 <= 0 || len.as_const().is_some_and(|l| l % self.0 != 0) {
            return None;
        }
        let split = call(Prim::Split, &[n], [t.clone()]);
        typed_result(t, join(split))
    }

    fn write_text(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "splitJoin2({})", self.0)
    }
}

/// `splitJoin2(n)`: `e -> join(split(n)(e))` (`n` divides the length of the array `e`).
pub fn split_join2(n: i64) -> Strategy<Term> {
    super::catalogue::sized("splitJoin2", n)
}

/// [`split_join2`] without checking the argument.
fn split_join2_unchecked(n: i64) -> Strategy<Term> {
    Strategy::from_rule(SplitJoin2(n))
}

/// `slideOverlap(u)`: `slide(n, m)(x) -> join(map(slide(n, m))(slide(u, v)(x)))` with
/// `v = u + m - n`: overlapped tiling, each tile of `u` elements holds
/// `c = (u - n)/m + 1` windows. Needs constant `n, m >= 1`, `u >= n`, `m` dividing
/// `u - n`, and `c` dividing the number of windows (so that the tiles cover `x`
/// exactly); the public rule checks none of these.
struct SlideOverlap(i64);

impl Rule<Term> for SlideOverlap {
    fn name(&self) -> Name {
        Name::new("slideOverlap")
    }

    fn rewrite(&self, t: &Term, _names: &mut NameSupply) -> Option<Term> {
        let (w, x) = applied(t, Prim::Slide, 1)?;
        let (n, m, u) = (positive(&w[0])?, positive(&w[1])?, self.0);
        if u < n || (u - n) % m != 0 {
            return None;
        }
        let per_tile = (u - n) / m + 1;
        let v = per_tile.checked_mul(m)?;
        if array_length(t)?.rem(&Nat::cst(per_tile)) != Nat::cst(0) {
            return None;
        }
        let tiles = slide(Nat::cst(u), Nat::cst(v), x[0].clone());
        typed_result(t, join(map(call(Prim::Slide, &w, []), tiles)))
    }

    fn write_text(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "slideOverlap({})", self.0)
    }
}

/// `slideOverlap(u)`: `slide(n, m)(x) -> join(map(slide(n, m))(slide(u, u + m - n)(x)))`.
pub fn slide_overlap(u: i64) -> Strategy<Term> {
    super::catalogue::sized("slideOverlap", u)
}

/// [`slide_overlap`] without checking the argument.
fn slide_overlap_unchecked(u: i64) -> Strategy<Term> {
    Strategy::from_rule(SlideOverlap(u))
}

/// `dropInSlide`: `drop(l)(slide(n, 1)(x)) -> map(drop(l))(slide(n + l, 1)(x))`: the
/// windows widened by `l` on the left. Step 1 only, and at least one window must remain
/// (a constant result length >= 1), else the wide slide has no window.
pub fn drop_in_slide() -> Strategy<Term> {
    rule("dropInSlide", |t: &Term| {
        let (l, outer) = applied(t, Prim::Drop, 1)?;
        let (w, x) = applied(&outer[0], Prim::Slide, 1)?;
        if w[1] != Nat::cst(1) {
            return None;
        }
        positive(&array_length(t)?)?;
        let wide = slide(w[0].add(&l[0]), Nat::cst(1), x[0].clone());
        Some(map(call(Prim::Drop, &l, []), wide))
    })
}

/// `takeInSlide`: `take(r)(slide(n, 1)(x)) -> map(take(n))(slide(n + w - r, 1)(x))`
/// where `w` is the number of windows: the windows widened by `w - r` on the right.
/// Step 1 only, and `r` a constant >= 1.
pub fn take_in_slide() -> Strategy<Term> {
    rule("takeInSlide", |t: &Term| {
        let (r, outer) = applied(t, Prim::Take, 1)?;
        let (w, x) = applied(&outer[0], Prim::Slide, 1)?;
        if w[1] != Nat::cst(1) {
            return None;
        }
        positive(&r[0])?;
        let windows = array_length(&outer[0])?;
        let size = w[0].add(&windows).sub(&r[0]);
        let wide = slide(size, Nat::cst(1), x[0].clone());
        Some(map(call(Prim::Take, &[w[0].clone()], []), wide))
    })
}

/// `transposePairAfter`: `e -> transpose(transpose(e))` for a two-dimensional array `e`
/// (the eqsat rule of that name; the library's `createTransposePair` does the same on
/// any node, where the public `createTransposePair` rewrites `id(e)`).
pub fn transpose_pair_after() -> Strategy<Term> {
    rule("transposePairAfter", |t: &Term| {
        shape2(t)?;
        Some(transpose(transpose(t.clone())))
    })
}

fn strip_annotations(t: &Term) -> &Term {
    match t.expr() {
        Expr::Annotation(e, _) => strip_annotations(e),
        _ => t,
    }
}

/// `natAsIndex(n)(k)` with literals: `k` if `0 <= k < n`.
fn literal_index(i: &Term) -> Option<usize> {
    let (n, k) = applied(strip_annotations(i), Prim::NatAsIndex, 1)?;
    let k = match strip_annotations(&k[0]).expr() {
        Expr::Literal(Literal::I64(k)) => *k,
        Expr::Literal(Literal::I32(k)) => i64::from(*k),
        _ => return None,
    };
    (0 <= k && k < n[0].as_const()?).then_some(k as usize)
}

/// `idxReduction`: `idx(natAsIndex(n)(k))([e0, ..., e(n-1)]) -> ek` for a literal
/// index `k` (the public rule, with an array literal for `makeArray`), and
/// `idx(i)(generate(f)) -> f(i)` for any index `i`.
///
/// The eqsat versions of the public rule (`idxReduction_0_3`, `idxReduction_2_3`)
/// match index 1 but return element 0, respectively 2: unsound.
pub fn idx_reduction() -> Strategy<Term> {
    rule("idxReduction", |t: &Term| {
        let (_, args) = applied(t, Prim::Idx, 2)?;
        let array = strip_annotations(&args[1]);
        if let Expr::Array(items) = array.expr() {
            return items.get(literal_index(&args[0])?).cloned();
        }
        let (_, g) = applied(array, Prim::Generate, 1)?;
        Some(Term::app(g[0].clone(), args[0].clone()))
    })
}

/// The rules of this module, for the [catalogue](super::catalogue).
pub(super) const RULES: &[RuleDef] = &[
    RuleDef::rule("transposeBeforeSlide", "S(transpose(y)) -> map(transpose)(transpose(map(S)(y)))", transpose_before_slide)
        .note("S = slide(n, m) or split(n)")
        .bias(Prim::Transpose)
        .example("fun(y: 3.4.f32 => (y |> transpose |> slide(2, 1), y |> transpose |> split(2)))"),
    RuleDef::rule("transposeBeforeMapSlide", "map(S)(transpose(y)) -> transpose(map(transpose)(S(y)))", transpose_before_map_slide)
        .note("S = slide(n, m) or split(n)")
        .bias(Prim::Transpose)
        .example("fun(y: 4.3.f32 => (y |> transpose |> map(slide(2, 1)), y |> transpose |> map(split(2))))"),
    RuleDef::rule("mapSlideBeforeTranspose", "transpose(map(S)(y)) -> map(transpose)(S(transpose(y)))", map_slide_before_transpose)
        .note("S = slide(n, m) or split(n)")
        .bias(Prim::Transpose)
        .example("fun(y: 3.4.f32 => (y |> map(slide(2, 2)) |> transpose, y |> map(split(2)) |> transpose))"),
    RuleDef::rule("transposeBeforeMapJoin", "map(join)(transpose(y)) -> transpose(join(map(transpose)(y)))", transpose_before_map_join)
        .bias(Prim::Transpose)
        .example("fun(y: 2.3.4.f32 => y |> transpose |> map(join))"),
    RuleDef::rule("mapJoinBeforeTranspose", "transpose(map(join)(y)) -> join(map(transpose)(transpose(y)))", map_join_before_transpose)
        .bias(Prim::Transpose)
        .example("fun(y: 2.3.4.f32 => y |> map(join) |> transpose)"),
    RuleDef::rule("slideBeforeSplit", "split(k)(slide(n, s)(y)) -> map(slide(n, s))(slide((k - 1)*s + n, k*s)(y))", slide_before_split)
        .note("k, s constant")
        .bias(Prim::Split)
        .example("fun(y: 10.f32, z: 13.f32 => (y |> slide(3, 1) |> split(4), z |> slide(3, 2) |> split(3)))"),
    RuleDef::rule("slideBeforeSlide", "slide(m, k)(slide(n, s)(y)) -> map(slide(n, s))(slide((m - 1)*s + n, k*s)(y))", slide_before_slide)
        .note("m, k, s constant")
        .bias(Prim::Slide)
        .example("fun(y: 10.f32, z: 13.f32 => (y |> slide(3, 1) |> slide(4, 2), z |> slide(3, 2) |> slide(2, 1)))"),
    RuleDef::rule("dropBeforeJoin", "drop(d)(join(x)) -> drop(d % m)(join(drop(d / m)(x)))", drop_before_join)
        .note("x : n.m.t; d, m constant, d >= m")
        .bias(Prim::Join)
        .example("fun(x: 4.3.f32 => (x |> join |> drop(7), (x |> join |> drop(6), x |> join |> drop(2))))"),
    RuleDef::rule("takeBeforeJoin", "take(k)(join(x)) -> take(k)(join(take(ceil(k / m))(x)))", take_before_join)
        .note("x : n.m.t; k, m constant, rows left out")
        .bias(Prim::Join)
        .example("fun(x: 4.3.f32 => (x |> join |> take(5), (x |> join |> take(6), x |> join |> take(10))))"),
    RuleDef::sized("splitJoin2", &[Param::size("n")], "e -> join(split(n)(e))", split_join2_unchecked)
        .note("n divides the length of the array e")
        .bias(Prim::Split)
        .example("fun(x: 6.f32 => x |> map(neg))")
        .typical(&[2]),
    RuleDef::sized("slideOverlap", &[Param::size("u")], "slide(n, m)(x) -> join(map(slide(n, m))(slide(u, u + m - n)(x)))", slide_overlap_unchecked)
        .note("tiles of u elements cover x")
        .bias(Prim::Slide)
        .example("fun(x: 10.f32, y: 12.f32 => (x |> slide(3, 1), (y |> slide(2, 2), x |> slide(2, 2))))")
        .typical(&[4]),
    RuleDef::rule("dropInSlide", "drop(l)(slide(n, 1)(x)) -> map(drop(l))(slide(n + l, 1)(x))", drop_in_slide)
        .note("a window remains")
        .bias(Prim::Slide)
        .example("fun(x: 6.f32 => x |> slide(3, 1) |> drop(2))"),
    RuleDef::rule("takeInSlide", "take(r)(slide(n, 1)(x)) -> map(take(n))(slide(n + w - r, 1)(x))", take_in_slide)
        .note("w windows, r >= 1")
        .bias(Prim::Slide)
        .example("fun(x: 6.f32 => x |> slide(3, 1) |> take(3))"),
    RuleDef::rule("transposePairAfter", "e -> transpose(transpose(e))", transpose_pair_after)
        .note("e a 2D array")
        .bias(Prim::Transpose)
        .example("fun(x: 2.3.f32 => x |> map(map(neg)))"),
    RuleDef::rule("idxReduction", "idx(natAsIndex(n)(k))([e0, ..., e(n-1)]) -> ek", idx_reduction)
        .note("k literal); idx(i)(generate(f)) -> f(i")
        .example("fun(x: f32, y: 3.f32 => (idx(natAsIndex(2, 1i64), [x, 2.0]), (idx(natAsIndex(3, 2i64), generate(fun(i => idx(i, y) * 2.0)) : 3.f32), idx(natAsIndex(3, 0i64), generate(fun(i => idx(i, y)))))))"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_support::rewrite;

    #[test]
    fn slide_rules_use_the_general_step() {
        assert_eq!(
            rewrite(
                slide_before_split(),
                "fun(z: 13.f32 => z |> slide(3, 2) |> split(3))"
            )
            .unwrap(),
            "z |> slide(7, 6) |> map(slide(3, 2))"
        );
        assert_eq!(
            rewrite(
                slide_before_slide(),
                "fun(z: 13.f32 => z |> slide(3, 2) |> slide(2, 1))"
            )
            .unwrap(),
            "z |> slide(5, 2) |> map(slide(3, 2))"
        );
    }

    #[test]
    fn join_rules_cut_whole_rows() {
        let drop7 = "fun(x: 4.3.f32 => x |> join |> drop(7))";
        assert_eq!(
            rewrite(drop_before_join(), drop7).unwrap(),
            "x |> drop(2) |> join |> drop(1)"
        );
        let drop2 = "fun(x: 4.3.f32 => x |> join |> drop(2))";
        assert_eq!(rewrite(drop_before_join(), drop2), None);
        let take5 = "fun(x: 4.3.f32 => x |> join |> take(5))";
        assert_eq!(
            rewrite(take_before_join(), take5).unwrap(),
            "x |> take(2) |> join |> take(5)"
        );
        let take10 = "fun(x: 4.3.f32 => x |> join |> take(10))";
        assert_eq!(rewrite(take_before_join(), take10), None);
    }

    #[test]
    fn slide_overlap_needs_whole_tiles() {
        let rule = || slide_overlap(4);
        assert!(rewrite(rule(), "fun(x: 10.f32 => x |> slide(3, 1))").is_some());
        // 9 windows of 3 do not split into tiles of 2 windows.
        assert_eq!(rewrite(rule(), "fun(x: 11.f32 => x |> slide(3, 1))"), None);
        // (4 - 3) is not a multiple of the step 2.
        assert_eq!(rewrite(rule(), "fun(x: 11.f32 => x |> slide(3, 2))"), None);
    }

    #[test]
    fn split_join2_needs_a_divisible_length() {
        assert!(rewrite(split_join2(2), "fun(x: 6.f32 => x |> map(neg))").is_some());
        assert_eq!(
            rewrite(split_join2(4), "fun(x: 6.f32 => x |> map(neg))"),
            None
        );
    }
}
