//! The CUDA driver API, loaded when a GPU run first needs it (`libcuda.so.1`, or the
//! library [`CUDA_DRIVER_ENV`] names), so that building and every other command need
//! no CUDA. Only the calls a run makes: the primary context of device 0, modules
//! loaded from PTX, device memory, launches, events to time them.

use crate::error::Error;
use libloading::Library;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::sync::OnceLock;

/// The environment variable naming the CUDA driver library to load instead of
/// `libcuda.so.1`.
pub const CUDA_DRIVER_ENV: &str = "ELEVATE_CUDA_DRIVER";

type CuResult = c_int;
type Handle = *mut c_void;
/// A device address.
pub(super) type DevicePtr = u64;

/// `CU_JIT_ERROR_LOG_BUFFER` and `CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES`.
const JIT_ERROR_LOG: [c_int; 2] = [5, 6];
/// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`.
const MAX_DYNAMIC_SHARED: c_int = 8;
/// Dynamic shared memory a launch may take without opting in.
const DEFAULT_DYNAMIC_SHARED: u32 = 48 * 1024;

/// The driver's entry points (the `_v2` ones where the driver has two).
struct Api {
    init: unsafe extern "C" fn(c_uint) -> CuResult,
    device_get: unsafe extern "C" fn(*mut c_int, c_int) -> CuResult,
    device_get_name: unsafe extern "C" fn(*mut c_char, c_int, c_int) -> CuResult,
    primary_ctx_retain: unsafe extern "C" fn(*mut Handle, c_int) -> CuResult,
    ctx_set_current: unsafe extern "C" fn(Handle) -> CuResult,
    ctx_synchronize: unsafe extern "C" fn() -> CuResult,
    module_load_data_ex: unsafe extern "C" fn(
        *mut Handle,
        *const c_void,
        c_uint,
        *mut c_int,
        *mut *mut c_void,
    ) -> CuResult,
    module_unload: unsafe extern "C" fn(Handle) -> CuResult,
    module_get_function: unsafe extern "C" fn(*mut Handle, Handle, *const c_char) -> CuResult,
    func_set_attribute: unsafe extern "C" fn(Handle, c_int, c_int) -> CuResult,
    mem_alloc: unsafe extern "C" fn(*mut DevicePtr, usize) -> CuResult,
    mem_free: unsafe extern "C" fn(DevicePtr) -> CuResult,
    memcpy_htod: unsafe extern "C" fn(DevicePtr, *const c_void, usize) -> CuResult,
    memcpy_dtoh: unsafe extern "C" fn(*mut c_void, DevicePtr, usize) -> CuResult,
    launch_kernel: unsafe extern "C" fn(
        Handle,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        Handle,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> CuResult,
    event_create: unsafe extern "C" fn(*mut Handle, c_uint) -> CuResult,
    event_record: unsafe extern "C" fn(Handle, Handle) -> CuResult,
    event_synchronize: unsafe extern "C" fn(Handle) -> CuResult,
    event_elapsed_time: unsafe extern "C" fn(*mut f32, Handle, Handle) -> CuResult,
    event_destroy: unsafe extern "C" fn(Handle) -> CuResult,
    get_error_name: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
}

/// The loaded driver with device 0's primary context: one per process.
pub(super) struct Driver {
    api: Api,
    context: Handle,
    /// The device's name, as the driver reports it.
    pub(super) device: String,
    _library: Library,
}

// SAFETY: the driver API is thread-safe, and a context may be made current on any
// thread (each call below makes it current first).
unsafe impl Send for Driver {}
// SAFETY: as above: `Driver` holds no state of its own beyond the context handle.
unsafe impl Sync for Driver {}

/// An error of the GPU's run.
fn gpu(message: impl Into<String>) -> Error {
    Error::Gpu {
        message: message.into(),
    }
}

impl Driver {
    /// The process's driver, loaded and initialized on first use; an error that says
    /// so where there is no driver or no GPU.
    pub(super) fn get() -> Result<&'static Driver, Error> {
        static DRIVER: OnceLock<Result<Driver, String>> = OnceLock::new();
        DRIVER
            .get_or_init(Driver::open)
            .as_ref()
            .map_err(|why| gpu(why.clone()))
    }

