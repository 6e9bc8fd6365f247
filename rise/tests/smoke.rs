use elevate_rise::*;
#[test]
fn smoke() {
    for f in ["dot", "scal", "matmul", "conv2d"] {
        let src = std::fs::read_to_string(format!("../../shared/examples/{f}.rise")).unwrap();
        let defs = match parse_program(&src) {
            Ok(d) => d,
            Err(e) => panic!("{}", e.render(f, &src)),
        };
        let typed = match infer_program(&defs) {
            Ok(d) => d,
            Err(e) => panic!("{}", e.render(f, &src)),
        };
        for d in &typed {
            println!("{} : {}", d.name, d.ty);
        }
        let last = typed.last().unwrap();
        let text = print_definition(&last.name, &last.term);
        println!("{text}");
        let redefs =
            parse_program(&text).unwrap_or_else(|e| panic!("{}", e.render("printed", &text)));
        let retyped =
            infer_program(&redefs).unwrap_or_else(|e| panic!("{}", e.render("printed", &text)));
        println!("retyped: {}", retyped[0].ty);
        let sig = io::signature(&last.term);
        let mut nats = NatEnv::default();
        for v in &sig.nats {
            nats.insert(v.clone(), 4);
        }
        let inputs = io::random_inputs(&sig, &nats, 1).unwrap();
        let out = evaluate(&last.term, &nats, &inputs).unwrap();
        println!("{:?}", out);
    }
}
