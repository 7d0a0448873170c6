//! The embedded font and the text styles of every figure.
//!
//! Plotters' `ab_glyph` text backend only knows the fonts registered with it: DejaVu Sans is
//! registered once per process, under [`FAMILY`] (which the SVG backend also writes as the
//! `font-family` of each text) and under `sans-serif` (plotters' own default).

use std::sync::OnceLock;

use plotters::style::{Color, FontStyle, RGBColor, TextStyle, register_font};

use crate::PlotError;

/// DejaVu Sans 2.37 (Bitstream Vera licence: `assets/LICENSE-DejaVu.txt`).
pub(crate) static DEJAVU_SANS: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// The family every text uses: a CSS font list, so an SVG viewer without DejaVu Sans still
/// picks a sans-serif face.
pub(crate) const FAMILY: &str = "DejaVu Sans, sans-serif";

/// Registers the font (once per process).
pub(crate) fn register() -> Result<(), PlotError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        [FAMILY, "sans-serif"].iter().all(|name| register_font(name, FontStyle::Normal, DEJAVU_SANS).is_ok())
    });
    if ok { Ok(()) } else { Err(PlotError::Font) }
}

/// Body text colour.
pub(crate) const INK: RGBColor = RGBColor(30, 30, 30);
/// Secondary text colour (subtitles, notes).
pub(crate) const MUTED: RGBColor = RGBColor(95, 95, 95);

/// A text style of `size` pixels in `color`.
pub(crate) fn text(size: f64, color: RGBColor) -> TextStyle<'static> {
    TextStyle { color: color.to_backend_color(), ..TextStyle::from((FAMILY, size)) }
}

/// The figure title.
pub(crate) fn title() -> TextStyle<'static> {
    text(26.0, INK)
}

/// The line under the title (run context).
pub(crate) fn subtitle() -> TextStyle<'static> {
    text(16.0, MUTED)
}

/// A panel's own heading.
pub(crate) fn heading() -> TextStyle<'static> {
    text(18.0, INK)
}

/// Axis descriptions (name and unit).
pub(crate) fn axis_desc() -> TextStyle<'static> {
    text(17.0, INK)
}

/// Tick labels and legend entries.
pub(crate) fn label() -> TextStyle<'static> {
    text(15.0, INK)
}
