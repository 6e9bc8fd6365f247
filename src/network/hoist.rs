//! Computations that read only weights, taken out of a unit so that they run once,
//! when the weights are bound, rather than at every call: a rewritten unit's
//! top-level `toMem` whose array reads no parameter but weights (the packed,
//! channel-blocked weights of `convKernel`, say) becomes a parameter of its own, and
//! the array a function of the weights alone.

use elevate_core::NameSupply;
use elevate_rise::{infer, Error, Expr, Ident, Term, Type};
use std::collections::HashSet;

/// A unit's low-level program with its weight-only arrays taken out.
pub(crate) struct Hoisted {
    /// The unit as a function of its parameters and then of each prepared array.
    pub main: Term,
    /// Each prepared array as a function of the unit's weights (its parameters in
    /// `weights`, in order), in the order `main` takes them.
    pub preparations: Vec<Term>,
}

/// `term` (`fun(p0 => ... fun(pk => body))`, typed, low-level) with the top-level
/// stored arrays that read only the parameters in `weights` (by position) taken
/// out; `None` where there is none.
pub(crate) fn hoist(term: &Term, weights: &HashSet<usize>) -> Result<Option<Hoisted>, Error> {
    let mut params: Vec<(Ident, Type)> = Vec::new();
    let mut body = term.clone();
    while let Expr::Lambda(x, _, inner) = body.expr() {
        let Some(elevate_rise::TypeKind::Fun(from, _)) = body.ty().map(|t| t.kind().clone()) else {
            return Ok(None);
        };
        params.push((x.clone(), from));
        body = inner.clone();
    }
    let weight_ids: HashSet<u64> = params
        .iter()
        .enumerate()
        .filter(|(k, _)| weights.contains(k))
        .map(|(_, (x, _))| x.id)
        .collect();
    let mut walker = Walker {
        weights: weight_ids,
        names: NameSupply::above(term.name_floor()),
        found: Vec::new(),
    };
    let body = walker.walk(&body);
    if walker.found.is_empty() {
        return Ok(None);
    }
    let lambda = |x: &Ident, ty: &Type, body: Term| {
        Term::new(Expr::Lambda(x.clone(), Some(ty.clone()), body))
    };
    let mut main = body;
    for (x, _, ty) in walker.found.iter().rev() {
        main = lambda(x, ty, main);
    }
    for (x, ty) in params.iter().rev() {
        main = lambda(x, ty, main);
    }
    let preparations = walker
        .found
        .iter()
        .map(|(_, array, _)| {
            let prep = params
                .iter()
                .enumerate()
                .rev()
                .filter(|(k, _)| weights.contains(k))
                .fold(array.clone(), |body, (_, (x, ty))| lambda(x, ty, body));
            infer(&prep.erase_types())
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(Hoisted {
        main: infer(&main.erase_types())?,
        preparations,
    }))
}

struct Walker {
    weights: HashSet<u64>,
    names: NameSupply,
    /// `(variable, array, type)` for each array taken out.
    found: Vec<(Ident, Term, Type)>,
}

impl Walker {
    /// `array` (weight-only, stored) with the computation under its views taken
    /// out: `join(map(h)(mapPar(g)(w)))` becomes `join(map(h)(prepared))`, where
    /// `prepared` is `mapPar(g)(w)` in memory as the loops computed it (a packed,
    /// channel-blocked layout) and the views read it where it lies; the store
    /// itself goes (it is the identity). `None` where the array has no such
    /// computation.
    fn computed(&mut self, array: &Term) -> Option<Term> {
        elevate_core::stack::guard(|| {
            let (head, args) = array.value_arguments();
            let Expr::Prim(p) = head.nat_arguments().0.expr() else {
                return None;
            };
            if p.is_low_level() && !p.stores() {
                let ty = array.ty()?.clone();
                let x = Ident::supplied(&mut self.names, "prepared");
                self.found.push((x.clone(), array.clone(), ty.clone()));
                return Some(Term::var(&x).with_type(ty));
            }
            // A view (or a store): look under its array, its last argument.
            let last = args.last()?;
            let inner = self.computed(last)?;
            let Expr::App(f, _) = array.expr() else {
                return None;
            };
            Some(Term::with(
                Expr::App(f.clone(), inner),
                array.ty().cloned(),
                array.span(),
            ))
        })
    }

    /// `t` with its top-level weight-only stored arrays replaced by variables: the
    /// top level is everything outside functions but the bodies of `let`s.
    fn walk(&mut self, t: &Term) -> Term {
        elevate_core::stack::guard(|| self.node(t))
    }

    fn node(&mut self, t: &Term) -> Term {
        match t.expr() {
            Expr::App(f, array) if matches!(f.expr(), Expr::Prim(p) if p.stores()) => {
                let free = array.free_vars();
                if !free.is_empty() && free.iter().all(|x| self.weights.contains(x)) {
                    if let Some(views) = self.computed(array) {
                        return views;
                    }
                }
                t.map_children(|c| self.walk(c))
            }
            Expr::App(g, f) => match (g.expr(), f.expr()) {
                (Expr::App(p, _), Expr::Lambda(..))
                    if matches!(p.expr(), Expr::Prim(elevate_rise::prim::Prim::Let)) =>
                {
                    let g = g.map_children(|c| self.walk(c));
                    let f = f.map_children(|c| self.walk(c));
                    Term::with(Expr::App(g, f), t.ty().cloned(), t.span())
                }
                _ => t.map_children(|c| self.walk(c)),
            },
            Expr::Lambda(..) | Expr::NatLambda(..) => t.clone(),
            _ => t.map_children(|c| self.walk(c)),
        }
    }
}
