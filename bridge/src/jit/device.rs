//! Running a GPU payload: its kernels' PTX loaded through the CUDA driver
//! ([`super::cuda`]), its buffers copied to the device, each kernel launched as the
//! launch manifest says ([`super::launch`]), the result copied back.

use super::args::{Arg, Arguments};
use super::cuda::{DeviceBuffer, DevicePtr, Driver, LoadedModule};
use super::gpu::Ptx;
use super::launch::{kernels_and_launches, Launch, Lowered, Param};
use crate::error::Error;
use crate::payload::Payload;
use elevate_rise::limits::Limits;
use elevate_rise::Value;
use serde_json::Value as Json;
use std::ffi::c_void;

/// A GPU payload compiled to PTX, with its launches: runs where a GPU and its driver
/// are ([`GpuCompiled::prepare`]); compiling needs neither.
pub struct GpuCompiled {
    pub(super) payload: Payload,
    pub(super) limits: Limits,
    pub(super) lowered: Lowered,
}

/// Compiles a GPU payload ([`crate::gpu_payload`]) to PTX and its launches.
pub fn compile_gpu(payload: &Payload, limits: &Limits) -> Result<GpuCompiled, Error> {
    Ok(GpuCompiled {
        payload: payload.clone(),
        limits: *limits,
        lowered: kernels_and_launches(payload)?,
    })
}

impl GpuCompiled {
    /// The payload it was compiled from.
    pub fn payload(&self) -> &Payload {
        &self.payload
    }

    /// Each kernel's PTX.
    pub fn kernels(&self) -> &[Ptx] {
        &self.lowered.kernels
    }

    /// The launches, in order.
    pub fn launches(&self) -> &[Launch] {
        &self.lowered.launches
    }

    /// The launch manifest ([`super::payload_manifest`]).
    pub fn manifest(&self) -> Json {
        self.lowered.manifest(&self.payload)
    }

    /// Loads the kernels on the GPU and copies `inputs` to it, with buffers for the
    /// result: a call to invoke and time. An error (no panic) where there is no CUDA
    /// driver or no GPU, or the inputs do not fit.
    pub fn prepare(&self, inputs: &[Value]) -> Result<GpuCall<'_>, Error> {
        let args = Arguments::new(&self.payload, &self.limits, inputs)?;
        let driver = Driver::get()?;
        let mut device = Vec::with_capacity(args.buffers.len());
        for b in &args.buffers {
            let buffer = driver.alloc(b.bytes().len())?;
            buffer.upload(b.bytes())?;
            device.push(buffer);
        }
        let modules = self
            .kernels()
            .iter()
            .map(|k| Ok((k.module.clone(), driver.load_ptx(&k.text)?)))
            .collect::<Result<Vec<_>, Error>>()?;
        let pointers: Vec<DevicePtr> = device.iter().map(|b| b.ptr).collect();
        let mut launches = Vec::new();
        for launch in self.launches() {
            let (module, kernel) = kernel_name(&launch.kernel)?;
            let Some((_, loaded)) = modules.iter().find(|(m, _)| m == module) else {
                return Err(gpu(format!("no PTX for the kernel {}", launch.kernel)));
            };
            launches.push(Prepared {
                function: loaded.function(kernel)?,
                params: parameters(launch, &args, &pointers)?,
                grid: dims(launch.grid, "grid", &launch.kernel)?,
                block: dims(launch.block, "block", &launch.kernel)?,
                shared: u32::try_from(launch.shared_bytes)
                    .map_err(|_| gpu("a launch's shared memory is out of range"))?,
            });
        }
        Ok(GpuCall {
            compiled: self,
            driver,
            args,
            device,
            launches,
            _modules: modules,
        })
    }

    /// The value of each launch's PTX parameters (eight bytes each, the value in the
    /// low ones) for `inputs`, with the function's buffers at the device addresses
    /// `addresses` (one per buffer: the inputs' leaves, the result's, the trap
    /// record): what a runner of its own passes to `cuLaunchKernel`.
    pub fn launch_parameters(
        &self,
        inputs: &[Value],
        addresses: &[u64],
    ) -> Result<Vec<Vec<u64>>, Error> {
        let args = Arguments::new(&self.payload, &self.limits, inputs)?;
        if addresses.len() != args.buffers.len() {
            return Err(Error::input(format!(
                "{} addresses for {} buffers",
                addresses.len(),
                args.buffers.len()
            )));
        }
        self.launches()
            .iter()
            .map(|l| parameters(l, &args, addresses))
            .collect()
    }

    /// Runs the kernels on `inputs` and returns the result.
    pub fn run(&self, inputs: &[Value]) -> Result<Value, Error> {
        let mut call = self.prepare(inputs)?;
        call.invoke()?;
        call.try_output()
    }
}

