//! A network's weights: named `f32` tensors in order, read from and written to
//! safetensors files (with the format's own crate).
//!
//! A file is read one tensor at a time straight into its `Vec<f32>`, so reading never
//! holds the file's bytes and the tensors at once; a file is written to a temporary
//! file in the same folder and renamed into place, so a reader never sees half of one.
//!
//! ```
//! use elevate_onnx::weights::{Tensor, Weights};
//! let dir = std::env::temp_dir().join(format!("elevate-weights-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let path = dir.join("w.safetensors");
//!
//! let mut weights = Weights::new();
//! weights.push(Tensor::new("conv1_weight", vec![2, 1, 1, 1], vec![0.5, -1.0]).unwrap()).unwrap();
//! weights.push(Tensor::new("conv1_bias", vec![2], vec![0.0, 1.0]).unwrap()).unwrap();
//! weights.write(&path).unwrap();
//!
//! let back = Weights::read(&path).unwrap();
//! assert_eq!(back, weights);
//! // The model's order is kept (safetensors itself sorts by name).
//! assert_eq!(back.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["conv1_weight", "conv1_bias"]);
//! assert_eq!(back.get("conv1_bias").unwrap().data, [0.0, 1.0]);
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

use safetensors::tensor::Metadata;
use safetensors::{Dtype, View};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The `__metadata__` key under which [`Weights::write`] records the tensors' order
/// (a JSON array of names): safetensors stores tensors sorted by name.
pub const ORDER_KEY: &str = "elevate.order";

/// Bytes the safetensors format allows its header (the crate's own limit).
const MAX_HEADER: u64 = 100_000_000;

/// One named tensor of `f32`s, row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    /// Its name (a RISE parameter's name, in a network's weights).
    pub name: String,
    /// Its sizes, outermost first.
    pub shape: Vec<usize>,
    /// Its values, row-major; as many as the shape's product.
    pub data: Vec<f32>,
}

impl Tensor {
    /// A tensor, if `data` holds as many values as `shape` says.
    ///
    /// ```
    /// use elevate_onnx::weights::Tensor;
    /// assert!(Tensor::new("b", vec![3], vec![1.0, 2.0, 3.0]).is_ok());
    /// let e = Tensor::new("b", vec![2, 2], vec![1.0]).unwrap_err();
    /// assert_eq!(e.to_string(), "tensor `b`: shape [2, 2] has 4 elements, the data 1");
    /// ```
    pub fn new(
        name: impl Into<String>,
        shape: Vec<usize>,
        data: Vec<f32>,
    ) -> Result<Tensor, WeightsError> {
        let name = name.into();
        match elements(&shape) {
            Some(n) if n == data.len() => Ok(Tensor { name, shape, data }),
            expected => Err(WeightsError::Shape {
                tensor: name,
                shape,
                expected,
                found: data.len(),
            }),
        }
    }

    /// How many values it holds.
    pub fn elements(&self) -> usize {
        self.data.len()
    }
}

/// The product of the sizes, if it fits in a `usize`.
fn elements(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d))
}

/// Tensors in order, each found by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Weights {
    tensors: Vec<Tensor>,
    index: HashMap<String, usize>,
}

/// Why weights could not be read, written or assembled; each names its file or tensor.
#[derive(Debug, thiserror::Error)]
pub enum WeightsError {
    /// The file could not be opened, read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The file is not a safetensors file (its header is missing or invalid).
    #[error("{}: not a safetensors file: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The file ends before the data its header describes (or goes on after it).
    #[error("{}: truncated: the header describes {expected} bytes, the file has {found}", path.display())]
    Truncated {
        /// The file.
        path: PathBuf,
        /// The bytes the header describes.
        expected: u64,
        /// The bytes the file has.
        found: u64,
    },
    /// A tensor of another type than `f32`.
    #[error("{}: tensor `{tensor}` is {dtype}, only F32 is supported", path.display())]
    Dtype {
        /// The file.
        path: PathBuf,
        /// The tensor.
        tensor: String,
        /// Its type, as safetensors names it.
        dtype: String,
    },
    /// Data that does not fill a tensor's shape.
    #[error("tensor `{tensor}`: shape {shape:?} has {} elements, the data {found}",
        expected.map_or_else(|| "too many".to_string(), |n| n.to_string()))]
    Shape {
        /// The tensor.
        tensor: String,
        /// Its shape.
        shape: Vec<usize>,
        /// The shape's product (`None`: it overflows).
        expected: Option<usize>,
        /// How many values there are.
        found: usize,
    },
    /// Two tensors of one name.
    #[error("two tensors are named `{0}`")]
    Duplicate(String),
    /// The safetensors crate refused to write the file.
    #[error("{}: cannot write: {message}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// What the crate said.
        message: String,
    },
}

