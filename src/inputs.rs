//! The inputs and outputs of `eval` and `run`: `--input` files (JSON, or NumPy `.npy`
//! by extension), `--random SEED`, `--weights FILE.safetensors` (the parameters after
//! the first, by name), and `--out FILE.npy|FILE.json` (written atomically: a
//! temporary file renamed into place, nothing half-written on an error).
//!
//! Sizes (nat parameters) come from the shapes of what is given: arrays and weights
//! first, then JSON inputs, each checked against its parameter's type; with
//! `--random`, from `--nat` and the weights.

use crate::arrays::{self, NdArray};
use crate::{read, render, Failure};
use elevate_rise::io::{self, Signature};
use elevate_rise::limits::Limits;
use elevate_rise::nat::{solve, Nat, NatEquation, NatVar};
use elevate_rise::value::VALUE_BYTES;
use elevate_rise::{Error, ErrorKind};
use elevate_rise::{NatEnv, Program, Type, Value};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

/// Where a command's inputs come from.
#[derive(Clone, Copy)]
pub struct InputOptions<'a> {
    /// `--input`: one file per parameter (only the first with `weights`).
    pub files: &'a [PathBuf],
    /// `--random SEED`: pseudo-random values (the first parameter's, with `weights`).
    pub random: Option<u64>,
    /// `--nat NAME=VALUE` sizes, for random inputs.
    pub nats: &'a [(String, i64)],
    /// `--weights`: the parameters after the first, by name.
    pub weights: Option<&'a Path>,
}

/// `--out`'s value: a path ending in `.npy` or `.json`.
pub fn parse_out(text: &str) -> Result<PathBuf, String> {
    match out_format(Path::new(text)) {
        Some(_) => Ok(PathBuf::from(text)),
        None => Err(format!("expected FILE.npy or FILE.json, found `{text}`")),
    }
}

/// Whether a path names a `.npy` file (else JSON).
fn is_npy(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"))
}

/// `Some(true)` for `.npy`, `Some(false)` for `.json`, else `None`.
fn out_format(path: &Path) -> Option<bool> {
    let extension = path.extension()?;
    if extension.eq_ignore_ascii_case("npy") {
        Some(true)
    } else if extension.eq_ignore_ascii_case("json") {
        Some(false)
    } else {
        None
    }
}

/// An input's contents, and the file it came from.
enum Given {
    Json(Json),
    Array(NdArray, String),
}

/// What is bound to the entry point's parameters: the sizes, and the values (the
/// random ones made only when asked, so that a compilation can check the sizes first).
pub struct Binding {
    /// The nat parameters' values.
    pub nats: NatEnv,
    /// The values of the parameters, `None` where random.
    values: Vec<Option<Value>>,
    random: Option<u64>,
    signature: Signature,
}

impl Binding {
    /// The values of every parameter, in order (the random ones made now).
    pub fn values(self, path: &Path, source: &str) -> Result<Vec<Value>, Failure> {
        let Some(seed) = self.random else {
            return Ok(self.values.into_iter().flatten().collect());
        };
        let missing: Vec<(String, Type)> = self
            .signature
            .params
            .iter()
            .zip(&self.values)
            .filter(|(_, v)| v.is_none())
            .map(|(p, _)| p.clone())
            .collect();
        let signature = Signature {
            nats: self.signature.nats.clone(),
            params: missing,
        };
        let mut random = io::random_inputs(&signature, &self.nats, seed)
            .map_err(|e| render(&e, path, source))?
            .into_iter();
        Ok(self
            .values
            .into_iter()
            .map(|v| v.or_else(|| random.next()))
            .collect::<Option<Vec<_>>>()
            .unwrap_or_default())
    }
}

fn input_error(message: String) -> Error {
    Error::unlocated(ErrorKind::Input, message)
}

/// `FILE: input error: MESSAGE`, for a message about a file other than the program.
fn file_error(file: &str, message: &str) -> Failure {
    Failure(format!("{file}: input error: {message}"))
}

/// Reads the inputs of `program` (the file `path`, text `source`) and binds its
/// parameters: sizes from the shapes (and `--nat`), values checked against the types.
pub fn bind(
    path: &Path,
    source: &str,
    program: &Program,
    o: InputOptions,
) -> Result<Binding, Failure> {
    bind_as(path, source, program, o, true)
}

