//! Separable convolution: a 2-D dot product with weights that are the outer product
//! of two vectors becomes two 1-D dot products (`separateDotHV`, `separateDotVH`), and
//! the strategy that turns a 3x3 convolution with such weights into a vertical then
//! a horizontal 1-D convolution (ELEVATE's `base -> scanline -> separated` rewrites,
//! Lücke 2024, section 4.5.3).

use super::catalogue::RuleDef;
use super::pattern::{applied, call, named, rule_with_names};
use super::*;
use crate::prim::Prim;
use crate::term::{Expr, Ident, Term};
use elevate_core::{NameSupply, Strategy};
use elevate_strategies::text::Registry;
use elevate_strategies::{repeat_n, skip, top_down};

/// `Some(p)` if `f` is `fun(p => fst(p) * snd(p))` (either order of the factors).
fn is_pair_product(f: &Term) -> bool {
    let Expr::Lambda(p, _, body) = f.expr() else {
        return false;
    };
    let Some((_, factors)) = applied(body, Prim::Mul, 2) else {
        return false;
    };
    let projection = |t: &Term, q: Prim| {
        applied(t, q, 1).is_some_and(|(_, a)| matches!(a[0].expr(), Expr::Var(x) if x.id == p.id))
    };
    (projection(&factors[0], Prim::Fst) && projection(&factors[1], Prim::Snd))
        || (projection(&factors[0], Prim::Snd) && projection(&factors[1], Prim::Fst))
}

/// `(u, v)` if `w` is the outer product `map(fun(a => map(fun(b => a * b))(v)))(u)`.
fn outer_product(w: &Term) -> Option<(Term, Term)> {
    let (_, rows) = applied(w, Prim::Map, 2)?;
    let Expr::Lambda(a, _, row) = rows[0].expr() else {
        return None;
    };
    let (_, cols) = applied(row, Prim::Map, 2)?;
    let Expr::Lambda(b, _, product) = cols[0].expr() else {
        return None;
    };
    let (_, factors) = applied(product, Prim::Mul, 2)?;
    let is = |t: &Term, x: &Ident| matches!(t.expr(), Expr::Var(y) if y.id == x.id);
    let v = &cols[1];
    let ordered =
        (is(&factors[0], a) && is(&factors[1], b)) || (is(&factors[0], b) && is(&factors[1], a));
    (ordered && !v.has_free(a.id)).then(|| (rows[1].clone(), v.clone()))
}

/// `(nbh, u, v, zero)` if `t` is `reduce(add, 0)(map(fun(p => fst(p) * snd(p)))(zip(join(nbh))(join(w))))`
/// (or with the `zip` swapped) where `w` is the outer product of `u` and `v`.
fn separable_dot(t: &Term) -> Option<(Term, Term, Term, Term)> {
    let (_, args) = applied(t, Prim::Reduce, 3)?;
    if !is_add(&args[0]) || !is_zero(&args[1]) {
        return None;
    }
    let (_, m) = applied(&args[2], Prim::Map, 2)?;
    if !is_pair_product(&m[0]) {
        return None;
    }
    let (_, z) = applied(&m[1], Prim::Zip, 2)?;
    let joined = |t: &Term| applied(t, Prim::Join, 1).map(|(_, a)| a[0].clone());
    let (a, b) = (joined(&z[0])?, joined(&z[1])?);
    if let Some((u, v)) = outer_product(&b) {
        return Some((a, u, v, args[1].clone()));
    }
    let (u, v) = outer_product(&a)?;
    Some((b, u, v, args[1].clone()))
}

fn is_add(op: &Term) -> bool {
    match op.expr() {
        Expr::Prim(Prim::Add) => true,
        _ => {
            let Expr::Lambda(x, _, inner) = op.expr() else {
                return false;
            };
            let Expr::Lambda(y, _, body) = inner.expr() else {
                return false;
            };
            let is = |t: &Term, v: &Ident| matches!(t.expr(), Expr::Var(w) if w.id == v.id);
            applied(body, Prim::Add, 2).is_some_and(|(_, a)| is(&a[0], x) && is(&a[1], y))
        }
    }
}

fn is_zero(t: &Term) -> bool {
    use crate::term::Literal::*;
    matches!(t.expr(), Expr::Literal(l) if matches!(*l, F32(v) if v == 0.0)
        || matches!(*l, F64(v) if v == 0.0) || matches!(*l, I32(0)) || matches!(*l, I64(0)))
}

/// `dot(x, w) = zip(w, x) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, zero)`: the
/// weights first, so that the data is the end of a chain of applications (which the
/// fission rules look for), as in ELEVATE's `dot(w)`.
fn dot(x: Term, w: Term, zero: &Term, names: &mut NameSupply) -> Term {
    let p = Ident::supplied(names, "p");
    let product = call(
        Prim::Mul,
        &[],
        [
            call(Prim::Fst, &[], [Term::var(&p)]),
            call(Prim::Snd, &[], [Term::var(&p)]),
        ],
    );
    let products = call(
        Prim::Map,
        &[],
        [Term::lambda(p, product), call(Prim::Zip, &[], [w, x])],
    );
    call(
        Prim::Reduce,
        &[],
        [Term::prim(Prim::Add), zero.clone(), products],
    )
}

