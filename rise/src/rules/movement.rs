//! Movement rules: exchange the order of data-layout primitives and maps, and other
//! applied-form equations of the ELEVATE library (`docs/elevate-rise-library.md`, §3.2–3.3).

use super::catalogue::{EGraphUse, RuleDef, ALGORITHMIC};
use super::pattern::{applied, call};
use super::pattern::{rule, rule_with_names};
use crate::nat::Nat;
use crate::prim::Prim;
use crate::term::{Expr, Ident, Term};
use elevate_core::Strategy;

/// `f` if `t` is `map(f)` (partially applied), i.e. `*f`.
fn mapped_function(t: &Term) -> Option<Term> {
    applied(t, Prim::Map, 1).map(|(_, args)| args[0].clone())
}

fn map(f: Term, x: Term) -> Term {
    call(Prim::Map, &[], [f, x])
}

fn transpose(x: Term) -> Term {
    call(Prim::Transpose, &[], [x])
}

fn join(x: Term) -> Term {
    call(Prim::Join, &[], [x])
}

fn pair(a: Term, b: Term) -> Term {
    call(Prim::MakePair, &[], [a, b])
}

/// `transpose(map(map(f))(y)) -> map(map(f))(transpose(y))`
pub fn map_map_f_before_transpose() -> Strategy<Term> {
    rule("mapMapFBeforeTranspose", |t: &Term| {
        let (_, outer) = applied(t, Prim::Transpose, 1)?;
        let (_, m) = applied(&outer[0], Prim::Map, 2)?;
        mapped_function(&m[0])?;
        Some(map(m[0].clone(), transpose(m[1].clone())))
    })
}

/// `map(map(f))(transpose(y)) -> transpose(map(map(f))(y))`
pub fn transpose_before_map_map_f() -> Strategy<Term> {
    rule("transposeBeforeMapMapF", |t: &Term| {
        let (_, m) = applied(t, Prim::Map, 2)?;
        mapped_function(&m[0])?;
        let (_, inner) = applied(&m[1], Prim::Transpose, 1)?;
        Some(transpose(map(m[0].clone(), inner[0].clone())))
    })
}

/// `map(map(f))(split(n)(y)) -> split(n)(map(f)(y))`, likewise for `slide(n, m)`
pub fn slide_before_map_map_f() -> Strategy<Term> {
    rule("slideBeforeMapMapF", |t: &Term| {
        let (_, m) = applied(t, Prim::Map, 2)?;
        let f = mapped_function(&m[0])?;
        for p in [Prim::Split, Prim::Slide] {
            if let Some((nats, inner)) = applied(&m[1], p, 1) {
                return Some(call(p, &nats, [map(f, inner[0].clone())]));
            }
        }
        None
    })
}

/// `slide(n, m)(map(f)(y)) -> map(map(f))(slide(n, m)(y))`, likewise for `split(n)`
/// (`splitBeforeMap`)
fn window_before_map(name: &'static str, p: Prim) -> Strategy<Term> {
    rule(name, move |t: &Term| {
        let (nats, outer) = applied(t, p, 1)?;
        let (_, m) = applied(&outer[0], Prim::Map, 2)?;
        let inner = call(Prim::Map, &[], [m[0].clone()]);
        Some(map(inner, call(p, &nats, [m[1].clone()])))
    })
}

/// `slide(n, m)(map(f)(y)) -> map(map(f))(slide(n, m)(y))`
pub fn slide_before_map() -> Strategy<Term> {
    window_before_map("slideBeforeMap", Prim::Slide)
}

/// `split(n)(map(f)(y)) -> map(map(f))(split(n)(y))`
pub fn split_before_map() -> Strategy<Term> {
    super::catalogue::rule("splitBeforeMap")
}

/// `map(f)(join(y)) -> join(map(map(f))(y))`
pub fn join_before_map_f() -> Strategy<Term> {
    super::catalogue::rule("joinBeforeMapF")
}

/// `join(map(map(f))(y)) -> map(f)(join(y))`
pub fn map_map_f_before_join() -> Strategy<Term> {
    rule("mapMapFBeforeJoin", |t: &Term| {
        let (_, outer) = applied(t, Prim::Join, 1)?;
        let (_, m) = applied(&outer[0], Prim::Map, 2)?;
        let f = mapped_function(&m[0])?;
        Some(map(f, join(m[1].clone())))
    })
}