/// [`bind`], the arrays made values only where `make` (else only checked: for the
/// sizes alone).
fn bind_as(
    path: &Path,
    source: &str,
    program: &Program,
    o: InputOptions,
    make: bool,
) -> Result<Binding, Failure> {
    let signature = program.signature();
    let fail = |e: Error| render(&e, path, source);
    let params = &signature.params;
    let mut given: Vec<Option<Given>> = Vec::with_capacity(params.len());
    if o.random.is_none() {
        let expected = match o.weights {
            Some(_) => params.len().min(1),
            None => params.len(),
        };
        if o.files.len() != expected {
            let listed: Vec<String> = params
                .iter()
                .take(expected)
                .map(|(n, t)| format!("{n}: {t}"))
                .collect();
            let with = match o.weights {
                Some(_) => " (with --weights, --input gives the first parameter only)",
                None => "",
            };
            let inputs = if expected == 1 { "input" } else { "inputs" };
            return Err(fail(input_error(format!(
                "expected {expected} {inputs} ({}){with}, found {}",
                listed.join(", "),
                o.files.len()
            ))));
        }
        for (file, (name, ty)) in o.files.iter().zip(params) {
            given.push(Some(read_input(file, name, ty)?));
        }
    } else {
        let random = match o.weights {
            Some(_) => params.len().min(1),
            None => params.len(),
        };
        given.extend((0..random).map(|_| None));
    }
    if let Some(weights) = o.weights {
        given.extend(
            read_weights(weights, program, &signature)?
                .into_iter()
                .map(Some),
        );
    }
    // Sizes: from the arrays, then from `--nat`, then from the JSON inputs.
    let mut nats = array_sizes(&signature, &given)?;
    if o.random.is_some() {
        let named = io::bind_nats(&signature, o.nats, None)
            .map_err(|e| Failure(format!("{}: {e}", path.display())))?;
        for (var, value) in named {
            if let Some(&solved) = nats.get(&var) {
                if solved != value {
                    return Err(Failure(format!(
                        "{}: --nat {}={value}, but the weights make it {solved}",
                        path.display(),
                        nat_name(&var)
                    )));
                }
            }
            nats.insert(var, value);
        }
    }
    let mut values: Vec<Option<Value>> = (0..params.len()).map(|_| None).collect();
    let json: Vec<usize> = (0..given.len())
        .filter(|&i| matches!(given[i], Some(Given::Json(_))))
        .collect();
    let unsolved: Vec<NatVar> = signature
        .nats
        .iter()
        .filter(|v| !nats.contains_key(*v))
        .cloned()
        .collect();
    if !json.is_empty() {
        let known = |v: &NatVar| nats.get(v).map(|&n| Nat::cst(n));
        let sub = Signature {
            nats: unsolved.clone(),
            params: json
                .iter()
                .map(|&i| (params[i].0.clone(), params[i].1.map_nats(&known)))
                .collect(),
        };
        let inputs: Vec<Json> = json
            .iter()
            .filter_map(|&i| match &given[i] {
                Some(Given::Json(j)) => Some(j.clone()),
                _ => None,
            })
            .collect();
        let (solved, made) = io::bind_inputs(&sub, &inputs).map_err(fail)?;
        nats.extend(solved);
        for (&i, value) in json.iter().zip(made) {
            values[i] = Some(value);
        }
    } else if o.random.is_none() {
        if let Some(v) = unsolved.first() {
            return Err(fail(input_error(format!(
                "the inputs do not determine the nat `{}`",
                nat_name(v)
            ))));
        }
    }
    let elements: usize = given
        .iter()
        .map(|g| match g {
            Some(Given::Array(array, _)) => array.data.len(),
            _ => 0,
        })
        .sum();
    if make {
        Limits::default()
            .check_array("the arrays given", elements as u128, VALUE_BYTES)
            .map_err(|e| fail(input_error(e.to_string())))?;
    }
    for (i, g) in given.iter().enumerate() {
        if let Some(Given::Array(array, file)) = g {
            let (name, ty) = &params[i];
            if make {
                values[i] = Some(array_value(array, name, ty, &nats, file)?);
            } else {
                arrays::check_shape(array, ty, &nats)
                    .map_err(|e| file_error(file, &format!("{}: {e}", what(name, file))))?;
            }
        }
    }
    Ok(Binding {
        nats,
        values,
        random: o.random,
        signature,
    })
}

fn nat_name(v: &NatVar) -> String {
    match v {
        NatVar::Named(n) => n.to_string(),
        NatVar::Unknown(k) => format!("?{k}"),
    }
}

/// An array as the value of parameter `name` of type `ty`, within the memory limits.
fn array_value(
    array: &NdArray,
    name: &str,
    ty: &Type,
    nats: &NatEnv,
    file: &str,
) -> Result<Value, Failure> {
    Limits::default()
        .check_array(
            &format!("parameter `{name}` ({ty})"),
            array.data.len() as u128,
            VALUE_BYTES,
        )
        .map_err(|e| file_error(file, &e.to_string()))?;
    arrays::to_value(array, ty, nats)
        .map_err(|e| file_error(file, &format!("{}: {e}", what(name, file))))
}

