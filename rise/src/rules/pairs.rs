//! Pair, zip and select rules: moving maps, slides, `take` and `drop` into and out of
//! pairs, zips and selections (`docs/elevate-rise-library.md`, §3.2–3.3).

use super::catalogue::RuleDef;
use super::layout::{array_length, map, window};
use super::pattern::{applied, call, rule, rule_with_names};
use crate::prim::Prim;
use crate::term::{Expr, Ident, Term};
use elevate_core::{NameSupply, Strategy};

fn pair(a: Term, b: Term) -> Term {
    call(Prim::MakePair, &[], [a, b])
}

fn zip(a: Term, b: Term) -> Term {
    call(Prim::Zip, &[], [a, b])
}

fn fst(x: Term) -> Term {
    call(Prim::Fst, &[], [x])
}

fn snd(x: Term) -> Term {
    call(Prim::Snd, &[], [x])
}

fn same_length(a: &Term, b: &Term) -> Option<()> {
    (array_length(a)? == array_length(b)?).then_some(())
}

/// `takeOutsidePair`: `(take(n)(a), take(m)(b)) -> mapSnd(take(m))(mapFst(take(n))((a, b)))`
pub fn take_outside_pair() -> Strategy<Term> {
    rule("takeOutsidePair", |t: &Term| {
        let (_, p) = applied(t, Prim::MakePair, 2)?;
        let (n, a) = applied(&p[0], Prim::Take, 1)?;
        let (m, b) = applied(&p[1], Prim::Take, 1)?;
        let untaken = pair(a[0].clone(), b[0].clone());
        let first = call(Prim::MapFst, &[], [call(Prim::Take, &n, []), untaken]);
        Some(call(Prim::MapSnd, &[], [call(Prim::Take, &m, []), first]))
    })
}

/// `take(n)(select(c)(a)(b)) -> select(c)(take(n)(a))(take(n)(b))`, likewise `drop`
fn cut_in_select(name: &'static str, p: Prim) -> Strategy<Term> {
    rule(name, move |t: &Term| {
        let (n, outer) = applied(t, p, 1)?;
        let (_, s) = applied(&outer[0], Prim::Select, 3)?;
        let (a, b) = (call(p, &n, [s[1].clone()]), call(p, &n, [s[2].clone()]));
        Some(call(Prim::Select, &[], [s[0].clone(), a, b]))
    })
}

/// `takeInSelect`: `take(n)(select(c)(a)(b)) -> select(c)(take(n)(a))(take(n)(b))`
pub fn take_in_select() -> Strategy<Term> {
    cut_in_select("takeInSelect", Prim::Take)
}

/// `dropInSelect`: `drop(n)(select(c)(a)(b)) -> select(c)(drop(n)(a))(drop(n)(b))`
pub fn drop_in_select() -> Strategy<Term> {
    cut_in_select("dropInSelect", Prim::Drop)
}

/// `mapOutsidePair`: `(map(fa)(a), map(fb)(b)) -> unzip(map(fun(p => (fa(fst(p)), fb(snd(p)))))(zip(a)(b)))`
/// where `a` and `b` have the same length (read from their types; `zip` needs it).
pub fn map_outside_pair() -> Strategy<Term> {
    rule_with_names("mapOutsidePair", |t: &Term, names| {
        let (_, p) = applied(t, Prim::MakePair, 2)?;
        let (_, ma) = applied(&p[0], Prim::Map, 2)?;
        let (_, mb) = applied(&p[1], Prim::Map, 2)?;
        same_length(&ma[1], &mb[1])?;
        let x = Ident::supplied(names, "p");
        let both = pair(
            Term::app(ma[0].clone(), fst(Term::var(&x))),
            Term::app(mb[0].clone(), snd(Term::var(&x))),
        );
        let zipped = zip(ma[1].clone(), mb[1].clone());
        Some(call(Prim::Unzip, &[], [map(Term::lambda(x, both), zipped)]))
    })
}

/// `slideOutsideZip`: `zip(S(a))(S(b)) -> map(unzip)(S(zip(a)(b)))` for the same
/// `S` = `slide(n, m)` (the public rule) or `split(n)` on both sides, where `a` and
/// `b` have the same length.
pub fn slide_outside_zip() -> Strategy<Term> {
    rule("slideOutsideZip", |t: &Term| {
        let (_, z) = applied(t, Prim::Zip, 2)?;
        let (p, nats, a) = window(&z[0], 1)?;
        let (q, other, b) = window(&z[1], 1)?;
        if p != q || nats != other {
            return None;
        }
        same_length(&a[0], &b[0])?;
        let windows = call(p, &nats, [zip(a[0].clone(), b[0].clone())]);
        Some(map(Term::prim(Prim::Unzip), windows))
    })
}

