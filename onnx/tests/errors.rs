//! Models the importer refuses: each a typed error that names the file and where in it
//! the problem is, never a panic, and nothing written.

use elevate_onnx::proto::{
    tensor_proto, tensor_shape_proto, type_proto, AttributeProto, GraphProto, ModelProto,
    NodeProto, OperatorSetIdProto, TensorProto, TensorShapeProto, TypeProto, ValueInfoProto,
};
use elevate_onnx::{import, ImportError, ImportErrorKind, ImportOptions};
use prost::Message;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../tests/onnx/fixtures/{name}.onnx"))
}

fn refused(name: &str) -> ImportError {
    let path = fixture(name);
    let e = import(&path, &ImportOptions::default())
        .map(|_| ())
        .expect_err(name);
    assert!(
        e.to_string().starts_with(&path.display().to_string()),
        "{name}: {e}"
    );
    e
}

#[test]
fn an_unsupported_operator_names_the_node() {
    let e = refused("bad_unsupported_op");
    let ImportErrorKind::Unsupported {
        node, attribute, ..
    } = &*e.kind
    else {
        panic!("{e}")
    };
    assert_eq!(
        (node.index, node.name.as_str(), node.op.as_str()),
        (1, "the_tanh", "Tanh")
    );
    assert_eq!(attribute, &None);
    assert!(
        e.to_string()
            .contains("node 1 `the_tanh` (Tanh): the operator `Tanh` is not supported"),
        "{e}"
    );
}

#[test]
fn an_unsupported_attribute_names_it() {
    let e = refused("bad_dilation");
    assert!(
        matches!(&*e.kind, ImportErrorKind::Unsupported { attribute: Some(a), .. } if a == "dilations"),
        "{e}"
    );
    assert!(
        e.to_string()
            .contains("node 0 `dilated` (Conv): attribute `dilations`: [2, 2]"),
        "{e}"
    );
    let e = refused("bad_gemm_alpha");
    assert!(
        e.to_string()
            .contains("node 0 `scaled` (Gemm): attribute `alpha`: 0.5: only 1 is supported"),
        "{e}"
    );
}

#[test]
fn dynamic_shapes_opsets_and_inputs_are_refused() {
    let e = refused("bad_dynamic");
    assert!(matches!(*e.kind, ImportErrorKind::Graph(_)), "{e}");
    assert!(e.to_string().contains("dynamic size 2"), "{e}");
    let e = refused("bad_opset");
    assert!(matches!(*e.kind, ImportErrorKind::Opset(_)), "{e}");
    assert!(e.to_string().contains("opset 11"), "{e}");
    let e = refused("bad_two_inputs");
    assert!(e.to_string().contains("2 inputs"), "{e}");
}

#[test]
fn a_cycle_names_a_node_on_it() {
    let e = refused("bad_cycle");
    let ImportErrorKind::Cycle { node } = &*e.kind else {
        panic!("{e}")
    };
    assert!(["a", "b"].contains(&node.name.as_str()), "{e}");
}

#[test]
fn a_weight_that_does_not_fill_its_shape() {
    let e = refused("bad_weight_size");
    let ImportErrorKind::WeightSize {
        tensor,
        expected,
        found,
        ..
    } = &*e.kind
    else {
        panic!("{e}")
    };
    assert_eq!((tensor.as_str(), *expected, *found), ("w", 54, 49));
}

#[test]
fn shapes_that_do_not_compute() {
    let e = refused("bad_shape");
    assert!(matches!(*e.kind, ImportErrorKind::Shape { .. }), "{e}");
    assert!(e.to_string().contains("node 0 `mismatch` (Conv)"), "{e}");
}

