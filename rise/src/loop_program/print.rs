//! A loop program as text (`elevate compile --emit loops`): its buffers, then each
//! kernel with its iteration dimensions, what it writes and reads at which indices,
//! its body, and its schedule, outermost loop first.
//!
//! ```text
//! kernel 0: %out[d0, d1] = 0 + Σ(d2) in0 * in1
//!   dims      d0: 64, d1: 64, d2: 64 reduction
//!   reads     in0 = %a[d0, d2], in1 = %b[d2, d1]
//!   schedule  par d0 by 32 (2 trips), seq d1 by 1 (64 trips), reduce d2 by 1 (64 trips), ...
//! ```
//!
//! The names are the payload's buffers; `dN` are a kernel's dimensions, `vN` the
//! variables of indices the body computes, `inN` its inputs, `accN` a fold's
//! accumulators and `tN` a value the body reads more than once (written once, on the
//! kernel's `let` line).

use super::eval::{GpuLevel, LoopKind};
use super::index::{Aff, Atom};
use super::ir::{Buf, DimExpr, Kernel, Operand, Reduction, ScheduledLoop};
use super::scalar::ScalarExpr;
use super::LoopProgram;
use crate::prim::Prim;
use crate::term::Literal;
use std::collections::{HashMap, HashSet};
use std::fmt::{self, Display, Formatter, Write};

impl Display for LoopProgram {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        writeln!(
            f,
            "// loop program: {} buffer{}, {} kernel{}",
            self.buffers.len(),
            plural(self.buffers.len()),
            self.kernels.len(),
            plural(self.kernels.len())
        )?;
        for (b, buf) in self.buffers.iter().enumerate() {
            let own = if self.own.contains(&b) { " (own)" } else { "" };
            writeln!(f, "buffer {}: {}{own}", buf.name, shape(buf))?;
        }
        for (k, kernel) in self.kernels.iter().enumerate() {
            write_kernel(f, k, kernel, &self.buffers)?;
        }
        Ok(())
    }
}

/// `8x32xf32`, `f32` for a scalar.
fn shape(buf: &Buf) -> String {
    let mut s: String = buf.dims.iter().map(|d| format!("{d}x")).collect();
    s.push_str(buf.scalar.name());
    s
}

fn write_kernel(f: &mut Formatter<'_>, k: usize, kernel: &Kernel, bufs: &[Buf]) -> fmt::Result {
    let outs: Vec<String> = kernel.outs.iter().map(|o| operand(o, bufs)).collect();
    let mut text = BodyText::new(&kernel.body, bufs);
    let bodies: Vec<String> = kernel.body.iter().map(|e| text.scalar(e)).collect();
    let reduced: Vec<String> = (0..kernel.dims.len())
        .filter(|d| kernel.dims[*d].reduction)
        .map(|d| format!("d{d}"))
        .collect();
    write!(f, "kernel {k}: ")?;
    match &kernel.reduction {
        None => write!(f, "{} = {}", outs.join(", "), bodies.join(", "))?,
        Some(Reduction::Combine(op, init)) => write!(
            f,
            "{} = {} {} Σ({}) {}",
            outs.join(", "),
            init,
            operator(*op),
            reduced.join(", "),
            bodies.join(", ")
        )?,
        Some(Reduction::Fold(inits)) => {
            let starts: Vec<String> = inits.iter().map(Literal::to_string).collect();
            write!(
                f,
                "({}) = fold over ({}) from ({}): ({})",
                outs.join(", "),
                reduced.join(", "),
                starts.join(", "),
                bodies.join(", ")
            )?
        }
    }
    if kernel.free {
        write!(f, "  // the bridge's copy or fill")?;
    }
    writeln!(f)?;
    let dims: Vec<String> = kernel
        .dims
        .iter()
        .enumerate()
        .map(|(d, dim)| {
            let reduction = if dim.reduction { " reduction" } else { "" };
            format!("d{d}: {}{reduction}", dim.extent)
        })
        .collect();
    writeln!(f, "  dims      {}", dims.join(", "))?;
    if !text.lets.is_empty() {
        writeln!(f, "  let       {}", text.lets.join(", "))?;
    }
    if !kernel.inputs.is_empty() {
        let reads: Vec<String> = kernel
            .inputs
            .iter()
            .enumerate()
            .map(|(i, o)| {
                let shared = if kernel.shared.contains(&i) {
                    " (shared)"
                } else {
                    ""
                };
                format!("in{i} = {}{shared}", operand(o, bufs))
            })
            .collect();
        writeln!(f, "  reads     {}", reads.join(", "))?;
    }
    if !kernel.counters.is_empty() {
        let counters: Vec<String> = kernel
            .counters
            .iter()
            .map(|(v, (d, step, trips))| format!("v{v} = (d{d} / {step}) mod {trips}"))
            .collect();
        writeln!(f, "  counters  {}", counters.join(", "))?;
    }
    if !kernel.schedule.is_empty() {
        let loops: Vec<String> = kernel.schedule.iter().map(scheduled).collect();
        writeln!(f, "  schedule  {}", loops.join(", "))?;
    }
    Ok(())
}

