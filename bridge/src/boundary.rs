//! The function boundary: a parameter or result of any data type is passed as one
//! memref per scalar leaf of its type (an array of pairs as a pair of arrays), and JSON
//! values are split into and assembled from those leaves.

use elevate_rise::types::{Type, TypeKind};
use serde_json::Value as Json;

/// The types of the leaves of `ty`, in order: nested arrays of scalars (a vector
/// counts as an array).
pub fn leaf_types(ty: &Type) -> Vec<Type> {
    match ty.kind() {
        TypeKind::Array(n, e) | TypeKind::Vector(e, n) => leaf_types(e)
            .into_iter()
            .map(|t| Type::array(n.clone(), t))
            .collect(),
        TypeKind::Pair(a, b) => leaf_types(a).into_iter().chain(leaf_types(b)).collect(),
        _ => vec![ty.clone()],
    }
}

/// `json`, a value of type `ty` (pairs as two-element arrays), as its leaves.
pub fn split_json(ty: &Type, json: &Json) -> Vec<Json> {
    match (ty.kind(), json) {
        (TypeKind::Pair(a, b), Json::Array(p)) if p.len() == 2 => {
            let mut leaves = split_json(a, &p[0]);
            leaves.extend(split_json(b, &p[1]));
            leaves
        }
        (TypeKind::Array(_, e) | TypeKind::Vector(e, _), Json::Array(items)) => {
            let per_item: Vec<Vec<Json>> = items.iter().map(|x| split_json(e, x)).collect();
            (0..leaf_types(e).len())
                .map(|k| Json::Array(per_item.iter().map(|l| l[k].clone()).collect()))
                .collect()
        }
        _ => vec![json.clone()],
    }
}

/// The value of type `ty` whose leaves are `leaves` (the inverse of [`split_json`]).
pub fn assemble_json(ty: &Type, leaves: &[Json]) -> Json {
    match ty.kind() {
        TypeKind::Pair(a, b) => {
            let k = leaf_types(a).len();
            Json::Array(vec![
                assemble_json(a, &leaves[..k]),
                assemble_json(b, &leaves[k..]),
            ])
        }
        TypeKind::Array(_, e) | TypeKind::Vector(e, _) => {
            let n = leaves.first().and_then(Json::as_array).map_or(0, Vec::len);
            Json::Array(
                (0..n)
                    .map(|i| {
                        let at: Vec<Json> = leaves
                            .iter()
                            .map(|l| l.as_array().map_or(Json::Null, |a| a[i].clone()))
                            .collect();
                        assemble_json(e, &at)
                    })
                    .collect(),
            )
        }
        _ => leaves.first().cloned().unwrap_or(Json::Null),
    }
}
