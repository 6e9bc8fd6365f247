//! Generates the ONNX protobuf types from `proto/onnx.proto` at build time, in pure
//! Rust (protox parses the file, prost-build writes the types): no `protoc` to install.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "proto/onnx.proto";
    println!("cargo:rerun-if-changed={proto}");
    let descriptors = protox::compile([proto], ["proto"])?;
    prost_build::Config::new()
        // Every `bytes` field as `bytes::Bytes`: decoding from a `Bytes` buffer then
        // slices it instead of copying, so a model's weights (`raw_data`) are held once.
        .bytes(["."])
        .compile_fds(descriptors)?;
    Ok(())
}
