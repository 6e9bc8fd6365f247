//! BatchNorm folded into the convolution before it, when the weights are bound: a
//! convolution `w` followed by an inference BatchNorm (`(v - mean) * g + bias`, `g =
//! scale / sqrt(var + eps)`, per channel) is the convolution of `w * g` (each output
//! channel's weights scaled) followed by a bias of `bias - mean * g`. The folded
//! weights and the bias are new weights of the network, computed once; the BatchNorm
//! layer becomes a bias layer, which `network` fuses with what follows it.
//!
//! The per-channel scale and shift are read off the BatchNorm's own definition, run by
//! the interpreter on two pixels per channel (0 and 1): whatever affine map per
//! channel the layer computes, the fold computes the same.

use super::strategy::{Assigned, NetworkStrategy};
use super::{dims, nested_value, Layer, Network, Param, Source};
use elevate_rise::Program;
use std::collections::HashMap;

/// The bias layer a folded BatchNorm becomes.
const BIAS: &str = "bias_foldedbatchnorm";

/// The bias layer's definition (as `import` writes `bias_nchw`).
const BIAS_DEF: &str = "def bias_foldedbatchnorm(x: n.k.h.w.f32, b: k.f32) : n.k.h.w.f32 =
  x |> map(fun(img => zip(img, b) |> map(fun(p => fst(p) |> map(map(fun(v => v + snd(p))))))))
";

/// A tensor: name, shape, values.
pub(crate) type Tensor = (String, Vec<usize>, Vec<f32>);

/// `network` with every BatchNorm that `strategy`'s `network` part gives its library
/// schedule, and that alone reads a convolution without a bias (given its library
/// schedule or a strategy of its own), folded into that convolution; the new weights
/// to bind with the others. `None` where there is none.
pub(crate) fn fold_batchnorms(
    network: &Network,
    strategy: &NetworkStrategy,
    weights: &HashMap<String, (Vec<usize>, Vec<f32>)>,
) -> Result<Option<(Network, Vec<Tensor>)>, String> {
    let layers = network.layers();
    let readers = network.readers();
    let library = |i: usize| strategy.assigned(i, &layers[i].kind) == Assigned::Library;
    // A convolution given its own strategy computes the same with folded weights;
    // one left to `defaultLowering` alone (no `network` part) keeps its own.
    let lowered = |i: usize| strategy.assigned(i, &layers[i].kind) == Assigned::Lowering;
    let mut folded = network.clone();
    let mut tensors = Vec::new();
    for i in 1..layers.len() {
        let (conv, bn) = (&layers[i - 1], &layers[i]);
        let (Some(Source::Weight(w)), Some(rest)) = (conv.args.get(1), bn.args.get(1..)) else {
            continue;
        };
        let foldable = conv.kind == "conv"
            && bn.kind == "batchnorm"
            && conv.args.len() == 2
            && bn.args.first() == Some(&Source::Layer(i - 1))
            && readers[i - 1] == 1
            && rest.iter().all(|a| matches!(a, Source::Weight(_)))
            && !lowered(i - 1)
            && library(i);
        if !foldable {
            continue;
        }
        let (scale, shift) = affine(network, bn, weights)?;
        let wparam = &network.weights()[*w];
        let (shape, values) = weights
            .get(&wparam.name)
            .ok_or_else(|| format!("no tensor `{}` (of type {})", wparam.name, wparam.ty))?;
        let per_channel = values.len() / scale.len().max(1);
        let scaled: Vec<f32> = values
            .iter()
            .enumerate()
            .map(|(k, v)| v * scale[k / per_channel.max(1)])
            .collect();
        let w_name = fresh(&folded, &format!("{}_folded", wparam.name));
        folded.weights.push(Param {
            name: w_name.clone(),
            ty: wparam.ty.clone(),
        });
        tensors.push((w_name, shape.clone(), scaled));
        let new_w = folded.weights.len() - 1;
        let b_name = fresh(&folded, &format!("{}_shift", bn.name));
        let bias_ty = network.type_of(rest[0]).clone();
        folded.weights.push(Param {
            name: b_name.clone(),
            ty: bias_ty,
        });
        tensors.push((b_name, vec![shift.len()], shift));
        let new_b = folded.weights.len() - 1;
        folded.layers[i - 1].args[1] = Source::Weight(new_w);
        folded.layers[i] = Layer {
            name: bn.name.clone(),
            def: BIAS.to_string(),
            kind: "bias".to_string(),
            args: vec![Source::Layer(i - 1), Source::Weight(new_b)],
            ty: bn.ty.clone(),
        };
    }
    if tensors.is_empty() {
        return Ok(None);
    }
    folded.extra_definitions = BIAS_DEF.to_string();
    Ok(Some((folded, tensors)))
}

/// A parameter name not taken.
fn fresh(network: &Network, want: &str) -> String {
    let taken =
        |n: &str| network.weights().iter().any(|p| p.name == n) || network.input().name == n;
    let mut name = want.to_string();
    let mut k = 1;
    while taken(&name) {
        name = format!("{want}{k}");
        k += 1;
    }
    name
}

/// The per-channel `(scale, shift)` of the BatchNorm layer `bn`: its definition run on
/// two pixels per channel, 0 and 1.
fn affine(
    network: &Network,
    bn: &Layer,
    weights: &HashMap<String, (Vec<usize>, Vec<f32>)>,
) -> Result<(Vec<f32>, Vec<f32>), String> {
    let channels = dims(&bn.ty).get(1).copied().unwrap_or(1).max(1) as usize;
    let mut params = vec![format!("x: 1.{channels}.1.2.f32")];
    let mut args = vec!["x".to_string()];
    let mut values = vec![{
        let pixels: Vec<f32> = (0..channels).flat_map(|_| [0.0, 1.0]).collect();
        nested_value(&[1, channels as i64, 1, 2], &pixels)
    }];
    for (k, arg) in bn.args.iter().skip(1).enumerate() {
        let Source::Weight(w) = arg else {
            return Err("a BatchNorm reads only weights besides its input".to_string());
        };
        let param = &network.weights()[*w];
        let (_, data) = weights
            .get(&param.name)
            .ok_or_else(|| format!("no tensor `{}` (of type {})", param.name, param.ty))?;
        params.push(format!("p{k}: {}", param.ty));
        args.push(format!("p{k}"));
        let d = dims(&param.ty);
        if d.iter().product::<i64>() as usize != data.len() {
            return Err(format!(
                "`{}` has {} values for {}",
                param.name,
                data.len(),
                param.ty
            ));
        }
        values.push(nested_value(&d, data));
    }
    let source = format!(
        "{}\ndef probe({}) = {}({})\n",
        network.definitions_text(),
        params.join(", "),
        bn.def,
        args.join(", ")
    );
    let program = Program::load(&source, None).map_err(|e| e.to_string())?;
    let out = elevate_rise::evaluate(&program.entry().term, &Default::default(), &values)
        .map_err(|e| e.to_string())?;
    let flat = super::f32_values(&out).map_err(|e| e.to_string())?;
    if flat.len() != 2 * channels {
        return Err(format!(
            "the BatchNorm `{}` gave {} values for {channels} channels",
            bn.def,
            flat.len()
        ));
    }
    let shift: Vec<f32> = flat.chunks(2).map(|p| p[0]).collect();
    let scale: Vec<f32> = flat.chunks(2).map(|p| p[1] - p[0]).collect();
    Ok((scale, shift))
}
