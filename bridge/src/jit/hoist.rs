//! Stack buffers out of sequential loops. A tile promoted with `use_alloca` (a register
//! tile's accumulators) is a `memref.alloca` at every step of the loops around it, and
//! LLVM frees a loop's stack allocations only when the function returns: thousands of
//! steps of 16 KiB overflowed a thread's stack (a search's candidate aborted the
//! process, and large products would on OpenMP's threads). Each is moved before the
//! outermost sequential loop around it within its parallel loop (whose iterations each
//! have a stack scope of their own) or function, and allocated once there: every step
//! copies its tile in before reading it, so one buffer serves them all.

use melior::ir::Module;
use mlir_sys::{
    mlirBlockArgumentGetOwner, mlirBlockGetFirstOperation, mlirBlockGetNextInRegion,
    mlirBlockGetParentOperation, mlirIdentifierStr, mlirOpResultGetOwner, mlirOperationGetName,
    mlirOperationGetNextInBlock, mlirOperationGetNumOperands, mlirOperationGetNumRegions,
    mlirOperationGetOperand, mlirOperationGetParentOperation, mlirOperationGetRegion,
    mlirOperationMoveBefore, mlirRegionGetFirstBlock, mlirValueIsAOpResult, MlirOperation,
};

/// Moves the stack buffers of `module` out of the sequential loops around them.
pub(super) fn hoist_stack_buffers(module: &Module) {
    let mut moves = Vec::new();
    // SAFETY: the module is alive and verified; the walk only reads it, and each move
    // keeps an operation in a block of the same region tree, before an operation that
    // its operands dominate (checked), so the module stays valid.
    unsafe {
        collect(module.as_operation().to_raw(), &mut Vec::new(), &mut moves);
        for (alloca, before) in moves {
            mlirOperationMoveBefore(alloca, before);
        }
    }
}

/// An operation's name.
unsafe fn name(op: MlirOperation) -> String {
    let s = mlirIdentifierStr(mlirOperationGetName(op));
    let bytes = std::slice::from_raw_parts(s.data as *const u8, s.length);
    String::from_utf8_lossy(bytes).into_owned()
}

/// Finds, under `op` (inside `ancestors`, outermost first), each `memref.alloca` and
/// the loop it moves before.
unsafe fn collect(
    op: MlirOperation,
    ancestors: &mut Vec<MlirOperation>,
    moves: &mut Vec<(MlirOperation, MlirOperation)>,
) {
    if name(op) == "memref.alloca" {
        let mut target = None;
        for a in ancestors.iter().rev() {
            match name(*a).as_str() {
                "scf.for" => target = Some(*a),
                "scf.forall" | "scf.parallel" | "memref.alloca_scope" | "func.func" => break,
                _ => {}
            }
        }
        if let Some(target) = target.filter(|t| operands_outside(op, *t)) {
            moves.push((op, target));
        }
    }
    ancestors.push(op);
    for r in 0..mlirOperationGetNumRegions(op) {
        let mut block = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, r));
        while !block.ptr.is_null() {
            let mut child = mlirBlockGetFirstOperation(block);
            while !child.ptr.is_null() {
                collect(child, ancestors, moves);
                child = mlirOperationGetNextInBlock(child);
            }
            block = mlirBlockGetNextInRegion(block);
        }
    }
    ancestors.pop();
}

/// Whether every operand of `op` is defined outside `target` (so that it dominates
/// `target`, which is in a block around `op`).
unsafe fn operands_outside(op: MlirOperation, target: MlirOperation) -> bool {
    (0..mlirOperationGetNumOperands(op)).all(|k| {
        let v = mlirOperationGetOperand(op, k);
        let mut at = if mlirValueIsAOpResult(v) {
            mlirOpResultGetOwner(v)
        } else {
            mlirBlockGetParentOperation(mlirBlockArgumentGetOwner(v))
        };
        while !at.ptr.is_null() {
            if at.ptr == target.ptr {
                return false;
            }
            at = mlirOperationGetParentOperation(at);
        }
        true
    })
}
