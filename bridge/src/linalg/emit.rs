//! Kernels as MLIR operations ([`crate::ir`]): the payload (`linalg.matmul` where
//! the kernel is one, `linalg.generic` otherwise, on memrefs and views of them). The
//! Transform script that applies the program's schedule to them is [`super::script`].

use crate::boundary::TrapSite;
use crate::ir::{self, Attr, Block, Op, Type, Value};
use crate::loop_program::ScalarExpr;
use crate::loop_program::{Buf, DimExpr, Kernel, Operand, Reduction};
use crate::scalar_ops::{binary_op, literal_attr};
use elevate_rise::prim::Prim;
use elevate_rise::types::Scalar;
use std::collections::HashMap;

/// The named operation a kernel is, if any: `linalg.matmul` with its dimensions
/// `(m, n, k)`.
pub(crate) fn matmul_dims(k: &Kernel) -> Option<[usize; 3]> {
    let simple =
        |e: &DimExpr| (e.c == 0 && e.terms.len() == 1 && e.terms[0].1 == 1).then(|| e.terms[0].0);
    let (Some(Reduction::Combine(Prim::Add, _)), 3, 2) =
        (&k.reduction, k.dims.len(), k.inputs.len())
    else {
        return None;
    };
    if k.inputs
        .iter()
        .chain([k.out()])
        .any(|o| o.expanded() || o.map.len() != 2)
    {
        return None;
    }
    let [ScalarExpr::Bin(Prim::Mul, a, b)] = k.body.as_slice() else {
        return None;
    };
    let (ScalarExpr::Load(0, _, s), ScalarExpr::Load(1, _, s2)) = (&**a, &**b) else {
        return None;
    };
    if s != s2 || !s.is_float() {
        return None;
    }
    let (i, j) = (simple(&k.out().map[0])?, simple(&k.out().map[1])?);
    let (a0, a1) = (simple(&k.inputs[0].map[0])?, simple(&k.inputs[0].map[1])?);
    let (b0, b1) = (simple(&k.inputs[1].map[0])?, simple(&k.inputs[1].map[1])?);
    (a0 == i && b1 == j && a1 == b0 && k.dims[a1].reduction && i != j).then_some([i, j, a1])
}

fn affine_map(rank: usize, map: &[DimExpr]) -> Attr {
    Attr::AffineMap {
        dims: rank,
        results: map.to_vec(),
    }
}

/// The payload function's operations for the kernels: the allocations of the
/// program's own buffers, each kernel's operations (in order), the deallocations; and
/// the flop count.
pub(crate) struct PayloadOps {
    pub(crate) allocs: Vec<Op>,
    pub(crate) kernels: Vec<Vec<Op>>,
    pub(crate) deallocs: Vec<Op>,
    pub(crate) flops: u64,
    /// The operations that may trap, numbered in order.
    pub(crate) traps: Vec<TrapSite>,
}

impl PayloadOps {
    /// All the operations, in order.
    pub(crate) fn ops(self) -> Vec<Op> {
        let mut ops = self.allocs;
        ops.extend(self.kernels.into_iter().flatten());
        ops.extend(self.deallocs);
        ops
    }
}

