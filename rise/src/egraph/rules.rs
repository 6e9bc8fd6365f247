//! Named sets of e-graph rewrites: the library's equations plus beta reduction.

use super::rewrite::{beta_rewrite, rewrite, strategy_rewrite, RiseRewrite};
use crate::rules::{equation, equation_names};

/// Rewrites for the e-graph, with the text that names them.
///
/// The text is a comma-separated list of rule names (`mapFusion`, `splitJoin(32)`,
/// `betaReduction`) and set names: `algorithmic` (fusion, fission, splitJoin(4/32),
/// transposes, split/join movement, eta and beta), `lowering` (the rules that make
/// `mapSeq`, `mapPar`, `reduceSeq`, `reduceSeqUnroll`), `default` (both).
#[derive(Clone)]
pub struct RuleSet {
    text: String,
    rewrites: Vec<RiseRewrite>,
}

/// The sets' members.
const ALGORITHMIC: &[&str] = &[
    "mapFusion",
    "mapFission",
    "eta",
    "betaReduction",
    "removeTransposePair",
    "joinSplit",
    "transposeMapMap",
    "mapMapTranspose",
    "splitBeforeMap",
    "mapMapBeforeSplit",
    "joinBeforeMapF",
    "mapMapJoin",
    "fstReduction",
    "sndReduction",
    "mapIdentity",
    "splitJoin(4)",
    "splitJoin(32)",
];

const LOWERING: &[&str] = &[
    "reduceMapToSeq",
    "reduceSeqMapFusion",
    "reduceToSeq",
    "mapToSeq",
    "mapToPar",
    "reduceSeqToUnroll",
];

impl RuleSet {
    /// Parses a rule-set text.
    ///
    /// ```
    /// use elevate_rise::egraph::RuleSet;
    /// assert_eq!(RuleSet::parse("mapFusion,splitJoin(32)").unwrap().len(), 2);
    /// assert!(RuleSet::parse("noSuchRule").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<RuleSet, String> {
        let mut rewrites: Vec<RiseRewrite> = Vec::new();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let members: Vec<&str> = match item {
                "algorithmic" => ALGORITHMIC.to_vec(),
                "lowering" => LOWERING.to_vec(),
                "default" | "all" => ALGORITHMIC.iter().chain(LOWERING).copied().collect(),
                one => vec![one],
            };
            for name in members {
                let r = rule(name)?;
                if !rewrites.iter().any(|q| q.name == r.name) {
                    rewrites.push(r);
                }
            }
        }
        if rewrites.is_empty() {
            return Err("the rule set is empty".into());
        }
        Ok(RuleSet {
            text: text.to_string(),
            rewrites,
        })
    }

    /// The text it was made from.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The rewrites.
    pub fn rewrites(&self) -> &[RiseRewrite] {
        &self.rewrites
    }

    /// How many rewrites.
    pub fn len(&self) -> usize {
        self.rewrites.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.rewrites.is_empty()
    }

    /// The names of every rule a set can name, for listings.
    pub fn known_rules() -> Vec<String> {
        let (plain, sized) = equation_names();
        let mut all: Vec<String> = plain.iter().map(|s| s.to_string()).collect();
        all.extend(sized.iter().map(|s| format!("{s}(n)")));
        all.push("betaReduction".into());
        all.push("vectorize(n)".into());
        all.push("packB".into());
        all
    }
}

/// The rewrite named `name` (`splitJoin(32)` with its size).
fn rule(name: &str) -> Result<RiseRewrite, String> {
    if name == "betaReduction" {
        return Ok(beta_rewrite());
    }
    if name == "packB" {
        // The packing of matmul's B (the library's `packB` on a body): where a tiled
        // result `join(...)` holds `transpose(b)`, it becomes `let x = toMem(packed
        // copy) in ...` around it.
        return strategy_rewrite(name, "join(x)", crate::rules::pack_b_here());
    }
    if let Some(n) = name
        .strip_prefix("vectorize(")
        .and_then(|r| r.strip_suffix(')'))
        .and_then(|n| n.trim().parse::<i64>().ok())
        .filter(|&n| n > 0)
    {
        return strategy_rewrite(name, "map(f)(xs)", crate::rules::vectorize(n));
    }
    let (base, args) = match name.split_once('(') {
        Some((base, rest)) => {
            let inner = rest
                .strip_suffix(')')
                .ok_or_else(|| format!("`{name}`: a missing `)`"))?;
            let args = inner
                .split(',')
                .map(|a| a.trim().parse::<i64>())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| format!("`{name}`: the arguments are whole numbers"))?;
            (base, args)
        }
        None => (name, vec![]),
    };
    let (_, sized) = equation_names();
    if sized.contains(&base) && !matches!(args.as_slice(), [n] if *n > 0) {
        return Err(format!(
            "`{name}`: `{base}` takes one positive size, e.g. `{base}(32)`"
        ));
    }
    let eq = equation(base, &args).ok_or_else(|| {
        format!(
            "`{name}` is not a rule the e-graph knows (known: {})",
            RuleSet::known_rules().join(", ")
        )
    })?;
    rewrite(&eq)
}
