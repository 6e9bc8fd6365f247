//! Typed RISE with concrete sizes → an MLIR payload module (`func`, `scf`, `memref`,
//! `arith`, `math`), as text.
//!
//! The translation follows the data: array-reshaping primitives (`split`, `join`,
//! `transpose`, `slide`, `zip`, `pad*`, `take`, `drop`, `generate`, and `map` itself)
//! are *views*, index functions that cost nothing until an element is read; the
//! low-level primitives decide where loops and memory are: `mapSeq`/`mapPar` write
//! every element into a buffer (`scf.for`/`scf.parallel` over `memref.store`), a
//! reduction is a loop carrying its accumulator, `toMem` and `let` materialize. The
//! entry point takes its inputs as memrefs (scalars as values) and writes its result
//! into a last memref argument.

use crate::error::BridgeError;
use elevate_rise::nat::Nat;
use elevate_rise::prim::Prim;
use elevate_rise::term::{Expr, Literal, Term};
use elevate_rise::types::{Scalar, Type, TypeKind};
use std::fmt::Write;
use std::rc::Rc;

/// A value during translation.
#[derive(Clone)]
enum Val {
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
    Fun(Rc<FunVal>),
}

type FunVal = dyn Fn(&mut Gen, Val) -> Result<Val, BridgeError>;
type Getter = dyn Fn(&mut Gen, &str) -> Result<Val, BridgeError>;

/// An array: its length, element type, and how to read the element at an index.
#[derive(Clone)]
struct ArrayVal {
    len: i64,
    elem: Type,
    get: Rc<Getter>,
    /// Where the elements lie one after the other in a buffer, if they do: vectors of
    /// them are loaded at once.
    contiguous: Option<Rc<Contiguous>>,
    /// The two arrays, if this is their `zip` (so that `unzip` gives them back).
    zipped: Option<Rc<(ArrayVal, ArrayVal)>>,
}

/// Elements `i` of an array at `buffer[prefix..., offset + i]`.
struct Contiguous {
    buffer: String,
    dims: Rc<Vec<i64>>,
    scalar: Scalar,
    prefix: Vec<String>,
    offset: Option<String>,
}

impl ArrayVal {
    fn new(
        len: i64,
        elem: Type,
        get: impl Fn(&mut Gen, &str) -> Result<Val, BridgeError> + 'static,
    ) -> ArrayVal {
        ArrayVal {
            len,
            elem,
            get: Rc::new(get),
            contiguous: None,
            zipped: None,
        }
    }

    fn at(&self, g: &mut Gen, i: &str) -> Result<Val, BridgeError> {
        (self.get)(g, i)
    }
}

/// Where a value of a data type lives: one memref per scalar leaf of the type, an
/// array of pairs as a pair of arrays.
#[derive(Clone)]
enum Storage {
    Leaf {
        buffer: String,
        dims: Rc<Vec<i64>>,
        scalar: Scalar,
    },
    Pair(Rc<Storage>, Rc<Storage>),
}

/// The environment: term variables (by identity) and their values.
type Env = Rc<Vec<(u64, Val)>>;

fn bind(env: &Env, id: u64, v: Val) -> Env {
    let mut e = (**env).clone();
    e.push((id, v));
    Rc::new(e)
}

/// The code generator: the function body's lines, and fresh names.
pub(crate) struct Gen {
    lines: Vec<String>,
    indent: usize,
    next: usize,
    /// The buffers allocated in each open region (function body, loop bodies), freed
    /// when the region ends: nothing allocated inside a region is used outside it.
    allocations: Vec<Vec<(String, String)>>,
    /// How many times the code being emitted runs (the product of the enclosing
    /// loops' trip counts).
    trips: Vec<u64>,
    /// Floating-point operations the function performs (each lane counts).
    flops: u64,
}

fn mlir_scalar(s: Scalar) -> &'static str {
    match s {
        Scalar::Bool => "i1",
        Scalar::I32 => "i32",
        Scalar::I64 => "i64",
        Scalar::F32 => "f32",
        Scalar::F64 => "f64",
    }
}

/// A constant size, or an error naming the term.
fn size(n: &Nat, what: &Term) -> Result<i64, BridgeError> {
    n.as_const().ok_or_else(|| {
        BridgeError::unsupported(
            what,
            format!("the size {n} is not known (compile with concrete sizes)"),
        )
    })
}

/// `memref<4x8xf32>`
pub(crate) fn memref_type(dims: &[i64], s: Scalar) -> String {
    let mut out = String::from("memref<");
    for d in dims {
        let _ = write!(out, "{d}x");
    }
    out.push_str(mlir_scalar(s));
    out.push('>');
    out
}

impl Gen {
    fn new() -> Gen {
        Gen {
            lines: Vec::new(),
            indent: 2,
            next: 0,
            allocations: vec![Vec::new()],
            trips: vec![1],
            flops: 0,
        }
    }

    fn fresh(&mut self) -> String {
        self.next += 1;
        format!("%v{}", self.next)
    }

    fn emit(&mut self, line: impl AsRef<str>) {
        let pad = " ".repeat(self.indent * 2);
        self.lines.push(format!("{pad}{}", line.as_ref()));
    }

    /// `%x = <op>`: emits the line and returns the new name.
    fn op(&mut self, rhs: impl AsRef<str>) -> String {
        let x = self.fresh();
        self.emit(format!("{x} = {}", rhs.as_ref()));
        x
    }

    fn index(&mut self, k: i64) -> String {
        self.op(format!("arith.constant {k} : index"))
    }

    /// Opens a region: a loop body that runs `trips` times per run of its parent.
    fn enter(&mut self, trips: i64) {
        self.indent += 1;
        self.allocations.push(Vec::new());
        let outer = self.trips.last().copied().unwrap_or(1);
        self.trips.push(outer.saturating_mul(trips.max(0) as u64));
    }