/// `take(n)(map(f)(x)) -> map(f)(take(n)(x))`
pub fn take_before_map() -> Strategy<Term> {
    super::catalogue::rule("takeBeforeMap")
}

/// `drop(n)(map(f)(x)) -> map(f)(drop(n)(x))`
pub fn drop_before_map() -> Strategy<Term> {
    super::catalogue::rule("dropBeforeMap")
}

/// `map(f)(take(n)(x)) -> take(n)(map(f)(x))`
pub fn take_after_map() -> Strategy<Term> {
    super::catalogue::rule("takeAfterMap")
}

/// `join(join(y)) -> join(map(join)(y))`
pub fn join_before_join() -> Strategy<Term> {
    super::catalogue::rule("joinBeforeJoin")
}

/// `join(map(join)(y)) -> join(join(y))`
pub fn map_join_before_join() -> Strategy<Term> {
    super::catalogue::rule("mapJoinBeforeJoin")
}

/// `transpose(join(y)) -> map(join)(transpose(map(transpose)(y)))`
pub fn join_before_transpose() -> Strategy<Term> {
    rule("joinBeforeTranspose", |t: &Term| {
        let (_, outer) = applied(t, Prim::Transpose, 1)?;
        let (_, inner) = applied(&outer[0], Prim::Join, 1)?;
        let swapped = transpose(map(Term::prim(Prim::Transpose), inner[0].clone()));
        Some(map(Term::prim(Prim::Join), swapped))
    })
}

/// `join(map(transpose)(y)) -> transpose(map(join)(transpose(y)))`
pub fn map_transpose_before_join() -> Strategy<Term> {
    rule("mapTransposeBeforeJoin", |t: &Term| {
        let (_, outer) = applied(t, Prim::Join, 1)?;
        let (_, m) = applied(&outer[0], Prim::Map, 2)?;
        if !matches!(m[0].expr(), Expr::Prim(Prim::Transpose)) {
            return None;
        }
        Some(transpose(map(
            Term::prim(Prim::Join),
            transpose(m[1].clone()),
        )))
    })
}

/// `zip(map(fa)(a))(map(fb)(b)) -> map(fun(p => (fa(fst(p)), fb(snd(p)))))(zip(a)(b))`
pub fn map_outside_zip() -> Strategy<Term> {
    super::catalogue::rule("mapOutsideZip")
}

/// `zip(a)(a) -> map(fun(x => (x, x)))(a)`
pub fn zip_same() -> Strategy<Term> {
    rule_with_names("zipSame", |t: &Term, names| {
        let (_, z) = applied(t, Prim::Zip, 2)?;
        if !z[0].alpha_eq(&z[1]) {
            return None;
        }
        let x = Ident::supplied(names, "x");
        Some(map(
            Term::lambda(x.clone(), pair(Term::var(&x), Term::var(&x))),
            z[0].clone(),
        ))
    })
}

/// `zip(a)(b) -> map(fun(x => (snd(x), fst(x))))(zip(b)(a))`
pub fn zip_swap() -> Strategy<Term> {
    rule_with_names("zipSwap", |t: &Term, names| {
        let (_, z) = applied(t, Prim::Zip, 2)?;
        let x = Ident::supplied(names, "x");
        let swapped = pair(
            call(Prim::Snd, &[], [Term::var(&x)]),
            call(Prim::Fst, &[], [Term::var(&x)]),
        );
        Some(map(
            Term::lambda(x, swapped),
            call(Prim::Zip, &[], [z[1].clone(), z[0].clone()]),
        ))
    })
}

/// `unzip(zip(a)(b)) -> (a, b)`
pub fn unzip_zip_is_pair() -> Strategy<Term> {
    super::catalogue::rule("unzipZipIsPair")
}

/// The inner map function of a two-deep map nest's outer function: `g` for `map(g)`
/// or for its eta-expanded form `fun(a => map(g)(a))`.
fn inner_of_nest(outer: &Term) -> Option<Term> {
    if let Some(g) = mapped_function(outer) {
        return Some(g);
    }
    let Expr::Lambda(a, _, body) = outer.expr() else {
        return None;
    };
    let (_, m) = applied(body, Prim::Map, 2)?;
    match m[1].expr() {
        Expr::Var(v) if v.id == a.id && !m[0].has_free(a.id) => Some(m[0].clone()),
        _ => None,
    }
}

