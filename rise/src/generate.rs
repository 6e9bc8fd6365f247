//! Random well-typed RISE programs, for property tests of this crate and of the ones
//! built on it (rules, the bridge, equality saturation).
//!
//! Two kinds of program are made. Expressions are type-directed: pick a type, then an
//! expression of that type from the primitives that can produce it, recursively, with
//! a size budget. Pipelines ([`Generator::pipeline_program`]) go forwards from array
//! parameters through stages (`map`, reductions, `split`/`join`, `slide`,
//! `transpose`, `zip`, ...), the shape most rewrite rules look for. Programs are
//! closed functions with annotated parameters and concrete sizes, so they can be
//! type-checked, printed, evaluated on random inputs and compiled.
//!
//! ```
//! use elevate_rise::generate::Generator;
//! let mut generator = Generator::new(7);
//! let program = generator.program(20);
//! let typed = elevate_rise::infer(&program).expect("generated programs are well typed");
//! assert!(typed.ty().is_some());
//! ```

use crate::nat::Nat;
use crate::prim::Prim;
use crate::term::{Expr, Ident, Literal, Term};
use crate::types::{Scalar, Type, TypeKind};
use elevate_core::NameSupply;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

mod pipeline;

/// A reproducible source of random well-typed programs.
///
/// ```
/// use elevate_rise::{generate::Generator, prim::Prim, print_term};
/// let mut generator = Generator::new(3);
/// generator.favourites = vec![Prim::Transpose, Prim::Map];
/// let program = generator.pipeline_program(4);
/// assert!(elevate_rise::infer(&program).is_ok(), "{}", print_term(&program));
/// ```
pub struct Generator {
    rng: ChaCha8Rng,
    /// Bias towards a primitive: when set, it is chosen whenever it fits the type
    /// asked for, so that rules whose left-hand side needs it find matches.
    pub favourite: Option<Prim>,
    /// Further primitives to favour in pipelines (see [`Generator::pipeline_program`]):
    /// stages and element functions with one of them (or with `favourite`) are
    /// chosen several times as often. Favouring the primitives of a left-hand side
    /// makes its neighbouring stages likely together.
    pub favourites: Vec<Prim>,
    /// Whether pipelines may call functions generic in a size,
    /// `depFun(n => fun(x: n.t => ...))(len)`, whose bodies have symbolic sizes (off by
    /// default: rules that split an array assume that a symbolic length divides).
    pub symbolic_sizes: bool,
    /// The identities of the variables it makes: the generator's own, so that a seed
    /// gives the same program (identities included) whatever ran before.
    names: NameSupply,
}

type Env = Vec<(Ident, Type)>;

fn app(p: Prim, args: Vec<Term>) -> Term {
    Term::apps(Term::prim(p), args)
}

fn nat_app(p: Prim, nats: &[i64], args: Vec<Term>) -> Term {
    let head = nats
        .iter()
        .fold(Term::prim(p), |f, n| Term::nat_app(f, Nat::cst(*n)));
    Term::apps(head, args)
}

fn size_of(n: &Nat) -> usize {
    n.as_const().unwrap_or(0).max(0) as usize
}

impl Generator {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Generator {
        Generator {
            rng: ChaCha8Rng::seed_from_u64(seed),
            favourite: None,
            favourites: Vec::new(),
            symbolic_sizes: false,
            names: NameSupply::above(1),
        }
    }

    /// A variable named `name` with a fresh identity.
    fn fresh_ident(&mut self, name: &str) -> Ident {
        Ident::supplied(&mut self.names, name)
    }

    fn chance(&mut self, percent: u32) -> bool {
        self.rng.random_range(0..100) < percent
    }

    fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.rng.random_range(0..items.len())].clone()
    }

    /// A number in `0..n`.
    fn rng_below(&mut self, n: u32) -> u32 {
        self.rng.random_range(0..n)
    }

    /// A number in `lo..hi`.
    fn rng_range(&mut self, lo: usize, hi: usize) -> usize {
        self.rng.random_range(lo..hi)
    }

    /// A random data type: scalars, arrays of 1 to 4 elements (up to two deep), pairs.
    pub fn data_type(&mut self, depth: usize) -> Type {
        let scalar = Type::scalar(self.pick(&[Scalar::F32, Scalar::F32, Scalar::I32]));
        if depth == 0 {
            return scalar;
        }
        match self.rng.random_range(0..6) {
            0 | 1 => scalar,
            2..=4 => {
                let n = self.rng.random_range(1..5);
                Type::array(Nat::cst(n), self.data_type(depth - 1))
            }
            _ => Type::pair(self.data_type(depth - 1), self.data_type(depth - 1)),
        }
    }

    /// A closed program `fun(x1: T1, ... => body)` of about `size` nodes: half the
    /// time (more with favourites) a [`Generator::pipeline_program`] of 2 to 5
    /// stages, else an expression built backwards from a random result type.
    pub fn program(&mut self, size: usize) -> Term {
        let biased = self.favourite.is_some() || !self.favourites.is_empty();
        let share = if biased { 70 } else { 50 };
        if self.chance(share) {
            let most = if size < 10 { 3 } else { 5 };
            let stages = self.rng_range(2, most + 1);
            return self.pipeline_program(stages);
        }
        let params = self.rng.random_range(1..3);
        let mut env: Env = Vec::new();
        for i in 0..params {
            env.push((self.fresh_ident(&format!("x{}", i + 1)), self.data_type(2)));
        }
        let result = self.data_type(2);
        let body = self.expr(&result, &env, size);
        env.iter().rev().fold(body, |body, (x, ty)| {
            Term::new(Expr::Lambda(x.clone(), Some(ty.clone()), body))
        })
    }

    /// An expression of type `ty` using the variables of `env`.
    pub fn expr(&mut self, ty: &Type, env: &Env, budget: usize) -> Term {
        // The variables of `env` may come from elsewhere: new ones must differ.
        for (x, _) in env {
            self.names.reserve_above(x.id.saturating_add(1));
        }
        elevate_core::stack::guard(|| {
            if budget <= 1 || self.chance(15) {
                return self.leaf(ty, env);
            }
            // Now and then a redex of the core rules: `id(e)`, `fun(y => e)(v)`.
            if budget > 3 && self.chance(8) {
                let inner = self.expr(ty, env, budget - 2);
                return app(Prim::Id, vec![inner]);
            }
            if budget > 4 && self.chance(8) {
                let bound = self.data_type(1);
                let value = self.expr(&bound, env, budget / 3);
                let y = self.fresh_ident("y");
                let mut inner = env.clone();
                inner.push((y.clone(), bound));
                let body = self.expr(ty, &inner, budget / 2);
                return Term::app(Term::lambda(y, body), value);
            }
            self.compound(ty, env, budget - 1)
                .unwrap_or_else(|| self.leaf(ty, env))
        })
    }

    fn literal(&mut self, s: Scalar) -> Term {
        Term::literal(match s {
            Scalar::F32 => Literal::F32(self.pick(&[0.0, 1.0, 0.5, -2.0, 3.0])),
            Scalar::F64 => Literal::F64(self.pick(&[0.0, 1.0, -0.25])),
            Scalar::I64 => Literal::I64(self.rng.random_range(-5..5)),
            Scalar::Bool => Literal::Bool(self.chance(50)),
            Scalar::I32 => Literal::I32(self.rng.random_range(-5..5)),
        })
    }

    /// A small expression of type `ty`: a variable, a literal, or a constant array/pair.
    fn leaf(&mut self, ty: &Type, env: &Env) -> Term {
        let vars: Vec<&Ident> = env
            .iter()
            .filter(|(_, t)| t == ty)
            .map(|(x, _)| x)
            .collect();
        if !vars.is_empty() && self.chance(70) {
            return Term::var(self.pick(&vars));
        }
        match ty.kind() {
            TypeKind::Scalar(s) => self.literal(*s),
            TypeKind::Array(n, elem) => {
                let i = self.fresh_ident("i");
                let element = self.leaf(elem, env);
                if self.chance(50) {
                    // Annotated: nothing else may fix how long a generated array is.
                    let generated = app(Prim::Generate, vec![Term::lambda(i, element)]);
                    Term::new(Expr::Annotation(generated, ty.clone()))
                } else {
                    let items = (0..size_of(n)).map(|_| self.leaf(elem, env)).collect();
                    Term::new(Expr::Array(items))
                }
            }
            TypeKind::Pair(a, b) => {
                let (a, b) = (self.leaf(a, env), self.leaf(b, env));
                app(Prim::MakePair, vec![a, b])
            }
            _ => unreachable!("only data types are generated"),
        }
    }

    fn compound(&mut self, ty: &Type, env: &Env, budget: usize) -> Option<Term> {
        let half = budget / 2;
        match ty.kind() {
            TypeKind::Scalar(s) => {
                let s = *s;
                let choice = match self.favourite {
                    Some(Prim::Reduce | Prim::ReduceSeq) => 4,
                    _ => self.rng.random_range(0..8),
                };
                Some(match choice {
                    0 | 1 => {
                        let op = self.pick(&[Prim::Add, Prim::Mul, Prim::Sub]);
                        let (a, b) = (self.expr(ty, env, half), self.expr(ty, env, half));
                        app(op, vec![a, b])
                    }
                    2 => {
                        let other = self.data_type(1);
                        let pair = self.expr(&Type::pair(ty.clone(), other), env, budget);
                        app(Prim::Fst, vec![pair])
                    }
                    3 => {
                        let other = self.data_type(1);
                        let pair = self.expr(&Type::pair(other, ty.clone()), env, budget);
                        app(Prim::Snd, vec![pair])
                    }
                    4 | 5 => {
                        let n = self.rng.random_range(1..5);
                        let xs = self.expr(&Type::array(Nat::cst(n), ty.clone()), env, budget);
                        let zero = Term::literal(match s {
                            Scalar::I32 => Literal::I32(0),
                            _ => Literal::F32(0.0),
                        });
                        let reduce = self
                            .favourite
                            .filter(|p| *p == Prim::ReduceSeq)
                            .unwrap_or(Prim::Reduce);
                        let add = Term::prim(Prim::Add);
                        app(reduce, vec![add, zero, xs])
                    }
                    6 => {
                        let (a, b) = (self.expr(ty, env, half), self.expr(ty, env, half));
                        let (c, d) = (self.expr(ty, env, half / 2), self.expr(ty, env, half / 2));
                        app(Prim::Select, vec![app(Prim::Lt, vec![c, d]), a, b])
                    }
                    _ => {
                        let bound = self.data_type(1);
                        let value = self.expr(&bound, env, half);
                        let x = self.fresh_ident("y");
                        let mut inner = env.clone();
                        inner.push((x.clone(), bound));
                        let body = self.expr(ty, &inner, half);
                        app(Prim::Let, vec![value, Term::lambda(x, body)])
                    }
                })
            }
            TypeKind::Pair(a, b) => {
                if let (TypeKind::Array(n, s), TypeKind::Array(m, t)) = (a.kind(), b.kind()) {
                    if n == m && self.chance(40) {
                        let zipped = Type::array(n.clone(), Type::pair(s.clone(), t.clone()));
                        return Some(app(Prim::Unzip, vec![self.expr(&zipped, env, budget)]));
                    }
                }
                let (a, b) = (self.expr(a, env, half), self.expr(b, env, half));
                Some(app(Prim::MakePair, vec![a, b]))
            }
            TypeKind::Array(n, elem) => self.array(n, elem, env, budget),
            _ => None,
        }
    }

    fn array(&mut self, n: &Nat, elem: &Type, env: &Env, budget: usize) -> Option<Term> {
        let len = size_of(n);
        let half = budget / 2;
        let favourite = self.favourite;
        let mut options: Vec<u32> = vec![0, 0, 1, 7];
        if let TypeKind::Pair(..) = elem.kind() {
            options.push(2);
        }
        if let TypeKind::Array(..) = elem.kind() {
            options.extend([3, 4, 6]);
        }
        options.extend([5, 8, 9]);
        if len >= 2 {
            options.push(10);
        }
        let wanted = |p: Prim| -> Option<u32> {
            Some(match p {
                Prim::Map | Prim::MapSeq | Prim::MapPar => 0,
                Prim::Zip => 2,
                Prim::Transpose => 3,
                Prim::Split => 4,
                Prim::Join => 5,
                Prim::Slide => 6,
                Prim::Take | Prim::Drop => 8,
                Prim::PadCst => 9,
                Prim::Concat => 10,
                _ => return None,
            })
        };
        let choice = match favourite.and_then(wanted) {
            Some(c) if options.contains(&c) => c,
            _ => self.pick(&options),
        };
        let ty = Type::array(n.clone(), elem.clone());
        Some(match choice {
            0 if matches!(elem.kind(), TypeKind::Scalar(Scalar::F32 | Scalar::I32))
                && self.chance(20) =>
            {
                // An eta-redex: `map(fun(x => neg(x)))`.
                let x = self.fresh_ident("x");
                let body = app(Prim::Neg, vec![Term::var(&x)]);
                let xs = self.expr(&Type::array(n.clone(), elem.clone()), env, half);
                app(Prim::Map, vec![Term::lambda(x, body), xs])
            }
            0 => {
                let source = self.data_type(1);
                let x = self.fresh_ident("x");
                let mut inner = env.clone();
                inner.push((x.clone(), source.clone()));
                let body = self.expr(elem, &inner, half);
                let xs = self.expr(&Type::array(n.clone(), source), env, half);
                let map = match favourite {
                    Some(p @ (Prim::MapSeq | Prim::MapPar)) => p,
                    _ => Prim::Map,
                };
                app(map, vec![Term::lambda(x, body), xs])
            }
            1 => {
                // The index is not used: no generated expression asks for `idx[n]`.
                let i = self.fresh_ident("i");
                let body = self.expr(elem, env, half);
                let generated = app(Prim::Generate, vec![Term::lambda(i, body)]);
                Term::new(Expr::Annotation(generated, ty.clone()))
            }
            2 => {
                let TypeKind::Pair(a, b) = elem.kind() else {
                    return None;
                };
                let xs = self.expr(&Type::array(n.clone(), a.clone()), env, half);
                let ys = self.expr(&Type::array(n.clone(), b.clone()), env, half);
                app(Prim::Zip, vec![xs, ys])
            }
            3 => {
                let TypeKind::Array(m, t) = elem.kind() else {
                    return None;
                };
                let source = Type::array(m.clone(), Type::array(n.clone(), t.clone()));
                app(Prim::Transpose, vec![self.expr(&source, env, budget)])
            }
            4 => {
                let TypeKind::Array(k, t) = elem.kind() else {
                    return None;
                };
                let total = Type::array(n.mul(k), t.clone());
                nat_app(
                    Prim::Split,
                    &[size_of(k) as i64],
                    vec![self.expr(&total, env, budget)],
                )
            }
            5 => {
                let divisors: Vec<usize> = (1..=len).filter(|d| len.is_multiple_of(*d)).collect();
                let k = self.pick(&divisors);
                let source = Type::array(
                    Nat::cst((len / k) as i64),
                    Type::array(Nat::cst(k as i64), elem.clone()),
                );
                app(Prim::Join, vec![self.expr(&source, env, budget)])
            }
            6 => {
                let TypeKind::Array(sz, t) = elem.kind() else {
                    return None;
                };
                let size = size_of(sz);
                let source = Type::array(Nat::cst((len + size - 1) as i64), t.clone());
                nat_app(
                    Prim::Slide,
                    &[size as i64, 1],
                    vec![self.expr(&source, env, budget)],
                )
            }
            7 => self.leaf(&ty, env),
            8 => {
                let extra = self.rng.random_range(0..3);
                let source = Type::array(Nat::cst((len + extra) as i64), elem.clone());
                let xs = self.expr(&source, env, budget);
                if self.chance(50) {
                    nat_app(Prim::Take, &[len as i64], vec![xs])
                } else {
                    nat_app(Prim::Drop, &[extra as i64], vec![xs])
                }
            }
            9 => {
                // Keep at least one element inside: an empty array literal has no
                // element type to infer.
                let left = self.rng.random_range(0..len.min(3));
                let right = self.rng.random_range(0..(len - left).min(3));
                let inner = Type::array(Nat::cst((len - left - right) as i64), elem.clone());
                let value = self.leaf(elem, env);
                let xs = self.expr(&inner, env, half);
                nat_app(Prim::PadCst, &[left as i64, right as i64], vec![value, xs])
            }
            _ => {
                let first = self.rng.random_range(1..len);
                let a = self.expr(
                    &Type::array(Nat::cst(first as i64), elem.clone()),
                    env,
                    half,
                );
                let b = self.expr(
                    &Type::array(Nat::cst((len - first) as i64), elem.clone()),
                    env,
                    half,
                );
                app(Prim::Concat, vec![a, b])
            }
        })
    }
}