/// An operand's buffer as the kernel reads it: reshaped where a buffer dimension is
/// split into several, a window of it, or a strided view; the operations that make
/// the view are added to `ops`.
fn view(o: &Operand, buf: &Buf, ops: &mut Vec<Op>, name: &mut dyn FnMut(&str) -> String) -> Value {
    let (mut v, mut ty) = (buf.name.clone(), Type::memref(&buf.dims, buf.scalar));
    let shape = o.shape();
    if let Some(st) = &o.strided {
        // The buffer's own offset (a parameter's view may start anywhere), plus the
        // first element read.
        let meta = name("meta");
        let rank = buf.dims.len();
        let mut metadata = Op::new("memref.extract_strided_metadata")
            .operand(&v, &ty)
            .result(format!("{meta}_base"), &Type::memref(&[], buf.scalar));
        for k in 0..1 + 2 * rank {
            metadata = metadata.result(format!("{meta}_{k}"), &Type::Index);
        }
        ops.push(metadata);
        let first = name("first");
        ops.push(ir::index_constant(st.offset).named(&first));
        let start = name("start");
        let off = format!("{meta}_0");
        ops.push(ir::same("arith.addi", &[&off, &first], &Type::Index).named(&start));
        let sizes: Vec<i64> = st.dims.iter().map(|(n, _)| *n).collect();
        let strides: Vec<i64> = st.dims.iter().map(|(_, s)| *s).collect();
        // (An element at a constant position is a view of rank 0.)
        let to = Type::strided(&sizes, buf.scalar, &strides, None);
        let x = name("slide");
        ops.push(
            Op::new("memref.reinterpret_cast")
                .operand(&v, &ty)
                .operand(&start, &Type::Index)
                .prop("operandSegmentSizes", Attr::segments(&[1, 1, 0, 0]))
                // (A dynamic offset.)
                .prop("static_offsets", Attr::I64s(vec![i64::MIN]))
                .prop("static_sizes", Attr::I64s(sizes))
                .prop("static_strides", Attr::I64s(strides))
                .result(&x, &to),
        );
        return Value::new(x, to);
    }
    if o.expanded() {
        let mut groups = Vec::new();
        let mut next = 0;
        for e in &o.expand {
            groups.push(Attr::Ints(
                (next..next + e.len()).map(|i| i as i64).collect(),
            ));
            next += e.len();
        }
        let to = Type::memref(&shape, buf.scalar);
        let x = name("view");
        ops.push(
            Op::new("memref.expand_shape")
                .operand(&v, &ty)
                .prop("reassociation", Attr::Array(groups))
                .prop("static_output_shape", Attr::I64s(shape.clone()))
                .result(&x, &to),
        );
        (v, ty) = (x, to);
    }
    if o.windowed() {
        // Row-major strides of the shape, and the window's offset in elements.
        let mut strides = vec![1i64; shape.len()];
        for i in (0..shape.len().saturating_sub(1)).rev() {
            strides[i] = strides[i + 1] * shape[i + 1];
        }
        let offsets: Vec<i64> = o.window.iter().map(|(off, _)| *off).collect();
        let sizes: Vec<i64> = o.window.iter().map(|(_, size)| *size).collect();
        let start: i64 = offsets.iter().zip(&strides).map(|(o, s)| o * s).sum();
        let to = Type::strided(&sizes, buf.scalar, &strides, Some(start));
        let x = name("window");
        ops.push(
            Op::new("memref.subview")
                .operand(&v, &ty)
                .prop("operandSegmentSizes", Attr::segments(&[1, 0, 0, 0]))
                .prop("static_offsets", Attr::I64s(offsets))
                .prop("static_sizes", Attr::I64s(sizes.clone()))
                .prop("static_strides", Attr::I64s(vec![1; sizes.len()]))
                .result(&x, &to),
        );
        (v, ty) = (x, to);
    }
    Value::new(v, ty)
}

/// `linalg.yield` of `values` of scalar types `types`.
fn yielding(values: &[String], types: &[Type]) -> Op {
    let operands = values
        .iter()
        .zip(types)
        .map(|(v, t)| Value::new(v, t.clone()))
        .collect();
    ir::yield_values("linalg.yield", operands)
}

/// `linalg.fill` of `out` with `value` (a scalar of type `scalar`), numbered `n` for
/// the script.
fn fill(n: usize, value: &str, scalar: &Type, out: &Value) -> Op {
    let body = Block::new(
        vec![
            Value::new("%fill_value", scalar.clone()),
            Value::new("%fill_old", scalar.clone()),
        ],
        vec![yielding(
            &["%fill_value".into()],
            std::slice::from_ref(scalar),
        )],
    );
    Op::new("linalg.fill")
        .operand(value, scalar)
        .operand_value(out)
        .prop("operandSegmentSizes", Attr::segments(&[1, 1]))
        .attr("elevate.fill", Attr::i64(n as i64))
        .region(body)
}

/// `linalg.matmul` of `ins` into `out` (of floats `scalar`), numbered `n`.
fn matmul(n: usize, ins: &[Value], out: &Value, scalar: &Type) -> Op {
    let args = ["%mm_a", "%mm_b", "%mm_c"].map(|a| Value::new(a, scalar.clone()));
    let body = Block::new(
        args.to_vec(),
        vec![
            ir::same("arith.mulf", &["%mm_a", "%mm_b"], scalar).named("%mm_ab"),
            ir::same("arith.addf", &["%mm_c", "%mm_ab"], scalar).named("%mm_sum"),
            yielding(&["%mm_sum".into()], std::slice::from_ref(scalar)),
        ],
    );
    let d = |t: usize| DimExpr {
        terms: vec![(t, 1)],
        c: 0,
    };
    let maps = [[0, 2], [2, 1], [0, 1]].map(|[i, j]| Attr::AffineMap {
        dims: 3,
        results: vec![d(i), d(j)],
    });
    Op::new("linalg.matmul")
        .operand_values(ins.iter().chain([out]))
        .prop("indexing_maps", Attr::Array(maps.to_vec()))
        .prop("operandSegmentSizes", Attr::segments(&[ins.len(), 1]))
        .attr("elevate.kernel", Attr::i64(n as i64))
        .region(body)
}

