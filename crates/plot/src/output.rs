//! Writing a figure: drawn once into a PNG pixel buffer and once into an SVG string, both with
//! the embedded font, then written to `DIR/NAME.png` and `DIR/NAME.svg`.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::panel::{Area, DrawResult};
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

/// Something drawn into a figure file: a report's figure or a sweep's chart.
pub(crate) trait Drawable {
    /// Its name in errors.
    fn name(&self) -> &str;
    /// Width and height in pixels.
    fn size(&self) -> (u32, u32);
    /// Draws it all on `root`, which is [`Drawable::size`] pixels.
    fn draw<DB: DrawingBackend>(&self, root: &Area<DB>) -> DrawResult<(), DB>;
}

impl Drawable for Figure {
    fn name(&self) -> &str {
        Figure::name(self)
    }

    fn size(&self) -> (u32, u32) {
        Figure::size(self)
    }

    fn draw<DB: DrawingBackend>(&self, root: &Area<DB>) -> DrawResult<(), DB> {
        Figure::draw(self, root)
    }
}

/// The error of drawing `item`.
fn failed(item: &impl Drawable, e: &dyn std::fmt::Display) -> PlotError {
    PlotError::Draw { figure: item.name().into(), message: e.to_string() }
}

/// Writes `figure` as PNG and SVG into `dir`; returns both paths.
pub(crate) fn write(figure: &Figure, dir: &Path) -> Result<[PathBuf; 2], PlotError> {
    let png_path = dir.join(format!("{}.png", figure.name()));
    let svg_path = dir.join(format!("{}.svg", figure.name()));
    png(figure, &png_path)?;
    svg(figure, &svg_path)?;
    Ok([png_path, svg_path])
}

/// Draws `item` into the PNG file `path`.
pub(crate) fn png(item: &impl Drawable, path: &Path) -> Result<(), PlotError> {
    font::register()?;
    let (w, h) = item.size();
    let mut pixels = vec![0u8; w as usize * h as usize * 3];
    {
        let root = Png(BitMapBackend::with_buffer(&mut pixels, (w, h))).into_drawing_area();
        item.draw(&root).map_err(|e| failed(item, &e))?;
        root.present().map_err(|e| failed(item, &e))?;
    }
    encode_png(path, &pixels, (w, h))
}

/// Draws `item` into the SVG file `path`.
pub(crate) fn svg(item: &impl Drawable, path: &Path) -> Result<(), PlotError> {
    font::register()?;
    let (w, h) = item.size();
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, (w, h)).into_drawing_area();
        item.draw(&root).map_err(|e| failed(item, &e))?;
        root.present().map_err(|e| failed(item, &e))?;
    }
    std::fs::write(path, text).map_err(|source| PlotError::Io { path: path.to_path_buf(), source })
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
