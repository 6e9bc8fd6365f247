//! Errors in RISE programs, with locations and rendered diagnostics.

use std::fmt;

/// A span of source text (byte offsets), for error messages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Span {
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    /// The span `start..end`.
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            end: end as u32,
        }
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// What went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The text is not RISE.
    Parse,
    /// A name is not defined.
    UnknownName,
    /// The program is not well typed.
    Type,
    /// A nat constraint is false or cannot be solved.
    Nat,
    /// The inputs do not fit the program.
    Input,
    /// Evaluation failed.
    Eval,
    /// Compiling the program (the MLIR bridge) failed.
    Compile,
    /// A strategy did not parse, failed, or ran out of its budget.
    Strategy,
}

impl ErrorKind {
    fn title(self) -> &'static str {
        match self {
            ErrorKind::Parse => "parse error",
            ErrorKind::UnknownName => "unknown name",
            ErrorKind::Type => "type error",
            ErrorKind::Nat => "nat constraint error",
            ErrorKind::Input => "input error",
            ErrorKind::Eval => "evaluation error",
            ErrorKind::Compile => "compile error",
            ErrorKind::Strategy => "strategy error",
        }
    }
}

/// An error in a RISE program: what, where, and a message saying what was expected and
/// what was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// What went wrong.
    pub kind: ErrorKind,
    /// Where (a byte span of the source), if known.
    pub span: Option<Span>,
    /// The explanation.
    pub message: String,
}

impl Error {
    /// An error at `span`.
    pub fn new(kind: ErrorKind, span: Span, message: impl Into<String>) -> Error {
        Error {
            kind,
            span: Some(span),
            message: message.into(),
        }
    }

    /// An error without a location.
    pub fn unlocated(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            span: None,
            message: message.into(),
        }
    }

    /// `(line, column)`, both from 1, of the error in `source`.
    pub fn line_col(&self, source: &str) -> Option<(usize, usize)> {
        let start = (self.span?.start as usize).min(source.len());
        let before = &source[..start];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        Some((line, col))
    }

    /// The error as a diagnostic: `file:line:col`, the offending line with a caret
    /// under the problem, and the message.
    pub fn render(&self, file: &str, source: &str) -> String {
        use ariadne::{CharSet, Config, Label, Report, ReportKind, Source};
        let Some(span) = self.span else {
            return format!("{}: {}: {}", file, self.kind.title(), self.message);
        };
        let (line, col) = self.line_col(source).unwrap_or((1, 1));
        if let Some(excerpt) = long_line_excerpt(source, span) {
            return format!(
                "{file}:{line}:{col}: {}: {}\n{excerpt}",
                self.kind.title(),
                self.message
            );
        }
        let start = source[..(span.start as usize).min(source.len())]
            .chars()
            .count();
        let end = source[..(span.end as usize).min(source.len())]
            .chars()
            .count()
            .max(start + 1);
        let mut out = Vec::new();
        let report = Report::build(ReportKind::Error, (file, start..end))
            .with_config(
                Config::default()
                    .with_color(false)
                    .with_char_set(CharSet::Ascii),
            )
            .with_message(format!("{}: {}", self.kind.title(), self.message))
            .with_label(Label::new((file, start..end)).with_message(&self.message))
            .finish();
        if report
            .write((file, Source::from(source)), &mut out)
            .is_err()
        {
            return format!(
                "{file}:{line}:{col}: {}: {}",
                self.kind.title(),
                self.message
            );
        }
        // ariadne's report names file:line:col in its frame; the first line says it
        // again plainly for tools that read only that.
        let report = String::from_utf8_lossy(&out);
        let frame = report.split_once('\n').map_or("", |(_, rest)| rest);
        format!(
            "{file}:{line}:{col}: {}: {}\n{frame}",
            self.kind.title(),
            self.message
        )
    }
}

/// Lines longer than this are shown in part (a program on one line can be megabytes).
const LONG_LINE: usize = 200;

/// For an error on a very long line: the part of the line around the error's start,
/// with carets under the error, or `None` for a line short enough to show whole.
fn long_line_excerpt(source: &str, span: Span) -> Option<String> {
    let at = (span.start as usize).min(source.len());
    let line_start = source[..at].rfind('\n').map_or(0, |i| i + 1);
    let line_end = source[at..].find('\n').map_or(source.len(), |i| at + i);
    if line_end - line_start <= LONG_LINE {
        return None;
    }
    let floor = |mut i: usize| {
        while !source.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let from = floor(at.saturating_sub(LONG_LINE / 4).max(line_start));
    let to = floor((from + LONG_LINE).min(line_end));
    let end = (span.end as usize).clamp(at, to);
    let before = if from > line_start { "..." } else { "" };
    let after = if to < line_end { "..." } else { "" };
    let indent = before.len() + source[from..at].chars().count();
    let width = source[at..end].chars().count().max(1);
    Some(format!(
        "  | {before}{}{after}\n  | {}{}",
        &source[from..to],
        " ".repeat(indent),
        "^".repeat(width)
    ))
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.title(), self.message)
    }
}

impl std::error::Error for Error {}
