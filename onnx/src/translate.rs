//! From ONNX nodes to layers: every node is checked (its operator, attributes and the
//! shapes of its inputs) and becomes zero or more layers, each a call of a def on the
//! network's input, its weights or earlier layers. Identity and Dropout make no layer:
//! their output is another name for their input.

use crate::defs::Def;
use crate::error::{shape as shape_error, unsupported, ImportErrorKind, NodeRef};
use crate::model::{fits, type_name, Const, ConstData, Model, Node};
use std::collections::{HashMap, HashSet};
use std::path::Path;

mod ops;

/// What a layer reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arg {
    /// The network's input.
    Input,
    /// A weight: the network's parameter of this index.
    Param(usize),
    /// An earlier layer's result.
    Layer(usize),
}

/// A call of a def.
#[derive(Debug, Clone)]
pub(crate) struct Layer {
    pub def: Def,
    pub args: Vec<Arg>,
    /// The result's shape.
    pub shape: Vec<usize>,
    /// The node it comes from.
    pub node: NodeRef,
    /// Floating-point operations (a multiply-add is two).
    pub flops: f64,
}

/// A weight the network takes as a parameter.
#[derive(Debug, Clone)]
pub(crate) struct Param {
    /// The initializer's (or `Constant` output's) name.
    pub onnx: String,
    /// The shape the def reads it as (the model's, without axes of size 1 where a
    /// bias is broadcast).
    pub shape: Vec<usize>,
    /// The model's order.
    pub order: usize,
    pub data: ConstData,
}

/// A network as layers.
#[derive(Debug)]
pub(crate) struct Translation {
    pub layers: Vec<Layer>,
    pub params: Vec<Param>,
    pub output: Arg,
    pub output_shape: Vec<usize>,
}

/// A value of the graph: computed from the input, or constant.
#[derive(Debug, Clone)]
enum Val {
    Act(Arg, Vec<usize>),
    Const(usize),
}

/// The operators the importer covers.
pub const OPERATORS: &[&str] = &[
    "Conv",
    "BatchNormalization",
    "Relu",
    "Clip",
    "Add",
    "Mul",
    "MaxPool",
    "AveragePool",
    "GlobalAveragePool",
    "Flatten",
    "Reshape",
    "Gemm",
    "MatMul",
    "Softmax",
    "Concat",
    "Identity",
    "Dropout",
    "Constant",
];

struct State<'p> {
    path: &'p Path,
    vals: HashMap<String, Val>,
    consts: Vec<Const>,
    params: Vec<Param>,
    param_of: HashMap<usize, usize>,
    layers: Vec<Layer>,
    /// Every value some node reads, and the graph's output.
    read: HashSet<String>,
}

/// Translates the model's nodes, in order.
pub(crate) fn translate(model: Model, path: &Path) -> Result<Translation, ImportErrorKind> {
    let Model {
        input,
        output,
        nodes,
        consts,
        ..
    } = model;
    let mut read: HashSet<String> = nodes
        .iter()
        .flat_map(|n| n.proto.input.iter().cloned())
        .collect();
    read.insert(output.0.clone());
    let mut state = State {
        path,
        vals: HashMap::new(),
        consts: Vec::new(),
        params: Vec::new(),
        param_of: HashMap::new(),
        layers: Vec::new(),
        read,
    };
    let mut consts: Vec<Const> = consts.into_values().collect();
    consts.sort_by_key(|c| c.order);
    for c in consts {
        state
            .vals
            .insert(c.name.clone(), Val::Const(state.consts.len()));
        state.consts.push(c);
    }
    state
        .vals
        .insert(input.0.clone(), Val::Act(Arg::Input, input.1.clone()));
    let base = state.consts.len();
    for node in &nodes {
        state.node(node, base)?;
    }
    let (out, out_shape) = match state.vals.get(&output.0) {
        Some(Val::Act(a, s)) => (*a, s.clone()),
        _ => {
            return Err(ImportErrorKind::Graph(format!(
                "the graph's output `{}` does not depend on its input",
                output.0
            )))
        }
    };
    let declared = &output.1;
    let fits = declared.is_empty()
        || (declared.len() == out_shape.len()
            && declared
                .iter()
                .zip(&out_shape)
                .enumerate()
                .all(|(i, (d, s))| d.is_none_or(|d| d == *s) || i == 0));
    if !fits {
        return Err(ImportErrorKind::Graph(format!(
            "the graph's output `{}` is declared {:?} but computes {out_shape:?}",
            output.0,
            declared
                .iter()
                .map(|d| d.map_or("?".to_string(), |d| d.to_string()))
                .collect::<Vec<_>>()
        )));
    }
    Ok(prune(Translation {
        layers: state.layers,
        params: state.params,
        output: out,
        output_shape: out_shape,
    }))
}

