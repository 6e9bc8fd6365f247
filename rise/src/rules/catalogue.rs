//! The catalogue of the library's rules: each rule's name, arguments, equation, the
//! e-graph's use of it and its rule sets, written once, next to the rule (each rule
//! file lists its own in a `RULES` table), and read by everything that names rules:
//! the strategy language (`crate::registry`, `elevate strategies`), the e-graph's rule
//! sets (`crate::egraph::RuleSet`), the property tests ([`super::library`]) and the
//! documentation ([`markdown`]).
//!
//! A rule is an equation ([`Make::Equation`]: the text is parsed into an
//! [`Equation`], which is both the strategy and the e-graph rewrite), or written in
//! Rust with the equation as documentation. A rule with arguments checks them
//! ([`RuleDef::check`]) before it is made, so a bad argument is reported where it is
//! written (`splitJoin(0)`: "the size n must be positive, found 0").

use super::equation::Equation;
use super::{catalogue, find};
use crate::nat::{Nat, NatVar};
use crate::prim::Prim;
use crate::term::Term;
use elevate_core::{Context, Failure, Name, RewriteResult, Strategy, StrategyImpl};

/// What kind of value an argument is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// A positive size (a block length).
    Size,
    /// A vector width: at least 2.
    Width,
    /// A GPU dimension: 0, 1 or 2.
    Dimension,
}

/// An argument of a rule: its name in the equation (a nat) and its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    /// The name (`n` in `splitJoin(n)`).
    pub name: &'static str,
    /// What values it takes.
    pub kind: ParamKind,
}

impl Param {
    /// A positive size named `name`.
    pub const fn size(name: &'static str) -> Param {
        Param {
            name,
            kind: ParamKind::Size,
        }
    }

    /// A vector width named `name`.
    pub const fn width(name: &'static str) -> Param {
        Param {
            name,
            kind: ParamKind::Width,
        }
    }

    /// A GPU dimension named `name`.
    pub const fn dimension(name: &'static str) -> Param {
        Param {
            name,
            kind: ParamKind::Dimension,
        }
    }

    /// Whether `value` fits.
    pub fn check(&self, value: i64) -> Result<(), ArgError> {
        let fits = match self.kind {
            ParamKind::Size => value > 0,
            ParamKind::Width => value > 1,
            ParamKind::Dimension => (0..=2).contains(&value),
        };
        match fits {
            true => Ok(()),
            false => Err(ArgError::OutOfRange {
                param: *self,
                value,
            }),
        }
    }
}

/// Why arguments do not fit a rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgError {
    /// Too many or too few.
    #[error("expects {expected} argument(s), found {found}")]
    Count {
        /// How many the rule takes.
        expected: usize,
        /// How many were given.
        found: usize,
    },
    /// A value the argument does not take.
    #[error("{}", describe(*param, *value))]
    OutOfRange {
        /// The argument.
        param: Param,
        /// The value given.
        value: i64,
    },
}

fn describe(param: Param, value: i64) -> String {
    match param.kind {
        ParamKind::Size => format!("the size {} must be positive, found {value}", param.name),
        ParamKind::Width => format!(
            "the vector width {} must be at least 2, found {value}",
            param.name
        ),
        ParamKind::Dimension => format!(
            "the dimension {} must be 0, 1 or 2, found {value}",
            param.name
        ),
    }
}

/// How a rule is made.
#[derive(Clone, Copy)]
pub enum Make {
    /// From its equation ([`RuleDef::equation`]): the strategy and the e-graph rewrite
    /// are [`Equation`]s, the arguments substituted for the nats of their names.
    Equation,
    /// Written in Rust, without arguments.
    Plain(fn() -> Strategy<Term>),
    /// Written in Rust, with one argument.
    Sized(fn(i64) -> Strategy<Term>),
}

