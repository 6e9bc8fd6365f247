//! Why a model could not be imported: every error names the file and, where there is
//! one, the node (its index in the graph, its name and its operator), the attribute or
//! the tensor.

use std::fmt;
use std::path::PathBuf;

/// A node of the graph, as errors name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRef {
    /// Its position in the graph's list of nodes.
    pub index: usize,
    /// Its name (empty if it has none).
    pub name: String,
    /// Its operator (`Conv`, `Relu`, ...).
    pub op: String,
}

impl fmt::Display for NodeRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.name.is_empty() {
            write!(f, "node {} (unnamed, {})", self.index, self.op)
        } else {
            write!(f, "node {} `{}` ({})", self.index, self.name, self.op)
        }
    }
}

/// An import that failed, and the file it failed on.
///
/// ```
/// use elevate_onnx::{import, ImportOptions, ImportErrorKind};
/// let path = std::env::temp_dir().join(format!("elevate-not-onnx-{}.onnx", std::process::id()));
/// std::fs::write(&path, b"\xff\xff\xff not a model").unwrap();
/// let e = import(&path, &ImportOptions::default()).unwrap_err();
/// assert!(matches!(*e.kind, ImportErrorKind::NotOnnx(_)));
/// assert!(e.to_string().starts_with(&format!("{}: not an ONNX model", path.display())), "{e}");
/// # std::fs::remove_file(&path).unwrap();
/// ```
#[derive(Debug, thiserror::Error)]
#[error("{}: {kind}", file.display())]
pub struct ImportError {
    /// The model's file.
    pub file: PathBuf,
    /// What went wrong (boxed: errors are returned everywhere, and rare).
    pub kind: Box<ImportErrorKind>,
}

/// What went wrong in an import.
#[derive(Debug, thiserror::Error)]
pub enum ImportErrorKind {
    /// The file could not be read.
    #[error("cannot read it: {0}")]
    Read(std::io::Error),
    /// The file is not an ONNX model (or is truncated: its protobuf does not decode).
    #[error("not an ONNX model (a truncated or corrupt file?): {0}")]
    NotOnnx(String),
    /// The model imports an operator set this importer does not cover.
    #[error("{0}")]
    Opset(String),
    /// A node uses an operator, an attribute or an attribute's value that is not
    /// supported; the model is refused as a whole.
    #[error("{node}: {}{message}", attribute.as_ref().map(|a| format!("attribute `{a}`: ")).unwrap_or_default())]
    Unsupported {
        /// The node.
        node: NodeRef,
        /// The attribute, if one is to blame.
        attribute: Option<String>,
        /// What is not supported.
        message: String,
    },
    /// The graph's inputs, outputs or connections are not what an importable network
    /// has (a value no node computes, two inputs, a symbolic size other than the batch).
    #[error("{0}")]
    Graph(String),
    /// Nodes that depend on each other in a circle.
    #[error("{node}: the graph has a cycle through it (its inputs depend on its output)")]
    Cycle {
        /// A node on the cycle.
        node: NodeRef,
    },
    /// A weight whose data does not fill its shape.
    #[error("tensor `{tensor}` (initializer {index}): shape {shape:?} needs {expected} values, the data has {found}")]
    WeightSize {
        /// The tensor's name.
        tensor: String,
        /// Its position among the initializers (or the node that makes it).
        index: usize,
        /// Its shape.
        shape: Vec<i64>,
        /// The values the shape needs.
        expected: u64,
        /// The values the data has.
        found: u64,
    },
    /// A node whose inputs' shapes do not fit it (or whose result has no size).
    #[error("{node}: {message}")]
    Shape {
        /// The node.
        node: NodeRef,
        /// What does not fit.
        message: String,
    },
    /// The outputs could not be written.
    #[error("cannot write {}: {message}", path.display())]
    Write {
        /// The file that could not be written.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The program made does not type-check: a bug of the importer, reported rather
    /// than written.
    #[error("the RISE program made does not type-check (an importer bug): {0}")]
    Program(String),
}

impl ImportErrorKind {
    /// The error, located in `file`.
    pub fn in_file(self, file: impl Into<PathBuf>) -> ImportError {
        ImportError {
            file: file.into(),
            kind: Box::new(self),
        }
    }
}

/// An unsupported attribute (or attribute value) of `node`.
pub(crate) fn unsupported_attr(
    node: &NodeRef,
    attribute: &str,
    message: impl Into<String>,
) -> ImportErrorKind {
    ImportErrorKind::Unsupported {
        node: node.clone(),
        attribute: Some(attribute.to_string()),
        message: message.into(),
    }
}

/// Something of `node` that is not supported, not an attribute's fault.
pub(crate) fn unsupported(node: &NodeRef, message: impl Into<String>) -> ImportErrorKind {
    ImportErrorKind::Unsupported {
        node: node.clone(),
        attribute: None,
        message: message.into(),
    }
}

/// Shapes that do not fit `node`.
pub(crate) fn shape(node: &NodeRef, message: impl Into<String>) -> ImportErrorKind {
    ImportErrorKind::Shape {
        node: node.clone(),
        message: message.into(),
    }
}
