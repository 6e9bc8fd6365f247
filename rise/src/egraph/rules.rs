//! Named sets of e-graph rewrites, read off the rules' catalogue
//! ([`crate::rules::catalogue`]): a rule that is an equation rewrites with its
//! [`Equation`](crate::rules::Equation), beta reduction by substitution, and rules
//! written in Rust that the e-graph applies at a pattern (`vectorize(n)`, `packB`) on
//! the classes' smallest terms.

use super::rewrite::{beta_rewrite, rewrite, strategy_rewrite, RewriteError, RiseRewrite};
use crate::rules::catalogue::{ArgError, EGraphUse, Make, RuleDef, Set};
use crate::rules::Equation;

/// Why a rule set's text names no rewrites.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleSetError {
    /// Nothing was named.
    #[error("the rule set is empty")]
    Empty,
    /// An item is not a rule or set name, or not one the e-graph applies.
    #[error("`{name}` is not a rule the e-graph knows (known: {known})")]
    Unknown {
        /// The item.
        name: String,
        /// The names the e-graph knows.
        known: String,
    },
    /// The arguments are not whole numbers, or the parentheses do not close.
    #[error("`{item}`: {why}")]
    Syntax {
        /// The item.
        item: String,
        /// What is wrong.
        why: &'static str,
    },
    /// The arguments do not fit the rule.
    #[error("`{item}`: {error}")]
    Arguments {
        /// The item, as written.
        item: String,
        /// Why.
        error: ArgError,
    },
    /// The rule's pattern or equation does not make an e-graph rewrite.
    #[error("`{item}`: {why}")]
    Rewrite {
        /// The item.
        item: String,
        /// Why.
        why: RewriteError,
    },
}

/// Rewrites for the e-graph, with the text that names them.
///
/// The text is a comma-separated list of rule names (`mapFusion`, `splitJoin(32)`,
/// `betaReduction`) and set names: `algorithmic` (fusion, fission, splitJoin(4/32),
/// transposes, split/join movement, eta and beta), `lowering` (the rules that make
/// `mapSeq`, `mapPar`, `reduceSeq`, `reduceSeqUnroll`), `default` or `all` (both).
/// Each rule's sets are written in its catalogue entry.
#[derive(Clone)]
pub struct RuleSet {
    text: String,
    rewrites: Vec<RiseRewrite>,
}

impl RuleSet {
    /// Parses a rule-set text.
    ///
    /// ```
    /// use elevate_rise::egraph::RuleSet;
    /// assert_eq!(RuleSet::parse("mapFusion,splitJoin(32)").unwrap().len(), 2);
    /// assert!(RuleSet::parse("noSuchRule").is_err());
    /// let Err(e) = RuleSet::parse("splitJoin(0)") else { panic!("splitJoin(0) parsed") };
    /// assert_eq!(e.to_string(), "`splitJoin(0)`: the size n must be positive, found 0");
    /// ```
    pub fn parse(text: &str) -> Result<RuleSet, RuleSetError> {
        let mut rewrites: Vec<RiseRewrite> = Vec::new();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let sets: &[Set] = match item {
                "algorithmic" => &[Set::Algorithmic],
                "lowering" => &[Set::Lowering],
                "default" | "all" => &Set::ALL,
                _ => &[],
            };
            let members: Vec<(&'static RuleDef, Vec<i64>)> = match sets {
                [] => vec![named(item)?],
                sets => members(sets),
            };
            for (def, args) in members {
                let r = make(def, &args, item)?;
                if !rewrites.iter().any(|q| q.name == r.name) {
                    rewrites.push(r);
                }
            }
        }
        if rewrites.is_empty() {
            return Err(RuleSetError::Empty);
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

    /// The names (with their arguments) of every rule a set can name, for listings.
    pub fn known_rules() -> Vec<String> {
        crate::rules::catalogue()
            .into_iter()
            .filter(|def| def.in_egraph())
            .map(|def| format!("{}{}", def.name, def.signature()))
            .collect()
    }
}

impl std::fmt::Debug for RuleSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.rewrites.iter().map(|r| r.name.as_str()).collect();
        f.debug_struct("RuleSet")
            .field("text", &self.text)
            .field("rewrites", &names)
            .finish()
    }
}

/// The members of `sets`, in the catalogue's order, each with its arguments there.
fn members(sets: &[Set]) -> Vec<(&'static RuleDef, Vec<i64>)> {
    crate::rules::catalogue()
        .into_iter()
        .flat_map(|def| {
            def.sets
                .iter()
                .filter(|(set, _)| sets.contains(set))
                .map(move |(_, args)| (def, args.to_vec()))
        })
        .collect()
}

/// The rule `item` names (`splitJoin(32)`), with its arguments.
fn named(item: &str) -> Result<(&'static RuleDef, Vec<i64>), RuleSetError> {
    let syntax = |why| RuleSetError::Syntax {
        item: item.to_string(),
        why,
    };
    let (base, args) = match item.split_once('(') {
        Some((base, rest)) => {
            let inner = rest.strip_suffix(')').ok_or(syntax("a missing `)`"))?;
            let args = inner
                .split(',')
                .map(|a| a.trim().parse::<i64>())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| syntax("the arguments are whole numbers"))?;
            (base.trim(), args)
        }
        None => (item, vec![]),
    };
    match crate::rules::find(base).filter(|def| def.in_egraph()) {
        Some(def) => Ok((def, args)),
        None => Err(RuleSetError::Unknown {
            name: item.to_string(),
            known: RuleSet::known_rules().join(", "),
        }),
    }
}

/// The rewrite of `def` with `args` (named `item` in the text, for errors).
fn make(def: &RuleDef, args: &[i64], item: &str) -> Result<RiseRewrite, RuleSetError> {
    let arguments = |error| RuleSetError::Arguments {
        item: item.to_string(),
        error,
    };
    let failed = |why| RuleSetError::Rewrite {
        item: item.to_string(),
        why,
    };
    if let Some(eq) = def.equation_with(args).map_err(arguments)? {
        return rewrite(&eq).map_err(failed);
    }
    def.check(args).map_err(arguments)?;
    let label = def.label(args);
    match def.egraph {
        EGraphUse::Beta => Ok(beta_rewrite()),
        EGraphUse::Equation(text) => rewrite(&Equation::known(def.name, text)).map_err(failed),
        EGraphUse::At(pattern, make) => {
            let strategy = match make {
                Make::Plain(make) => make(),
                // Checked: one argument, written or the default.
                Make::Sized(make) => make(def.arguments(args)[0]),
                Make::Equation => unreachable!("equations are rewrites of their own"),
            };
            strategy_rewrite(&label, pattern, strategy).map_err(failed)
        }
        EGraphUse::No => unreachable!("only rules the e-graph applies are named"),
    }
}
