//! Type inference: unification of types, with nat equations solved at the end.
//!
//! Only parameters need annotations. Dependent functions are instantiated implicitly
//! where a function is expected (`dot(a, b)` for `dot: (n: nat) -> n.f32 -> ...`), and
//! the instantiation becomes an explicit nat application in the typed term. After
//! inference every node carries its type.
//!
//! Inference is near-linear in the size of the program, however deep or shared:
//! - terms and types are walked with explicit work stacks ([`walk`], [`unify`]);
//! - types are DAGs: a type variable's solution is shared, not copied, and every pass
//!   over types ([`unify::Inference::zonk`], the final checks) visits a shared part
//!   once, so `id(id)(id)...(x)`, whose types double at each step when written out, costs
//!   linear time;
//! - the occurs check of a binding follows chains of solved variables through
//!   shortcuts that it shortens as it goes (path compression, as in union-find), so a
//!   type that grows with the depth of the program, as in `map(map(...map(f)...))`,
//!   is not walked again at every level;
//! - a definition is typed once: its uses in later definitions share its typed term
//!   and instantiate its type ([`infer_program`]).
//!
//! The modules: [`unify`] (type variables, nat unknowns, unification), [`walk`] (the
//! term walk), [`resolve`] (solving nats and the final, checked types).

mod resolve;
mod unify;
mod walk;

pub(crate) use walk::kept_type;

use crate::definition::Definition;
use crate::error::{Error, ErrorKind, Span};
use crate::nat::{Nat, NatEquation, NatVar};
use crate::prim::{Class, FreshVars};
use crate::term::Term;
use crate::types::{Type, TypeKind};
use elevate_core::NodeId;
use rustc_hash::{FxHashMap, FxHashSet};
use std::fmt::{self, Write};

/// A definition after type inference.
#[derive(Debug, Clone)]
pub struct TypedDefinition {
    /// Its name.
    pub name: String,
    /// Its type, as `check` prints it: implicit nat parameters left implicit.
    pub ty: Type,
    /// The typed term (leading `depFun`s bind the nat parameters).
    pub term: Term,
    /// Its nat parameters.
    pub nat_params: Vec<NatVar>,
}

/// Infers the types of every definition of a program, each on its own, polymorphic in
/// its nat parameters.
///
/// A definition is typed once: where a later definition uses it (the parser shares
/// its nodes there), the typed term is reused and its type instantiated, so a chain of
/// definitions each using the one before costs time linear in the program's text.
pub fn infer_program(defs: &[Definition]) -> Result<Vec<TypedDefinition>, Error> {
    let mut known = Known::default();
    let mut typed = Vec::with_capacity(defs.len());
    for def in defs {
        let mut inference = Inference {
            known: Some(&known),
            ..Inference::default()
        };
        let term = inference.run(&def.term, None)?;
        let full = term.ty().cloned().expect("inferred terms are typed");
        known.insert(&def.term, &term);
        let mut ty = full;
        if !def.explicit_nats {
            for _ in &def.nat_params {
                if let TypeKind::DepFun(_, body) = ty.kind() {
                    ty = body.clone();
                }
            }
        }
        typed.push(TypedDefinition {
            name: def.name.clone(),
            ty,
            term,
            nat_params: def.nat_params.clone(),
        });
    }
    Ok(typed)
}

/// Infers the type of a closed term; every node of the result carries its type.
pub fn infer(term: &Term) -> Result<Term, Error> {
    Inference::default().run(term, None)
}

/// Types the untyped nodes of a term whose other nodes are typed: a typed node of data
/// or a typed lambda or variable is taken as it is, without looking inside, so re-typing what a
/// rewrite rule built costs time in the size of the new nodes only (other typed nodes,
/// such as `map(f)`, are inferred again, since a rule may move them to arrays of other
/// sizes). Variables bound outside the term must be typed.
///
/// ```
/// use elevate_rise::{infer, parse_term, print_term, retype, Term};
/// use elevate_rise::term::Expr;
/// let typed = infer(&parse_term("fun(x: 4.f32 => x |> map(neg))").unwrap()).unwrap();
/// let Expr::Lambda(_, _, body) = typed.expr() else { unreachable!() };
/// // `transpose(transpose(body))` built around the typed body, then re-typed:
/// let t = |x: Term| Term::app(Term::prim(elevate_rise::prim::Prim::Id), x);
/// let retyped = retype(&t(body.clone())).unwrap();
/// assert_eq!(retyped.ty().unwrap().to_string(), "4.f32");
/// ```
pub fn retype(term: &Term) -> Result<Term, Error> {
    retype_inner(term, None)
}

/// [`retype`], for a term that must have type `expected` (what a rewrite replaced).
pub fn retype_as(term: &Term, expected: &Type) -> Result<Term, Error> {
    retype_inner(term, Some(expected))
}

