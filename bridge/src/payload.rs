//! Typed RISE with concrete sizes → an MLIR payload module, as text: `linalg`
//! operations and a Transform script carrying the program's schedule where the program
//! is a sequence of structured loop nests ([`crate::structured`]), explicit loops
//! otherwise ([`crate::loops`]).

use crate::boundary::{signature, Signature};
pub use crate::boundary::{Check, TrapSite, TRAP_ARGUMENT};
use crate::error::Error;
use crate::text::module_text;
use elevate_rise::limits::Limits;
use elevate_rise::term::Term;
use elevate_rise::types::Type;

/// The payload of one entry point: the MLIR module's text and how to call it.
#[derive(Debug, Clone)]
pub struct Payload {
    /// The low-level RISE program it translates.
    pub program: Term,
    /// The MLIR module (`func`, `linalg`, `scf`, `memref`, `arith`, `math`, `vector`).
    pub mlir: String,
    /// The function's name.
    pub name: String,
    /// The parameters, in order: their types.
    pub params: Vec<Type>,
    /// The result's type (written into the memref arguments after the parameters').
    pub result: Type,
    /// The floating-point operations one call performs (arithmetic on floats, each
    /// vector lane counted): for the matmul baseline, `2 n k m`.
    pub flops: u64,
    /// The Transform-dialect script (a module with `@__transform_main`) that applies
    /// the program's schedule to the payload's `linalg` operations, when the payload is
    /// made of them.
    pub transform: Option<String>,
    /// Why the payload is explicit loops instead of `linalg` operations, if it is.
    pub loops_because: Option<String>,
    /// The operations that may trap (integer divisions and remainders by divisors not
    /// known to be safe, numbers made indices). When there are any, the function takes
    /// one more argument, [`TRAP_ARGUMENT`], where it records `2 k + 1` when operation
    /// `k` divided by zero or made an index out of range, and `2 k + 2` when it divided
    /// the smallest integer by -1 (the largest such code when several operations
    /// trap); the divisor is replaced by 1 there and the index by 0, so the code
    /// computes on without reading outside its buffers, and the caller reports the
    /// error.
    pub traps: Vec<TrapSite>,
}

/// Translates a closed, typed function `fun(x1: T1 => ... => body)` whose sizes are all
/// constants into an MLIR function `@name(x1, ..., out)` that writes its result into
/// `out`. Scalar parameters are values; any other data is one memref per scalar leaf of
/// its type ([`crate::boundary`]), the result too (a scalar result is a rank-0 memref).
/// Every buffer, at the boundary and inside, is checked against `limits`.
///
/// Where the program is a sequence of structured loop nests, the payload is `linalg`
/// operations and the schedule the program encodes is a Transform script
/// ([`Payload::transform`]); otherwise it is explicit loops ([`payload_loops`]).
pub fn payload(name: &str, term: &Term, limits: &Limits) -> Result<Payload, Error> {
    let sig = signature(term, limits)?;
    match crate::structured::translate(&sig, limits) {
        Ok(p) => Ok(Payload {
            program: term.clone(),
            mlir: module_text(name, &sig.text, &p.lines, "    "),
            name: name.to_string(),
            params: sig.params.iter().map(|(_, t, _)| t.clone()).collect(),
            result: sig.result,
            flops: p.flops,
            transform: Some(p.script),
            loops_because: None,
            traps: Vec::new(),
        }),
        Err(why) => {
            let mut p = loops(name, term, sig, limits)?;
            p.loops_because = Some(why.0);
            Ok(p)
        }
    }
}

/// The payload as explicit loops (`scf`, `memref`, `arith`, `vector`): the schedule is
/// in the loops themselves, and there is no Transform script.
pub fn payload_loops(name: &str, term: &Term, limits: &Limits) -> Result<Payload, Error> {
    loops(name, term, signature(term, limits)?, limits)
}

fn loops(name: &str, term: &Term, mut sig: Signature, limits: &Limits) -> Result<Payload, Error> {
    let body = crate::loops::translate(&sig, limits)?;
    if !body.traps.is_empty() {
        sig.text.push(format!("{TRAP_ARGUMENT}: memref<i32>"));
    }
    Ok(Payload {
        program: term.clone(),
        mlir: module_text(name, &sig.text, &body.lines, ""),
        name: name.to_string(),
        params: sig.params.iter().map(|(_, t, _)| t.clone()).collect(),
        result: sig.result,
        flops: body.flops,
        transform: None,
        loops_because: None,
        traps: body.traps,
    })
}
