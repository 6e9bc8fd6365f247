//! `elevate-onnx`: ONNX models in, a RISE program and its weights out.
