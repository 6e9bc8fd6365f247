//! `elevate import MODEL.onnx [-o DIR] [--batch N]`: an ONNX model as a RISE program
//! and its weights (`spec/networks.md`), by [`elevate_onnx::import`].

use crate::{output, Failure};
use elevate_onnx::ImportOptions;
use std::path::Path;

/// The largest `--batch` taken.
pub const MAX_BATCH: i64 = 1 << 20;

/// `--batch N`: a batch size from 1 to [`MAX_BATCH`].
pub fn parse_batch(text: &str) -> Result<i64, String> {
    let t = text.trim();
    match t.parse::<i64>() {
        Ok(n) if (1..=MAX_BATCH).contains(&n) => Ok(n),
        Ok(n) => Err(format!("a batch is 1 to {MAX_BATCH}, found {n}")),
        Err(_) => Err(format!("expected a positive integer, found `{t}`")),
    }
}

/// Imports `model`, writes `DIR/NAME.rise` and `DIR/NAME.safetensors` (both or
/// neither; `DIR` is the current folder by default), and prints the import's JSON
/// line: `{"model", "nodes", "layers", "parameters", "weights_bytes", "rise",
/// "weights", "flops"}`.
pub fn import(model: &Path, dir: Option<&Path>, batch: Option<i64>) -> Result<(), Failure> {
    let imported = elevate_onnx::import(model, &ImportOptions { batch })
        .map_err(|e| Failure(e.to_string()))?;
    imported
        .write(dir.unwrap_or(Path::new(".")))
        .map_err(|e| Failure(e.to_string()))?;
    output::println(&imported.summary().to_string())
}
