//! The network's RISE program: the defs of its layer kinds in the order they are
//! first used, then the network's def, whose body is a chain of `let`s, one per layer.

use crate::translate::{Arg, Translation};
use elevate_rise::prim::Prim;
use std::collections::HashSet;

/// Words a name of the program must not be: the language's keywords and type names.
const RESERVED: &[&str] = &[
    "def", "fun", "depFun", "let", "in", "true", "false", "nat", "bool", "i32", "i64", "f32",
    "f64", "vec", "idx",
];

/// Names in use, and fresh ones made from ONNX's names.
pub(crate) struct Names {
    taken: HashSet<String>,
}

impl Names {
    pub(crate) fn new() -> Names {
        Names {
            taken: RESERVED.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// Whether a name may not be used: taken, or a primitive's.
    fn clashes(&self, name: &str) -> bool {
        self.taken.contains(name) || Prim::from_name(name).is_some()
    }

    /// Reserves `name` as it is (a def's name).
    pub(crate) fn reserve(&mut self, name: &str) {
        self.taken.insert(name.to_string());
    }

    /// A valid identifier made from `raw`, not used before: other characters become
    /// `_`, a leading digit gets `prefix_` before it, a clash `_2`, `_3`, ... after it.
    pub(crate) fn fresh(&mut self, raw: &str, prefix: &str) -> String {
        let mut base: String = raw
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        if base.is_empty() || base.starts_with(|c: char| c.is_ascii_digit()) {
            base = format!("{prefix}_{base}");
        }
        let mut name = base.clone();
        let mut n = 2;
        while self.clashes(&name) {
            name = format!("{base}_{n}");
            n += 1;
        }
        self.taken.insert(name.clone());
        name
    }
}

/// `1.3.16.16.f32`.
pub(crate) fn array_type(shape: &[usize]) -> String {
    let mut t: String = shape.iter().map(|d| format!("{d}.")).collect();
    t.push_str("f32");
    t
}

/// The program's text and the names it gives: the network def's, the input's, the
/// parameters', the layers' defs' and their variables'.
pub(crate) struct Text {
    pub text: String,
    pub entry: String,
    pub input: String,
    pub params: Vec<String>,
    pub layer_defs: Vec<String>,
    pub lets: Vec<String>,
}

/// Writes the program of `t`, the network def named after `model`, its input after
/// `input` with `input_shape`.
pub(crate) fn program(t: &Translation, model: &str, input: &str, input_shape: &[usize]) -> Text {
    let mut names = Names::new();
    let mut text = String::new();
    let mut defined = HashSet::new();
    let mut layer_defs = Vec::new();
    for l in &t.layers {
        let name = l.def.name();
        if defined.insert(name.clone()) {
            text.push_str(&l.def.text());
            text.push('\n');
            names.reserve(&name);
        }
        layer_defs.push(name);
    }
    // A model named as a def or a primitive (`add`, `relu`) gets `_net` after it.
    let entry = if names.clashes(model) {
        names.fresh(&format!("{model}_net"), "net")
    } else {
        names.fresh(model, "net")
    };
    let input = names.fresh(input, "x");
    let params: Vec<String> = t.params.iter().map(|p| names.fresh(&p.onnx, "w")).collect();
    let lets: Vec<String> = (1..=t.layers.len())
        .map(|i| names.fresh(&format!("v{i}"), "v"))
        .collect();
    let arg = |a: &Arg| match a {
        Arg::Input => input.clone(),
        Arg::Param(p) => params[*p].clone(),
        Arg::Layer(l) => lets[*l].clone(),
    };
    let mut signature = vec![format!("{input}: {}", array_type(input_shape))];
    signature.extend(
        t.params
            .iter()
            .zip(&params)
            .map(|(p, n)| format!("{n}: {}", array_type(&p.shape))),
    );
    text.push_str(&format!(
        "def {entry}({}) : {} =\n",
        signature.join(", "),
        array_type(&t.output_shape)
    ));
    for (i, l) in t.layers.iter().enumerate() {
        let args: Vec<String> = l.args.iter().map(arg).collect();
        text.push_str(&format!(
            "  let {} = {}({}) in\n",
            lets[i],
            layer_defs[i],
            args.join(", ")
        ));
    }
    text.push_str(&format!("  {}\n", arg(&t.output)));
    Text {
        text,
        entry,
        input,
        params,
        layer_defs,
        lets,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_names_are_identifiers_and_unique() {
        let mut n = Names::new();
        n.reserve("conv_k3x3_s1_p1111");
        assert_eq!(n.fresh("conv1.weight", "w"), "conv1_weight");
        assert_eq!(n.fresh("conv1/weight", "w"), "conv1_weight_2");
        assert_eq!(n.fresh("0.bias", "w"), "w_0_bias");
        assert_eq!(n.fresh("", "w"), "w_");
        assert_eq!(n.fresh("map", "w"), "map_2");
        assert_eq!(n.fresh("let", "w"), "let_2");
        assert_eq!(n.fresh("conv_k3x3_s1_p1111", "w"), "conv_k3x3_s1_p1111_2");
    }
}
