//! A GPU bundle: what a runner on a machine with a GPU and no LLVM needs to launch a
//! compiled program and check it (`scripts/gpu-check`): each kernel's PTX, the launch
//! manifest, the inputs and the expected result as raw little-endian arrays.

use super::args::{Arg, Arguments};
use super::device::GpuCompiled;
use crate::error::Error;
use elevate_rise::types::TypeKind;
use elevate_rise::Value;
use serde_json::json;

/// The version of the bundle's format, in `manifest.json`'s `format`.
pub const BUNDLE_FORMAT: &str = "elevate-gpu-bundle/1";

/// The files of a bundle: names (flat, in one folder) and contents.
#[derive(Clone, Debug, PartialEq)]
pub struct Bundle {
    /// `manifest.json`, a `.ptx` per kernel module, `argN.bin` per input buffer,
    /// `expectedN.bin` per result buffer where the expected result was given.
    pub files: Vec<(String, Vec<u8>)>,
}

impl GpuCompiled {
    /// The bundle of this program on `inputs`, with the `expected` result (the
    /// interpreter's, say) where given.
    ///
    /// `manifest.json` holds the launch manifest ([`GpuCompiled::manifest`]) and:
    /// `format` ([`BUNDLE_FORMAT`]); `kernels` (`module`, `file`); `buffers`, one per
    /// memref argument in order (`argument`, `role`: `input`, `output` or `trap`,
    /// `scalar`, `shape`, `file` for inputs); `scalars` (`argument`, `scalar`,
    /// `bits`: the value in the low bytes of a 64-bit word); `expected` (`argument`,
    /// `file`); `flops` of one call; `tolerance` (relative, as `elevate run --check`).
    pub fn bundle(&self, inputs: &[Value], expected: Option<&Value>) -> Result<Bundle, Error> {
        let mut args = Arguments::new(&self.payload, &self.limits, inputs)?;
        let mut files = Vec::new();
        let mut kernels = Vec::new();
        for k in self.kernels() {
            let file = format!("{}.ptx", k.module);
            kernels.push(json!({"module": k.module, "file": file}));
            files.push((file, k.text.clone().into_bytes()));
        }
        let mut buffers = Vec::new();
        let mut scalars = Vec::new();
        for (argument, arg) in args.order.iter().enumerate() {
            match *arg {
                Arg::Buffer(k) => {
                    let b = &args.buffers[k];
                    let role = if args.outputs.contains(&k) {
                        "output"
                    } else if args.trap == Some(k) {
                        "trap"
                    } else {
                        "input"
                    };
                    let mut entry = json!({
                        "argument": argument,
                        "role": role,
                        "scalar": b.scalar().name(),
                        "shape": b.dims(),
                    });
                    if role == "input" {
                        let file = format!("arg{argument}.bin");
                        entry["file"] = json!(file);
                        files.push((file, b.bytes().to_vec()));
                    }
                    buffers.push(entry);
                }
                Arg::Scalar(k) => {
                    let scalar = self
                        .payload
                        .params
                        .iter()
                        .filter(|t| matches!(t.kind(), TypeKind::Scalar(_)))
                        .nth(k)
                        .map(|t| t.to_string())
                        .unwrap_or_default();
                    scalars.push(
                        json!({"argument": argument, "scalar": scalar, "bits": args.scalars[k]}),
                    );
                }
            }
        }
        let mut expected_files = Vec::new();
        if let Some(value) = expected {
            args.set_output(&self.payload, value)?;
            for k in args.outputs.clone() {
                let argument = args
                    .order
                    .iter()
                    .position(|a| *a == Arg::Buffer(k))
                    .unwrap_or(k);
                let file = format!("expected{argument}.bin");
                expected_files.push(json!({"argument": argument, "file": file}));
                files.push((file, args.buffers[k].bytes().to_vec()));
            }
        }
        let mut manifest = self.manifest();
        manifest["format"] = json!(BUNDLE_FORMAT);
        manifest["kernels"] = json!(kernels);
        manifest["buffers"] = json!(buffers);
        manifest["scalars"] = json!(scalars);
        manifest["expected"] = json!(expected_files);
        manifest["flops"] = json!(self.payload.flops);
        manifest["tolerance"] = json!(1e-4);
        let text = serde_json::to_string_pretty(&manifest)
            .map_err(|e| Error::input(format!("the manifest: {e}")))?;
        files.insert(0, ("manifest.json".into(), text.into_bytes()));
        Ok(Bundle { files })
    }
}
