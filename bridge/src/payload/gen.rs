//! The code generator: emitting MLIR lines, regions and loops, buffers, and the
//! translation of terms to values.

use super::*;
use crate::env::{bind, lookup};

/// The code generator: the function body's lines, and fresh names.
pub(crate) struct Gen {
    pub(super) lines: Vec<String>,
    pub(super) indent: usize,
    pub(super) next: usize,
    /// The buffers allocated in each open region (function body, loop bodies), freed
    /// when the region ends: nothing allocated inside a region is used outside it.
    pub(super) allocations: Vec<Vec<(String, String)>>,
    /// How many times the code being emitted runs (the product of the enclosing
    /// loops' trip counts).
    pub(super) trips: Vec<u64>,
    /// Floating-point operations the function performs (each lane counts).
    pub(super) flops: u64,
}

pub(crate) fn mlir_scalar(s: Scalar) -> &'static str {
    match s {
        Scalar::Bool => "i1",
        Scalar::I32 => "i32",
        Scalar::I64 => "i64",
        Scalar::F32 => "f32",
        Scalar::F64 => "f64",
    }
}

/// A literal as MLIR constant text, and its scalar type.
pub(crate) fn literal_text(l: Literal) -> (String, Scalar) {
    match l {
        Literal::Bool(b) => (b.to_string(), Scalar::Bool),
        Literal::I32(v) => (v.to_string(), Scalar::I32),
        Literal::I64(v) => (v.to_string(), Scalar::I64),
        // The bit pattern: exact, and MLIR reads it for float types.
        Literal::F32(v) => (format!("0x{:08X}", v.to_bits()), Scalar::F32),
        Literal::F64(v) => (format!("0x{:016X}", v.to_bits()), Scalar::F64),
    }
}

/// A constant size, or an error naming the term.
pub(super) fn size(n: &Nat, what: &Term) -> Result<i64, BridgeError> {
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
    pub(super) fn new() -> Gen {
        Gen {
            lines: Vec::new(),
            indent: 2,
            next: 0,
            allocations: vec![Vec::new()],
            trips: vec![1],
            flops: 0,
        }
    }

    pub(super) fn fresh(&mut self) -> String {
        self.next += 1;
        format!("%v{}", self.next)
    }

    pub(super) fn emit(&mut self, line: impl AsRef<str>) {
        let pad = " ".repeat(self.indent * 2);
        self.lines.push(format!("{pad}{}", line.as_ref()));
    }

    /// `%x = <op>`: emits the line and returns the new name.
    pub(super) fn op(&mut self, rhs: impl AsRef<str>) -> String {
        let x = self.fresh();
        self.emit(format!("{x} = {}", rhs.as_ref()));
        x
    }

    pub(super) fn index(&mut self, k: i64) -> String {
        self.op(format!("arith.constant {k} : index"))
    }

    /// Opens a region: a loop body that runs `trips` times per run of its parent.
    pub(super) fn enter(&mut self, trips: i64) {
        self.indent += 1;
        self.allocations.push(Vec::new());
        let outer = self.trips.last().copied().unwrap_or(1);
        self.trips.push(outer.saturating_mul(trips.max(0) as u64));
    }

    /// Frees the buffers the region allocated, then closes it (after `last`, a
    /// terminator such as `scf.yield`, if given).
    pub(super) fn leave(&mut self, last: Option<String>) {
        self.free_region();
        if let Some(line) = last {
            self.emit(line);
        }
        self.allocations.pop();
        self.trips.pop();
        self.indent -= 1;
        self.emit("}");
    }

    /// The position of a vector that fills the last dimension of a buffer, at `prefix`:
    /// `prefix..., 0`.
    fn vector_position(&mut self, prefix: &[String]) -> String {
        let zero = self.index(0);
        prefix
            .iter()
            .cloned()
            .chain([zero])
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub(super) fn free_region(&mut self) {
        let region = self.allocations.last().cloned().unwrap_or_default();
        for (buffer, ty) in region.iter().rev() {
            self.emit(format!("memref.dealloc {buffer} : {ty}"));
        }
    }

    /// `for i in 0..n { body(i) }` as `scf.for`.
    pub(super) fn for_loop(
        &mut self,
        n: i64,
        body: impl FnOnce(&mut Gen, &str) -> Result<(), BridgeError>,
    ) -> Result<(), BridgeError> {
        self.loop_over(n, false, body)
    }

    /// `for i in 0..n in parallel { body(i) }` as `scf.parallel`.
    pub(super) fn parallel_loop(
        &mut self,
        n: i64,
        body: impl FnOnce(&mut Gen, &str) -> Result<(), BridgeError>,
    ) -> Result<(), BridgeError> {
        self.loop_over(n, true, body)
    }

    fn loop_over(
        &mut self,
        n: i64,
        parallel: bool,
        body: impl FnOnce(&mut Gen, &str) -> Result<(), BridgeError>,
    ) -> Result<(), BridgeError> {
        let (zero, end, one) = (self.index(0), self.index(n), self.index(1));
        let i = self.fresh();
        self.emit(if parallel {
            format!("scf.parallel ({i}) = ({zero}) to ({end}) step ({one}) {{")
        } else {
            format!("scf.for {i} = {zero} to {end} step {one} {{")
        });
        self.enter(n);
        body(self, &i)?;
        self.leave(None);
        Ok(())
    }

    /// New buffers for a value of type `ty`: one memref per scalar leaf of the type
    /// (an array of pairs is stored as a pair of arrays).
    pub(super) fn alloc(&mut self, ty: &Type, what: &Term) -> Result<Storage, BridgeError> {
        self.alloc_within(ty, Vec::new(), what)
    }

    pub(super) fn alloc_within(
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
    pub(super) fn store(
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
                let at = self.vector_position(prefix);
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
    pub(super) fn view(&mut self, storage: &Storage, ty: &Type, prefix: Vec<String>) -> Val {
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
                let at = self.vector_position(&prefix);
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
    pub(super) fn materialize(
        &mut self,
        v: &Val,
        ty: &Type,
        what: &Term,
    ) -> Result<Val, BridgeError> {
        match v {
            Val::Array(_) => {
                let storage = self.alloc(ty, what)?;
                self.store(v, &storage, &[], what)?;
                Ok(self.view(&storage, ty, Vec::new()))
            }
            _ => Ok(v.clone()),
        }
    }

    pub(super) fn expr(&mut self, t: &Term, env: &Env) -> Result<Val, BridgeError> {
        match t.expr() {
            Expr::Var(x) => lookup(env, x.id)
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

    pub(super) fn literal(&mut self, l: Literal) -> Val {
        let (text, s) = literal_text(l);
        let x = self.op(format!("arith.constant {text} : {}", mlir_scalar(s)));
        Val::Scalar(x, s)
    }

    pub(super) fn apply(&mut self, f: Val, a: Val, at: &Term) -> Result<Val, BridgeError> {
        match f {
            Val::Fun(f) => f(self, a),
            _ => Err(BridgeError::unsupported(
                at,
                "applying a value that is not a function",
            )),
        }
    }

    /// A primitive with its nat arguments, as a curried function of its values.
    pub(super) fn primitive(&mut self, t: &Term) -> Result<Val, BridgeError> {
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
pub(super) fn curried(p: Prim, nats: Rc<Vec<i64>>, ty: Type, args: Vec<Val>, at: Term) -> Val {
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