    /// Frees the buffers the region allocated, then closes it (after `last`, a
    /// terminator such as `scf.yield`, if given).
    fn leave(&mut self, last: Option<String>) {
        self.free_region();
        if let Some(line) = last {
            self.emit(line);
        }
        self.allocations.pop();
        self.trips.pop();
        self.indent -= 1;
        self.emit("}");
    }

    fn free_region(&mut self) {
        let region = self.allocations.last().cloned().unwrap_or_default();
        for (buffer, ty) in region.iter().rev() {
            self.emit(format!("memref.dealloc {buffer} : {ty}"));
        }
    }

    /// `for i in 0..n { body(i) }` as `scf.for`.
    fn for_loop(
        &mut self,
        n: i64,
        body: impl FnOnce(&mut Gen, &str) -> Result<(), BridgeError>,
    ) -> Result<(), BridgeError> {
        let (zero, end, one) = (self.index(0), self.index(n), self.index(1));
        let i = self.fresh();
        self.emit(format!("scf.for {i} = {zero} to {end} step {one} {{"));
        self.enter(n);
        body(self, &i)?;
        self.leave(None);
        Ok(())
    }

    /// `for i in 0..n in parallel { body(i) }` as `scf.parallel`.
    fn parallel_loop(
        &mut self,
        n: i64,
        body: impl FnOnce(&mut Gen, &str) -> Result<(), BridgeError>,
    ) -> Result<(), BridgeError> {
        let (zero, end, one) = (self.index(0), self.index(n), self.index(1));
        let i = self.fresh();
        self.emit(format!(
            "scf.parallel ({i}) = ({zero}) to ({end}) step ({one}) {{"
        ));
        self.enter(n);
        body(self, &i)?;
        self.leave(None);
        Ok(())
    }

    /// New buffers for a value of type `ty`: one memref per scalar leaf of the type
    /// (an array of pairs is stored as a pair of arrays).
    fn alloc(&mut self, ty: &Type, what: &Term) -> Result<Storage, BridgeError> {
        self.alloc_within(ty, Vec::new(), what)
    }

    fn alloc_within(
        &mut self,
        ty: &Type,
        mut dims: Vec<i64>,
        what: &Term,
    ) -> Result<Storage, BridgeError> {
        match ty.kind() {
            TypeKind::Array(n, e) => {
                dims.push(size(n, what)?);
                self.alloc_within(e, dims, what)
            }
            TypeKind::Scalar(s) => {
                let ty = memref_type(&dims, *s);
                let buffer = self.op(format!("memref.alloc() : {ty}"));
                if let Some(region) = self.allocations.last_mut() {
                    region.push((buffer.clone(), ty));
                }
                Ok(Storage::Leaf {
                    buffer,
                    dims: Rc::new(dims),
                    scalar: *s,
                })
            }
            TypeKind::Vector(e, n) => {
                dims.push(size(n, what)?);
                self.alloc_within(e, dims, what)
            }
            TypeKind::Pair(a, b) => Ok(Storage::Pair(
                Rc::new(self.alloc_within(a, dims.clone(), what)?),
                Rc::new(self.alloc_within(b, dims, what)?),
            )),
            _ => Err(BridgeError::unsupported(
                what,
                format!("storing a value of type {ty}"),
            )),
        }
    }

    /// Writes `v` into `storage` at `prefix` and the positions below.
    fn store(
        &mut self,
        v: &Val,
        storage: &Storage,
        prefix: &[String],
        what: &Term,
    ) -> Result<(), BridgeError> {
        match (v, storage) {
            (
                Val::Scalar(x, _),
                Storage::Leaf {
                    buffer,
                    dims,
                    scalar,
                },
            ) => {
                self.emit(format!(
                    "memref.store {x}, {buffer}[{}] : {}",
                    prefix.join(", "),
                    memref_type(dims, *scalar)
                ));
                Ok(())
            }
            (
                Val::Vector(x, s, n),
                Storage::Leaf {
                    buffer,
                    dims,
                    scalar,
                },
            ) => {
                let zero = self.index(0);
                let at = prefix
                    .iter()
                    .cloned()
                    .chain([zero])
                    .collect::<Vec<_>>()
                    .join(", ");
                let t = lane_type(*s, Some(*n));
                self.emit(format!(
                    "vector.store {x}, {buffer}[{at}] : {}, {t}",
                    memref_type(dims, *scalar)
                ));
                Ok(())
            }
            (Val::Pair(a, b), Storage::Pair(sa, sb)) => {
                self.store(a, sa, prefix, what)?;
                self.store(b, sb, prefix, what)
            }
            (Val::Array(a), _) => {
                let (a, storage, prefix) = (a.clone(), storage.clone(), prefix.to_vec());
                self.for_loop(a.len, |g, i| {
                    let element = a.at(g, i)?;
                    let mut inner = prefix.clone();
                    inner.push(i.to_string());
                    g.store(&element, &storage, &inner, what)
                })
            }
            _ => Err(BridgeError::unsupported(
                what,
                "storing a function or an index",
            )),
        }
    }