impl Weights {
    /// No tensors.
    pub fn new() -> Weights {
        Weights::default()
    }

    /// The tensors, in this order; an error if two share a name.
    ///
    /// ```
    /// use elevate_onnx::weights::{Tensor, Weights};
    /// let t = Tensor::new("w", vec![1], vec![1.0]).unwrap();
    /// let e = Weights::from_tensors(vec![t.clone(), t]).unwrap_err();
    /// assert_eq!(e.to_string(), "two tensors are named `w`");
    /// ```
    pub fn from_tensors(tensors: Vec<Tensor>) -> Result<Weights, WeightsError> {
        let mut weights = Weights::new();
        for t in tensors {
            weights.push(t)?;
        }
        Ok(weights)
    }

    /// Adds a tensor after the others; an error if one has its name already.
    pub fn push(&mut self, tensor: Tensor) -> Result<(), WeightsError> {
        if self.index.contains_key(&tensor.name) {
            return Err(WeightsError::Duplicate(tensor.name));
        }
        self.index.insert(tensor.name.clone(), self.tensors.len());
        self.tensors.push(tensor);
        Ok(())
    }

    /// The tensor of this name.
    pub fn get(&self, name: &str) -> Option<&Tensor> {
        self.index.get(name).map(|&i| &self.tensors[i])
    }

