//! Typed RISE with concrete sizes → an MLIR payload module (`func`, `scf`, `memref`,
//! `arith`, `math`, `vector`), as text.
//!
//! The translation follows the data: array-reshaping primitives (`split`, `join`,
//! `transpose`, `slide`, `zip`, `pad*`, `take`, `drop`, `generate`, and `map` itself)
//! are *views*, index functions that cost nothing until an element is read; the
//! low-level primitives decide where loops and memory are: `mapSeq`/`mapPar` write
//! every element into a buffer (`scf.for`/`scf.parallel` over `memref.store`), a
//! reduction is a loop carrying its accumulator, `toMem` and `let` materialize, and
//! every buffer is freed where its region ends. The entry point takes scalars as values
//! and other data as one memref per scalar leaf ([`crate::boundary`]), and writes its
//! result into memref arguments after them.
//!
//! | module | holds |
//! |---|---|
//! | `value` | values (SSA scalars and vectors, array views, pairs, functions), storage |
//! | `gen` | the generator: lines, regions, loops, buffers, terms to values |
//! | `primitives` | each primitive as a view, a loop or an operation |
//! | `arith` | arithmetic, comparisons, casts, the flop count |

mod arith;
mod gen;
mod primitives;
pub(crate) mod value;

use crate::env::bind;
use crate::error::BridgeError;
pub(crate) use arith::binary_text;
use elevate_rise::nat::Nat;
use elevate_rise::prim::Prim;
use elevate_rise::term::{Expr, Literal, Term};
use elevate_rise::types::{Scalar, Type, TypeKind};
use gen::*;
pub(crate) use gen::{literal_text, memref_type, mlir_scalar};
use std::fmt::Write;
use std::rc::Rc;
use value::*;

/// The payload of one entry point: the MLIR module's text and how to call it.
#[derive(Debug, Clone)]
pub struct Payload {
    /// The MLIR module (`func`, `scf`, `memref`, `arith`, `math`).
    pub mlir: String,
    /// The function's name.
    pub name: String,
    /// The parameters, in order: their types.
    pub params: Vec<Type>,
    /// The result's type (written into the last, extra memref argument).
    pub result: Type,
    /// The floating-point operations one call performs (arithmetic on floats, each
    /// vector lane counted): for the matmul baseline, `2 n k m`.
    pub flops: u64,
    /// The Transform-dialect script (a module with `@__transform_main`) that applies
    /// the program's schedule to the payload's `linalg` operations, when the payload is
    /// made of them.
    pub transform: Option<String>,
    /// Why the payload is explicit loops instead of `linalg` operations, if it is.
    pub loops_because: Option<String>,
}

/// A parameter of the entry point: a scalar value, or data in memrefs.
pub(crate) enum Param {
    Scalar(String, Scalar),
    Data(Storage),
}

/// The entry point's parameters (term variable, type, how it is passed), its result's
/// storage and type, and its body.
pub(crate) struct Signature<'t> {
    pub(crate) params: Vec<(u64, Type, Param)>,
    pub(crate) out: Storage,
    pub(crate) result: Type,
    pub(crate) body: &'t Term,
    pub(crate) text: Vec<String>,
}

pub(crate) fn signature(term: &Term) -> Result<Signature<'_>, BridgeError> {
    let mut params = Vec::new();
    let mut text = Vec::new();
    let mut body = term;
    while let Expr::Lambda(x, _, b) = body.expr() {
        let ty = match body.ty().map(Type::kind) {
            Some(TypeKind::Fun(param, _)) => param.clone(),
            _ => return Err(BridgeError::untyped(body)),
        };
        let k = params.len();
        let param = match ty.kind() {
            TypeKind::Scalar(s) => {
                let arg = format!("%arg{k}");
                text.push(format!("{arg}: {}", mlir_scalar(*s)));
                Param::Scalar(arg, *s)
            }
            _ => Param::Data(boundary_storage(&ty, body, &mut |leaf, dims, s| {
                let arg = format!("%arg{k}_{leaf}");
                text.push(format!("{arg}: {}", memref_type(dims, s)));
                arg
            })?),
        };
        params.push((x.id, ty, param));
        body = b;
    }
    let result = body
        .ty()
        .cloned()
        .ok_or_else(|| BridgeError::untyped(body))?;
    let out = boundary_storage(&result, body, &mut |leaf, dims, s| {
        let arg = format!("%out{leaf}");
        text.push(format!("{arg}: {}", memref_type(dims, s)));
        arg
    })?;
    Ok(Signature {
        params,
        out,
        result,
        body,
        text,
    })
}