    /// The value of type `ty` held in `storage` at `prefix`: arrays are read where
    /// they are indexed, scalars are loaded now.
    fn view(&mut self, storage: &Storage, ty: &Type, prefix: Vec<String>) -> Val {
        match (ty.kind(), storage) {
            (TypeKind::Array(n, e), _) => {
                let contiguous = match (storage, e.kind()) {
                    (
                        Storage::Leaf {
                            buffer,
                            dims,
                            scalar,
                        },
                        TypeKind::Scalar(_),
                    ) if prefix.len() + 1 == dims.len() => Some(Rc::new(Contiguous {
                        buffer: buffer.clone(),
                        dims: dims.clone(),
                        scalar: *scalar,
                        prefix: prefix.clone(),
                        offset: None,
                    })),
                    _ => None,
                };
                let (storage, e) = (storage.clone(), e.clone());
                let len = n.as_const().unwrap_or(0);
                let mut array = ArrayVal::new(len, e.clone(), move |g, i| {
                    let mut at = prefix.clone();
                    at.push(i.to_string());
                    Ok(g.view(&storage, &e, at))
                });
                array.contiguous = contiguous;
                Val::Array(array)
            }
            (TypeKind::Pair(a, b), Storage::Pair(sa, sb)) => Val::Pair(
                Box::new(self.view(sa, a, prefix.clone())),
                Box::new(self.view(sb, b, prefix)),
            ),
            (
                TypeKind::Vector(_, n),
                Storage::Leaf {
                    buffer,
                    dims,
                    scalar,
                },
            ) => {
                let lanes = n.as_const().unwrap_or(1);
                let zero = self.index(0);
                let at = prefix
                    .iter()
                    .cloned()
                    .chain([zero])
                    .collect::<Vec<_>>()
                    .join(", ");
                let t = lane_type(*scalar, Some(lanes));
                let v = self.op(format!(
                    "vector.load {buffer}[{at}] : {}, {t}",
                    memref_type(dims, *scalar)
                ));
                Val::Vector(v, *scalar, lanes)
            }
            (
                _,
                Storage::Leaf {
                    buffer,
                    dims,
                    scalar,
                },
            ) => {
                let x = self.op(format!(
                    "memref.load {buffer}[{}] : {}",
                    prefix.join(", "),
                    memref_type(dims, *scalar)
                ));
                Val::Scalar(x, *scalar)
            }
            _ => unreachable!("storage made for this type"),
        }
    }

    /// `v` (of type `ty`) computed into new buffers, then read from them.
    fn materialize(&mut self, v: &Val, ty: &Type, what: &Term) -> Result<Val, BridgeError> {
        match v {
            Val::Array(_) => {
                let storage = self.alloc(ty, what)?;
                self.store(v, &storage, &[], what)?;
                Ok(self.view(&storage, ty, Vec::new()))
            }
            _ => Ok(v.clone()),
        }
    }

    fn expr(&mut self, t: &Term, env: &Env) -> Result<Val, BridgeError> {
        match t.expr() {
            Expr::Var(x) => env
                .iter()
                .rev()
                .find(|(id, _)| *id == x.id)
                .map(|(_, v)| v.clone())
                .ok_or_else(|| BridgeError::unsupported(t, format!("`{}` is not bound", x.name))),
            Expr::Literal(l) => Ok(self.literal(*l)),
            Expr::Lambda(x, _, body) => {
                let (x, body, env) = (x.id, body.clone(), env.clone());
                Ok(Val::Fun(Rc::new(move |g, arg| {
                    g.expr(&body, &bind(&env, x, arg))
                })))
            }
            Expr::App(f, a) => {
                let f = self.expr(f, env)?;
                let a = self.expr(a, env)?;
                self.apply(f, a, t)
            }
            Expr::Annotation(e, _) => self.expr(e, env),
            Expr::Prim(_) | Expr::NatApp(..) => self.primitive(t),
            Expr::NatLambda(..) => Err(BridgeError::unsupported(
                t,
                "a function of a nat inside the program (inline it first: BENF)",
            )),
            Expr::Array(items) => {
                let ty = t.ty().cloned().ok_or_else(|| BridgeError::untyped(t))?;
                let TypeKind::Array(_, elem) = ty.kind() else {
                    return Err(BridgeError::untyped(t));
                };
                let storage = self.alloc(&ty, t)?;
                for (k, item) in items.iter().enumerate() {
                    let v = self.expr(item, env)?;
                    let i = self.index(k as i64);
                    self.store(&v, &storage, &[i], t)?;
                }
                let _ = elem;
                Ok(self.view(&storage, &ty, Vec::new()))
            }
        }
    }

    fn literal(&mut self, l: Literal) -> Val {
        let (text, s) = match l {
            Literal::Bool(b) => (
                if b {
                    "true".to_string()
                } else {
                    "false".to_string()
                },
                Scalar::Bool,
            ),
            Literal::I32(v) => (v.to_string(), Scalar::I32),
            Literal::I64(v) => (v.to_string(), Scalar::I64),
            // The bit pattern: exact, and MLIR reads it for float types.
            Literal::F32(v) => (format!("0x{:08X}", v.to_bits()), Scalar::F32),
            Literal::F64(v) => (format!("0x{:016X}", v.to_bits()), Scalar::F64),
        };
        let x = self.op(format!("arith.constant {text} : {}", mlir_scalar(s)));
        Val::Scalar(x, s)
    }

    fn apply(&mut self, f: Val, a: Val, at: &Term) -> Result<Val, BridgeError> {
        match f {
            Val::Fun(f) => f(self, a),
            _ => Err(BridgeError::unsupported(
                at,
                "applying a value that is not a function",
            )),
        }
    }

    /// A primitive with its nat arguments, as a curried function of its values.
    fn primitive(&mut self, t: &Term) -> Result<Val, BridgeError> {
        let mut nats = Vec::new();
        let mut head = t;
        while let Expr::NatApp(f, n) = head.expr() {
            nats.push(size(n, t)?);
            head = f;
        }
        nats.reverse();
        let Expr::Prim(p) = head.expr() else {
            return Err(BridgeError::unsupported(
                t,
                "a nat argument of something other than a primitive",
            ));
        };
        let ty = t.ty().cloned().ok_or_else(|| BridgeError::untyped(t))?;
        Ok(curried(*p, Rc::new(nats), ty, Vec::new(), t.clone()))
    }
}

/// `p` waiting for its value arguments: a function until all have come, then applied.
fn curried(p: Prim, nats: Rc<Vec<i64>>, ty: Type, args: Vec<Val>, at: Term) -> Val {
    if args.len() == p.value_arity() {
        unreachable!("curried is only built for missing arguments")
    }
    Val::Fun(Rc::new(move |g, arg| {
        let mut args = args.clone();
        args.push(arg);
        // The type of the rest, after this argument.
        let rest = match ty.kind() {
            TypeKind::Fun(_, r) => r.clone(),
            _ => return Err(BridgeError::untyped(&at)),
        };
        if args.len() == p.value_arity() {
            g.apply_primitive(p, &nats, args, &rest, &at)
        } else {
            Ok(curried(p, nats.clone(), rest, args, at.clone()))
        }
    }))
}

