//! PNG text: a bitmap backend that places glyphs itself.
//!
//! Plotters' `ab_glyph` rasteriser drops each glyph's left side bearing and rounds the pen
//! position per glyph, so words come out with uneven gaps ("programm ed"). [`Png`] wraps the
//! bitmap backend and draws text from the embedded font's outlines instead: the pen advances
//! in fractional pixels with kerning, each outline is drawn at its own bounds, and the size
//! matches the SVG backend's (`font-size` = style size / 1.24), so both files agree.

use std::sync::OnceLock;

use ab_glyph::{Font, FontRef, PxScale, ScaleFont, point};
use plotters::prelude::BitMapBackend;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
};

use crate::font;

/// Em size of a plotters text size, as the SVG backend writes it.
const EM_PER_SIZE: f32 = 1.0 / 1.24;

/// The parsed embedded font.
fn face() -> Option<&'static FontRef<'static>> {
    static FACE: OnceLock<Option<FontRef<'static>>> = OnceLock::new();
    FACE.get_or_init(|| FontRef::try_from_slice(font::DEJAVU_SANS).ok()).as_ref()
}

/// A bitmap backend with our own text drawing.
pub(crate) struct Png<'a>(pub BitMapBackend<'a>);

type Result<E> = std::result::Result<(), DrawingErrorKind<E>>;

impl DrawingBackend for Png<'_> {
    type ErrorType = <BitMapBackend<'static> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.0.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<Self::ErrorType> {
        self.0.ensure_prepared()
    }

    fn present(&mut self) -> Result<Self::ErrorType> {
        self.0.present()
    }

    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Result<Self::ErrorType> {
        self.0.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<Self::ErrorType> {
        self.0.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<Self::ErrorType> {
        self.0.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<Self::ErrorType> {
        self.0.draw_path(path, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<Self::ErrorType> {
        self.0.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<Self::ErrorType> {
        self.0.fill_polygon(vert, style)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        (iw, ih): (u32, u32),
        src: &[u8],
    ) -> Result<Self::ErrorType> {
        self.0.blit_bitmap(pos, (iw, ih), src)
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<Self::ErrorType> {
        let color = style.color();
        let Some(face) = face() else {
            // Unreachable with the embedded font; fall back to plotters' own drawing.
            return self.0.draw_text(text, style, pos);
        };
        if color.alpha == 0.0 || text.is_empty() {
            return Ok(());
        }
        let em = style.size() as f32 * EM_PER_SIZE;
        let scale = PxScale::from(em * face.height_unscaled() / face.units_per_em().unwrap_or(2048.0));
        let scaled = face.as_scaled(scale);

        // Lay the line out from a baseline at y = 0, left edge at x = 0.
        let mut glyphs = Vec::with_capacity(text.len());
        let mut caret = 0f32;
        let mut prev = None;
        for c in text.chars() {
            let id = scaled.glyph_id(c);
            if let Some(p) = prev {
                caret += scaled.kern(p, id);
            }
            glyphs.push(id.with_scale_and_position(scale, point(caret, 0.0)));
            caret += scaled.h_advance(id);
            prev = Some(id);
        }
        let (ascent, descent) = (scaled.ascent(), scaled.descent());
        let dx = match style.anchor().h_pos {
            HPos::Left => 0.0,
            HPos::Center => -caret / 2.0,
            HPos::Right => -caret,
        };
        // Where the baseline sits below the anchor.
        let baseline = match style.anchor().v_pos {
            VPos::Top => ascent,
            VPos::Center => (ascent + descent) / 2.0,
            VPos::Bottom => descent,
        };
        let transform = style.transform();
        let (w, h) = self.get_size();
        for glyph in glyphs {
            let Some(outline) = face.outline_glyph(glyph) else { continue };
            let bounds = outline.px_bounds();
            let mut pixels = Vec::new();
            outline.draw(|x, y, coverage| {
                if coverage > 0.0 {
                    let gx = (bounds.min.x + dx).round() as i32 + x as i32;
                    let gy = (bounds.min.y + baseline).round() as i32 + y as i32;
                    pixels.push((gx, gy, coverage));
                }
            });
            for (gx, gy, coverage) in pixels {
                let (tx, ty) = transform.transform(gx, gy);
                let (x, y) = (pos.0 + tx, pos.1 + ty);
                if x >= 0 && y >= 0 && (x as u32) < w && (y as u32) < h {
                    let alpha = color.alpha * f64::from(coverage.min(1.0));
                    self.0.draw_pixel((x, y), BackendColor { alpha, rgb: color.rgb })?;
                }
            }
        }
        Ok(())
    }
}
