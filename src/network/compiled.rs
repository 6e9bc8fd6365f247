//! A network compiled: each distinct unit compiled once, the weights bound, and one
//! call of the input that runs the units in order on buffers the network owns.

use super::fold::fold_batchnorms;
use super::hoist::hoist;
use super::strategy::{NetworkStrategy, StrategyError};
use super::units::{Unit, UnitPlan};
use super::{Network, Source};
use elevate_bridge::jit::{Compiled, OpenMp, RawArg};
use elevate_bridge::Options;
use elevate_rise::search::Machine;
use elevate_rise::Term;
use elevate_rise::{registry, Program, Type, TypeKind};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Why a network could not be compiled or run.
#[derive(Debug, thiserror::Error)]
pub enum NetworkError {
    /// The strategy does not fit the network.
    #[error("--strategy: {0}")]
    Strategy(#[from] StrategyError),
    /// A weight is missing, extra or of the wrong shape.
    #[error("--weights: {0}")]
    Weights(String),
    /// The input is not the network's.
    #[error("the input: {0}")]
    Input(String),
    /// A unit did not compile with any of its strategies.
    #[error("layer {layer} (`{name}`, {def}): {message}")]
    Compile {
        /// Its first layer.
        layer: usize,
        /// The layer's variable.
        name: String,
        /// Its definition.
        def: String,
        /// Why, for the last strategy tried.
        message: String,
    },
    /// A call failed.
    #[error("layer {layer}: {message}")]
    Run {
        /// The unit's first layer.
        layer: usize,
        /// Why.
        message: String,
    },
}

/// f32s on a cache line's boundary, as the buffers a compiled function allocates
/// itself are (vector loads that straddle no line).
pub(crate) struct Aligned {
    raw: Vec<f32>,
    offset: usize,
    len: usize,
}

impl Aligned {
    const LINE: usize = 64;

    pub(crate) fn zeroed(len: usize) -> Aligned {
        let raw = vec![0f32; len + Self::LINE / 4];
        let misalignment = (raw.as_ptr() as usize) % Self::LINE;
        let offset = ((Self::LINE - misalignment) % Self::LINE) / 4;
        Aligned { raw, offset, len }
    }

