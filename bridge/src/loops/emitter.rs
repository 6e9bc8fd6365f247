//! The generator's state and its plainest operations: operations and fresh names, regions
//! (loop bodies) with the buffers they free, loops, the trap record.

use crate::boundary::{Check, TrapSite};
use crate::error::Error;
use crate::ir::{self, Block, Op};
use crate::trap_checks;
use elevate_rise::limits::Limits;
use elevate_rise::prim::Prim;
use elevate_rise::term::Term;
use std::collections::HashMap;

/// The most loops nested in one another: MLIR parses and lowers nested regions
/// recursively, so a deeper nest is an error rather than a stack overflow.
pub const MAX_LOOP_DEPTH: usize = 256;

/// The code generator: the operations of the function body and of the loop bodies
/// open inside it, and fresh names.
pub(crate) struct Gen {
    /// The operations of each open block: the function body's first, the innermost
    /// loop body's last.
    pub(super) blocks: Vec<Vec<Op>>,
    pub(super) next: usize,
    /// The buffers allocated in each open region (function body, loop bodies), freed
    /// when the region ends: nothing allocated inside a region is used outside it.
    pub(super) allocations: Vec<Vec<(String, ir::Type)>>,
    /// How many times the code being emitted runs (the product of the enclosing
    /// loops' trip counts).
    pub(super) trips: Vec<u64>,
    /// Floating-point operations the function performs (each lane counts).
    pub(super) flops: u64,
    /// The limits every buffer is checked against.
    pub(super) limits: Limits,
    /// The operations that may trap, in the order of their codes.
    pub(super) traps: Vec<TrapSite>,
    /// The integer constants emitted, by name (divisions by safe constants need no
    /// guard).
    pub(super) constants: HashMap<String, i64>,
}

impl Gen {
    pub(super) fn new(limits: Limits) -> Gen {
        Gen {
            blocks: vec![Vec::new()],
            next: 0,
            allocations: vec![Vec::new()],
            trips: vec![1],
            flops: 0,
            limits,
            traps: Vec::new(),
            constants: HashMap::new(),
        }
    }

    pub(super) fn fresh(&mut self) -> String {
        self.next += 1;
        format!("%v{}", self.next)
    }

    /// Adds `op`, which has no result (or results already named).
    pub(super) fn push(&mut self, op: Op) {
        if let Some(block) = self.blocks.last_mut() {
            block.push(op);
        }
    }

    /// Adds `op`, its result named afresh; the name.
    pub(super) fn op(&mut self, op: Op) -> String {
        let x = self.fresh();
        self.push(op.named(&x));
        x
    }

    pub(super) fn index(&mut self, k: i64) -> String {
        self.op(ir::index_constant(k))
    }

    /// Opens a region: a loop body that runs `trips` times per run of its parent.
    pub(super) fn enter(&mut self, trips: i64, at: &Term) -> Result<(), Error> {
        if self.trips.len() > MAX_LOOP_DEPTH {
            return Err(Error::unsupported(
                at,
                format!("loops nested more than {MAX_LOOP_DEPTH} deep"),
            ));
        }
        self.blocks.push(Vec::new());
        self.allocations.push(Vec::new());
        let outer = self.trips.last().copied().unwrap_or(1);
        self.trips.push(outer.saturating_mul(trips.max(0) as u64));
        Ok(())
    }

    /// Frees the buffers the region allocated, then closes it with its terminator
    /// `last` (`scf.yield`, `scf.reduce`); its operations.
    pub(super) fn leave(&mut self, last: Op) -> Vec<Op> {
        self.free_region();
        self.push(last);
        self.allocations.pop();
        self.trips.pop();
        self.blocks.pop().unwrap_or_default()
    }

    /// The position of a vector that fills the last dimension of a buffer, at `prefix`:
    /// `prefix..., 0`.
    pub(super) fn vector_position(&mut self, prefix: &[String]) -> Vec<String> {
        let zero = self.index(0);
        prefix.iter().cloned().chain([zero]).collect()
    }

    pub(super) fn free_region(&mut self) {
        let region = self.allocations.last().cloned().unwrap_or_default();
        for (buffer, ty) in region.iter().rev() {
            self.push(ir::dealloc(buffer, ty));
        }
    }

    /// `for i in 0..n { body(i) }` as `scf.for`.
    pub(super) fn for_loop(
        &mut self,
        n: i64,
        at: &Term,
        body: impl FnOnce(&mut Gen, &str) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.loop_over(n, false, at, body)
    }

    /// `for i in 0..n in parallel { body(i) }` as `scf.parallel`.
    pub(super) fn parallel_loop(
        &mut self,
        n: i64,
        at: &Term,
        body: impl FnOnce(&mut Gen, &str) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.loop_over(n, true, at, body)
    }

    fn loop_over(
        &mut self,
        n: i64,
        parallel: bool,
        at: &Term,
        body: impl FnOnce(&mut Gen, &str) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let (zero, end, one) = (self.index(0), self.index(n), self.index(1));
        let i = self.fresh();
        self.enter(n, at)?;
        body(self, &i)?;
        let (name, last) = match parallel {
            true => ("scf.parallel", "scf.reduce"),
            false => ("scf.for", "scf.yield"),
        };
        let ops = self.leave(Op::new(last));
        let mut head = Op::new(name).operands_of(&[zero, end, one], &ir::Type::Index);
        if parallel {
            head = head.prop("operandSegmentSizes", ir::Attr::segments(&[1, 1, 1, 0]));
        }
        self.push(head.region(Block::new(vec![ir::Value::new(i, ir::Type::Index)], ops)));
        Ok(())
    }

    /// The index `x` (an `i64`) stands for, below `bound`: one outside `0..bound` is
    /// recorded as a trap (as the interpreter reports it), and 0 read instead.
    pub(super) fn checked_index(&mut self, x: &str, bound: i64, op: Prim, at: &Term) -> String {
        let site = self.traps.len();
        self.traps.push(TrapSite {
            op,
            check: Check::Index { bound },
            span: at.span(),
        });
        trap_checks::index(self, site, x, bound)
    }
}

impl trap_checks::Ops for Gen {
    fn op(&mut self, op: Op) -> String {
        Gen::op(self, op)
    }

    fn push(&mut self, op: Op) {
        Gen::push(self, op);
    }

    fn fresh(&mut self) -> String {
        Gen::fresh(self)
    }
}
