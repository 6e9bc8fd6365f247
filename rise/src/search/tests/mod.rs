//! Tests of RISE's side of search.

mod fingerprint;
