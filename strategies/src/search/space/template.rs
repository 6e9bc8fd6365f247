//! Reading a part's template: its widest choice, how many points it makes, its text.

use super::super::space_text::{Piece, Template};

/// Widens `widen` by every choice of `template`, nested ones included.
pub(super) fn widest_choice(template: &Template, widen: &mut impl FnMut(usize, usize)) {
    let mut stack = vec![template.clone()];
    while let Some(t) = stack.pop() {
        for piece in t.iter() {
            if let Piece::Choice(options) = piece {
                widen(options.len(), 1);
                stack.extend(options.iter().cloned());
            }
        }
    }
}

/// How many points a template makes.
pub(super) fn template_size(template: &Template) -> f64 {
    // Sizes of templates below a choice, computed bottom-up over a work list.
    fn go(template: &Template) -> f64 {
        let mut product = 1.0;
        for piece in template.iter() {
            if let Piece::Choice(options) = piece {
                product *= elevate_core::stack::guard(|| options.iter().map(go).sum::<f64>());
            }
        }
        product
    }
    go(template)
}

/// A template as text, its choices written `{a, b}`.
pub(super) fn template_text(template: &Template) -> String {
    let mut out = String::new();
    // (pieces, index of the next piece), innermost last.
    let mut stack: Vec<(Template, usize, bool)> = vec![(template.clone(), 0, false)];
    while let Some((t, i, in_choice)) = stack.pop() {
        if i == t.len() {
            continue;
        }
        stack.push((t.clone(), i + 1, in_choice));
        match &t[i] {
            Piece::Text(text, _) => out.push_str(text),
            Piece::Choice(options) => {
                out.push('{');
                let parts: Vec<String> = options.iter().map(template_text_flat).collect();
                out.push_str(&parts.join(", "));
                out.push('}');
            }
        }
    }
    out
}

fn template_text_flat(template: &Template) -> String {
    elevate_core::stack::guard(|| template_text(template))
}
