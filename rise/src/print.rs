//! The printer: canonical, readable RISE text that parses back to an alpha-equivalent
//! term.

use crate::definition::Definition;
use crate::nat::NatVar;
use crate::prim::Prim;
use crate::term::{Expr, Ident, Literal, Term};
use elevate_core::stack::guard;
use rustc_hash::FxHashMap;
use std::fmt::{self, Write};

/// Prints a term as one RISE expression.
///
/// Distinct variables get distinct names (`x`, `x2`, ...) where their written names
/// would clash.
pub fn print_term(term: &Term) -> String {
    let mut printer = Printer::default();
    let mut out = String::new();
    let _ = printer.term(&mut out, term, Prec::Pipe);
    out
}

/// Prints a definition: `def NAME<n, m>(x: T, ...) : T = BODY` when the term binds its
/// nat parameters and then annotated parameters, `def NAME = TERM` otherwise.
pub fn print_definition(name: &str, term: &Term) -> String {
    let mut printer = Printer::default();
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

#[derive(Default)]
struct Printer {
    /// Names chosen for variables in scope, by identity.
    names: FxHashMap<u64, String>,
    /// How many variables in scope use each name.
    used: FxHashMap<String, usize>,
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

/// Splits `f(a)(b)...` into the head and its arguments (nats and values in order).
enum Arg<'t> {
    Nat(&'t crate::nat::Nat),
    Value(&'t Term),
}

fn spine(t: &Term) -> (&Term, Vec<Arg<'_>>) {
    let mut args = Vec::new();
    let mut head = t;
    loop {
        match head.expr() {
            Expr::App(f, a) => {
                args.push(Arg::Value(a));
                head = f;
            }
            Expr::NatApp(f, n) => {
                args.push(Arg::Nat(n));
                head = f;
            }
            _ => break,
        }
    }
    args.reverse();
    (head, args)
}

impl Printer {
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

    fn term(&mut self, out: &mut String, t: &Term, context: Prec) -> fmt::Result {
        guard(|| self.term_inner(out, t, context))
    }

    fn parenthesize(
        &mut self,
        out: &mut String,
        own: Prec,
        context: Prec,
        body: impl FnOnce(&mut Self, &mut String) -> fmt::Result,
    ) -> fmt::Result {
        if own < context {
            out.push('(');
            body(self, out)?;
            out.push(')');
            Ok(())
        } else {
            body(self, out)
        }
    }

    fn term_inner(&mut self, out: &mut String, t: &Term, context: Prec) -> fmt::Result {
        match t.expr() {
            Expr::Var(x) => {
                let name = self.name_of(x);
                out.push_str(&name);
                Ok(())
            }
            Expr::Literal(l) => self.parenthesize(out, literal_prec(l), context, |_, out| {
                write_literal(out, l)
            }),
            Expr::Prim(p) => {
                out.push_str(p.name());
                Ok(())
            }
            Expr::Lambda(..) => self.lambda(out, t),
            Expr::NatLambda(..) => {
                let mut params = Vec::new();
                let mut body = t;
                while let Expr::NatLambda(v, b) = body.expr() {
                    params.push(v.clone());
                    body = b;
                }
                out.push_str("depFun(");
                for (i, v) in params.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_nat_var(out, v)?;
                }
                out.push_str(" => ");
                self.term(out, body, Prec::Pipe)?;
                out.push(')');
                Ok(())
            }
            Expr::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.term(out, item, Prec::Pipe)?;
                }
                out.push(']');
                Ok(())
            }
            Expr::Annotation(e, ty) => {
                self.parenthesize(out, Prec::Annotation, context, |p, out| {
                    p.term(out, e, Prec::Comparison)?;
                    write!(out, " : {ty}")
                })
            }
            Expr::App(..) | Expr::NatApp(..) => self.application(out, t, context),
        }
    }

    fn lambda(&mut self, out: &mut String, t: &Term) -> fmt::Result {
        let mut params = Vec::new();
        let mut body = t;
        while let Expr::Lambda(x, ty, b) = body.expr() {
            params.push((x, ty));
            body = b;
        }
        out.push_str("fun(");
        let mut names = Vec::new();
        for (i, (x, ty)) in params.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            let name = self.bind(x);
            out.push_str(&name);
            if let Some(ty) = ty {
                write!(out, ": {ty}")?;
            }
            names.push(name);
        }
        out.push_str(" => ");
        self.term(out, body, Prec::Pipe)?;
        out.push(')');
        for ((x, _), name) in params.iter().zip(&names).rev() {
            self.unbind(x, name);
        }
        Ok(())
    }

    fn application(&mut self, out: &mut String, t: &Term, context: Prec) -> fmt::Result {
        let (head, args) = spine(t);
        if let Expr::Prim(p) = head.expr() {
            match (p, args.as_slice()) {
                (p, [Arg::Value(a), Arg::Value(b)]) if infix(*p).is_some() => {
                    let (op, prec) = infix(*p).expect("checked");
                    return self.parenthesize(out, prec, context, |pr, out| {
                        pr.term(out, a, prec)?;
                        write!(out, " {op} ")?;
                        pr.term(out, b, next(prec))
                    });
                }
                (Prim::Neg, [Arg::Value(a)]) => {
                    return self.parenthesize(out, Prec::Unary, context, |pr, out| {
                        out.push('-');
                        // `-(3)`: a bare `-3` would read back as a literal.
                        let prec = if matches!(a.expr(), Expr::Literal(_)) {
                            Prec::Pipe
                        } else {
                            Prec::Unary
                        };
                        if prec == Prec::Pipe {
                            out.push('(');
                            pr.term(out, a, Prec::Pipe)?;
                            out.push(')');
                            Ok(())
                        } else {
                            pr.term(out, a, Prec::Unary)
                        }
                    });
                }
                (Prim::MakePair, [Arg::Value(a), Arg::Value(b)]) => {
                    out.push('(');
                    self.term(out, a, Prec::Pipe)?;
                    out.push_str(", ");
                    self.term(out, b, Prec::Pipe)?;
                    out.push(')');
                    return Ok(());
                }
                (Prim::Let, [Arg::Value(value), Arg::Value(lambda)]) => {
                    // `let(v, f)` with a function that is not a lambda (after eta
                    // reduction, say) has no syntax of its own: it is written
                    // `let x = v in f(x)`, which parses to its eta-expansion.
                    let (x, body) = match lambda.expr() {
                        Expr::Lambda(x, _, body) => (x.clone(), body.clone()),
                        _ => {
                            let x = Ident::fresh("x");
                            (x.clone(), Term::app((*lambda).clone(), Term::var(&x)))
                        }
                    };
                    let (x, body) = (&x, &body);
                    return self.parenthesize(out, Prec::Pipe, context, |pr, out| {
                        // Variables are looked up by identity, so binding `x`
                        // before printing the value cannot confuse the value's
                        // free variables; it only keeps their names distinct.
                        let name = pr.bind(x);
                        write!(out, "let {name} = ")?;
                        pr.term(out, value, Prec::Pipe)?;
                        out.push_str(" in ");
                        pr.term(out, body, Prec::Pipe)?;
                        pr.unbind(x, &name);
                        Ok(())
                    });
                }
                _ => {}
            }
        }
        // `xs |> map(f)` for a fully applied pipeline stage, as RISE is written.
        if let (Expr::Prim(p), Some(Arg::Value(last))) = (head.expr(), args.last()) {
            let values = args.iter().filter(|a| matches!(a, Arg::Value(_))).count();
            if p.is_pipeline_stage() && values == p.value_arity() {
                let rest = &args[..args.len() - 1];
                return self.parenthesize(out, Prec::Pipe, context, |pr, out| {
                    pr.term(out, last, Prec::Pipe)?;
                    out.push_str(" |> ");
                    pr.call(out, head, rest)
                });
            }
        }
        self.parenthesize(out, Prec::Postfix, context, |pr, out| {
            pr.call(out, head, &args)
        })
    }

    /// `head(args...)`: nats first, as the parser expects them. A nat after a value
    /// cannot be merged into the same call.
    fn call(&mut self, out: &mut String, head: &Term, args: &[Arg<'_>]) -> fmt::Result {
        {
            let pr = self;
            pr.term(out, head, Prec::Postfix)?;
            let mut open = false;
            let mut seen_value = false;
            for arg in args {
                let is_nat = matches!(arg, Arg::Nat(_));
                if !open || (is_nat && seen_value) {
                    if open {
                        out.push(')');
                    }
                    out.push('(');
                    open = true;
                    seen_value = false;
                } else {
                    out.push_str(", ");
                }
                match arg {
                    Arg::Nat(n) => write!(out, "{n}")?,
                    Arg::Value(v) => {
                        seen_value = true;
                        pr.term(out, v, Prec::Pipe)?;
                    }
                }
            }
            if open {
                out.push(')');
            }
            Ok(())
        }
    }
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

impl fmt::Debug for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&print_term(self))
    }
}
