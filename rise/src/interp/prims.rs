//! What each primitive computes, with the sizes of what it makes checked against the
//! limits before any memory is taken.

use super::scalar::{arith, cast, compare, unary};
use super::{Code, Env};
use crate::limits::Limits;
use crate::prim::Prim;
use crate::term::Span;
use crate::types::Scalar;
use crate::value::{Array, EvalError, Function, Value, View, VALUE_BYTES};
use crate::view::Reshape;
use elevate_core::stack::guard;
use smallvec::SmallVec;
use std::sync::Arc;

/// Arguments of a primitive (at most three): kept off the heap.
pub(super) type Args = SmallVec<[Value; 3]>;

/// What a primitive needs to know from its type and its place in the program.
pub(super) struct Info {
    pub nats: Vec<i64>,
    /// `cast`'s target.
    pub target: Option<Scalar>,
    /// `generate`'s length, `vectorFromScalar`'s width, `transpose`'s column count,
    /// `join`'s row length, `asScalar`'s vector width.
    pub size: Option<usize>,
    /// For primitives that make arrays: how many elements the whole result holds,
    /// where the type says (rows of rows count in full).
    pub result_elements: Option<u128>,
    pub limits: Limits,
    /// The application, for errors.
    pub span: Option<Span>,
}

/// A primitive applied to some of its arguments.
pub(super) struct Partial {
    pub prim: Prim,
    pub info: Arc<Info>,
    pub args: Args,
}

impl Function for Partial {
    fn call2(&self, a: Value, b: Value) -> Result<Value, EvalError> {
        use Prim::*;
        if self.args.is_empty() {
            // `reduce(add, ...)`: the operator as a value, applied to two arguments.
            match self.prim {
                Add | Sub | Mul | Div | Mod | Max | Min => {
                    return arith(self.prim, &a, &b).map_err(|e| e.at(self.info.span))
                }
                Lt | Gt | Equal => {
                    return compare(self.prim, &a, &b).map_err(|e| e.at(self.info.span))
                }
                _ => {}
            }
        }
        if self.args.len() + 2 == self.prim.value_arity() {
            let mut args = self.args.clone();
            args.push(a);
            args.push(b);
            apply_prim(self.prim, &self.info, args)
        } else {
            self.call(a)?.call(b)
        }
    }

    fn call(&self, arg: Value) -> Result<Value, EvalError> {
        let mut args = self.args.clone();
        args.push(arg);
        if args.len() == self.prim.value_arity() {
            apply_prim(self.prim, &self.info, args)
        } else {
            Ok(Value::Function(Arc::new(Partial {
                prim: self.prim,
                info: self.info.clone(),
                args,
            })))
        }
    }
}

/// Direct code for the primitives a program calls most (pair access, arithmetic,
/// comparison), fully applied: no argument vector, no general dispatch.
pub(super) fn fast_path(prim: Prim, args: &[Code], span: Option<Span>) -> Option<Code> {
    use Prim::*;
    match (prim, args) {
        (Fst | Snd, [a]) => {
            let a = a.clone();
            let second = prim == Snd;
            Some(Code::new(move |env: &Env| {
                let pair = guard(|| a.run(env))?;
                let (x, y) = pair.as_pair().map_err(|e| e.at(span))?;
                Ok(if second { y.clone() } else { x.clone() })
            }))
        }
        (Add | Sub | Mul | Div | Mod | Max | Min, [a, b]) => {
            let (a, b) = (a.clone(), b.clone());
            Some(Code::new(move |env: &Env| {
                guard(|| arith(prim, &a.run(env)?, &b.run(env)?).map_err(|e| e.at(span)))
            }))
        }
        (Lt | Gt | Equal, [a, b]) => {
            let (a, b) = (a.clone(), b.clone());
            Some(Code::new(move |env: &Env| {
                guard(|| compare(prim, &a.run(env)?, &b.run(env)?).map_err(|e| e.at(span)))
            }))
        }
        _ => None,
    }
}

fn nat_arg(info: &Info, i: usize) -> Result<usize, EvalError> {
    let v = *info.nats.get(i).ok_or("missing nat argument")?;
    Ok(usize::try_from(v).map_err(|_| format!("negative nat argument {v}"))?)
}

/// Refuses a result of `len` elements (and of as many elements in all as the type says)
/// that would not fit in the memory limit.
fn check_size(p: Prim, info: &Info, len: usize) -> Result<(), EvalError> {
    let elements = info.result_elements.unwrap_or(0).max(len as u128);
    let what = format!("the result of `{}`", p.name());
    Ok(info.limits.check_array(&what, elements, VALUE_BYTES)?)
}