/// How the e-graph applies a rule that is not an equation.
#[derive(Clone, Copy)]
pub enum EGraphUse {
    /// It does not.
    No,
    /// Beta reduction, by substitution on extracted terms.
    Beta,
    /// Where the pattern (RISE pattern text) matches, the class's smallest term is
    /// rewritten by this strategy.
    At(&'static str, Make),
    /// As this equation (RISE pattern text, `lhs -> rhs`): what the strategy written in
    /// Rust does, where the e-graph needs it as a pattern (applied rather than on a bare
    /// primitive, or without the side condition). A test checks that the two agree on
    /// the rule's example.
    Equation(&'static str),
}

/// The e-graph's named rule sets (`--rules algorithmic`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Set {
    /// Fusion, fission, `splitJoin`, transposes, split/join movement, eta and beta.
    Algorithmic,
    /// The rules that make `mapSeq`, `mapPar`, `reduceSeq`, `reduceSeqUnroll`.
    Lowering,
}

impl Set {
    /// Every set.
    pub const ALL: [Set; 2] = [Set::Algorithmic, Set::Lowering];

    /// Its name in rule-set text.
    pub fn name(self) -> &'static str {
        match self {
            Set::Algorithmic => "algorithmic",
            Set::Lowering => "lowering",
        }
    }
}

/// Membership of the algorithmic set (without arguments).
pub const ALGORITHMIC: &[(Set, &[i64])] = &[(Set::Algorithmic, &[])];
/// Membership of the lowering set.
pub const LOWERING: &[(Set, &[i64])] = &[(Set::Lowering, &[])];

/// Whether an entry is a rule of the library (checked on random programs by the
/// property tests) or a strategy that the catalogue lists for the e-graph's sake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A rule.
    Rule,
    /// A larger strategy.
    Strategy,
}

/// A rule of the library, as the catalogue lists it.
#[derive(Clone, Copy)]
pub struct RuleDef {
    /// Its name in the strategy language (and in rule-set text).
    pub name: &'static str,
    /// Its arguments (at most one).
    pub params: &'static [Param],
    /// `lhs -> rhs`: for [`Make::Equation`] the equation itself, in which the
    /// arguments are nats of their names; otherwise what the rule does, written as one.
    pub equation: &'static str,
    /// Its side condition or a remark (empty if none).
    pub note: &'static str,
    /// How it is made.
    pub make: Make,
    /// How the e-graph applies it, if it is not an equation.
    pub egraph: EGraphUse,
    /// The e-graph rule sets it belongs to, each with its arguments there.
    pub sets: &'static [(Set, &'static [i64])],
    /// A primitive whose presence makes the left-hand side likely, to bias random
    /// programs in tests.
    pub bias: Option<Prim>,
    /// A small program in which the rule applies (tests check it there too).
    pub example: &'static str,
    /// Arguments for tests and listings.
    pub typical: &'static [i64],
    /// A rule, or a strategy listed for the e-graph.
    pub role: Role,
    /// The arguments meant where none are written (`packB` is `packB(32)`); empty
    /// where the arguments must be written.
    pub defaults: &'static [i64],
}

impl RuleDef {
    const fn new(name: &'static str, equation: &'static str, make: Make) -> RuleDef {
        RuleDef {
            name,
            params: &[],
            equation,
            note: "",
            make,
            egraph: EGraphUse::No,
            sets: &[],
            bias: None,
            example: "",
            typical: &[],
            role: Role::Rule,
            defaults: &[],
        }
    }

    /// A rule that is its equation.
    pub const fn equation(name: &'static str, equation: &'static str) -> RuleDef {
        RuleDef::new(name, equation, Make::Equation)
    }

    /// A rule written in Rust; `equation` says what it does.
    pub const fn rule(
        name: &'static str,
        equation: &'static str,
        make: fn() -> Strategy<Term>,
    ) -> RuleDef {
        RuleDef::new(name, equation, Make::Plain(make))
    }

    /// A rule written in Rust with one argument.
    pub const fn sized(
        name: &'static str,
        param: &'static [Param],
        equation: &'static str,
        make: fn(i64) -> Strategy<Term>,
    ) -> RuleDef {
        RuleDef {
            params: param,
            ..RuleDef::new(name, equation, Make::Sized(make))
        }
    }

    /// A rule that is its equation, with one argument (a nat of the equation).
    pub const fn sized_equation(
        name: &'static str,
        param: &'static [Param],
        equation: &'static str,
    ) -> RuleDef {
        RuleDef {
            params: param,
            ..RuleDef::new(name, equation, Make::Equation)
        }
    }

    /// With a side condition or remark.
    pub const fn note(self, note: &'static str) -> RuleDef {
        RuleDef { note, ..self }
    }

    /// With a primitive to bias random test programs towards.
    pub const fn bias(self, prim: Prim) -> RuleDef {
        RuleDef {
            bias: Some(prim),
            ..self
        }
    }

