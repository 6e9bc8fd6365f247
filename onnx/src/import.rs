//! `import`: an ONNX file to a network's RISE program and its weights, and writing
//! them (`NAME.rise`, `NAME.safetensors`) together or not at all.

use crate::error::{ImportError, ImportErrorKind};
use crate::model::{load, ConstData};
use crate::program::program;
use crate::translate::translate;
use crate::weights::{write_views, F32View, Tensor, Weights};
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// How to import.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportOptions {
    /// The batch a symbolic batch size becomes (default 1). A model whose batch is
    /// fixed must not be given another.
    pub batch: Option<i64>,
}

/// One layer of the network: one `let` of its def.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    /// The def it calls (`conv_k3x3_s1_p1111`, `relu_nchw`, ...).
    pub def: String,
    /// The def's kind: its name up to the first `_` (`conv`, `relu`, ...).
    pub kind: String,
    /// The variable the network binds its result to.
    pub var: String,
    /// What it is applied to: the input's, parameters' and earlier layers' names.
    pub args: Vec<String>,
    /// Its result's shape.
    pub shape: Vec<usize>,
    /// The ONNX node it comes from (its name, or `#INDEX` if it has none).
    pub node: String,
    /// Its floating-point operations (a multiply-add is two).
    pub flops: f64,
}

/// One weight: a parameter of the network's def after the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parameter {
    /// Its name in the program and in the weights file.
    pub name: String,
    /// The initializer's (or `Constant` node output's) name in the model.
    pub onnx: String,
    /// Its shape, as the program's type says (a broadcast bias without its axes of
    /// size 1).
    pub shape: Vec<usize>,
}

/// A data of a weight, as the model had it (never copied until written or asked for).
#[derive(Debug, Clone)]
enum Data {
    Raw(bytes::Bytes),
    Floats(std::sync::Arc<[f32]>),
}

/// An imported network: its RISE program, its weights and what they hold.
#[derive(Debug)]
pub struct Imported {
    /// The model's name: its file name without `.onnx`.
    pub name: String,
    /// The RISE program: a def per layer kind, the network's def last.
    pub program: String,
    /// The network def's name (the model's name made an identifier).
    pub entry: String,
    /// The input's parameter name and its shape (NCHW, the batch resolved).
    pub input: (String, Vec<usize>),
    /// The result's shape.
    pub output_shape: Vec<usize>,
    /// The nodes of the ONNX graph.
    pub nodes: usize,
    /// The layers, in the order the network computes them.
    pub layers: Vec<Layer>,
    /// The weights, in the order of the network's parameters (the model's order).
    pub parameters: Vec<Parameter>,
    /// The bytes the weights take.
    pub weights_bytes: u64,
    /// The network's floating-point operations (a multiply-add is two).
    pub flops: f64,
    data: Vec<Data>,
    written: Mutex<Option<(PathBuf, PathBuf)>>,
}

/// Imports the ONNX model in `path`: checks every node, then makes the RISE program
/// and gathers the weights (which share the file's buffer: a model is held once).
///
/// A model that uses anything the importer does not support is refused as a whole,
/// with an error that names the file, the node (index, name, operator) and the
/// attribute.
///
/// ```no_run
/// use elevate_onnx::{import, ImportOptions};
/// use std::path::Path;
/// let net = import(Path::new("resnet18.onnx"), &ImportOptions { batch: Some(8) }).unwrap();
/// let (rise, weights) = net.write(Path::new("out")).unwrap();
/// println!("{}", net.summary());
/// # let _ = (rise, weights);
/// ```
pub fn import(path: &Path, options: &ImportOptions) -> Result<Imported, ImportError> {
    let located = |k: ImportErrorKind| k.in_file(path);
    let model = load(path, options.batch).map_err(located)?;
    let nodes = model.node_count;
    let input = model.input.clone();
    let t = translate(model, path).map_err(located)?;
    let name = model_name(path);
    let text = program(&t, &name, &input.0, &input.1);
    // What is written must type-check: a program that does not is the importer's
    // fault, reported here rather than found by whoever loads it.
    elevate_rise::Program::load(&text.text, None)
        .map_err(|e| located(ImportErrorKind::Program(e.to_string())))?;
    let var = |a: &crate::translate::Arg, lets: &[String]| match a {
        crate::translate::Arg::Input => text.input.clone(),
        crate::translate::Arg::Param(p) => text.params[*p].clone(),
        crate::translate::Arg::Layer(l) => lets[*l].clone(),
    };
    let lets = &text.lets;
    let layers = t
        .layers
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let def = text.layer_defs[i].clone();
            Layer {
                kind: def.split('_').next().unwrap_or_default().to_string(),
                def,
                var: lets[i].clone(),
                args: l.args.iter().map(|a| var(a, lets)).collect(),
                shape: l.shape.clone(),
                node: if l.node.name.is_empty() {
                    format!("#{}", l.node.index)
                } else {
                    l.node.name.clone()
                },
                flops: l.flops,
            }
        })
        .collect();
    let parameters: Vec<Parameter> = t
        .params
        .iter()
        .zip(&text.params)
        .map(|(p, n)| Parameter {
            name: n.clone(),
            onnx: p.onnx.clone(),
            shape: p.shape.clone(),
        })
        .collect();
    let data = t
        .params
        .into_iter()
        .map(|p| match p.data {
            ConstData::RawF32(b) => Data::Raw(b),
            ConstData::F32(v) => Data::Floats(v),
            // `translate` makes parameters of f32 constants only.
            _ => Data::Floats(Vec::new().into()),
        })
        .collect::<Vec<_>>();
    let weights_bytes = parameters
        .iter()
        .map(|p| 4 * p.shape.iter().product::<usize>() as u64)
        .sum();
    Ok(Imported {
        name,
        entry: text.entry,
        program: text.text,
        input: (text.input, input.1),
        output_shape: t.output_shape,
        nodes,
        flops: t.layers.iter().map(|l| l.flops).sum(),
        layers,
        parameters,
        weights_bytes,
        data,
        written: Mutex::new(None),
    })
}