pub(crate) fn payload_ops(kernels: &[Kernel], bufs: &[Buf], allocated: &[usize]) -> PayloadOps {
    let mut traps = Vec::new();
    let mut kernel_ops = Vec::new();
    let mut flops = 0u64;
    let mut fresh = 0usize;
    let mut name = |prefix: &str| {
        fresh += 1;
        format!("%{prefix}{fresh}")
    };
    // The program's own buffers.
    let own: Vec<Value> = allocated
        .iter()
        .map(|b| {
            Value::new(
                &bufs[*b].name,
                Type::memref(&bufs[*b].dims, bufs[*b].scalar),
            )
        })
        .collect();
    let allocs = own.iter().map(|b| ir::alloc(&b.name, &b.ty)).collect();
    for (n, k) in kernels.iter().enumerate() {
        let mut ops = Vec::new();
        let ins: Vec<Value> = k
            .inputs
            .iter()
            .map(|o| view(o, &bufs[o.buf], &mut ops, &mut name))
            .collect();
        let outs: Vec<Value> = k
            .outs
            .iter()
            .map(|o| view(o, &bufs[o.buf], &mut ops, &mut name))
            .collect();
        let inits: &[_] = match &k.reduction {
            Some(Reduction::Combine(_, init)) => &[*init],
            Some(Reduction::Fold(inits)) => inits,
            None => &[],
        };
        for (init, out) in inits.iter().zip(&outs) {
            let c = name("init");
            let value = ir::constant(literal_attr(*init));
            let scalar = value.results[0].ty.clone();
            ops.push(value.named(&c));
            ops.push(fill(n, &c, &scalar, out));
        }
        let iterations = k
            .dims
            .iter()
            .fold(1u64, |n, d| n.saturating_mul(d.extent.max(0) as u64));
        flops = flops.saturating_add(iterations.saturating_mul(float_ops(k) as u64));
        if matmul_dims(k).is_some() {
            ops.push(matmul(
                n,
                &ins,
                &outs[0],
                &Type::scalar(bufs[k.out().buf].scalar),
            ));
            kernel_ops.push(ops);
            continue;
        }
        let rank = k.dims.len();
        let maps: Vec<Attr> = k
            .inputs
            .iter()
            .chain(&k.outs)
            .map(|o| affine_map(rank, &o.map))
            .collect();
        let iterators: Vec<Attr> = k
            .dims
            .iter()
            .map(|d| Attr::Iterator {
                reduction: d.reduction,
            })
            .collect();
        let out_scalars: Vec<Type> = k
            .outs
            .iter()
            .map(|o| Type::scalar(bufs[o.buf].scalar))
            .collect();
        let args: Vec<Value> = k
            .inputs
            .iter()
            .enumerate()
            .map(|(i, o)| Value::new(format!("%in{i}"), Type::scalar(bufs[o.buf].scalar)))
            .chain(
                out_scalars
                    .iter()
                    .enumerate()
                    .map(|(j, t)| Value::new(format!("%acc{j}"), t.clone())),
            )
            .collect();
        let mut body = Body {
            ops: Vec::new(),
            next: 0,
            kernel: k,
            bufs,
            traps: &mut traps,
            values: HashMap::new(),
        };
        let values: Vec<String> = k.body.iter().map(|b| body.expr(b)).collect();
        let results = match &k.reduction {
            Some(Reduction::Combine(op, _)) => {
                vec![body.binary(*op, "%acc0", &values[0], bufs[k.out().buf].scalar)]
            }
            _ => values,
        };
        let mut body_ops = body.ops;
        body_ops.push(yielding(&results, &out_scalars));
        ops.push(
            Op::new("linalg.generic")
                .operand_values(ins.iter().chain(&outs))
                .prop("indexing_maps", Attr::Array(maps))
                .prop("iterator_types", Attr::Array(iterators))
                .prop(
                    "operandSegmentSizes",
                    Attr::segments(&[ins.len(), outs.len()]),
                )
                .attr("elevate.kernel", Attr::i64(n as i64))
                .region(Block::new(args, body_ops)),
        );
        kernel_ops.push(ops);
    }
    let deallocs = own.iter().map(|b| ir::dealloc(&b.name, &b.ty)).collect();
    PayloadOps {
        allocs,
        kernels: kernel_ops,
        deallocs,
        flops,
        traps,
    }
}

/// Floating-point operations per iteration of a kernel.
fn float_ops(k: &Kernel) -> usize {
    // Each distinct operation once, as the body computes it; not inside gathers'
    // indices or checked divisions.
    let count = |e: &ScalarExpr| {
        e.nodes_where(ScalarExpr::is_arithmetic)
            .into_iter()
            .map(|e| match e {
                ScalarExpr::Bin(_, a, _) | ScalarExpr::Un(_, a) => {
                    usize::from(a.scalar().is_float())
                }
                _ => 0,
            })
            .sum::<usize>()
    };
    let combine = match k.reduction {
        Some(Reduction::Combine(..)) => usize::from(k.body[0].scalar().is_float()),
        _ => 0,
    };
    k.body.iter().map(count).sum::<usize>() + combine
}

