//! Checking a space when it is read: where its `def`s end, and the variants of a
//! template that together use every option of every choice once.

use super::space_text::{first_special, Piece, SpaceError, Template};
use crate::text::parse_file;
use std::sync::Arc;

/// Where the `def`s at the start of a space are (from the first `def` to the main
/// strategy; empty for none).
pub(super) fn defs(text: &str) -> Result<std::ops::Range<usize>, SpaceError> {
    // The defs hold no choices, so up to the first choice, `steps` or `auto` (or the
    // end) the text parses as a file whose main strategy starts where the defs end.
    let cut = first_special(text).unwrap_or(text.len());
    let candidate = format!("{} id", &text[..cut]);
    match parse_file(&candidate) {
        Ok(file) if file.defs.is_empty() => Ok(0..0),
        Ok(file) => {
            // Before any `(` that opens the main strategy (a def cannot end with one).
            let first_name = file.main.offset().min(cut);
            let before = &text[..first_name];
            let end = before
                .trim_end_matches(|c: char| c == '(' || c.is_whitespace())
                .len();
            // The first def's offset is its name's; the keyword comes before it.
            let name = file.defs[0].offset.min(end);
            let start = text[..name].rfind("def").unwrap_or(name);
            Ok(start..end)
        }
        Err(e) if e.offset < cut && text[..cut].contains("def") => {
            Err(SpaceError::new(e.offset, e.message))
        }
        Err(_) => Ok(0..0),
    }
}

/// Spaces with more choices than this are checked at their first point only.
const MAX_CHECKED_CHOICES: usize = 1_000;

/// The template with the first option of every choice, and then, for each choice in
/// turn, each of its other options (the choices around it taking the option that
/// holds it, the others their first): enough to check every option once.
pub(super) fn variants(template: &Template) -> Vec<Vec<(Arc<str>, usize)>> {
    let mut out = vec![first_point(template)];
    let total = count_choices(template);
    if total > MAX_CHECKED_CHOICES {
        return out;
    }
    let mut id = 0;
    let mut nested = Vec::with_capacity(total);
    number_choices(template, &mut id, &mut nested);
    for (choice, options) in nested.iter().enumerate() {
        for option in 1..options.len() {
            let mut pieces = Vec::new();
            render_variant(template, (choice, option), &nested, &mut 0, &mut pieces);
            out.push(pieces);
        }
    }
    out
}

/// How many choices `template` holds, nested ones included.
fn count_choices(template: &Template) -> usize {
    let mut count = 0;
    let mut stack = vec![template.clone()];
    while let Some(t) = stack.pop() {
        for piece in t.iter() {
            if let Piece::Choice(options) = piece {
                count += 1;
                stack.extend(options.iter().cloned());
            }
        }
    }
    count
}

/// Numbers the choices in pre-order, recording for each one how many choices each of
/// its options holds (nested ones included).
fn number_choices(template: &Template, id: &mut usize, nested: &mut Vec<Vec<usize>>) {
    for piece in template.iter() {
        if let Piece::Choice(options) = piece {
            let this = *id;
            *id += 1;
            nested.push(Vec::with_capacity(options.len()));
            for option in options.iter() {
                let before = *id;
                elevate_core::stack::guard(|| number_choices(option, id, nested));
                nested[this].push(*id - before);
            }
        }
    }
}

/// The pieces of `template` where choice `target.0` (in pre-order) takes option
/// `target.1`, the choices around it the option that holds it, the rest their first
/// (`nested`: what [`number_choices`] recorded).
fn render_variant(
    template: &Template,
    target: (usize, usize),
    nested: &[Vec<usize>],
    id: &mut usize,
    out: &mut Vec<(Arc<str>, usize)>,
) {
    for piece in template.iter() {
        match piece {
            Piece::Text(t, offset) => out.push((t.clone(), *offset)),
            Piece::Choice(options) => {
                let this = *id;
                *id += 1;
                // The option whose subtree holds the target, if any.
                let mut pick = 0;
                let mut next = *id;
                for (j, count) in nested[this].iter().enumerate() {
                    let end = next + count;
                    if this == target.0 {
                        pick = target.1;
                    } else if (next..end).contains(&target.0) {
                        pick = j;
                    }
                    next = end;
                }
                for (j, option) in options.iter().enumerate() {
                    if j == pick {
                        elevate_core::stack::guard(|| {
                            render_variant(option, target, nested, id, out)
                        });
                    } else {
                        *id += nested[this][j];
                    }
                }
            }
        }
    }
}

/// The pieces of `template` with the first option of every choice.
fn first_point(template: &Template) -> Vec<(Arc<str>, usize)> {
    let mut out = Vec::new();
    let mut pending: Vec<Piece> = template.iter().rev().cloned().collect();
    while let Some(piece) = pending.pop() {
        match piece {
            Piece::Text(t, offset) => out.push((t, offset)),
            Piece::Choice(options) => pending.extend(options[0].iter().rev().cloned()),
        }
    }
    out
}

/// Text from pieces, and where each piece starts in it and in the space.
pub(super) fn render(pieces: &[(Arc<str>, usize)]) -> (String, Vec<(usize, usize)>) {
    let mut text = String::new();
    let mut origins = Vec::with_capacity(pieces.len());
    for (t, origin) in pieces {
        origins.push((text.len(), *origin));
        text.push_str(t);
    }
    (text, origins)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::space_text::{read_space, Part};

    fn texts(space: &str) -> Vec<String> {
        let read = read_space(space, 0..0).unwrap();
        let Part::Fixed(template) = &read.parts[0] else {
            panic!("a fixed part")
        };
        variants(template)
            .iter()
            .map(|pieces| pieces.iter().map(|(t, _)| &**t).collect())
            .collect()
    }

    #[test]
    fn every_option_of_every_choice_is_in_one_variant_nested_ones_with_the_option_around_them() {
        // Choices in pre-order: the outer size, the nested one, the function.
        let all = texts("tile({4, {8, 16}, 32}, {a, b})");
        assert_eq!(
            all,
            [
                "tile(4, a)",
                "tile(8, a)",
                "tile(32, a)",
                "tile(16, a)",
                "tile(4, b)"
            ]
        );
        let deeper = texts("f({a, g({b, h({c, d})})}, {x, y})");
        assert_eq!(
            deeper,
            [
                "f(a, x)",
                "f(g(b), x)",
                "f(g(h(c)), x)",
                "f(g(h(d)), x)",
                "f(a, y)"
            ]
        );
    }
}