/// `nbh |> map(fun(r => dot(r, w))) |> fun(s => dot(s, other))`: 1-D dot products of
/// the rows of `nbh` with `w`, then their dot product with `other`.
fn two_dots(nbh: Term, w: Term, other: Term, zero: &Term, names: &mut NameSupply) -> Term {
    let r = Ident::supplied(names, "r");
    let rows = call(
        Prim::Map,
        &[],
        [
            Term::lambda(r.clone(), dot(Term::var(&r), w, zero, names)),
            nbh,
        ],
    );
    dot(rows, other, zero, names)
}

/// `separateDotHV`: `sum(zip(join(nbh), join(u ⊗ v)) |> map(mul))
/// -> dot(map(fun(r => dot(r, v)))(nbh), u)` where `u ⊗ v` is the outer product
/// `map(fun(a => map(fun(b => a * b))(v)))(u)`: horizontal 1-D dot products with
/// `v`, then a vertical one with `u`. (ELEVATE takes the weights as parameters and
/// does not check that they are separable; here the outer product is the proof.)
pub fn separate_dot_hv() -> Strategy<Term> {
    rule_with_names("separateDotHV", |t: &Term, names| {
        let (nbh, u, v, zero) = separable_dot(t)?;
        Some(two_dots(nbh, v, u, &zero, names))
    })
}

/// `separateDotVH`: as `separateDotHV`, vertical first:
/// `-> dot(map(fun(c => dot(c, u)))(transpose(nbh)), v)`.
pub fn separate_dot_vh() -> Strategy<Term> {
    rule_with_names("separateDotVH", |t: &Term, names| {
        let (nbh, u, v, zero) = separable_dot(t)?;
        Some(two_dots(
            call(Prim::Transpose, &[], [nbh]),
            u,
            v,
            &zero,
            names,
        ))
    })
}

/// `separableConvolution`: a 3x3 convolution `P >> slide2D >> **(dot with u ⊗ v)`
/// becomes a vertical then a horizontal 1-D convolution,
/// `P >> Sv >> *(T >> *(Dv)) >> *(Sh >> *(Dh))`: ELEVATE's base-to-scanline rewrite
/// (`separateDotVH`, `slideBeforeMap`, map fusion, `mapSlideBeforeTranspose`,
/// `removeTransposePair`, `mapFirstFission`, `slideBeforeMapMapF`), then
/// scanline-to-separated (`mapFission`, `mapFusion`), each step on the BENF of the
/// previous result.
pub fn separable_convolution() -> Strategy<Term> {
    let step = |s: Strategy<Term>| benf() >> s;
    let s = dfnf()
        >> top_down(separate_dot_vh())
        >> step(top_down(slide_before_map()))
        >> step(top_down(map_fusion()))
        >> step(top_down(map_fusion()))
        >> step(top_down(map_slide_before_transpose()))
        >> step(top_down(map_fusion()))
        >> step(top_down(remove_transpose_pair()))
        >> step(skip(1, map_first_fission()))
        >> step(top_down(slide_before_map_map_f()))
        >> step(repeat_n(2, top_down(map_first_fission())))
        >> step(skip(1, map_fusion()))
        >> dfnf();
    named("separableConvolution", s)
}

/// Registers the separable-convolution strategy in the strategy language.
pub(super) fn register(r: &mut Registry<Term>) {
    r.rule(
        "separableConvolution",
        "a 3x3 convolution with weights u ⊗ v becomes a vertical then a horizontal 1-D convolution",
        separable_convolution,
    );
}

/// The rules of this module, for the [catalogue](super::catalogue).
pub(super) const RULES: &[RuleDef] = &[
    RuleDef::rule("separateDotHV", "sum(zip(join(nbh), join(u ⊗ v)) |> map(mul)) -> dot(map(fun(r => dot(r, v)))(nbh), u)", separate_dot_hv)
        .note("u ⊗ v = map(fun(a => map(fun(b => a * b))(v)))(u)")
        .example("fun(nbh: 3.3.f32, u: 3.f32, v: 3.f32 => zip(join(nbh), join(u |> map(fun(a => v |> map(fun(b => a * b)))))) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0))"),
    RuleDef::rule("separateDotVH", "sum(zip(join(nbh), join(u ⊗ v)) |> map(mul)) -> dot(map(fun(c => dot(c, u)))(transpose(nbh)), v)", separate_dot_vh)
        .example("fun(nbh: 3.3.f32, u: 3.f32, v: 3.f32 => zip(join(u |> map(fun(a => v |> map(fun(b => b * a))))), join(nbh)) |> map(fun(p => snd(p) * fst(p))) |> reduce(fun(x, y => x + y), 0.0))"),
];