/// `loopInterchange`: `map(map(g))(x) -> transpose(map(map(g))(transpose(x)))`, the
/// two loops of a map nest swapped (`**g = T ∘ **g ∘ T`; ELEVATE's
/// `idAfter ; createTransposePair ; DFNF ; argument(mapMapFBeforeTranspose)`). Also
/// matches the data-flow normal form `map(fun(a => map(g)(a)))(x)`.
///
/// When the inner map runs over an array `e` that does not depend on the outer
/// element, the loops swap without transposing the input:
/// `map(fun(a => map(fun(b => f))(e)))(x) -> transpose(map(fun(b => map(fun(a => f))(x)))(e))`
/// (`a` not free in `e`).
pub fn loop_interchange() -> Strategy<Term> {
    rule_with_names("loopInterchange", |t: &Term, names| {
        let (_, m) = applied(t, Prim::Map, 2)?;
        if let Some(g) = inner_of_nest(&m[0]) {
            let nest = call(Prim::Map, &[], [g]);
            return Some(transpose(map(nest, transpose(m[1].clone()))));
        }
        let Expr::Lambda(a, annotation, body) = m[0].expr() else {
            return None;
        };
        let (_, inner) = applied(body, Prim::Map, 2)?;
        let e = &inner[1];
        if e.has_free(a.id) {
            return None;
        }
        // The inner function as `fun(b => f)`.
        let (b, f) = match inner[0].expr() {
            Expr::Lambda(b, None, f) => (b.clone(), f.clone()),
            _ => {
                let b = Ident::supplied(names, "b");
                (b.clone(), Term::app(inner[0].clone(), Term::var(&b)))
            }
        };
        let over_x = map(
            Term::new(Expr::Lambda(a.clone(), annotation.clone(), f)),
            m[1].clone(),
        );
        Some(transpose(map(Term::lambda(b, over_x), e.clone())))
    })
}

fn take(n: Nat, x: Term) -> Term {
    call(Prim::Take, &[n], [x])
}

fn drop(n: Nat, x: Term) -> Term {
    call(Prim::Drop, &[n], [x])
}

/// `drop(m)(take(k)(x)) -> take(k - m)(drop(m)(x))`
pub fn drop_before_take() -> Strategy<Term> {
    rule("dropBeforeTake", |t: &Term| {
        let (m, outer) = applied(t, Prim::Drop, 1)?;
        let (k, inner) = applied(&outer[0], Prim::Take, 1)?;
        Some(take(k[0].sub(&m[0]), drop(m[0].clone(), inner[0].clone())))
    })
}

/// `take(n)(drop(m)(x)) -> drop(m)(take(n + m)(x))`
pub fn take_before_drop() -> Strategy<Term> {
    rule("takeBeforeDrop", |t: &Term| {
        let (n, outer) = applied(t, Prim::Take, 1)?;
        let (m, inner) = applied(&outer[0], Prim::Drop, 1)?;
        Some(drop(m[0].clone(), take(n[0].add(&m[0]), inner[0].clone())))
    })
}

/// `take(n)(zip(a)(b)) -> zip(take(n)(a))(take(n)(b))`, likewise `drop` (`dropInZip`)
fn cut_in_zip(name: &'static str, p: Prim) -> Strategy<Term> {
    rule(name, move |t: &Term| {
        let (n, outer) = applied(t, p, 1)?;
        let (_, z) = applied(&outer[0], Prim::Zip, 2)?;
        let (a, b) = (call(p, &n, [z[0].clone()]), call(p, &n, [z[1].clone()]));
        Some(call(Prim::Zip, &[], [a, b]))
    })
}

/// `take(n)(zip(a)(b)) -> zip(take(n)(a))(take(n)(b))`
pub fn take_in_zip() -> Strategy<Term> {
    cut_in_zip("takeInZip", Prim::Take)
}

/// `drop(n)(zip(a)(b)) -> zip(drop(n)(a))(drop(n)(b))`
pub fn drop_in_zip() -> Strategy<Term> {
    cut_in_zip("dropInZip", Prim::Drop)
}

/// `zip(take(n)(a))(take(n)(b)) -> take(n)(zip(a)(b))` where `a` and `b` have the same
/// length (read from their types)
pub fn take_outside_zip() -> Strategy<Term> {
    rule("takeOutsideZip", |t: &Term| {
        let (_, z) = applied(t, Prim::Zip, 2)?;
        let (n, a) = applied(&z[0], Prim::Take, 1)?;
        let (m, b) = applied(&z[1], Prim::Take, 1)?;
        // `zip` needs equal lengths: the untaken arrays must have them too.
        if n != m || array_length(&a[0])? != array_length(&b[0])? {
            return None;
        }
        Some(take(
            n[0].clone(),
            call(Prim::Zip, &[], [a[0].clone(), b[0].clone()]),
        ))
    })
}

