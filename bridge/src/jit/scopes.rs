//! Stack buffers freed at each step of their loop. A tile promoted with `use_alloca`
//! (a register tile's accumulators) is a `memref.alloca` at every step of the loop
//! around it, and LLVM frees a loop's stack allocations only when the function
//! returns (or, inside a parallel loop, its iteration ends): thousands of steps of a
//! tile overflowed a thread's stack (a search's candidate aborted the process). The
//! body of each such loop becomes a `memref.alloca_scope`, which frees them at the
//! end of each step (`stacksave`/`stackrestore`). (Allocating the buffer once before
//! the loops instead keeps it live across steps, which cost a strided convolution 9%.)

use melior::ir::Module;
use melior::StringRef;
use mlir_sys::{
    mlirBlockAppendOwnedOperation, mlirBlockCreate, mlirBlockGetFirstOperation,
    mlirBlockGetNextInRegion, mlirBlockGetTerminator, mlirBlockInsertOwnedOperationBefore,
    mlirIdentifierStr, mlirOperationCreate, mlirOperationGetLocation, mlirOperationGetName,
    mlirOperationGetNextInBlock, mlirOperationGetNumOperands, mlirOperationGetNumRegions,
    mlirOperationGetParentOperation, mlirOperationGetRegion, mlirOperationMoveBefore,
    mlirOperationStateAddOwnedRegions, mlirOperationStateGet, mlirRegionAppendOwnedBlock,
    mlirRegionCreate, mlirRegionGetFirstBlock, MlirOperation,
};

/// Scopes the stack buffers of `module` to the steps of the loops they are in.
pub(super) fn scope_stack_buffers(module: &Module) {
    let mut loops: Vec<MlirOperation> = Vec::new();
    // SAFETY: the module is alive and verified. The walk only reads it; then each
    // loop body's operations move, in order, into a scope inserted before the body's
    // terminator (which yields nothing), so the module stays valid.
    unsafe {
        collect(module.as_operation().to_raw(), &mut loops);
        for l in loops {
            scope_body(l);
        }
    }
}

/// An operation's name.
unsafe fn name(op: MlirOperation) -> String {
    let s = mlirIdentifierStr(mlirOperationGetName(op));
    let bytes = std::slice::from_raw_parts(s.data as *const u8, s.length);
    String::from_utf8_lossy(bytes).into_owned()
}

/// The `scf.for` loops directly around a `memref.alloca` under `op`, each once.
unsafe fn collect(op: MlirOperation, loops: &mut Vec<MlirOperation>) {
    if name(op) == "memref.alloca" {
        let parent = mlirOperationGetParentOperation(op);
        if !parent.ptr.is_null()
            && name(parent) == "scf.for"
            && !loops.iter().any(|l| l.ptr == parent.ptr)
        {
            loops.push(parent);
        }
    }
    for r in 0..mlirOperationGetNumRegions(op) {
        let mut block = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, r));
        while !block.ptr.is_null() {
            let mut child = mlirBlockGetFirstOperation(block);
            while !child.ptr.is_null() {
                collect(child, loops);
                child = mlirOperationGetNextInBlock(child);
            }
            block = mlirBlockGetNextInRegion(block);
        }
    }
}

/// The body of loop `l` (but its terminator) inside a `memref.alloca_scope`, where the
/// terminator yields nothing (a loop over memrefs).
unsafe fn scope_body(l: MlirOperation) {
    let body = mlirRegionGetFirstBlock(mlirOperationGetRegion(l, 0));
    let terminator = mlirBlockGetTerminator(body);
    if terminator.ptr.is_null() || mlirOperationGetNumOperands(terminator) != 0 {
        return;
    }
    let location = mlirOperationGetLocation(l);
    let mut state = mlirOperationStateGet(
        StringRef::new("memref.alloca_scope.return").to_raw(),
        location,
    );
    let end = mlirOperationCreate(&mut state);
    let block = mlirBlockCreate(0, std::ptr::null(), std::ptr::null());
    mlirBlockAppendOwnedOperation(block, end);
    let region = mlirRegionCreate();
    mlirRegionAppendOwnedBlock(region, block);
    let mut state = mlirOperationStateGet(StringRef::new("memref.alloca_scope").to_raw(), location);
    mlirOperationStateAddOwnedRegions(&mut state, 1, &region);
    let scope = mlirOperationCreate(&mut state);
    mlirBlockInsertOwnedOperationBefore(body, terminator, scope);
    let mut op = mlirBlockGetFirstOperation(body);
    while op.ptr != scope.ptr {
        let next = mlirOperationGetNextInBlock(op);
        mlirOperationMoveBefore(op, end);
        op = next;
    }
}