/// Only the layers the output needs, and the weights they read (in the model's order).
fn prune(t: Translation) -> Translation {
    let mut needed = vec![false; t.layers.len()];
    let mark = |a: &Arg, needed: &mut Vec<bool>| {
        if let Arg::Layer(i) = a {
            needed[*i] = true;
        }
    };
    mark(&t.output, &mut needed);
    for i in (0..t.layers.len()).rev() {
        if needed[i] {
            for a in &t.layers[i].args {
                mark(a, &mut needed);
            }
        }
    }
    let mut layer_at = vec![0; t.layers.len()];
    let mut kept = Vec::new();
    for (i, l) in t.layers.into_iter().enumerate() {
        if needed[i] {
            layer_at[i] = kept.len();
            kept.push(l);
        }
    }
    let mut used: Vec<usize> = kept
        .iter()
        .flat_map(|l| l.args.iter())
        .filter_map(|a| match a {
            Arg::Param(p) => Some(*p),
            _ => None,
        })
        .collect();
    used.sort_by_key(|&p| (t.params[p].order, p));
    used.dedup();
    let mut param_at = vec![0; t.params.len()];
    for (new, &old) in used.iter().enumerate() {
        param_at[old] = new;
    }
    let renumber = |a: Arg| match a {
        Arg::Input => Arg::Input,
        Arg::Param(p) => Arg::Param(param_at[p]),
        Arg::Layer(l) => Arg::Layer(layer_at[l]),
    };
    for l in &mut kept {
        for a in &mut l.args {
            *a = renumber(*a);
        }
    }
    let mut params: Vec<Option<Param>> = t.params.into_iter().map(Some).collect();
    Translation {
        layers: kept,
        params: used.iter().filter_map(|&p| params[p].take()).collect(),
        output: renumber(t.output),
        output_shape: t.output_shape,
    }
}

fn elements(shape: &[usize]) -> f64 {
    shape.iter().map(|&d| d as f64).product()
}

impl State<'_> {
    /// The `i`-th input of `node`, if present (an empty name is an absent input).
    fn input(&self, node: &Node, i: usize) -> Result<Option<Val>, ImportErrorKind> {
        match node.proto.input.get(i).filter(|n| !n.is_empty()) {
            None => Ok(None),
            Some(name) => self.vals.get(name).cloned().map(Some).ok_or_else(|| {
                ImportErrorKind::Graph(format!("{}: its input `{name}` has no value", node.at))
            }),
        }
    }

    /// The `i`-th input, which must be computed from the network's input.
    fn act(&self, node: &Node, i: usize) -> Result<(Arg, Vec<usize>), ImportErrorKind> {
        match self.input(node, i)? {
            Some(Val::Act(a, s)) => Ok((a, s)),
            Some(Val::Const(_)) => Err(unsupported(
                &node.at,
                format!("its input {i} is a constant; this operator computes on activations here"),
            )),
            None => Err(shape_error(&node.at, format!("its input {i} is missing"))),
        }
    }

    /// The `i`-th input, which must be a constant (if present).
    fn konst(&self, node: &Node, i: usize) -> Result<Option<usize>, ImportErrorKind> {
        match self.input(node, i)? {
            Some(Val::Const(c)) => Ok(Some(c)),
            Some(Val::Act(..)) => Err(unsupported(
                &node.at,
                format!("its input {i} is computed; only a constant is supported there"),
            )),
            None => Ok(None),
        }
    }

    /// A constant as a weight of the network, read as `shape` (its elements).
    fn param(&mut self, node: &Node, c: usize, shape: Vec<usize>) -> Result<Arg, ImportErrorKind> {
        let k = &self.consts[c];
        if matches!(k.data, ConstData::I64(_) | ConstData::Other(_)) {
            let t = match k.data {
                ConstData::I64(_) => "int64".to_string(),
                ConstData::Other(t) => type_name(t),
                _ => unreachable!(),
            };
            return Err(unsupported(
                &node.at,
                format!(
                    "the weight `{}` is of {t}; only float (f32) is supported",
                    k.name
                ),
            ));
        }
        if let Some(&p) = self.param_of.get(&c) {
            if self.params[p].shape != shape {
                return Err(shape_error(
                    &node.at,
                    format!(
                        "the weight `{}` is read as {shape:?} here and as {:?} elsewhere",
                        k.name, self.params[p].shape
                    ),
                ));
            }
            return Ok(Arg::Param(p));
        }
        self.params.push(Param {
            onnx: k.name.clone(),
            shape,
            order: k.order,
            data: k.data.clone(),
        });
        self.param_of.insert(c, self.params.len() - 1);
        Ok(Arg::Param(self.params.len() - 1))
    }

    /// Adds a layer; its result is `Arg::Layer`.
    fn layer(
        &mut self,
        node: &Node,
        def: Def,
        args: Vec<Arg>,
        shape: Vec<usize>,
        flops: f64,
    ) -> Arg {
        self.layers.push(Layer {
            def,
            args,
            shape,
            node: node.at.clone(),
            flops,
        });
        Arg::Layer(self.layers.len() - 1)
    }

    /// Binds the node's first output; its other outputs must be absent or unread.
    fn output(&mut self, node: &Node, val: Val) -> Result<(), ImportErrorKind> {
        let Some(first) = node.proto.output.first().filter(|o| !o.is_empty()) else {
            return Err(unsupported(&node.at, "it has no output"));
        };
        if let Val::Act(_, s) = &val {
            if !fits(s) {
                return Err(shape_error(
                    &node.at,
                    format!("its result {s:?} has more than 2^40 elements"),
                ));
            }
        }
        for other in node.proto.output.iter().skip(1) {
            if !other.is_empty() && self.read.contains(other) {
                return Err(unsupported(
                    &node.at,
                    format!("its output `{other}` is read; only the first output is supported"),
                ));
            }
        }
        self.vals.insert(first.clone(), val);
        Ok(())
    }
}
