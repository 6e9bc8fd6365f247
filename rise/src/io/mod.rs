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
use crate::nat::{solve, EvalError as NatEvalError, Nat, NatEquation, NatVar};
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
fn shape_equations(json: &Json, ty: &Type, out: &mut Vec<NatEquation>) -> Result<(), ValueError> {
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
        _ => Err(ValueError::mismatch(ty, json)),
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
            to_value(json, ty, &nats).map_err(|e| {
                input_error(match e.path.is_empty() {
                    true => format!("parameter `{name}`: {e}"),
                    false => format!("parameter `{name}` {e}"),
                })
            })
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

/// Why a value of a type cannot be read from JSON, or made at random.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ValueError {
    /// A JSON value of another shape than the type's.
    #[error("expected {expected}, found {found}")]
    Mismatch {
        /// The type, or what it takes (`bool (true or false)`).
        expected: String,
        /// What was there (`an array of 3 (a number)`, `"text"`).
        found: String,
    },
    /// A size of the type has no value at the given sizes.
    #[error("cannot evaluate the size {size}: {why}")]
    Size {
        /// The size.
        size: Nat,
        /// Why.
        why: NatEvalError,
    },
    /// An index at or beyond its bound, or not an integer.
    #[error("expected an index below {bound} ({ty}), found {found}")]
    Index {
        /// The bound.
        bound: i64,
        /// The index type.
        ty: Type,
        /// The number given.
        found: serde_json::Number,
    },
    /// An array or vector of another length than the type's.
    #[error("expected {expected} elements ({ty}), found {found}")]
    Length {
        /// The type's length.
        expected: i64,
        /// The array or vector type.
        ty: Type,
        /// The JSON array's length.
        found: usize,
    },
    /// A number beyond the range of its scalar type.
    #[error("{value} is out of range for {}", .scalar.name())]
    OutOfRange {
        /// The number, as written.
        value: String,
        /// The scalar type.
        scalar: Scalar,
    },
    /// A number with a fraction where an integer belongs.
    #[error("{value} is not an integer (expected {})", .scalar.name())]
    NotInteger {
        /// The number.
        value: serde_json::Number,
        /// The integer type.
        scalar: Scalar,
    },
    /// A string where a float belongs that is none of the names of special floats.
    #[error(
        "expected {}: a number or \"NaN\", \"Infinity\", \"-Infinity\", found the string {text:?}",
        .scalar.name()
    )]
    FloatText {
        /// The float type.
        scalar: Scalar,
        /// The string.
        text: String,
    },
    /// A random index below a bound that is not positive.
    #[error("no index below {bound}")]
    NoIndex {
        /// The bound.
        bound: i64,
    },
    /// A random array or vector of a negative length.
    #[error("negative size {size} = {value}")]
    NegativeSize {
        /// The size.
        size: Nat,
        /// Its value.
        value: i64,
    },
    /// A random value of a type that is not data (a function type, a type variable).
    #[error("cannot make a random {0}")]
    NotData(Type),
    /// The memory for an array could not be allocated (its size was within the
    /// limits, but the system refused it).
    #[error("cannot allocate {bytes} bytes for an array of {len} elements: out of memory")]
    Memory {
        /// The array's length.
        len: usize,
        /// The bytes its elements take.
        bytes: u128,
    },
}

impl ValueError {
    /// `json` is not of the shape of `ty`.
    fn mismatch(ty: &Type, json: &Json) -> ValueError {
        ValueError::Mismatch {
            expected: ty.to_string(),
            found: shape_name(json),
        }
    }
}

/// A JSON input that is not a value of its type: where in it, and why.
///
/// Written `at [2][0]: why`, or `why` for the input as a whole.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{reason}", at(path))]
pub struct InputError {
    /// The positions from the input down to the element that is wrong (`[2][0]`:
    /// element 0 of element 2; a pair's components are 0 and 1); empty for the input
    /// itself.
    pub path: Vec<usize>,
    /// What is wrong there.
    pub reason: ValueError,
}

fn at(path: &[usize]) -> String {
    match path {
        [] => String::new(),
        path => {
            let steps: String = path.iter().map(|i| format!("[{i}]")).collect();
            format!("at {steps}: ")
        }
    }
}

fn eval_nat(n: &Nat, nats: &NatEnv) -> Result<i64, ValueError> {
    n.try_eval(&|v| nats.get(v).copied())
        .map_err(|why| ValueError::Size {
            size: n.clone(),
            why,
        })
}