/// `par d0 by 32 (2 trips)`.
fn scheduled(l: &ScheduledLoop) -> String {
    let kind = match l.kind {
        LoopKind::Par => "par".to_string(),
        LoopKind::Seq => "seq".to_string(),
        LoopKind::Unroll => "unroll".to_string(),
        LoopKind::Reduce => "reduce".to_string(),
        LoopKind::ReduceUnroll => "reduce unrolled".to_string(),
        LoopKind::Lane => "lanes".to_string(),
        LoopKind::Gpu(level, d) => {
            let level = match level {
                GpuLevel::Global => "global",
                GpuLevel::Block => "workgroup",
                GpuLevel::Thread => "local",
            };
            format!("{level}({d})")
        }
    };
    let block = if l.array_acc { ", into a block" } else { "" };
    format!("{kind} d{} by {} ({} trips{block})", l.dim, l.step, l.trips)
}

/// `%a[d0, 2*d1 + 1]`, with its expansion, window or strided view where it has one.
fn operand(o: &Operand, bufs: &[Buf]) -> String {
    let name = bufs.get(o.buf).map_or("?", |b| b.name.as_str());
    let mut s = name.to_string();
    if let Some(view) = &o.strided {
        let dims: Vec<String> = view
            .dims
            .iter()
            .map(|(n, st)| format!("{n}:{st}"))
            .collect();
        let _ = write!(s, " strided(+{}; {})", view.offset, dims.join(", "));
    } else {
        if o.expanded() {
            let shape: Vec<String> = o.shape().iter().map(i64::to_string).collect();
            let _ = write!(s, " as {}", shape.join("x"));
        }
        if o.windowed() {
            let window: Vec<String> = o
                .window
                .iter()
                .map(|(offset, size)| format!("{offset}+{size}"))
                .collect();
            let _ = write!(s, " window [{}]", window.join(", "));
        }
    }
    let map: Vec<String> = o.map.iter().map(DimExpr::to_string).collect();
    let _ = write!(s, "[{}]", map.join(", "));
    s
}

/// `d0 * 2 + d3 + 1`: an affine expression as MLIR writes one (the loop program's
/// text and the `linalg` emitter's indexing maps say it the same way).
impl Display for DimExpr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = self
            .terms
            .iter()
            .map(|(d, k)| match k {
                1 => format!("d{d}"),
                k => format!("d{d} * {k}"),
            })
            .collect();
        if self.c != 0 || parts.is_empty() {
            parts.push(self.c.to_string());
        }
        f.write_str(&parts.join(" + "))
    }
}

/// `Σ x * k + c` with unit coefficients left out, as [`DimExpr`] prints.
fn linear(terms: impl Iterator<Item = (String, i64)>, c: i64) -> String {
    let mut parts: Vec<String> = terms
        .map(|(x, k)| match k {
            1 => x,
            _ => format!("{x} * {k}"),
        })
        .collect();
    if c != 0 || parts.is_empty() {
        parts.push(c.to_string());
    }
    parts.join(" + ")
}

/// An index of the body's variables.
fn index(a: &Aff) -> String {
    let terms = a.terms.iter().map(|(atom, k)| (self::atom(atom), *k));
    linear(terms, a.c)
}

fn atom(a: &Atom) -> String {
    match a {
        Atom::Var(v) => format!("v{v}"),
        Atom::Div(a, n) => format!("({}) / {n}", index(a)),
        Atom::Mod(a, n) => format!("({}) mod {n}", index(a)),
    }
}

fn indices(idx: &[Aff]) -> String {
    idx.iter().map(index).collect::<Vec<_>>().join(", ")
}

/// A kernel's body as text: an expression used more than once is printed once, as
/// `tN` (the body is a DAG: a value squared 40 times is 40 lines, not 2^40 leaves).
struct BodyText<'a> {
    bufs: &'a [Buf],
    /// How many times each node is read.
    uses: HashMap<*const ScalarExpr, usize>,
    /// The name of each shared node printed so far.
    names: HashMap<*const ScalarExpr, String>,
    /// `tN = ...`, each after those it reads.
    lets: Vec<String>,
}

