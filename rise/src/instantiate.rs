//! Fixing a program's sizes: the entry point `depFun(n, ... => f)` with every nat
//! parameter replaced by a concrete size, type-checked again, calls of definitions
//! inlined. What a compiler specializes (the MLIR bridge needs every size constant).
//!
//! ```
//! use elevate_rise::{nat::NatVar, NatEnv, Program};
//! let program = Program::load("def f(x: n.f32) = x |> map(fun(v => v * 2.0))", None).unwrap();
//! let mut nats = NatEnv::default();
//! nats.insert(NatVar::Named("n".into()), 8);
//! let term = program.instantiate(&nats).unwrap();
//! assert_eq!(term.ty().unwrap().to_string(), "8.f32 -> 8.f32");
//! let e = program.instantiate(&NatEnv::default()).unwrap_err();
//! assert!(e.to_string().contains("no size for `n`"));
//! ```

use crate::error::{Error, ErrorKind};
use crate::interp::NatEnv;
use crate::nat::Nat;
use crate::program::Program;
use crate::term::{Expr, Term};

impl Program {
    /// The entry point with its nat parameters fixed to the sizes in `nats` (see
    /// [`instantiate`]).
    pub fn instantiate(&self, nats: &NatEnv) -> Result<Term, Error> {
        instantiate(&self.entry().term, nats)
    }
}

/// `term` (a typed entry point, possibly `depFun(n, ... => ...)`) with its nat
/// parameters fixed to the sizes in `nats`, type-checked again (so that every node's
/// type has the concrete sizes), and in beta-eta normal form (calls of definitions,
/// which are `depFun` applications, inlined).
///
/// A parameter without a size, or with a negative one, is an input error located at
/// the term; a size the program's constraints reject (`split(4)` of 6 elements) is the
/// type checker's error.
pub fn instantiate(term: &Term, nats: &NatEnv) -> Result<Term, Error> {
    let located = |kind: ErrorKind, message: String| match term.span() {
        Some(span) => Error::new(kind, span, message),
        None => Error::unlocated(kind, message),
    };
    let mut t = term.clone();
    while let Expr::NatLambda(v, body) = t.expr() {
        let n = *nats.get(v).ok_or_else(|| {
            located(
                ErrorKind::Input,
                format!("no size for `{v}` (give it with --nat {v}=N or by inputs)"),
            )
        })?;
        if n < 0 {
            return Err(located(
                ErrorKind::Input,
                format!("the size `{v}` = {n} is negative"),
            ));
        }
        t = body.substitute_nat(v, &Nat::cst(n));
    }
    let t = crate::infer(&t)?;
    crate::rules::benf()
        .apply(&t, &mut elevate_core::Context::default())
        .map_err(|e| located(ErrorKind::Type, format!("inlining definitions failed: {e}")))
}
