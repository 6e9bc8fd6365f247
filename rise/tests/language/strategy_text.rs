//! Random strategy text from the grammar (names and argument shapes from the RISE
//! registry, numbers from 0 to absurd and negative, nesting, `;`, `<+`, `;;`, `@`,
//! `def`s) applied to the example programs under a small budget: it never panics,
//! never overflows the stack, and always ends, with a program, a failure, a budget
//! failure or a located error in the text.

use super::{example, load};
use elevate_core::{Budget, Context, Log, Traversable as _};
use elevate_rise::Term;
use quickcheck::{Arbitrary, Gen, QuickCheck};
use std::sync::mpsc;
use std::sync::OnceLock;
use std::time::Duration;

/// What one argument of a registered strategy is, read from its documented
/// parameters (`(n, s)`, `([i, ...], s)`, `("PROGRAM")`, `(PRIM, s)`, ...).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Param {
    Int,
    List,
    Str,
    Prim,
    Strategy,
}

/// A registered name and its argument groups.
#[derive(Clone, Debug)]
struct Signature {
    name: String,
    groups: Vec<Vec<Param>>,
}

fn param(token: &str) -> Param {
    match token.trim() {
        t if t.starts_with('[') => Param::List,
        t if t.starts_with('"') => Param::Str,
        "PRIM" => Param::Prim,
        "s" | "p" | "t" | "e" | "what" | "how" => Param::Strategy,
        _ => Param::Int,
    }
}

/// `(n)(s)` to `[[Int], [Strategy]]`.
fn groups(params: &str) -> Vec<Vec<Param>> {
    let mut groups = Vec::new();
    let (mut group, mut token, mut depth) = (Vec::new(), String::new(), 0);
    for c in params.chars() {
        match c {
            '(' if depth == 0 => depth = 1,
            ')' if depth == 1 => {
                if !token.trim().is_empty() {
                    group.push(param(&token));
                }
                groups.push(std::mem::take(&mut group));
                token.clear();
                depth = 0;
            }
            ',' if depth == 1 => {
                group.push(param(&token));
                token.clear();
            }
            '[' => {
                depth += 1;
                token.push(c);
            }
            ']' => {
                depth -= 1;
                token.push(c);
            }
            _ => token.push(c),
        }
    }
    groups
}

fn signatures() -> &'static [Signature] {
    static SIGNATURES: OnceLock<Vec<Signature>> = OnceLock::new();
    SIGNATURES.get_or_init(|| {
        elevate_rise::registry()
            .entries()
            .map(|e| Signature {
                name: e.name.clone(),
                groups: groups(&e.params),
            })
            .collect()
    })
}

/// Numbers, small ones more often than absurd ones.
const NUMBERS: &[&str] = &[
    "0",
    "0",
    "1",
    "1",
    "2",
    "2",
    "3",
    "4",
    "32",
    "-1",
    "-7",
    "99999999",
    "4294967296",
    "1099511627776",
    "1000000000000",
    "9223372036854775807",
    "-9223372036854775808",
];

/// Beyond every integer type: an error at the number.
const TOO_LARGE: &str = "99999999999999999999";

const STRINGS: &[&str] = &[
    "\"\"",
    "\"hello\"",
    "\"fun(x: f32 => x)\"",
    "\"map(f)\"",
    "\"default\"",
    "\"iterations=1,nodes=100,ms=20\"",
    "\"size\"",
];

const PRIMS: &[&str] = &["map", "reduce", "zip", "split", "transpose", "nope"];

fn pick<'a>(g: &mut Gen, items: &[&'a str]) -> &'a str {
    g.choose(items).copied().unwrap_or("id")
}

fn below(g: &mut Gen, n: usize) -> usize {
    usize::arbitrary(g) % n.max(1)
}

/// Builds random strategy text.
struct Writer<'g> {
    g: &'g mut Gen,
    /// Definitions in scope (name, number of parameters).
    defs: Vec<(String, usize)>,
    /// Parameters in scope.
    params: Vec<String>,
}