#[test]
fn truncated_and_foreign_files() {
    let e = refused("bad_truncated");
    assert!(matches!(*e.kind, ImportErrorKind::NotOnnx(_)), "{e}");
    let dir = std::env::temp_dir().join(format!("elevate-onnx-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, bytes) in [
        ("empty.onnx", &b""[..]),
        ("text.onnx", &b"def f(x: f32) = x\n"[..]),
        ("zeros.onnx", &[0u8; 64][..]),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        let e = import(&path, &ImportOptions::default())
            .map(|_| ())
            .unwrap_err();
        assert!(
            matches!(*e.kind, ImportErrorKind::NotOnnx(_)),
            "{name}: {e}"
        );
    }
    let e = import(&dir.join("missing.onnx"), &ImportOptions::default())
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(*e.kind, ImportErrorKind::Read(_)), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every prefix of a model, and the model with any one byte changed: an import or an
/// error, never a panic.
#[test]
fn no_cut_or_flipped_byte_panics() {
    let good = std::fs::read(fixture("mobilenet_block")).unwrap();
    let dir = std::env::temp_dir().join(format!("elevate-onnx-cuts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("m.onnx");
    let step = (good.len() / 400).max(1);
    for cut in (0..good.len()).step_by(step) {
        std::fs::write(&path, &good[..cut]).unwrap();
        assert!(
            import(&path, &ImportOptions::default()).is_err(),
            "cut at {cut}"
        );
    }
    for (i, at) in (0..good.len()).step_by(step).enumerate() {
        let mut bytes = good.clone();
        bytes[at] ^= [0x01u8, 0x80, 0xff][i % 3];
        std::fs::write(&path, &bytes).unwrap();
        let _ = import(&path, &ImportOptions::default());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

// Models made here, for what the fixtures do not cover.

fn tensor_type(dims: &[i64]) -> Option<TypeProto> {
    Some(TypeProto {
        value: Some(type_proto::Value::TensorType(type_proto::Tensor {
            elem_type: Some(tensor_proto::DataType::Float as i32),
            shape: Some(TensorShapeProto {
                dim: dims
                    .iter()
                    .map(|&d| tensor_shape_proto::Dimension {
                        value: Some(tensor_shape_proto::dimension::Value::DimValue(d)),
                        ..Default::default()
                    })
                    .collect(),
            }),
        })),
        ..Default::default()
    })
}

fn value_info(name: &str, dims: &[i64]) -> ValueInfoProto {
    ValueInfoProto {
        name: Some(name.into()),
        r#type: tensor_type(dims),
        ..Default::default()
    }
}

fn node(op: &str, inputs: &[&str], output: &str, attrs: Vec<AttributeProto>) -> NodeProto {
    NodeProto {
        op_type: Some(op.into()),
        name: Some(format!("my_{}", op.to_lowercase())),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![output.into()],
        attribute: attrs,
        ..Default::default()
    }
}

fn floats(name: &str, dims: &[i64], values: Vec<f32>) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        dims: dims.to_vec(),
        data_type: Some(tensor_proto::DataType::Float as i32),
        float_data: values,
        ..Default::default()
    }
}

/// Writes a model of one input `x` of `dims` and one output `y`.
fn write_model(
    file: &str,
    dims: &[i64],
    nodes: Vec<NodeProto>,
    inits: Vec<TensorProto>,
) -> PathBuf {
    let model = ModelProto {
        ir_version: Some(9),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(17),
        }],
        graph: Some(GraphProto {
            name: Some("g".into()),
            node: nodes,
            initializer: inits,
            input: vec![value_info("x", dims)],
            output: vec![ValueInfoProto {
                name: Some("y".into()),
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Default::default()
    };
    let dir = std::env::temp_dir().join(format!("elevate-onnx-made-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(file);
    std::fs::write(&path, model.encode_to_vec()).unwrap();
    path
}

fn int_attr(name: &str, v: i64) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        i: Some(v),
        r#type: Some(2),
        ..Default::default()
    }
}

fn error_of(path: &Path) -> String {
    import(path, &ImportOptions::default())
        .map(|_| ())
        .unwrap_err()
        .to_string()
}

#[test]
fn made_models_are_refused_with_located_errors() {
    let relu = || node("Relu", &["x"], "y", vec![]);
    // An attribute Relu does not have.
    let mut odd = relu();
    odd.attribute.push(int_attr("alpha", 1));
    let e = error_of(&write_model("odd.onnx", &[1, 2, 3, 3], vec![odd], vec![]));
    assert!(
        e.contains("node 0 `my_relu` (Relu): attribute `alpha`"),
        "{e}"
    );
    // A product by a tensor, not a number.
    let mul = node("Mul", &["x", "k"], "y", vec![]);
    let k = floats("k", &[2, 1, 1], vec![1.0, 2.0]);
    let e = error_of(&write_model("mul.onnx", &[1, 2, 3, 3], vec![mul], vec![k]));
    assert!(
        e.contains("(Mul): the constant `k` has shape [2, 1, 1]"),
        "{e}"
    );
    // A node of another domain.
    let mut ml = relu();
    ml.domain = Some("ai.onnx.ml".into());
    let e = error_of(&write_model("ml.onnx", &[1, 2, 3, 3], vec![ml], vec![]));
    assert!(e.contains("the domain `ai.onnx.ml`"), "{e}");
    // Softmax on an NCHW tensor.
    let e = error_of(&write_model(
        "sm.onnx",
        &[1, 2, 3, 3],
        vec![node("Softmax", &["x"], "y", vec![])],
        vec![],
    ));
    assert!(
        e.contains("(Softmax): its input has shape [1, 2, 3, 3]; NC (rank 2) is needed"),
        "{e}"
    );
    // A read of a value nothing makes.
    let e = error_of(&write_model(
        "dangling.onnx",
        &[1, 2, 3, 3],
        vec![node("Add", &["x", "z"], "y", vec![])],
        vec![],
    ));
    assert!(
        e.contains("it reads `z`, which no node, initializer or input makes"),
        "{e}"
    );
    // An output that does not depend on the input.
    let c = floats("c", &[1], vec![1.0]);
    let e = error_of(&write_model(
        "const.onnx",
        &[1, 2],
        vec![node("Identity", &["c"], "y", vec![])],
        vec![c],
    ));
    assert!(e.contains("does not depend on its input"), "{e}");
    // A kernel larger than its padded input.
    let w = floats("w", &[1, 1, 5, 5], vec![0.0; 25]);
    let e = error_of(&write_model(
        "big.onnx",
        &[1, 1, 3, 3],
        vec![node("Conv", &["x", "w"], "y", vec![])],
        vec![w],
    ));
    assert!(e.contains("(Conv): rows: the window of 5 is larger"), "{e}");
    // A Gemm whose sizes do not fit.
    let b = floats("b", &[3, 4], vec![0.0; 12]);
    let e = error_of(&write_model(
        "gemm.onnx",
        &[1, 5],
        vec![node("Gemm", &["x", "b"], "y", vec![])],
        vec![b],
    ));
    assert!(e.contains("(Gemm): a product of [1, 5] and [3, 4]"), "{e}");
    // Sizes whose products would overflow.
    let e = error_of(&write_model(
        "huge.onnx",
        &[1, 1 << 30, 1 << 30, 4],
        vec![relu()],
        vec![],
    ));
    assert!(e.contains("more than 2^40 elements"), "{e}");
    let ints = |name: &str, v: &[i64]| AttributeProto {
        name: Some(name.into()),
        ints: v.to_vec(),
        r#type: Some(7),
        ..Default::default()
    };
    let pool = node(
        "MaxPool",
        &["x"],
        "y",
        vec![ints("kernel_shape", &[1 << 40, 1])],
    );
    let e = error_of(&write_model("pool.onnx", &[1, 1, 4, 4], vec![pool], vec![]));
    assert!(
        e.contains("attribute `kernel_shape`: [1099511627776, 1] is too large"),
        "{e}"
    );
    let neg = floats("w", &[-1, 2], vec![]);
    let e = error_of(&write_model(
        "neg.onnx",
        &[1, 2],
        vec![node("MatMul", &["x", "w"], "y", vec![])],
        vec![neg],
    ));
    assert!(
        e.contains("tensor `w` (initializer 0) has a negative size"),
        "{e}"
    );
    // Training-mode BatchNormalization.
    let bn_inputs = ["x", "s", "b", "m", "v"];
    let params = ["s", "b", "m", "v"]
        .map(|n| floats(n, &[2], vec![1.0, 1.0]))
        .to_vec();
    let bn = node(
        "BatchNormalization",
        &bn_inputs,
        "y",
        vec![int_attr("training_mode", 1)],
    );
    let e = error_of(&write_model("bn.onnx", &[1, 2, 3, 3], vec![bn], params));
    assert!(
        e.contains("attribute `training_mode`: 1 is not supported"),
        "{e}"
    );
}
