//! Tests of the strategy engine on the small arithmetic IR of `elevate_core::arith`.

mod arith;
mod budget;
mod cursor;
mod deep;
mod drivers;
mod gen;
mod laws;
mod persistence;
mod text;
mod threads;
mod traversals;