impl<'a> BodyText<'a> {
    fn new(bodies: &[ScalarExpr], bufs: &'a [Buf]) -> Self {
        let mut uses = HashMap::new();
        let mut seen = HashSet::new();
        for body in bodies {
            for e in body.nodes() {
                if seen.insert(e as *const ScalarExpr) {
                    for c in e.children() {
                        *uses.entry(&**c as *const ScalarExpr).or_insert(0) += 1;
                    }
                }
            }
        }
        BodyText {
            bufs,
            uses,
            names: HashMap::new(),
            lets: Vec::new(),
        }
    }

    /// `e`, or its name where it is read more than once.
    fn scalar(&mut self, e: &ScalarExpr) -> String {
        let key = e as *const ScalarExpr;
        if let Some(name) = self.names.get(&key) {
            return name.clone();
        }
        let text = elevate_core::stack::guard(|| self.expression(e));
        if self.uses.get(&key).copied().unwrap_or(0) < 2 || e.children().is_empty() {
            return text;
        }
        let name = format!("t{}", self.lets.len());
        self.lets.push(format!("{name} = {text}"));
        self.names.insert(key, name.clone());
        name
    }

    fn expression(&mut self, e: &ScalarExpr) -> String {
        match e {
            ScalarExpr::Lit(l) => l.to_string(),
            ScalarExpr::Param(name, _) => name.clone(),
            ScalarExpr::Load(k, idx, _) if idx.is_empty() => format!("in{k}"),
            ScalarExpr::Load(k, idx, _) => format!("in{k}[{}]", indices(idx)),
            ScalarExpr::Acc(j, idx, _) if idx.is_empty() => format!("acc{j}"),
            ScalarExpr::Acc(j, idx, _) => format!("acc{j}[{}]", indices(idx)),
            ScalarExpr::Bin(p, a, b) => {
                let (a, b) = (self.scalar(a), self.scalar(b));
                match p {
                    Prim::Max | Prim::Min => format!("{}({a}, {b})", p.name()),
                    _ => format!("({a} {} {b})", operator(*p)),
                }
            }
            ScalarExpr::Un(p, a) => format!("{}({})", p.name(), self.scalar(a)),
            ScalarExpr::Cast(a, s) => format!("cast({}) : {}", self.scalar(a), s.name()),
            ScalarExpr::Select { conds, then, other } => {
                let conds: Vec<String> = conds
                    .iter()
                    .map(|(a, lo, hi)| format!("{lo} <= {} < {hi}", index(a)))
                    .collect();
                let (then, other) = (self.scalar(then), self.scalar(other));
                format!("({} ? {then} : {other})", conds.join(" && "))
            }
            ScalarExpr::Pick(c, a, b) => {
                let (c, a, b) = (self.scalar(c), self.scalar(a), self.scalar(b));
                format!("select({c}, {a}, {b})")
            }
            ScalarExpr::Checked { op, x, y, .. } => {
                let (x, y) = (self.scalar(x), self.scalar(y));
                format!("checked {}({x}, {y})", op.name())
            }
            ScalarExpr::Gather(g) => {
                let data: Vec<String> = g
                    .data
                    .iter()
                    .map(|d| format!("v{} = {} in 0..{}", d.var, self.scalar(&d.value), d.bound))
                    .collect();
                let name = self.bufs.get(g.buf).map_or("?", |b| b.name.as_str());
                format!("{name}[{}] where {}", indices(&g.idx), data.join(", "))
            }
            ScalarExpr::Position(a) => format!("index({})", index(a)),
            ScalarExpr::Red {
                op,
                init,
                vars,
                body,
            } => {
                let vars: Vec<String> = vars.iter().map(|v| format!("v{v}")).collect();
                let (init, body) = (self.scalar(init), self.scalar(body));
                format!("({init} {} Σ({}) {body})", operator(*op), vars.join(", "))
            }
            ScalarExpr::Fold {
                id,
                inits,
                vars,
                steps,
                component,
            } => {
                let vars: Vec<String> = vars.iter().map(|v| format!("v{v}")).collect();
                let inits: Vec<String> = inits.iter().map(|e| self.scalar(e)).collect();
                let steps: Vec<String> = steps.iter().map(|e| self.scalar(e)).collect();
                format!(
                    "fold{id}.{component} over ({}) from ({}): ({})",
                    vars.join(", "),
                    inits.join(", "),
                    steps.join(", ")
                )
            }
        }
    }
}

/// An operation as an infix operator where it has one, else its name.
fn operator(p: Prim) -> &'static str {
    match p {
        Prim::Add => "+",
        Prim::Sub => "-",
        Prim::Mul => "*",
        Prim::Div => "/",
        Prim::Mod => "%",
        Prim::Lt => "<",
        Prim::Gt => ">",
        Prim::Equal => "==",
        p => p.name(),
    }
}
