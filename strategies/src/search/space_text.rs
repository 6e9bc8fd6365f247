//! Reading a space: strategy text with choice points `{a, b, ...}`, `steps(N, {...})`
//! and `auto`, split into the parts of its top-level sequence.
//!
//! Choices are found in the text itself, so a point is the text with every choice
//! made: ordinary strategy text, parsed by the same [`Registry`](crate::text::Registry)
//! as any other. Strings and comments are skipped; nesting is only bounded by memory
//! (the one recursive point runs under [`guard`]).

use elevate_core::stack::guard;
use std::sync::Arc;

/// Alternatives of one `steps` part may expand (through their own choices) to at most
/// this many strategies.
pub const MAX_STEP_ALTERNATIVES: usize = 10_000;

/// Choices nest at most this deep.
pub const MAX_CHOICE_DEPTH: usize = 256;

/// The largest `N` of `steps(N, {...})`.
pub const MAX_STEPS: usize = 10_000;

/// A space that cannot be read, with the offset of the culprit in its text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SpaceError {
    /// Byte offset in the space text.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

impl SpaceError {
    pub(crate) fn new(offset: usize, message: impl Into<String>) -> Self {
        SpaceError {
            offset,
            message: message.into(),
        }
    }

    /// `(line, column)`, from 1.
    pub fn line_col(&self, text: &str) -> (usize, usize) {
        let before = &text[..self.offset.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, column)
    }
}

/// A piece of a template: text as written, or a choice between templates.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Piece {
    /// Text and the offset in the space text where it starts.
    Text(Arc<str>, usize),
    Choice(Arc<[Template]>),
}

/// Text with choice points, in order.
pub(crate) type Template = Arc<[Piece]>;

/// One item of the top-level sequence `a ; b ; ...` of a space.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Part {
    /// Strategy text, possibly with choices.
    Fixed(Template),
    /// `steps(N, {...})`: up to `max` steps, each an alternative at one location.
    Steps {
        max: usize,
        alternatives: Arc<[Arc<str>]>,
    },
    /// `auto`: the space derived from the program at this point.
    Auto { offset: usize },
}

/// A read space: its `def`s (text that every part is parsed with) and its parts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SpaceText {
    pub(crate) preamble: Arc<str>,
    pub(crate) parts: Arc<[Part]>,
}

/// What the scanner found at the top level.
enum Item {
    Piece(Piece),
    /// A `;` of the top-level sequence (not `;;`), at its offset.
    Semicolon(usize),
    /// `<+` at the top level.
    LeftChoice(usize),
    Steps {
        offset: usize,
        max: usize,
        alternatives: Vec<Template>,
    },
    Auto(usize),
}

/// Reads `text` as a space whose `def`s are at `defs` (an empty range for none).
pub(crate) fn read_space(
    text: &str,
    defs: std::ops::Range<usize>,
) -> Result<SpaceText, SpaceError> {
    let defs_end = defs.end;
    let preamble = &text[defs];
    if let Some(offset) = first_special(preamble) {
        return Err(SpaceError::new(
            offset,
            "choice points, `steps` and `auto` cannot be inside a `def`",
        ));
    }
    let mut scanner = Scanner::new(text, defs_end, true);
    let items = scanner.items(&[])?;
    if scanner.at < text.len() {
        return Err(SpaceError::new(scanner.at, "unexpected `}` or `,`"));
    }
    let parts = split_parts(items, text.len())?;
    Ok(SpaceText {
        preamble: if preamble.is_empty() {
            "".into()
        } else {
            format!("{}\n", preamble.trim_end()).into()
        },
        parts: parts.into(),
    })
}

/// Where the first `{`, `steps(` or `auto` of `text` is, outside strings and comments.
pub(super) fn first_special(text: &str) -> Option<usize> {
    let mut scanner = Scanner::new(text, 0, false);
    while scanner.at < text.len() {
        let start = scanner.at;
        match scanner.token() {
            Token::Open('{') => return Some(start),
            Token::Word(w) if w == "auto" || (w == "steps" && scanner.peek_char() == Some('(')) => {
                return Some(start)
            }
            _ => {}
        }
    }
    None
}

