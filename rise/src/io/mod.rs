//! Inputs and outputs of a program: JSON values checked against parameter types (nat
//! variables inferred from the shapes), `--nat` sizes checked against the
//! parameters, and reproducible random inputs.
//!
//! # JSON forms
//!
//! A scalar is a number (or `true`/`false`), an array is a JSON array, a pair is a
//! two-element array, a vector is an array. Floats that are not numbers are the
//! strings `"NaN"`, `"Infinity"` and `"-Infinity"`, in outputs and in inputs (JSON
//! has no such numbers, and `null` would not say which one it was). An integer input
//! must be an integer in its type's range (`1.0` is one, `1.5` and `3000000000` for
//! an `i32` are not).

mod json;

pub use json::{approx_eq, first_difference, write_json, Difference, WriteError};

use crate::error::{Error, ErrorKind};
use crate::interp::NatEnv;
use crate::limits::{elements_in, Limits};
use crate::nat::{solve, Nat, NatEquation, NatVar};
use crate::term::{Expr, Term};
use crate::types::{Scalar, Type, TypeKind};
pub use crate::value::{float_json, json_float};
use crate::value::{Value, VALUE_BYTES};
use elevate_core::stack::guard;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::Value as Json;

/// The entry point's signature: its nat parameters and its value parameters.
#[derive(Debug, Clone)]
pub struct Signature {
    /// Nat parameters (leading `depFun`s).
    pub nats: Vec<NatVar>,
    /// Value parameters: name and type.
    pub params: Vec<(String, Type)>,
}

/// The signature of a typed entry term `depFun(n, ... => f)`: the nat parameters,
/// then one value parameter per argument of `f`'s function type (named after the
/// lambdas where the term spells them out).
pub fn signature(term: &Term) -> Signature {
    let mut nats = Vec::new();
    let mut body = term;
    while let Expr::NatLambda(v, b) = body.expr() {
        nats.push(v.clone());
        body = b;
    }
    let mut names = Vec::new();
    let mut lambda = body;
    while let Expr::Lambda(x, _, b) = lambda.expr() {
        names.push(x.name.to_string());
        lambda = b;
    }
    let mut params = Vec::new();
    let mut ty = body.ty().cloned();
    while let Some(TypeKind::Fun(param, result)) = ty.as_ref().map(Type::kind) {
        let name = names
            .get(params.len())
            .cloned()
            .unwrap_or_else(|| format!("arg{}", params.len() + 1));
        params.push((name, param.clone()));
        ty = Some(result.clone());
    }
    if params.is_empty() && ty.is_none() {
        // Untyped: fall back to the annotated lambdas.
        let mut lambda = body;
        while let Expr::Lambda(x, Some(annotation), b) = lambda.expr() {
            params.push((x.name.to_string(), annotation.clone()));
            lambda = b;
        }
    }
    Signature { nats, params }
}

fn input_error(message: String) -> Error {
    Error::unlocated(ErrorKind::Input, message)
}

/// A `--nat NAME=VALUE` size that does not fit the program's nat parameters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NatBindingError {
    /// The program has no nat parameter of that name.
    #[error(
        "--nat {name}=...: the program has no nat parameter `{name}` ({})",
        parameters(known)
    )]
    Unknown {
        /// The name given.
        name: String,
        /// The program's nat parameters.
        known: Vec<String>,
    },
    /// The same name was given twice.
    #[error("--nat {name}: given twice ({first}, then {second})")]
    Duplicate {
        /// The name given twice.
        name: String,
        /// The first value.
        first: i64,
        /// The second value.
        second: i64,
    },
    /// A size below zero.
    #[error("--nat {name}={value}: a size must not be negative")]
    Negative {
        /// The name.
        name: String,
        /// The value given.
        value: i64,
    },
}

