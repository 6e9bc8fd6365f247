//! Sketch text to [`Sketch`]s (the syntax is in the [module](super) documentation):
//! a small recursive-descent parser over characters; nats are handed to
//! [`parse_nat`](crate::parse_nat).

use super::{is_loop, Sketch};
use crate::error::{Error, ErrorKind};
use crate::nat::Nat;
use crate::prim::Prim;
use crate::term::Span;

/// How deeply sketches may nest (they are written by hand; this keeps the recursive
/// parser, printer and matcher far from the end of the stack).
const MAX_DEPTH: usize = 200;

/// How many parts (sub-sketches and pipeline stages) a sketch may have: a long
/// pipeline or argument list nests too (`? |> f |> g` is `g(f(?))`), so this bounds
/// the depth of what the printer and the destructor walk.
const MAX_PARTS: usize = 2_000;

/// Parses a whole sketch.
pub(super) fn parse(text: &str) -> Result<Sketch, Error> {
    let mut parser = Parser {
        text,
        pos: 0,
        depth: 0,
        parts: 0,
    };
    let sketch = parser.sketch()?;
    if parser.peek().is_some() {
        return Err(parser.unexpected("the end of the sketch"));
    }
    Ok(sketch)
}

struct Parser<'a> {
    text: &'a str,
    /// The next byte to read.
    pos: usize,
    /// How many sketches enclose the one being read.
    depth: usize,
    /// How many parts have been read.
    parts: usize,
}

impl<'a> Parser<'a> {
    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    /// The next character after white space (which it skips).
    fn peek(&mut self) -> Option<char> {
        let rest = self.rest();
        self.pos += rest.len() - rest.trim_start().len();
        self.rest().chars().next()
    }

    /// Reads `token` if it comes next.
    fn eat(&mut self, token: &str) -> bool {
        self.peek();
        let found = self.rest().starts_with(token);
        if found {
            self.pos += token.len();
        }
        found
    }

    fn error(start: usize, end: usize, message: String) -> Error {
        Error::new(ErrorKind::Parse, Span::new(start, end), message)
    }

    /// "expected `expected`, found ..." at the next character or word.
    fn unexpected(&mut self, expected: &str) -> Error {
        self.peek();
        let rest = self.rest();
        let word = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let len = match rest.chars().next() {
            None => 0,
            Some(_) if word > 0 => word,
            Some(c) => c.len_utf8(),
        };
        let found = match len {
            0 => "the end of the sketch".to_string(),
            _ => format!("`{}`", &rest[..len]),
        };
        Parser::error(
            self.pos,
            self.pos + len,
            format!("expected {expected}, found {found}"),
        )
    }

    fn expect(&mut self, token: &str, expected: &str) -> Result<(), Error> {
        match self.eat(token) {
            true => Ok(()),
            false => Err(self.unexpected(expected)),
        }
    }

    /// An identifier and where it starts.
    fn identifier(&mut self) -> Option<(&'a str, usize)> {
        self.peek();
        let rest = self.rest();
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if len == 0 || rest.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        let start = self.pos;
        self.pos += len;
        Some((&rest[..len], start))
    }

    /// `call ('|>' call)*`: `a |> f` is `f` applied to `a`.
    fn sketch(&mut self) -> Result<Sketch, Error> {
        if self.depth == MAX_DEPTH {
            return Err(Parser::error(
                self.pos,
                self.pos,
                format!("the sketch nests more than {MAX_DEPTH} levels deep"),
            ));
        }
        self.depth += 1;
        self.count_part()?;
        let mut sketch = self.call()?;
        while self.eat("|>") {
            self.count_part()?;
            sketch = self.call()?.apply([sketch]);
        }
        self.depth -= 1;
        Ok(sketch)
    }

    /// Counts one more part; an error past [`MAX_PARTS`].
    fn count_part(&mut self) -> Result<(), Error> {
        self.parts += 1;
        match self.parts > MAX_PARTS {
            true => Err(Parser::error(
                self.pos,
                self.pos,
                format!("the sketch has more than {MAX_PARTS} parts"),
            )),
            false => Ok(()),
        }
    }

    /// A primary sketch applied to argument lists; a primitive takes its nat
    /// arguments first.
    fn call(&mut self) -> Result<Sketch, Error> {
        let mut head = self.primary()?;
        let (name, wanted) = match &head {
            Sketch::Prim { prim, nats, .. } => {
                (prim.name(), prim.nat_params().saturating_sub(nats.len()))
            }
            _ => ("", 0),
        };
        let mut nats = Vec::new();
        let mut args = Vec::new();
        while self.eat("(") {
            loop {
                if nats.len() < wanted {
                    nats.push(self.nat(&[',', ')'], name)?);
                } else {
                    args.push(self.sketch()?);
                }
                if !self.eat(",") {
                    break;
                }
            }
            self.expect(")", "`,` or `)`")?;
        }
        if let Sketch::Prim {
            prim, nats: given, ..
        } = &mut head
        {
            given.extend(nats);
            given.resize(prim.nat_params(), None);
        }
        Ok(head.apply(args))
    }