impl Writer<'_> {
    fn number(&mut self) -> String {
        if below(self.g, 60) == 0 {
            return TOO_LARGE.into();
        }
        pick(self.g, NUMBERS).to_string()
    }

    fn arg(&mut self, kind: Param, depth: usize) -> String {
        // Now and then, an argument of the wrong kind.
        let kind = if below(self.g, 12) == 0 {
            *self
                .g
                .choose(&[
                    Param::Int,
                    Param::List,
                    Param::Str,
                    Param::Prim,
                    Param::Strategy,
                ])
                .unwrap_or(&kind)
        } else {
            kind
        };
        match kind {
            Param::Int => self.number(),
            Param::List => {
                let items: Vec<String> = (0..below(self.g, 4))
                    .map(|_| {
                        if below(self.g, 3) == 0 {
                            self.number()
                        } else {
                            (below(self.g, 4) + 1).to_string()
                        }
                    })
                    .collect();
                format!("[{}]", items.join(", "))
            }
            Param::Str => pick(self.g, STRINGS).to_string(),
            Param::Prim => pick(self.g, PRIMS).to_string(),
            Param::Strategy => self.strategy(depth),
        }
    }

    /// A registered name with arguments for its groups; without the last argument
    /// when `partial` (for `@` and `applyN`).
    fn call(&mut self, signature: &Signature, depth: usize, partial: bool) -> String {
        let mut groups = signature.groups.clone();
        if partial {
            if let Some(last) = groups.last_mut() {
                last.pop();
                if last.is_empty() {
                    groups.pop();
                }
            }
        }
        // Now and then, one argument too many or too few.
        match below(self.g, 16) {
            0 => groups.push(vec![Param::Int]),
            1 => {
                groups.pop();
            }
            _ => {}
        }
        let mut text = signature.name.clone();
        for group in groups {
            let args: Vec<String> = group.iter().map(|&k| self.arg(k, depth)).collect();
            text.push_str(&format!("({})", args.join(", ")));
        }
        text
    }

    fn signature(&mut self) -> Signature {
        self.g
            .choose(signatures())
            .cloned()
            .expect("a registry with names")
    }

    /// A traversal written without its last argument.
    fn traversal(&mut self, depth: usize) -> String {
        if below(self.g, 4) == 0 {
            let inner = self.traversal(depth.saturating_sub(1));
            return format!("applyN({}, {inner})", self.number());
        }
        let signature = self.signature();
        self.call(&signature, depth, true)
    }

    fn atom(&mut self, depth: usize) -> String {
        match below(self.g, 10) {
            0 if !self.params.is_empty() => self.g.choose(&self.params).cloned().unwrap(),
            1 if !self.defs.is_empty() => {
                let (name, arity) = self.g.choose(&self.defs).cloned().unwrap();
                if arity == 0 {
                    name
                } else {
                    let args: Vec<String> = (0..arity)
                        .map(|_| self.strategy(depth.saturating_sub(1)))
                        .collect();
                    format!("{name}({})", args.join(", "))
                }
            }
            2 if below(self.g, 4) == 0 => "nope".into(),
            _ if depth == 0 => {
                // A name whose arguments are no strategies, so that the text ends.
                let leaves: Vec<&Signature> = signatures()
                    .iter()
                    .filter(|s| !s.groups.iter().flatten().any(|&p| p == Param::Strategy))
                    .collect();
                let signature = (*self.g.choose(&leaves).expect("rules")).clone();
                self.call(&signature, 0, false)
            }
            _ => {
                let signature = self.signature();
                self.call(&signature, depth - 1, false)
            }
        }
    }

    fn strategy(&mut self, depth: usize) -> String {
        if depth == 0 {
            return self.atom(0);
        }
        let d = depth - 1;
        match below(self.g, 12) {
            0 => format!("{} ; {}", self.strategy(d), self.strategy(d)),
            1 => format!("{} <+ {}", self.strategy(d), self.strategy(d)),
            2 => format!("{} ;; {}", self.strategy(d), self.strategy(d)),
            3 => format!("({}) @ {}", self.strategy(d), self.traversal(d)),
            4 => format!("({})", self.strategy(d)),
            5 => {
                // A deep nest.
                let n = below(self.g, 3000);
                format!("{}{}{}", "try(".repeat(n), self.atom(0), ")".repeat(n))
            }
            6 => {
                // A long chain.
                let n = below(self.g, 1000) + 1;
                let op = *self.g.choose(&[" ; ", " <+ ", " ;; "]).unwrap();
                let part = self.atom(0);
                vec![part; n].join(op)
            }
            7 => format!("applyN({}, {})", self.number(), self.strategy(d)),
            _ => self.atom(depth),
        }
    }

    /// A file: a few definitions, then the strategy.
    fn file(&mut self) -> String {
        let mut text = String::new();
        for i in 0..below(self.g, 4) {
            let name = format!("d{i}");
            let arity = below(self.g, 3);
            self.params = (0..arity).map(|k| format!("x{k}")).collect();
            let header = if arity == 0 {
                name.clone()
            } else {
                format!("{name}({})", self.params.join(", "))
            };
            // Now and then a reference to itself: a cycle, which is an error.
            if below(self.g, 10) == 0 {
                self.defs.push((name.clone(), arity));
            }
            let body = self.strategy(3);
            text.push_str(&format!("def {header} = {body}\n"));
            self.params.clear();
            if !self.defs.iter().any(|(n, _)| *n == name) {
                self.defs.push((name, arity));
            }
        }
        let depth = below(self.g, 5);
        text.push_str(&self.strategy(depth));
        text
    }
}

