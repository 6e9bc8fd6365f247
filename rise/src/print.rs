//! The printer: canonical, readable RISE text that parses back to an alpha-equivalent
//! term.

use crate::definition::Definition;
use crate::nat::{Nat, NatVar};
use crate::prim::Prim;
use crate::term::{Expr, Ident, Literal, Term};
use elevate_core::NameSupply;
use rustc_hash::FxHashMap;
use std::fmt::{self, Write};

/// Prints a term as one RISE expression.
///
/// Distinct variables get distinct names (`x`, `x2`, ...) where their written names
/// would clash.
pub fn print_term(term: &Term) -> String {
    let mut printer = Printer::for_term(term);
    let mut out = String::new();
    let _ = printer.term(&mut out, term, Prec::Pipe);
    out
}

/// Prints a definition: `def NAME<n, m>(x: T, ...) : T = BODY` when the term binds its
/// nat parameters and then annotated parameters, `def NAME = TERM` otherwise.
pub fn print_definition(name: &str, term: &Term) -> String {
    let mut printer = Printer::for_term(term);
    let mut out = String::new();
    let _ = printer.definition(&mut out, name, term);
    out
}

/// Prints parsed definitions (their inlined terms), one `def` each.
pub fn print_definitions(defs: &[Definition]) -> String {
    defs.iter()
        .map(|d| print_definition(&d.name, &d.term))
        .collect()
}

/// How tightly the context binds, loosest first (as in the grammar).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Prec {
    Pipe,
    Annotation,
    Comparison,
    Sum,
    Product,
    Unary,
    Postfix,
}

struct Printer {
    /// Names chosen for variables in scope, by identity.
    names: FxHashMap<u64, String>,
    /// How many variables in scope use each name.
    used: FxHashMap<String, usize>,
    /// Identities for the variables the printer introduces (`let x = v in f(x)`),
    /// above those of the term printed.
    fresh: NameSupply,
}

fn infix(p: Prim) -> Option<(&'static str, Prec)> {
    Some(match p {
        Prim::Add => ("+", Prec::Sum),
        Prim::Sub => ("-", Prec::Sum),
        Prim::Mul => ("*", Prec::Product),
        Prim::Div => ("/", Prec::Product),
        Prim::Mod => ("%", Prec::Product),
        Prim::Lt => ("<", Prec::Comparison),
        Prim::Gt => (">", Prec::Comparison),
        Prim::Equal => ("==", Prec::Comparison),
        _ => return None,
    })
}

/// An argument of an application spine: a nat or a value.
enum Arg {
    Nat(Nat),
    Value(Term),
}

/// Splits `f(a)(b)...` into the head and its arguments (nats and values in order).
fn spine(t: &Term) -> (Term, Vec<Arg>) {
    let mut args = Vec::new();
    let mut head = t;
    loop {
        match head.expr() {
            Expr::App(f, a) => {
                args.push(Arg::Value(a.clone()));
                head = f;
            }
            Expr::NatApp(f, n) => {
                args.push(Arg::Nat(n.clone()));
                head = f;
            }
            _ => break,
        }
    }
    args.reverse();
    (head.clone(), args)
}

/// What is left to print, in order: the printer works through a stack of these
/// instead of recursing, so terms 100,000 levels deep print without overflowing.
enum Item {
    /// A term, in a context that binds this tightly.
    Term(Term, Prec),
    Text(&'static str),
    Owned(String),
    /// The end of a variable's scope.
    Unbind(Ident, String),
}

/// Wraps `items` in parentheses when an expression binding as tightly as `own` stands
/// in a context binding more tightly.
fn parenthesized(own: Prec, context: Prec, mut items: Vec<Item>) -> Vec<Item> {
    if own < context {
        items.insert(0, Item::Text("("));
        items.push(Item::Text(")"));
    }
    items
}

impl Printer {
    /// A printer for `term` and its subterms.
    fn for_term(term: &Term) -> Printer {
        Printer {
            names: FxHashMap::default(),
            used: FxHashMap::default(),
            fresh: NameSupply::above(term.name_floor()),
        }
    }

