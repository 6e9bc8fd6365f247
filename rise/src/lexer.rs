//! Tokens of RISE source text (with nom).

use crate::error::{Error, ErrorKind, Span};
use nom::branch::alt;
use nom::bytes::complete::{tag, take_until, take_while, take_while1};
use nom::combinator::{opt, recognize};
use nom::sequence::pair;
use nom::{IResult, Parser};

/// A token's kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// An identifier or keyword.
    Ident(String),
    /// Digits, with an optional type suffix (`3`, `3i64`, `5f64`).
    Number {
        /// The digits.
        digits: String,
        /// `i32`, `i64`, `f32` or `f64`.
        suffix: Option<String>,
    },
    /// Punctuation or an operator.
    Symbol(&'static str),
    /// The end of the input.
    End,
}

impl std::fmt::Display for Tok {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Tok::Ident(name) => write!(f, "`{name}`"),
            Tok::Number { digits, suffix } => {
                write!(f, "`{digits}{}`", suffix.as_deref().unwrap_or(""))
            }
            Tok::Symbol(s) => write!(f, "`{s}`"),
            Tok::End => f.write_str("the end of the input"),
        }
    }
}

/// A token and where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    /// What it is.
    pub tok: Tok,
    /// Where it is.
    pub span: Span,
}

const SYMBOLS: &[&str] = &[
    "=>", "->", "|>", ">>", "==", "(", ")", "[", "]", ",", ":", "=", "+", "-", "*", "/", "%", "<",
    ">", ".", "^",
];

fn symbol(input: &str) -> IResult<&str, &'static str> {
    for s in SYMBOLS {
        if let Some(rest) = input.strip_prefix(s) {
            return Ok((rest, s));
        }
    }
    Err(nom::Err::Error(nom::error::Error::new(
        input,
        nom::error::ErrorKind::Tag,
    )))
}

fn identifier(input: &str) -> IResult<&str, &str> {
    recognize(pair(
        take_while1(|c: char| c.is_ascii_alphabetic() || c == '_'),
        take_while(|c: char| c.is_ascii_alphanumeric() || c == '_'),
    ))
    .parse(input)
}

fn number(input: &str) -> IResult<&str, (&str, Option<&str>)> {
    pair(
        take_while1(|c: char| c.is_ascii_digit()),
        opt(alt((tag("i32"), tag("i64"), tag("f32"), tag("f64")))),
    )
    .parse(input)
}

/// Skips whitespace and comments; an unterminated block comment is an error.
fn skip_trivia<'a>(source: &str, mut rest: &'a str) -> Result<&'a str, Error> {
    loop {
        let trimmed = rest.trim_start();
        if let Some(after) = trimmed.strip_prefix("//") {
            rest = after.find('\n').map_or("", |i| &after[i..]);
        } else if let Some(after) = trimmed.strip_prefix("/*") {
            let close: IResult<&str, &str> = take_until("*/").parse(after);
            match close {
                Ok((tail, _)) => rest = &tail[2..],
                Err(_) => {
                    let at = source.len() - trimmed.len();
                    return Err(Error::new(
                        ErrorKind::Parse,
                        Span::new(at, at + 2),
                        "this comment is never closed: expected `*/`",
                    ));
                }
            }
        } else {
            return Ok(trimmed);
        }
    }
}

/// Splits `source` into tokens, ending with [`Tok::End`].
pub fn tokenize(source: &str) -> Result<Vec<Token>, Error> {
    let mut tokens = Vec::new();
    let mut rest = source;
    loop {
        rest = skip_trivia(source, rest)?;
        let start = source.len() - rest.len();
        if rest.is_empty() {
            tokens.push(Token {
                tok: Tok::End,
                span: Span::new(start, start),
            });
            return Ok(tokens);
        }
        let (tail, tok) = if let Ok((tail, (digits, suffix))) = number(rest) {
            let tok = Tok::Number {
                digits: digits.to_string(),
                suffix: suffix.map(str::to_string),
            };
            (tail, tok)
        } else if let Ok((tail, name)) = identifier(rest) {
            (tail, Tok::Ident(name.to_string()))
        } else if let Ok((tail, s)) = symbol(rest) {
            (tail, Tok::Symbol(s))
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            return Err(Error::new(
                ErrorKind::Parse,
                Span::new(start, start + c.len_utf8()),
                format!("unexpected character {c:?}"),
            ));
        };
        rest = tail;
        tokens.push(Token {
            tok,
            span: Span::new(start, source.len() - rest.len()),
        });
    }
}