/// Strategy text from the grammar.
#[derive(Clone, Debug)]
struct StrategyText(String);

impl Arbitrary for StrategyText {
    fn arbitrary(g: &mut Gen) -> Self {
        let mut writer = Writer {
            g,
            defs: Vec::new(),
            params: Vec::new(),
        };
        StrategyText(writer.file())
    }
}

fn programs() -> &'static [Term] {
    static PROGRAMS: OnceLock<Vec<Term>> = OnceLock::new();
    PROGRAMS.get_or_init(|| {
        ["dot.rise", "matmul.rise", "scal.rise", "separable.rise"]
            .iter()
            .map(|name| load(&example(name)).entry().term.clone())
            .collect()
    })
}

/// Parses `text` and applies it to every example under a small budget, on a thread
/// of its own (with the default 2 MiB stack): `Err` if it does not end in time.
fn run_to_the_end(text: String) -> Result<(), String> {
    let programs = programs();
    let (done, ended) = mpsc::channel();
    let shown = text.clone();
    std::thread::spawn(move || {
        let registry = elevate_rise::registry();
        match registry.parse(&text) {
            Err(e) => {
                // A located error that renders.
                assert!(e.offset <= text.len(), "{}", e.message);
                let _ = e.render("random.elv", &text);
            }
            Ok(strategy) => {
                let _ = strategy.to_string();
                for program in programs {
                    let budget = Budget::unlimited()
                        .applications(3_000)
                        .time(Duration::from_millis(200));
                    let mut cx = Context::new(budget).with_log(Log::Silent);
                    if let Ok(result) = strategy.apply(program, &mut cx) {
                        let _ = result.size();
                    }
                }
            }
        }
        let _ = done.send(());
    });
    match ended.recv_timeout(Duration::from_secs(60)) {
        Ok(()) => Ok(()),
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(format!("panicked on:\n{shown}")),
        Err(mpsc::RecvTimeoutError::Timeout) => Err(format!("did not end:\n{shown}")),
    }
}

#[test]
fn random_strategy_text_always_ends_without_a_crash() {
    fn ends(text: StrategyText) -> bool {
        match run_to_the_end(text.0) {
            Ok(()) => true,
            Err(message) => panic!("{message}"),
        }
    }
    QuickCheck::new()
        .tests(150)
        .rng(Gen::new(8))
        .quickcheck(ends as fn(StrategyText) -> bool);
}

#[test]
fn the_generated_text_covers_the_grammar() {
    // The generator itself: every form shows up in a few hundred samples, so the
    // property above is about what it claims to be about.
    let mut g = Gen::new(8);
    let samples: Vec<String> = (0..400)
        .map(|_| StrategyText::arbitrary(&mut g).0)
        .collect();
    let all = samples.join("\n");
    for form in [
        " ; ", " <+ ", " ;; ", " @ ", "def ", "applyN(", "try(try(", "-1", "99999999",
    ] {
        assert!(all.contains(form), "no `{form}` in the samples");
    }
    assert!(signatures()
        .iter()
        .any(|s| s.groups == [vec![Param::Int], vec![Param::Strategy]]));
}