    /// `?`, `(S)`, a form (`contains(S)`, ...) or a primitive; a primitive comes
    /// without nat arguments, which [`Parser::call`] adds.
    fn primary(&mut self) -> Result<Sketch, Error> {
        if self.eat("?") {
            return Ok(Sketch::Any);
        }
        if self.eat("(") {
            let inner = self.sketch()?;
            self.expect(")", "`)`")?;
            return Ok(inner);
        }
        let Some((name, start)) = self.identifier() else {
            return Err(self.unexpected("a sketch"));
        };
        let end = self.pos;
        let arity_error = |takes: &str, found: usize| {
            Parser::error(start, end, format!("`{name}` takes {takes}, found {found}"))
        };
        match name {
            "contains" | "fun" => {
                let mut parts = self.parts(name)?;
                if parts.len() != 1 {
                    return Err(arity_error("one sketch", parts.len()));
                }
                let inner = parts.pop().expect("one part");
                Ok(match name {
                    "contains" => Sketch::contains(inner),
                    _ => Sketch::fun(inner),
                })
            }
            "or" => {
                let parts = self.parts(name)?;
                if parts.len() < 2 {
                    return Err(arity_error("two sketches or more", parts.len()));
                }
                let mut parts = parts.into_iter().rev();
                let last = parts.next().expect("two parts");
                Ok(parts.fold(last, |rest, s| Sketch::or(s, rest)))
            }
            "app" => {
                let mut parts = self.parts(name)?.into_iter();
                let found = parts.len();
                match parts.next() {
                    Some(f) if found >= 2 => Ok(f.apply(parts)),
                    _ => Err(arity_error("a function and arguments", found)),
                }
            }
            _ => {
                let Some(prim) = Prim::from_name(name) else {
                    return Err(Parser::error(
                        start,
                        end,
                        format!(
                            "`{name}` is not a primitive nor a sketch form \
                             (`?`, `contains`, `or`, `fun`, `app`)"
                        ),
                    ));
                };
                let size = if self.eat("[") {
                    if !is_loop(prim) {
                        return Err(Parser::error(
                            start,
                            end,
                            format!(
                                "`{name}` is not a loop: a size `[n]` annotates map, mapSeq, \
                                 mapSeqUnroll, mapPar, mapGlobal, mapWorkGroup, mapLocal, reduce, \
                                 reduceSeq, reduceSeqUnroll, scanSeq or generate"
                            ),
                        ));
                    }
                    let size = self.nat(&[']', ','], name)?;
                    let mut elems = Vec::new();
                    while self.eat(",") {
                        elems.push(self.nat(&[']', ','], name)?);
                    }
                    self.expect("]", "`]`")?;
                    (size, elems)
                } else {
                    (None, Vec::new())
                };
                let (size, elems) = size;
                Ok(Sketch::Prim {
                    prim,
                    nats: Vec::new(),
                    size,
                    elems,
                })
            }
        }
    }

    /// `(S, ...)` after the form `name`.
    fn parts(&mut self, name: &str) -> Result<Vec<Sketch>, Error> {
        self.expect("(", &format!("`(` after `{name}`"))?;
        let mut parts = vec![self.sketch()?];
        while self.eat(",") {
            parts.push(self.sketch()?);
        }
        self.expect(")", "`,` or `)`")?;
        Ok(parts)
    }

    /// A nat (or `?`: `None`) for `prim`, up to one of `closers` outside parentheses.
    fn nat(&mut self, closers: &[char], prim: &str) -> Result<Option<Nat>, Error> {
        self.peek();
        let start = self.pos;
        let mut depth = 0usize;
        let end = self.rest().char_indices().find_map(|(i, c)| {
            match c {
                '(' => depth += 1,
                ')' if depth > 0 => depth -= 1,
                c if depth == 0 && closers.contains(&c) => return Some(start + i),
                _ => {}
            }
            None
        });
        let Some(end) = end else {
            self.pos = self.text.len();
            let closers: Vec<String> = closers.iter().map(|c| format!("`{c}`")).collect();
            return Err(self.unexpected(&closers.join(" or ")));
        };
        let text = self.text[start..end].trim_end();
        if text.is_empty() {
            return Err(self.unexpected(&format!("a nat or `?` for `{prim}`")));
        }
        self.pos = end;
        if text == "?" {
            return Ok(None);
        }
        crate::parse_nat(text).map(Some).map_err(|e| {
            let span = e.span.unwrap_or(Span::new(0, text.len()));
            Parser::error(
                start + span.start as usize,
                start + span.end as usize,
                format!("in a nat for `{prim}`: {}", e.message),
            )
        })
    }
}