/// A `linalg.generic` region's operations.
pub(super) struct Body<'a> {
    ops: Vec<Op>,
    next: usize,
    pub(super) kernel: &'a Kernel,
    pub(super) bufs: &'a [Buf],
    /// The operations that may trap, found so far (each numbered by its place).
    pub(super) traps: &'a mut Vec<TrapSite>,
    /// The value of each node of the kernel's body computed so far: a node the body
    /// reads several times (the body is a DAG) is computed once. (The kernel, borrowed
    /// for the body's life, keeps each node where it is.)
    values: HashMap<*const ScalarExpr, String>,
}

impl Body<'_> {
    /// An operation without a result.
    pub(super) fn push(&mut self, op: Op) {
        self.ops.push(op);
    }

    /// A new value's name.
    pub(super) fn fresh(&mut self) -> String {
        self.next += 1;
        format!("%b{}", self.next)
    }

    /// Adds `op`, its result named afresh; the name.
    pub(super) fn op(&mut self, op: Op) -> String {
        let x = self.fresh();
        self.ops.push(op.named(&x));
        x
    }

    /// The value of `e`, a node of the kernel's body, computed where it is first read.
    pub(super) fn expr(&mut self, e: &ScalarExpr) -> String {
        let key = e as *const ScalarExpr;
        if let Some(x) = self.values.get(&key) {
            return x.clone();
        }
        // (A body of 100,000 operations in a row is computed on a stack that grows.)
        let x = elevate_core::stack::guard(|| self.compute(e));
        self.values.insert(key, x.clone());
        x
    }

    fn compute(&mut self, e: &ScalarExpr) -> String {
        match e {
            ScalarExpr::Lit(l) => self.op(ir::constant(literal_attr(*l))),
            ScalarExpr::Param(name, _) => name.clone(),
            ScalarExpr::Load(k, _, _) => format!("%in{k}"),
            ScalarExpr::Gather(g) => self.gather(g),
            ScalarExpr::Position(a) => self.position(a),
            ScalarExpr::Checked { op, x, y, span } => {
                let s = x.scalar();
                let (x, y) = (self.expr(x), self.expr(y));
                self.checked_division(*op, &x, &y, s, *span)
            }
            ScalarExpr::Bin(p, a, b) => {
                let s = a.scalar();
                let (x, y) = (self.expr(a), self.expr(b));
                self.binary(*p, &x, &y, s)
            }
            ScalarExpr::Un(p, a) => {
                let s = a.scalar();
                let x = self.expr(a);
                let t = &Type::scalar(s);
                let unary = |name: &str| ir::same(name, &[&x], t);
                match (p, s.is_float()) {
                    (Prim::Neg, true) => self.op(unary("arith.negf")),
                    (Prim::Neg, false) => {
                        let zero = self.op(ir::int_constant(0, t));
                        self.op(ir::same("arith.subi", &[&zero, &x], t))
                    }
                    (Prim::Exp, _) if s == Scalar::F32 => {
                        crate::exp::exp_f32(&mut |op| self.op(op), &x, t)
                    }
                    (Prim::Exp, _) => self.op(unary("math.exp")),
                    (Prim::Sqrt, _) => self.op(unary("math.sqrt")),
                    (Prim::Abs, true) => self.op(unary("math.absf")),
                    (Prim::Not, _) => {
                        let one = self.op(ir::constant(Attr::Bool(true)));
                        self.op(ir::same("arith.xori", &[&x, &one], t))
                    }
                    _ => self.op(unary("math.absi")),
                }
            }
            ScalarExpr::Cast(a, to) => {
                let x = self.expr(a);
                crate::scalar_ops::cast(&mut |op| self.op(op), &x, a.scalar(), *to)
            }
            ScalarExpr::Pick(c, a, b) => {
                let t = &Type::scalar(a.scalar());
                let (c, x, y) = (self.expr(c), self.expr(a), self.expr(b));
                self.op(ir::select(&c, &x, &y, t))
            }
            // A fold's accumulator (numbered as its output).
            ScalarExpr::Acc(j, _, _) => format!("%acc{j}"),
            ScalarExpr::Red { .. } | ScalarExpr::Fold { .. } | ScalarExpr::Select { .. } => {
                unreachable!("kernel bodies have no reductions or guards")
            }
        }
    }

    fn binary(&mut self, p: Prim, x: &str, y: &str, s: Scalar) -> String {
        // The symbolic evaluation only builds binary nodes of binary primitives.
        let op = binary_op(p, x, y, s.is_float(), &Type::scalar(s))
            .unwrap_or_else(|| unreachable!("`{}` is not binary", p.name()));
        self.op(op)
    }
}
