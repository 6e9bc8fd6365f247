//! Strategy text to a syntax tree (with nom).

use nom::bytes::complete::{take_until, take_while, take_while1};
use nom::character::complete::{char, digit1};
use nom::combinator::{opt, recognize};
use nom::sequence::pair;
use nom::{IResult, Parser as _};
use std::fmt;

/// An error in strategy text: where and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextError {
    /// Byte offset in the text.
    pub offset: usize,
    /// What was expected, or what is wrong.
    pub message: String,
}

impl TextError {
    /// `(line, column)`, from 1.
    pub fn line_col(&self, text: &str) -> (usize, usize) {
        let before = &text[..self.offset.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, col)
    }

    /// `file:line:col: message`, the line, and a caret under the problem.
    pub fn render(&self, file: &str, text: &str) -> String {
        let (line, col) = self.line_col(text);
        let source_line = text.lines().nth(line - 1).unwrap_or("");
        format!(
            "{file}:{line}:{col}: strategy error: {}\n  {source_line}\n  {}^",
            self.message,
            " ".repeat(col - 1)
        )
    }
}

impl fmt::Display for TextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at byte {})", self.message, self.offset)
    }
}

impl std::error::Error for TextError {}

/// A parsed strategy expression.
///
/// Chains of `;` and of `<+` are flat (one node for `a ; b ; c`), and dropping a
/// tree uses a work list, so that text nested 100,000 levels deep or 30,000
/// strategies long is handled without deep recursion.
#[derive(Debug, Clone, PartialEq)]
pub enum Ast {
    /// `NAME(args)(args)...`
    Call {
        /// The name.
        name: String,
        /// The argument groups, in order.
        args: Vec<Vec<Arg>>,
        /// Where the name is.
        offset: usize,
    },
    /// `a ; b ; ...` (at least two; `a ;; b` is `a ; DFNF ; b`).
    Seq(Vec<Ast>),
    /// `a <+ b <+ ...` (at least two).
    Choice(Vec<Ast>),
    /// `s @ t`, with the offset of `@`.
    At(Box<Ast>, Box<Ast>, usize),
}

impl Ast {
    /// Where the expression starts.
    pub fn offset(&self) -> usize {
        let mut ast = self;
        loop {
            match ast {
                Ast::Call { offset, .. } => return *offset,
                Ast::Seq(parts) | Ast::Choice(parts) => match parts.first() {
                    Some(first) => ast = first,
                    None => return 0,
                },
                Ast::At(s, _, _) => ast = s,
            }
        }
    }

    /// Moves the sub-expressions out into `into`, leaving this node without any.
    fn move_children(&mut self, into: &mut Vec<Ast>) {
        match self {
            Ast::Call { args, .. } => {
                for arg in args.drain(..).flatten() {
                    if let ArgAst::Strategy(ast) = arg.value {
                        into.push(ast);
                    }
                }
            }
            Ast::Seq(parts) | Ast::Choice(parts) => into.append(parts),
            Ast::At(s, t, _) => {
                into.push(std::mem::replace(&mut **s, Ast::Seq(Vec::new())));
                into.push(std::mem::replace(&mut **t, Ast::Seq(Vec::new())));
            }
        }
    }
}

impl Drop for Ast {
    fn drop(&mut self) {
        let mut pending = Vec::new();
        self.move_children(&mut pending);
        while let Some(mut ast) = pending.pop() {
            ast.move_children(&mut pending);
        }
    }
}

/// A parsed argument and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Arg {
    /// The argument.
    pub value: ArgAst,
    /// Where it starts in the text.
    pub offset: usize,
}

/// A parsed argument.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgAst {
    /// An integer.
    Int(i64),
    /// `[1, 2, 3]`
    List(Vec<i64>),
    /// `"text"`
    Str(String),
    /// A strategy (or a def parameter's name).
    Strategy(Ast),
}

/// A `def`.
#[derive(Debug, Clone, PartialEq)]
pub struct Def {
    /// Its name.
    pub name: String,
    /// Its parameters.
    pub params: Vec<String>,
    /// Its body.
    pub body: Ast,
    /// Where the name is.
    pub offset: usize,
}

/// A parsed file: definitions, then the strategy.
#[derive(Debug, Clone, PartialEq)]
pub struct File {
    /// The definitions, in order.
    pub defs: Vec<Def>,
    /// The strategy.
    pub main: Ast,
}

