//! Files and definitions: `def NAME<n, ...>(x: T, ...) : T = BODY`.

use super::{check_repeated, Binding, Parser};
use crate::definition::Definition;
use crate::error::{Error, ErrorKind, Span};
use crate::lexer::Tok;
use crate::nat::NatVar;
use crate::term::{Expr, Term};

impl Parser {
    /// A whole file: definitions up to the end of the input, at least one.
    pub(super) fn program(&mut self, source: &str) -> Result<(), Error> {
        while self.peek() != &Tok::End {
            let def = self.definition()?;
            if self.def_index.contains_key(&def.name) {
                return Err(Error::new(
                    ErrorKind::Parse,
                    def.span,
                    format!("`{}` is defined twice", def.name),
                ));
            }
            self.def_index.insert(def.name.clone(), self.defs.len());
            self.defs.push(def);
        }
        if self.defs.is_empty() {
            let what = if source.trim().is_empty() {
                "the file is empty"
            } else {
                "the file holds only comments"
            };
            return Err(Error::new(
                ErrorKind::Parse,
                Span::new(0, 0),
                format!("no definitions: {what} (expected `def NAME(...) = ...`)"),
            ));
        }
        Ok(())
    }

    fn definition(&mut self) -> Result<Definition, Error> {
        self.expect_keyword("def")?;
        let (name, span) = self.name("a definition name")?;
        self.scope.truncate(0);
        // Every parameter name, nat or value, to reject one written twice.
        let mut names: Vec<(String, Span)> = Vec::new();
        let mut nat_params = Vec::new();
        let explicit_nats = self.eat("<");
        if explicit_nats {
            loop {
                let (n, at) = self.name("a nat parameter")?;
                nat_params.push(NatVar::Named(n.as_str().into()));
                names.push((n, at));
                if !self.eat(",") {
                    break;
                }
            }
            self.expect(">")?;
        }
        let mut params = Vec::new();
        if self.eat("(") {
            loop {
                let (p, at) = self.name("a parameter name")?;
                self.expect(":")?;
                let ty = self.annotation()?;
                params.push((self.fresh_ident(&p), ty));
                names.push((p, at));
                if !self.eat(",") {
                    break;
                }
            }
            self.expect(")")?;
        }
        check_repeated(&names)?;
        let result = if self.eat(":") {
            Some(self.annotation()?)
        } else {
            None
        };
        if !explicit_nats {
            for ty in params.iter().map(|(_, t)| t).chain(result.iter()) {
                for v in ty.nat_vars() {
                    if !nat_params.contains(&v) {
                        nat_params.push(v);
                    }
                }
            }
        }
        self.expect("=")?;
        for v in &nat_params {
            if let NatVar::Named(n) = v {
                self.scope.push(n, Binding::Nat(v.clone()));
            }
        }
        for (p, _) in &params {
            self.scope.push(&p.name, Binding::Var(p.clone()));
        }
        let body = self.expression()?.term;
        self.scope.truncate(0);
        let body = match result {
            Some(ty) => Term::with(Expr::Annotation(body.clone(), ty), None, body.span()),
            None => body,
        };
        let lambdas = params.into_iter().rev().fold(body, |body, (p, ty)| {
            let span = body.span();
            Term::with(Expr::Lambda(p, Some(ty), body), None, span)
        });
        let term = nat_params.iter().rev().fold(lambdas, |body, v| {
            let span = body.span();
            Term::with(Expr::NatLambda(v.clone(), body), None, span)
        });
        Ok(Definition {
            name,
            nat_params,
            explicit_nats,
            term,
            span,
        })
    }
}
