//! Prints the payload of a RISE file's entry point at given sizes:
//! `cargo run -p elevate-bridge --example emit -- FILE.rise n=4 [STRATEGY]`.
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
    match elevate_bridge::payload("f", &term) {
        Ok(p) => print!("{}", p.mlir),
        Err(e) => eprintln!("{e}"),
    }
}