/// `parameter `x``, or for a tensor of the weights, `tensor `w``.
fn what(name: &str, file: &str) -> String {
    match file.ends_with(".safetensors") {
        true => format!("tensor `{name}`"),
        false => format!("parameter `{name}`"),
    }
}

/// The sizes the arrays' shapes give, each array checked for its dtype and rank, and
/// its shape against the sizes the arrays before it give: a shape that contradicts
/// them is an error naming its parameter.
fn array_sizes(signature: &Signature, given: &[Option<Given>]) -> Result<NatEnv, Failure> {
    let unknown = |v: &NatVar| {
        signature
            .nats
            .iter()
            .position(|w| w == v)
            .map(|i| Nat::unknown(i as u32 + 1))
    };
    let mut equations = Vec::new();
    let mut nats = NatEnv::default();
    for ((name, ty), g) in signature.params.iter().zip(given) {
        let Some(Given::Array(array, file)) = g else {
            continue;
        };
        let misshapen = |nats: &NatEnv| {
            let e = arrays::mismatch(array, ty, nats);
            file_error(file, &format!("{}: {e}", what(name, file)))
        };
        let layout = arrays::check(array, ty).map_err(|_| misshapen(&nats))?;
        let before = equations.len();
        for (n, &len) in layout.dims().zip(&array.shape) {
            if n.try_eval(&|_| None).is_err() {
                let len = i64::try_from(len).unwrap_or(i64::MAX);
                equations.push(NatEquation::new(n.substitute(&unknown), Nat::cst(len)));
            }
        }
        if equations.len() == before {
            continue;
        }
        let solution = solve(&equations).map_err(|_| misshapen(&nats))?;
        for (i, v) in signature.nats.iter().enumerate() {
            if let Some(value) = solution.get(&(i as u32 + 1)).and_then(Nat::as_const) {
                if value < 0 {
                    return Err(misshapen(&nats));
                }
                nats.insert(v.clone(), value);
            }
        }
    }
    Ok(nats)
}

/// An `--input` file for the parameter `param` of type `ty`: `.npy` by extension,
/// JSON otherwise.
fn read_input(file: &Path, param: &str, ty: &Type) -> Result<Given, Failure> {
    let name = file.display().to_string();
    if is_npy(file) {
        return arrays::read_npy(file)
            .map(|a| Given::Array(a, name.clone()))
            .map_err(|e| match e {
                arrays::ArrayError::Io(e) => Failure(format!("{name}: cannot read: {e}")),
                e @ arrays::ArrayError::Dtype { .. } => {
                    file_error(&name, &format!("parameter `{param}` ({ty}): {e}"))
                }
                e => file_error(&name, &e.to_string()),
            });
    }
    let text = read(file)?;
    serde_json::from_str(&text).map(Given::Json).map_err(|e| {
        Failure(format!(
            "{}:{}:{}: input error: not JSON: {e}",
            file.display(),
            e.line(),
            e.column()
        ))
    })
}

/// The weights' tensors for the parameters after the first, in order: every one there
/// (by name), and nothing else in the file.
fn read_weights(
    file: &Path,
    program: &Program,
    signature: &Signature,
) -> Result<Vec<Given>, Failure> {
    let name = file.display().to_string();
    let mut tensors = read_tensors(file)?;
    let wanted = signature.params.get(1..).unwrap_or_default();
    let entry = &program.entry().name;
    for (tensor, _) in &tensors {
        if !wanted.iter().any(|(n, _)| n == tensor) {
            let names: Vec<String> = wanted.iter().map(|(n, _)| format!("`{n}`")).collect();
            return Err(file_error(
                &name,
                &format!(
                    "tensor `{tensor}` is not a parameter of `{entry}` (its parameters \
                     after the first: {})",
                    if names.is_empty() {
                        "none".into()
                    } else {
                        list(&names)
                    }
                ),
            ));
        }
    }
    let mut given = Vec::with_capacity(wanted.len());
    for (param, ty) in wanted {
        let at = tensors
            .iter()
            .position(|(n, _)| n == param)
            .ok_or_else(|| {
                file_error(
                    &name,
                    &format!("no tensor `{param}` for the parameter `{param}` ({ty}) of `{entry}`"),
                )
            })?;
        let (_, array) = tensors.swap_remove(at);
        given.push(Given::Array(array, name.clone()));
    }
    Ok(given)
}