    pub(crate) fn as_slice(&self) -> &[f32] {
        &self.raw[self.offset..self.offset + self.len]
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [f32] {
        &mut self.raw[self.offset..self.offset + self.len]
    }

    pub(crate) fn as_ptr(&self) -> *const f32 {
        self.as_slice().as_ptr()
    }

    pub(crate) fn as_mut_ptr(&mut self) -> *mut f32 {
        self.as_mut_slice().as_mut_ptr()
    }
}

/// One unit's call in a run.
struct Step {
    functions: Arc<UnitFunctions>,
    reads: Vec<Source>,
    /// The arrays computed from its weights when they were bound.
    prepared: Vec<Aligned>,
    /// The layer whose result it writes.
    writes: usize,
    /// Its first layer.
    first: usize,
}

/// How a unit was compiled: its layers, the strategy that compiled it, the seconds.
#[derive(Debug, Clone)]
pub struct UnitReport {
    /// The layers it computes.
    pub layers: Vec<usize>,
    /// Their definitions.
    pub defs: Vec<String>,
    /// The strategy it was compiled with.
    pub strategy: String,
    /// How many arrays it computes from its weights once, when they are bound.
    pub prepared: usize,
    /// Why each strategy tried before the one that compiled it did not.
    pub declined: Vec<String>,
    /// Whether an earlier unit with the same program and strategy was reused.
    pub reused: bool,
    /// Seconds spent compiling it and preparing its weights.
    pub seconds: f64,
}

/// A network compiled to one callable of its input.
pub struct CompiledNetwork {
    steps: Vec<Step>,
    weights: Vec<Aligned>,
    /// A buffer per layer result that a step writes, and one for the input (aligned
    /// copies run faster than the caller's memory, measured).
    buffers: Mutex<HashMap<usize, Aligned>>,
    input_copy: Mutex<Aligned>,
    input: (Vec<i64>, usize),
    output: (Vec<i64>, usize),
    result: Source,
    threads: Option<usize>,
    compile_seconds: f64,
    units: Vec<UnitReport>,
    batchnorms_folded: usize,
}

/// The dimensions of an f32 array type, outermost first.
fn f32_dims(ty: &Type) -> Option<Vec<i64>> {
    let mut out = Vec::new();
    let mut t = ty.clone();
    loop {
        match t.kind().clone() {
            TypeKind::Array(n, e) => {
                out.push(n.as_const()?);
                t = e;
            }
            TypeKind::Scalar(elevate_rise::Scalar::F32) => return Some(out),
            _ => return None,
        }
    }
}

fn elements(dims: &[i64]) -> usize {
    dims.iter().map(|d| (*d).max(0) as usize).product()
}

impl CompiledNetwork {
    /// Compiles `network` under `strategy` with `weights` (name, shape, values) bound,
    /// its parallel loops on `threads` threads (all the machine's where `None`).
    pub fn new(
        network: &Network,
        strategy: &NetworkStrategy,
        weights: impl IntoIterator<Item = (String, Vec<usize>, Vec<f32>)>,
        threads: Option<usize>,
    ) -> Result<CompiledNetwork, NetworkError> {
        let started = Instant::now();
        let mut given: HashMap<String, (Vec<usize>, Vec<f32>)> = HashMap::new();
        for (name, shape, data) in weights {
            given.insert(name, (shape, data));
        }
        // BatchNorms folded into their convolutions: new weights, computed here, once.
        let folded = fold_batchnorms(network, strategy, &given).map_err(NetworkError::Weights)?;
        let batchnorms_folded = folded.as_ref().map_or(0, |(_, t)| t.len() / 2);
        let network = match folded {
            Some((network, tensors)) => {
                for (name, shape, data) in tensors {
                    given.insert(name, (shape, data));
                }
                std::borrow::Cow::Owned(network)
            }
            None => std::borrow::Cow::Borrowed(network),
        };
        let network: &Network = &network;
        let weights = bind(network, given)?;
        let input_dims = f32_dims(&network.input().ty).ok_or_else(|| {
            NetworkError::Input(format!(
                "the network's input `{}` is {}: an f32 array is expected",
                network.input().name,
                network.input().ty
            ))
        })?;
        let result_ty = network.type_of(network.result()).clone();
        let output_dims = f32_dims(&result_ty).ok_or_else(|| {
            NetworkError::Input(format!(
                "the network's result is {result_ty}: not an f32 array"
            ))
        })?;
        let plan = UnitPlan::new(network, strategy, Machine::host().lanes)?;
        let (steps, units) = compile_units(network, &plan.units, &weights)?;
        let mut buffers = HashMap::new();
        for step in &steps {
            let dims = f32_dims(&network.layers()[step.writes].ty).unwrap_or_default();
            buffers.insert(step.writes, Aligned::zeroed(elements(&dims)));
        }
        Ok(CompiledNetwork {
            steps,
            weights,
            buffers: Mutex::new(buffers),
            input_copy: Mutex::new(Aligned::zeroed(elements(&input_dims))),
            input: (input_dims.clone(), elements(&input_dims)),
            output: (output_dims.clone(), elements(&output_dims)),
            result: network.result(),
            threads,
            compile_seconds: started.elapsed().as_secs_f64(),
            units,
            batchnorms_folded,
        })
    }

    /// The input's dimensions.
    pub fn input_dims(&self) -> &[i64] {
        &self.input.0
    }

    /// The result's dimensions.
    pub fn output_dims(&self) -> &[i64] {
        &self.output.0
    }

    /// Seconds from the network to this callable (planning, rewriting, compiling).
    pub fn compile_seconds(&self) -> f64 {
        self.compile_seconds
    }

    /// How each unit was compiled.
    pub fn units(&self) -> &[UnitReport] {
        &self.units
    }

    /// How many BatchNorms were folded into the convolutions before them (their
    /// weights scaled, their shift a bias, computed when the weights were bound).
    pub fn batchnorms_folded(&self) -> usize {
        self.batchnorms_folded
    }

    /// Runs the network on `input` (row-major, the input's dimensions).
    pub fn run(&self, input: &[f32]) -> Result<Vec<f32>, NetworkError> {
        let mut out = vec![0f32; self.output.1];
        self.run_into(input, &mut out)?;
        Ok(out)
    }

    /// Runs the network on `input`, writing the result into `out`.
    pub fn run_into(&self, input: &[f32], out: &mut [f32]) -> Result<(), NetworkError> {
        self.run_timed(input, out, None)
    }

    /// Runs the network on `input` `runs` times; the median milliseconds of each
    /// unit (in [`units`](Self::units) order).
    pub fn profile(&self, input: &[f32], runs: usize) -> Result<Vec<f64>, NetworkError> {
        let mut out = vec![0f32; self.output.1];
        let mut times = vec![Vec::with_capacity(runs); self.steps.len()];
        for _ in 0..runs.max(1) {
            self.run_timed(input, &mut out, Some(&mut times))?;
        }
        Ok(times
            .into_iter()
            .map(|mut t| {
                t.sort_by(f64::total_cmp);
                t[t.len() / 2]
            })
            .collect())
    }

