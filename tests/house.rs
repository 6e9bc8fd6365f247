//! The shape of the code base: no import circles between the files of a crate, and no
//! source file over [`MAX_LINES`] lines outside tests.
//!
//! A file depends on another when it names an item of the other's module through
//! `crate::...` or `super::...` (in a `use` or inline). A module naming its own
//! descendants is structure, not a dependency, and is ignored; code after
//! `#[cfg(test)]` (a file's unit tests) is ignored too.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The longest a source file may be.
const MAX_LINES: usize = 850;

/// The crates' source folders.
const CRATES: [&str; 6] = [
    "core/src",
    "strategies/src",
    "rise/src",
    "bridge/src",
    "onnx/src",
    "src",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file relative to its crate's source folder: `lib.rs` and
/// `main.rs` are `[]`, `a/mod.rs` and `a.rs` are `[a]`, `a/b.rs` is `[a, b]`.
fn module_of(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_string());
    }
    parts
}

/// The source without comments, string literals and unit tests.
fn code_of(source: &str) -> String {
    let source = match source.find("#[cfg(test)]") {
        Some(at) => &source[..at],
        None => source,
    };
    let source = source.replace("'\"'", "' '");
    let mut code = String::with_capacity(source.len());
    let (mut in_string, mut escaped, mut in_comment) = (false, false, false);
    let mut chars = source.chars().peekable();
    while let Some(c) = chars.next() {
        if in_comment {
            if c == '\n' {
                in_comment = false;
                code.push(c);
            }
        } else if in_string {
            match (escaped, c) {
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => escaped = false,
            }
        } else if c == '/' && chars.peek() == Some(&'/') {
            in_comment = true;
        } else if c == '"' {
            in_string = true;
        } else {
            code.push(c);
        }
    }
    code
}

/// Expands `use` trees (`a::{b, c::{d, e}}`) into full paths.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or(tree).trim();
        return vec![path.trim_end_matches("::self").to_string()];
    };
    let prefix = tree[..open].trim_end_matches("::").trim();
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(expand)
        .map(|p| {
            if p == "self" {
                prefix.to_string()
            } else {
                format!("{prefix}::{p}")
            }
        })
        .collect()
}

/// Every `crate::`/`super::` path the code names, as module-relative segments.
fn named_paths(code: &str, module: &[String]) -> BTreeSet<Vec<String>> {
    let mut paths = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let statement = &rest[at + 4..];
        let end = statement.find(';').unwrap_or(statement.len());
        let preceded_by_ident = rest[..at]
            .chars()
            .last()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        if !preceded_by_ident {
            paths.extend(expand(&statement[..end]));
        }
        rest = &statement[end.min(statement.len())..];
    }
    // Inline paths: `crate::a::b` and `super::a` anywhere in the code.
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(start) {
            let at = from + at;
            let before = code[..at].chars().last();
            let end = code[at..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .map_or(code.len(), |e| at + e);
            if !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                paths.push(code[at..end].to_string());
            }
            from = end.max(at + start.len());
        }
    }
    paths
        .into_iter()
        .filter_map(|path| {
            let segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
            let mut resolved: Vec<String> = match segments.first() {
                Some(&"crate") => Vec::new(),
                Some(&"super") => module.to_vec(),
                _ => return None,
            };
            for segment in &segments {
                match *segment {
                    "crate" => {}
                    "super" => {
                        resolved.pop();
                    }
                    "self" => {}
                    name => resolved.push(name.to_string()),
                }
            }
            Some(resolved)
        })
        .collect()
}

struct CrateGraph {
    files: BTreeMap<Vec<String>, PathBuf>,
    edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
}

fn crate_graph(src: &Path) -> CrateGraph {
    let mut paths = Vec::new();
    rust_files(src, &mut paths);
    let files: BTreeMap<Vec<String>, PathBuf> = paths
        .into_iter()
        .filter(|p| !p.strip_prefix(src).unwrap().starts_with("bin"))
        .map(|p| (module_of(p.strip_prefix(src).unwrap()), p))
        .collect();
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (module, path) in &files {
        let code = code_of(&std::fs::read_to_string(path).unwrap());
        for named in named_paths(&code, module) {
            // The file of the longest module prefix of the path.
            let target = (0..=named.len())
                .rev()
                .map(|n| named[..n].to_vec())
                .find(|prefix| files.contains_key(prefix));
            if let Some(target) = target {
                let descendant = target.starts_with(module);
                if !descendant && target != *module {
                    edges.entry(module.clone()).or_default().insert(target);
                }
            }
        }
    }
    CrateGraph { files, edges }
}

/// A cycle through `start`, if any (depth-first search over the edges).
fn cycle_from(graph: &CrateGraph, start: &Vec<String>) -> Option<Vec<Vec<String>>> {
    let mut stack = vec![(start.clone(), vec![start.clone()])];
    let mut seen = BTreeSet::new();
    while let Some((node, path)) = stack.pop() {
        for next in graph.edges.get(&node).into_iter().flatten() {
            if next == start {
                return Some(path);
            }
            if seen.insert(next.clone()) {
                let mut longer = path.clone();
                longer.push(next.clone());
                stack.push((next.clone(), longer));
            }
        }
    }
    None
}

#[test]
fn no_import_circles_between_the_files_of_a_crate() {
    let mut circles = Vec::new();
    for krate in CRATES {
        let graph = crate_graph(&root().join(krate));
        let mut reported = BTreeSet::new();
        for module in graph.files.keys() {
            if let Some(cycle) = cycle_from(&graph, module) {
                let members: BTreeSet<_> = cycle.iter().cloned().collect();
                if reported.insert(members) {
                    let names: Vec<String> = cycle
                        .iter()
                        .map(|m| {
                            graph.files[m]
                                .strip_prefix(root())
                                .unwrap()
                                .display()
                                .to_string()
                        })
                        .collect();
                    circles.push(format!("{} -> (back)", names.join(" -> ")));
                }
            }
        }
    }
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}

#[test]
fn no_source_file_is_too_long() {
    let mut long = Vec::new();
    for krate in CRATES {
        let mut paths = Vec::new();
        rust_files(&root().join(krate), &mut paths);
        for path in paths {
            let source = std::fs::read_to_string(&path).unwrap();
            let code = match source.find("#[cfg(test)]") {
                Some(at) => &source[..at],
                None => &source,
            };
            let lines = code.lines().count();
            if lines > MAX_LINES {
                let shown = path
                    .strip_prefix(root())
                    .unwrap_or(&path)
                    .display()
                    .to_string();
                long.push(format!("{shown}: {lines} lines"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_checker_sees_a_circle() {
    // Two sibling modules naming each other, and one naming only the other.
    let a = named_paths(
        "use super::b::Thing;\nfn f() { crate::c::g() }",
        &["x".into(), "a".into()],
    );
    let expected: BTreeSet<Vec<String>> = [vec!["x", "b", "Thing"], vec!["c", "g"]]
        .into_iter()
        .map(|p| p.into_iter().map(String::from).collect())
        .collect();
    assert_eq!(a, expected);
    assert_eq!(
        expand("crate::{a::{B, C}, d as e, f::self}"),
        vec!["crate::a::B", "crate::a::C", "crate::d", "crate::f"]
    );
}
