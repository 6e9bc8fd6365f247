//! A node's attributes, read by the type each operator expects; an attribute the
//! operator does not know, or that the importer does not support, is an error that
//! names it.

use crate::error::{unsupported_attr, ImportErrorKind, NodeRef};
use crate::proto::{AttributeProto, TensorProto};

/// The attributes of one node.
pub(crate) struct Attrs<'a> {
    node: &'a NodeRef,
    list: &'a [AttributeProto],
}

impl<'a> Attrs<'a> {
    /// The attributes of `node`, refusing any not in `allowed` (the operator's
    /// attributes the importer reads).
    pub(crate) fn new(
        node: &'a NodeRef,
        list: &'a [AttributeProto],
        allowed: &[&str],
    ) -> Result<Attrs<'a>, ImportErrorKind> {
        for a in list {
            if !allowed.contains(&a.name()) {
                return Err(unsupported_attr(
                    node,
                    a.name(),
                    format!(
                        "{} has no such attribute that this importer supports{}",
                        node.op,
                        if allowed.is_empty() {
                            String::new()
                        } else {
                            format!(" (it reads {})", allowed.join(", "))
                        }
                    ),
                ));
            }
            if a.ref_attr_name.is_some() {
                return Err(unsupported_attr(
                    node,
                    a.name(),
                    "a reference to a function's attribute",
                ));
            }
        }
        Ok(Attrs { node, list })
    }

    fn get(&self, name: &str) -> Option<&'a AttributeProto> {
        self.list.iter().find(|a| a.name() == name)
    }

    /// An error about the attribute `name`.
    pub(crate) fn error(&self, name: &str, message: impl Into<String>) -> ImportErrorKind {
        unsupported_attr(self.node, name, message)
    }

    /// An integer attribute, or `default`.
    pub(crate) fn int(&self, name: &str, default: i64) -> i64 {
        self.get(name).and_then(|a| a.i).unwrap_or(default)
    }

    /// An integer attribute that must be `expected` (its default, or the one value the
    /// importer supports).
    pub(crate) fn int_is(&self, name: &str, expected: i64) -> Result<(), ImportErrorKind> {
        match self.get(name).and_then(|a| a.i) {
            Some(v) if v != expected => {
                Err(self.error(name, format!("{v} is not supported (only {expected})")))
            }
            _ => Ok(()),
        }
    }

    /// A float attribute, or `default`.
    pub(crate) fn float(&self, name: &str, default: f32) -> f32 {
        self.get(name).and_then(|a| a.f).unwrap_or(default)
    }

    /// A list of integers, if given.
    pub(crate) fn ints(&self, name: &str) -> Option<&'a [i64]> {
        self.get(name).map(|a| a.ints.as_slice())
    }

    /// A string attribute, if given.
    pub(crate) fn string(&self, name: &str) -> Option<String> {
        self.get(name)
            .and_then(|a| a.s.as_ref())
            .map(|s| String::from_utf8_lossy(s).into_owned())
    }

    /// A tensor attribute, if given.
    pub(crate) fn tensor(&self, name: &str) -> Option<&'a TensorProto> {
        self.get(name).and_then(|a| a.t.as_ref())
    }

    /// A list of floats, if given.
    pub(crate) fn floats(&self, name: &str) -> Option<&'a [f32]> {
        self.get(name).map(|a| a.floats.as_slice())
    }

    /// Whether the attribute is given.
    pub(crate) fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// `len` non-negative integers (`default` each if not given).
    pub(crate) fn sizes(
        &self,
        name: &str,
        len: usize,
        default: usize,
    ) -> Result<Vec<usize>, ImportErrorKind> {
        let Some(v) = self.ints(name) else {
            return Ok(vec![default; len]);
        };
        if v.len() != len {
            return Err(self.error(
                name,
                format!("{v:?}: {len} values are needed (2-D windows)"),
            ));
        }
        v.iter()
            .map(|&x| {
                usize::try_from(x).map_err(|_| self.error(name, format!("{v:?}: a negative value")))
            })
            .collect()
    }
}