/// The module around a function body.
pub(crate) fn module_text(
    name: &str,
    signature: &[String],
    lines: &[String],
    indent: &str,
) -> String {
    let mut mlir = String::new();
    let _ = writeln!(mlir, "module {{");
    let _ = writeln!(
        mlir,
        "  func.func @{name}({}) attributes {{llvm.emit_c_interface}} {{",
        signature.join(", ")
    );
    for line in lines {
        let _ = writeln!(mlir, "{indent}{line}");
    }
    let _ = writeln!(mlir, "    return");
    let _ = writeln!(mlir, "  }}");
    let _ = writeln!(mlir, "}}");
    mlir
}

/// The storage of a parameter or result of type `ty`: one memref argument per scalar
/// leaf, named by `name(leaf number, dims, scalar)`.
fn boundary_storage(
    ty: &Type,
    what: &Term,
    name: &mut dyn FnMut(usize, &[i64], Scalar) -> String,
) -> Result<Storage, BridgeError> {
    fn walk(
        ty: &Type,
        dims: Vec<i64>,
        what: &Term,
        leaf: &mut usize,
        name: &mut dyn FnMut(usize, &[i64], Scalar) -> String,
    ) -> Result<Storage, BridgeError> {
        match ty.kind() {
            TypeKind::Array(n, e) | TypeKind::Vector(e, n) => {
                let mut dims = dims;
                dims.push(size(n, what)?);
                walk(e, dims, what, leaf, name)
            }
            TypeKind::Pair(a, b) => Ok(Storage::Pair(
                Rc::new(walk(a, dims.clone(), what, leaf, name)?),
                Rc::new(walk(b, dims, what, leaf, name)?),
            )),
            TypeKind::Scalar(s) => {
                let buffer = name(*leaf, &dims, *s);
                *leaf += 1;
                Ok(Storage::Leaf {
                    buffer,
                    dims: Rc::new(dims),
                    scalar: *s,
                })
            }
            _ => Err(BridgeError::unsupported(
                what,
                format!("a parameter or result of type {ty} (data only)"),
            )),
        }
    }
    walk(ty, Vec::new(), what, &mut 0, name)
}

/// Translates a closed, typed function `fun(x1: T1 => ... => body)` whose sizes are all
/// constants into an MLIR function `@name(x1, ..., out)` that writes its result into
/// `out`. Scalar parameters are values; any other data is one memref per scalar leaf of
/// its type ([`crate::boundary`]), the result too (a scalar result is a rank-0 memref).
///
/// Where the program is a sequence of structured loop nests, the payload is `linalg`
/// operations and the schedule the program encodes is a Transform script
/// ([`Payload::transform`]); otherwise it is explicit loops ([`payload_loops`]).
pub fn payload(name: &str, term: &Term) -> Result<Payload, BridgeError> {
    match crate::structured::translate(name, term)? {
        Ok(p) => Ok(p),
        Err(why) => {
            let mut p = payload_loops(name, term)?;
            p.loops_because = Some(why.0);
            Ok(p)
        }
    }
}

/// The payload as explicit loops (`scf`, `memref`, `arith`, `vector`): the schedule is
/// in the loops themselves, and there is no Transform script.
pub fn payload_loops(name: &str, term: &Term) -> Result<Payload, BridgeError> {
    let sig = signature(term)?;
    let mut g = Gen::new();
    let mut env: Env = Rc::new(Vec::new());
    for (id, ty, param) in &sig.params {
        let value = match param {
            Param::Scalar(arg, s) => Val::Scalar(arg.clone(), *s),
            Param::Data(storage) => g.view(storage, ty, Vec::new()),
        };
        env = bind(&env, *id, value);
    }
    let result = g.expr(sig.body, &env)?;
    g.store(&result, &sig.out, &[], sig.body)?;
    g.free_region();
    Ok(Payload {
        mlir: module_text(name, &sig.text, &g.lines, ""),
        name: name.to_string(),
        params: sig.params.iter().map(|(_, t, _)| t.clone()).collect(),
        result: sig.result,
        flops: g.flops,
        transform: None,
        loops_because: None,
    })
}

/// `term` (a typed entry point, possibly `depFun(n, ... => ...)`) with its nat
/// parameters fixed to the sizes in `nats`, type-checked again: the payload is
/// specialized to concrete sizes.
pub fn instantiate(term: &Term, nats: &elevate_rise::NatEnv) -> Result<Term, BridgeError> {
    let mut t = term.clone();
    while let Expr::NatLambda(v, body) = t.expr() {
        let n = nats.get(v).ok_or_else(|| {
            BridgeError::new(
                crate::Stage::Rise,
                format!("no size for `{v}` (give it with --nat {v}=N or by inputs)"),
            )
        })?;
        t = body.substitute_nat(v, &Nat::cst(*n));
    }
    let t =
        elevate_rise::infer(&t).map_err(|e| BridgeError::new(crate::Stage::Rise, e.to_string()))?;
    // Calls of definitions are `depFun` applications: inline them.
    elevate_rise::rules::benf()
        .apply(&t, &mut elevate_core::Context::default())
        .map_err(|e| BridgeError::new(crate::Stage::Rise, e.to_string()))
}
