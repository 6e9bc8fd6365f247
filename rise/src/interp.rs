//! The reference interpreter: the oracle every rewrite and every compiled program is
//! checked against.
//!
//! A typed term is compiled once into Rust closures (variables resolved to positions in
//! an environment list, fully applied primitives called directly), then run. Low-level
//! primitives behave exactly as their high-level forms.

use crate::error::{Error, ErrorKind};
use crate::nat::{Nat, NatVar};
use crate::prim::Prim;
use crate::term::{Expr, Literal, Term};
use crate::types::{Scalar, Type, TypeKind};
use crate::value::{Array, Function, Value, View};
use elevate_core::stack::guard;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

/// Arguments of a primitive (at most three): kept off the heap.
type Args = SmallVec<[Value; 3]>;
use std::sync::Arc;

/// Values of nat variables.
pub type NatEnv = FxHashMap<NatVar, i64>;

/// A persistent environment: the innermost binding first.
#[derive(Clone, Default)]
struct Env(Option<Arc<Frame>>);

struct Frame {
    value: Value,
    next: Env,
}

impl Drop for Frame {
    /// Unlinks the rest of the list iteratively: environments of deep programs are
    /// long, and dropping them recursively would overflow the stack.
    fn drop(&mut self) {
        let mut next = self.next.0.take();
        while let Some(frame) = next {
            match Arc::try_unwrap(frame) {
                Ok(mut frame) => next = frame.next.0.take(),
                Err(_) => break,
            }
        }
    }
}

impl Env {
    fn push(&self, value: Value) -> Env {
        Env(Some(Arc::new(Frame {
            value,
            next: self.clone(),
        })))
    }

    fn get(&self, mut index: usize) -> Result<&Value, String> {
        let mut env = self;
        loop {
            let frame = env.0.as_ref().ok_or("unbound variable")?;
            if index == 0 {
                return Ok(&frame.value);
            }
            index -= 1;
            env = &frame.next;
        }
    }
}

type CodeFn = dyn Fn(&Env) -> Result<Value, String> + Send + Sync;

/// Compiled code: a closure over an environment. Dropping is guarded like deep
/// terms: the code of a deep program is a deep tree of closures.
#[derive(Clone)]
struct Code(std::mem::ManuallyDrop<Arc<CodeFn>>);

impl Code {
    fn new(f: impl Fn(&Env) -> Result<Value, String> + Send + Sync + 'static) -> Code {
        Code(std::mem::ManuallyDrop::new(Arc::new(f)))
    }

    #[inline]
    fn run(&self, env: &Env) -> Result<Value, String> {
        (self.0)(env)
    }
}

impl Drop for Code {
    fn drop(&mut self) {
        // SAFETY: the field is not used after this.
        let f = unsafe { std::mem::ManuallyDrop::take(&mut self.0) };
        guard(move || drop(f));
    }
}

/// Evaluates a closed, typed term applied to `args`, with the nat variables of its
/// leading `depFun`s given by `nats`.
pub fn evaluate(term: &Term, nats: &NatEnv, args: &[Value]) -> Result<Value, Error> {
    let mut natenv = nats.clone();
    let mut body = term;
    while let Expr::NatLambda(v, b) = body.expr() {
        if !natenv.contains_key(v) {
            return Err(Error::unlocated(
                ErrorKind::Eval,
                format!("no value for the nat parameter {v:?}"),
            ));
        }
        body = b;
    }
    natenv.retain(|_, _| true);
    let compiler = Compiler { nats: natenv };
    let code = compiler.compile(body, &mut Vec::new())?;
    let mut value = code.run(&Env::default()).map_err(eval_error)?;
    for arg in args {
        value = value.call(arg.clone()).map_err(eval_error)?;
    }
    Ok(value)
}

fn eval_error(message: String) -> Error {
    Error::unlocated(ErrorKind::Eval, message)
}

#[derive(Clone)]
struct Compiler {
    nats: NatEnv,
}

struct Closure {
    body: Code,
    env: Env,
}

impl Function for Closure {
    fn call(&self, arg: Value) -> Result<Value, String> {
        guard(|| self.body.run(&self.env.push(arg)))
    }
}

/// A primitive applied to some of its arguments.
struct Partial {
    prim: Prim,
    info: Arc<Info>,
    args: Args,
}

