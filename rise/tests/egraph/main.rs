//! Equality saturation over RISE: the language, the rewrites, saturation, sketches.

mod basics;
mod deep;
mod goals;
mod names;
mod properties;
mod sketches;
