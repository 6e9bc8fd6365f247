//! A network's strategy: strategy text whose parts, separated by `;` at the top level,
//! say what each layer gets.
//!
//! - `network`: every layer not named otherwise gets its library schedule, and what
//!   follows a layer elementwise is fused into it;
//! - `layer(i, S)`: the `i`-th layer (from 0) gets `S`;
//! - `layers("KIND", S)`: every layer of a kind gets `S`;
//! - any other strategy `S`: every layer not named by the parts above gets `S`.
//!
//! A layer named by `layer` or `layers` is compiled on its own, with only `S` (and
//! `defaultLowering`).
//!
//! ```
//! use elevate::network::{NetworkStrategy, Part};
//! let s = NetworkStrategy::parse(r#"layers("conv", convKernel(28, 64, 4, 16)) ; layer(3, id) ; network"#).unwrap();
//! assert_eq!(s.parts.len(), 3);
//! assert!(s.fuses());
//! assert_eq!(s.parts[1], Part::Layer(3, "id".to_string()));
//! assert!(NetworkStrategy::parse("layer(x, id)").is_err());
//! ```

use elevate_rise::registry;
use std::fmt;

/// The words of a network's strategy, as `elevate strategies` lists them: name,
/// arguments, meaning.
pub const VOCABULARY: [(&str, &str, &str); 3] = [
    (
        "network",
        "",
        "a network's strategy (`run NET.rise --weights`): every layer its library schedule, what follows a kernel elementwise fused, BatchNorm folded",
    ),
    (
        "layer",
        "(i, s)",
        "in a network's strategy: the i-th layer (from 0) gets s, compiled on its own",
    ),
    (
        "layers",
        "(\"KIND\", s)",
        "in a network's strategy: every layer of a kind (conv, depthwise, gemm, maxpool, relu, ...) gets s",
    ),
];

/// One part of a network's strategy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// `network`: the library's schedule for every layer, followers fused.
    Network,
    /// `layer(i, S)`.
    Layer(usize, String),
    /// `layers("KIND", S)`.
    Layers(String, String),
    /// A strategy for every layer no other part names.
    Every(String),
}

/// A network's strategy, parsed (each strategy in it checked by the registry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkStrategy {
    /// The parts, in order.
    pub parts: Vec<Part>,
}

/// Strategy text that is not a network's strategy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrategyError(pub String);

impl fmt::Display for StrategyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StrategyError {}

/// What a layer gets from a network's strategy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Assigned {
    /// Its library schedule (and it may be fused with what follows it).
    Library,
    /// This strategy text, on its own.
    Explicit(String),
    /// Nothing but `defaultLowering`.
    Lowering,
}

impl NetworkStrategy {
    /// The library's strategy: `network`.
    pub fn library() -> NetworkStrategy {
        NetworkStrategy {
            parts: vec![Part::Network],
        }
    }

    /// Parses `text` (`@FILE` already read).
    pub fn parse(text: &str) -> Result<NetworkStrategy, StrategyError> {
        let registry = registry();
        let check = |s: &str| -> Result<String, StrategyError> {
            registry
                .parse(s)
                .map(|_| s.trim().to_string())
                .map_err(|e| StrategyError(format!("in `{}`: {e}", s.trim())))
        };
        let mut parts = Vec::new();
        for piece in split_top(text, ';') {
            let piece = piece.trim();
            if piece.is_empty() {
                return Err(StrategyError(format!(
                    "an empty part in the network strategy `{text}`"
                )));
            }
            let part = if piece == "network" {
                Part::Network
            } else if let Some(args) = call_args(piece, "layer") {
                let [index, s] = two(&args, piece)?;
                let index = index.trim().parse::<usize>().map_err(|_| {
                    StrategyError(format!(
                        "`{piece}`: the layer is a number from 0, found `{}`",
                        index.trim()
                    ))
                })?;
                Part::Layer(index, check(s)?)
            } else if let Some(args) = call_args(piece, "layers") {
                let [kind, s] = two(&args, piece)?;
                let kind = kind.trim();
                let kind = kind
                    .strip_prefix('"')
                    .and_then(|k| k.strip_suffix('"'))
                    .ok_or_else(|| {
                        StrategyError(format!(
                            "`{piece}`: the kind is a quoted name such as \"conv\", found `{kind}`"
                        ))
                    })?;
                Part::Layers(kind.to_string(), check(s)?)
            } else {
                Part::Every(check(piece)?)
            };
            parts.push(part);
        }
        Ok(NetworkStrategy { parts })
    }