/// The offset of a contiguous array's first element in its buffer row.
fn g_offset(g: &mut Gen, c: &Contiguous) -> String {
    match &c.offset {
        Some(o) => o.clone(),
        None => g.index(0),
    }
}

/// `f32` or `vector<8xf32>`.
fn lane_type(s: Scalar, lanes: Option<i64>) -> String {
    match lanes {
        None => mlir_scalar(s).to_string(),
        Some(n) => format!("vector<{n}x{}>", mlir_scalar(s)),
    }
}

fn lanes_value(x: String, s: Scalar, lanes: Option<i64>) -> Val {
    match lanes {
        None => Val::Scalar(x, s),
        Some(n) => Val::Vector(x, s, n),
    }
}

/// A scalar or a vector: its SSA name, element type and lane count.
fn arith_of(v: &Val, at: &Term) -> Result<(String, Scalar, Option<i64>), BridgeError> {
    match v {
        Val::Scalar(x, s) => Ok((x.clone(), *s, None)),
        Val::Vector(x, s, n) => Ok((x.clone(), *s, Some(*n))),
        _ => Err(BridgeError::unsupported(
            at,
            "expected a number or a vector here",
        )),
    }
}

fn scalar_of(v: &Val, at: &Term) -> Result<(String, Scalar), BridgeError> {
    match v {
        Val::Scalar(x, s) => Ok((x.clone(), *s)),
        _ => Err(BridgeError::unsupported(at, "expected a scalar here")),
    }
}

fn array_of(v: &Val, at: &Term) -> Result<ArrayVal, BridgeError> {
    match v {
        Val::Array(a) => Ok(a.clone()),
        _ => Err(BridgeError::unsupported(at, "expected an array here")),
    }
}

fn elem_of(ty: &Type) -> Type {
    match ty.kind() {
        TypeKind::Array(_, e) => e.clone(),
        _ => ty.clone(),
    }
}