/// The model's name: its file name without the `.onnx`.
fn model_name(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "model".into())
}

impl Imported {
    /// The weights as tensors named as the program's parameters, in their order (a
    /// copy of the values).
    pub fn weights(&self) -> Weights {
        let tensors = self
            .parameters
            .iter()
            .zip(&self.data)
            .map(|(p, d)| Tensor {
                name: p.name.clone(),
                shape: p.shape.clone(),
                data: match d {
                    Data::Raw(b) => b
                        .chunks_exact(4)
                        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                        .collect(),
                    Data::Floats(v) => v.to_vec(),
                },
            })
            .collect();
        // The parameters' names are unique (the program's).
        Weights::from_tensors(tensors).unwrap_or_default()
    }

    /// Writes `DIR/NAME.rise` and `DIR/NAME.safetensors` (creating `DIR`), both or
    /// neither: each is written to a temporary file in `DIR` first, and only when
    /// both are complete are they renamed into place. The weights are written from
    /// the model's buffer, not copied.
    pub fn write(&self, dir: &Path) -> Result<(PathBuf, PathBuf), ImportError> {
        let fail = |path: &Path, message: String| {
            ImportErrorKind::Write {
                path: path.to_path_buf(),
                message,
            }
            .in_file(dir.join(format!("{}.onnx", self.name)))
        };
        std::fs::create_dir_all(dir).map_err(|e| fail(dir, e.to_string()))?;
        let rise = dir.join(format!("{}.rise", self.name));
        let weights = dir.join(format!("{}.safetensors", self.name));
        let temp = |p: &Path| {
            let mut name = std::ffi::OsString::from(".");
            name.push(p.file_name().unwrap_or_default());
            name.push(format!(".partial-{}", std::process::id()));
            p.with_file_name(name)
        };
        let (rise_tmp, weights_tmp) = (temp(&rise), temp(&weights));
        let cleanup = || {
            let _ = std::fs::remove_file(&rise_tmp);
            let _ = std::fs::remove_file(&weights_tmp);
        };
        let views = self.parameters.iter().zip(&self.data).map(|(p, d)| {
            let data = match d {
                Data::Raw(b) => Cow::Borrowed(&b[..]),
                Data::Floats(v) => Cow::Borrowed(bytemuck::cast_slice(&v[..])),
            };
            (
                p.name.clone(),
                F32View {
                    shape: &p.shape,
                    data,
                },
            )
        });
        if let Err(e) = write_views(views, &weights_tmp) {
            cleanup();
            return Err(fail(&weights, e.to_string()));
        }
        if let Err(e) = std::fs::write(&rise_tmp, &self.program) {
            cleanup();
            return Err(fail(&rise, e.to_string()));
        }
        if let Err(e) = std::fs::rename(&weights_tmp, &weights) {
            cleanup();
            return Err(fail(&weights, e.to_string()));
        }
        if let Err(e) = std::fs::rename(&rise_tmp, &rise) {
            cleanup();
            let _ = std::fs::remove_file(&weights);
            return Err(fail(&rise, e.to_string()));
        }
        if let Ok(mut w) = self.written.lock() {
            *w = Some((rise.clone(), weights.clone()));
        }
        Ok((rise, weights))
    }

    /// The import's JSON line: `{"model", "nodes", "layers", "parameters",
    /// "weights_bytes", "rise", "weights", "flops"}`. `parameters` counts the
    /// network's weight tensors (its def's parameters after the input); `rise` and
    /// `weights` are the files last [written](Imported::write) (before that, their
    /// file names).
    pub fn summary(&self) -> serde_json::Value {
        let (rise, weights) = self
            .written
            .lock()
            .ok()
            .and_then(|w| w.clone())
            .unwrap_or_else(|| {
                (
                    PathBuf::from(format!("{}.rise", self.name)),
                    PathBuf::from(format!("{}.safetensors", self.name)),
                )
            });
        serde_json::json!({
            "model": self.name,
            "nodes": self.nodes,
            "layers": self.layers.len(),
            "parameters": self.parameters.len(),
            "weights_bytes": self.weights_bytes,
            "rise": rise.display().to_string(),
            "weights": weights.display().to_string(),
            "flops": self.flops,
        })
    }
}