/// A launch ready to go: its function, its parameters' values, its sizes.
struct Prepared {
    function: *mut c_void,
    params: Vec<u64>,
    grid: [u32; 3],
    block: [u32; 3],
    shared: u32,
}

/// A GPU payload's kernels loaded and its buffers on the device, to launch again and
/// again (each call overwrites the result).
pub struct GpuCall<'a> {
    compiled: &'a GpuCompiled,
    driver: &'static Driver,
    args: Arguments,
    device: Vec<DeviceBuffer<'static>>,
    launches: Vec<Prepared>,
    _modules: Vec<(String, LoadedModule<'static>)>,
}

impl GpuCall<'_> {
    /// The GPU's name, as its driver reports it.
    pub fn device(&self) -> &str {
        &self.driver.device
    }

    /// Launches every kernel once, waits for them, and copies the result (and the
    /// trap record) back. A trap is an error naming the operation, as on the CPU.
    pub fn invoke(&mut self) -> Result<(), Error> {
        if let Some(t) = self.args.trap {
            self.args.clear_trap();
            self.device[t].upload(self.args.buffers[t].bytes())?;
        }
        self.launch_all()?;
        self.driver.synchronize()?;
        let back: Vec<usize> = self.args.outputs.clone().chain(self.args.trap).collect();
        for k in back {
            self.device[k].download(self.args.buffers[k].bytes_mut())?;
        }
        self.args.trapped(&self.compiled.payload)
    }

    /// Milliseconds the GPU takes for one call's launches (CUDA events around them;
    /// no copies).
    pub fn time(&mut self) -> Result<f64, Error> {
        let ms = self.driver.time(|| self.launch_all())?;
        self.driver.synchronize()?;
        Ok(ms)
    }

    /// The result of the last [`GpuCall::invoke`] (aborting, as any allocation does,
    /// where the memory for its values is not there: [`GpuCall::try_output`] says so
    /// instead).
    pub fn output(&self) -> Value {
        self.args.output(&self.compiled.payload)
    }

    /// The result of the last [`GpuCall::invoke`]: an error where its values would
    /// not fit the limits, or the memory for them is not there.
    pub fn try_output(&self) -> Result<Value, Error> {
        self.args
            .try_output(&self.compiled.payload, &self.compiled.limits)
    }

    fn launch_all(&mut self) -> Result<(), Error> {
        for l in &mut self.launches {
            let mut pointers: Vec<*mut c_void> = l
                .params
                .iter_mut()
                .map(|p| p as *mut u64 as *mut c_void)
                .collect();
            self.driver
                .launch(l.function, l.grid, l.block, l.shared, &mut pointers)?;
        }
        Ok(())
    }
}

fn gpu(message: impl Into<String>) -> Error {
    Error::Gpu {
        message: message.into(),
    }
}

/// `@module::@kernel` as its module and kernel names.
fn kernel_name(symbol: &str) -> Result<(&str, &str), Error> {
    symbol
        .split_once("::")
        .map(|(m, k)| (m.trim_start_matches('@'), k.trim_start_matches('@')))
        .ok_or_else(|| gpu(format!("a kernel `{symbol}` outside a module")))
}

/// A launch's grid or block sizes, as the driver takes them.
fn dims(sizes: [i64; 3], what: &str, kernel: &str) -> Result<[u32; 3], Error> {
    let mut out = [1u32; 3];
    for (o, s) in out.iter_mut().zip(sizes) {
        *o = u32::try_from(s)
            .ok()
            .filter(|s| *s > 0)
            .ok_or_else(|| gpu(format!("the {what} of {kernel} has a size of {s}")))?;
    }
    Ok(out)
}