impl Gen {
    /// `p(nats...)(args...)` whose result has type `ty`.
    fn apply_primitive(
        &mut self,
        p: Prim,
        nats: &[i64],
        args: Vec<Val>,
        ty: &Type,
        at: &Term,
    ) -> Result<Val, BridgeError> {
        use Prim::*;
        let unsupported = |what: &str| {
            Err(BridgeError::unsupported(
                at,
                format!("`{}`: {what}", p.name()),
            ))
        };
        match p {
            Id => Ok(args[0].clone()),
            Add | Sub | Mul | Div | Mod | Max | Min | Lt | Gt | Equal => {
                let (x, s, lanes) = arith_of(&args[0], at)?;
                let (y, _, _) = arith_of(&args[1], at)?;
                self.binary(p, &x, &y, s, lanes, at)
            }
            Neg | Not | Exp | Sqrt | Abs => {
                let (x, s, lanes) = arith_of(&args[0], at)?;
                self.unary(p, &x, s, lanes, at)
            }
            Select => {
                let (c, _) = scalar_of(&args[0], at)?;
                select_val(self, &c, &args[1], &args[2], at)
            }
            Cast => {
                let (x, from) = scalar_of(&args[0], at)?;
                let TypeKind::Scalar(to) = ty.kind() else {
                    return Err(BridgeError::untyped(at));
                };
                self.cast(&x, from, *to, at)
            }
            Let => {
                let value = match &args[0] {
                    v @ Val::Array(_) => self.materialize(v, &array_type_of(v), at)?,
                    v => v.clone(),
                };
                self.apply(args[1].clone(), value, at)
            }
            ToMem => match &args[0] {
                v @ Val::Array(_) => self.materialize(v, &array_type_of(v), at),
                v => Ok(v.clone()),
            },
            Generate => {
                let TypeKind::Array(n, elem) = ty.kind() else {
                    return Err(BridgeError::untyped(at));
                };
                let f = args[0].clone();
                let at2 = at.clone();
                Ok(Val::Array(ArrayVal::new(
                    size(n, at)?,
                    elem.clone(),
                    move |g, i| g.apply(f.clone(), Val::Index(i.to_string()), &at2),
                )))
            }
            Idx => {
                let Val::Index(i) = &args[0] else {
                    return unsupported("an index that is not an idx value");
                };
                array_of(&args[1], at)?.at(self, i)
            }
            IndexAsNat => {
                let Val::Index(i) = &args[0] else {
                    return unsupported("an index that is not an idx value");
                };
                let x = self.op(format!("arith.index_cast {i} : index to i64"));
                Ok(Val::Scalar(x, Scalar::I64))
            }
            NatAsIndex => {
                let (x, _) = scalar_of(&args[0], at)?;
                let i = self.op(format!("arith.index_cast {x} : i64 to index"));
                Ok(Val::Index(i))
            }
            Take | Drop => {
                let xs = array_of(&args[0], at)?;
                let n = nats[0];
                let (len, offset) = if p == Take { (n, 0) } else { (xs.len - n, n) };
                Ok(Val::Array(ArrayVal::new(
                    len,
                    xs.elem.clone(),
                    move |g, i| {
                        let i = g.offset(i, offset);
                        xs.at(g, &i)
                    },
                )))
            }
            Concat => {
                let (a, b) = (array_of(&args[0], at)?, array_of(&args[1], at)?);
                let at2 = at.clone();
                Ok(Val::Array(ArrayVal::new(
                    a.len + b.len,
                    a.elem.clone(),
                    move |g, i| {
                        // Both reads in range (clamped), then the one that applies.
                        let (first, zero) = (g.index(a.len), g.index(0));
                        let last_a = g.index((a.len - 1).max(0));
                        let in_a = g.op(format!("arith.minsi {i}, {last_a} : index"));
                        let shifted = g.op(format!("arith.subi {i}, {first} : index"));
                        let in_b = g.op(format!("arith.maxsi {shifted}, {zero} : index"));
                        let from_a = g.op(format!("arith.cmpi slt, {i}, {first} : index"));
                        let (x, y) = match (a.len, b.len) {
                            (0, _) => return b.at(g, &in_b),
                            (_, 0) => return a.at(g, &in_a),
                            _ => (a.at(g, &in_a)?, b.at(g, &in_b)?),
                        };
                        select_val(g, &from_a, &x, &y, &at2)
                    },
                )))
            }
            Split => {
                let xs = array_of(&args[0], at)?;
                let n = nats[0];
                let chunk_ty = Type::array(Nat::cst(n), xs.elem.clone());
                Ok(Val::Array(ArrayVal::new(
                    xs.len / n,
                    chunk_ty,
                    move |g, i| {
                        let contiguous = match &xs.contiguous {
                            Some(c) => {
                                let base = g_offset(g, c);
                                let start = g.affine(i, n, &base);
                                Some(Rc::new(Contiguous {
                                    buffer: c.buffer.clone(),
                                    dims: c.dims.clone(),
                                    scalar: c.scalar,
                                    prefix: c.prefix.clone(),
                                    offset: Some(start),
                                }))
                            }
                            None => None,
                        };
                        let (xs, i) = (xs.clone(), i.to_string());
                        let mut chunk = ArrayVal::new(n, xs.elem.clone(), move |g, j| {
                            let k = g.affine(&i, n, j);
                            xs.at(g, &k)
                        });
                        chunk.contiguous = contiguous;
                        Ok(Val::Array(chunk))
                    },
                )))
            }
            Join => {
                let xs = array_of(&args[0], at)?;
                let TypeKind::Array(m, inner) = xs.elem.kind() else {
                    return Err(BridgeError::untyped(at));
                };
                let (m, inner) = (size(m, at)?, inner.clone());
                Ok(Val::Array(ArrayVal::new(xs.len * m, inner, move |g, k| {
                    let mc = g.index(m);
                    let i = g.op(format!("arith.divui {k}, {mc} : index"));
                    let j = g.op(format!("arith.remui {k}, {mc} : index"));
                    let row = array_of(&xs.at(g, &i)?, &Term::prim(Prim::Join))?;
                    row.at(g, &j)
                })))
            }
            Slide => {
                let xs = array_of(&args[0], at)?;
                let (sz, sp) = (nats[0], nats[1]);
                let len = (xs.len - sz) / sp + 1;
                let window_ty = Type::array(Nat::cst(sz), xs.elem.clone());
                Ok(Val::Array(ArrayVal::new(len, window_ty, move |_, i| {
                    let (xs, i) = (xs.clone(), i.to_string());
                    Ok(Val::Array(ArrayVal::new(
                        sz,
                        xs.elem.clone(),
                        move |g, j| {
                            let k = g.affine(&i, sp, j);
                            xs.at(g, &k)
                        },
                    )))
                })))
            }
            Transpose => {
                let xs = array_of(&args[0], at)?;
                let TypeKind::Array(m, inner) = xs.elem.kind() else {
                    return Err(BridgeError::untyped(at));
                };
                let (m, inner) = (size(m, at)?, inner.clone());
                let n = xs.len;
                let column_ty = Type::array(Nat::cst(n), inner.clone());
                let at2 = at.clone();
                Ok(Val::Array(ArrayVal::new(m, column_ty, move |_, j| {
                    let (xs, j, at2) = (xs.clone(), j.to_string(), at2.clone());
                    Ok(Val::Array(ArrayVal::new(n, inner.clone(), move |g, i| {
                        let row = array_of(&xs.at(g, i)?, &at2)?;
                        row.at(g, &j)
                    })))
                })))
            }
            PadCst | PadClamp => {
                let (l, r) = (nats[0], nats[1]);
                let (value, xs) = if p == PadCst {
                    (Some(args[0].clone()), array_of(&args[1], at)?)
                } else {
                    (None, array_of(&args[0], at)?)
                };
                let len = l + xs.len + r;
                let at2 = at.clone();
                Ok(Val::Array(ArrayVal::new(
                    len,
                    xs.elem.clone(),
                    move |g, i| g.padded(&xs, l, i, value.as_ref(), &at2),
                )))
            }
            Zip => {
                let (a, b) = (array_of(&args[0], at)?, array_of(&args[1], at)?);
                let elem = Type::pair(a.elem.clone(), b.elem.clone());
                let pair = Rc::new((a.clone(), b.clone()));
                let mut zipped = ArrayVal::new(a.len, elem, move |g, i| {
                    Ok(Val::Pair(Box::new(a.at(g, i)?), Box::new(b.at(g, i)?)))
                });
                zipped.zipped = Some(pair);
                Ok(Val::Array(zipped))
            }
            Unzip => {
                let xs = array_of(&args[0], at)?;
                if let Some(pair) = &xs.zipped {
                    return Ok(Val::Pair(
                        Box::new(Val::Array(pair.0.clone())),
                        Box::new(Val::Array(pair.1.clone())),
                    ));
                }
                let TypeKind::Pair(ta, tb) = xs.elem.kind() else {
                    return Err(BridgeError::untyped(at));
                };
                let side = |second: bool, t: Type| {
                    let xs = xs.clone();
                    let at = at.clone();
                    Val::Array(ArrayVal::new(xs.len, t, move |g, i| match xs.at(g, i)? {
                        Val::Pair(a, b) => Ok(if second { *b } else { *a }),
                        _ => Err(BridgeError::unsupported(
                            &at,
                            "unzip of something else than pairs",
                        )),
                    }))
                };
                Ok(Val::Pair(
                    Box::new(side(false, ta.clone())),
                    Box::new(side(true, tb.clone())),
                ))
            }
            MakePair => Ok(Val::Pair(
                Box::new(args[0].clone()),
                Box::new(args[1].clone()),
            )),
            Fst | Snd => match &args[0] {
                Val::Pair(a, b) => Ok(if p == Fst {
                    (**a).clone()
                } else {
                    (**b).clone()
                }),
                _ => unsupported("a projection of something else than a pair"),
            },
            MapFst | MapSnd => match &args[1] {
                Val::Pair(a, b) => {
                    if p == MapFst {
                        let a = self.apply(args[0].clone(), (**a).clone(), at)?;
                        Ok(Val::Pair(Box::new(a), b.clone()))
                    } else {
                        let b = self.apply(args[0].clone(), (**b).clone(), at)?;
                        Ok(Val::Pair(a.clone(), Box::new(b)))
                    }
                }
                _ => unsupported("of something else than a pair"),
            },
            Map => {
                // A view: each element computed where it is read.
                let (f, xs) = (args[0].clone(), array_of(&args[1], at)?);
                let at2 = at.clone();
                Ok(Val::Array(ArrayVal::new(
                    xs.len,
                    elem_of(ty),
                    move |g, i| {
                        let x = xs.at(g, i)?;
                        g.apply(f.clone(), x, &at2)
                    },
                )))
            }
            MapSeq | MapSeqUnroll | MapPar => {
                let (f, xs) = (args[0].clone(), array_of(&args[1], at)?);
                let storage = self.alloc(ty, at)?;
                let (s2, at2, len) = (storage.clone(), at.clone(), xs.len);
                let body = move |g: &mut Gen, i: &str| {
                    let x = xs.at(g, i)?;
                    let y = g.apply(f.clone(), x, &at2)?;
                    g.store(&y, &s2, &[i.to_string()], &at2)
                };
                if p == MapPar {
                    self.parallel_loop(len, body)?;
                } else {
                    self.for_loop(len, body)?;
                }
                Ok(self.view(&storage, ty, Vec::new()))
            }
            Reduce | ReduceSeq | ReduceSeqUnroll => {
                let (op, init, xs) = (args[0].clone(), args[1].clone(), array_of(&args[2], at)?);
                self.reduce(op, init, xs, ty, at)
            }
            MapGlobal | MapWorkGroup | MapLocal => unsupported("GPU maps need the GPU target"),
            VectorFromScalar => {
                let (x, s) = scalar_of(&args[0], at)?;
                let TypeKind::Vector(_, n) = ty.kind() else {
                    return Err(BridgeError::untyped(at));
                };
                let lanes = size(n, at)?;
                let v = self.splat(&x, s, Some(lanes));
                Ok(Val::Vector(v, s, lanes))
            }
            AsVector | AsVectorAligned => {
                let xs = array_of(&args[0], at)?;
                let n = nats[0];
                let TypeKind::Scalar(s) = xs.elem.kind() else {
                    return unsupported("vectors of something other than scalars");
                };
                let s = *s;
                let at2 = at.clone();
                let elem = Type::vector(xs.elem.clone(), Nat::cst(n));
                Ok(Val::Array(ArrayVal::new(xs.len / n, elem, move |g, i| {
                    if let Some(c) = &xs.contiguous {
                        // One load of n elements in a row.
                        let base = g_offset(g, c);
                        let start = g.affine(i, n, &base);
                        let at = c.prefix.iter().cloned().chain([start]).collect::<Vec<_>>();
                        let v = g.op(format!(
                            "vector.load {}[{}] : {}, {}",
                            c.buffer,
                            at.join(", "),
                            memref_type(&c.dims, c.scalar),
                            lane_type(s, Some(n))
                        ));
                        return Ok(Val::Vector(v, s, n));
                    }
                    let mut lanes = Vec::new();
                    for k in 0..n {
                        let kc = g.index(k);
                        let base = g.index(n);
                        let scaled = g.op(format!("arith.muli {i}, {base} : index"));
                        let at_k = g.op(format!("arith.addi {scaled}, {kc} : index"));
                        let (x, _) = scalar_of(&xs.at(g, &at_k)?, &at2)?;
                        lanes.push(x);
                    }
                    let t = lane_type(s, Some(n));
                    let v = g.op(format!("vector.from_elements {} : {t}", lanes.join(", ")));
                    Ok(Val::Vector(v, s, n))
                })))
            }
            AsScalar => {
                let xs = array_of(&args[0], at)?;
                let TypeKind::Vector(e, n) = xs.elem.kind() else {
                    return Err(BridgeError::untyped(at));
                };
                let (n, e) = (size(n, at)?, e.clone());
                let at2 = at.clone();
                Ok(Val::Array(ArrayVal::new(xs.len * n, e, move |g, k| {
                    let nc = g.index(n);
                    let i = g.op(format!("arith.divui {k}, {nc} : index"));
                    let j = g.op(format!("arith.remui {k}, {nc} : index"));
                    let (v, s, lanes) = arith_of(&xs.at(g, &i)?, &at2)?;
                    let t = lane_type(s, lanes);
                    let x = g.op(format!(
                        "vector.extract {v}[{j}] : {} from {t}",
                        mlir_scalar(s)
                    ));
                    Ok(Val::Scalar(x, s))
                })))
            }
            ScanSeq | Iterate => unsupported("not supported by the bridge yet"),
        }
    }