/// Splits the top-level items at `;`, checking that `steps` and `auto` stand alone.
fn split_parts(items: Vec<Item>, end: usize) -> Result<Vec<Part>, SpaceError> {
    let mut parts = Vec::new();
    let mut current: Vec<Piece> = Vec::new();
    let mut special: Option<(usize, Part)> = None;
    let mut left_choice = None;
    let flush = |current: &mut Vec<Piece>,
                 special: &mut Option<(usize, Part)>,
                 parts: &mut Vec<Part>,
                 at: usize|
     -> Result<(), SpaceError> {
        let blank = current
            .iter()
            .all(|p| matches!(p, Piece::Text(t, _) if is_blank(t)));
        match special.take() {
            Some((offset, part)) => {
                if !blank {
                    return Err(alone(offset));
                }
                parts.push(part);
            }
            None if blank => return Err(SpaceError::new(at, "expected a strategy before `;`")),
            None => parts.push(Part::Fixed(trim(std::mem::take(current)).into())),
        }
        current.clear();
        Ok(())
    };
    for item in items {
        match item {
            Item::Piece(piece) => current.push(piece),
            Item::Semicolon(at) => flush(&mut current, &mut special, &mut parts, at)?,
            Item::LeftChoice(offset) => {
                left_choice.get_or_insert(offset);
                current.push(Piece::Text("<+".into(), offset));
            }
            Item::Steps {
                offset,
                max,
                alternatives,
            } => {
                if special.is_some() {
                    return Err(alone(offset));
                }
                let alternatives = expand_all(&alternatives, offset)?;
                special = Some((offset, Part::Steps { max, alternatives }));
            }
            Item::Auto(offset) => {
                if special.is_some() {
                    return Err(alone(offset));
                }
                special = Some((offset, Part::Auto { offset }));
            }
        }
    }
    flush(&mut current, &mut special, &mut parts, end)?;
    if let Some(offset) = left_choice {
        if parts.len() > 1 || parts.iter().any(|p| !matches!(p, Part::Fixed(_))) {
            return Err(SpaceError::new(
                offset,
                "`<+` at the top level of a space with `steps` or `auto`: put the choice in parentheses",
            ));
        }
    }
    Ok(parts)
}

fn alone(offset: usize) -> SpaceError {
    SpaceError::new(
        offset,
        "`steps(...)` and `auto` must each be a whole item of the top-level sequence, as in `a ; steps(4, {b, c}) ; d`",
    )
}

fn is_blank(text: &str) -> bool {
    let mut scanner = Scanner::new(text, 0, false);
    while scanner.at < text.len() {
        if !matches!(scanner.token(), Token::Blank) {
            return false;
        }
    }
    true
}

/// Every strategy text the templates can make, in order.
fn expand_all(templates: &[Template], offset: usize) -> Result<Arc<[Arc<str>]>, SpaceError> {
    let mut out: Vec<Arc<str>> = Vec::new();
    for template in templates {
        // Work list of (pieces still to read, text so far).
        let mut pending: Vec<(Vec<Piece>, String)> =
            vec![(template.iter().rev().cloned().collect(), String::new())];
        while let Some((mut rest, text)) = pending.pop() {
            match rest.pop() {
                None => {
                    out.push(text.trim().into());
                    if out.len() > MAX_STEP_ALTERNATIVES {
                        return Err(SpaceError::new(
                            offset,
                            format!(
                                "the alternatives of `steps` make more than {MAX_STEP_ALTERNATIVES} strategies"
                            ),
                        ));
                    }
                }
                Some(Piece::Text(t, _)) => {
                    let mut text = text;
                    text.push_str(&t);
                    pending.push((rest, text));
                }
                Some(Piece::Choice(options)) => {
                    // Reversed, so that the first option comes out first.
                    for option in options.iter().rev() {
                        let mut next = rest.clone();
                        next.extend(option.iter().rev().cloned());
                        pending.push((next, text.clone()));
                    }
                }
            }
        }
    }
    Ok(out.into())
}

