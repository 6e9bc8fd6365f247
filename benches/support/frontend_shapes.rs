//! RISE programs of a given size for the front end's benchmarks: each shape stresses
//! one way a program grows (shared by `benches/frontend.rs` and
//! `examples/frontend_bench.rs`).

/// A program of size `n` in one shape.
pub type Shape = fn(usize) -> String;

/// The shapes: a name and a program of size `n` in that shape.
pub const SHAPES: &[(&str, Shape)] = &[
    ("applications", applications),
    ("definitions", definitions),
    ("type_parentheses", type_parentheses),
    ("type_dimensions", type_dimensions),
    ("lambdas", lambdas),
    ("arrays", arrays),
];

/// `id(id)(id)...(x)`: written out, the type of the first `id` doubles in size with
/// each application.
pub fn applications(n: usize) -> String {
    format!("def f(x: i32) = id{}(x)\n", "(id)".repeat(n))
}

/// `n` definitions, each calling the one before.
pub fn definitions(n: usize) -> String {
    let mut source = String::from("def d0(x: f32) = x\n");
    for i in 1..n {
        source.push_str(&format!("def d{i}(x: f32) = d{}(x)\n", i - 1));
    }
    source
}

/// A parameter type in `n` parentheses: `((...(f32)...))`.
pub fn type_parentheses(n: usize) -> String {
    format!("def f(x: {}f32{}) = x\n", "(".repeat(n), ")".repeat(n))
}

/// A parameter type with `n` dimensions: `1.1....1.f32`.
pub fn type_dimensions(n: usize) -> String {
    format!("def f(x: {}f32) = x\n", "1.".repeat(n))
}

/// `n` nested lambdas: `fun(y: f32 => fun(y: f32 => ... x))`.
pub fn lambdas(n: usize) -> String {
    format!(
        "def f(x: f32) = {}x{}\n",
        "fun(y: f32 => ".repeat(n),
        ")".repeat(n)
    )
}

/// `n` nested array literals: `[[...[1]...]]`.
pub fn arrays(n: usize) -> String {
    format!("def f = {}1{}\n", "[".repeat(n), "]".repeat(n))
}