    /// With an example program.
    pub const fn example(self, example: &'static str) -> RuleDef {
        RuleDef { example, ..self }
    }

    /// In these e-graph rule sets.
    pub const fn sets(self, sets: &'static [(Set, &'static [i64])]) -> RuleDef {
        RuleDef { sets, ..self }
    }

    /// Applied by the e-graph this way.
    pub const fn egraph(self, egraph: EGraphUse) -> RuleDef {
        RuleDef { egraph, ..self }
    }

    /// With these arguments in tests and listings.
    pub const fn typical(self, typical: &'static [i64]) -> RuleDef {
        RuleDef { typical, ..self }
    }

    /// With arguments that may be left out: `defaults` are meant where none are
    /// written.
    pub const fn defaults(self, defaults: &'static [i64]) -> RuleDef {
        RuleDef { defaults, ..self }
    }

    /// The arguments meant by `args` as written: the defaults where none are.
    pub fn arguments<'a>(&self, args: &'a [i64]) -> &'a [i64] {
        match args {
            [] => self.defaults,
            args => args,
        }
    }

    /// A strategy rather than a rule (see [`Role`]).
    pub const fn strategy_role(self) -> RuleDef {
        RuleDef {
            role: Role::Strategy,
            ..self
        }
    }

    /// Its arguments as the strategy language documents them: `(n)`, `(w = 32)` where
    /// they may be left out (with what is meant then), or empty.
    pub fn signature(&self) -> String {
        match self.params {
            [] => String::new(),
            params => {
                let names: Vec<&str> = params.iter().map(|p| p.name).collect();
                match self.defaults {
                    [] => format!("({})", names.join(", ")),
                    defaults => {
                        let with: Vec<String> = names
                            .iter()
                            .zip(defaults)
                            .map(|(n, v)| format!("{n} = {v}"))
                            .collect();
                        format!("({})", with.join(", "))
                    }
                }
            }
        }
    }

    /// The name with the arguments `args`, as strategy text writes it
    /// (`splitJoin(32)`).
    pub fn label(&self, args: &[i64]) -> String {
        match args {
            [] => self.name.to_string(),
            args => {
                let args: Vec<String> = args.iter().map(i64::to_string).collect();
                format!("{}({})", self.name, args.join(", "))
            }
        }
    }

    /// The equation and its note, as one line.
    pub fn description(&self) -> String {
        match self.note {
            "" => self.equation.to_string(),
            note => format!("{}   ({note})", self.equation),
        }
    }

    /// Whether `args` fit the parameters (none: the defaults, if there are some).
    pub fn check(&self, args: &[i64]) -> Result<(), ArgError> {
        let args = self.arguments(args);
        if args.len() != self.params.len() {
            return Err(ArgError::Count {
                expected: self.params.len(),
                found: args.len(),
            });
        }
        self.params
            .iter()
            .zip(args)
            .try_for_each(|(p, &v)| p.check(v))
    }

    /// Whether the e-graph can apply it.
    pub fn in_egraph(&self) -> bool {
        matches!(self.make, Make::Equation) || !matches!(self.egraph, EGraphUse::No)
    }

    /// Its equation with the arguments `args` (for [`Make::Equation`] rules), labelled
    /// with them (`splitJoin(32)`).
    pub fn equation_with(&self, args: &[i64]) -> Result<Option<Equation>, ArgError> {
        self.check(args)?;
        let args = self.arguments(args);
        if !matches!(self.make, Make::Equation) {
            return Ok(None);
        }
        let eq = Equation::known(self.name, self.equation);
        if args.is_empty() {
            return Ok(Some(eq));
        }
        let nats: Vec<(NatVar, Nat)> = self
            .params
            .iter()
            .zip(args)
            .map(|(p, &v)| (NatVar::Named(p.name.into()), Nat::cst(v)))
            .collect();
        Ok(Some(eq.with_nats(&nats).with_label(self.label(args))))
    }

    /// The rule with the arguments `args`, if they fit.
    pub fn strategy(&self, args: &[i64]) -> Result<Strategy<Term>, ArgError> {
        self.check(args)?;
        let args = self.arguments(args);
        Ok(match self.make {
            Make::Equation => self
                .equation_with(args)?
                .expect("an equation rule has an equation")
                .strategy(),
            Make::Plain(make) => make(),
            Make::Sized(make) => make(args[0]),
        })
    }

    /// The rule with `args`, or, if they do not fit, a strategy that prints as written
    /// (`splitJoin(0)`), fails under that name and logs why: for the Rust API, whose
    /// constructors return strategies (strategy text reports the error when it is
    /// parsed).
    pub fn strategy_or_invalid(&self, args: &[i64]) -> Strategy<Term> {
        self.strategy(args)
            .unwrap_or_else(|why| invalid(self.label(args), why.to_string()))
    }
}

