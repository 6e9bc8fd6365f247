// A space of matmul schedules: the steps of the TVM case study (`elevate strategies`
// describes them) with their sizes and their presence left open. Each `{...}` is a
// decision; a point of the space is this text with every decision made, and replays
// with `elevate rewrite --strategy`.
def tiled(x, y) = tile(x, y) @ outermost(mapNest(2))
def split(s) = reduceMapFission @ outermost(isApplied(isApplied(isApplied(isReduceSeq)))) ;; splitStrategy(s) @ innermost(isFullyAppliedReduce)
{id, packB} ; baseline ;
tiled({16, 32, 64}, {16, 32, 64}) ;; split({2, 4, 8}) ;;
reorder({[1, 2, 5, 6, 3, 4], [1, 2, 5, 3, 6, 4]}) ;;
{id, vectorize({8, 16, 32}) @ innermost(isFullyAppliedMap)} ;
{id, parallel @ outermost(isApplied(isMap))} ; {id, unroll @ innermost(isReduceSeq)}