/// A cut of the top-level sequence of strategy text: a `;` or `;;` outside brackets,
/// strings and comments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Cut {
    /// Where the separator starts.
    pub(super) at: usize,
    /// Whether it is `;;` (a `DFNF` in between).
    pub(super) normal_form: bool,
    /// Whether it is final: a `;;`, or a `;` that is not the last character of `text`
    /// (which could still be the first half of a `;;`).
    pub(super) final_: bool,
}

impl Cut {
    /// Where the text after the separator starts.
    pub(super) fn end(&self) -> usize {
        self.at + if self.normal_form { 2 } else { 1 }
    }
}

/// The cuts of `text`'s top-level sequence from `from` on (the start of the text or
/// the end of a cut), in order; `text` may end inside brackets: it is read as the
/// beginning of a longer text.
pub(super) fn sequence_cuts(text: &str, from: usize) -> Vec<Cut> {
    let mut cuts: Vec<Cut> = Vec::new();
    let mut scanner = Scanner::new(text, from, false);
    let mut depth = 0usize;
    while scanner.at < text.len() {
        let start = scanner.at;
        match scanner.token() {
            Token::Open(_) => depth += 1,
            Token::Close(_) => depth = depth.saturating_sub(1),
            Token::Semicolon if depth == 0 => cuts.push(Cut {
                at: start,
                normal_form: false,
                final_: scanner.at < text.len(),
            }),
            Token::Other if depth == 0 && text[start..scanner.at] == *";;" => cuts.push(Cut {
                at: start,
                normal_form: true,
                final_: true,
            }),
            _ => {}
        }
    }
    cuts
}

/// Whether every text `template` makes is a sequence whose items can be applied one
/// after the other: no `<+` outside brackets, whatever the choices (it would take the
/// sequence before it as its left operand).
pub(super) fn sequence_without_choice(template: &Template) -> bool {
    // (template, bracket depth where it starts): a choice's options are balanced, so
    // the depth after a choice is the depth before it whichever option is taken.
    let mut stack: Vec<(Template, usize)> = vec![(template.clone(), 0)];
    while let Some((template, mut depth)) = stack.pop() {
        for piece in template.iter() {
            match piece {
                Piece::Text(text, _) => {
                    let mut scanner = Scanner::new(text, 0, false);
                    while scanner.at < text.len() {
                        match scanner.token() {
                            Token::Open(_) => depth += 1,
                            Token::Close(_) => depth = depth.saturating_sub(1),
                            Token::LeftChoice if depth == 0 => return false,
                            _ => {}
                        }
                    }
                }
                Piece::Choice(options) => {
                    stack.extend(options.iter().map(|option| (option.clone(), depth)));
                }
            }
        }
    }
    true
}

enum Token<'t> {
    Blank,
    Word(&'t str),
    Open(char),
    Close(char),
    Comma,
    Semicolon,
    LeftChoice,
    Other,
}

struct Scanner<'t> {
    text: &'t str,
    at: usize,
    /// Whether the scanner reads the top level (outside any choice or parentheses).
    top: bool,
    /// How many choices the scanner is inside.
    depth: usize,
}

impl<'t> Scanner<'t> {
    /// A scanner of `text` from `at`, at the top level of a space or not.
    fn new(text: &'t str, at: usize, top: bool) -> Self {
        Scanner {
            text,
            at,
            top,
            depth: 0,
        }
    }

    fn peek_char(&self) -> Option<char> {
        self.text[self.at..].chars().next()
    }