    /// `k + offset` as an index.
    fn offset(&mut self, k: &str, offset: i64) -> String {
        if offset == 0 {
            return k.to_string();
        }
        let c = self.index(offset);
        self.op(format!("arith.addi {k}, {c} : index"))
    }

    /// `i * n + j` as an index.
    fn affine(&mut self, i: &str, n: i64, j: &str) -> String {
        let c = self.index(n);
        let scaled = self.op(format!("arith.muli {i}, {c} : index"));
        self.op(format!("arith.addi {scaled}, {j} : index"))
    }

    /// Element `i` of `xs` padded by `l` on the left: `value` outside (or the nearest
    /// element when `value` is `None`).
    fn padded(
        &mut self,
        xs: &ArrayVal,
        l: i64,
        i: &str,
        value: Option<&Val>,
        at: &Term,
    ) -> Result<Val, BridgeError> {
        // The clamped position in xs, computed with signed arithmetic on index.
        let lc = self.index(l);
        let shifted = self.op(format!("arith.subi {i}, {lc} : index"));
        let zero = self.index(0);
        let last = self.index(xs.len - 1);
        let low = self.op(format!("arith.maxsi {shifted}, {zero} : index"));
        let clamped = self.op(format!("arith.minsi {low}, {last} : index"));
        let inner = xs.at(self, &clamped)?;
        let Some(value) = value else {
            return Ok(inner);
        };
        let below = self.op(format!("arith.cmpi slt, {shifted}, {zero} : index"));
        let above = self.op(format!("arith.cmpi sgt, {shifted}, {last} : index"));
        let outside = self.op(format!("arith.ori {below}, {above} : i1"));
        select_val(self, &outside, value, &inner, at)
    }

