//! Random terms and strategies for property tests.

use elevate_core::arith::{self, Term};
use elevate_core::{Budget, Context, RewriteResult, Strategy};
use elevate_strategies::*;
use quickcheck::{Arbitrary, Gen};

/// A random arithmetic term, biased so that the rules' left-hand sides occur often.
#[derive(Clone, Debug)]
pub struct AnyTerm(pub Term);

fn leaf(g: &mut Gen) -> Term {
    match u8::arbitrary(g) % 3 {
        0 => Term::var(g.choose(&["a", "b", "c"]).unwrap()),
        _ => Term::num(*g.choose(&[0, 1, 2, -1, 3]).unwrap()),
    }
}

pub fn term(g: &mut Gen, budget: usize) -> Term {
    if budget <= 1 {
        return leaf(g);
    }
    let rest = budget - 1;
    match u8::arbitrary(g) % 9 {
        0 => leaf(g),
        1 | 2 => {
            let left = usize::arbitrary(g) % rest;
            Term::sum(term(g, left), term(g, rest - left))
        }
        3 | 4 => {
            let left = usize::arbitrary(g) % rest;
            Term::product(term(g, left), term(g, rest - left))
        }
        5 => Term::negate(term(g, rest)),
        // Redexes of addZero, mulOne and negNeg.
        6 => Term::sum(term(g, rest), Term::num(0)),
        7 => Term::product(term(g, rest), Term::num(1)),
        _ => Term::negate(Term::negate(term(g, rest))),
    }
}

impl Arbitrary for AnyTerm {
    fn arbitrary(g: &mut Gen) -> Self {
        let size = usize::arbitrary(g) % (g.size() + 1);
        AnyTerm(term(g, size))
    }
}

/// The rules the generated strategies use. `addComm` always applies to a sum, so
/// anything that repeats it relies on the budget to stop.
pub fn rules() -> Vec<Strategy<Term>> {
    vec![
        arith::add_zero(),
        arith::mul_one(),
        arith::neg_neg(),
        arith::fold_constants(),
        arith::add_comm(),
        arith::distribute(),
    ]
}

/// A description of a random strategy (kept as data so quickcheck can show it).
#[derive(Clone, Debug)]
pub enum Desc {
    Rule(usize),
    Id,
    Fail,
    Seq(Box<Desc>, Box<Desc>),
    Choice(Box<Desc>, Box<Desc>),
    Try(Box<Desc>),
    Not(Box<Desc>),
    All(Box<Desc>),
    One(Box<Desc>),
    Some(Box<Desc>),
    TopDown(Box<Desc>),
    BottomUp(Box<Desc>),
    Alltd(Box<Desc>),
    Repeat(Box<Desc>),
}

impl Desc {
    pub fn build(&self) -> Strategy<Term> {
        use Desc::*;
        match self {
            Rule(i) => rules()[*i % rules().len()].clone(),
            Id => id(),
            Fail => fail(),
            Seq(a, b) => a.build() >> b.build(),
            Choice(a, b) => a.build() | b.build(),
            Try(a) => try_(a.build()),
            Not(a) => not(a.build()),
            All(a) => all(a.build()),
            One(a) => one(a.build()),
            Some(a) => some(a.build()),
            TopDown(a) => top_down(a.build()),
            BottomUp(a) => bottom_up(a.build()),
            Alltd(a) => alltd(a.build()),
            Repeat(a) => repeat(a.build()),
        }
    }

    fn random(g: &mut Gen, depth: usize) -> Desc {
        use Desc::*;
        let pick = u8::arbitrary(g) % if depth == 0 { 3 } else { 15 };
        let sub = |g: &mut Gen| Box::new(Desc::random(g, depth.saturating_sub(1)));
        match pick {
            0 | 1 => Rule(usize::arbitrary(g)),
            2 if bool::arbitrary(g) => Id,
            2 => Fail,
            3 => Seq(sub(g), sub(g)),
            4 => Choice(sub(g), sub(g)),
            5 => Try(sub(g)),
            6 => Not(sub(g)),
            7 => All(sub(g)),
            8 => One(sub(g)),
            9 => Some(sub(g)),
            10 | 11 => TopDown(sub(g)),
            12 => BottomUp(sub(g)),
            13 => Alltd(sub(g)),
            _ => Repeat(sub(g)),
        }
    }
}

impl Arbitrary for Desc {
    fn arbitrary(g: &mut Gen) -> Self {
        let depth = usize::arbitrary(g) % 4;
        Desc::random(g, depth)
    }
}

/// Outcome of a run with a generous budget: `None` if the budget ran out (the
/// strategy did not terminate on this term), else the result.
pub fn outcome(s: &Strategy<Term>, t: &Term) -> Option<RewriteResult<Term>> {
    let mut cx = Context::new(Budget::unlimited().applications(20_000).steps(2_000));
    match s.apply(t, &mut cx) {
        Err(e) if e.is_budget() => None,
        result => Some(result),
    }
}

/// Whether two outcomes agree: the same program, or both ordinary failures.
pub fn same(a: &Option<RewriteResult<Term>>, b: &Option<RewriteResult<Term>>) -> bool {
    match (a, b) {
        (Some(Ok(x)), Some(Ok(y))) => x == y,
        (Some(Err(_)), Some(Err(_))) => true,
        _ => false,
    }
}

/// The trace of `cx` as `RULE @ PATH` lines.
pub fn trace_lines(cx: &Context) -> Vec<String> {
    cx.trace()
        .unwrap()
        .iter()
        .map(ToString::to_string)
        .collect()
}
