//! `progress.svg` and `progress.png`: the best cost so far against evaluations, every
//! candidate a dot, failed candidates a red cross along the top, the baseline (the
//! program with `defaultLowering` alone) a line.
//!
//! Labels need a font: the first TrueType font found among the system's fonts
//! (`/usr/share/fonts`). Without one, the pictures have no text.

use elevate_strategies::search::Report;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;
use std::sync::OnceLock;

const SIZE: (u32, u32) = (900, 540);

/// Writes both pictures into `dir`.
pub fn write(dir: &Path, report: &Report) -> Result<(), String> {
    let labels = font();
    let svg = dir.join("progress.svg");
    let area = SVGBackend::new(&svg, SIZE).into_drawing_area();
    draw(&area, report, labels).map_err(|e| format!("progress.svg: {e}"))?;
    drop(area);
    let png = dir.join("progress.png");
    let area = BitMapBackend::new(&png, SIZE).into_drawing_area();
    draw(&area, report, labels).map_err(|e| format!("progress.png: {e}"))
}

/// Whether a font for labels is registered (looked for once).
fn font() -> bool {
    static FOUND: OnceLock<bool> = OnceLock::new();
    *FOUND.get_or_init(|| {
        let candidates = [
            "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
            "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
        ];
        let found = candidates
            .iter()
            .map(std::path::PathBuf::from)
            .chain(walk_fonts(Path::new("/usr/share/fonts")))
            .find_map(|path| std::fs::read(path).ok());
        match found {
            // Registered once for the life of the process, as the font API wants.
            Some(bytes) => plotters::style::register_font(
                "sans-serif",
                FontStyle::Normal,
                Box::leak(bytes.into_boxed_slice()),
            )
            .is_ok(),
            None => false,
        }
    })
}

/// `.ttf` files below `dir`, two levels deep.
fn walk_fonts(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![(dir.to_path_buf(), 0)];
    while let Some((d, depth)) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() && depth < 2 {
                pending.push((path, depth + 1));
            } else if path.extension().is_some_and(|e| e == "ttf") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    report: &Report,
    labels: bool,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(e)?;
    let costs: Vec<(f64, f64)> = report
        .log
        .iter()
        .filter_map(|c| Some((c.index as f64, c.cost()?)))
        .filter(|(_, c)| c.is_finite() && *c > 0.0)
        .collect();
    let n = report.log.len().max(1) as f64;
    let baseline = report
        .baseline
        .as_ref()
        .and_then(|b| b.as_ref().ok())
        .map(|m| m.cost)
        .filter(|c| c.is_finite() && *c > 0.0);
    let low = costs.iter().map(|c| c.1).fold(f64::INFINITY, f64::min);
    let high = costs
        .iter()
        .map(|c| c.1)
        .chain(baseline)
        .fold(0.0, f64::max);
    let (low, high) = if costs.is_empty() {
        (1.0, 10.0)
    } else {
        (low / 1.2, high * 1.2)
    };
    let mut builder = ChartBuilder::on(root);
    builder.margin(16);
    if labels {
        builder
            .caption(
                format!(
                    "{} with {} cost: best so far against evaluations",
                    report.driver, report.cost
                ),
                ("sans-serif", 20),
            )
            .x_label_area_size(40)
            .y_label_area_size(70);
    }
    let mut chart = builder
        .build_cartesian_2d(0f64..n, (low..high).log_scale())
        .map_err(e)?;
    if labels {
        chart
            .configure_mesh()
            .x_desc("evaluations")
            .y_desc(format!("{} cost (log)", report.cost))
            .draw()
            .map_err(e)?;
    }
    let blue = RGBColor(60, 110, 200);
    chart
        .draw_series(
            costs
                .iter()
                .map(|&(x, y)| Circle::new((x, y), 2, blue.mix(0.6).filled())),
        )
        .map_err(e)?;
    chart
        .draw_series(
            report
                .log
                .iter()
                .filter(|c| c.cost().is_none())
                .map(|c| Cross::new((c.index as f64, high / 1.05), 3, RED)),
        )
        .map_err(e)?;
    let mut best_line = Vec::new();
    for c in &report.log {
        if let Some(best) = c.best_so_far.filter(|b| *b > 0.0) {
            if let Some(&(_, previous)) = best_line.last() {
                best_line.push((c.index as f64, previous));
            }
            best_line.push((c.index as f64, best));
        }
    }
    if let Some(&(_, last)) = best_line.last() {
        best_line.push((n, last));
    }
    chart
        .draw_series(LineSeries::new(best_line, BLACK.stroke_width(2)))
        .map_err(e)?;
    if let Some(baseline) = baseline {
        // The program with `defaultLowering` alone.
        chart
            .draw_series(LineSeries::new(
                [(0.0, baseline), (n, baseline)],
                RGBColor(200, 120, 0).stroke_width(1),
            ))
            .map_err(e)?;
        if labels {
            chart
                .draw_series(std::iter::once(Text::new(
                    "defaultLowering alone",
                    (n * 0.02, baseline / 1.08),
                    ("sans-serif", 14),
                )))
                .map_err(e)?;
        }
    }
    root.present().map_err(e)
}