struct TextParser<'a> {
    text: &'a str,
    rest: &'a str,
}

type Res<T> = Result<T, TextError>;

fn ident(input: &str) -> IResult<&str, &str> {
    recognize(pair(
        take_while1(|c: char| c.is_ascii_alphabetic() || c == '_'),
        take_while(|c: char| c.is_ascii_alphanumeric() || c == '_'),
    ))
    .parse(input)
}

fn integer(input: &str) -> IResult<&str, &str> {
    recognize(pair(opt(char('-')), digit1)).parse(input)
}

fn string_literal(input: &str) -> IResult<&str, &str> {
    let (rest, _) = char('"').parse(input)?;
    let (rest, body) = take_while(|c: char| c != '"' && c != '\n').parse(rest)?;
    let (rest, _) = char('"').parse(rest)?;
    Ok((rest, body))
}

impl TextParser<'_> {
    fn offset(&self) -> usize {
        self.text.len() - self.rest.len()
    }

    fn error<T>(&self, message: impl Into<String>) -> Res<T> {
        Err(TextError {
            offset: self.offset(),
            message: message.into(),
        })
    }

    fn found(&self) -> String {
        match self.rest.chars().next() {
            None => "the end of the text".into(),
            Some(_) => {
                let word: String = self
                    .rest
                    .chars()
                    .take_while(|c| !c.is_whitespace())
                    .take(12)
                    .collect();
                format!("`{word}`")
            }
        }
    }

    /// Skips whitespace and comments (`//` to the end of the line, `/* */`).
    fn skip(&mut self) -> Res<()> {
        loop {
            let trimmed = self.rest.trim_start();
            if let Some(after) = trimmed.strip_prefix("//") {
                self.rest = after.find('\n').map_or("", |i| &after[i..]);
            } else if let Some(after) = trimmed.strip_prefix("/*") {
                let close: IResult<&str, &str> = take_until("*/").parse(after);
                match close {
                    Ok((tail, _)) => self.rest = &tail[2..],
                    Err(_) => {
                        self.rest = trimmed;
                        return self.error("this comment is never closed: expected `*/`");
                    }
                }
            } else {
                self.rest = trimmed;
                return Ok(());
            }
        }
    }

    fn peek(&mut self, token: &str) -> Res<bool> {
        self.skip()?;
        Ok(self.rest.starts_with(token))
    }

    fn eat(&mut self, token: &str) -> Res<bool> {
        if self.peek(token)? {
            self.rest = &self.rest[token.len()..];
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// Eats the `(` of an argument group, which must be on the line of the name (or
    /// of the group before): in `def a = b\n(c ; d)`, the main strategy is `(c ; d)`,
    /// not an argument of `b`.
    fn eat_argument_group(&mut self) -> Res<bool> {
        let before = self.rest;
        self.skip()?;
        let skipped = &before[..before.len() - self.rest.len()];
        if skipped.contains('\n') {
            return Ok(false);
        }
        self.eat("(")
    }

    fn expect(&mut self, token: &str) -> Res<()> {
        if self.eat(token)? {
            Ok(())
        } else {
            let found = self.found();
            self.error(format!("expected `{token}`, found {found}"))
        }
    }

    fn name(&mut self) -> Res<(String, usize)> {
        self.skip()?;
        let offset = self.offset();
        match ident(self.rest) {
            Ok((rest, name)) => {
                self.rest = rest;
                Ok((name.to_string(), offset))
            }
            Err(_) => {
                let found = self.found();
                self.error(format!("expected a strategy name, found {found}"))
            }
        }
    }

    fn at_keyword(&mut self, word: &str) -> Res<bool> {
        self.skip()?;
        Ok(ident(self.rest).is_ok_and(|(_, w)| w == word))
    }

    fn file(&mut self) -> Res<File> {
        let mut defs = Vec::new();
        while self.at_keyword("def")? {
            self.rest = &self.rest[3..];
            let (name, offset) = self.name()?;
            let mut params = Vec::new();
            if self.eat("(")? {
                loop {
                    params.push(self.name()?.0);
                    if !self.eat(",")? {
                        break;
                    }
                }
                self.expect(")")?;
            }
            self.expect("=")?;
            let body = self.choice()?;
            defs.push(Def {
                name,
                params,
                body,
                offset,
            });
        }
        let main = self.choice()?;
        self.skip()?;
        if !self.rest.is_empty() {
            let found = self.found();
            return self.error(format!("expected `;`, `<+`, `@` or the end, found {found}"));
        }
        Ok(File { defs, main })
    }

    fn choice(&mut self) -> Res<Ast> {
        // Strategies nest in arguments and parentheses: the one recursive point.
        elevate_core::stack::guard(|| {
            let mut alternatives = vec![self.seq()?];
            while self.eat("<+")? {
                alternatives.push(self.seq()?);
            }
            Ok(flat(alternatives, Ast::Choice))
        })
    }

    fn seq(&mut self) -> Res<Ast> {
        let mut parts = vec![self.at()?];
        loop {
            self.skip()?;
            let offset = self.offset();
            if self.eat(";;")? {
                parts.push(Ast::Call {
                    name: "DFNF".into(),
                    args: Vec::new(),
                    offset,
                });
            } else if !self.eat(";")? {
                return Ok(flat(parts, Ast::Seq));
            }
            parts.push(self.at()?);
        }
    }

    fn at(&mut self) -> Res<Ast> {
        let mut left = self.atom()?;
        loop {
            self.skip()?;
            let offset = self.offset();
            if !self.eat("@")? {
                return Ok(left);
            }
            let traversal = self.atom()?;
            left = Ast::At(Box::new(left), Box::new(traversal), offset);
        }
    }

    fn atom(&mut self) -> Res<Ast> {
        if self.eat("(")? {
            let inner = self.choice()?;
            self.expect(")")?;
            return Ok(inner);
        }
        let (name, offset) = self.name()?;
        let mut args = Vec::new();
        while self.eat_argument_group()? {
            let mut group = Vec::new();
            if !self.peek(")")? {
                loop {
                    group.push(self.arg()?);
                    if !self.eat(",")? {
                        break;
                    }
                }
            }
            self.expect(")")?;
            args.push(group);
        }
        Ok(Ast::Call { name, args, offset })
    }

    fn arg(&mut self) -> Res<Arg> {
        self.skip()?;
        let offset = self.offset();
        let value = self.arg_value()?;
        Ok(Arg { value, offset })
    }

    /// An integer literal, if one starts here.
    fn integer(&mut self) -> Res<Option<i64>> {
        let Ok((rest, digits)) = integer(self.rest) else {
            return Ok(None);
        };
        match digits.parse() {
            Ok(value) => {
                self.rest = rest;
                Ok(Some(value))
            }
            Err(_) => self.error(format!(
                "the integer {digits} is too large (at most {} in absolute value)",
                i64::MAX
            )),
        }
    }

    fn arg_value(&mut self) -> Res<ArgAst> {
        match self.literal()? {
            Some(literal) => Ok(literal),
            None => Ok(ArgAst::Strategy(self.choice()?)),
        }
    }

    /// An integer, string or list, if one starts here.
    fn literal(&mut self) -> Res<Option<ArgAst>> {
        if let Some(value) = self.integer()? {
            return Ok(Some(ArgAst::Int(value)));
        }
        if let Ok((rest, body)) = string_literal(self.rest) {
            self.rest = rest;
            return Ok(Some(ArgAst::Str(body.to_string())));
        }
        if self.eat("[")? {
            let mut items = Vec::new();
            if !self.peek("]")? {
                loop {
                    self.skip()?;
                    match self.integer()? {
                        Some(value) => items.push(value),
                        None => {
                            let found = self.found();
                            return self.error(format!("expected an integer, found {found}"));
                        }
                    }
                    if !self.eat(",")? {
                        break;
                    }
                }
            }
            self.expect("]")?;
            return Ok(Some(ArgAst::List(items)));
        }
        Ok(None)
    }
}

/// One expression, or a chain of them joined by an operator.
fn flat(mut parts: Vec<Ast>, chain: fn(Vec<Ast>) -> Ast) -> Ast {
    if parts.len() == 1 {
        parts.pop().expect("one part")
    } else {
        chain(parts)
    }
}

/// Parses strategy text: `def`s, then one strategy.
pub fn parse_file(text: &str) -> Result<File, TextError> {
    TextParser { text, rest: text }.file()
}