    fn bind(&mut self, x: &Ident) -> String {
        let base = x.name.to_string();
        let count = self.used.entry(base.clone()).or_default();
        let name = if *count == 0 {
            base.clone()
        } else {
            format!("{base}{}", *count + 1)
        };
        *count += 1;
        // The suffixed name may itself be in use: take the next free one.
        let name = if name != base && self.used.get(&name).copied().unwrap_or(0) > 0 {
            let mut k = 2;
            loop {
                let candidate = format!("{base}_{k}");
                if self.used.get(&candidate).copied().unwrap_or(0) == 0 {
                    break candidate;
                }
                k += 1;
            }
        } else {
            name
        };
        if name != base {
            *self.used.entry(name.clone()).or_default() += 1;
        }
        self.names.insert(x.id, name.clone());
        name
    }

    fn unbind(&mut self, x: &Ident, name: &str) {
        let base = x.name.to_string();
        if let Some(c) = self.used.get_mut(&base) {
            *c -= 1;
        }
        if name != base {
            if let Some(c) = self.used.get_mut(name) {
                *c -= 1;
            }
        }
        self.names.remove(&x.id);
    }

    fn name_of(&self, x: &Ident) -> String {
        self.names
            .get(&x.id)
            .cloned()
            .unwrap_or_else(|| x.name.to_string())
    }

