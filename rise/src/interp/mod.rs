//! The reference interpreter: the oracle every rewrite and every compiled program is
//! checked against.
//!
//! A typed term is compiled once into Rust closures (variables resolved to positions in
//! an environment list, fully applied primitives called directly), then run. Low-level
//! primitives behave exactly as their high-level forms.
//!
//! Evaluation never panics, never overflows the stack and never aborts on
//! allocation:
//! - every recursive step (compiling a node, running one, calling a function,
//!   reading an element of a view of a view) continues on a fresh stack segment when
//!   the stack runs low, so terms and values 100,000 levels deep evaluate;
//! - before a primitive makes an array (`generate`, `map`, `scanSeq`, an array
//!   literal, `vectorFromScalar`) or a view with more elements than its sources
//!   (`padCst`, `padClamp`, `concat`, `slide`), the size of its whole result is
//!   checked against the [`Limits`]: a size over the limit, or one whose element
//!   count overflows, is an error located at the primitive;
//! - integer `div` and `mod` by zero, and `MIN / -1` or `MIN % -1`, are errors
//!   located at the operation.
//!
//! Integers are two's complement: `add`, `sub`, `mul`, `neg` and `abs` wrap on
//! overflow, as the compiled code's `arith.addi`, `arith.subi`, `arith.muli` do (the
//! language does not say otherwise). `div` and `mod` truncate toward zero. Floats
//! follow IEEE 754: `x / 0.0` is infinite or NaN, printed as the JSON strings
//! `"Infinity"`, `"-Infinity"`, `"NaN"` (see [`crate::io`]).

mod env;
mod prims;
mod scalar;

use crate::error::{Error, ErrorKind};
use crate::limits::{elements_in, Limits};
use crate::nat::{Nat, NatVar};
use crate::prim::Prim;
use crate::term::{Expr, Literal, Term};
use crate::types::{Type, TypeKind};
use crate::value::{EvalError, Function, Value, VALUE_BYTES};
use elevate_core::stack::guard;
use env::{Env, Scope};
use prims::{apply_prim, fast_path, Args, Info, Partial};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// Values of nat variables.
pub type NatEnv = FxHashMap<NatVar, i64>;

type CodeFn = dyn Fn(&Env) -> Result<Value, EvalError> + Send + Sync;

/// Compiled code: a closure over an environment. Dropping is guarded like deep
/// terms: the code of a deep program is a deep tree of closures.
#[derive(Clone)]
struct Code(std::mem::ManuallyDrop<Arc<CodeFn>>);

impl Code {
    fn new(f: impl Fn(&Env) -> Result<Value, EvalError> + Send + Sync + 'static) -> Code {
        Code(std::mem::ManuallyDrop::new(Arc::new(f)))
    }

