//! The strategy language for RISE: the names that strategy text (`elevate rewrite
//! --strategy`, `*.elv` files, search spaces) can use, assembled from Elevate's
//! combinators, the rule library ([`crate::rules::register`]: the rules of its
//! catalogue and its strategies) and, with the feature `egraph`, equality saturation
//! ([`crate::egraph::register`]).
//!
//! This module sits above both: the rules know nothing of the e-graph, and the e-graph
//! reads the rules' catalogue.
//!
//! ```
//! let r = elevate_rise::registry();
//! assert!(r.contains("mapFusion") && r.contains("topDown") && r.contains("tile"));
//! let e = r.parse("id ; splitJoin(0)").err().unwrap();
//! assert_eq!(e.message, "`splitJoin(n)`: the size n must be positive, found 0");
//! assert_eq!(e.offset, "id ; splitJoin(".len());
//! ```

use crate::term::Term;
use elevate_strategies::text::Registry;

/// Every name of the strategy language for RISE.
pub fn registry() -> Registry<Term> {
    let mut r = Registry::with_combinators();
    crate::rules::register(&mut r);
    #[cfg(feature = "egraph")]
    crate::egraph::register(&mut r);
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::catalogue;
    use crate::rules::catalogue::ParamKind;
    use elevate_core::{Context, Log};

    /// A value each kind of argument refuses, and the reason given.
    fn bad(kind: ParamKind) -> (i64, &'static str) {
        match kind {
            ParamKind::Size => (0, "must be positive, found 0"),
            ParamKind::Width => (1, "must be at least 2, found 1"),
            ParamKind::Dimension => (3, "must be 0, 1 or 2, found 3"),
        }
    }

    #[test]
    fn every_rule_with_a_bad_argument_is_an_error_where_it_is_written() {
        let r = registry();
        let mut checked = 0;
        for def in catalogue() {
            let [param] = def.params else {
                continue;
            };
            let (value, why) = bad(param.kind);
            let text = format!("id ; {}({value}) ; id", def.name);
            let e = r
                .parse(&text)
                .err()
                .unwrap_or_else(|| panic!("{text} parses"));
            // At the argument, which the error names by its index.
            assert_eq!(&text[e.offset..], format!("{value}) ; id"), "{text}");
            assert!(
                e.message.contains(&format!("`{}(", def.name)),
                "{}",
                e.message
            );
            assert!(e.message.contains(why), "{text}: {}", e.message);
            assert!(r.parse(&format!("{}(-1)", def.name)).is_err());
            checked += 1;
        }
        assert!(checked >= 10, "{checked}");
        for (text, at, why) in [
            ("tile(0, 32)", "0, 32)", "must be positive, found 0"),
            ("tileND(2)(0)", "0)", "must be positive, found 0"),
            (
                "tileNDList([32, 0])",
                "[32, 0])",
                "a tile size must be positive, found 0",
            ),
            (
                "reorder([1, 1])",
                "[1, 1])",
                "[1, 1] is not a permutation of the loop depths 1 to 2",
            ),
            (
                "tile(1, 2, 3)",
                "tile(1, 2, 3)",
                "`tile(x, y)`: expects 2 sizes, found 3",
            ),
            (
                "splitJoin(4, 4)",
                "splitJoin(4, 4)",
                "`splitJoin(n)`: expects 1 argument(s), found 2",
            ),
            (
                "splitJoin(id)",
                "id)",
                "`splitJoin(n)`: argument 1 must be a number",
            ),
            (
                "argumentOf(nope, id)",
                "nope, id)",
                "unknown strategy `nope` (`elevate strategies` lists them)",
            ),
            (
                "argumentOf(mapFusion, id)",
                "mapFusion, id)",
                "`argumentOf(PRIM, s)`: `mapFusion` is not a primitive",
            ),
            (
                "isEqualTo(\"map(\")",
                "\"map(\")",
                "`isEqualTo(\"PROGRAM\")`: argument 1 is not a RISE program",
            ),
            (
                "mapNest(-1)",
                "-1)",
                "`mapNest(d)`: argument 1 must be non-negative, found -1",
            ),
        ] {
            let e = r
                .parse(text)
                .err()
                .unwrap_or_else(|| panic!("{text} parses"));
            assert!(e.message.contains(why), "{text}: {}", e.message);
            assert_eq!(&text[e.offset..], at, "{text}: {}", e.message);
        }
    }

    /// The Rust constructors cannot refuse: the strategy prints as written, fails under
    /// that name, and says why in the context's log.
    #[test]
    fn a_rule_made_in_rust_with_a_bad_argument_fails_under_its_name_and_says_why() {
        let program =
            crate::infer(&crate::parse_term("fun(x: 8.f32 => x |> map(neg))").unwrap()).unwrap();
        for (s, label, why) in [
            (
                crate::rules::split_join(0),
                "splitJoin(0)",
                "the size n must be positive",
            ),
            (
                crate::rules::vectorize(0),
                "vectorize(0)",
                "the vector width n must be at least 2",
            ),
            (
                crate::rules::map_global(7),
                "mapGlobal(7)",
                "the dimension d must be 0, 1 or 2",
            ),
            (
                crate::rules::tile(0, 4),
                "tile(0, 4)",
                "a tile size must be positive",
            ),
            (
                crate::rules::reorder(&[2, 2]),
                "reorder([2, 2])",
                "is not a permutation",
            ),
        ] {
            assert_eq!(s.to_string(), label);
            let mut cx = Context::default().with_log(Log::Collect(Vec::new()));
            let failure = s.apply(&program, &mut cx).unwrap_err();
            assert_eq!(failure.strategy().to_string(), label);
            assert!(
                cx.messages()
                    .iter()
                    .any(|m| m.contains(label) && m.contains(why)),
                "{label}: {:?}",
                cx.messages()
            );
        }
    }

    #[test]
    fn the_listing_shows_each_rule_with_its_arguments_and_equation() {
        let r = registry();
        for def in catalogue() {
            let entry = r
                .entries()
                .find(|e| e.name == def.name)
                .unwrap_or_else(|| panic!("{} is not registered", def.name));
            assert_eq!(entry.params, def.signature());
            assert!(entry.doc.starts_with(def.equation), "{}", entry.doc);
            assert_eq!(
                entry.doc.ends_with("[e-graph]"),
                def.in_egraph(),
                "{}",
                def.name
            );
        }
    }
}
