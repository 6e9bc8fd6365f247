//! The values of the translation: scalars and vectors as SSA names, arrays as index
//! functions (views), pairs, functions; helpers on them.

use super::emitter::Gen;
use crate::error::Error;
use crate::ir;
use crate::loop_program::deep_rc::DeepRc;
use elevate_core::stack::guard;
use elevate_rise::nat::Nat;
use elevate_rise::term::Term;
use elevate_rise::types::{Scalar, Type, TypeKind};
use std::rc::Rc;

/// A value during translation.
#[derive(Clone)]
pub(super) enum Val {
    /// An SSA value of a scalar type.
    Scalar(String, Scalar),
    /// An SSA value of type `vector<lanes x scalar>`.
    Vector(String, Scalar, i64),
    /// An SSA value of type `index` (RISE's `idx[n]`).
    Index(String),
    /// An array, read element by element.
    Array(ArrayVal),
    /// A pair.
    Pair(Box<Val>, Box<Val>),
    /// A function, applied by generating its body where it is called.
    Fun(DeepRc<FunVal>),
}

pub(super) type FunVal = dyn Fn(&mut Gen, Val) -> Result<Val, Error>;

/// A function value.
pub(super) fn fun(f: impl Fn(&mut Gen, Val) -> Result<Val, Error> + 'static) -> Val {
    Val::Fun(DeepRc::new(Rc::new(f)))
}

pub(super) type Getter = dyn Fn(&mut Gen, &str) -> Result<Val, Error>;

/// An array: its length, element type, and how to read the element at an index.
#[derive(Clone)]
pub(super) struct ArrayVal {
    pub(super) len: i64,
    pub(super) elem: Type,
    pub(super) get: DeepRc<Getter>,
    /// Where the elements lie one after the other in a buffer, if they do: vectors of
    /// them are loaded at once.
    pub(super) contiguous: Option<Rc<Contiguous>>,
    /// The two arrays, if this is their `zip` (so that `unzip` gives them back).
    pub(super) zipped: Option<Rc<(ArrayVal, ArrayVal)>>,
}

/// Elements `i` of an array at `buffer[prefix..., offset + i]`.
pub(super) struct Contiguous {
    pub(super) buffer: String,
    pub(super) dims: Rc<Vec<i64>>,
    pub(super) scalar: Scalar,
    pub(super) prefix: Vec<String>,
    pub(super) offset: Option<String>,
}

impl ArrayVal {
    pub(super) fn new(
        len: i64,
        elem: Type,
        get: impl Fn(&mut Gen, &str) -> Result<Val, Error> + 'static,
    ) -> ArrayVal {
        ArrayVal {
            len,
            elem,
            get: DeepRc::new(Rc::new(get)),
            contiguous: None,
            zipped: None,
        }
    }

    /// The element at `i`: views of views read through each other, as deep as the
    /// program nests them.
    pub(super) fn at(&self, g: &mut Gen, i: &str) -> Result<Val, Error> {
        guard(|| (self.get)(g, i))
    }
}

/// The environment: term variables (by identity) and their values.
pub(super) type Env = crate::loop_program::env::Env<Val>;

pub(super) fn lanes_value(x: String, s: Scalar, lanes: Option<i64>) -> Val {
    match lanes {
        None => Val::Scalar(x, s),
        Some(n) => Val::Vector(x, s, n),
    }
}

/// A scalar or a vector: its SSA name, element type and lane count.
pub(super) fn arith_of(v: &Val, at: &Term) -> Result<(String, Scalar, Option<i64>), Error> {
    match v {
        Val::Scalar(x, s) => Ok((x.clone(), *s, None)),
        Val::Vector(x, s, n) => Ok((x.clone(), *s, Some(*n))),
        _ => Err(Error::unsupported(at, "expected a number or a vector here")),
    }
}

pub(super) fn scalar_of(v: &Val, at: &Term) -> Result<(String, Scalar), Error> {
    match v {
        Val::Scalar(x, s) => Ok((x.clone(), *s)),
        _ => Err(Error::unsupported(at, "expected a scalar here")),
    }
}

pub(super) fn array_of(v: &Val, at: &Term) -> Result<ArrayVal, Error> {
    match v {
        Val::Array(a) => Ok(a.clone()),
        _ => Err(Error::unsupported(at, "expected an array here")),
    }
}

pub(super) fn elem_of(ty: &Type) -> Type {
    match ty.kind() {
        TypeKind::Array(_, e) => e.clone(),
        _ => ty.clone(),
    }
}

/// `cond ? a : b` for values of the same type: scalars by `arith.select`, arrays element
/// by element (where they are read), pairs component-wise.
pub(super) fn select_val(
    g: &mut Gen,
    cond: &str,
    a: &Val,
    b: &Val,
    at: &Term,
) -> Result<Val, Error> {
    guard(|| select(g, cond, a, b, at))
}

fn select(g: &mut Gen, cond: &str, a: &Val, b: &Val, at: &Term) -> Result<Val, Error> {
    match (a, b) {
        (Val::Scalar(x, s), Val::Scalar(y, _)) => {
            let z = g.op(ir::select(cond, x, y, &ir::Type::scalar(*s)));
            Ok(Val::Scalar(z, *s))
        }
        (Val::Vector(x, s, n), Val::Vector(y, _, _)) => {
            let t = ir::Type::lanes(*s, Some(*n));
            let z = g.op(ir::select_by(cond, &ir::Type::BOOL, x, y, &t));
            Ok(Val::Vector(z, *s, *n))
        }
        (Val::Index(x), Val::Index(y)) => {
            let z = g.op(ir::select(cond, x, y, &ir::Type::Index));
            Ok(Val::Index(z))
        }
        (Val::Pair(a1, a2), Val::Pair(b1, b2)) => Ok(Val::Pair(
            Box::new(select_val(g, cond, a1, b1, at)?),
            Box::new(select_val(g, cond, a2, b2, at)?),
        )),
        (Val::Array(xs), Val::Array(ys)) => {
            let (xs, ys, cond, at) = (xs.clone(), ys.clone(), cond.to_string(), at.clone());
            Ok(Val::Array(ArrayVal::new(
                xs.len,
                xs.elem.clone(),
                move |g, i| {
                    let (x, y) = (xs.at(g, i)?, ys.at(g, i)?);
                    select_val(g, &cond, &x, &y, &at)
                },
            )))
        }
        _ => Err(Error::unsupported(at, "selecting between functions")),
    }
}

/// The type of an array value (for materializing it).
pub(super) fn array_type_of(v: &Val) -> Type {
    match v {
        Val::Array(a) => Type::array(Nat::cst(a.len), a.elem.clone()),
        _ => unreachable!("only arrays are materialized"),
    }
}