    /// The next token, advancing past it.
    fn token(&mut self) -> Token<'t> {
        let rest = &self.text[self.at..];
        let Some(c) = rest.chars().next() else {
            return Token::Blank;
        };
        let advance = |n: usize, s: &mut Self| s.at += n;
        if rest.starts_with("//") {
            advance(rest.find('\n').unwrap_or(rest.len()), self);
            return Token::Blank;
        }
        if rest.starts_with("/*") {
            advance(rest.find("*/").map_or(rest.len(), |e| e + 2), self);
            return Token::Blank;
        }
        if c == '"' {
            let close = rest[1..].find('"').map_or(rest.len(), |e| e + 2);
            advance(close, self);
            return Token::Other;
        }
        if c.is_whitespace() {
            advance(c.len_utf8(), self);
            return Token::Blank;
        }
        if c.is_alphanumeric() || c == '_' {
            let len = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            advance(len, self);
            return Token::Word(&rest[..len]);
        }
        if rest.starts_with(";;") {
            advance(2, self);
            return Token::Other;
        }
        if rest.starts_with("<+") {
            advance(2, self);
            return Token::LeftChoice;
        }
        advance(c.len_utf8(), self);
        match c {
            '(' | '[' | '{' => Token::Open(c),
            ')' | ']' | '}' => Token::Close(c),
            ',' => Token::Comma,
            ';' => Token::Semicolon,
            _ => Token::Other,
        }
    }

    /// Items up to (not including) a `,` or `}` at depth 0 when inside a choice
    /// (`stops` non-empty), or to the end of the text.
    fn items(&mut self, stops: &[char]) -> Result<Vec<Item>, SpaceError> {
        let mut items = Vec::new();
        let mut text_start = self.at;
        let mut depth: Vec<(char, usize)> = Vec::new();
        let text = self.text;
        let flush_text = |items: &mut Vec<Item>, from: usize, to: usize| {
            if from < to {
                items.push(Item::Piece(Piece::Text(text[from..to].into(), from)));
            }
        };
        while self.at < self.text.len() {
            let start = self.at;
            let top = self.top && depth.is_empty();
            match self.token() {
                Token::Open('{') => {
                    flush_text(&mut items, text_start, start);
                    let options = self.choice(start)?;
                    items.push(Item::Piece(Piece::Choice(options.into())));
                    text_start = self.at;
                }
                Token::Open(c) => depth.push((c, start)),
                Token::Close(c) => {
                    let Some((open, _)) = depth.pop() else {
                        if stops.contains(&c) {
                            self.at = start;
                            break;
                        }
                        return Err(SpaceError::new(start, format!("unexpected `{c}`")));
                    };
                    let expected = match open {
                        '(' => ')',
                        '[' => ']',
                        _ => '}',
                    };
                    if c != expected {
                        return Err(SpaceError::new(
                            start,
                            format!("expected `{expected}`, found `{c}`"),
                        ));
                    }
                }
                Token::Comma if depth.is_empty() && stops.contains(&',') => {
                    self.at = start;
                    break;
                }
                Token::Semicolon if top => {
                    flush_text(&mut items, text_start, start);
                    items.push(Item::Semicolon(start));
                    text_start = self.at;
                }
                Token::LeftChoice if top => {
                    flush_text(&mut items, text_start, start);
                    items.push(Item::LeftChoice(start));
                    text_start = self.at;
                }
                Token::Word("auto") => {
                    if !top {
                        return Err(alone(start));
                    }
                    flush_text(&mut items, text_start, start);
                    items.push(Item::Auto(start));
                    text_start = self.at;
                }
                Token::Word("steps") if self.peek_char() == Some('(') => {
                    if !top {
                        return Err(alone(start));
                    }
                    flush_text(&mut items, text_start, start);
                    items.push(self.steps(start)?);
                    text_start = self.at;
                }
                _ => {}
            }
        }
        if let Some((c, offset)) = depth.pop() {
            return Err(SpaceError::new(offset, format!("`{c}` is never closed")));
        }
        flush_text(&mut items, text_start, self.at);
        Ok(items)
    }

    /// A choice `{a, b, ...}` whose `{` was at `open`; the scanner is after the `{`.
    fn choice(&mut self, open: usize) -> Result<Vec<Template>, SpaceError> {
        if self.depth == MAX_CHOICE_DEPTH {
            return Err(SpaceError::new(
                open,
                format!("choices nest more than {MAX_CHOICE_DEPTH} deep"),
            ));
        }
        self.depth += 1;
        let top = std::mem::replace(&mut self.top, false);
        let result = guard(|| {
            let mut options = Vec::new();
            loop {
                let start = self.at;
                let items = self.items(&[',', '}'])?;
                let pieces: Vec<Piece> = items
                    .into_iter()
                    .map(|item| match item {
                        Item::Piece(p) => p,
                        // Only the top level makes these.
                        _ => unreachable!("special items outside the top level"),
                    })
                    .collect();
                if pieces
                    .iter()
                    .all(|p| matches!(p, Piece::Text(t, _) if is_blank(t)))
                {
                    return Err(SpaceError::new(start, "expected an option of the choice"));
                }
                options.push(trim(pieces).into());
                let at = self.at;
                match self.token() {
                    Token::Comma => continue,
                    Token::Close('}') => return Ok(options),
                    _ => {
                        self.at = at;
                        return Err(SpaceError::new(open, "`{` is never closed"));
                    }
                }
            }
        });
        self.top = top;
        self.depth -= 1;
        result
    }

    /// `steps(N, {a, b, ...})`; the scanner is after `steps`.
    fn steps(&mut self, offset: usize) -> Result<Item, SpaceError> {
        let expect = |s: &mut Self, what: char| -> Result<(), SpaceError> {
            loop {
                let at = s.at;
                match s.token() {
                    Token::Blank if s.at < s.text.len() => continue,
                    Token::Open(c) | Token::Close(c) if c == what => return Ok(()),
                    Token::Comma if what == ',' => return Ok(()),
                    _ => {
                        return Err(SpaceError::new(
                            at,
                            format!(
                                "`steps` is written `steps(N, {{a, b, ...}})`: expected `{what}`"
                            ),
                        ))
                    }
                }
            }
        };
        expect(self, '(')?;
        let max = loop {
            let at = self.at;
            match self.token() {
                Token::Blank if self.at < self.text.len() => continue,
                Token::Word(w) => match w.parse::<usize>() {
                    Ok(n) if (1..=MAX_STEPS).contains(&n) => break n,
                    _ => {
                        return Err(SpaceError::new(
                            at,
                            format!("the number of steps must be from 1 to {MAX_STEPS}, found {w}"),
                        ))
                    }
                },
                _ => {
                    return Err(SpaceError::new(
                        at,
                        "`steps` is written `steps(N, {a, b, ...})`: expected a number",
                    ))
                }
            }
        };
        expect(self, ',')?;
        let open = loop {
            let at = self.at;
            match self.token() {
                Token::Blank if self.at < self.text.len() => continue,
                Token::Open('{') => break at,
                _ => {
                    return Err(SpaceError::new(
                        at,
                        "`steps` is written `steps(N, {a, b, ...})`: expected `{`",
                    ))
                }
            }
        };
        let alternatives = self.choice(open)?;
        expect(self, ')')?;
        Ok(Item::Steps {
            offset,
            max,
            alternatives,
        })
    }
}