/// `take(t)(slide(n, m)(x)) -> slide(n, m)(take(m*(t - 1) + n)(x))`
pub fn take_before_slide() -> Strategy<Term> {
    rule("takeBeforeSlide", |t: &Term| {
        let (count, outer) = applied(t, Prim::Take, 1)?;
        let (window, inner) = applied(&outer[0], Prim::Slide, 1)?;
        let (size, step) = (&window[0], &window[1]);
        let needed = step.mul(&count[0].sub(&Nat::cst(1))).add(size);
        Some(call(Prim::Slide, &window, [take(needed, inner[0].clone())]))
    })
}

/// `drop(d)(slide(n, m)(x)) -> slide(n, m)(drop(d*m)(x))`
pub fn drop_before_slide() -> Strategy<Term> {
    rule("dropBeforeSlide", |t: &Term| {
        let (count, outer) = applied(t, Prim::Drop, 1)?;
        let (window, inner) = applied(&outer[0], Prim::Slide, 1)?;
        let skipped = count[0].mul(&window[1]);
        Some(call(
            Prim::Slide,
            &window,
            [drop(skipped, inner[0].clone())],
        ))
    })
}

/// `mapFst(f)(mapFst(g)(p)) -> mapFst(fun(y => f(g(y))))(p)`
pub fn map_fst_fusion() -> Strategy<Term> {
    super::catalogue::rule("mapFstFusion")
}

/// `mapSnd(f)(mapSnd(g)(p)) -> mapSnd(fun(y => f(g(y))))(p)`
pub fn map_snd_fusion() -> Strategy<Term> {
    super::catalogue::rule("mapSndFusion")
}

/// `mapFst(g)(mapSnd(f)(p)) -> mapSnd(f)(mapFst(g)(p))`
pub fn map_fst_before_map_snd() -> Strategy<Term> {
    super::catalogue::rule("mapFstBeforeMapSnd")
}

/// `reduce(add, 0)(join(x))`: the parts of a sum of a joined array.
fn sum_of_join(t: &Term) -> Option<(Term, Term)> {
    let (_, r) = applied(t, Prim::Reduce, 3)?;
    if !matches!(r[0].expr(), Expr::Prim(Prim::Add)) {
        return None;
    }
    let zero = match r[1].expr() {
        Expr::Literal(crate::term::Literal::F32(v)) => *v == 0.0,
        Expr::Literal(crate::term::Literal::F64(v)) => *v == 0.0,
        Expr::Literal(crate::term::Literal::I32(0) | crate::term::Literal::I64(0)) => true,
        _ => false,
    };
    if !zero {
        return None;
    }
    let (_, j) = applied(&r[2], Prim::Join, 1)?;
    Some((r[1].clone(), j[0].clone()))
}

fn sum(zero: &Term, x: Term) -> Term {
    call(Prim::Reduce, &[], [Term::prim(Prim::Add), zero.clone(), x])
}

/// `separateSumHV`: `sum(join(x)) -> sum(map(sum)(x))` with `sum = reduce(add, 0)`:
/// a 2-D sum as row sums, then their sum.
pub fn separate_sum_hv() -> Strategy<Term> {
    rule("separateSumHV", |t: &Term| {
        let (zero, x) = sum_of_join(t)?;
        let rows = call(
            Prim::Map,
            &[],
            [
                call(Prim::Reduce, &[], [Term::prim(Prim::Add), zero.clone()]),
                x,
            ],
        );
        Some(sum(&zero, rows))
    })
}

/// `separateSumVH`: `sum(join(x)) -> sum(map(sum)(transpose(x)))`: column sums first.
pub fn separate_sum_vh() -> Strategy<Term> {
    rule("separateSumVH", |t: &Term| {
        let (zero, x) = sum_of_join(t)?;
        let columns = call(
            Prim::Map,
            &[],
            [
                call(Prim::Reduce, &[], [Term::prim(Prim::Add), zero.clone()]),
                transpose(x),
            ],
        );
        Some(sum(&zero, columns))
    })
}