    fn open() -> Result<Driver, String> {
        let names: Vec<String> = match std::env::var(CUDA_DRIVER_ENV) {
            Ok(path) if !path.is_empty() => vec![path],
            _ => vec!["libcuda.so.1".into(), "libcuda.so".into()],
        };
        let mut why = String::new();
        let mut library = None;
        for name in &names {
            // SAFETY: loading the CUDA driver runs its initializers, which have no
            // preconditions.
            match unsafe { Library::new(name) } {
                Ok(l) => {
                    library = Some(l);
                    break;
                }
                Err(e) => why = e.to_string(),
            }
        }
        let Some(library) = library else {
            return Err(format!(
                "no GPU to run on: the CUDA driver ({}) could not be loaded ({why}); \
                 the GPU target runs its PTX through the driver of an NVIDIA GPU \
                 (`elevate compile --target gpu --emit ptx` needs none)",
                names.join(" or ")
            ));
        };
        let api = Api::resolve(&library)
            .map_err(|e| format!("the CUDA driver in {} lacks an entry point: {e}", names[0]))?;
        let mut driver = Driver {
            api,
            context: std::ptr::null_mut(),
            device: String::new(),
            _library: library,
        };
        let (mut device, mut context) = (0, std::ptr::null_mut());
        let no_gpu = |e: Error| format!("no GPU to run on: {e}");
        // SAFETY: each call gets pointers to live locals of the types it writes.
        unsafe {
            driver
                .check((driver.api.init)(0), "cuInit")
                .map_err(no_gpu)?;
            driver
                .check((driver.api.device_get)(&mut device, 0), "cuDeviceGet")
                .map_err(no_gpu)?;
            let mut name = [0 as c_char; 256];
            driver
                .check(
                    (driver.api.device_get_name)(name.as_mut_ptr(), 255, device),
                    "cuDeviceGetName",
                )
                .map_err(no_gpu)?;
            driver.device = CStr::from_ptr(name.as_ptr()).to_string_lossy().into();
            driver
                .check(
                    (driver.api.primary_ctx_retain)(&mut context, device),
                    "cuDevicePrimaryCtxRetain",
                )
                .map_err(no_gpu)?;
        }
        driver.context = context;
        Ok(driver)
    }

    /// `Ok` where `result` is `CUDA_SUCCESS`, else an error naming the call and the
    /// driver's name for the result.
    fn check(&self, result: CuResult, call: &str) -> Result<(), Error> {
        if result == 0 {
            return Ok(());
        }
        let mut name: *const c_char = std::ptr::null();
        // SAFETY: the driver writes a pointer to a static string, or leaves it null.
        let name = unsafe {
            (self.api.get_error_name)(result, &mut name);
            match name.is_null() {
                true => format!("error {result}"),
                false => CStr::from_ptr(name).to_string_lossy().into_owned(),
            }
        };
        Err(gpu(format!("the CUDA driver's {call} failed: {name}")))
    }

    /// Makes the context current on this thread.
    fn bind(&self) -> Result<(), Error> {
        // SAFETY: the context was retained and is never released.
        self.check(
            unsafe { (self.api.ctx_set_current)(self.context) },
            "cuCtxSetCurrent",
        )
    }