    fn definition(&mut self, out: &mut String, name: &str, t: &Term) -> fmt::Result {
        let mut nats = Vec::new();
        let mut body = t;
        while let Expr::NatLambda(v, b) = body.expr() {
            nats.push(v.clone());
            body = b;
        }
        let mut params = Vec::new();
        while let Expr::Lambda(x, Some(ty), b) = body.expr() {
            params.push((x, ty));
            body = b;
        }
        if params.is_empty() {
            write!(out, "def {name} = ")?;
            self.term(out, t, Prec::Pipe)?;
            out.push('\n');
            return Ok(());
        }
        write!(out, "def {name}")?;
        if !nats.is_empty() {
            out.push('<');
            for (i, v) in nats.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_nat_var(out, v)?;
            }
            out.push('>');
        }
        out.push('(');
        for (i, (x, ty)) in params.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            let name = self.bind(x);
            write!(out, "{name}: {ty}")?;
        }
        out.push(')');
        let body = match body.expr() {
            Expr::Annotation(e, ty) => {
                write!(out, " : {ty}")?;
                e
            }
            _ => body,
        };
        out.push_str(" =\n  ");
        self.term(out, body, Prec::Pipe)?;
        out.push('\n');
        Ok(())
    }

    /// Prints `t` in a context binding as tightly as `context`.
    fn term(&mut self, out: &mut String, t: &Term, context: Prec) -> fmt::Result {
        let mut stack = vec![Item::Term(t.clone(), context)];
        while let Some(item) = stack.pop() {
            match item {
                Item::Term(t, context) => {
                    let items = self.expand(&t, context)?;
                    stack.extend(items.into_iter().rev());
                }
                Item::Text(s) => out.push_str(s),
                Item::Owned(s) => out.push_str(&s),
                Item::Unbind(x, name) => self.unbind(&x, &name),
            }
        }
        Ok(())
    }

    /// What printing `t` amounts to, one level down. Binders are bound here, before
    /// anything after them is printed.
    fn expand(&mut self, t: &Term, context: Prec) -> Result<Vec<Item>, fmt::Error> {
        Ok(match t.expr() {
            Expr::Var(x) => vec![Item::Owned(self.name_of(x))],
            Expr::Literal(l) => {
                let mut text = String::new();
                write_literal(&mut text, l)?;
                parenthesized(literal_prec(l), context, vec![Item::Owned(text)])
            }
            Expr::Prim(p) => vec![Item::Text(p.name())],
            Expr::Lambda(..) => self.lambda(t)?,
            Expr::NatLambda(..) => {
                let mut params = String::from("depFun(");
                let mut body = t;
                let mut first = true;
                while let Expr::NatLambda(v, b) = body.expr() {
                    if !first {
                        params.push_str(", ");
                    }
                    first = false;
                    write_nat_var(&mut params, v)?;
                    body = b;
                }
                params.push_str(" => ");
                vec![
                    Item::Owned(params),
                    Item::Term(body.clone(), Prec::Pipe),
                    Item::Text(")"),
                ]
            }
            Expr::Array(items) => {
                let mut seq = vec![Item::Text("[")];
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        seq.push(Item::Text(", "));
                    }
                    seq.push(Item::Term(item.clone(), Prec::Pipe));
                }
                seq.push(Item::Text("]"));
                seq
            }
            Expr::Annotation(e, ty) => parenthesized(
                Prec::Annotation,
                context,
                vec![
                    Item::Term(e.clone(), Prec::Comparison),
                    Item::Owned(format!(" : {ty}")),
                ],
            ),
            Expr::App(..) | Expr::NatApp(..) => self.application(t, context),
        })
    }

    fn lambda(&mut self, t: &Term) -> Result<Vec<Item>, fmt::Error> {
        let mut params = Vec::new();
        let mut body = t;
        while let Expr::Lambda(x, ty, b) = body.expr() {
            params.push((x, ty));
            body = b;
        }
        let mut head = String::from("fun(");
        let mut names = Vec::new();
        for (i, (x, ty)) in params.iter().enumerate() {
            if i > 0 {
                head.push_str(", ");
            }
            let name = self.bind(x);
            head.push_str(&name);
            if let Some(ty) = ty {
                write!(head, ": {ty}")?;
            }
            names.push(name);
        }
        head.push_str(" => ");
        let mut seq = vec![
            Item::Owned(head),
            Item::Term(body.clone(), Prec::Pipe),
            Item::Text(")"),
        ];
        for ((x, _), name) in params.iter().zip(names).rev() {
            seq.push(Item::Unbind((*x).clone(), name));
        }
        Ok(seq)
    }

    fn application(&mut self, t: &Term, context: Prec) -> Vec<Item> {
        let (head, args) = spine(t);
        if let Expr::Prim(p) = head.expr() {
            match (p, args.as_slice()) {
                (p, [Arg::Value(a), Arg::Value(b)]) if infix(*p).is_some() => {
                    let (op, prec) = infix(*p).expect("checked");
                    return parenthesized(
                        prec,
                        context,
                        vec![
                            Item::Term(a.clone(), prec),
                            Item::Owned(format!(" {op} ")),
                            Item::Term(b.clone(), next(prec)),
                        ],
                    );
                }
                (Prim::Neg, [Arg::Value(a)]) => {
                    // `-(3)`: a bare `-3` would read back as a literal.
                    let operand = if matches!(a.expr(), Expr::Literal(_)) {
                        vec![
                            Item::Text("-("),
                            Item::Term(a.clone(), Prec::Pipe),
                            Item::Text(")"),
                        ]
                    } else {
                        vec![Item::Text("-"), Item::Term(a.clone(), Prec::Unary)]
                    };
                    return parenthesized(Prec::Unary, context, operand);
                }
                (Prim::MakePair, [Arg::Value(a), Arg::Value(b)]) => {
                    return vec![
                        Item::Text("("),
                        Item::Term(a.clone(), Prec::Pipe),
                        Item::Text(", "),
                        Item::Term(b.clone(), Prec::Pipe),
                        Item::Text(")"),
                    ];
                }
                (Prim::Let, [Arg::Value(value), Arg::Value(lambda)]) => {
                    // `let(v, f)` with a function that is not a lambda (after eta
                    // reduction, say) has no syntax of its own: it is written
                    // `let x = v in f(x)`, which parses to its eta-expansion.
                    let (x, body) = match lambda.expr() {
                        Expr::Lambda(x, _, body) => (x.clone(), body.clone()),
                        _ => {
                            let x = Ident::supplied(&mut self.fresh, "x");
                            (x.clone(), Term::app(lambda.clone(), Term::var(&x)))
                        }
                    };
                    // Variables are looked up by identity, so binding `x` before
                    // printing the value cannot confuse the value's free variables;
                    // it only keeps their names distinct.
                    let name = self.bind(&x);
                    return parenthesized(
                        Prec::Pipe,
                        context,
                        vec![
                            Item::Owned(format!("let {name} = ")),
                            Item::Term(value.clone(), Prec::Pipe),
                            Item::Text(" in "),
                            Item::Term(body, Prec::Pipe),
                            Item::Unbind(x, name),
                        ],
                    );
                }
                _ => {}
            }
        }
        // `xs |> map(f)` for a fully applied pipeline stage, as RISE is written.
        if let (Expr::Prim(p), Some(Arg::Value(last))) = (head.expr(), args.last()) {
            let values = args.iter().filter(|a| matches!(a, Arg::Value(_))).count();
            if p.is_pipeline_stage() && values == p.value_arity() {
                let mut seq = vec![Item::Term(last.clone(), Prec::Pipe), Item::Text(" |> ")];
                seq.extend(call(&head, &args[..args.len() - 1]));
                return parenthesized(Prec::Pipe, context, seq);
            }
        }
        parenthesized(Prec::Postfix, context, call(&head, &args))
    }
}