/// The tensors of a safetensors file, by name, in the file's order.
fn read_tensors(file: &Path) -> Result<Vec<(String, NdArray)>, Failure> {
    let weights = elevate_onnx::Weights::read(file).map_err(|e| Failure(e.to_string()))?;
    Ok(weights
        .into_tensors()
        .into_iter()
        .map(|t| {
            let shape = t.shape.iter().map(|&d| d as u64).collect();
            let array = NdArray {
                shape,
                data: arrays::Data::F32(t.data),
            };
            (t.name, array)
        })
        .collect())
}

/// `a, b, c`, or the first ten and how many more.
fn list(names: &[String]) -> String {
    match names.len() {
        0..=10 => names.join(", "),
        n => format!("{}, and {} more", names[..10].join(", "), n - 10),
    }
}

/// The sizes `--nat` and `--weights` give together, as `--nat` bindings (for
/// `compile` and `search`, which take sizes rather than inputs).
pub fn sizes_with_weights(
    path: &Path,
    entry: Option<&str>,
    nats: &[(String, i64)],
    weights: Option<&Path>,
) -> Result<Vec<(String, i64)>, Failure> {
    let Some(weights) = weights else {
        return Ok(nats.to_vec());
    };
    let (program, source) = crate::load(path, entry)?;
    let only = InputOptions {
        files: &[],
        random: Some(0),
        nats,
        weights: Some(weights),
    };
    let binding = bind_as(path, &source, &program, only, false)?;
    let mut sizes = nats.to_vec();
    for (var, value) in binding.nats {
        if let NatVar::Named(n) = &var {
            if !sizes.iter().any(|(name, _)| **name == **n) {
                sizes.push((n.to_string(), value));
            }
        }
    }
    Ok(sizes)
}

/// What `eval` is asked.
pub struct EvalOptions<'a> {
    /// The RISE file.
    pub path: &'a Path,
    /// The entry point.
    pub entry: Option<&'a str>,
    /// Its inputs.
    pub inputs: InputOptions<'a>,
    /// `--out`: where the result goes, instead of standard output.
    pub out: Option<&'a Path>,
}

/// `elevate eval`: the reference interpreter on the inputs; the result as JSON on
/// standard output, or into `--out`.
pub fn eval(o: EvalOptions) -> Result<(), Failure> {
    let (program, source) = crate::load(o.path, o.entry)?;
    let binding = bind(o.path, &source, &program, o.inputs)?;
    let nats = binding.nats.clone();
    let values = binding.values(o.path, &source)?;
    let value = elevate_rise::evaluate(&program.entry().term, &nats, &values)
        .map_err(|e| render(&e, o.path, &source))?;
    result(o.path, &value, o.out)
}

/// A command's result: into `out` where given, else on standard output as JSON.
pub fn result(path: &Path, value: &Value, out: Option<&Path>) -> Result<(), Failure> {
    match out {
        Some(out) => write_out(out, value),
        None => print_value(path, value),
    }
}

/// Writes the result into `out` (`.npy` or JSON by extension) through a temporary
/// file in the same folder, renamed into place when it is complete: an error leaves
/// neither a partial file nor the temporary one.
pub fn write_out(out: &Path, value: &Value) -> Result<(), Failure> {
    use std::io::Write;
    let fail = |e: &dyn std::fmt::Display| Failure(format!("{}: cannot write: {e}", out.display()));
    let npy = out_format(out).ok_or_else(|| {
        Failure(format!(
            "{}: --out writes FILE.npy or FILE.json",
            out.display()
        ))
    })?;
    let folder = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file_name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = folder.join(format!(".{file_name}.{}.partial", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temporary)
        .map_err(|e| fail(&e))?;
    let mut writer = std::io::BufWriter::new(file);
    let written = match npy {
        true => arrays::write_npy(value, &mut writer).map_err(|e| fail(&e)),
        false => io::write_json(value, &mut writer)
            .map_err(|e| fail(&e))
            .and_then(|()| writer.write_all(b"\n").map_err(|e| fail(&e))),
    }
    .and_then(|()| writer.flush().map_err(|e| fail(&e)))
    .and_then(|()| {
        let file = writer
            .into_inner()
            .map_err(|e| fail(&e.error().to_string()))?;
        file.sync_all().map_err(|e| fail(&e))
    })
    .and_then(|()| std::fs::rename(&temporary, out).map_err(|e| fail(&e)));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// Prints a value as one line of JSON on standard output, streamed (a large result
/// takes no memory beyond the value). A reader that stops early (`| head`) ends the
/// output quietly; any other write failure is an error.
pub fn print_value(path: &Path, value: &Value) -> Result<(), Failure> {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let written = io::write_json(value, &mut out).and_then(|()| {
        out.write_all(b"\n")?;
        Ok(out.flush()?)
    });
    match written {
        Err(io::WriteError::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure(format!("{}: {e}", path.display()))),
        Ok(()) => Ok(()),
    }
}
