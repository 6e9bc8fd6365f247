//! MLIR's execution engine through its C API, checked: melior's
//! `ExecutionEngine::new` wraps whatever `mlirExecutionEngineCreate` returns, and where
//! LLVM cannot translate or compile the module that is a null engine, which crashes
//! the process at its first lookup. Here a failed creation is `None`.

use melior::ir::Module;
use melior::StringRef;
use mlir_sys::{
    mlirExecutionEngineCreate, mlirExecutionEngineDestroy, mlirExecutionEngineLookupPacked,
    mlirExecutionEngineRegisterSymbol, MlirExecutionEngine, MlirStringRef,
};

/// A module compiled to machine code, with the symbols it defines.
pub(super) struct Engine(MlirExecutionEngine);

// SAFETY: the engine owns its compiled code and is not tied to a thread; calls into
// it are as thread-safe as the code it holds (each call has buffers of its own).
unsafe impl Send for Engine {}
unsafe impl Sync for Engine {}

impl Engine {
    /// `module` (in the LLVM dialect) compiled at `optimization` (0 to 3), with the
    /// shared libraries at `libraries` loaded for its symbols; `None` where MLIR made
    /// no engine (the translation to LLVM IR or the compilation failed, with its
    /// diagnostics in the context's handler).
    pub(super) fn new(module: &Module, optimization: i32, libraries: &[&str]) -> Option<Engine> {
        let paths: Vec<MlirStringRef> = libraries
            .iter()
            .map(|path| StringRef::new(path).to_raw())
            .collect();
        // SAFETY: the module and the paths live for the call; the engine copies what
        // it keeps.
        let raw = unsafe {
            mlirExecutionEngineCreate(
                module.to_raw(),
                optimization,
                paths.len() as i32,
                paths.as_ptr(),
                false,
                false,
            )
        };
        if raw.ptr.is_null() {
            return None;
        }
        // The allocation functions the lowered module calls, resolved at the first
        // lookup (symbols are linked lazily).
        for (name, address) in super::alloc::SYMBOLS {
            // SAFETY: the engine is live; the name is copied; the address is a
            // function that lives as long as the process.
            unsafe {
                mlirExecutionEngineRegisterSymbol(raw, StringRef::new(name).to_raw(), address as _)
            };
        }
        Some(Engine(raw))
    }

    /// The packed wrapper of the function `name` (`_mlir_NAME`: it takes the
    /// addresses of the arguments and results in one array; MLIR's C API calls
    /// `_mlir_ciface_F`'s), looked up once so that
    /// calls skip the lookup; `None` where the module has none.
    pub(super) fn lookup_packed(&self, name: &str) -> Option<PackedFunction> {
        // SAFETY: the engine is live (not null, not destroyed).
        let address =
            unsafe { mlirExecutionEngineLookupPacked(self.0, StringRef::new(name).to_raw()) };
        // SAFETY: a non-null packed wrapper has this signature (MLIR's
        // `ExecutionEngine::lookupPacked`); it lives as long as the engine.
        (!address.is_null()).then(|| unsafe {
            std::mem::transmute::<*mut std::ffi::c_void, PackedFunction>(address)
        })
    }
}

/// A packed wrapper: `void f(void **arguments)`.
pub(super) type PackedFunction = unsafe extern "C" fn(*mut *mut ());

impl Drop for Engine {
    fn drop(&mut self) {
        // SAFETY: made by `mlirExecutionEngineCreate`, destroyed once.
        unsafe { mlirExecutionEngineDestroy(self.0) }
    }
}