fn view(view: View) -> Result<Value, EvalError> {
    Ok(Value::Array(Array::new(view)?))
}

/// `source` reshaped (`with`: a `concat`'s second array, a `padCst`'s value).
fn reshaped(reshape: Reshape, source: Array, with: Option<Value>) -> Result<Value, EvalError> {
    view(View::Reshaped {
        reshape,
        source,
        with,
    })
}

/// A length or a size as views take it.
fn length(n: usize) -> Result<i64, EvalError> {
    i64::try_from(n).map_err(|_| format!("a size of {n}").into())
}

/// Applies `p` to all its arguments; errors are located at the application.
pub(super) fn apply_prim(p: Prim, info: &Info, args: Args) -> Result<Value, EvalError> {
    apply(p, info, args).map_err(|e| e.at(info.span))
}

fn apply(p: Prim, info: &Info, mut args: Args) -> Result<Value, EvalError> {
    use Prim::*;
    let arg = |args: &mut Args| args.remove(0);
    Ok(match p {
        Id | ToMem | ToGlobal | ToShared | ToPrivate => arg(&mut args),
        Neg | Not | Exp | Sqrt | Abs => unary(p, &args[0])?,
        Add | Sub | Mul | Div | Mod | Max | Min => arith(p, &args[0], &args[1])?,
        Lt | Gt | Equal => compare(p, &args[0], &args[1])?,
        Select => {
            if args[0].as_bool()? {
                args.swap_remove(1)
            } else {
                args.swap_remove(2)
            }
        }
        Cast => cast(&args[0], info.target.ok_or("cast without a target type")?)?,
        Let => {
            let value = arg(&mut args);
            args[0].call(value)?
        }
        Generate => {
            let n = info.size.ok_or("generate without a length")?;
            check_size(p, info, n)?;
            let f = &args[0];
            let mut items = Vec::with_capacity(n);
            for i in 0..n {
                items.push(f.call(Value::Index(i as i64))?);
            }
            Value::array(items)
        }
        Idx => {
            let i = args[0].as_index()?;
            let xs = args[1].as_array()?;
            xs.get(usize::try_from(i).map_err(|_| format!("negative index {i}"))?)?
        }
        IndexAsNat => Value::I64(args[0].as_index()?),
        NatAsIndex => {
            let n = nat_arg(info, 0)? as i64;
            let i = args[0].as_index()?;
            if i < 0 || i >= n {
                return Err(format!("natAsIndex: {i} is not an index below {n}").into());
            }
            Value::Index(i)
        }
        Take | Drop => {
            let n = nat_arg(info, 0)?;
            let xs = args[0].as_array()?.clone();
            let Some(rest) = xs.len().checked_sub(n) else {
                return Err(format!("{}({n}) of {} elements", p.name(), xs.len()).into());
            };
            let (offset, len) = if p == Take { (0, n) } else { (n, rest) };
            let reshape = Reshape::Offset {
                offset: length(offset)?,
                len: length(len)?,
            };
            reshaped(reshape, xs, None)?
        }
        Concat => {
            let (a, b) = (args[0].as_array()?.clone(), args[1].as_array()?.clone());
            let reshape = Reshape::Concat {
                first: length(a.len())?,
                second: length(b.len())?,
            };
            let joined = reshaped(reshape, a, Some(Value::Array(b)))?;
            check_size(p, info, joined.as_array()?.len())?;
            joined
        }
        Split => {
            let chunk = nat_arg(info, 0)?;
            let xs = args[0].as_array()?.clone();
            if chunk == 0 || xs.len() % chunk != 0 {
                return Err(format!("split({chunk}) of {} elements", xs.len()).into());
            }
            let reshape = Reshape::Split {
                chunk: length(chunk)?,
                len: length(xs.len())?,
            };
            reshaped(reshape, xs, None)?
        }
        Join | Transpose => {
            let xs = args[0].as_array()?.clone();
            let columns = match info.size {
                Some(m) => m,
                None if xs.is_empty() => 0,
                None => xs.get(0)?.as_array()?.len(),
            };
            let (rows, columns) = (length(xs.len())?, length(columns)?);
            let reshape = if p == Join {
                Reshape::Join { rows, columns }
            } else {
                Reshape::Transpose { rows, columns }
            };
            reshaped(reshape, xs, None)?
        }
        Slide => {
            let (size, step) = (nat_arg(info, 0)?, nat_arg(info, 1)?);
            let xs = args[0].as_array()?.clone();
            if step == 0 || xs.len() < size || (xs.len() - size) % step != 0 {
                return Err(format!("slide({size}, {step}) of {} elements", xs.len()).into());
            }
            // Windows overlap: the result holds more elements than its source.
            let elements = ((xs.len() - size) / step + 1).saturating_mul(size);
            check_size(p, info, elements)?;
            let reshape = Reshape::Slide {
                size: length(size)?,
                step: length(step)?,
                len: length(xs.len())?,
            };
            reshaped(reshape, xs, None)?
        }
        PadCst | PadClamp => {
            let (left, right) = (nat_arg(info, 0)?, nat_arg(info, 1)?);
            let value = (p == PadCst).then(|| arg(&mut args));
            let source = args[0].as_array()?.clone();
            let (left, right, len) = (length(left)?, length(right)?, length(source.len())?);
            let reshape = if p == PadCst {
                Reshape::PadConstant { left, right, len }
            } else {
                Reshape::PadClamp { left, right, len }
            };
            let padded = reshaped(reshape, source, value)?;
            check_size(p, info, padded.as_array()?.len())?;
            padded
        }
        Zip => {
            let (a, b) = (args[0].as_array()?.clone(), args[1].as_array()?.clone());
            if a.len() != b.len() {
                return Err(format!("zip of {} and {} elements", a.len(), b.len()).into());
            }
            view(View::Zip(a, b))?
        }
        Unzip => {
            let xs = args[0].as_array()?.clone();
            Value::pair(
                view(View::Side {
                    source: xs.clone(),
                    second: false,
                })?,
                view(View::Side {
                    source: xs,
                    second: true,
                })?,
            )
        }
        MakePair => {
            let a = arg(&mut args);
            Value::pair(a, arg(&mut args))
        }
        Fst => args[0].as_pair()?.0.clone(),
        Snd => args[0].as_pair()?.1.clone(),
        MapFst => {
            let (a, b) = args[1].as_pair()?.clone();
            Value::pair(args[0].call(a)?, b)
        }
        MapSnd => {
            let (a, b) = args[1].as_pair()?.clone();
            Value::pair(a, args[0].call(b)?)
        }
        VectorFromScalar => {
            let n = info.size.ok_or("vectorFromScalar without a width")?;
            check_size(p, info, n)?;
            Value::Vector(vec![args[0].clone(); n].into())
        }
        AsVector | AsVectorAligned => {
            let width = nat_arg(info, 0)?;
            let source = args[0].as_array()?.clone();
            if width == 0 || source.len() % width != 0 {
                return Err(format!("asVector({width}) of {} elements", source.len()).into());
            }
            let reshape = Reshape::AsVector {
                width: length(width)?,
                len: length(source.len())?,
            };
            reshaped(reshape, source, None)?
        }
        AsScalar => {
            let source = args[0].as_array()?.clone();
            let width = match info.size {
                Some(w) => w,
                None if source.is_empty() => 0,
                None => match source.get(0)? {
                    Value::Vector(items) => items.len(),
                    other => return Err(format!("asScalar of {other:?}").into()),
                },
            };
            let reshape = Reshape::AsScalar {
                width: length(width)?,
                len: length(source.len())?,
            };
            reshaped(reshape, source, None)?
        }
        Map | MapSeq | MapSeqUnroll | MapPar | MapGlobal | MapWorkGroup | MapLocal => {
            let (f, xs) = (&args[0], args[1].as_array()?);
            check_size(p, info, xs.len())?;
            let mut out = Vec::with_capacity(xs.len());
            for i in 0..xs.len() {
                out.push(f.call(xs.get_within(i)?)?);
            }
            Value::array(out)
        }
        Reduce | ReduceSeq | ReduceSeqUnroll => {
            let xs = args[2].as_array()?.clone();
            let f = &args[0];
            let mut acc = args[1].clone();
            for i in 0..xs.len() {
                acc = f.call2(acc, xs.get_within(i)?)?;
            }
            acc
        }
        ScanSeq => {
            let xs = args[2].as_array()?.clone();
            check_size(p, info, xs.len())?;
            let f = &args[0];
            let mut acc = args[1].clone();
            let mut out = Vec::with_capacity(xs.len());
            for i in 0..xs.len() {
                acc = f.call2(xs.get_within(i)?, acc)?;
                out.push(acc.clone());
            }
            Value::array(out)
        }
        Iterate => {
            let k = nat_arg(info, 0)?;
            let factor = info.size.ok_or("iterate without its factor")?;
            let f = &args[0];
            let mut xs = args[1].clone();
            for _ in 0..k {
                let len = xs.as_array()?.len();
                if factor == 0 || len % factor != 0 {
                    return Err(format!("iterate: {len} elements do not divide by {factor}").into());
                }
                xs = f.call_nat((len / factor) as i64)?.call(xs)?;
            }
            xs
        }
    })
}
