//! Equality saturation over RISE: the language, the rewrites, saturation, sketches.

mod basics;
mod deep;
mod goals;
mod properties;
mod sketches;