fn retype_inner(term: &Term, expected: Option<&Type>) -> Result<Term, Error> {
    let mut inference = Inference {
        trust_typed: true,
        ..Inference::default()
    };
    inference.run(term, expected)
}

/// Type-checks a term that has already been typed (after a rewrite, say) and returns
/// its type.
pub fn type_of(term: &Term) -> Result<Type, Error> {
    Ok(infer(term)?
        .ty()
        .cloned()
        .expect("inferred terms are typed"))
}

/// Typed definitions, found by the structure of their terms: a use of a definition is
/// a node with the same expression as the definition's term (sharing its children),
/// so it is equal to it, and found in constant time through the cached hash.
#[derive(Default)]
struct Known {
    by_hash: FxHashMap<u64, Vec<(Term, Term)>>,
}

impl Known {
    fn insert(&mut self, untyped: &Term, typed: &Term) {
        self.by_hash
            .entry(untyped.node().structural_hash())
            .or_default()
            .push((untyped.clone(), typed.clone()));
    }

    fn get(&self, t: &Term) -> Option<&Term> {
        let candidates = self.by_hash.get(&t.node().structural_hash())?;
        candidates
            .iter()
            .find(|(untyped, _)| untyped == t)
            .map(|(_, typed)| typed)
    }
}

/// The state of one inference.
#[derive(Default)]
struct Inference<'k> {
    /// Solutions of type variables (`None`: unsolved).
    types: Vec<Option<Type>>,
    next_nat: u32,
    /// Nat unknowns bound during unification (`?3 := n`): most equations are of that
    /// form, and binding them at once keeps the solver's work small.
    bindings: FxHashMap<u32, Nat>,
    /// The other nat equations, solved at the end (or when a `depFun` is finished).
    equations: Vec<(NatEquation, Span)>,
    classes: Vec<(Type, Class, Span)>,
    /// Types known to contain no unsolved type variable (by node address; the type is
    /// kept so that the address stays its own). Solving more variables never undoes
    /// this, so the occurs check skips them.
    ground: FxHashMap<usize, Type>,
    /// Shortcuts for the occurs check: a node mapped to a node below it that reaches
    /// the same unsolved type variables (by address, both nodes kept so that the
    /// addresses stay theirs). Solving variables never undoes this either, so chains
    /// of solved variables and single-child nodes are walked once, not at every
    /// binding ([`unify`]).
    links: FxHashMap<usize, (Type, Type)>,
    /// Take typed nodes as they are ([`retype`]).
    trust_typed: bool,
    /// The nodes taken as they are, which resolution leaves alone.
    trusted: FxHashSet<NodeId>,
    /// Definitions typed already ([`infer_program`]).
    known: Option<&'k Known>,
}

impl FreshVars for Inference<'_> {
    fn fresh_type(&mut self) -> Type {
        self.types.push(None);
        Type::var(self.types.len() as u32 - 1)
    }

    fn fresh_nat(&mut self) -> Nat {
        self.next_nat += 1;
        Nat::unknown(self.next_nat)
    }
}

impl Inference<'_> {
    /// Infers `term` (of type `expected`, if given), solves the nats and returns the
    /// typed, checked term.
    fn run(&mut self, term: &Term, expected: Option<&Type>) -> Result<Term, Error> {
        let (typed, ty) = self.walk(term)?;
        if let Some(expected) = expected {
            self.expect(expected, &ty, span_of(term), "the rewrite changed the type")?;
        }
        let solution = self.solve_nats()?;
        let mut resolver = resolve::Resolver::new(self, solution);
        let resolved = resolver.term(&typed)?;
        resolver.check_classes()?;
        Ok(resolved)
    }
}

fn span_of(t: &Term) -> Span {
    t.span().unwrap_or_default()
}

/// A type for a message: whole if short, else its beginning (a type can be huge: a
/// program 100,000 levels deep has types as deep).
fn shown(ty: &Type) -> String {
    const LIMIT: usize = 400;
    struct Bounded(String);
    impl Write for Bounded {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            if self.0.len() + s.len() > LIMIT {
                let room = LIMIT.saturating_sub(self.0.len());
                let cut = (0..=room.min(s.len()))
                    .rev()
                    .find(|&i| s.is_char_boundary(i))
                    .unwrap_or(0);
                self.0.push_str(&s[..cut]);
                return Err(fmt::Error);
            }
            self.0.push_str(s);
            Ok(())
        }
    }
    let mut out = Bounded(String::new());
    match write!(out, "{ty}") {
        Ok(()) => out.0,
        Err(_) => format!("{} ... (a type too long to show)", out.0),
    }
}

fn type_error(span: Span, expected: &Type, found: &Type, what: &str) -> Error {
    Error::new(
        ErrorKind::Type,
        span,
        format!(
            "{what}: expected {}, found {}",
            shown(expected),
            shown(found)
        ),
    )
}