/// Converts JSON to a value of type `ty` (sizes evaluated with `nats`). The error
/// says where in the input (`at [2][0]: ...`) and what was wrong.
///
/// ```
/// use elevate_rise::{io::to_value, NatEnv, parse_type};
/// let ty = parse_type("3.2.i32").unwrap();
/// let json = serde_json::json!([[1, 2], [3, 4.5], [5, 6]]);
/// let e = to_value(&json, &ty, &NatEnv::default()).unwrap_err();
/// assert_eq!(e.path, [1, 1]);
/// assert_eq!(e.to_string(), "at [1][1]: 4.5 is not an integer (expected i32)");
/// ```
pub fn to_value(json: &Json, ty: &Type, nats: &NatEnv) -> Result<Value, InputError> {
    let mut path = Vec::new();
    convert(json, ty, nats, &mut path).map_err(|reason| InputError { path, reason })
}

/// `to_value`, with `path` left at the element that failed.
fn convert(
    json: &Json,
    ty: &Type,
    nats: &NatEnv,
    path: &mut Vec<usize>,
) -> Result<Value, ValueError> {
    match (ty.kind(), json) {
        (TypeKind::Scalar(s), _) => scalar(json, *s),
        (TypeKind::Index(n), Json::Number(x)) => {
            let bound = eval_nat(n, nats)?;
            match exact_integer(x) {
                Some(i) if (0..i128::from(bound)).contains(&i) => Ok(Value::Index(i as i64)),
                _ => Err(ValueError::Index {
                    bound,
                    ty: ty.clone(),
                    found: x.clone(),
                }),
            }
        }
        (TypeKind::Array(n, elem), Json::Array(items))
        | (TypeKind::Vector(elem, n), Json::Array(items)) => {
            let len = eval_nat(n, nats)?;
            if items.len() as i64 != len {
                return Err(ValueError::Length {
                    expected: len,
                    ty: ty.clone(),
                    found: items.len(),
                });
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
        _ => Err(ValueError::mismatch(ty, json)),
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

fn scalar(json: &Json, s: Scalar) -> Result<Value, ValueError> {
    let name = s.name();
    let out_of_range = |value: String| ValueError::OutOfRange { value, scalar: s };
    match (s, json) {
        (Scalar::Bool, Json::Bool(b)) => Ok(Value::Bool(*b)),
        (Scalar::Bool, other) => Err(ValueError::Mismatch {
            expected: "bool (true or false)".into(),
            found: other.to_string(),
        }),
        (Scalar::I32 | Scalar::I64, Json::Number(x)) => {
            let Some(i) = exact_integer(x) else {
                return Err(if x.as_f64().is_some_and(|f| f.fract() == 0.0) {
                    out_of_range(x.to_string())
                } else {
                    ValueError::NotInteger {
                        value: x.clone(),
                        scalar: s,
                    }
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
                    out_of_range(i.to_string())
                } else {
                    out_of_range(x.to_string())
                }
            })
        }
        (Scalar::F32 | Scalar::F64, _) => {
            let x = json_float(json).ok_or_else(|| match json {
                Json::String(text) => ValueError::FloatText {
                    scalar: s,
                    text: text.clone(),
                },
                other => ValueError::Mismatch {
                    expected: name.into(),
                    found: shape_name(other),
                },
            })?;
            if s == Scalar::F64 {
                return Ok(Value::F64(x));
            }
            let single = x as f32;
            if single.is_infinite() && x.is_finite() {
                return Err(out_of_range(json.to_string()));
            }
            Ok(Value::F32(single))
        }
        (_, other) => Err(ValueError::Mismatch {
            expected: name.into(),
            found: shape_name(other),
        }),
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

fn random_value(ty: &Type, nats: &NatEnv, rng: &mut ChaCha8Rng) -> Result<Value, ValueError> {
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
                    return Err(ValueError::NoIndex { bound });
                }
                Value::Index(rng.random_range(0..bound))
            }
            TypeKind::Vector(elem, n) | TypeKind::Array(n, elem) => {
                let len = eval_nat(n, nats)?;
                let len = usize::try_from(len).map_err(|_| ValueError::NegativeSize {
                    size: n.clone(),
                    value: len,
                })?;
                let mut items = Vec::new();
                items
                    .try_reserve_exact(len)
                    .map_err(|_| ValueError::Memory {
                        len,
                        bytes: (len as u128).saturating_mul(u128::from(VALUE_BYTES)),
                    })?;
                for _ in 0..len {
                    items.push(random_value(elem, nats, rng)?);
                }
                match ty.kind() {
                    TypeKind::Vector(..) => Value::Vector(items.into()),
                    _ => Value::array(items),
                }
            }
            TypeKind::Pair(a, b) => {
                Value::pair(random_value(a, nats, rng)?, random_value(b, nats, rng)?)
            }
            TypeKind::Fun(..) | TypeKind::DepFun(..) | TypeKind::Var(_) => {
                return Err(ValueError::NotData(ty.clone()))
            }
        })
    })
}
