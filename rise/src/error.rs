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

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.title(), self.message)
    }
}

impl std::error::Error for Error {}