/// `head(args...)`: nats first, as the parser expects them. A nat after a value
/// cannot be merged into the same call.
fn call(head: &Term, args: &[Arg]) -> Vec<Item> {
    let mut seq = vec![Item::Term(head.clone(), Prec::Postfix)];
    let mut open = false;
    let mut seen_value = false;
    for arg in args {
        let is_nat = matches!(arg, Arg::Nat(_));
        if !open || (is_nat && seen_value) {
            seq.push(Item::Text(if open { ")(" } else { "(" }));
            open = true;
            seen_value = false;
        } else {
            seq.push(Item::Text(", "));
        }
        match arg {
            Arg::Nat(n) => seq.push(Item::Owned(n.to_string())),
            Arg::Value(v) => {
                seen_value = true;
                seq.push(Item::Term(v.clone(), Prec::Pipe));
            }
        }
    }
    if open {
        seq.push(Item::Text(")"));
    }
    seq
}

fn next(p: Prec) -> Prec {
    match p {
        Prec::Pipe => Prec::Annotation,
        Prec::Annotation => Prec::Comparison,
        Prec::Comparison => Prec::Sum,
        Prec::Sum => Prec::Product,
        Prec::Product => Prec::Unary,
        Prec::Unary | Prec::Postfix => Prec::Postfix,
    }
}

fn literal_prec(l: &Literal) -> Prec {
    let negative = match *l {
        Literal::I32(v) => v < 0,
        Literal::I64(v) => v < 0,
        Literal::F32(v) => v.is_sign_negative(),
        Literal::F64(v) => v.is_sign_negative(),
        Literal::Bool(_) => false,
    };
    if negative {
        Prec::Unary
    } else {
        Prec::Postfix
    }
}

fn write_nat_var(out: &mut String, v: &NatVar) -> fmt::Result {
    match v {
        NatVar::Named(n) => write!(out, "{n}"),
        NatVar::Unknown(k) => write!(out, "?{k}"),
    }
}

fn write_float(out: &mut String, text: String) -> fmt::Result {
    out.push_str(&text);
    if !text.contains('.') && !text.contains("inf") && !text.contains("NaN") {
        out.push_str(".0");
    }
    Ok(())
}

fn write_literal(out: &mut String, l: &Literal) -> fmt::Result {
    match *l {
        Literal::Bool(b) => write!(out, "{b}"),
        Literal::I32(v) => write!(out, "{v}"),
        Literal::I64(v) => write!(out, "{v}i64"),
        Literal::F32(v) => write_float(out, format!("{v}")),
        Literal::F64(v) => {
            write_float(out, format!("{v}"))?;
            out.push_str("f64");
            Ok(())
        }
    }
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&print_term(self))
    }
}

/// A literal as RISE writes it: `2.0`, `3i64`, `0.5f64`.
///
/// ```
/// use elevate_rise::Literal;
/// assert_eq!(Literal::F32(2.0).to_string(), "2.0");
/// assert_eq!(Literal::I64(3).to_string(), "3i64");
/// ```
impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        write_literal(&mut out, self)?;
        f.write_str(&out)
    }
}

impl fmt::Debug for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&print_term(self))
    }
}