/// The length of an array-typed node.
fn array_length(x: &Term) -> Option<Nat> {
    match x.ty()?.kind() {
        crate::types::TypeKind::Array(len, _) => Some(len.clone()),
        _ => None,
    }
}

/// `mapIdentityAfter`: `e -> map(fun(x => x))(e)` for an array `e`.
pub fn map_identity_after() -> Strategy<Term> {
    rule_with_names("mapIdentityAfter", |t: &Term, names| {
        array_length(t)?;
        let x = Ident::supplied(names, "x");
        Some(map(Term::lambda(x.clone(), Term::var(&x)), t.clone()))
    })
}

/// `mapIdentity`: `map(fun(x => x))(xs) -> xs`
pub fn map_identity() -> Strategy<Term> {
    super::catalogue::rule("mapIdentity")
}

/// `dropNothing`: `drop(0)(x) -> x`
pub fn drop_nothing() -> Strategy<Term> {
    rule("dropNothing", |t: &Term| {
        let (n, x) = applied(t, Prim::Drop, 1)?;
        (n[0] == Nat::cst(0)).then(|| x[0].clone())
    })
}

/// `takeAll`: `take(n)(x) -> x` where `x` has `n` elements.
pub fn take_all() -> Strategy<Term> {
    rule("takeAll", |t: &Term| {
        let (n, x) = applied(t, Prim::Take, 1)?;
        (array_length(&x[0])? == n[0]).then(|| x[0].clone())
    })
}

/// `slideAfter`: `e -> join(slide(1, 1)(e))` for an array `e`.
pub fn slide_after() -> Strategy<Term> {
    rule("slideAfter", |t: &Term| {
        array_length(t)?;
        Some(join(call(
            Prim::Slide,
            &[Nat::cst(1), Nat::cst(1)],
            [t.clone()],
        )))
    })
}

fn fst(x: Term) -> Term {
    call(Prim::Fst, &[], [x])
}

fn snd(x: Term) -> Term {
    call(Prim::Snd, &[], [x])
}

fn zip(a: Term, b: Term) -> Term {
    call(Prim::Zip, &[], [a, b])
}

/// `zipRotateLeft`: `zip(a)(zip(b)(c)) -> map(fun(x => (fst(fst(x)), (snd(fst(x)), snd(x)))))(zip(zip(a)(b))(c))`
pub fn zip_rotate_left() -> Strategy<Term> {
    rule_with_names("zipRotateLeft", |t: &Term, names| {
        let (_, outer) = applied(t, Prim::Zip, 2)?;
        let (_, inner) = applied(&outer[1], Prim::Zip, 2)?;
        let x = Ident::supplied(names, "x");
        let v = || Term::var(&x);
        let regroup = pair(fst(fst(v())), pair(snd(fst(v())), snd(v())));
        let zipped = zip(zip(outer[0].clone(), inner[0].clone()), inner[1].clone());
        Some(map(Term::lambda(x.clone(), regroup), zipped))
    })
}

/// `zipRotateRight`: `zip(zip(a)(b))(c) -> map(fun(x => ((fst(x), fst(snd(x))), snd(snd(x)))))(zip(a)(zip(b)(c)))`
pub fn zip_rotate_right() -> Strategy<Term> {
    rule_with_names("zipRotateRight", |t: &Term, names| {
        let (_, outer) = applied(t, Prim::Zip, 2)?;
        let (_, inner) = applied(&outer[0], Prim::Zip, 2)?;
        let x = Ident::supplied(names, "x");
        let v = || Term::var(&x);
        let regroup = pair(pair(fst(v()), fst(snd(v()))), snd(snd(v())));
        let zipped = zip(inner[0].clone(), zip(inner[1].clone(), outer[1].clone()));
        Some(map(Term::lambda(x.clone(), regroup), zipped))
    })
}

/// `padCstAfterMap`: `map(f)(padCst(l, r, c)(x)) -> padCst(l, r, f(c))(map(f)(x))`: the
/// padding value goes through `f` too.
pub fn pad_cst_after_map() -> Strategy<Term> {
    rule("padCstAfterMap", |t: &Term| {
        let (_, m) = applied(t, Prim::Map, 2)?;
        let (lr, pad) = applied(&m[1], Prim::PadCst, 2)?;
        let padding = Term::app(m[0].clone(), pad[0].clone());
        Some(call(
            Prim::PadCst,
            &lr,
            [padding, map(m[0].clone(), pad[1].clone())],
        ))
    })
}