/// `fun(p => zip(fst(p))(snd(p)))`
fn zip_of_pair(names: &mut NameSupply) -> Term {
    let p = Ident::supplied(names, "p");
    Term::lambda(p.clone(), zip(fst(Term::var(&p)), snd(Term::var(&p))))
}

/// `slideInsideZip`: `S(zip(a)(b)) -> map(fun(p => zip(fst(p))(snd(p))))(zip(S(a))(S(b)))`
/// for `S` = `slide(n, m)` (the public rule) or `split(n)`.
pub fn slide_inside_zip() -> Strategy<Term> {
    rule_with_names("slideInsideZip", |t: &Term, names| {
        let (p, nats, outer) = window(t, 1)?;
        let (_, z) = applied(&outer[0], Prim::Zip, 2)?;
        let (a, b) = (
            call(p, &nats, [z[0].clone()]),
            call(p, &nats, [z[1].clone()]),
        );
        Some(map(zip_of_pair(names), zip(a, b)))
    })
}

/// If `side` is `f(proj(x))`, `Some(Some(f))`; if it is `proj(x)`, `Some(None)`.
fn projected(side: &Term, proj: Prim, x: &Ident) -> Option<Option<Term>> {
    let is_proj_of_x = |e: &Term| {
        applied(e, proj, 1)
            .is_some_and(|(_, a)| matches!(a[0].expr(), Expr::Var(v) if v.id == x.id))
    };
    if is_proj_of_x(side) {
        return Some(None);
    }
    let Expr::App(f, arg) = side.expr() else {
        return None;
    };
    (is_proj_of_x(arg) && !f.has_free(x.id)).then(|| Some(f.clone()))
}

/// `fBeforeZipMap`: `map(fun(x => zip(f(fst(x)))(g(snd(x)))))(zip(a)(b)) -> map(fun(x => zip(fst(x))(snd(x))))(zip(map(f)(a))(map(g)(b)))`
/// where `x` is not free in `f` and `g`. A side may also be the bare projection (no
/// map on that side), but not both.
pub fn f_before_zip_map() -> Strategy<Term> {
    rule_with_names("fBeforeZipMap", |t: &Term, names| {
        let (_, m) = applied(t, Prim::Map, 2)?;
        let Expr::Lambda(x, _, body) = m[0].expr() else {
            return None;
        };
        let (_, inner) = applied(body, Prim::Zip, 2)?;
        let (_, source) = applied(&m[1], Prim::Zip, 2)?;
        let f = projected(&inner[0], Prim::Fst, x)?;
        let g = projected(&inner[1], Prim::Snd, x)?;
        if f.is_none() && g.is_none() {
            return None;
        }
        let side = |h: Option<Term>, s: &Term| match h {
            Some(h) => map(h, s.clone()),
            None => s.clone(),
        };
        let zipped = zip(side(f, &source[0]), side(g, &source[1]));
        Some(map(zip_of_pair(names), zipped))
    })
}

/// Whether `f` is `fun(p => zip(fst(p))(snd(p)))`.
fn is_zip_of_pair(f: &Term) -> bool {
    let Expr::Lambda(p, _, body) = f.expr() else {
        return false;
    };
    let Some((_, z)) = applied(body, Prim::Zip, 2) else {
        return false;
    };
    let proj_of_p = |e: &Term, proj: Prim| {
        applied(e, proj, 1)
            .is_some_and(|(_, a)| matches!(a[0].expr(), Expr::Var(v) if v.id == p.id))
    };
    proj_of_p(&z[0], Prim::Fst) && proj_of_p(&z[1], Prim::Snd)
}

/// `unzipZipIdentity`: `unzip(fun(p => zip(fst(p))(snd(p)))(x)) -> x`, and its
/// beta-reduced form `unzip(zip(fst(x))(snd(x))) -> x`.
pub fn unzip_zip_identity() -> Strategy<Term> {
    rule("unzipZipIdentity", |t: &Term| {
        let (_, u) = applied(t, Prim::Unzip, 1)?;
        if let Expr::App(f, x) = u[0].expr() {
            if is_zip_of_pair(f) {
                return Some(x.clone());
            }
        }
        let (_, z) = applied(&u[0], Prim::Zip, 2)?;
        let (_, a) = applied(&z[0], Prim::Fst, 1)?;
        let (_, b) = applied(&z[1], Prim::Snd, 1)?;
        a[0].alpha_eq(&b[0]).then(|| a[0].clone())
    })
}