    /// The tensors, in order.
    pub fn iter(&self) -> std::slice::Iter<'_, Tensor> {
        self.tensors.iter()
    }

    /// How many tensors there are.
    pub fn len(&self) -> usize {
        self.tensors.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.tensors.is_empty()
    }

    /// The bytes their values take (4 per value).
    pub fn bytes(&self) -> u64 {
        self.tensors.iter().map(|t| 4 * t.data.len() as u64).sum()
    }

    /// The tensors, in order.
    pub fn into_tensors(self) -> Vec<Tensor> {
        self.tensors
    }

    /// Reads a safetensors file of `F32` tensors, in the order [`Weights::write`]
    /// recorded (otherwise the file's). Each tensor is read straight into its values.
    ///
    /// ```
    /// use elevate_onnx::weights::{Weights, WeightsError};
    /// let path = std::env::temp_dir().join(format!("elevate-weights-bad-{}", std::process::id()));
    /// std::fs::write(&path, b"not a safetensors file").unwrap();
    /// let e = Weights::read(&path).unwrap_err();
    /// assert!(matches!(e, WeightsError::Invalid { .. }), "{e}");
    /// assert!(e.to_string().starts_with(&path.display().to_string()));
    /// # std::fs::remove_file(&path).unwrap();
    /// ```
    pub fn read(path: impl AsRef<Path>) -> Result<Weights, WeightsError> {
        let path = path.as_ref();
        let io = |source| WeightsError::Io {
            path: path.to_path_buf(),
            source,
        };
        let invalid = |message: String| WeightsError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        let mut file = File::open(path).map_err(io)?;
        let size = file.metadata().map_err(io)?.len();
        let mut n = [0u8; 8];
        if size < 8 {
            return Err(invalid(format!(
                "{size} bytes, too few for the header's length"
            )));
        }
        file.read_exact(&mut n).map_err(io)?;
        let n = u64::from_le_bytes(n);
        if n > MAX_HEADER || n > size - 8 {
            return Err(invalid(format!(
                "a header of {n} bytes in a file of {size}"
            )));
        }
        let mut header = vec![0u8; n as usize];
        file.read_exact(&mut header).map_err(io)?;
        // The crate's own header type, which checks the offsets, shapes and types.
        let metadata: Metadata =
            serde_json::from_slice(&header).map_err(|e| invalid(format!("its header: {e}")))?;
        let expected = 8 + n + metadata.data_len() as u64;
        if expected != size {
            return Err(WeightsError::Truncated {
                path: path.to_path_buf(),
                expected,
                found: size,
            });
        }
        let names = order(&metadata);
        let mut weights = Weights::new();
        for name in names {
            let Some(info) = metadata.info(&name) else {
                continue;
            };
            if info.dtype != Dtype::F32 {
                return Err(WeightsError::Dtype {
                    path: path.to_path_buf(),
                    tensor: name,
                    dtype: format!("{:?}", info.dtype),
                });
            }
            let (start, end) = info.data_offsets;
            let mut data = vec![0f32; (end - start) / 4];
            file.seek(SeekFrom::Start(8 + n + start as u64))
                .map_err(io)?;
            file.read_exact(bytemuck::cast_slice_mut(&mut data))
                .map_err(io)?;
            if cfg!(target_endian = "big") {
                for v in &mut data {
                    *v = f32::from_bits(u32::from_le(v.to_bits()));
                }
            }
            weights.push(Tensor::new(name, info.shape.clone(), data)?)?;
        }
        Ok(weights)
    }

    /// Writes the tensors to a safetensors file (`F32`, their order recorded in the
    /// header's `__metadata__` under [`ORDER_KEY`]), atomically: to a temporary file
    /// in the same folder, renamed into place, so that `path` is either as it was or
    /// complete.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), WeightsError> {
        let views = self.tensors.iter().map(|t| {
            (
                t.name.clone(),
                F32View {
                    shape: &t.shape,
                    data: Cow::Borrowed(bytemuck::cast_slice(&t.data)),
                },
            )
        });
        write_views(views, path.as_ref())
    }
}

impl<'a> IntoIterator for &'a Weights {
    type Item = &'a Tensor;
    type IntoIter = std::slice::Iter<'a, Tensor>;
    fn into_iter(self) -> Self::IntoIter {
        self.tensors.iter()
    }
}

/// The names in the recorded order, if the file has one that names each tensor once;
/// otherwise in the file's order.
fn order(metadata: &Metadata) -> Vec<String> {
    let stored = metadata.offset_keys();
    let recorded = metadata
        .metadata()
        .as_ref()
        .and_then(|m| m.get(ORDER_KEY))
        .and_then(|text| serde_json::from_str::<Vec<String>>(text).ok());
    match recorded {
        Some(mut names) if names.len() == stored.len() => {
            let mut sorted = names.clone();
            sorted.sort();
            let mut expected = stored.clone();
            expected.sort();
            if sorted == expected {
                std::mem::take(&mut names)
            } else {
                stored
            }
        }
        _ => stored,
    }
}

/// An `f32` tensor's bytes as the safetensors crate writes them: borrowed where they
/// are little-endian already (the weights of an ONNX model, a little-endian host's
/// `f32`s), so that writing copies no tensor whole.
pub(crate) struct F32View<'a> {
    pub(crate) shape: &'a [usize],
    pub(crate) data: Cow<'a, [u8]>,
}

impl View for F32View<'_> {
    fn dtype(&self) -> Dtype {
        Dtype::F32
    }
    fn shape(&self) -> &[usize] {
        self.shape
    }
    fn data(&self) -> Cow<'_, [u8]> {
        if cfg!(target_endian = "big") {
            // The host's order is not the file's: swap every value's bytes.
            let mut swapped = self.data.to_vec();
            for v in swapped.chunks_exact_mut(4) {
                v.reverse();
            }
            return Cow::Owned(swapped);
        }
        Cow::Borrowed(&self.data)
    }
    fn data_len(&self) -> usize {
        self.data.len()
    }
}