    #[inline]
    fn run(&self, env: &Env) -> Result<Value, EvalError> {
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
/// leading `depFun`s given by `nats`, within the default [`Limits`].
pub fn evaluate(term: &Term, nats: &NatEnv, args: &[Value]) -> Result<Value, Error> {
    evaluate_with(term, nats, args, &Limits::default())
}

/// [`evaluate`] within `limits`: no array the program makes may hold more than
/// `limits` allows.
///
/// ```
/// use elevate_rise::{evaluate_with, limits::Limits, NatEnv, Program};
/// let program = Program::load("def f = generate(fun(i => 1.0)) : 1099511627776.f32", None).unwrap();
/// let e = evaluate_with(&program.entry().term, &NatEnv::default(), &[], &Limits::with_max_bytes(1 << 30))
///     .unwrap_err();
/// assert!(e.message.contains("the result of `generate` has 1099511627776 elements"), "{e}");
/// assert!(e.span.is_some());
/// ```
pub fn evaluate_with(
    term: &Term,
    nats: &NatEnv,
    args: &[Value],
    limits: &Limits,
) -> Result<Value, Error> {
    let mut body = term;
    while let Expr::NatLambda(v, b) = body.expr() {
        if !nats.contains_key(v) {
            return Err(Error::unlocated(
                ErrorKind::Eval,
                format!("no value for the nat parameter {v:?}"),
            ));
        }
        body = b;
    }
    let compiler = Compiler {
        nats: nats.clone(),
        limits: *limits,
    };
    let code = compiler.compile(body, &mut Scope::default())?;
    let mut value = code.run(&Env::default())?;
    for arg in args {
        value = value.call(arg.clone())?;
    }
    Ok(value)
}

#[derive(Clone)]
struct Compiler {
    nats: NatEnv,
    limits: Limits,
}

struct Closure {
    body: Code,
    env: Env,
}

impl Function for Closure {
    fn call(&self, arg: Value) -> Result<Value, EvalError> {
        guard(|| self.body.run(&self.env.push(arg)))
    }
}

/// A `depFun` value that is applied to a nat at run time (the argument of `iterate`).
struct NatClosure {
    compiler: Compiler,
    var: NatVar,
    body: Term,
    scope: Scope,
    env: Env,
}

impl Function for NatClosure {
    fn call(&self, _: Value) -> Result<Value, EvalError> {
        Err(EvalError::from("a function of a nat was applied to a value").at(self.body.span()))
    }

    fn call_nat(&self, n: i64) -> Result<Value, EvalError> {
        let mut compiler = self.compiler.clone();
        compiler.nats.insert(self.var.clone(), n);
        let code = compiler
            .compile(&self.body, &mut self.scope.clone())
            .map_err(|e| EvalError::from(e.message).at(e.span))?;
        code.run(&self.env)
    }
}

/// An evaluation error at `t`.
fn error_at(t: &Term, message: impl Into<String>) -> Error {
    Error {
        kind: ErrorKind::Eval,
        span: t.span(),
        message: message.into(),
    }
}

/// Whether `p` makes an array (or a view with more elements than its sources), so
/// that the size of its result is checked.
fn makes_arrays(p: Prim) -> bool {
    use Prim::*;
    matches!(
        p,
        Generate
            | Map
            | MapSeq
            | MapSeqUnroll
            | MapPar
            | MapGlobal
            | MapWorkGroup
            | MapLocal
            | ScanSeq
            | PadCst
            | PadClamp
            | Concat
            | Slide
            | VectorFromScalar
    )
}

impl Compiler {
    fn nat(&self, n: &Nat) -> Option<i64> {
        n.eval(&|v| self.nats.get(v).copied())
    }

    fn nat_at(&self, n: &Nat, t: &Term) -> Result<i64, Error> {
        n.try_eval(&|v| self.nats.get(v).copied())
            .map_err(|e| error_at(t, format!("cannot evaluate the nat {n}: {e}")))
    }

    fn size(&self, n: &Nat, t: &Term) -> Result<usize, Error> {
        let v = self.nat_at(n, t)?;
        usize::try_from(v).map_err(|_| error_at(t, format!("negative size {n} = {v}")))
    }

    /// How many elements a value of type `ty` holds at these sizes.
    fn elements(&self, ty: &Type) -> Option<u128> {
        elements_in(ty, &|n| self.nat(n))
    }

    fn compile(&self, t: &Term, scope: &mut Scope) -> Result<Code, Error> {
        guard(|| self.compile_node(t, scope))
    }

    fn compile_node(&self, t: &Term, scope: &mut Scope) -> Result<Code, Error> {
        match t.expr() {
            Expr::Var(x) => {
                let index = scope
                    .index(x.id)
                    .ok_or_else(|| error_at(t, format!("`{}` is not bound", x.name)))?;
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
                scope.pop(x.id);
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
                // Rows of rows count in full: the literal holds all of them.
                let elements = t.ty().and_then(|ty| self.elements(ty)).unwrap_or(0);
                let elements = elements.max(items.len() as u128);
                let limits = self.limits;
                let span = t.span();
                Ok(Code::new(move |env: &Env| {
                    limits
                        .check_array("the array literal", elements, VALUE_BYTES)
                        .map_err(|e| EvalError::from(e).at(span))?;
                    let mut values = Vec::with_capacity(items.len());
                    for item in &items {
                        values.push(guard(|| item.run(env))?);
                    }
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
    fn compile_application(&self, t: &Term, scope: &mut Scope) -> Result<Code, Error> {
        let (callee, args) = t.value_arguments();
        let (mut head, nats) = callee.nat_arguments();
        // Look through annotations on the head.
        while let Expr::Annotation(e, _) = head.expr() {
            head = e;
        }
        match head.expr() {
            Expr::Prim(p) => {
                let nat_values = nats
                    .iter()
                    .map(|n| self.nat_at(n, t))
                    .collect::<Result<Vec<_>, _>>()?;
                let info = Arc::new(self.info(*p, callee, t, nat_values)?);
                let arity = p.value_arity();
                let compiled = args
                    .iter()
                    .map(|a| self.compile(a, scope))
                    .collect::<Result<Vec<_>, _>>()?;
                let prim = *p;
                if compiled.len() == arity {
                    if let Some(code) = fast_path(prim, &compiled, t.span()) {
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
                        return Err(error_at(t, "too many nat arguments"));
                    };
                    compiler.nats.insert(v.clone(), self.nat_at(n, t)?);
                    body = b;
                }
                let function = compiler.compile(body, scope)?;
                self.apply_all(function, &args, scope)
            }
            _ if nats.is_empty() => {
                let function = self.compile(head, scope)?;
                self.apply_all(function, &args, scope)
            }
            _ => Err(error_at(
                t,
                "a nat argument to something other than a primitive or depFun",
            )),
        }
    }

    fn apply_all(&self, function: Code, args: &[&Term], scope: &mut Scope) -> Result<Code, Error> {
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

    /// What the primitive `p` at `callee` (the primitive with its nat arguments),
    /// applied in `t`, needs from its (instantiated) type.
    fn info(&self, p: Prim, callee: &Term, t: &Term, nats: Vec<i64>) -> Result<Info, Error> {
        let mut info = Info {
            nats,
            target: None,
            size: None,
            result_elements: None,
            limits: self.limits,
            span: t.span(),
        };
        let Some(ty) = callee.ty() else {
            return Ok(info);
        };
        if makes_arrays(p) {
            let mut result = ty;
            for _ in 0..p.value_arity() {
                if let TypeKind::Fun(_, r) = result.kind() {
                    result = r;
                }
            }
            info.result_elements = self.elements(result);
        }
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
                    info.size = Some(self.size(n, t)?);
                }
            }
            Prim::VectorFromScalar => {
                if let TypeKind::Vector(_, n) = result.kind() {
                    info.size = Some(self.size(n, t)?);
                }
            }
            Prim::Transpose | Prim::Join => {
                if let TypeKind::Array(_, row) = param.kind() {
                    if let TypeKind::Array(m, _) = row.kind() {
                        info.size = Some(self.size(m, t)?);
                    }
                }
            }
            Prim::Iterate => {
                // `(l: nat) -> (l*n).t -> l.t`: the factor n is the size at l = 1.
                if let TypeKind::DepFun(l, f) = param.kind() {
                    if let TypeKind::Fun(input, _) = f.kind() {
                        if let TypeKind::Array(size, _) = input.kind() {
                            let at_one = size.substitute(&|v| (v == l).then(|| Nat::cst(1)));
                            info.size = Some(self.size(&at_one, t)?);
                        }
                    }
                }
            }
            Prim::AsScalar => {
                if let TypeKind::Array(_, v) = param.kind() {
                    if let TypeKind::Vector(_, n) = v.kind() {
                        info.size = Some(self.size(n, t)?);
                    }
                }
            }
            _ => {}
        }
        Ok(info)
    }
}
