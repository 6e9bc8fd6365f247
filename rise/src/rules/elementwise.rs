//! The library strategy for elementwise chains and row reductions (`add`, `relu`,
//! softmax): the maps fused, every map on scalars and every reduction on vectors, the
//! outermost map on threads.

use super::pattern::named;
use super::*;
use crate::term::Term;
use elevate_core::Strategy;
use elevate_strategies::text::{ArgError, Registry};
use elevate_strategies::{normalize, try_, try_all};

/// `elementwise(w) = try(normalize(mapFusion)) ; DFNF ; tryAll(vectorizeReduce(w)) ;
/// DFNF ; tryAll(isFullyAppliedMap ; vectorize(w)) ;; parallel @
/// outermost(isApplied(isMap) ; overMany)`: every map of a chain fused into the one
/// after it (one pass over the data, no array in between), every map that computes on
/// scalars and every reduction (a softmax's maximum and sum) on vectors of `w` lanes,
/// the iterations of the outermost map over more than one element on threads (the
/// outermost map where every map is over one). A map or reduction whose length `w` does not
/// divide stays on scalars; the strategy fails only where there is no map at all.
///
/// ```
/// use elevate_rise::{registry, Program};
/// use elevate_core::Context;
/// let program = Program::load(
///     "def relu(x: 64.32.f32) = x |> map(map(fun(v => max(v, 0.0))))",
///     None,
/// )
/// .unwrap();
/// let s = registry().parse("elementwise(8)").unwrap();
/// let fast = s.apply(&program.entry().term, &mut Context::default()).unwrap();
/// let text = elevate_rise::print_term(&fast);
/// assert!(text.contains("asVector(8)") && text.contains("mapPar"));
/// ```
pub fn elementwise(lanes: i64) -> Strategy<Term> {
    named(
        format!("elementwise({lanes})"),
        try_(normalize(map_fusion()))
            >> dfnf()
            >> try_all(vectorize_reduce(lanes))
            >> dfnf()
            >> try_all(is_fully_applied_map() >> vectorize(lanes))
            >> dfnf()
            >> (outermost(is_applied(is_map()) >> over_many(), parallel())
                | outermost(is_applied(is_map()), parallel())),
    )
}

/// Registers `elementwise` in the strategy language.
pub(super) fn register(r: &mut Registry<Term>) {
    r.add(
        "elementwise",
        "(w)",
        "elementwise chains and row reductions: the maps fused, every map on scalars and every reduction on vectors of w lanes, the outermost map over more than one element on threads: try(normalize(mapFusion)) ; DFNF ; tryAll(vectorizeReduce(w)) ; DFNF ; tryAll(isFullyAppliedMap ; vectorize(w)) ;; parallel @ outermost(isApplied(isMap) ; overMany)",
        |a| match super::sizes(a, 0)?.as_slice() {
            [w] if *w >= 2 => Ok(elementwise(*w)),
            [w] => Err(ArgError::invalid(
                0,
                format!("the vector width must be at least 2, found {w}"),
            )),
            s => Err(ArgError::invalid(
                None,
                format!("expects one width, found {}", s.len()),
            )),
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{infer, parse_term, print_term};
    use elevate_core::Context;

    fn rewritten(program: &str) -> String {
        let t = infer(&parse_term(program).unwrap()).unwrap();
        print_term(&elementwise(8).apply(&t, &mut Context::default()).unwrap())
    }

    #[test]
    fn the_threads_skip_a_loop_of_one_iteration() {
        // A batch of one image: the channels on threads, the batch's loop not.
        let text = rewritten("fun(x: 1.4.16.f32 => x |> map(map(map(fun(v => max(v, 0.0))))))");
        assert_eq!(text.matches("mapPar").count(), 1, "{text}");
        assert!(!text.contains("x |> mapPar"), "{text}");
        // Two images: the batch on threads.
        let text = rewritten("fun(x: 2.4.16.f32 => x |> map(map(map(fun(v => max(v, 0.0))))))");
        assert!(text.contains("x |> mapPar"), "{text}");
        // Every loop of one iteration: the outermost still, as before.
        let text = rewritten("fun(x: 1.1.f32 => x |> map(map(fun(v => max(v, 0.0)))))");
        assert!(text.contains("mapPar"), "{text}");
    }
}