/// Writes named views to `path` through a temporary file in its folder.
pub(crate) fn write_views<'a>(
    views: impl Iterator<Item = (String, F32View<'a>)>,
    path: &Path,
) -> Result<(), WeightsError> {
    let views: Vec<(String, F32View<'a>)> = views.collect();
    let mut seen = std::collections::HashSet::new();
    for (name, _) in &views {
        if !seen.insert(name.as_str()) {
            return Err(WeightsError::Duplicate(name.clone()));
        }
    }
    let names: Vec<&str> = views.iter().map(|(n, _)| n.as_str()).collect();
    let order = serde_json::to_string(&names).unwrap_or_default();
    let metadata = HashMap::from([(ORDER_KEY.to_string(), order)]);
    // The crate writes a temporary file beside `path` and renames it into place; a
    // bare file name's folder is the current one.
    let path = match path.parent() {
        Some(p) if p.as_os_str().is_empty() => Path::new(".").join(path),
        _ => path.to_path_buf(),
    };
    safetensors::serialize_to_file(views, Some(metadata), &path).map_err(|e| match e {
        safetensors::SafeTensorError::IoError(source) => WeightsError::Io {
            path: path.clone(),
            source,
        },
        other => WeightsError::Write {
            path: path.clone(),
            message: other.to_string(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("elevate-weights-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn sample() -> Weights {
        Weights::from_tensors(vec![
            Tensor::new("z", vec![2, 3], (0..6).map(|i| i as f32 * 0.5).collect()).unwrap(),
            Tensor::new("a", vec![1], vec![-2.5]).unwrap(),
            Tensor::new("empty", vec![0, 4], vec![]).unwrap(),
        ])
        .unwrap()
    }

    #[test]
    fn round_trip_keeps_order_and_values() {
        let d = dir("round");
        let p = d.join("w.safetensors");
        let w = sample();
        w.write(&p).unwrap();
        let back = Weights::read(&p).unwrap();
        assert_eq!(back, w);
        assert_eq!(back.bytes(), 28);
        // No temporary file is left beside it.
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn truncated_and_garbage_files_are_errors() {
        let d = dir("trunc");
        let p = d.join("w.safetensors");
        sample().write(&p).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        let cut = d.join("cut.safetensors");
        std::fs::write(&cut, &bytes[..bytes.len() - 3]).unwrap();
        let e = Weights::read(&cut).unwrap_err();
        assert!(matches!(e, WeightsError::Truncated { .. }), "{e}");
        assert!(e.to_string().contains("cut.safetensors"), "{e}");
        for n in [0, 4, 8, 20] {
            std::fs::write(&cut, &bytes[..n]).unwrap();
            let e = Weights::read(&cut).unwrap_err();
            assert!(matches!(e, WeightsError::Invalid { .. }), "{n}: {e}");
        }
        std::fs::write(&cut, [255u8; 16]).unwrap();
        assert!(Weights::read(&cut).is_err());
        let e = Weights::read(d.join("missing")).unwrap_err();
        assert!(matches!(e, WeightsError::Io { .. }), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn other_dtypes_are_named() {
        let d = dir("dtype");
        let p = d.join("i.safetensors");
        let data = [1u8, 0, 0, 0, 2, 0, 0, 0];
        let view = safetensors::tensor::TensorView::new(Dtype::I32, vec![2], &data).unwrap();
        safetensors::serialize_to_file([("ints", view)], None, &p).unwrap();
        let e = Weights::read(&p).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: tensor `ints` is I32, only F32 is supported",
                p.display()
            )
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_failed_write_leaves_nothing() {
        let d = dir("fail");
        let e = sample()
            .write(d.join("no/such/dir/w.safetensors"))
            .unwrap_err();
        assert!(matches!(e, WeightsError::Io { .. }), "{e}");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
