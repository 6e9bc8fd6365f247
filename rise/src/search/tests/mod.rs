//! Tests of RISE's side of search.

mod auto;
mod fingerprint;
mod model;
mod trace;