impl Function for Partial {
    fn call2(&self, a: Value, b: Value) -> Result<Value, String> {
        use Prim::*;
        if self.args.is_empty() {
            // `reduce(add, ...)`: the operator as a value, applied to two arguments.
            match self.prim {
                Add | Sub | Mul | Div | Mod | Max | Min => return arith(self.prim, &a, &b),
                Lt | Gt | Equal => return compare(self.prim, &a, &b),
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

    fn call(&self, arg: Value) -> Result<Value, String> {
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

/// A `depFun` value that is applied to a nat at run time (the argument of `iterate`).
struct NatClosure {
    compiler: Compiler,
    var: NatVar,
    body: Term,
    scope: Vec<u64>,
    env: Env,
}

impl Function for NatClosure {
    fn call(&self, _: Value) -> Result<Value, String> {
        Err("a function of a nat was applied to a value".into())
    }

    fn call_nat(&self, n: i64) -> Result<Value, String> {
        let mut compiler = self.compiler.clone();
        compiler.nats.insert(self.var.clone(), n);
        let code = compiler
            .compile(&self.body, &mut self.scope.clone())
            .map_err(|e| e.message)?;
        code.run(&self.env)
    }
}

/// What a primitive needs to know from its type.
#[derive(Default)]
struct Info {
    nats: Vec<i64>,
    /// `cast`'s target.
    target: Option<Scalar>,
    /// `generate`'s length, `vectorFromScalar`'s width, `transpose`'s column count,
    /// `join`'s row length, `asScalar`'s vector width.
    size: Option<usize>,
}

impl Compiler {
    fn nat(&self, n: &Nat) -> Result<i64, Error> {
        n.try_eval(&|v| self.nats.get(v).copied()).map_err(|e| {
            Error::unlocated(ErrorKind::Eval, format!("cannot evaluate the nat {n}: {e}"))
        })
    }

    fn size(&self, n: &Nat) -> Result<usize, Error> {
        let v = self.nat(n)?;
        usize::try_from(v)
            .map_err(|_| Error::unlocated(ErrorKind::Eval, format!("negative size {n} = {v}")))
    }

    fn compile(&self, t: &Term, scope: &mut Vec<u64>) -> Result<Code, Error> {
        guard(|| self.compile_node(t, scope))
    }

    fn compile_node(&self, t: &Term, scope: &mut Vec<u64>) -> Result<Code, Error> {
        let located = |message: String| {
            let mut e = Error::unlocated(ErrorKind::Eval, message);
            e.span = t.span();
            e
        };
        match t.expr() {
            Expr::Var(x) => {
                let index = scope
                    .iter()
                    .rev()
                    .position(|id| *id == x.id)
                    .ok_or_else(|| located(format!("`{}` is not bound", x.name)))?;
                Ok(Code::new(move |env: &Env| env.get(index).cloned()))
            }
            Expr::Literal(l) => {
                let value = match *l {
                    Literal::Bool(b) => Value::Bool(b),
                    Literal::I32(v) => Value::I32(v),
                    Literal::I64(v) => Value::I64(v),
                    Literal::F32(v) => Value::F32(v),
                    Literal::F64(v) => Value::F64(v),
                };
                Ok(Code::new(move |_: &Env| Ok(value.clone())))
            }
            Expr::Lambda(x, _, body) => {
                scope.push(x.id);
                let body = self.compile(body, scope);
                scope.pop();
                let body = body?;
                Ok(Code::new(move |env: &Env| {
                    Ok(Value::Function(Arc::new(Closure {
                        body: body.clone(),
                        env: env.clone(),
                    })))
                }))
            }
            Expr::Annotation(e, _) => self.compile(e, scope),
            Expr::Array(items) => {
                let items = items
                    .iter()
                    .map(|i| self.compile(i, scope))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Code::new(move |env: &Env| {
                    let values = items
                        .iter()
                        .map(|c| c.run(env))
                        .collect::<Result<Vec<_>, _>>()?;
                    Ok(Value::array(values))
                }))
            }
            Expr::NatLambda(v, body) => {
                // A function of a nat applied at run time (only `iterate` does that):
                // its body is compiled when the nat is known.
                let scope_copy = scope.clone();
                let compiler = self.clone();
                let (v, body) = (v.clone(), body.clone());
                Ok(Code::new(move |env: &Env| {
                    let closure = NatClosure {
                        compiler: compiler.clone(),
                        var: v.clone(),
                        body: body.clone(),
                        scope: scope_copy.clone(),
                        env: env.clone(),
                    };
                    Ok(Value::Function(Arc::new(closure)))
                }))
            }
            Expr::App(..) | Expr::NatApp(..) | Expr::Prim(_) => self.compile_application(t, scope),
        }
    }

    /// `head(nats...)(args...)`: a primitive called directly when fully applied, a
    /// `depFun` instantiated at compile time, or an ordinary application.
    fn compile_application(&self, t: &Term, scope: &mut Vec<u64>) -> Result<Code, Error> {
        let mut args = Vec::new();
        let mut head = t;
        while let Expr::App(f, a) = head.expr() {
            args.push(a);
            head = f;
        }
        args.reverse();
        let callee = head;
        let mut nats = Vec::new();
        while let Expr::NatApp(f, n) = head.expr() {
            nats.push(n);
            head = f;
        }
        nats.reverse();
        // Look through annotations on the head.
        while let Expr::Annotation(e, _) = head.expr() {
            head = e;
        }
        match head.expr() {
            Expr::Prim(p) => {
                let nat_values = nats
                    .iter()
                    .map(|n| self.nat(n))
                    .collect::<Result<Vec<_>, _>>()?;
                let info = Arc::new(self.info(*p, callee.ty(), nat_values)?);
                let arity = p.value_arity();
                let compiled = args
                    .iter()
                    .map(|a| self.compile(a, scope))
                    .collect::<Result<Vec<_>, _>>()?;
                let prim = *p;
                if compiled.len() == arity {
                    if let Some(code) = fast_path(prim, &compiled) {
                        return Ok(code);
                    }
                }
                Ok(Code::new(move |env: &Env| {
                    let mut values = Args::new();
                    for c in &compiled {
                        values.push(guard(|| c.run(env))?);
                    }
                    let rest: Vec<Value> = if values.len() > arity {
                        values.drain(arity..).collect()
                    } else {
                        Vec::new()
                    };
                    let mut result = if values.len() == arity {
                        apply_prim(prim, &info, values)?
                    } else {
                        Value::Function(Arc::new(Partial {
                            prim,
                            info: info.clone(),
                            args: values,
                        }))
                    };
                    for extra in rest {
                        result = result.call(extra)?;
                    }
                    Ok(result)
                }))
            }
            Expr::NatLambda(..) if !nats.is_empty() => {
                // Instantiate at compile time: bind the nat variables, compile the body.
                let mut compiler = self.clone();
                let mut body = head;
                for n in &nats {
                    let Expr::NatLambda(v, b) = body.expr() else {
                        return Err(Error::unlocated(ErrorKind::Eval, "too many nat arguments"));
                    };
                    compiler.nats.insert(v.clone(), self.nat(n)?);
                    body = b;
                }
                let function = compiler.compile(body, scope)?;
                self.apply_all(function, &args, scope)
            }
            _ if nats.is_empty() => {
                let function = self.compile(head, scope)?;
                self.apply_all(function, &args, scope)
            }
            _ => Err(Error {
                kind: ErrorKind::Eval,
                span: t.span(),
                message: "a nat argument to something other than a primitive or depFun".into(),
            }),
        }
    }

    fn apply_all(
        &self,
        function: Code,
        args: &[&Term],
        scope: &mut Vec<u64>,
    ) -> Result<Code, Error> {
        let compiled = args
            .iter()
            .map(|a| self.compile(a, scope))
            .collect::<Result<Vec<_>, _>>()?;
        if compiled.is_empty() {
            return Ok(function);
        }
        Ok(Code::new(move |env: &Env| {
            let mut value = guard(|| function.run(env))?;
            for c in &compiled {
                value = value.call(guard(|| c.run(env))?)?;
            }
            Ok(value)
        }))
    }

    /// What the primitive needs from its (instantiated) type.
    fn info(&self, p: Prim, ty: Option<&Type>, nats: Vec<i64>) -> Result<Info, Error> {
        let mut info = Info {
            nats,
            ..Info::default()
        };
        let Some(ty) = ty else {
            return Ok(info);
        };
        let (param, result) = match ty.kind() {
            TypeKind::Fun(a, b) => (a, b),
            _ => return Ok(info),
        };
        match p {
            Prim::Cast => {
                if let TypeKind::Scalar(s) = result.kind() {
                    info.target = Some(*s);
                }
            }
            Prim::Generate => {
                if let TypeKind::Array(n, _) = result.kind() {
                    info.size = Some(self.size(n)?);
                }
            }
            Prim::VectorFromScalar => {
                if let TypeKind::Vector(_, n) = result.kind() {
                    info.size = Some(self.size(n)?);
                }
            }
            Prim::Transpose | Prim::Join => {
                if let TypeKind::Array(_, row) = param.kind() {
                    if let TypeKind::Array(m, _) = row.kind() {
                        info.size = Some(self.size(m)?);
                    }
                }
            }
            Prim::Iterate => {
                // `(l: nat) -> (l*n).t -> l.t`: the factor n is the size at l = 1.
                if let TypeKind::DepFun(l, f) = param.kind() {
                    if let TypeKind::Fun(input, _) = f.kind() {
                        if let TypeKind::Array(size, _) = input.kind() {
                            let at_one = size.substitute(&|v| (v == l).then(|| Nat::cst(1)));
                            info.size = Some(self.size(&at_one)?);
                        }
                    }
                }
            }
            Prim::AsScalar => {
                if let TypeKind::Array(_, v) = param.kind() {
                    if let TypeKind::Vector(_, n) = v.kind() {
                        info.size = Some(self.size(n)?);
                    }
                }
            }
            _ => {}
        }
        Ok(info)
    }
}

/// Direct code for the primitives a program calls most (pair access, arithmetic,
/// comparison), fully applied: no argument vector, no general dispatch.
fn fast_path(prim: Prim, args: &[Code]) -> Option<Code> {
    use Prim::*;
    match (prim, args) {
        (Fst | Snd, [a]) => {
            let a = a.clone();
            let second = prim == Snd;
            Some(Code::new(move |env: &Env| {
                let pair = guard(|| a.run(env))?;
                let (x, y) = pair.as_pair()?;
                Ok(if second { y.clone() } else { x.clone() })
            }))
        }
        (Add | Sub | Mul | Div | Mod | Max | Min, [a, b]) => {
            let (a, b) = (a.clone(), b.clone());
            Some(Code::new(move |env: &Env| {
                guard(|| arith(prim, &a.run(env)?, &b.run(env)?))
            }))
        }
        (Lt | Gt | Equal, [a, b]) => {
            let (a, b) = (a.clone(), b.clone());
            Some(Code::new(move |env: &Env| {
                guard(|| compare(prim, &a.run(env)?, &b.run(env)?))
            }))
        }
        _ => None,
    }
}

fn nat_arg(info: &Info, i: usize) -> Result<usize, String> {
    let v = *info.nats.get(i).ok_or("missing nat argument")?;
    usize::try_from(v).map_err(|_| format!("negative nat argument {v}"))
}

fn arith(p: Prim, a: &Value, b: &Value) -> Result<Value, String> {
    use Value::*;
    macro_rules! int {
        ($x:expr, $y:expr, $wrap:path) => {
            match p {
                Prim::Add => $x.wrapping_add($y),
                Prim::Sub => $x.wrapping_sub($y),
                Prim::Mul => $x.wrapping_mul($y),
                Prim::Div | Prim::Mod if $y == 0 => return Err("division by zero".into()),
                Prim::Div => $x.wrapping_div($y),
                Prim::Mod => $x.wrapping_rem($y),
                Prim::Max => $x.max($y),
                Prim::Min => $x.min($y),
                _ => unreachable!(),
            }
        };
    }
    macro_rules! float {
        ($x:expr, $y:expr) => {
            match p {
                Prim::Add => $x + $y,
                Prim::Sub => $x - $y,
                Prim::Mul => $x * $y,
                Prim::Div => $x / $y,
                Prim::Mod => $x % $y,
                Prim::Max => $x.max($y),
                Prim::Min => $x.min($y),
                _ => unreachable!(),
            }
        };
    }
    Ok(match (a, b) {
        (I32(x), I32(y)) => I32(int!(*x, *y, i32)),
        (I64(x), I64(y)) => I64(int!(*x, *y, i64)),
        (F32(x), F32(y)) => F32(float!(*x, *y)),
        (F64(x), F64(y)) => F64(float!(*x, *y)),
        (Vector(xs), Vector(ys)) if xs.len() == ys.len() => Vector(
            xs.iter()
                .zip(ys.iter())
                .map(|(x, y)| arith(p, x, y))
                .collect::<Result<Vec<_>, _>>()?
                .into(),
        ),
        _ => return Err(format!("{} of {a:?} and {b:?}", p.name())),
    })
}

fn compare(p: Prim, a: &Value, b: &Value) -> Result<Value, String> {
    use std::cmp::Ordering;
    use Value::*;
    let ordering = match (a, b) {
        (I32(x), I32(y)) => x.partial_cmp(y),
        (I64(x), I64(y)) | (Index(x), Index(y)) => x.partial_cmp(y),
        (F32(x), F32(y)) => x.partial_cmp(y),
        (F64(x), F64(y)) => x.partial_cmp(y),
        (Bool(x), Bool(y)) => x.partial_cmp(y),
        _ => return Err(format!("{} of {a:?} and {b:?}", p.name())),
    };
    Ok(Bool(match p {
        Prim::Lt => ordering == Some(Ordering::Less),
        Prim::Gt => ordering == Some(Ordering::Greater),
        _ => ordering == Some(Ordering::Equal),
    }))
}

fn unary(p: Prim, a: &Value) -> Result<Value, String> {
    use Value::*;
    Ok(match (p, a) {
        (_, Vector(xs)) => Vector(
            xs.iter()
                .map(|x| unary(p, x))
                .collect::<Result<Vec<_>, _>>()?
                .into(),
        ),
        (Prim::Neg, I32(x)) => I32(x.wrapping_neg()),
        (Prim::Neg, I64(x)) => I64(x.wrapping_neg()),
        (Prim::Neg, F32(x)) => F32(-x),
        (Prim::Neg, F64(x)) => F64(-x),
        (Prim::Abs, I32(x)) => I32(x.wrapping_abs()),
        (Prim::Abs, I64(x)) => I64(x.wrapping_abs()),
        (Prim::Abs, F32(x)) => F32(x.abs()),
        (Prim::Abs, F64(x)) => F64(x.abs()),
        (Prim::Exp, F32(x)) => F32(x.exp()),
        (Prim::Exp, F64(x)) => F64(x.exp()),
        (Prim::Sqrt, F32(x)) => F32(x.sqrt()),
        (Prim::Sqrt, F64(x)) => F64(x.sqrt()),
        (Prim::Not, Bool(b)) => Bool(!b),
        _ => return Err(format!("{} of {a:?}", p.name())),
    })
}

fn cast(value: &Value, target: Scalar) -> Result<Value, String> {
    use Value::*;
    let as_f64 = match value {
        Bool(b) => *b as i64 as f64,
        I32(v) => *v as f64,
        I64(v) | Index(v) => *v as f64,
        F32(v) => *v as f64,
        F64(v) => *v,
        other => return Err(format!("cast of {other:?}")),
    };
    let as_i64 = match value {
        I32(v) => *v as i64,
        I64(v) | Index(v) => *v,
        _ => as_f64 as i64,
    };
    Ok(match target {
        Scalar::Bool => Bool(as_f64 != 0.0),
        Scalar::I32 => I32(as_i64 as i32),
        Scalar::I64 => I64(as_i64),
        Scalar::F32 => F32(as_f64 as f32),
        Scalar::F64 => F64(as_f64),
    })
}

fn map_array(f: &Value, xs: &Array) -> Result<Value, String> {
    let mut out = Vec::with_capacity(xs.len());
    for i in 0..xs.len() {
        out.push(f.call(xs.get_within(i)?)?);
    }
    Ok(Value::array(out))
}

fn apply_prim(p: Prim, info: &Info, mut args: Args) -> Result<Value, String> {
    use Prim::*;
    let arg = |args: &mut Args| args.remove(0);
    Ok(match p {
        Id | ToMem => arg(&mut args),
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
            let f = &args[0];
            Value::array(
                (0..n)
                    .map(|i| f.call(Value::Index(i as i64)))
                    .collect::<Result<_, _>>()?,
            )
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
                return Err(format!("natAsIndex: {i} is not an index below {n}"));
            }
            Value::Index(i)
        }
        Take => {
            let n = nat_arg(info, 0)?;
            let xs = args[0].as_array()?.clone();
            if n > xs.len() {
                return Err(format!("take({n}) of {} elements", xs.len()));
            }
            Value::Array(Array::new(View::Slice {
                source: xs,
                start: 0,
                len: n,
            }))
        }
        Drop => {
            let n = nat_arg(info, 0)?;
            let xs = args[0].as_array()?.clone();
            let len = xs
                .len()
                .checked_sub(n)
                .ok_or_else(|| format!("drop({n}) of {} elements", xs.len()))?;
            Value::Array(Array::new(View::Slice {
                source: xs,
                start: n,
                len,
            }))
        }
        Concat => Value::Array(Array::new(View::Concat(
            args[0].as_array()?.clone(),
            args[1].as_array()?.clone(),
        ))),
        Split => {
            let chunk = nat_arg(info, 0)?;
            let xs = args[0].as_array()?.clone();
            if chunk == 0 || xs.len() % chunk != 0 {
                return Err(format!("split({chunk}) of {} elements", xs.len()));
            }
            Value::Array(Array::new(View::Split { source: xs, chunk }))
        }
        Join => {
            let xs = args[0].as_array()?.clone();
            let inner = match info.size {
                Some(m) => m,
                None if xs.is_empty() => 0,
                None => xs.get(0)?.as_array()?.len(),
            };
            Value::Array(Array::new(View::Join { source: xs, inner }))
        }
        Slide => {
            let (size, step) = (nat_arg(info, 0)?, nat_arg(info, 1)?);
            let xs = args[0].as_array()?.clone();
            if step == 0 || xs.len() < size || (xs.len() - size) % step != 0 {
                return Err(format!("slide({size}, {step}) of {} elements", xs.len()));
            }
            let len = (xs.len() - size) / step + 1;
            Value::Array(Array::new(View::Slide {
                source: xs,
                size,
                step,
                len,
            }))
        }
        Transpose => {
            let xs = args[0].as_array()?.clone();
            let columns = match info.size {
                Some(m) => m,
                None if xs.is_empty() => 0,
                None => xs.get(0)?.as_array()?.len(),
            };
            Value::Array(Array::new(View::Transpose {
                source: xs,
                columns,
            }))
        }
        PadCst => {
            let (left, right) = (nat_arg(info, 0)?, nat_arg(info, 1)?);
            let value = arg(&mut args);
            let source = args[0].as_array()?.clone();
            Value::Array(Array::new(View::PadConstant {
                source,
                left,
                right,
                value,
            }))
        }
        PadClamp => {
            let (left, right) = (nat_arg(info, 0)?, nat_arg(info, 1)?);
            let source = args[0].as_array()?.clone();
            Value::Array(Array::new(View::PadClamp {
                source,
                left,
                right,
            }))
        }
        Zip => {
            let (a, b) = (args[0].as_array()?.clone(), args[1].as_array()?.clone());
            if a.len() != b.len() {
                return Err(format!("zip of {} and {} elements", a.len(), b.len()));
            }
            Value::Array(Array::new(View::Zip(a, b)))
        }
        Unzip => {
            let xs = args[0].as_array()?.clone();
            Value::pair(
                Value::Array(Array::new(View::Side {
                    source: xs.clone(),
                    second: false,
                })),
                Value::Array(Array::new(View::Side {
                    source: xs,
                    second: true,
                })),
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
            Value::Vector(vec![args[0].clone(); n].into())
        }
        AsVector | AsVectorAligned => {
            let width = nat_arg(info, 0)?;
            let source = args[0].as_array()?.clone();
            if width == 0 || source.len() % width != 0 {
                return Err(format!("asVector({width}) of {} elements", source.len()));
            }
            Value::Array(Array::new(View::AsVector { source, width }))
        }
        AsScalar => {
            let source = args[0].as_array()?.clone();
            let width = match info.size {
                Some(w) => w,
                None if source.is_empty() => 0,
                None => match source.get(0)? {
                    Value::Vector(items) => items.len(),
                    other => return Err(format!("asScalar of {other:?}")),
                },
            };
            Value::Array(Array::new(View::AsScalar { source, width }))
        }
        Map | MapSeq | MapSeqUnroll | MapPar | MapGlobal | MapWorkGroup | MapLocal => {
            map_array(&args[0], args[1].as_array()?)?
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
                    return Err(format!("iterate: {len} elements do not divide by {factor}"));
                }
                xs = f.call_nat((len / factor) as i64)?.call(xs)?;
            }
            xs
        }
    })
}