/// The windows of a convolution or a pooling: kernel, strides and pads (top, left,
/// bottom, right) of a 2-D window over an `h x w` input, from `kernel_shape`,
/// `strides`, `pads`, `auto_pad` and `dilations`.
pub(crate) struct WindowAttrs {
    pub kernel: [usize; 2],
    pub strides: [usize; 2],
    pub pads: [usize; 4],
}

/// Reads the window attributes; `kernel` is the kernel the weights give (convolution)
/// or `None` (pooling: `kernel_shape` is required).
pub(crate) fn window(
    a: &Attrs<'_>,
    kernel: Option<[usize; 2]>,
    input: [usize; 2],
) -> Result<WindowAttrs, ImportErrorKind> {
    let kernel = match (kernel, a.ints("kernel_shape")) {
        (Some(k), None) => k,
        (Some(k), Some(_)) => {
            let given = a.sizes("kernel_shape", 2, 1)?;
            if given != k {
                return Err(a.error(
                    "kernel_shape",
                    format!("{given:?} differs from the weights' {k:?}"),
                ));
            }
            k
        }
        (None, Some(_)) => {
            let k = a.sizes("kernel_shape", 2, 1)?;
            [k[0], k[1]]
        }
        (None, None) => return Err(a.error("kernel_shape", "is required")),
    };
    // Bounds that keep the windows' arithmetic within a machine word.
    const MAX: usize = 1 << 24;
    if kernel.iter().any(|&k| k > MAX) {
        return Err(a.error("kernel_shape", format!("{kernel:?} is too large")));
    }
    if kernel.contains(&0) {
        return Err(a.error("kernel_shape", format!("{kernel:?} has a size 0")));
    }
    let s = a.sizes("strides", 2, 1)?;
    if s.iter().any(|&s| s > MAX) {
        return Err(a.error("strides", format!("{s:?} is too large")));
    }
    if s.contains(&0) {
        return Err(a.error("strides", format!("{s:?} has a stride 0")));
    }
    let strides = [s[0], s[1]];
    let d = a.sizes("dilations", 2, 1)?;
    if d != [1, 1] {
        return Err(a.error(
            "dilations",
            format!("{d:?}: only dilations 1 are supported"),
        ));
    }
    let auto = a.string("auto_pad").unwrap_or_else(|| "NOTSET".into());
    let pads = match auto.as_str() {
        "NOTSET" => {
            let p = a.sizes("pads", 4, 0)?;
            [p[0], p[1], p[2], p[3]]
        }
        "VALID" => [0; 4],
        "SAME_UPPER" | "SAME_LOWER" => {
            // ONNX: the output is ceil(size / stride); the padding's odd element goes
            // at the end (upper) or the beginning (lower).
            let mut pads = [0; 4];
            for axis in 0..2 {
                let out = input[axis].div_ceil(strides[axis]);
                let total = ((out.saturating_sub(1)) * strides[axis] + kernel[axis])
                    .saturating_sub(input[axis]);
                let (small, large) = (total / 2, total - total / 2);
                let (lo, hi) = if auto == "SAME_UPPER" {
                    (small, large)
                } else {
                    (large, small)
                };
                pads[axis] = lo;
                pads[axis + 2] = hi;
            }
            pads
        }
        other => return Err(a.error("auto_pad", format!("`{other}` is not an auto_pad"))),
    };
    for axis in 0..2 {
        for p in [pads[axis], pads[axis + 2]] {
            if p >= kernel[axis] {
                return Err(a.error(
                    "pads",
                    format!(
                        "{pads:?}: a padding of {p} is not smaller than the kernel's {}",
                        kernel[axis]
                    ),
                ));
            }
        }
    }
    Ok(WindowAttrs {
        kernel,
        strides,
        pads,
    })
}