/// A strategy written `label` whose arguments do not fit (`why`): it fails wherever
/// it is applied, under its label, and logs why.
pub(crate) fn invalid(label: String, why: String) -> Strategy<Term> {
    Strategy::new(Invalid {
        label: Name::from(label),
        why,
    })
}

/// A rule made with arguments it does not take: it fails wherever it is applied.
struct Invalid {
    label: Name,
    why: String,
}

impl StrategyImpl<Term> for Invalid {
    fn apply(&self, _program: &Term, cx: &mut Context) -> RewriteResult<Term> {
        cx.log(|| format!("{}: {}", self.label, self.why));
        Err(Failure::no_match(self.label.clone()))
    }

    fn name(&self) -> Name {
        self.label.clone()
    }

    fn write_text(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label)
    }
}

/// The entry named `name`, which the library defines (a missing one is a bug).
pub(crate) fn known(name: &str) -> &'static RuleDef {
    find(name).unwrap_or_else(|| panic!("`{name}` is in the catalogue"))
}

/// The rule `name` (without arguments) of the catalogue: what the Rust functions of
/// equation rules return.
pub(crate) fn rule(name: &str) -> Strategy<Term> {
    known(name)
        .strategy(&[])
        .unwrap_or_else(|e| panic!("`{name}`: {e}"))
}

/// The rule `name` with one argument (see [`RuleDef::strategy_or_invalid`]).
pub(crate) fn sized(name: &str, n: i64) -> Strategy<Term> {
    known(name).strategy_or_invalid(&[n])
}

