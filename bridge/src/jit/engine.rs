//! MLIR's execution engine through its C API, checked: melior's
//! `ExecutionEngine::new` wraps whatever `mlirExecutionEngineCreate` returns, and where
//! LLVM cannot translate or compile the module that is a null engine, which crashes
//! the process at its first lookup. Here a failed creation is `None`.

use melior::ir::Module;
use melior::StringRef;
use mlir_sys::{
    mlirExecutionEngineCreate, mlirExecutionEngineDestroy, mlirExecutionEngineInvokePacked,
    mlirExecutionEngineLookup, mlirExecutionEngineRegisterSymbol, MlirExecutionEngine,
    MlirStringRef,
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

    /// The address of the symbol `name`, null where the module does not define it.
    pub(super) fn lookup(&self, name: &str) -> *mut () {
        // SAFETY: the engine is live (not null, not destroyed).
        unsafe { mlirExecutionEngineLookup(self.0, StringRef::new(name).to_raw()) as *mut () }
    }

    /// Calls `name` through its packed interface (`_mlir_name`), with `arguments` the
    /// addresses of its arguments and of its results; `false` where it has none.
    ///
    /// # Safety
    ///
    /// Every pointer in `arguments` must point to live storage of the type the
    /// function's C interface expects, in its order.
    pub(super) unsafe fn invoke_packed(&self, name: &str, arguments: &mut [*mut ()]) -> bool {
        // SAFETY: as the caller promises.
        let result = unsafe {
            mlirExecutionEngineInvokePacked(
                self.0,
                StringRef::new(name).to_raw(),
                arguments.as_mut_ptr() as _,
            )
        };
        result.value != 0
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        // SAFETY: made by `mlirExecutionEngineCreate`, destroyed once.
        unsafe { mlirExecutionEngineDestroy(self.0) }
    }
}