    fn run_timed(
        &self,
        input: &[f32],
        out: &mut [f32],
        mut times: Option<&mut Vec<Vec<f64>>>,
    ) -> Result<(), NetworkError> {
        if input.len() != self.input.1 {
            return Err(NetworkError::Input(format!(
                "{} values for an input of {:?} ({} values)",
                input.len(),
                self.input.0,
                self.input.1
            )));
        }
        if out.len() != self.output.1 {
            return Err(NetworkError::Input(format!(
                "room for {} values for a result of {:?} ({} values)",
                out.len(),
                self.output.0,
                self.output.1
            )));
        }
        if let Some(threads) = self.threads {
            if let Some(omp) = OpenMp::get() {
                omp.set_threads(threads);
            }
        }
        let mut buffers = self.buffers.lock().unwrap_or_else(|e| e.into_inner());
        let mut copy = self.input_copy.lock().unwrap_or_else(|e| e.into_inner());
        copy.as_mut_slice().copy_from_slice(input);
        let input = copy.as_slice();
        for (k, step) in self.steps.iter().enumerate() {
            let started = Instant::now();
            // The step's own buffer is taken out while the others are read.
            let Some(mut target) = buffers.remove(&step.writes) else {
                continue;
            };
            let prepared = step
                .prepared
                .iter()
                .map(|p| RawArg::Array(p.as_ptr() as *mut u8));
            let args: Vec<RawArg> = step
                .reads
                .iter()
                .map(|r| {
                    RawArg::Array(match r {
                        Source::Input => input.as_ptr() as *mut u8,
                        Source::Weight(i) => self.weights[*i].as_ptr() as *mut u8,
                        Source::Layer(i) => buffers
                            .get(i)
                            .map(|b| b.as_ptr() as *mut u8)
                            .unwrap_or(std::ptr::null_mut()),
                    })
                })
                .chain(prepared)
                .collect();
            // SAFETY: each array is live and of its slot's shape (the unit's
            // parameters are typed by the values it reads, checked when bound); the
            // target is a buffer of the result's shape that no argument aliases.
            let called = unsafe {
                step.functions
                    .main
                    .invoke_raw(&args, target.as_mut_ptr() as *mut u8)
            };
            buffers.insert(step.writes, target);
            called.map_err(|e| NetworkError::Run {
                layer: step.first,
                message: e.to_string(),
            })?;
            if let Some(times) = times.as_deref_mut() {
                times[k].push(started.elapsed().as_secs_f64() * 1000.0);
            }
        }
        let result: &[f32] = match self.result {
            Source::Input => input,
            Source::Weight(i) => self.weights[i].as_slice(),
            Source::Layer(i) => buffers.get(&i).map(|b| b.as_slice()).unwrap_or(&[]),
        };
        if result.len() != out.len() {
            return Err(NetworkError::Run {
                layer: self.steps.len(),
                message: "the network's result was not computed".to_string(),
            });
        }
        out.copy_from_slice(result);
        Ok(())
    }
}

/// The weights in parameter order, each checked against its parameter's type.
fn bind(
    network: &Network,
    mut given: HashMap<String, (Vec<usize>, Vec<f32>)>,
) -> Result<Vec<Aligned>, NetworkError> {
    let mut bound = Vec::with_capacity(network.weights().len());
    for param in network.weights() {
        let (shape, data) = given.remove(&param.name).ok_or_else(|| {
            NetworkError::Weights(format!("no tensor `{}` (of type {})", param.name, param.ty))
        })?;
        let want = f32_dims(&param.ty).ok_or_else(|| {
            NetworkError::Weights(format!(
                "`{}` is {}: not an f32 array",
                param.name, param.ty
            ))
        })?;
        let have: Vec<i64> = shape.iter().map(|d| *d as i64).collect();
        if have != want || data.len() != elements(&want) {
            return Err(NetworkError::Weights(format!(
                "`{}` has shape {have:?}, the program's parameter is {}",
                param.name, param.ty
            )));
        }
        let mut aligned = Aligned::zeroed(data.len());
        aligned.as_mut_slice().copy_from_slice(&data);
        bound.push(aligned);
    }
    if let Some(extra) = given.keys().min() {
        return Err(NetworkError::Weights(format!(
            "the tensor `{extra}` is no parameter of the network"
        )));
    }
    Ok(bound)
}

/// A unit's functions: the call, and what it prepares from the weights once.
struct UnitFunctions {
    main: Compiled,
    /// Functions of the unit's weights (in `reads` order), one per prepared array.
    preparations: Vec<Compiled>,
    strategy: String,
    declined: Vec<String>,
}

// SAFETY: once compiled, a `Compiled` is only read: its payload, its interface and its
// packed wrapper, which computes on the memory each call gives it. Its MLIR context is
// held only to be dropped with it, which MLIR allows on any thread once nothing uses
// the context. (The Python package shares compiled functions between threads so.)
unsafe impl Send for UnitFunctions {}
unsafe impl Sync for UnitFunctions {}

/// Every unit compiled (a program and strategy seen before reuses its functions),
/// and its weight-only arrays computed from `weights`.
fn compile_units(
    network: &Network,
    units: &[Unit],
    weights: &[Aligned],
) -> Result<(Vec<Step>, Vec<UnitReport>), NetworkError> {
    let mut cache: HashMap<String, Arc<UnitFunctions>> = HashMap::new();
    let mut steps = Vec::with_capacity(units.len());
    let mut reports = Vec::with_capacity(units.len());
    for unit in units {
        let first = unit.layers[0];
        let layer = &network.layers()[first];
        let failed = |message: String| NetworkError::Compile {
            layer: first,
            name: layer.name.clone(),
            def: layer.def.clone(),
            message,
        };
        let key = format!("{}\n{:?}", unit.source, unit.strategies);
        let started = Instant::now();
        let (functions, reused) = match cache.get(&key) {
            Some(f) => (f.clone(), true),
            None => {
                let f = Arc::new(compile_unit(unit).map_err(failed)?);
                cache.insert(key, f.clone());
                (f, false)
            }
        };
        let unit_weights: Vec<RawArg> = unit
            .reads
            .iter()
            .filter_map(|r| match r {
                Source::Weight(i) => Some(RawArg::Array(weights[*i].as_ptr() as *mut u8)),
                _ => None,
            })
            .collect();
        let mut prepared = Vec::with_capacity(functions.preparations.len());
        for prep in &functions.preparations {
            let out = prep.interface().map_err(|e| failed(e.to_string()))?.output;
            let mut values = Aligned::zeroed(out.elements());
            // SAFETY: the weights are bound arrays of the unit's weight parameters'
            // shapes (checked by `bind`); `values` is of the result's shape.
            unsafe { prep.invoke_raw(&unit_weights, values.as_mut_ptr() as *mut u8) }
                .map_err(|e| failed(format!("preparing its weights: {e}")))?;
            prepared.push(values);
        }
        reports.push(UnitReport {
            layers: unit.layers.clone(),
            defs: unit
                .layers
                .iter()
                .map(|i| network.layers()[*i].def.clone())
                .collect(),
            strategy: functions.strategy.clone(),
            prepared: prepared.len(),
            declined: functions.declined.clone(),
            reused,
            seconds: started.elapsed().as_secs_f64(),
        });
        steps.push(Step {
            functions,
            reads: unit.reads.clone(),
            prepared,
            writes: *unit.layers.last().unwrap_or(&first),
            first,
        });
    }
    Ok((steps, reports))
}

/// A unit compiled with the first of its strategies that compiles it, its
/// weight-only arrays taken out.
fn compile_unit(unit: &Unit) -> Result<UnitFunctions, String> {
    let program = Program::load(&unit.source, None).map_err(|e| e.to_string())?;
    let term = program
        .instantiate(&Default::default())
        .map_err(|e| e.to_string())?;
    let weights: HashSet<usize> = unit
        .reads
        .iter()
        .enumerate()
        .filter(|(_, r)| matches!(r, Source::Weight(_)))
        .map(|(k, _)| k)
        .collect();
    let options = Options::default();
    let mut declined = Vec::new();
    for text in &unit.strategies {
        let strategy = registry().parse(text).map_err(|e| e.to_string())?;
        let compiled = (|| -> Result<UnitFunctions, String> {
            let chosen = elevate_bridge::rewrite(&term, Some(&strategy), &options)
                .map_err(|e| e.to_string())?;
            let build = |t: &Term| {
                elevate_bridge::payload("unit", t, &options.limits)
                    .and_then(|p| elevate_bridge::jit::compile_payload(&p, &options.limits))
                    .map_err(|e| e.to_string())
            };
            match hoist(&chosen, &weights).map_err(|e| e.to_string())? {
                Some(h) => Ok(UnitFunctions {
                    main: build(&h.main)?,
                    preparations: h.preparations.iter().map(build).collect::<Result<_, _>>()?,
                    strategy: text.clone(),
                    declined: Vec::new(),
                }),
                None => Ok(UnitFunctions {
                    main: build(&chosen)?,
                    preparations: Vec::new(),
                    strategy: text.clone(),
                    declined: Vec::new(),
                }),
            }
        })();
        match compiled {
            Ok(f) => return Ok(UnitFunctions { declined, ..f }),
            Err(e) => declined.push(format!("`{text}`: {e}")),
        }
    }
    Err(declined.pop().unwrap_or_else(|| "no strategy".to_string()))
}