/// `proj(unzip(e))` for `proj` = `fst` or `snd`: the projection and `e`.
fn projection_of_unzip(t: &Term) -> Option<(Prim, Term)> {
    [Prim::Fst, Prim::Snd].into_iter().find_map(|p| {
        let (_, u) = applied(t, p, 1)?;
        let (_, e) = applied(&u[0], Prim::Unzip, 1)?;
        Some((p, e[0].clone()))
    })
}

/// `zipUnzipAccessSimplification`: `zip(π1(unzip(e)))(π2(unzip(e))) -> map(fun(p => (π1(p), π2(p))))(e)`
/// for projections `π1`, `π2` in `fst`, `snd` and the same `e`.
pub fn zip_unzip_access_simplification() -> Strategy<Term> {
    rule_with_names("zipUnzipAccessSimplification", |t: &Term, names| {
        let (_, z) = applied(t, Prim::Zip, 2)?;
        let (p1, e1) = projection_of_unzip(&z[0])?;
        let (p2, e2) = projection_of_unzip(&z[1])?;
        if !e1.alpha_eq(&e2) {
            return None;
        }
        let p = Ident::supplied(names, "p");
        let both = pair(
            call(p1, &[], [Term::var(&p)]),
            call(p2, &[], [Term::var(&p)]),
        );
        Some(map(Term::lambda(p, both), e1))
    })
}

/// `proj(unzip(e)) -> map(proj)(e)`
fn projection_unzip_as_map(name: &'static str, proj: Prim) -> Strategy<Term> {
    rule(name, move |t: &Term| {
        let (p, e) = projection_of_unzip(t)?;
        (p == proj).then(|| map(Term::prim(proj), e))
    })
}

/// `fstUnzipAsMapFst`: `fst(unzip(e)) -> map(fst)(e)`
pub fn fst_unzip_as_map_fst() -> Strategy<Term> {
    projection_unzip_as_map("fstUnzipAsMapFst", Prim::Fst)
}

/// `sndUnzipAsMapSnd`: `snd(unzip(e)) -> map(snd)(e)`
pub fn snd_unzip_as_map_snd() -> Strategy<Term> {
    projection_unzip_as_map("sndUnzipAsMapSnd", Prim::Snd)
}

/// `fOutsideSelect`: `select(c)(f(a))(f(b)) -> f(select(c)(a)(b))` for the same `f`,
/// where `a` and `b` are data of the same type (read from their types: a polymorphic
/// `f` such as `fst` may take different types on the two sides).
pub fn f_outside_select() -> Strategy<Term> {
    rule("fOutsideSelect", |t: &Term| {
        let (_, s) = applied(t, Prim::Select, 3)?;
        let (Expr::App(f, a), Expr::App(g, b)) = (s[1].expr(), s[2].expr()) else {
            return None;
        };
        let (ta, tb) = (a.ty()?, b.ty()?);
        if !f.alpha_eq(g) || ta != tb || !ta.is_data() {
            return None;
        }
        let selected = call(Prim::Select, &[], [s[0].clone(), a.clone(), b.clone()]);
        Some(Term::app(f.clone(), selected))
    })
}