/// `padClampAfterMap`: `map(f)(padClamp(l, r)(x)) -> padClamp(l, r)(map(f)(x))`: the
/// repeated border elements are mapped like the others.
pub fn pad_clamp_after_map() -> Strategy<Term> {
    rule("padClampAfterMap", |t: &Term| {
        let (_, m) = applied(t, Prim::Map, 2)?;
        let (lr, pad) = applied(&m[1], Prim::PadClamp, 1)?;
        Some(call(
            Prim::PadClamp,
            &lr,
            [map(m[0].clone(), pad[0].clone())],
        ))
    })
}

/// The rules of this module, for the [catalogue](super::catalogue).
pub(super) const RULES: &[RuleDef] = &[
    RuleDef::rule("mapMapFBeforeTranspose", "transpose(map(map(f))(y)) -> map(map(f))(transpose(y))", map_map_f_before_transpose)
        .example("fun(y: 2.3.f32 => y |> map(map(neg)) |> transpose)")
        .egraph(EGraphUse::Equation("transpose(map(map(f))(y)) -> map(map(f))(transpose(y))"))
        .sets(ALGORITHMIC),
    RuleDef::rule("transposeBeforeMapMapF", "map(map(f))(transpose(y)) -> transpose(map(map(f))(y))", transpose_before_map_map_f)
        .example("fun(y: 2.3.f32 => y |> transpose |> map(map(neg)))")
        .egraph(EGraphUse::Equation("map(map(f))(transpose(y)) -> transpose(map(map(f))(y))"))
        .sets(ALGORITHMIC),
    RuleDef::rule("slideBeforeMapMapF", "map(map(f))(slide(n, m)(y)) -> slide(n, m)(map(f)(y)), likewise split(n)", slide_before_map_map_f)
        .example("fun(y: 6.f32 => (y |> slide(3, 1) |> map(map(neg)), y |> split(2) |> map(map(neg))))"),
    RuleDef::rule("slideBeforeMap", "slide(n, m)(map(f)(y)) -> map(map(f))(slide(n, m)(y))", slide_before_map)
        .bias(Prim::Slide)
        .example("fun(y: 6.f32 => y |> map(neg) |> slide(3, 1))"),
    RuleDef::equation("splitBeforeMap", "split(n)(map(f)(y)) -> map(map(f))(split(n)(y))")
        .bias(Prim::Split)
        .example("fun(y: 6.f32 => y |> map(neg) |> split(2))")
        .sets(ALGORITHMIC),
    RuleDef::equation("joinBeforeMapF", "map(f)(join(y)) -> join(map(map(f))(y))")
        .bias(Prim::Join)
        .example("fun(y: 2.3.f32 => y |> join |> map(neg))")
        .sets(ALGORITHMIC),
    RuleDef::rule("mapMapFBeforeJoin", "join(map(map(f))(y)) -> map(f)(join(y))", map_map_f_before_join)
        .example("fun(y: 2.3.f32 => y |> map(map(neg)) |> join)")
        .egraph(EGraphUse::Equation("join(map(map(f))(y)) -> map(f)(join(y))"))
        .sets(ALGORITHMIC),
    RuleDef::equation("takeBeforeMap", "take(n)(map(f)(x)) -> map(f)(take(n)(x))")
        .bias(Prim::Take)
        .example("fun(y: 5.f32 => y |> map(neg) |> take(2))"),
    RuleDef::equation("dropBeforeMap", "drop(n)(map(f)(x)) -> map(f)(drop(n)(x))")
        .bias(Prim::Drop)
        .example("fun(y: 5.f32 => y |> map(neg) |> drop(2))"),
    RuleDef::equation("takeAfterMap", "map(f)(take(n)(x)) -> take(n)(map(f)(x))")
        .bias(Prim::Take)
        .example("fun(y: 5.f32 => y |> take(2) |> map(neg))"),
    RuleDef::equation("joinBeforeJoin", "join(join(y)) -> join(map(join)(y))")
        .bias(Prim::Join)
        .example("fun(y: 2.3.2.i32 => y |> join |> join)"),
    RuleDef::equation("mapJoinBeforeJoin", "join(map(join)(y)) -> join(join(y))")
        .example("fun(y: 2.3.2.i32 => y |> map(join) |> join)"),
    RuleDef::rule("joinBeforeTranspose", "transpose(join(y)) -> map(join)(transpose(map(transpose)(y)))", join_before_transpose)
        .example("fun(y: 2.3.4.i32 => y |> join |> transpose)"),
    RuleDef::rule("mapTransposeBeforeJoin", "join(map(transpose)(y)) -> transpose(map(join)(transpose(y)))", map_transpose_before_join)
        .example("fun(y: 2.3.4.i32 => y |> map(transpose) |> join)"),
    RuleDef::equation("mapOutsideZip", "zip(map(fa)(a))(map(fb)(b)) -> map(fun(p => (fa(fst(p)), fb(snd(p)))))(zip(a)(b))")
        .bias(Prim::Zip)
        .example("fun(a: 3.f32, b: 3.i32 => zip(a |> map(neg), b |> map(fun(v => v * 2))))"),
    RuleDef::rule("zipSame", "zip(a)(a) -> map(fun(x => (x, x)))(a)", zip_same)
        .bias(Prim::Zip)
        .example("fun(a: 3.f32 => zip(a, a))"),
    RuleDef::rule("loopInterchange", "map(map(g))(x) -> transpose(map(map(g))(transpose(x))); map(fun(a => map(fun(b => f))(e)))(x) -> transpose(map(fun(b => map(fun(a => f))(x)))(e))", loop_interchange)
        .note("a not in e")
        .example("fun(x: 2.3.f32, y: 4.f32 => (x |> map(map(neg)), (x |> map(fun(a => a |> map(fun(v => v * 2.0)))), x |> map(fun(a => y |> map(fun(v => (a |> reduce(add, 0.0)) * v)))))))"),
    RuleDef::rule("dropBeforeTake", "drop(m)(take(k)(x)) -> take(k - m)(drop(m)(x))", drop_before_take)
        .bias(Prim::Take)
        .example("fun(x: 6.f32 => x |> take(5) |> drop(2))"),
    RuleDef::rule("takeBeforeDrop", "take(n)(drop(m)(x)) -> drop(m)(take(n + m)(x))", take_before_drop)
        .bias(Prim::Drop)
        .example("fun(x: 6.f32 => x |> drop(2) |> take(3))"),
    RuleDef::rule("takeInZip", "take(n)(zip(a)(b)) -> zip(take(n)(a))(take(n)(b))", take_in_zip)
        .bias(Prim::Zip)
        .example("fun(a: 4.f32, b: 4.i32 => zip(a, b) |> take(2))"),
    RuleDef::rule("dropInZip", "drop(n)(zip(a)(b)) -> zip(drop(n)(a))(drop(n)(b))", drop_in_zip)
        .bias(Prim::Zip)
        .example("fun(a: 4.f32, b: 4.i32 => zip(a, b) |> drop(1))"),
    RuleDef::rule("takeOutsideZip", "zip(take(n)(a))(take(n)(b)) -> take(n)(zip(a)(b))", take_outside_zip)
        .note("a, b equally long")
        .bias(Prim::Zip)
        .example("fun(a: 4.f32, b: 4.i32, c: 5.i32 => (zip(a |> take(3), b |> take(3)), zip(a |> take(3), c |> take(3))))"),
    RuleDef::rule("takeBeforeSlide", "take(t)(slide(n, m)(x)) -> slide(n, m)(take(m*(t - 1) + n)(x))", take_before_slide)
        .bias(Prim::Slide)
        .example("fun(x: 9.f32 => x |> slide(3, 2) |> take(2))"),
    RuleDef::rule("dropBeforeSlide", "drop(d)(slide(n, m)(x)) -> slide(n, m)(drop(d*m)(x))", drop_before_slide)
        .bias(Prim::Slide)
        .example("fun(x: 9.f32 => x |> slide(3, 2) |> drop(2))"),
    RuleDef::equation("mapFstFusion", "mapFst(f)(mapFst(g)(p)) -> mapFst(fun(y => f(g(y))))(p)")
        .example("fun(p: (f32, i32) => p |> mapFst(neg) |> mapFst(fun(v => v * 2.0)))"),
    RuleDef::equation("mapSndFusion", "mapSnd(f)(mapSnd(g)(p)) -> mapSnd(fun(y => f(g(y))))(p)")
        .example("fun(p: (f32, i32) => p |> mapSnd(neg) |> mapSnd(fun(v => v + 1)))"),
    RuleDef::equation("mapFstBeforeMapSnd", "mapFst(g)(mapSnd(f)(p)) -> mapSnd(f)(mapFst(g)(p))")
        .example("fun(p: (f32, i32) => p |> mapSnd(neg) |> mapFst(neg))"),
    RuleDef::rule("separateSumHV", "reduce(add, 0)(join(x)) -> reduce(add, 0)(map(reduce(add, 0))(x))", separate_sum_hv)
        .bias(Prim::Join)
        .example("fun(x: 3.4.f32 => x |> join |> reduce(add, 0.0))"),
    RuleDef::rule("separateSumVH", "reduce(add, 0)(join(x)) -> reduce(add, 0)(map(reduce(add, 0))(transpose(x)))", separate_sum_vh)
        .bias(Prim::Join)
        .example("fun(x: 3.4.i32 => x |> join |> reduce(add, 0))"),
    RuleDef::rule("mapIdentityAfter", "e -> map(fun(x => x))(e)", map_identity_after)
        .note("e an array")
        .example("fun(xs: 4.f32 => xs |> map(neg))"),
    RuleDef::equation("mapIdentity", "map(fun(x => x))(xs) -> xs")
        .example("fun(xs: 3.f32 => xs |> map(fun(x => x)))")
        .sets(ALGORITHMIC),
    RuleDef::rule("dropNothing", "drop(0)(x) -> x", drop_nothing)
        .example("fun(x: 3.f32 => x |> drop(0))"),
    RuleDef::rule("takeAll", "take(n)(x) -> x", take_all)
        .note("x has n elements")
        .example("fun(x: 3.f32 => x |> take(3))"),
    RuleDef::rule("slideAfter", "e -> join(slide(1, 1)(e))", slide_after)
        .note("e an array")
        .example("fun(xs: 4.f32 => xs |> map(neg))"),
    RuleDef::rule("zipRotateLeft", "zip(a)(zip(b)(c)) -> map(fun(x => (fst(fst(x)), (snd(fst(x)), snd(x)))))(zip(zip(a)(b))(c))", zip_rotate_left)
        .bias(Prim::Zip)
        .example("fun(a: 3.f32, b: 3.i32, c: 3.f32 => zip(a, zip(b, c)))"),
    RuleDef::rule("zipRotateRight", "zip(zip(a)(b))(c) -> map(fun(x => ((fst(x), fst(snd(x))), snd(snd(x)))))(zip(a)(zip(b)(c)))", zip_rotate_right)
        .bias(Prim::Zip)
        .example("fun(a: 3.f32, b: 3.i32, c: 3.f32 => zip(zip(a, b), c))"),
    RuleDef::rule("zipSwap", "zip(a)(b) -> map(fun(x => (snd(x), fst(x))))(zip(b)(a))", zip_swap)
        .bias(Prim::Zip)
        .example("fun(a: 3.f32, b: 3.i32 => zip(a, b))"),
    RuleDef::equation("unzipZipIsPair", "unzip(zip(a)(b)) -> (a, b)")
        .bias(Prim::Zip)
        .example("fun(a: 3.f32, b: 3.i32 => unzip(zip(a, b)))"),
    RuleDef::rule("padCstAfterMap", "map(f)(padCst(l, r, c)(x)) -> padCst(l, r, f(c))(map(f)(x))", pad_cst_after_map)
        .bias(Prim::PadCst)
        .example("fun(x: 4.f32 => x |> padCst(1, 2, 3.0) |> map(fun(v => v * 2.0)))"),
    RuleDef::rule("padClampAfterMap", "map(f)(padClamp(l, r)(x)) -> padClamp(l, r)(map(f)(x))", pad_clamp_after_map)
        .bias(Prim::PadClamp)
        .example("fun(x: 4.f32 => x |> padClamp(2, 1) |> map(fun(v => v * 2.0)))"),
    RuleDef::equation("mapMapBeforeSplit", "map(map(f))(split(n)(y)) -> split(n)(map(f)(y))")
        .example("fun(y: 6.f32 => y |> split(2) |> map(map(neg)))")
        .sets(ALGORITHMIC),
    RuleDef::equation("mapMapEta", "map(map(f))(x) -> map(fun(y => map(f)(y)))(x)")
        .example("fun(y: 2.3.f32 => y |> map(map(neg)))"),
    RuleDef::equation("mapMapInterchange", "map(fun(a => map(fun(b => f))(e)))(x) -> transpose(map(fun(b => map(fun(a => f))(x)))(e))")
        .example("fun(x: 2.3.f32, y: 4.f32 => x |> map(fun(a => y |> map(fun(b => b * (a |> reduce(add, 0.0)))))))"),
];