/// The value of each PTX parameter of `launch` in eight bytes (the value in the low
/// ones): a buffer argument as MLIR passes a memref (its device address as allocated
/// and aligned pointers, offset 0, its sizes, its row-major strides), a scalar
/// argument by value, a constant parsed by its type.
pub(super) fn parameters(
    launch: &Launch,
    args: &Arguments,
    device: &[DevicePtr],
) -> Result<Vec<u64>, Error> {
    let mut values = Vec::new();
    for param in &launch.params {
        match param {
            Param::Argument { argument, ty, rank } => match args.order.get(*argument) {
                Some(Arg::Buffer(k)) => {
                    let dims = args.buffers[*k].dims();
                    if *rank != Some(dims.len()) {
                        return Err(gpu(format!(
                            "argument {argument} of {} is a {ty}, not a buffer of rank {}",
                            launch.kernel,
                            dims.len()
                        )));
                    }
                    let ptr = device[*k];
                    values.extend([ptr, ptr, 0]);
                    values.extend(dims.iter().map(|d| *d as u64));
                    let mut stride = 1i64;
                    let mut strides = vec![0u64; dims.len()];
                    for (s, d) in strides.iter_mut().zip(&dims).rev() {
                        *s = stride as u64;
                        stride *= d;
                    }
                    values.extend(strides);
                }
                Some(Arg::Scalar(k)) => values.push(args.scalars[*k]),
                None => {
                    return Err(gpu(format!(
                        "{} takes argument {argument}, which the function does not have",
                        launch.kernel
                    )))
                }
            },
            Param::View {
                argument,
                offset,
                sizes,
                strides,
                ..
            } => match args.order.get(*argument) {
                Some(Arg::Buffer(k)) => {
                    let elements: i64 = args.buffers[*k].dims().iter().product();
                    // The view's last element must lie in its buffer.
                    let last = sizes
                        .iter()
                        .zip(strides)
                        .map(|(n, s)| (n - 1).max(0).saturating_mul(*s))
                        .fold(*offset, i64::saturating_add);
                    if *offset < 0 || (sizes.iter().all(|n| *n > 0) && last >= elements) {
                        return Err(gpu(format!(
                            "{} views argument {argument} beyond its {elements} elements",
                            launch.kernel
                        )));
                    }
                    let ptr = device[*k];
                    values.extend([ptr, ptr, *offset as u64]);
                    values.extend(sizes.iter().chain(strides).map(|x| *x as u64));
                }
                _ => {
                    return Err(gpu(format!(
                        "{} views argument {argument}, which is not a buffer",
                        launch.kernel
                    )))
                }
            },
            Param::Constant { value, ty } => values.push(
                constant(value, ty)
                    .ok_or_else(|| gpu(format!("a constant parameter {value} of type {ty}")))?,
            ),
        }
    }
    Ok(values)
}

/// A constant as its bits: integers (and indices) two's complement, floats IEEE.
fn constant(value: &str, ty: &str) -> Option<u64> {
    let number = value.split(" : ").next()?.trim();
    match ty {
        "f32" => number.parse::<f32>().ok().map(|x| u64::from(x.to_bits())),
        "f64" => number.parse::<f64>().ok().map(f64::to_bits),
        _ if ty == "index" || ty.starts_with('i') => match number {
            "true" => Some(1),
            "false" => Some(0),
            n => n.parse::<i64>().ok().map(|x| x as u64),
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_are_read_from_their_mlir_text() {
        assert_eq!(
            constant("1.500000e+00 : f32", "f32"),
            Some(1.5f32.to_bits().into())
        );
        assert_eq!(constant("-3", "index"), Some(-3i64 as u64));
        assert_eq!(constant("true", "i1"), Some(1));
        assert_eq!(constant("x", "f32"), None);
    }

    #[test]
    fn a_buffer_is_passed_as_its_memref_descriptor_of_the_rank_the_kernel_takes() {
        use elevate_rise::types::Scalar;
        let buffer = super::super::buffer::Buffer::new(&[2, 3], Scalar::F32, "x").unwrap();
        let args = Arguments {
            buffers: vec![buffer],
            scalars: Vec::new(),
            order: vec![Arg::Buffer(0)],
            outputs: 0..1,
            trap: None,
        };
        let launch = |rank| Launch {
            kernel: "@m::@k".to_string(),
            grid: [1; 3],
            block: [1; 3],
            shared_bytes: 0,
            params: vec![Param::Argument {
                argument: 0,
                ty: "memref<2x3xf32>".to_string(),
                rank,
            }],
        };
        // Pointers, offset 0, sizes, row-major strides.
        let values = parameters(&launch(Some(2)), &args, &[7]).unwrap();
        assert_eq!(values, [7, 7, 0, 2, 3, 3, 1]);
        for rank in [Some(1), None] {
            let e = parameters(&launch(rank), &args, &[7]).unwrap_err();
            assert!(e.to_string().contains("not a buffer of rank 2"), "{e}");
        }
    }

    #[test]
    fn kernel_symbols_split_into_module_and_kernel() {
        assert_eq!(
            kernel_name("@mm_kernel::@mm_kernel").unwrap(),
            ("mm_kernel", "mm_kernel")
        );
        assert!(kernel_name("@lonely").is_err());
        assert!(dims([0, 1, 1], "grid", "k").is_err());
        assert!(dims([1 << 40, 1, 1], "grid", "k").is_err());
        assert_eq!(dims([4, 2, 1], "grid", "k").unwrap(), [4, 2, 1]);
    }
}