    fn reduce(
        &mut self,
        op: Val,
        init: Val,
        xs: ArrayVal,
        ty: &Type,
        at: &Term,
    ) -> Result<Val, BridgeError> {
        match &init {
            Val::Scalar(..) | Val::Vector(..) => {
                let (x0, s, lanes) = arith_of(&init, at)?;
                let t = lane_type(s, lanes);
                let (zero, end, one) = (self.index(0), self.index(xs.len), self.index(1));
                let (i, acc) = (self.fresh(), self.fresh());
                let result = self.fresh();
                self.emit(format!(
                    "{result} = scf.for {i} = {zero} to {end} step {one} iter_args({acc} = {x0}) -> ({t}) {{"
                ));
                self.enter(xs.len);
                let x = xs.at(self, &i)?;
                let step = self.apply(op.clone(), lanes_value(acc.clone(), s, lanes), at)?;
                let next = self.apply(step, x, at)?;
                let (next, _, _) = arith_of(&next, at)?;
                self.leave(Some(format!("scf.yield {next} : {t}")));
                Ok(lanes_value(result, s, lanes))
            }
            Val::Array(_) => {
                // The accumulator lives in a buffer: each step computes the next one
                // into a second buffer, then copies it back.
                let acc = self.alloc(ty, at)?;
                self.store(&init, &acc, &[], at)?;
                let acc_view = self.view(&acc, ty, Vec::new());
                let (acc2, view2) = (acc.clone(), acc_view.clone());
                let at2 = at.clone();
                let ty2 = ty.clone();
                self.for_loop(xs.len, move |g, i| {
                    let x = xs.at(g, i)?;
                    let step = g.apply(op.clone(), view2.clone(), &at2)?;
                    let next = g.apply(step, x, &at2)?;
                    let next = g.materialize(&next, &ty2, &at2)?;
                    g.store(&next, &acc2, &[], &at2)
                })?;
                Ok(acc_view)
            }
            _ => Err(BridgeError::unsupported(
                at,
                "a reduction with a pair accumulator",
            )),
        }
    }

    fn binary(
        &mut self,
        p: Prim,
        x: &str,
        y: &str,
        s: Scalar,
        lanes: Option<i64>,
        at: &Term,
    ) -> Result<Val, BridgeError> {
        let t = lane_type(s, lanes);
        let float = s.is_float();
        let name = match (p, float) {
            (Prim::Add, true) => "arith.addf",
            (Prim::Add, false) => "arith.addi",
            (Prim::Sub, true) => "arith.subf",
            (Prim::Sub, false) => "arith.subi",
            (Prim::Mul, true) => "arith.mulf",
            (Prim::Mul, false) => "arith.muli",
            (Prim::Div, true) => "arith.divf",
            (Prim::Div, false) => "arith.divsi",
            (Prim::Mod, true) => "arith.remf",
            (Prim::Mod, false) => "arith.remsi",
            (Prim::Max, true) => "arith.maxnumf",
            (Prim::Max, false) => "arith.maxsi",
            (Prim::Min, true) => "arith.minnumf",
            (Prim::Min, false) => "arith.minsi",
            (Prim::Lt | Prim::Gt | Prim::Equal, _) => {
                let predicate = match (p, float) {
                    (Prim::Lt, true) => "olt",
                    (Prim::Gt, true) => "ogt",
                    (Prim::Equal, true) => "oeq",
                    (Prim::Lt, false) => "slt",
                    (Prim::Gt, false) => "sgt",
                    _ => "eq",
                };
                let cmp = if float { "arith.cmpf" } else { "arith.cmpi" };
                let b = self.op(format!("{cmp} {predicate}, {x}, {y} : {t}"));
                return Ok(lanes_value(b, Scalar::Bool, lanes));
            }
            _ => {
                return Err(BridgeError::unsupported(
                    at,
                    format!("`{}` on {t}", p.name()),
                ))
            }
        };
        let z = self.op(format!("{name} {x}, {y} : {t}"));
        if float {
            self.count_flops(lanes);
        }
        Ok(lanes_value(z, s, lanes))
    }

    fn unary(
        &mut self,
        p: Prim,
        x: &str,
        s: Scalar,
        lanes: Option<i64>,
        at: &Term,
    ) -> Result<Val, BridgeError> {
        let t = lane_type(s, lanes);
        let z = match (p, s.is_float()) {
            (Prim::Neg, true) => self.op(format!("arith.negf {x} : {t}")),
            (Prim::Neg, false) => {
                let zero = self.op(format!("arith.constant 0 : {}", mlir_scalar(s)));
                let zero = self.splat(&zero, s, lanes);
                self.op(format!("arith.subi {zero}, {x} : {t}"))
            }
            (Prim::Not, _) => {
                let one = self.op("arith.constant true");
                let one = self.splat(&one, s, lanes);
                self.op(format!("arith.xori {x}, {one} : {t}"))
            }
            (Prim::Exp, true) => self.op(format!("math.exp {x} : {t}")),
            (Prim::Sqrt, true) => self.op(format!("math.sqrt {x} : {t}")),
            (Prim::Abs, true) => self.op(format!("math.absf {x} : {t}")),
            (Prim::Abs, false) => self.op(format!("math.absi {x} : {t}")),
            _ => {
                return Err(BridgeError::unsupported(
                    at,
                    format!("`{}` on {t}", p.name()),
                ))
            }
        };
        Ok(lanes_value(z, s, lanes))
    }

