//! The cursor against rebuilding from the root.

use crate::gen::trace_lines;
use crate::gen::AnyTerm;
use crate::traversals::{preorder, replace, subterm};
use elevate_core::arith::{self, Term};
use elevate_core::{Context, Cursor, Path, Traversable};
use quickcheck::quickcheck;

quickcheck! {
    fn edits_through_a_cursor_equal_rebuilds_from_the_root(t: AnyTerm, picks: Vec<u8>) -> bool {
        let t = t.0;
        let mut cursor = Cursor::new(t.clone());
        let mut expected = t.clone();
        for pick in picks.into_iter().take(8) {
            let paths = preorder(&expected);
            let path = &paths[pick as usize % paths.len()];
            cursor.goto(path).unwrap();
            let new = Term::negate(subterm(&expected, path).clone());
            cursor.replace(new.clone());
            expected = replace(&expected, path.as_slice(), new);
            if cursor.path() != *path {
                return false;
            }
        }
        let root = cursor.into_root();
        root == expected
    }

    fn a_cursor_that_only_moves_rebuilds_nothing(t: AnyTerm) -> bool {
        let t = t.0;
        let mut cursor = Cursor::new(t.clone());
        for path in preorder(&t) {
            cursor.goto(&path).unwrap();
        }
        cursor.into_root().same_node(&t)
    }
}

#[test]
fn cursor_moves_and_reports_bad_moves() {
    let t: Term = "(a + 0) * (b + 0)".parse().unwrap();
    let mut cursor = Cursor::new(t);
    let mut cx = Context::default().with_trace();
    cursor.down(0).unwrap();
    assert_eq!(cursor.focus().to_string(), "a + 0");
    cursor.apply(&arith::add_zero(), &mut cx).unwrap();
    assert!(cursor.next_sibling());
    assert_eq!(cursor.path(), Path::from(vec![1]));
    assert!(!cursor.next_sibling());
    cursor.apply(&arith::add_zero(), &mut cx).unwrap();
    let err = cursor.down(5).unwrap_err();
    assert_eq!(err.to_string(), "no child 5 (the node has 0 children)");
    assert!(cursor.apply(&arith::neg_neg(), &mut cx).is_err());
    assert_eq!(cursor.depth(), 1);
    let trace = trace_lines(&cx);
    assert_eq!(trace, ["addZero @ [0]", "addZero @ [1]"]);
    assert_eq!(cursor.into_root().to_string(), "a * b");
}
