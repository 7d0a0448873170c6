//! Writing a figure: drawn once into a PNG pixel buffer and once into an SVG string, both with
//! the embedded font, then written to `DIR/NAME.png` and `DIR/NAME.svg`.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::raster::Png;
use crate::{Figure, PlotError, Skipped, font};

/// What [`crate::render`] wrote and left out.
#[derive(Clone, Debug, Default)]
pub struct Rendered {
    /// Files written, PNG then SVG per figure.
    pub files: Vec<PathBuf>,
    /// Figures without data, not written.
    pub skipped: Vec<Skipped>,
}

/// Writes `figure` as PNG and SVG into `dir`; returns both paths.
pub(crate) fn write(figure: &Figure, dir: &Path) -> Result<[PathBuf; 2], PlotError> {
    font::register()?;
    let (w, h) = figure.size();
    let failed =
        |e: &dyn std::fmt::Display| PlotError::Draw { figure: figure.name().into(), message: e.to_string() };

    let mut pixels = vec![0u8; w as usize * h as usize * 3];
    {
        let root = Png(BitMapBackend::with_buffer(&mut pixels, (w, h))).into_drawing_area();
        figure.draw(&root).map_err(|e| failed(&e))?;
        root.present().map_err(|e| failed(&e))?;
    }
    let png = dir.join(format!("{}.png", figure.name()));
    encode_png(&png, &pixels, (w, h))?;

    let mut svg_text = String::new();
    {
        let root = SVGBackend::with_string(&mut svg_text, (w, h)).into_drawing_area();
        figure.draw(&root).map_err(|e| failed(&e))?;
        root.present().map_err(|e| failed(&e))?;
    }
    let svg = dir.join(format!("{}.svg", figure.name()));
    std::fs::write(&svg, svg_text).map_err(|source| PlotError::Io { path: svg.clone(), source })?;
    Ok([png, svg])
}

/// Encodes RGB `pixels` as an 8-bit PNG at `path`.
fn encode_png(path: &Path, pixels: &[u8], (w, h): (u32, u32)) -> Result<(), PlotError> {
    let io = |source| PlotError::Io { path: path.to_path_buf(), source };
    let png = |source| PlotError::Png { path: path.to_path_buf(), source };
    let file = File::create(path).map_err(io)?;
    let mut encoder = png::Encoder::new(BufWriter::new(file), w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(png)?;
    writer.write_image_data(pixels).map_err(png)?;
    writer.finish().map_err(png)
}
