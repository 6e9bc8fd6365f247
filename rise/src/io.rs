//! Inputs and outputs of a program: JSON values checked against parameter types (nat
//! variables inferred from the shapes), and reproducible random inputs.

use crate::error::{Error, ErrorKind};
use crate::interp::NatEnv;
use crate::nat::{solve, Equation, Nat, NatVar};
use crate::term::{Expr, Term};
use crate::types::{Scalar, Type, TypeKind};
use crate::value::Value;
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
fn shape_equations(json: &Json, ty: &Type, out: &mut Vec<Equation>) -> Result<(), String> {
    match (ty.kind(), json) {
        (TypeKind::Array(n, elem), Json::Array(items)) => {
            out.push(Equation {
                lhs: n.clone(),
                rhs: Nat::cst(items.len() as i64),
            });
            if let Some(first) = items.first() {
                shape_equations(first, elem, out)?;
            }
            Ok(())
        }
        (TypeKind::Vector(_, n), Json::Array(items)) => {
            out.push(Equation {
                lhs: n.clone(),
                rhs: Nat::cst(items.len() as i64),
            });
            Ok(())
        }
        (TypeKind::Pair(a, b), Json::Array(items)) if items.len() == 2 => {
            shape_equations(&items[0], a, out)?;
            shape_equations(&items[1], b, out)
        }
        (TypeKind::Scalar(_) | TypeKind::Index(_), Json::Number(_) | Json::Bool(_)) => Ok(()),
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
            to_value(json, ty, &nats).map_err(|e| input_error(format!("parameter `{name}`: {e}")))
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

/// Converts JSON to a value of type `ty` (sizes evaluated with `nats`).
pub fn to_value(json: &Json, ty: &Type, nats: &NatEnv) -> Result<Value, String> {
    let mismatch = || format!("expected {ty}, found {}", shape_name(json));
    match (ty.kind(), json) {
        (TypeKind::Scalar(s), _) => scalar(json, *s).ok_or_else(mismatch),
        (TypeKind::Index(n), Json::Number(x)) => {
            let bound = eval_nat(n, nats)?;
            match x.as_i64() {
                Some(i) if (0..bound).contains(&i) => Ok(Value::Index(i)),
                _ => Err(format!("expected an index below {bound}, found {x}")),
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
            let values = items
                .iter()
                .map(|item| to_value(item, elem, nats))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(match ty.kind() {
                TypeKind::Vector(..) => Value::Vector(values.into()),
                _ => Value::array(values),
            })
        }
        (TypeKind::Pair(a, b), Json::Array(items)) if items.len() == 2 => Ok(Value::pair(
            to_value(&items[0], a, nats)?,
            to_value(&items[1], b, nats)?,
        )),
        _ => Err(mismatch()),
    }
}

fn scalar(json: &Json, s: Scalar) -> Option<Value> {
    Some(match (s, json) {
        (Scalar::Bool, Json::Bool(b)) => Value::Bool(*b),
        (Scalar::I32, Json::Number(x)) => Value::I32(i32::try_from(x.as_i64()?).ok()?),
        (Scalar::I64, Json::Number(x)) => Value::I64(x.as_i64()?),
        (Scalar::F32, Json::Number(x)) => Value::F32(x.as_f64()? as f32),
        (Scalar::F64, Json::Number(x)) => Value::F64(x.as_f64()?),
        _ => return None,
    })
}

/// Reproducible pseudo-random inputs for the signature: floats in [-1, 1), integers in
/// [-8, 8), sizes from `nats`.
pub fn random_inputs(signature: &Signature, nats: &NatEnv, seed: u64) -> Result<Vec<Value>, Error> {
    for v in &signature.nats {
        if !nats.contains_key(v) {
            return Err(input_error(format!(
                "random inputs need a size for `{0}`: pass --nat {0}=N",
                nat_name(v)
            )));
        }
    }
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
}

/// Whether two JSON results are equal up to a relative tolerance of `1e-4` on numbers:
/// how rewritten or compiled programs are compared with the interpreter (rules may
/// reassociate floating-point sums).
pub fn approx_eq(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Array(xs), Json::Array(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| approx_eq(x, y))
        }
        (Json::Number(x), Json::Number(y)) => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            x == y || (x - y).abs() <= 1e-4 * (1.0 + x.abs().max(y.abs()))
        }
        _ => a == b,
    }
}