fn parameters(known: &[String]) -> String {
    match known {
        [] => "it has none".into(),
        [one] => format!("it has `{one}`"),
        _ => format!(
            "it has {}",
            known
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Binds `--nat NAME=VALUE` sizes to the signature's nat parameters: every name must
/// be a parameter, given once, and not negative. Parameters not given take `default`
/// where there is one, and stay unbound otherwise.
///
/// ```
/// use elevate_rise::{io::{bind_nats, NatBindingError}, Program};
/// let program = Program::load("def f(x: n.f32) = x", None).unwrap();
/// let signature = program.signature();
/// assert_eq!(bind_nats(&signature, &[("n".into(), 4)], None).unwrap().len(), 1);
/// let e = bind_nats(&signature, &[("q".into(), 4)], None).unwrap_err();
/// assert!(matches!(e, NatBindingError::Unknown { .. }));
/// assert_eq!(e.to_string(), "--nat q=...: the program has no nat parameter `q` (it has `n`)");
/// ```
pub fn bind_nats(
    signature: &Signature,
    bindings: &[(String, i64)],
    default: Option<i64>,
) -> Result<NatEnv, NatBindingError> {
    let mut env = NatEnv::default();
    for (name, value) in bindings {
        let var = signature
            .nats
            .iter()
            .find(|v| matches!(v, NatVar::Named(n) if **n == **name))
            .ok_or_else(|| NatBindingError::Unknown {
                name: name.clone(),
                known: signature.nats.iter().map(nat_name).collect(),
            })?;
        if *value < 0 {
            return Err(NatBindingError::Negative {
                name: name.clone(),
                value: *value,
            });
        }
        if let Some(first) = env.insert(var.clone(), *value) {
            return Err(NatBindingError::Duplicate {
                name: name.clone(),
                first,
                second: *value,
            });
        }
    }
    if let Some(default) = default {
        for v in &signature.nats {
            env.entry(v.clone()).or_insert(default);
        }
    }
    Ok(env)
}

fn shape_name(json: &Json) -> String {
    match json {
        Json::Array(items) => match items.first() {
            Some(first) => format!("an array of {} ({})", items.len(), shape_name(first)),
            None => "an empty array".into(),
        },
        Json::Number(_) => "a number".into(),
        Json::Bool(_) => "a boolean".into(),
        Json::Null => "null".into(),
        Json::String(_) => "a string".into(),
        Json::Object(_) => "an object".into(),
    }
}

/// Nat equations from the shape of `json` against `ty` (following first elements).
fn shape_equations(json: &Json, ty: &Type, out: &mut Vec<NatEquation>) -> Result<(), String> {
    match (ty.kind(), json) {
        (TypeKind::Array(n, elem), Json::Array(items)) => {
            out.push(NatEquation {
                lhs: n.clone(),
                rhs: Nat::cst(items.len() as i64),
            });
            if let Some(first) = items.first() {
                shape_equations(first, elem, out)?;
            }
            Ok(())
        }
        (TypeKind::Vector(_, n), Json::Array(items)) => {
            out.push(NatEquation {
                lhs: n.clone(),
                rhs: Nat::cst(items.len() as i64),
            });
            Ok(())
        }
        (TypeKind::Pair(a, b), Json::Array(items)) if items.len() == 2 => {
            shape_equations(&items[0], a, out)?;
            shape_equations(&items[1], b, out)
        }
        // Scalars are checked, with a precise message, when they are converted.
        (
            TypeKind::Scalar(_) | TypeKind::Index(_),
            Json::Number(_) | Json::Bool(_) | Json::String(_),
        ) => Ok(()),
        _ => Err(format!("expected {ty}, found {}", shape_name(json))),
    }
}

/// Checks the inputs against the signature: the nat parameters' values (from the
/// shapes) and the values.
pub fn bind_inputs(signature: &Signature, inputs: &[Json]) -> Result<(NatEnv, Vec<Value>), Error> {
    if inputs.len() != signature.params.len() {
        return Err(input_error(format!(
            "expected {} inputs ({}), found {}",
            signature.params.len(),
            signature
                .params
                .iter()
                .map(|(n, t)| format!("{n}: {t}"))
                .collect::<Vec<_>>()
                .join(", "),
            inputs.len()
        )));
    }
    // Solve for the nat parameters as unknowns.
    let unknown = |v: &NatVar| {
        signature
            .nats
            .iter()
            .position(|w| w == v)
            .map(|i| Nat::unknown(i as u32 + 1))
    };
    let mut equations = Vec::new();
    for ((name, ty), json) in signature.params.iter().zip(inputs) {
        let ty = ty.map_nats(&unknown);
        shape_equations(json, &ty, &mut equations)
            .map_err(|e| input_error(format!("parameter `{name}`: {e}")))?;
    }
    let solution = solve(&equations).map_err(|e| {
        input_error(format!(
            "the input shapes contradict the parameter types: {e}"
        ))
    })?;
    let mut nats = NatEnv::default();
    for (i, v) in signature.nats.iter().enumerate() {
        let value = solution
            .get(&(i as u32 + 1))
            .and_then(Nat::as_const)
            .ok_or_else(|| {
                input_error(format!(
                    "the inputs do not determine the nat `{}`",
                    nat_name(v)
                ))
            })?;
        if value < 0 {
            return Err(input_error(format!(
                "the inputs make `{}` negative ({value})",
                nat_name(v)
            )));
        }
        nats.insert(v.clone(), value);
    }
    let values = signature
        .params
        .iter()
        .zip(inputs)
        .map(|((name, ty), json)| {
            to_value(json, ty, &nats).map_err(|e| input_error(format!("parameter `{name}`{e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((nats, values))
}

fn nat_name(v: &NatVar) -> String {
    match v {
        NatVar::Named(n) => n.to_string(),
        NatVar::Unknown(k) => format!("?{k}"),
    }
}

fn eval_nat(n: &Nat, nats: &NatEnv) -> Result<i64, String> {
    n.try_eval(&|v| nats.get(v).copied())
        .map_err(|e| format!("cannot evaluate the size {n}: {e}"))
}

/// Converts JSON to a value of type `ty` (sizes evaluated with `nats`). The error
/// says where in the input (`at [2][0]: ...`) and what was wrong.
pub fn to_value(json: &Json, ty: &Type, nats: &NatEnv) -> Result<Value, String> {
    let mut path = Vec::new();
    convert(json, ty, nats, &mut path).map_err(|e| {
        let at: String = path.iter().map(|i| format!("[{i}]")).collect();
        if at.is_empty() {
            format!(": {e}")
        } else {
            format!(" at {at}: {e}")
        }
    })
}

/// `to_value`, with `path` left at the element that failed.
fn convert(json: &Json, ty: &Type, nats: &NatEnv, path: &mut Vec<usize>) -> Result<Value, String> {
    let mismatch = || format!("expected {ty}, found {}", shape_name(json));
    match (ty.kind(), json) {
        (TypeKind::Scalar(s), _) => scalar(json, *s),
        (TypeKind::Index(n), Json::Number(x)) => {
            let bound = eval_nat(n, nats)?;
            match exact_integer(x) {
                Some(i) if (0..i128::from(bound)).contains(&i) => Ok(Value::Index(i as i64)),
                _ => Err(format!("expected an index below {bound} ({ty}), found {x}")),
            }
        }
        (TypeKind::Array(n, elem), Json::Array(items))
        | (TypeKind::Vector(elem, n), Json::Array(items)) => {
            let len = eval_nat(n, nats)?;
            if items.len() as i64 != len {
                return Err(format!(
                    "expected {len} elements ({ty}), found {}",
                    items.len()
                ));
            }
            let mut values = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                path.push(i);
                values.push(convert(item, elem, nats, path)?);
                path.pop();
            }
            Ok(match ty.kind() {
                TypeKind::Vector(..) => Value::Vector(values.into()),
                _ => Value::array(values),
            })
        }
        (TypeKind::Pair(a, b), Json::Array(items)) if items.len() == 2 => {
            path.push(0);
            let first = convert(&items[0], a, nats, path)?;
            path.pop();
            path.push(1);
            let second = convert(&items[1], b, nats, path)?;
            path.pop();
            Ok(Value::pair(first, second))
        }
        _ => Err(mismatch()),
    }
}

/// The integer a JSON number is exactly, if it is one (`3`, `3.0`, `1e3`).
fn exact_integer(x: &serde_json::Number) -> Option<i128> {
    if let Some(i) = x.as_i64() {
        return Some(i128::from(i));
    }
    if let Some(u) = x.as_u64() {
        return Some(i128::from(u));
    }
    let f = x.as_f64()?;
    // Beyond 2^100 no integer type is near; the cast below is exact below it.
    (f.fract() == 0.0 && f.abs() < 2f64.powi(100)).then_some(f as i128)
}

fn scalar(json: &Json, s: Scalar) -> Result<Value, String> {
    let name = s.name();
    match (s, json) {
        (Scalar::Bool, Json::Bool(b)) => Ok(Value::Bool(*b)),
        (Scalar::Bool, other) => Err(format!("expected bool (true or false), found {other}")),
        (Scalar::I32 | Scalar::I64, Json::Number(x)) => {
            let Some(i) = exact_integer(x) else {
                return Err(if x.as_f64().is_some_and(|f| f.fract() == 0.0) {
                    format!("{x} is out of range for {name}")
                } else {
                    format!("{x} is not an integer (expected {name})")
                });
            };
            let value = if s == Scalar::I32 {
                i32::try_from(i).ok().map(Value::I32)
            } else {
                i64::try_from(i).ok().map(Value::I64)
            };
            value.ok_or_else(|| {
                // Just past the range, the integer as written rather than serde's
                // float form of it (2^64 reads as 1.8446744073709552e19).
                if i.unsigned_abs() <= 1 << 64 {
                    format!("{i} is out of range for {name}")
                } else {
                    format!("{x} is out of range for {name}")
                }
            })
        }
        (Scalar::F32 | Scalar::F64, _) => {
            let x = json_float(json).ok_or_else(|| match json {
                Json::String(text) => format!(
                    "expected {name}: a number or \"NaN\", \"Infinity\", \"-Infinity\", found the string {text:?}"
                ),
                other => format!("expected {name}, found {}", shape_name(other)),
            })?;
            if s == Scalar::F64 {
                return Ok(Value::F64(x));
            }
            let single = x as f32;
            if single.is_infinite() && x.is_finite() {
                return Err(format!("{json} is out of range for f32"));
            }
            Ok(Value::F32(single))
        }
        (_, other) => Err(format!("expected {name}, found {}", shape_name(other))),
    }
}

/// Reproducible pseudo-random inputs for the signature: floats in [-1, 1), integers in
/// [-8, 8), sizes from `nats`, within the default [`Limits`].
pub fn random_inputs(signature: &Signature, nats: &NatEnv, seed: u64) -> Result<Vec<Value>, Error> {
    random_inputs_with(signature, nats, seed, &Limits::default())
}

/// [`random_inputs`] within `limits`: the size of every input, and of all of them
/// together, is checked before any is made.
pub fn random_inputs_with(
    signature: &Signature,
    nats: &NatEnv,
    seed: u64,
    limits: &Limits,
) -> Result<Vec<Value>, Error> {
    for v in &signature.nats {
        if !nats.contains_key(v) {
            return Err(input_error(format!(
                "random inputs need a size for `{0}`: pass --nat {0}=N",
                nat_name(v)
            )));
        }
    }
    let mut total = 0u128;
    for (name, ty) in &signature.params {
        // A size that cannot be evaluated, or a function type, is reported below.
        let Some(elements) = elements_in(ty, &|n| n.eval(&|v| nats.get(v).copied())) else {
            continue;
        };
        limits
            .check_array(&format!("parameter `{name}` ({ty})"), elements, VALUE_BYTES)
            .map_err(|e| input_error(e.to_string()))?;
        total = total.saturating_add(elements);
    }
    limits
        .check_array("the input set", total, VALUE_BYTES)
        .map_err(|e| input_error(e.to_string()))?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    signature
        .params
        .iter()
        .map(|(name, ty)| {
            random_value(ty, nats, &mut rng)
                .map_err(|e| input_error(format!("parameter `{name}`: {e}")))
        })
        .collect()
}

fn random_value(ty: &Type, nats: &NatEnv, rng: &mut ChaCha8Rng) -> Result<Value, String> {
    // Types nest as deep as programs do.
    guard(|| {
        Ok(match ty.kind() {
            TypeKind::Scalar(Scalar::Bool) => Value::Bool(rng.random_bool(0.5)),
            TypeKind::Scalar(Scalar::I32) => Value::I32(rng.random_range(-8..8)),
            TypeKind::Scalar(Scalar::I64) => Value::I64(rng.random_range(-8..8)),
            TypeKind::Scalar(Scalar::F32) => Value::F32(rng.random_range(-1.0f32..1.0)),
            TypeKind::Scalar(Scalar::F64) => Value::F64(rng.random_range(-1.0f64..1.0)),
            TypeKind::Index(n) => {
                let bound = eval_nat(n, nats)?;
                if bound <= 0 {
                    return Err(format!("no index below {bound}"));
                }
                Value::Index(rng.random_range(0..bound))
            }
            TypeKind::Vector(elem, n) | TypeKind::Array(n, elem) => {
                let len = eval_nat(n, nats)?;
                let len = usize::try_from(len).map_err(|_| format!("negative size {n} = {len}"))?;
                let items = (0..len)
                    .map(|_| random_value(elem, nats, rng))
                    .collect::<Result<Vec<_>, _>>()?;
                match ty.kind() {
                    TypeKind::Vector(..) => Value::Vector(items.into()),
                    _ => Value::array(items),
                }
            }
            TypeKind::Pair(a, b) => {
                Value::pair(random_value(a, nats, rng)?, random_value(b, nats, rng)?)
            }
            TypeKind::Fun(..) | TypeKind::DepFun(..) | TypeKind::Var(_) => {
                return Err(format!("cannot make a random {ty}"))
            }
        })
    })
}