    /// Counts one floating-point operation on `lanes` lanes where the code runs.
    fn count_flops(&mut self, lanes: Option<i64>) {
        let runs = self.trips.last().copied().unwrap_or(1);
        let per_run = lanes.unwrap_or(1).max(1) as u64;
        self.flops = self.flops.saturating_add(runs.saturating_mul(per_run));
    }

    /// `x` (a scalar) broadcast to `lanes` lanes, or `x` itself for a scalar.
    fn splat(&mut self, x: &str, s: Scalar, lanes: Option<i64>) -> String {
        match lanes {
            None => x.to_string(),
            Some(n) => {
                let t = lane_type(s, Some(n));
                self.op(format!("vector.broadcast {x} : {} to {t}", mlir_scalar(s)))
            }
        }
    }

    fn cast(&mut self, x: &str, from: Scalar, to: Scalar, at: &Term) -> Result<Val, BridgeError> {
        use Scalar::*;
        let (f, t) = (mlir_scalar(from), mlir_scalar(to));
        let width = |s: Scalar| match s {
            Bool => 1,
            I32 | F32 => 32,
            I64 | F64 => 64,
        };
        let z = match (from.is_float(), to.is_float()) {
            _ if from == to => return Ok(Val::Scalar(x.to_string(), to)),
            (false, true) if from == Bool => self.op(format!("arith.uitofp {x} : {f} to {t}")),
            (false, true) => self.op(format!("arith.sitofp {x} : {f} to {t}")),
            (true, false) if to == Bool => {
                let zero = self.op(format!("arith.constant 0.0 : {f}"));
                self.op(format!("arith.cmpf une, {x}, {zero} : {f}"))
            }
            (true, false) => self.op(format!("arith.fptosi {x} : {f} to {t}")),
            (true, true) if width(to) > width(from) => {
                self.op(format!("arith.extf {x} : {f} to {t}"))
            }
            (true, true) => self.op(format!("arith.truncf {x} : {f} to {t}")),
            (false, false) if to == Bool => {
                let zero = self.op(format!("arith.constant 0 : {f}"));
                self.op(format!("arith.cmpi ne, {x}, {zero} : {f}"))
            }
            (false, false) if from == Bool => self.op(format!("arith.extui {x} : {f} to {t}")),
            (false, false) if width(to) > width(from) => {
                self.op(format!("arith.extsi {x} : {f} to {t}"))
            }
            (false, false) => self.op(format!("arith.trunci {x} : {f} to {t}")),
        };
        let _ = at;
        Ok(Val::Scalar(z, to))
    }
}

/// `cond ? a : b` for values of the same type: scalars by `arith.select`, arrays element
/// by element (where they are read), pairs component-wise.
fn select_val(g: &mut Gen, cond: &str, a: &Val, b: &Val, at: &Term) -> Result<Val, BridgeError> {
    match (a, b) {
        (Val::Scalar(x, s), Val::Scalar(y, _)) => {
            let z = g.op(format!(
                "arith.select {cond}, {x}, {y} : {}",
                mlir_scalar(*s)
            ));
            Ok(Val::Scalar(z, *s))
        }
        (Val::Vector(x, s, n), Val::Vector(y, _, _)) => {
            let t = lane_type(*s, Some(*n));
            let z = g.op(format!("arith.select {cond}, {x}, {y} : {t}"));
            Ok(Val::Vector(z, *s, *n))
        }
        (Val::Index(x), Val::Index(y)) => {
            let z = g.op(format!("arith.select {cond}, {x}, {y} : index"));
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
        _ => Err(BridgeError::unsupported(at, "selecting between functions")),
    }
}

/// The type of an array value (for materializing it).
fn array_type_of(v: &Val) -> Type {
    match v {
        Val::Array(a) => Type::array(Nat::cst(a.len), a.elem.clone()),
        _ => unreachable!("only arrays are materialized"),
    }
}

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
pub fn payload(name: &str, term: &Term) -> Result<Payload, BridgeError> {
    let mut g = Gen::new();
    let mut env: Env = Rc::new(Vec::new());
    let mut params = Vec::new();
    let mut signature = Vec::new();
    let mut body = term;
    while let Expr::Lambda(x, _, b) = body.expr() {
        let ty = match body.ty().map(Type::kind) {
            Some(TypeKind::Fun(param, _)) => param.clone(),
            _ => return Err(BridgeError::untyped(body)),
        };
        let k = params.len();
        let value = match ty.kind() {
            TypeKind::Scalar(s) => {
                let arg = format!("%arg{k}");
                signature.push(format!("{arg}: {}", mlir_scalar(*s)));
                Val::Scalar(arg, *s)
            }
            _ => {
                let storage = boundary_storage(&ty, body, &mut |leaf, dims, s| {
                    let arg = format!("%arg{k}_{leaf}");
                    signature.push(format!("{arg}: {}", memref_type(dims, s)));
                    arg
                })?;
                g.view(&storage, &ty, Vec::new())
            }
        };
        env = bind(&env, x.id, value);
        params.push(ty);
        body = b;
    }
    let result_ty = body
        .ty()
        .cloned()
        .ok_or_else(|| BridgeError::untyped(body))?;
    let out = boundary_storage(&result_ty, body, &mut |leaf, dims, s| {
        let arg = format!("%out{leaf}");
        signature.push(format!("{arg}: {}", memref_type(dims, s)));
        arg
    })?;
    let result = g.expr(body, &env)?;
    g.store(&result, &out, &[], body)?;
    g.free_region();
    let mut mlir = String::new();
    let _ = writeln!(mlir, "module {{");
    let _ = writeln!(
        mlir,
        "  func.func @{name}({}) attributes {{llvm.emit_c_interface}} {{",
        signature.join(", ")
    );
    for line in &g.lines {
        let _ = writeln!(mlir, "{line}");
    }
    let _ = writeln!(mlir, "    return");
    let _ = writeln!(mlir, "  }}");
    let _ = writeln!(mlir, "}}");
    Ok(Payload {
        mlir,
        name: name.to_string(),
        params,
        result: result_ty,
        flops: g.flops,
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