    /// Whether the library's fusion applies (`network` is one of the parts).
    pub fn fuses(&self) -> bool {
        self.parts.contains(&Part::Network)
    }

    /// What layer `index` of kind `kind` gets: its own `layer` part first, then its
    /// kind's `layers`, then a strategy for every layer, then `network`.
    pub fn assigned(&self, index: usize, kind: &str) -> Assigned {
        let own = self.parts.iter().find_map(|p| match p {
            Part::Layer(i, s) if *i == index => Some(s.clone()),
            _ => None,
        });
        let of_kind = || {
            self.parts.iter().find_map(|p| match p {
                Part::Layers(k, s) if k == kind => Some(s.clone()),
                _ => None,
            })
        };
        let every = || {
            self.parts.iter().find_map(|p| match p {
                Part::Every(s) => Some(s.clone()),
                _ => None,
            })
        };
        match own.or_else(of_kind).or_else(every) {
            Some(s) => Assigned::Explicit(s),
            None if self.fuses() => Assigned::Library,
            None => Assigned::Lowering,
        }
    }

    /// The layer indices the strategy names, for checking them against a network.
    pub fn named_layers(&self) -> impl Iterator<Item = usize> + '_ {
        self.parts.iter().filter_map(|p| match p {
            Part::Layer(i, _) => Some(*i),
            _ => None,
        })
    }

    /// The kinds the strategy names.
    pub fn named_kinds(&self) -> impl Iterator<Item = &str> + '_ {
        self.parts.iter().filter_map(|p| match p {
            Part::Layers(k, _) => Some(k.as_str()),
            _ => None,
        })
    }
}

impl fmt::Display for NetworkStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, part) in self.parts.iter().enumerate() {
            if i > 0 {
                f.write_str(" ; ")?;
            }
            match part {
                Part::Network => f.write_str("network")?,
                Part::Layer(i, s) => write!(f, "layer({i}, {s})")?,
                Part::Layers(k, s) => write!(f, "layers(\"{k}\", {s})")?,
                Part::Every(s) => f.write_str(s)?,
            }
        }
        Ok(())
    }
}

/// `text` split at `sep` outside parentheses, brackets and quotes.
fn split_top(text: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut quoted, mut start) = (0i64, false, 0);
    let bytes: Vec<(usize, char)> = text.char_indices().collect();
    for (k, &(i, c)) in bytes.iter().enumerate() {
        match c {
            '"' => quoted = !quoted,
            '(' | '[' if !quoted => depth += 1,
            ')' | ']' if !quoted => depth -= 1,
            // `;;` is the strategy language's own sequence: not a part boundary.
            c if c == sep && depth == 0 && !quoted => {
                let doubled = bytes.get(k + 1).is_some_and(|&(_, n)| n == sep)
                    || (k > 0 && bytes[k - 1].1 == sep);
                if !doubled {
                    parts.push(&text[start..i]);
                    start = i + c.len_utf8();
                }
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// The arguments of `NAME(ARGS)` when `piece` is such a call.
fn call_args<'a>(piece: &'a str, name: &str) -> Option<Vec<&'a str>> {
    let rest = piece.strip_prefix(name)?.trim_start();
    let inner = rest.strip_prefix('(')?.strip_suffix(')')?;
    Some(split_top(inner, ','))
}

fn two<'a>(args: &[&'a str], piece: &'a str) -> Result<[&'a str; 2], StrategyError> {
    match args {
        [a, rest @ ..] if !rest.is_empty() => {
            // The strategy may itself hold commas at the top level of the call only
            // inside its own parentheses; rejoin whatever follows the first argument.
            let start = a.len() + 1;
            let inner = piece
                .find('(')
                .map(|p| &piece[p + 1 + start..piece.len() - 1])
                .unwrap_or("");
            Ok([a, inner])
        }
        _ => Err(StrategyError(format!(
            "`{piece}` takes two arguments: the layer (or kind) and a strategy"
        ))),
    }
}