/// The catalogue as a Markdown table, for the documentation.
pub fn markdown() -> String {
    let mut out = String::from("| rule | equation | e-graph |\n|---|---|---|\n");
    for def in catalogue() {
        // `algorithmic`, or `algorithmic: splitJoin(4), splitJoin(32)`.
        let sets: Vec<String> = Set::ALL
            .iter()
            .filter_map(|&set| {
                let args: Vec<&[i64]> = def
                    .sets
                    .iter()
                    .filter(|(s, _)| *s == set)
                    .map(|(_, args)| *args)
                    .collect();
                match args.as_slice() {
                    [] => None,
                    [[]] => Some(set.name().to_string()),
                    args => {
                        let labels: Vec<String> = args.iter().map(|a| def.label(a)).collect();
                        Some(format!("{}: {}", set.name(), labels.join(", ")))
                    }
                }
            })
            .collect();
        let egraph = match (def.in_egraph(), sets.is_empty()) {
            (false, _) => String::new(),
            (true, true) => "yes".to_string(),
            (true, false) => format!("yes ({})", sets.join("; ")),
        };
        let cell = |s: &str| s.replace('|', "\\|");
        out.push_str(&format!(
            "| `{}{}` | `{}`{} | {egraph} |\n",
            def.name,
            def.signature(),
            cell(def.equation),
            match def.note {
                "" => String::new(),
                note => format!(" ({})", cell(note)),
            },
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOCS: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/elevate-rise-library.md"
    );
    const BEGIN: &str = "<!-- catalogue:begin -->\n";
    const END: &str = "<!-- catalogue:end -->";

    #[test]
    fn the_documentation_lists_the_catalogue() {
        let docs = std::fs::read_to_string(DOCS).unwrap();
        let start = docs.find(BEGIN).expect("the catalogue's section") + BEGIN.len();
        let end = docs.find(END).expect("the catalogue's section");
        let table = markdown();
        if docs[start..end] == table {
            return;
        }
        if std::env::var_os("BLESS").is_some() {
            let written = format!("{}{table}{}", &docs[..start], &docs[end..]);
            std::fs::write(DOCS, written).unwrap();
            return;
        }
        panic!("{DOCS} lists other rules than the catalogue: run `BLESS=1 cargo test -p elevate-rise --lib catalogue`");
    }

    #[test]
    fn every_entry_is_well_formed() {
        let all = catalogue();
        for (i, def) in all.iter().enumerate() {
            assert!(
                all[..i].iter().all(|d| d.name != def.name),
                "{} is listed twice",
                def.name
            );
            assert!(def.params.len() <= 1, "{}", def.name);
            def.check(def.typical)
                .unwrap_or_else(|e| panic!("{}{:?}: {e}", def.name, def.typical));
            // Equations parse (with their arguments); every rule is made.
            def.strategy(def.typical)
                .unwrap_or_else(|e| panic!("{}: {e}", def.name));
            for (set, args) in def.sets {
                assert!(def.in_egraph(), "{} is in {set:?}", def.name);
                def.check(args).unwrap();
            }
            match def.egraph {
                EGraphUse::At(pattern, _) => {
                    Equation::new(def.name, &format!("{pattern} -> {pattern}"))
                        .unwrap_or_else(|e| panic!("{}: {e}", def.name));
                }
                EGraphUse::Equation(text) => {
                    Equation::new(def.name, text).unwrap_or_else(|e| panic!("{}: {e}", def.name));
                }
                EGraphUse::No | EGraphUse::Beta => {}
            }
        }
    }

    #[test]
    fn a_rule_and_the_equation_the_e_graph_applies_for_it_agree_on_its_example() {
        use crate::{infer, parse_term, print_term};
        use elevate_strategies::top_down;
        let mut checked = 0;
        for def in catalogue() {
            let EGraphUse::Equation(text) = def.egraph else {
                continue;
            };
            assert!(!def.example.is_empty(), "{} has no example", def.name);
            let example = infer(&parse_term(def.example).unwrap()).unwrap();
            let apply = |s: Strategy<Term>| {
                let t = top_down(s)
                    .apply(&example, &mut Context::default())
                    .unwrap_or_else(|e| panic!("{} on its example: {e}", def.name));
                print_term(&t)
            };
            let rule = apply(def.strategy(&[]).unwrap());
            let equation = apply(Equation::known(def.name, text).strategy());
            assert_eq!(rule, equation, "{}: the rule and `{text}`", def.name);
            checked += 1;
        }
        // The nine rules that had a twin for the e-graph.
        assert_eq!(checked, 9);
    }

    /// Rules written in Rust whose documented equation is not one the parser takes,
    /// or not one without the rule's own computation: why.
    const NOT_EQUATIONS: &[(&str, &str)] = &[
        ("betaReduction", "substitutes its argument for a variable"),
        ("letInline", "substitutes its value for a variable"),
        (
            "shareArgument",
            "a side condition on the argument's size and the uses of x",
        ),
        (
            "betaNatReduction",
            "substitutes its size for a nat variable",
        ),
        ("mapFullFission", "any number of functions"),
        ("mapFirstFission", "any number of functions"),
        ("slideBeforeMapMapF", "two equations (slide and split)"),
        ("loopInterchange", "two equations"),
        ("fuseReduceMap", "a function of the reduction's operator"),
        ("splitStrategy", "a strategy of rules"),
        ("reduceSeqInitFusion", "a function of the initial value"),
        ("copyAfter", "a copy as deep as the type"),
        ("vectorize", "f rewritten on vectors"),
        ("vectorizeReduce", "op rewritten on vectors"),
        ("takeBeforeJoin", "sizes computed from the match"),
        ("idxReduction", "an index computed from the match"),
        ("zipUnzipAccessSimplification", "any access path"),
        ("padMap", "the padding computed from the match"),
        ("letSwap", "moves a binding"),
        ("letSame", "compares two bindings"),
        ("hoistLet", "moves a binding"),
        ("separateDotHV", "weights as an outer product"),
        ("separateDotVH", "weights as an outer product"),
        ("blockLanes", "a block of lanes"),
        ("separateSumHV", "the literal 0 of the reduction's type"),
        ("dropBeforeJoin", "m is the inner length"),
        ("takeInSlide", "w computed from the match"),
        ("joinPixels", "m is the row length"),
    ];

    /// `text` with the whole word `name` replaced by `value`.
    fn substitute(text: &str, name: &str, value: i64) -> String {
        let mut out = String::new();
        let mut word = String::new();
        for c in text.chars().chain(std::iter::once(' ')) {
            if c.is_alphanumeric() || c == '_' {
                word.push(c);
                continue;
            }
            out.push_str(&if word == name {
                value.to_string()
            } else {
                std::mem::take(&mut word)
            });
            word.clear();
            out.push(c);
        }
        out.pop();
        out
    }

    /// Every subterm of `t`.
    fn subterms(t: &Term) -> Vec<Term> {
        use elevate_core::Traversable;
        let mut all = vec![t.clone()];
        let mut i = 0;
        while i < all.len() {
            let s = all[i].clone();
            all.extend((0..s.arity()).map(|k| s.child(k).clone()));
            i += 1;
        }
        all
    }

    #[test]
    fn every_rule_written_in_rust_does_what_its_documented_equation_says_on_its_example() {
        use crate::{infer, parse_term, print_term};
        let normal_form = crate::registry()
            .parse("BENF ; try(normalize(mapIdentity)) ; BENF")
            .unwrap();
        let mut checked = 0;
        for def in catalogue() {
            let in_rust = !matches!(def.make, Make::Equation);
            let twin = matches!(def.egraph, EGraphUse::Equation(_));
            if !in_rust || twin || def.role != Role::Rule {
                continue;
            }
            let listed = NOT_EQUATIONS.iter().any(|(name, _)| *name == def.name);
            let mut text = def.equation.to_string();
            for (param, value) in def.params.iter().zip(def.typical) {
                text = substitute(&text, param.name, *value);
            }
            let Ok(equation) = Equation::new(def.name, &text) else {
                assert!(
                    listed,
                    "{}: `{text}` is not an equation: list it in NOT_EQUATIONS with why",
                    def.name
                );
                continue;
            };
            assert!(!def.example.is_empty(), "{} has no example", def.name);
            let rule = def.strategy(def.typical).unwrap();
            let example = infer(&parse_term(def.example).unwrap()).unwrap();
            // Wherever both apply they agree (the rule may apply where the equation does
            // not: a wider form, or where the equation's sizes are not yet known).
            let mut both = 0;
            for s in subterms(&example) {
                let by_rule = rule.apply(&s, &mut Context::default());
                let by_equation = equation.strategy().apply(&s, &mut Context::default());
                if let (Ok(a), Ok(b)) = (by_rule, by_equation) {
                    // Up to beta, eta and identity maps: the equation leaves `op(a)(b)`
                    // and `map(fun(x => x))` where the rule writes `a + b` and nothing.
                    let normal = |t: &Term| normal_form.apply(t, &mut Context::default()).unwrap();
                    let (a, b) = (normal(&a), normal(&b));
                    assert!(
                        a.alpha_eq(&b),
                        "{}: the rule and `{text}` at {}:\n  {}\n  {}",
                        def.name,
                        print_term(&s),
                        print_term(&a),
                        print_term(&b)
                    );
                    both += 1;
                }
            }
            match listed {
                true if both == 0 => continue,
                true => panic!(
                    "{} is in NOT_EQUATIONS, but its equation `{text}` holds on its example",
                    def.name
                ),
                false => assert!(
                    both > 0,
                    "{}: the rule and `{text}` never apply at one place on its example",
                    def.name
                ),
            }
            checked += 1;
        }
        assert!(checked >= 50, "only {checked} rules checked");
    }

    #[test]
    fn arguments_are_checked_with_a_reason() {
        let split_join = known("splitJoin");
        assert_eq!(
            split_join.check(&[0]).unwrap_err().to_string(),
            "the size n must be positive, found 0"
        );
        assert_eq!(
            split_join.check(&[]).unwrap_err().to_string(),
            "expects 1 argument(s), found 0"
        );
        assert_eq!(
            known("mapGlobal").check(&[3]).unwrap_err().to_string(),
            "the dimension d must be 0, 1 or 2, found 3"
        );
        assert_eq!(
            known("vectorize").check(&[1]).unwrap_err().to_string(),
            "the vector width n must be at least 2, found 1"
        );
        let eq = split_join.equation_with(&[32]).unwrap().unwrap();
        assert_eq!(eq.label().to_string(), "splitJoin(32)");
        assert_eq!(
            crate::print_term(eq.rhs()),
            "x |> split(32) |> map(map(f)) |> join"
        );
    }
}
