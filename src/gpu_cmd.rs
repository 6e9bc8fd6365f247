//! `elevate run --target gpu`: the program's kernels as PTX, launched through the CUDA
//! driver (loaded at run time: exit 1 where there is none), or written as a bundle
//! for a runner on another machine (`--bundle DIR`, no GPU needed).

use crate::bridge_cmd::{prepare, report, RunOptions};
use crate::Failure;
use elevate_bridge::Target;

pub fn run(o: RunOptions) -> Result<(), Failure> {
    if o.threads.is_some() {
        return Err(Failure(
            "--threads sets the CPU's threads; the GPU target's come from its maps".into(),
        ));
    }
    let p = prepare(&o, Target::Gpu, elevate_bridge::compile_gpu)?;
    if let Some(dir) = o.bundle {
        let expected = o.check.then(|| p.expected(o.path)).transpose()?;
        let bundle = p
            .compiled
            .bundle(&p.values, expected.as_ref())
            .map_err(|e| p.fail(o.path, e))?;
        let cannot = |e: std::io::Error| Failure(format!("{}: cannot write: {e}", dir.display()));
        std::fs::create_dir_all(dir).map_err(cannot)?;
        for (name, bytes) in &bundle.files {
            std::fs::write(dir.join(name), bytes).map_err(cannot)?;
        }
        return crate::output::println(
            &serde_json::json!({
                "bundle": dir.display().to_string(),
                "files": bundle.files.len(),
                "kernels": p.compiled.kernels().len(),
                "launches": p.compiled.launches().len(),
                "expected": expected.is_some(),
            })
            .to_string(),
        );
    }
    let mut call = p
        .compiled
        .prepare(&p.values)
        .map_err(|e| p.fail(o.path, e))?;
    call.invoke().map_err(|e| p.fail(o.path, e))?;
    let result = call.try_output().map_err(|e| p.fail(o.path, e))?;
    let flops = p.compiled.payload().flops;
    let extra = serde_json::json!({"target": "gpu", "device": call.device()});
    report(&o, &p, &result, flops, extra, || call.time())
}
