//! Compiles a RISE file's entry point through MLIR and runs it on random inputs,
//! comparing with the interpreter:
//! `cargo run -p elevate-bridge --features mlir --example run -- FILE.rise n=4 [STRATEGY]`.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let source = std::fs::read_to_string(&args[1]).unwrap();
    let program = elevate_rise::Program::load(&source, None).unwrap();
    let mut nats = elevate_rise::NatEnv::default();
    for a in &args[2..] {
        if let Some((k, v)) = a.split_once('=') {
            nats.insert(
                elevate_rise::nat::NatVar::Named(k.into()),
                v.parse().unwrap(),
            );
        }
    }
    let term = elevate_bridge::instantiate(&program.entry().term, &nats).unwrap();
    let term = match args.iter().skip(2).find(|a| !a.contains('=')) {
        Some(s) => elevate_rise::rules::registry()
            .parse(s)
            .unwrap()
            .apply(&term, &mut elevate_core::Context::default())
            .unwrap(),
        None => term,
    };
    let payload = elevate_bridge::payload("f", &term).unwrap();
    let compiled =
        elevate_bridge::jit::compile(&payload).unwrap_or_else(|e| panic!("{e}\n{}", payload.mlir));
    let signature = elevate_rise::io::signature(&term);
    let inputs =
        elevate_rise::io::random_inputs(&signature, &elevate_rise::NatEnv::default(), 1).unwrap();
    let json: Vec<_> = inputs.iter().map(|v| v.to_json().unwrap()).collect();
    let t = std::time::Instant::now();
    let out = compiled.run(&json).unwrap();
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let expected = elevate_rise::evaluate(&term, &elevate_rise::NatEnv::default(), &inputs)
        .unwrap()
        .to_json()
        .unwrap();
    println!(
        "same: {} ({ms:.3} ms)",
        elevate_rise::io::approx_eq(&out, &expected)
    );
}