/// The pieces without blank text at either end.
fn trim(mut pieces: Vec<Piece>) -> Vec<Piece> {
    if let Some(Piece::Text(t, offset)) = pieces.first_mut() {
        let trimmed = t.trim_start();
        *offset += t.len() - trimmed.len();
        *t = trimmed.into();
    }
    if let Some(Piece::Text(t, _)) = pieces.last_mut() {
        *t = t.trim_end().into();
    }
    pieces.retain(|p| !matches!(p, Piece::Text(t, _) if t.is_empty()));
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(text: &str) -> Vec<Part> {
        read_space(text, 0..0)
            .unwrap_or_else(|e| panic!("{e}"))
            .parts
            .to_vec()
    }

    fn err(text: &str) -> SpaceError {
        read_space(text, 0..0).unwrap_err()
    }

    #[test]
    fn choices_nest_and_split_at_top_level_commas_only() {
        let p = parts("tile({8, 16}, 4) ; {id, vectorize({8, 16})}");
        assert_eq!(p.len(), 2);
        let Part::Fixed(first) = &p[0] else { panic!() };
        assert_eq!(first.len(), 3, "{first:?}");
        let Part::Fixed(second) = &p[1] else { panic!() };
        let [Piece::Choice(options)] = &second[..] else {
            panic!("{second:?}")
        };
        assert_eq!(options.len(), 2);
        assert!(matches!(&options[1][1], Piece::Choice(o) if o.len() == 2));
    }

    #[test]
    fn a_part_is_cut_at_its_top_level_semicolons_outside_strings_and_brackets() {
        let text = "a ;; f(b ; c) ; contains(\"; ;;\") /* ; */ ;";
        let cuts = sequence_cuts(text, 0);
        let at: Vec<(usize, bool, bool)> = cuts
            .iter()
            .map(|c| (c.at, c.normal_form, c.final_))
            .collect();
        assert_eq!(at, [(2, true, true), (14, false, true), (41, false, false)]);
        assert_eq!(&text[cuts[0].end()..cuts[1].at], " f(b ; c) ");
        // Text that stops inside brackets: only the cuts before them.
        assert_eq!(sequence_cuts("a ; try(b ; ", 0).len(), 1);
        // From the end of a cut on.
        assert_eq!(sequence_cuts(text, cuts[0].end()), cuts[1..]);
    }

    #[test]
    fn a_part_with_a_top_level_left_choice_is_not_a_sequence() {
        let part = |text: &str| match &parts(text)[..] {
            [Part::Fixed(t)] => sequence_without_choice(t),
            other => panic!("{other:?}"),
        };
        assert!(part("a ;; try(b <+ c) ;; {d ; e, (e <+ f)}"));
        assert!(part("try({a ; b, c <+ d})"));
        assert!(!part("a <+ b"));
        assert!(!part("a ;; {b, c <+ d}"));
        assert!(!part("{a, {b, c <+ d}}"));
    }

    #[test]
    fn double_semicolons_and_parentheses_do_not_split() {
        assert_eq!(parts("a ;; b ; try(c ; d)").len(), 2);
    }

    #[test]
    fn steps_expand_their_alternatives() {
        let p = parts("DFNF ; steps(3, {mapFusion, splitJoin({8, 32})}) ; lower");
        assert_eq!(p.len(), 3);
        let Part::Steps { max, alternatives } = &p[1] else {
            panic!()
        };
        assert_eq!(*max, 3);
        let names: Vec<&str> = alternatives.iter().map(|a| &**a).collect();
        assert_eq!(names, ["mapFusion", "splitJoin(8)", "splitJoin(32)"]);
    }

    #[test]
    fn strings_and_comments_hide_braces() {
        let p = parts("debug(\"{x}\") // {y}\n ; id /* { */");
        assert!(p.iter().all(
            |p| matches!(p, Part::Fixed(t) if t.iter().all(|x| matches!(x, Piece::Text(..))))
        ));
    }

    #[test]
    fn errors_are_located() {
        let e = err("a ; {b, c");
        assert_eq!(e.offset, 4, "{e}");
        let e = err("try(steps(2, {a}))");
        assert_eq!((e.offset, e.message.contains("top-level")), (4, true));
        let e = err("a ; auto b");
        assert!(e.message.contains("whole item"), "{e}");
        assert_eq!(err("a ; {b, }").offset, 7);
        assert!(err("steps(0, {a})").message.contains("from 1 to"));
        assert!(err("a <+ b ; auto").message.contains("<+"));
        assert_eq!(err("a)").offset, 1);
        assert_eq!(err("a ; ; b").offset, 4);
    }

    #[test]
    fn deep_choices_are_a_clean_error() {
        let deep = |n: usize| format!("{}id{}", "{".repeat(n), "}".repeat(n));
        assert_eq!(parts(&deep(MAX_CHOICE_DEPTH)).len(), 1);
        let e = err(&deep(100_000));
        assert_eq!(e.offset, MAX_CHOICE_DEPTH, "{e}");
        assert!(e.message.contains("nest more than"), "{e}");
    }
}