    /// `bytes` of device memory (at least one).
    pub(super) fn alloc(&self, bytes: usize) -> Result<DeviceBuffer<'_>, Error> {
        self.bind()?;
        let mut ptr = 0;
        // SAFETY: the driver writes the address into a live local.
        let r = unsafe { (self.api.mem_alloc)(&mut ptr, bytes.max(1)) };
        self.check(r, &format!("cuMemAlloc of {bytes} bytes"))?;
        Ok(DeviceBuffer {
            driver: self,
            ptr,
            bytes,
        })
    }

    /// The PTX `text` loaded as a module (compiled for the device by the driver).
    pub(super) fn load_ptx(&self, text: &str) -> Result<LoadedModule<'_>, Error> {
        self.bind()?;
        let image = CString::new(text).map_err(|_| gpu("PTX with a NUL byte"))?;
        let mut log = vec![0u8; 16 * 1024];
        let mut options = JIT_ERROR_LOG;
        let mut values = [log.as_mut_ptr() as *mut c_void, log.len() as *mut c_void];
        let mut module = std::ptr::null_mut();
        // SAFETY: the image is NUL-terminated; the log buffer outlives the call and
        // its size is the one given.
        let r = unsafe {
            (self.api.module_load_data_ex)(
                &mut module,
                image.as_ptr() as *const c_void,
                2,
                options.as_mut_ptr(),
                values.as_mut_ptr(),
            )
        };
        self.check(r, "cuModuleLoadDataEx").map_err(|e| {
            let end = log.iter().position(|b| *b == 0).unwrap_or(log.len());
            gpu(format!(
                "{e}: {}",
                String::from_utf8_lossy(&log[..end]).trim()
            ))
        })?;
        Ok(LoadedModule {
            driver: self,
            module,
        })
    }

    /// Launches `function` on a grid of `grid` blocks of `block` threads with
    /// `shared` bytes of dynamic shared memory; `params` points to each parameter.
    pub(super) fn launch(
        &self,
        function: Handle,
        grid: [u32; 3],
        block: [u32; 3],
        shared: u32,
        params: &mut [*mut c_void],
    ) -> Result<(), Error> {
        if shared > DEFAULT_DYNAMIC_SHARED {
            // SAFETY: a function handle of a loaded module.
            let r = unsafe {
                (self.api.func_set_attribute)(function, MAX_DYNAMIC_SHARED, shared as c_int)
            };
            self.check(r, "cuFuncSetAttribute")?;
        }
        // SAFETY: `params` holds one pointer per kernel parameter, each to storage of
        // at least the parameter's size (checked against the manifest by the caller).
        let r = unsafe {
            (self.api.launch_kernel)(
                function,
                grid[0],
                grid[1],
                grid[2],
                block[0],
                block[1],
                block[2],
                shared,
                std::ptr::null_mut(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        self.check(r, "cuLaunchKernel")
    }

    /// Waits for every launch.
    pub(super) fn synchronize(&self) -> Result<(), Error> {
        // SAFETY: no arguments.
        self.check(unsafe { (self.api.ctx_synchronize)() }, "cuCtxSynchronize")
    }

    /// Milliseconds the device spends on what `work` enqueues (CUDA events around it).
    pub(super) fn time(&self, work: impl FnOnce() -> Result<(), Error>) -> Result<f64, Error> {
        self.bind()?;
        let (mut start, mut end) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: events created here, recorded on the default stream and destroyed
        // before returning.
        unsafe {
            self.check((self.api.event_create)(&mut start, 0), "cuEventCreate")?;
            self.check((self.api.event_create)(&mut end, 0), "cuEventCreate")?;
            let timed = (|| {
                self.check(
                    (self.api.event_record)(start, std::ptr::null_mut()),
                    "cuEventRecord",
                )?;
                work()?;
                self.check(
                    (self.api.event_record)(end, std::ptr::null_mut()),
                    "cuEventRecord",
                )?;
                self.check((self.api.event_synchronize)(end), "cuEventSynchronize")?;
                let mut ms = 0f32;
                self.check(
                    (self.api.event_elapsed_time)(&mut ms, start, end),
                    "cuEventElapsedTime",
                )?;
                Ok(f64::from(ms))
            })();
            (self.api.event_destroy)(start);
            (self.api.event_destroy)(end);
            timed
        }
    }
}

impl Api {
    fn resolve(library: &Library) -> Result<Api, libloading::Error> {
        // SAFETY: each symbol is the driver API's function of that name, whose C
        // signature the field's type spells.
        unsafe {
            Ok(Api {
                init: *library.get(b"cuInit\0")?,
                device_get: *library.get(b"cuDeviceGet\0")?,
                device_get_name: *library.get(b"cuDeviceGetName\0")?,
                primary_ctx_retain: *library.get(b"cuDevicePrimaryCtxRetain\0")?,
                ctx_set_current: *library.get(b"cuCtxSetCurrent\0")?,
                ctx_synchronize: *library.get(b"cuCtxSynchronize\0")?,
                module_load_data_ex: *library.get(b"cuModuleLoadDataEx\0")?,
                module_unload: *library.get(b"cuModuleUnload\0")?,
                module_get_function: *library.get(b"cuModuleGetFunction\0")?,
                func_set_attribute: *library.get(b"cuFuncSetAttribute\0")?,
                mem_alloc: *library.get(b"cuMemAlloc_v2\0")?,
                mem_free: *library.get(b"cuMemFree_v2\0")?,
                memcpy_htod: *library.get(b"cuMemcpyHtoD_v2\0")?,
                memcpy_dtoh: *library.get(b"cuMemcpyDtoH_v2\0")?,
                launch_kernel: *library.get(b"cuLaunchKernel\0")?,
                event_create: *library.get(b"cuEventCreate\0")?,
                event_record: *library.get(b"cuEventRecord\0")?,
                event_synchronize: *library.get(b"cuEventSynchronize\0")?,
                event_elapsed_time: *library.get(b"cuEventElapsedTime\0")?,
                event_destroy: *library.get(b"cuEventDestroy_v2\0")?,
                get_error_name: *library.get(b"cuGetErrorName\0")?,
            })
        }
    }
}

/// Device memory, freed when dropped.
pub(super) struct DeviceBuffer<'d> {
    driver: &'d Driver,
    pub(super) ptr: DevicePtr,
    bytes: usize,
}

impl DeviceBuffer<'_> {
    /// Copies `data` (at most the buffer's size) to the device.
    pub(super) fn upload(&self, data: &[u8]) -> Result<(), Error> {
        let n = data.len().min(self.bytes);
        self.driver.bind()?;
        // SAFETY: `n` bytes are readable at `data` and writable at `ptr`.
        let r = unsafe { (self.driver.api.memcpy_htod)(self.ptr, data.as_ptr().cast(), n) };
        self.driver.check(r, "cuMemcpyHtoD")
    }

    /// Copies the buffer (at most `data`'s size) back from the device.
    pub(super) fn download(&self, data: &mut [u8]) -> Result<(), Error> {
        let n = data.len().min(self.bytes);
        self.driver.bind()?;
        // SAFETY: `n` bytes are writable at `data` and readable at `ptr`.
        let r = unsafe { (self.driver.api.memcpy_dtoh)(data.as_mut_ptr().cast(), self.ptr, n) };
        self.driver.check(r, "cuMemcpyDtoH")
    }
}

impl Drop for DeviceBuffer<'_> {
    fn drop(&mut self) {
        // SAFETY: allocated by `cuMemAlloc` and freed once; a failure leaks it.
        unsafe { (self.driver.api.mem_free)(self.ptr) };
    }
}

/// A module of PTX loaded on the device, unloaded when dropped.
pub(super) struct LoadedModule<'d> {
    driver: &'d Driver,
    module: Handle,
}

impl LoadedModule<'_> {
    /// The kernel `name` (the PTX's `.entry`).
    pub(super) fn function(&self, name: &str) -> Result<Handle, Error> {
        let c = CString::new(name).map_err(|_| gpu("a kernel name with a NUL byte"))?;
        let mut function = std::ptr::null_mut();
        // SAFETY: a live module and a NUL-terminated name.
        let r = unsafe {
            (self.driver.api.module_get_function)(&mut function, self.module, c.as_ptr())
        };
        self.driver
            .check(r, &format!("cuModuleGetFunction of `{name}`"))?;
        Ok(function)
    }
}

impl Drop for LoadedModule<'_> {
    fn drop(&mut self) {
        // SAFETY: loaded by `cuModuleLoadDataEx` and unloaded once.
        unsafe { (self.driver.api.module_unload)(self.module) };
    }
}