/// The rules of this module, for the [catalogue](super::catalogue).
pub(super) const RULES: &[RuleDef] = &[
    RuleDef::rule("takeOutsidePair", "(take(n)(a), take(m)(b)) -> mapSnd(take(m))(mapFst(take(n))((a, b)))", take_outside_pair)
        .bias(Prim::Take)
        .example("fun(a: 4.f32, b: 3.i32 => (a |> take(2), b |> take(1)))"),
    RuleDef::rule("takeInSelect", "take(n)(select(c)(a)(b)) -> select(c)(take(n)(a))(take(n)(b))", take_in_select)
        .bias(Prim::Take)
        .example("fun(c: bool, a: 4.f32, b: 4.f32 => select(c, a, b) |> take(2))"),
    RuleDef::rule("dropInSelect", "drop(n)(select(c)(a)(b)) -> select(c)(drop(n)(a))(drop(n)(b))", drop_in_select)
        .bias(Prim::Drop)
        .example("fun(c: bool, a: 4.f32, b: 4.f32 => select(c, a, b) |> drop(1))"),
    RuleDef::rule("mapOutsidePair", "(map(fa)(a), map(fb)(b)) -> unzip(map(fun(p => (fa(fst(p)), fb(snd(p)))))(zip(a)(b)))", map_outside_pair)
        .note("a, b equally long")
        .bias(Prim::Map)
        .example("fun(a: 3.f32, b: 3.i32, c: 2.i32 => ((a |> map(neg), b |> map(fun(v => v * 2))), (a |> map(neg), c |> map(neg))))"),
    RuleDef::rule("slideOutsideZip", "zip(S(a))(S(b)) -> map(unzip)(S(zip(a)(b)))", slide_outside_zip)
        .note("S = slide(n, m) or split(n); a, b equally long")
        .bias(Prim::Zip)
        .example("fun(a: 5.f32, b: 5.i32 => (zip(a |> slide(3, 1), b |> slide(3, 1)), zip(a |> split(5), b |> split(5))))"),
    RuleDef::rule("slideInsideZip", "S(zip(a)(b)) -> map(fun(p => zip(fst(p))(snd(p))))(zip(S(a))(S(b)))", slide_inside_zip)
        .note("S = slide(n, m) or split(n)")
        .bias(Prim::Zip)
        .example("fun(a: 6.f32, b: 6.i32 => (zip(a, b) |> slide(3, 1), zip(a, b) |> split(2)))"),
    RuleDef::rule("fBeforeZipMap", "map(fun(x => zip(f(fst(x)))(g(snd(x)))))(zip(a)(b)) -> map(fun(x => zip(fst(x))(snd(x))))(zip(map(f)(a))(map(g)(b)))", f_before_zip_map)
        .bias(Prim::Zip)
        .example("fun(a: 3.2.f32, b: 3.2.i32 => (zip(a, b) |> map(fun(x => zip(fst(x) |> map(neg), snd(x) |> map(fun(v => v + 1))))), zip(a, b) |> map(fun(x => zip(fst(x), snd(x) |> map(neg))))))"),
    RuleDef::rule("unzipZipIdentity", "unzip(fun(p => zip(fst(p))(snd(p)))(x)) -> x", unzip_zip_identity)
        .bias(Prim::Zip)
        .example("fun(p: (3.f32, 3.i32) => (p |> fun(q => zip(fst(q), snd(q))) |> unzip, unzip(zip(fst(p), snd(p)))))"),
    RuleDef::rule("zipUnzipAccessSimplification", "zip(π1(unzip(e)))(π2(unzip(e))) -> map(fun(p => (π1(p), π2(p))))(e)", zip_unzip_access_simplification)
        .note("π1, π2 in fst, snd")
        .bias(Prim::Zip)
        .example("fun(e: 3.(f32, i32) => (zip(fst(unzip(e)), snd(unzip(e))), (zip(snd(unzip(e)), fst(unzip(e))), zip(fst(unzip(e)), fst(unzip(e))))))"),
    RuleDef::rule("fstUnzipAsMapFst", "fst(unzip(e)) -> map(fst)(e)", fst_unzip_as_map_fst)
        .bias(Prim::Zip)
        .example("fun(e: 3.(f32, i32) => fst(unzip(e)))"),
    RuleDef::rule("sndUnzipAsMapSnd", "snd(unzip(e)) -> map(snd)(e)", snd_unzip_as_map_snd)
        .bias(Prim::Zip)
        .example("fun(e: 3.(f32, i32) => snd(unzip(e)))"),
    RuleDef::rule("fOutsideSelect", "select(c)(f(a))(f(b)) -> f(select(c)(a)(b))", f_outside_select)
        .note("a, b data of the same type")
        .example("fun(c: bool, a: 3.f32, b: 3.f32, x: (f32, i32), y: (f32, f32) => (select(c, a |> map(neg), b |> map(neg)), select(c, fst(x), fst(y))))"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{infer, parse_term};
    use elevate_core::Context;

    /// Whether `rule` applies to the body of the program `source`.
    fn fires(rule: Strategy<Term>, source: &str) -> bool {
        let t = infer(&parse_term(source).unwrap()).unwrap();
        let mut body = t;
        while let Expr::Lambda(_, _, b) = body.expr() {
            body = b.clone();
        }
        rule.apply(&body, &mut Context::default()).is_ok()
    }

    #[test]
    fn side_conditions_are_checked() {
        let pair = "fun(a: 3.f32, b: LEN.i32 => (a |> map(neg), b |> map(neg)))";
        assert!(fires(map_outside_pair(), &pair.replace("LEN", "3")));
        assert!(!fires(map_outside_pair(), &pair.replace("LEN", "2")));
        let select = "fun(c: bool, x: (f32, i32), y: (f32, T) => select(c, fst(x), fst(y)))";
        assert!(fires(f_outside_select(), &select.replace("T", "i32")));
        assert!(!fires(f_outside_select(), &select.replace("T", "f32")));
        // `x` must not be free in the function applied to `fst(x)`.
        let zipped = "fun(a: 3.2.f32, b: 3.2.f32 => zip(a, b) |> map(fun(x => zip(fst(x) |> map(fun(v => v + E)), snd(x)))))";
        assert!(fires(f_before_zip_map(), &zipped.replace("E", "1.0")));
        let uses_x = zipped.replace("E", "idx(natAsIndex(2, 0i64), snd(x))");
        assert!(!fires(f_before_zip_map(), &uses_x));
    }
}
