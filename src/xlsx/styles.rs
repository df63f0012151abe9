//! Cell formats: a package's `xl/styles.xml` → [`CellFormat`]s, and a
//! [`CellFormat`] → the rust_xlsxwriter [`Format`](xlsx::Format) that writes
//! the same look.
//!
//! Only what the model holds is read: number formats, fonts (with their
//! scripts), pattern fills, the four outer borders and alignment, theme
//! colours with their tints. The model needs them to tell dates and to
//! write the formats of a workbook made through the API, and rich text
//! runs are written from them; a file's own cells are written back with
//! the file's style records whole (see [`super::stand_in`]), so what the
//! model leaves out (gradient fills, diagonal borders, protection) is kept
//! there.

use std::borrow::Cow;
use std::collections::HashMap;

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};
use rust_xlsxwriter as xlsx;

use super::xml::{self, is_true};
use crate::model::format::{Alignment, Border, Borders, CellFormat, Color, Fill, Font};

/// The most entries one table of `styles.xml` (`cellXfs`, `fonts`, `fills`,
/// `borders`, `numFmts`) may hold.
pub const MAX_ENTRIES: usize = 65_536;

/// What a package's `styles.xml` says about its cells.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Styles {
    /// One per `<cellXfs><xf>`, in order: a cell's `s` attribute indexes it.
    pub formats: Vec<CellFormat>,
    /// The workbook's default font (font 0). Formats using it carry
    /// `Font::default()` instead.
    pub default_font: Font,
}

/// Parses `xl/styles.xml`. Out-of-range font, fill and border ids give the
/// default part; `applyX` flags are ignored (the referenced parts are what
/// Excel shows). Errors are short texts for malformed XML or too many entries.
pub fn parse_styles(xml: &[u8]) -> Result<Styles, String> {
    let palette = Palette::of(xml)?;
    let mut tables = Tables::default();
    let mut open: Vec<Tag> = Vec::new();
    let mut reader = Reader::from_reader(xml);
    loop {
        match reader.read_event().map_err(xml_error)? {
            Event::Start(element) => {
                let tag = tables.open(open.last().copied(), &element, &palette)?;
                open.push(tag);
            }
            Event::Empty(element) => {
                tables.open(open.last().copied(), &element, &palette)?;
            }
            Event::End(_) => {
                open.pop();
            }
            Event::Eof if open.is_empty() => break,
            Event::Eof => return Err("styles.xml ends inside an element".into()),
            _ => {}
        }
    }
    Ok(tables.resolve())
}

/// The rust_xlsxwriter format that writes `format`. A solid fill keeps its
/// visible colour in the written `fgColor`; a font without a colour is
/// written without one (rust_xlsxwriter would otherwise write theme 1).
pub fn to_format(format: &CellFormat) -> xlsx::Format {
    let mut out = xlsx::Format::new();
    if let Some(code) = &format.num_format {
        out = out.set_num_format(code.as_str());
    }
    out = with_font(out, &format.font);
    out = with_fill(out, &format.fill);
    out = with_borders(out, &format.borders);
    with_alignment(out, &format.alignment)
}

// ---------------------------------------------------------------------------
// Reading

/// The elements whose children the parser reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    NumFmts,
    Fonts,
    Font,
    Fills,
    Fill,
    PatternFill,
    Borders,
    Border,
    Side(Side),
    CellXfs,
    Xf,
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Left,
    Right,
    Top,
    Bottom,
}

/// One `<cellXfs><xf>` before its ids are resolved.
#[derive(Debug, Default)]
struct RawXf {
    num_fmt_id: u32,
    font_id: Option<usize>,
    fill_id: Option<usize>,
    border_id: Option<usize>,
    alignment: Alignment,
}

/// The tables of `styles.xml` as read, in file order.
#[derive(Debug, Default)]
struct Tables {
    num_fmts: HashMap<u32, String>,
    fonts: Vec<Font>,
    fills: Vec<Fill>,
    borders: Vec<Borders>,
    xfs: Vec<RawXf>,
}

impl Tables {
    /// Reads an element's attributes into the tables (one method per kind
    /// of element); returns the tag its children are read under.
    fn open(
        &mut self,
        parent: Option<Tag>,
        element: &BytesStart,
        palette: &Palette,
    ) -> Result<Tag, String> {
        let local = element.local_name();
        let name = local.as_ref();
        Ok(match (parent, name) {
            (_, "numFmts") => Tag::NumFmts,
            (Some(Tag::NumFmts), "numFmt") => self.num_fmt(element)?,
            (_, "fonts") => Tag::Fonts,
            (Some(Tag::Fonts), "font") => {
                check_room(self.fonts.len(), "fonts")?;
                self.fonts.push(Font::default());
                Tag::Font
            }
            (Some(Tag::Font), property) => {
                if let Some(font) = self.fonts.last_mut() {
                    read_font_property(font, property, element, palette)?;
                }
                Tag::Other
            }
            (_, "fills") => Tag::Fills,
            (Some(Tag::Fills), "fill") => {
                check_room(self.fills.len(), "fills")?;
                self.fills.push(Fill::default());
                Tag::Fill
            }
            (Some(Tag::Fill), "patternFill") => {
                if let Some(fill) = self.fills.last_mut() {
                    fill.pattern =
                        attr(element, "patternType")?.and_then(|name| known(PATTERNS, name.trim()));
                }
                Tag::PatternFill
            }
            (Some(Tag::PatternFill), "fgColor" | "bgColor") => {
                self.fill_color(name == "fgColor", element, palette)?
            }
            (_, "borders") => Tag::Borders,
            (Some(Tag::Borders), "border") => {
                check_room(self.borders.len(), "borders")?;
                self.borders.push(Borders::default());
                Tag::Border
            }
            (Some(Tag::Border), side) => self.side(side, element)?,
            (Some(Tag::Side(side)), "color") => {
                let color = read_color(element, palette)?;
                if let Some(border) = self.border_side(side) {
                    border.color = color;
                }
                Tag::Other
            }
            (_, "cellXfs") => Tag::CellXfs,
            (Some(Tag::CellXfs), "xf") => self.xf(element)?,
            (Some(Tag::Xf), "alignment") => {
                if let Some(xf) = self.xfs.last_mut() {
                    xf.alignment = read_alignment(element)?;
                }
                Tag::Other
            }
            _ => Tag::Other,
        })
    }

    /// A `<numFmt>`: a number format code by id.
    fn num_fmt(&mut self, element: &BytesStart) -> Result<Tag, String> {
        check_room(self.num_fmts.len(), "number formats")?;
        let id = attr(element, "numFmtId")?.and_then(|id| id.trim().parse().ok());
        if let (Some(id), Some(code)) = (id, attr(element, "formatCode")?) {
            self.num_fmts.insert(id, code.into_owned());
        }
        Ok(Tag::Other)
    }

    /// A pattern fill's foreground or background colour.
    fn fill_color(
        &mut self,
        foreground: bool,
        element: &BytesStart,
        palette: &Palette,
    ) -> Result<Tag, String> {
        let color = read_color(element, palette)?;
        if let Some(fill) = self.fills.last_mut() {
            if foreground {
                fill.foreground = color;
            } else {
                fill.background = color;
            }
        }
        Ok(Tag::Other)
    }

    /// One side of a border (`<left>`, `<end>`…): its style.
    fn side(&mut self, name: &str, element: &BytesStart) -> Result<Tag, String> {
        let side = match name {
            "left" | "start" => Side::Left,
            "right" | "end" => Side::Right,
            "top" => Side::Top,
            "bottom" => Side::Bottom,
            _ => return Ok(Tag::Other),
        };
        let style = attr(element, "style")?.and_then(|s| known(BORDER_STYLES, s.trim()));
        if let Some(border) = self.border_side(side) {
            *border = Border { style, color: None };
        }
        Ok(Tag::Side(side))
    }

    /// A cell format `<xf>` of `<cellXfs>`: the ids of its parts.
    fn xf(&mut self, element: &BytesStart) -> Result<Tag, String> {
        if self.xfs.len() >= MAX_ENTRIES {
            return Err(format!(
                "styles.xml has more than {MAX_ENTRIES} cell formats"
            ));
        }
        let id = |name| -> Result<Option<usize>, String> {
            Ok(attr(element, name)?.and_then(|id| id.trim().parse().ok()))
        };
        self.xfs.push(RawXf {
            num_fmt_id: attr(element, "numFmtId")?
                .and_then(|id| id.trim().parse().ok())
                .unwrap_or(0),
            font_id: id("fontId")?,
            fill_id: id("fillId")?,
            border_id: id("borderId")?,
            alignment: Alignment::default(),
        });
        Ok(Tag::Xf)
    }

    fn border_side(&mut self, side: Side) -> Option<&mut Border> {
        let borders = self.borders.last_mut()?;
        Some(match side {
            Side::Left => &mut borders.left,
            Side::Right => &mut borders.right,
            Side::Top => &mut borders.top,
            Side::Bottom => &mut borders.bottom,
        })
    }

    /// One [`CellFormat`] per xf, with its ids looked up.
    fn resolve(self) -> Styles {
        let default_font = self.fonts.first().cloned().unwrap_or_default();
        let formats = self
            .xfs
            .iter()
            .map(|xf| CellFormat {
                num_format: self.num_format(xf.num_fmt_id),
                font: match xf.font_id.and_then(|id| self.fonts.get(id)) {
                    Some(font) if *font != default_font => font.clone(),
                    _ => Font::default(),
                },
                fill: xf
                    .fill_id
                    .and_then(|id| self.fills.get(id))
                    .map(visible_fill)
                    .unwrap_or_default(),
                borders: xf
                    .border_id
                    .and_then(|id| self.borders.get(id))
                    .map(visible_borders)
                    .unwrap_or_default(),
                alignment: xf.alignment.clone(),
            })
            .collect();
        Styles {
            formats,
            default_font,
        }
    }

    /// The format code of a number format id; `None` for General and for
    /// ids neither the file nor the built-in table defines.
    fn num_format(&self, id: u32) -> Option<String> {
        let code = match self.num_fmts.get(&id) {
            Some(code) => code.as_str(),
            None => builtin_num_format(id)?,
        };
        (!code.is_empty() && !code.eq_ignore_ascii_case("General")).then(|| code.to_string())
    }
}

fn check_room(len: usize, what: &str) -> Result<(), String> {
    if len >= MAX_ENTRIES {
        return Err(format!("styles.xml has more than {MAX_ENTRIES} {what}"));
    }
    Ok(())
}

/// A fill without a pattern shows nothing, whatever colours it names.
fn visible_fill(fill: &Fill) -> Fill {
    if fill.pattern.is_some() {
        fill.clone()
    } else {
        Fill::default()
    }
}

/// A border side without a style shows nothing, whatever colour it names.
fn visible_borders(borders: &Borders) -> Borders {
    let side = |border: &Border| {
        if border.style.is_some() {
            border.clone()
        } else {
            Border::default()
        }
    };
    Borders {
        left: side(&borders.left),
        right: side(&borders.right),
        top: side(&borders.top),
        bottom: side(&borders.bottom),
    }
}

pub(super) fn read_font_property(
    font: &mut Font,
    property: &str,
    element: &BytesStart,
    palette: &Palette,
) -> Result<(), String> {
    match property {
        "name" => font.name = attr(element, "val")?.map(Cow::into_owned),
        "sz" => {
            font.size = attr(element, "val")?
                .and_then(|size| size.trim().parse::<f64>().ok())
                .filter(|size| size.is_finite() && *size > 0.0);
        }
        "b" => font.bold = flag(element)?,
        "i" => font.italic = flag(element)?,
        "strike" => font.strikethrough = flag(element)?,
        "u" => {
            font.underline = match attr(element, "val")? {
                None => Some("single".to_string()),
                Some(kind) => known(UNDERLINES, kind.trim()),
            };
        }
        "color" => font.color = read_color(element, palette)?,
        "vertAlign" => {
            font.script = attr(element, "val")?.and_then(|v| known(SCRIPTS, v.trim()));
        }
        _ => {}
    }
    Ok(())
}

fn read_alignment(element: &BytesStart) -> Result<Alignment, String> {
    let number = |name| -> Result<Option<u32>, String> {
        Ok(attr(element, name)?.and_then(|n| n.trim().parse().ok()))
    };
    let rotation = number("textRotation")?.unwrap_or(0);
    Ok(Alignment {
        // General and bottom are what an alignment without them means.
        horizontal: attr(element, "horizontal")?
            .and_then(|h| known(HORIZONTAL_ALIGNMENTS, h.trim()))
            .filter(|h| h != "general"),
        vertical: attr(element, "vertical")?
            .and_then(|v| known(VERTICAL_ALIGNMENTS, v.trim()))
            .filter(|v| v != "bottom"),
        wrap: attr(element, "wrapText")?.is_some_and(|v| is_true(&v)),
        shrink: attr(element, "shrinkToFit")?.is_some_and(|v| is_true(&v)),
        indent: number("indent")?.map_or(0, |n| n.min(u32::from(u8::MAX)) as u8),
        rotation: if rotation <= 180 || rotation == 255 {
            rotation as u16
        } else {
            0
        },
    })
}

/// An on/off font element (`<b/>`, `<i val="0"/>`): on unless its `val` is
/// `0` or `false`.
fn flag(element: &BytesStart) -> Result<bool, String> {
    Ok(attr(element, "val")?.is_none_or(|v| !matches!(v.trim(), "0" | "false")))
}

/// `value` as the model keeps it, if `names` lists it.
fn known(names: &[&str], value: &str) -> Option<String> {
    names.contains(&value).then(|| value.to_string())
}

/// A `<color>`-like element: `rgb`, `theme` or `indexed`; `auto` and the
/// system colours are `None`.
pub(super) fn read_color(element: &BytesStart, palette: &Palette) -> Result<Option<Color>, String> {
    if attr(element, "auto")?.is_some_and(|v| is_true(&v)) {
        return Ok(None);
    }
    if let Some(rgb) = attr(element, "rgb")? {
        return Ok(parse_rgb(&rgb).map(Color::Rgb));
    }
    if let Some(theme) = attr(element, "theme")? {
        let tint = attr(element, "tint")?
            .and_then(|t| t.trim().parse::<f64>().ok())
            .filter(|t| t.is_finite())
            .map_or(0, |t| (t.clamp(-1.0, 1.0) * 1000.0).round() as i16);
        return Ok(theme
            .trim()
            .parse()
            .ok()
            .map(|theme| Color::Theme(theme, tint)));
    }
    if let Some(index) = attr(element, "indexed")? {
        return Ok(index
            .trim()
            .parse()
            .ok()
            .and_then(|i| palette.get(i))
            .map(Color::Rgb));
    }
    Ok(None)
}

/// `RRGGBB` or `AARRGGBB` (the alpha is ignored, as Excel does).
fn parse_rgb(text: &str) -> Option<u32> {
    let text = text.trim();
    let hex = match text.len() {
        8 => text.get(2..)?,
        6 => text,
        _ => return None,
    };
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(hex, 16).ok()
}

/// The value of an attribute by local name, entities resolved; a malformed
/// attribute is an error in the styles part's terms.
fn attr<'a>(element: &'a BytesStart, name: &str) -> Result<Option<Cow<'a, str>>, String> {
    xml::attribute(element, name).map_err(xml_error)
}

fn xml_error(error: impl std::fmt::Display) -> String {
    format!("styles.xml is not well-formed: {error}")
}

/// The legacy colour palette: `indexed` colours 0–63, or the file's own
/// `<colors><indexedColors>` when it has one. 64 and 65 (system foreground
/// and background) have no colour.
#[derive(Default)]
pub(super) struct Palette(Option<Vec<u32>>);

impl Palette {
    /// The palette `xml` uses; only files that mention `indexedColors` are
    /// read twice.
    fn of(xml: &[u8]) -> Result<Palette, String> {
        const NEEDLE: &[u8] = b"indexedColors";
        if !xml.windows(NEEDLE.len()).any(|w| w == NEEDLE) {
            return Ok(Palette(None));
        }
        let mut reader = Reader::from_reader(xml);
        let mut colors = Vec::new();
        let mut inside = false;
        loop {
            match reader.read_event().map_err(xml_error)? {
                Event::Start(e) if e.local_name().as_ref() == "indexedColors" => inside = true,
                Event::End(e) if e.local_name().as_ref() == "indexedColors" => inside = false,
                Event::Start(e) | Event::Empty(e)
                    if inside && e.local_name().as_ref() == "rgbColor" =>
                {
                    if colors.len() >= 64 {
                        continue;
                    }
                    let rgb = attr(&e, "rgb")?;
                    colors.push(rgb.and_then(|rgb| parse_rgb(&rgb)).unwrap_or(0));
                }
                Event::Eof => break,
                _ => {}
            }
        }
        Ok(Palette((!colors.is_empty()).then_some(colors)))
    }

    fn get(&self, index: usize) -> Option<u32> {
        let custom = self.0.as_ref().and_then(|colors| colors.get(index));
        custom.or_else(|| LEGACY_PALETTE.get(index)).copied()
    }
}

/// Excel's default `indexed` colours.
#[rustfmt::skip]
const LEGACY_PALETTE: [u32; 64] = [
    0x000000, 0xFFFFFF, 0xFF0000, 0x00FF00, 0x0000FF, 0xFFFF00, 0xFF00FF, 0x00FFFF,
    0x000000, 0xFFFFFF, 0xFF0000, 0x00FF00, 0x0000FF, 0xFFFF00, 0xFF00FF, 0x00FFFF,
    0x800000, 0x008000, 0x000080, 0x808000, 0x800080, 0x008080, 0xC0C0C0, 0x808080,
    0x9999FF, 0x993366, 0xFFFFCC, 0xCCFFFF, 0x660066, 0xFF8080, 0x0066CC, 0xCCCCFF,
    0x000080, 0xFF00FF, 0xFFFF00, 0x00FFFF, 0x800080, 0x800000, 0x008080, 0x0000FF,
    0x00CCFF, 0xCCFFFF, 0xCCFFCC, 0xFFFF99, 0x99CCFF, 0xFF99CC, 0xCC99FF, 0xFFCC99,
    0x3366FF, 0x33CCCC, 0x99CC00, 0xFFCC00, 0xFF9900, 0xFF6600, 0x666699, 0x969696,
    0x003366, 0x339966, 0x003300, 0x333300, 0x993300, 0x993366, 0x333399, 0x333333,
];

/// The built-in number formats a file may use by id alone: en-US where the
/// id is the same in every locale's table or Excel's en-US one; the dates
/// and times of ids 27–36 and 50–58, which exist only in East Asian
/// locales and differ between them, as ECMA-376 (Part 1, 18.8.30) lists
/// them for zh-CN. Readers (calamine among them) take those ids for dates
/// whatever the locale, so a format must show one, or a rewrite would give
/// the cell a date format of its own. Ids 23–26 are not mapped.
fn builtin_num_format(id: u32) -> Option<&'static str> {
    Some(match id {
        1 => "0",
        2 => "0.00",
        3 => "#,##0",
        4 => "#,##0.00",
        5 => "\"$\"#,##0_);(\"$\"#,##0)",
        6 => "\"$\"#,##0_);[Red](\"$\"#,##0)",
        7 => "\"$\"#,##0.00_);(\"$\"#,##0.00)",
        8 => "\"$\"#,##0.00_);[Red](\"$\"#,##0.00)",
        9 => "0%",
        10 => "0.00%",
        11 => "0.00E+00",
        12 => "# ?/?",
        13 => "# ??/??",
        14 => "mm-dd-yy",
        15 => "d-mmm-yy",
        16 => "d-mmm",
        17 => "mmm-yy",
        18 => "h:mm AM/PM",
        19 => "h:mm:ss AM/PM",
        20 => "h:mm",
        21 => "h:mm:ss",
        22 => "m/d/yy h:mm",
        27 | 36 | 50 | 52 | 57 => "yyyy\"年\"m\"月\"",
        28 | 29 | 51 | 53 | 54 | 58 => "m\"月\"d\"日\"",
        30 => "m-d-yy",
        31 => "yyyy\"年\"m\"月\"d\"日\"",
        32 => "h\"时\"mm\"分\"",
        33 => "h\"时\"mm\"分\"ss\"秒\"",
        34 | 55 => "上午/下午h\"时\"mm\"分\"",
        35 | 56 => "上午/下午h\"时\"mm\"分\"ss\"秒\"",
        37 => "#,##0 ;(#,##0)",
        38 => "#,##0 ;[Red](#,##0)",
        // ECMA-376 prints 39 and 40 without the space 37 and 38 have;
        // LibreOffice (the oracle) and Excel show one after positives.
        39 => "#,##0.00 ;(#,##0.00)",
        40 => "#,##0.00 ;[Red](#,##0.00)",
        41 => "_(* #,##0_);_(* \\(#,##0\\);_(* \"-\"_);_(@_)",
        42 => "_(\"$\"* #,##0_);_(\"$\"* \\(#,##0\\);_(\"$\"* \"-\"_);_(@_)",
        43 => "_(* #,##0.00_);_(* \\(#,##0.00\\);_(* \"-\"??_);_(@_)",
        44 => "_(\"$\"* #,##0.00_);_(\"$\"* \\(#,##0.00\\);_(\"$\"* \"-\"??_);_(@_)",
        45 => "mm:ss",
        46 => "[h]:mm:ss",
        // ECMA-376 prints "mmss.0", a typo: Excel shows and writes "mm:ss.0".
        47 => "mm:ss.0",
        48 => "##0.0E+0",
        49 => "@",
        _ => return None,
    })
}

const UNDERLINES: &[&str] = &["single", "double", "singleAccounting", "doubleAccounting"];

/// A font's `vertAlign` values other than the baseline.
const SCRIPTS: &[&str] = &["superscript", "subscript"];

const PATTERNS: &[&str] = &[
    "solid",
    "mediumGray",
    "darkGray",
    "lightGray",
    "darkHorizontal",
    "darkVertical",
    "darkDown",
    "darkUp",
    "darkGrid",
    "darkTrellis",
    "lightHorizontal",
    "lightVertical",
    "lightDown",
    "lightUp",
    "lightGrid",
    "lightTrellis",
    "gray125",
    "gray0625",
];

const BORDER_STYLES: &[&str] = &[
    "thin",
    "medium",
    "dashed",
    "dotted",
    "thick",
    "double",
    "hair",
    "mediumDashed",
    "dashDot",
    "mediumDashDot",
    "dashDotDot",
    "mediumDashDotDot",
    "slantDashDot",
];

const HORIZONTAL_ALIGNMENTS: &[&str] = &[
    "general",
    "left",
    "center",
    "right",
    "fill",
    "justify",
    "centerContinuous",
    "distributed",
];

const VERTICAL_ALIGNMENTS: &[&str] = &["top", "center", "bottom", "justify", "distributed"];

// ---------------------------------------------------------------------------
// Writing

/// The rust_xlsxwriter colour; `None` for theme colours it cannot write
/// (it knows themes 0–9). rust_xlsxwriter writes a theme colour's tint as
/// one of five shades per colour (those of Excel's colour picker), so a
/// tint becomes the nearest of them: the picker's own tints come back
/// exactly, others as the closest shade.
pub(super) fn xlsx_color(color: Color) -> Option<xlsx::Color> {
    match color {
        Color::Rgb(rgb) if rgb <= 0xFF_FFFF => Some(xlsx::Color::RGB(rgb)),
        Color::Theme(theme, tint) if theme <= 9 => {
            Some(xlsx::Color::Theme(theme, shade(theme, tint)))
        }
        _ => None,
    }
}

/// The rust_xlsxwriter shade (0–5) whose tint is nearest `tint`
/// (thousandths). Shade 0 is the colour itself; shades 1–5 have the tints
/// below, by theme colour (rust_xlsxwriter's `Color::attributes`).
fn shade(theme: u8, tint: i16) -> u8 {
    let tints: [i16; 5] = match theme {
        0 => [-50, -150, -250, -350, -500],
        1 => [500, 350, 250, 150, 50],
        2 => [-100, -250, -500, -750, -900],
        _ => [800, 600, 400, -250, -500],
    };
    let mut best = (0u8, tint.unsigned_abs());
    for (shade, candidate) in (1u8..).zip(tints) {
        let distance = (tint - candidate).unsigned_abs();
        if distance < best.1 {
            best = (shade, distance);
        }
    }
    best.0
}

pub(super) fn with_font(mut out: xlsx::Format, font: &Font) -> xlsx::Format {
    if *font == Font::default() {
        return out;
    }
    if let Some(name) = &font.name {
        out = out.set_font_name(name.as_str());
    }
    if let Some(size) = font.size {
        out = out.set_font_size(size);
    }
    if font.bold {
        out = out.set_bold();
    }
    if font.italic {
        out = out.set_italic();
    }
    let underline = match font.underline.as_deref() {
        Some("single") => Some(xlsx::FormatUnderline::Single),
        Some("double") => Some(xlsx::FormatUnderline::Double),
        Some("singleAccounting") => Some(xlsx::FormatUnderline::SingleAccounting),
        Some("doubleAccounting") => Some(xlsx::FormatUnderline::DoubleAccounting),
        _ => None,
    };
    if let Some(underline) = underline {
        out = out.set_underline(underline);
    }
    if font.strikethrough {
        out = out.set_font_strikethrough();
    }
    match font.script.as_deref() {
        Some("superscript") => out = out.set_font_script(xlsx::FormatScript::Superscript),
        Some("subscript") => out = out.set_font_script(xlsx::FormatScript::Subscript),
        _ => {}
    }
    // Automatic writes no <color>, as the font had none; rust_xlsxwriter's
    // default would write theme 1.
    let color = font.color.and_then(xlsx_color);
    out.set_font_color(color.unwrap_or(xlsx::Color::Automatic))
}

fn with_fill(mut out: xlsx::Format, fill: &Fill) -> xlsx::Format {
    let Some(pattern) = fill.pattern.as_deref().and_then(xlsx_pattern) else {
        return out;
    };
    out = out.set_pattern(pattern);
    let foreground = fill.foreground.and_then(xlsx_color);
    let background = fill.background.and_then(xlsx_color);
    if pattern == xlsx::FormatPattern::Solid {
        // A solid fill shows its fgColor. rust_xlsxwriter writes a lone
        // foreground colour as fgColor, but swaps the two colours of a solid
        // fill that has both, so they go in swapped. A lone background is
        // invisible under a solid pattern and is left out.
        match (foreground, background) {
            (Some(fg), Some(bg)) => out.set_foreground_color(bg).set_background_color(fg),
            (Some(fg), None) => out.set_foreground_color(fg),
            _ => out,
        }
    } else {
        if let Some(fg) = foreground {
            out = out.set_foreground_color(fg);
        }
        if let Some(bg) = background {
            out = out.set_background_color(bg);
        }
        out
    }
}

fn xlsx_pattern(name: &str) -> Option<xlsx::FormatPattern> {
    use xlsx::FormatPattern as P;
    Some(match name {
        "solid" => P::Solid,
        "mediumGray" => P::MediumGray,
        "darkGray" => P::DarkGray,
        "lightGray" => P::LightGray,
        "darkHorizontal" => P::DarkHorizontal,
        "darkVertical" => P::DarkVertical,
        "darkDown" => P::DarkDown,
        "darkUp" => P::DarkUp,
        "darkGrid" => P::DarkGrid,
        "darkTrellis" => P::DarkTrellis,
        "lightHorizontal" => P::LightHorizontal,
        "lightVertical" => P::LightVertical,
        "lightDown" => P::LightDown,
        "lightUp" => P::LightUp,
        "lightGrid" => P::LightGrid,
        "lightTrellis" => P::LightTrellis,
        "gray125" => P::Gray125,
        "gray0625" => P::Gray0625,
        _ => return None,
    })
}

fn with_borders(mut out: xlsx::Format, borders: &Borders) -> xlsx::Format {
    type Setter = fn(xlsx::Format, xlsx::FormatBorder) -> xlsx::Format;
    type ColorSetter = fn(xlsx::Format, xlsx::Color) -> xlsx::Format;
    let sides: [(&Border, Setter, ColorSetter); 4] = [
        (
            &borders.left,
            xlsx::Format::set_border_left,
            xlsx::Format::set_border_left_color,
        ),
        (
            &borders.right,
            xlsx::Format::set_border_right,
            xlsx::Format::set_border_right_color,
        ),
        (
            &borders.top,
            xlsx::Format::set_border_top,
            xlsx::Format::set_border_top_color,
        ),
        (
            &borders.bottom,
            xlsx::Format::set_border_bottom,
            xlsx::Format::set_border_bottom_color,
        ),
    ];
    for (border, set_style, set_color) in sides {
        let Some(style) = border.style.as_deref().and_then(xlsx_border) else {
            continue;
        };
        out = set_style(out, style);
        if let Some(color) = border.color.and_then(xlsx_color) {
            out = set_color(out, color);
        }
    }
    out
}

fn xlsx_border(name: &str) -> Option<xlsx::FormatBorder> {
    use xlsx::FormatBorder as B;
    Some(match name {
        "thin" => B::Thin,
        "medium" => B::Medium,
        "dashed" => B::Dashed,
        "dotted" => B::Dotted,
        "thick" => B::Thick,
        "double" => B::Double,
        "hair" => B::Hair,
        "mediumDashed" => B::MediumDashed,
        "dashDot" => B::DashDot,
        "mediumDashDot" => B::MediumDashDot,
        "dashDotDot" => B::DashDotDot,
        "mediumDashDotDot" => B::MediumDashDotDot,
        "slantDashDot" => B::SlantDashDot,
        _ => return None,
    })
}

fn with_alignment(mut out: xlsx::Format, alignment: &Alignment) -> xlsx::Format {
    use xlsx::FormatAlign as A;
    let horizontal = match alignment.horizontal.as_deref() {
        Some("left") => Some(A::Left),
        Some("center") => Some(A::Center),
        Some("right") => Some(A::Right),
        Some("fill") => Some(A::Fill),
        Some("justify") => Some(A::Justify),
        Some("centerContinuous") => Some(A::CenterAcross),
        Some("distributed") => Some(A::Distributed),
        _ => None,
    };
    let vertical = match alignment.vertical.as_deref() {
        Some("top") => Some(A::Top),
        Some("center") => Some(A::VerticalCenter),
        Some("bottom") => Some(A::Bottom),
        Some("justify") => Some(A::VerticalJustify),
        Some("distributed") => Some(A::VerticalDistributed),
        _ => None,
    };
    for align in [horizontal, vertical].into_iter().flatten() {
        out = out.set_align(align);
    }
    if alignment.wrap {
        out = out.set_text_wrap();
    }
    if alignment.shrink {
        out = out.set_shrink();
    }
    if alignment.indent > 0 {
        out = out.set_indent(alignment.indent);
    }
    // rust_xlsxwriter counts -90..=90 and 270 for stacked; xlsx counts
    // 91–180 for -1..-90 and 255 for stacked.
    let rotation = match alignment.rotation {
        r @ 1..=90 => Some(r as i16),
        r @ 91..=180 => Some(90 - r as i16),
        255 => Some(270),
        _ => None,
    };
    if let Some(rotation) = rotation {
        out = out.set_rotation(rotation);
    }
    out
}

#[cfg(test)]
mod tests {
    use std::io::{Cursor, Read};

    use super::*;

    const MAIN_NS: &str = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";

    fn parse(xml: &str) -> Styles {
        parse_styles(xml.as_bytes()).expect("parses")
    }

    fn font(name: &str, size: f64) -> Font {
        Font {
            name: Some(name.into()),
            size: Some(size),
            ..Font::default()
        }
    }

    fn side(style: &str, color: Option<Color>) -> Border {
        Border {
            style: Some(style.into()),
            color,
        }
    }

    /// What LibreOffice Calc writes, trimmed: Arial 10 default font, a
    /// "General" custom number format, family-only font variants, and
    /// an explicit alignment on every xf.
    const LIBREOFFICE: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><numFmts count="3"><numFmt numFmtId="164" formatCode="General"/><numFmt numFmtId="165" formatCode="&quot;€&quot;#,##0.00"/><numFmt numFmtId="166" formatCode="YYYY\-MM\-DD"/></numFmts><fonts count="6"><font><sz val="10"/><name val="Arial"/><family val="2"/></font><font><sz val="10"/><name val="Arial"/><family val="0"/></font><font><sz val="10"/><name val="Arial"/><family val="0"/></font><font><sz val="10"/><name val="Arial"/><family val="0"/></font><font><b val="true"/><i val="false"/><sz val="10"/><color rgb="FFC9211E"/><name val="Arial"/><family val="2"/><charset val="1"/></font><font><u val="double"/><sz val="12"/><name val="Liberation Serif"/><family val="1"/></font></fonts><fills count="3"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill><fill><patternFill patternType="solid"><fgColor rgb="FFFFFF00"/><bgColor indexed="64"/></patternFill></fill></fills><borders count="2"><border diagonalUp="false" diagonalDown="false"><left/><right/><top/><bottom/><diagonal/></border><border diagonalUp="false" diagonalDown="false"><left style="hair"><color rgb="FF000000"/></left><right/><top/><bottom style="double"><color rgb="FF2A6099"/></bottom><diagonal/></border></borders><cellStyleXfs count="2"><xf numFmtId="164" fontId="0" fillId="0" borderId="0" applyFont="true" applyBorder="true" applyAlignment="true" applyProtection="true"><alignment horizontal="general" vertical="bottom" textRotation="0" wrapText="false" indent="0" shrinkToFit="false"/><protection locked="true" hidden="false"/></xf><xf numFmtId="0" fontId="1" fillId="2" borderId="1" applyFont="true" applyBorder="false" applyAlignment="false" applyProtection="false"/></cellStyleXfs><cellXfs count="5"><xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyFont="false" applyBorder="false" applyAlignment="false" applyProtection="false"><alignment horizontal="general" vertical="bottom" textRotation="0" wrapText="false" indent="0" shrinkToFit="false"/><protection locked="true" hidden="false"/></xf><xf numFmtId="165" fontId="2" fillId="0" borderId="0" xfId="0" applyFont="true" applyBorder="false" applyAlignment="false" applyProtection="false"><alignment horizontal="general" vertical="bottom" textRotation="0" wrapText="false" indent="0" shrinkToFit="false"/><protection locked="true" hidden="false"/></xf><xf numFmtId="166" fontId="4" fillId="2" borderId="1" xfId="0" applyFont="true" applyBorder="true" applyAlignment="true" applyProtection="false"><alignment horizontal="center" vertical="center" textRotation="90" wrapText="true" indent="0" shrinkToFit="false"/><protection locked="true" hidden="false"/></xf><xf numFmtId="164" fontId="5" fillId="0" borderId="0" xfId="0" applyFont="false" applyBorder="false" applyAlignment="true" applyProtection="false"><alignment horizontal="left" vertical="top" textRotation="0" wrapText="false" indent="3" shrinkToFit="true"/><protection locked="true" hidden="false"/></xf><xf numFmtId="10" fontId="3" fillId="0" borderId="0" xfId="0" applyFont="false" applyBorder="false" applyAlignment="false" applyProtection="false"/></cellXfs><cellStyles count="1"><cellStyle name="Default" xfId="0" builtinId="0"/></cellStyles><colors><mruColors><color rgb="FFC9211E"/></mruColors></colors></styleSheet>"#;

    #[test]
    fn reads_libreoffice_styles() {
        let styles = parse(LIBREOFFICE);
        assert_eq!(styles.default_font, font("Arial", 10.0));
        let formats = &styles.formats;
        assert_eq!(formats.len(), 5);
        assert_eq!(formats[0], CellFormat::default(), "General, default parts");
        assert_eq!(
            formats[1],
            CellFormat {
                num_format: Some("\"€\"#,##0.00".into()),
                ..CellFormat::default()
            },
            "font 2 differs from font 0 only in family: the default font"
        );
        assert_eq!(
            formats[2],
            CellFormat {
                num_format: Some("YYYY\\-MM\\-DD".into()),
                font: Font {
                    bold: true,
                    color: Some(Color::Rgb(0xC9211E)),
                    ..font("Arial", 10.0)
                },
                fill: Fill {
                    pattern: Some("solid".into()),
                    foreground: Some(Color::Rgb(0xFFFF00)),
                    background: None,
                },
                borders: Borders {
                    left: side("hair", Some(Color::Rgb(0))),
                    bottom: side("double", Some(Color::Rgb(0x2A6099))),
                    ..Borders::default()
                },
                alignment: Alignment {
                    horizontal: Some("center".into()),
                    vertical: Some("center".into()),
                    wrap: true,
                    rotation: 90,
                    ..Alignment::default()
                },
            }
        );
        assert!(formats[2].shows_date());
        assert_eq!(
            formats[3],
            CellFormat {
                font: Font {
                    underline: Some("double".into()),
                    ..font("Liberation Serif", 12.0)
                },
                alignment: Alignment {
                    horizontal: Some("left".into()),
                    vertical: Some("top".into()),
                    shrink: true,
                    indent: 3,
                    ..Alignment::default()
                },
                ..CellFormat::default()
            },
            "applyFont=false does not hide the font"
        );
        assert_eq!(formats[4].num_format.as_deref(), Some("0.00%"));
    }

    /// What openpyxl writes: `<patternFill/>` without a type, colours with a
    /// zero alpha, fonts without a name, `pivotButton`/`quotePrefix` noise.
    const OPENPYXL: &str = r#"<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><numFmts count="1"><numFmt numFmtId="164" formatCode="yyyy-mm-dd h:mm:ss"/></numFmts><fonts count="3"><font><name val="Calibri"/><family val="2"/><color theme="1"/><sz val="11"/><scheme val="minor"/></font><font><b val="1"/><sz val="11"/></font><font><name val="Calibri"/><i val="1"/><strike val="0"/><color rgb="000000FF"/><sz val="9.5"/><u/></font></fonts><fills count="4"><fill><patternFill/></fill><fill><patternFill patternType="gray125"/></fill><fill><patternFill patternType="solid"><fgColor rgb="00FFFF00"/></patternFill></fill><fill><patternFill patternType="lightGrid"><fgColor theme="4"/><bgColor indexed="22"/></patternFill></fill></fills><borders count="2"><border><left/><right/><top/><bottom/><diagonal/></border><border><left style="thin"><color rgb="00000000"/></left><right style="medium"/><top style="dashDotDot"><color theme="5"/></top><bottom style="bogus"><color rgb="00FF0000"/></bottom><diagonal/></border></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs><cellXfs count="6"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" pivotButton="0" quotePrefix="0" xfId="0"/><xf numFmtId="164" fontId="0" fillId="0" borderId="0" applyNumberFormat="1" pivotButton="0" quotePrefix="0" xfId="0"/><xf numFmtId="14" fontId="1" fillId="2" borderId="1" applyNumberFormat="0" applyFont="0" applyFill="0" applyBorder="0" pivotButton="0" quotePrefix="0" xfId="0"/><xf numFmtId="0" fontId="2" fillId="3" borderId="0" pivotButton="0" quotePrefix="0" xfId="0"><alignment horizontal="right" textRotation="255"/></xf><xf numFmtId="77" fontId="0" fillId="0" borderId="0" pivotButton="0" quotePrefix="0" xfId="0"/><xf numFmtId="3"/></cellXfs><cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0" hidden="0"/></cellStyles><tableStyles count="0" defaultTableStyle="TableStyleMedium9" defaultPivotStyle="PivotStyleLight16"/></styleSheet>"#;

    #[test]
    fn reads_openpyxl_styles() {
        let styles = parse(OPENPYXL);
        assert_eq!(
            styles.default_font,
            Font {
                color: Some(Color::Theme(1, 0)),
                ..font("Calibri", 11.0)
            }
        );
        let formats = &styles.formats;
        assert_eq!(formats.len(), 6);
        assert_eq!(formats[0], CellFormat::default());
        assert_eq!(formats[1].num_format.as_deref(), Some("yyyy-mm-dd h:mm:ss"));
        assert_eq!(
            formats[2],
            CellFormat {
                num_format: Some("mm-dd-yy".into()),
                font: Font {
                    bold: true,
                    size: Some(11.0),
                    ..Font::default()
                },
                fill: Fill {
                    pattern: Some("solid".into()),
                    foreground: Some(Color::Rgb(0xFFFF00)),
                    background: None,
                },
                borders: Borders {
                    left: side("thin", Some(Color::Rgb(0))),
                    right: side("medium", None),
                    top: side("dashDotDot", Some(Color::Theme(5, 0))),
                    bottom: Border::default(),
                },
                alignment: Alignment::default(),
            },
            "applyX=0 is ignored; an unknown border style is no border"
        );
        assert_eq!(
            formats[3],
            CellFormat {
                font: Font {
                    italic: true,
                    underline: Some("single".into()),
                    color: Some(Color::Rgb(0x0000FF)),
                    ..font("Calibri", 9.5)
                },
                fill: Fill {
                    pattern: Some("lightGrid".into()),
                    foreground: Some(Color::Theme(4, 0)),
                    background: Some(Color::Rgb(0xC0C0C0)),
                },
                alignment: Alignment {
                    horizontal: Some("right".into()),
                    rotation: 255,
                    ..Alignment::default()
                },
                ..CellFormat::default()
            }
        );
        assert_eq!(
            formats[4],
            CellFormat::default(),
            "unknown id 77 is General"
        );
        assert_eq!(
            formats[5].num_format.as_deref(),
            Some("#,##0"),
            "ids default to 0"
        );
    }

    #[test]
    fn matches_local_names_under_any_prefix() {
        let xml = format!(
            r#"<x:styleSheet xmlns:x="{MAIN_NS}"><x:fonts count="2"><x:font><x:sz val="11"/><x:name val="Aptos"/></x:font><x:font><x:b/><x:sz val="11"/><x:color x:rgb="FF00B050"/><x:name val="Aptos"/></x:font></x:fonts><x:fills count="1"><x:fill><x:patternFill x:patternType="darkUp"/></x:fill></x:fills><x:cellXfs><x:xf numFmtId="2" fontId="1" fillId="0"><x:alignment vertical="justify"/></x:xf></x:cellXfs></x:styleSheet>"#
        );
        let styles = parse(&xml);
        assert_eq!(styles.default_font, font("Aptos", 11.0));
        assert_eq!(
            styles.formats,
            vec![CellFormat {
                num_format: Some("0.00".into()),
                font: Font {
                    bold: true,
                    color: Some(Color::Rgb(0x00B050)),
                    ..font("Aptos", 11.0)
                },
                fill: Fill {
                    pattern: Some("darkUp".into()),
                    ..Fill::default()
                },
                alignment: Alignment {
                    vertical: Some("justify".into()),
                    ..Alignment::default()
                },
                ..CellFormat::default()
            }]
        );
    }

    /// One font per colour element; the formats' font colours in order.
    fn font_colors(colors: &[&str], extra: &str) -> Vec<Option<Color>> {
        let fonts: String = colors
            .iter()
            .map(|color| format!("<font><sz val=\"11\"/>{color}</font>"))
            .collect();
        let xfs: String = (1..=colors.len())
            .map(|id| format!("<xf fontId=\"{id}\"/>"))
            .collect();
        let xml = format!(
            r#"<styleSheet xmlns="{MAIN_NS}"><fonts><font><sz val="99"/></font>{fonts}</fonts><cellXfs>{xfs}</cellXfs>{extra}</styleSheet>"#
        );
        parse(&xml)
            .formats
            .into_iter()
            .map(|format| format.font.color)
            .collect()
    }

    #[test]
    fn resolves_colors() {
        let colors = font_colors(
            &[
                r#"<color indexed="2"/>"#,
                r#"<color indexed="10"/>"#,
                r#"<color indexed="22"/>"#,
                r#"<color indexed="53"/>"#,
                r#"<color indexed="63"/>"#,
                r#"<color indexed="64"/>"#,
                r#"<color indexed="65"/>"#,
                r#"<color indexed="81"/>"#,
                r#"<color auto="1"/>"#,
                r#"<color auto="1" rgb="FF123456"/>"#,
                r#"<color rgb="123456"/>"#,
                r#"<color rgb="FFGG0000"/>"#,
                r#"<color rgb="+FFFFFF"/>"#,
                r#"<color theme="3" tint="0.5"/>"#,
                r#"<color theme="300"/>"#,
                r#"<color/>"#,
            ],
            "",
        );
        assert_eq!(
            colors,
            vec![
                Some(Color::Rgb(0xFF0000)),
                Some(Color::Rgb(0xFF0000)),
                Some(Color::Rgb(0xC0C0C0)),
                Some(Color::Rgb(0xFF6600)),
                Some(Color::Rgb(0x333333)),
                None,
                None,
                None,
                None,
                None,
                Some(Color::Rgb(0x123456)),
                None,
                None,
                Some(Color::Theme(3, 500)),
                None,
                None,
            ]
        );
    }

    #[test]
    fn a_custom_palette_replaces_the_legacy_one() {
        let palette = r#"<colors><indexedColors><rgbColor rgb="FF010203"/><rgbColor rgb="FF040506"/></indexedColors></colors>"#;
        let colors = font_colors(
            &[
                r#"<color indexed="1"/>"#,
                r#"<color indexed="10"/>"#,
                r#"<color indexed="64"/>"#,
            ],
            palette,
        );
        assert_eq!(
            colors,
            vec![Some(Color::Rgb(0x040506)), Some(Color::Rgb(0xFF0000)), None]
        );
    }

    #[test]
    fn maps_builtin_number_formats() {
        let cases = [
            (0, None),
            (1, Some("0")),
            (2, Some("0.00")),
            (3, Some("#,##0")),
            (4, Some("#,##0.00")),
            (9, Some("0%")),
            (10, Some("0.00%")),
            (11, Some("0.00E+00")),
            (12, Some("# ?/?")),
            (13, Some("# ??/??")),
            (14, Some("mm-dd-yy")),
            (15, Some("d-mmm-yy")),
            (16, Some("d-mmm")),
            (17, Some("mmm-yy")),
            (18, Some("h:mm AM/PM")),
            (19, Some("h:mm:ss AM/PM")),
            (20, Some("h:mm")),
            (21, Some("h:mm:ss")),
            (22, Some("m/d/yy h:mm")),
            (37, Some("#,##0 ;(#,##0)")),
            (40, Some("#,##0.00 ;[Red](#,##0.00)")),
            (45, Some("mm:ss")),
            (46, Some("[h]:mm:ss")),
            (47, Some("mm:ss.0")),
            (48, Some("##0.0E+0")),
            (49, Some("@")),
            (30, Some("m-d-yy")),
            (31, Some("yyyy\"年\"m\"月\"d\"日\"")),
            (23, None),
            (59, None),
            (163, None),
        ];
        let xfs: String = cases
            .iter()
            .map(|(id, _)| format!("<xf numFmtId=\"{id}\"/>"))
            .collect();
        let xml = format!(r#"<styleSheet xmlns="{MAIN_NS}"><cellXfs>{xfs}</cellXfs></styleSheet>"#);
        let formats = parse(&xml).formats;
        for ((id, code), format) in cases.iter().zip(&formats) {
            assert_eq!(format.num_format.as_deref(), *code, "id {id}");
        }
        // Every id calamine reads as a date shows one.
        for id in (14..=22).chain(27..=36).chain(45..=47).chain(50..=58) {
            let code = builtin_num_format(id).expect("mapped");
            assert!(crate::model::format::is_date_format(code), "{id}");
        }
    }

    #[test]
    fn custom_number_formats_override_builtin_ids() {
        let xml = format!(
            r#"<styleSheet xmlns="{MAIN_NS}"><numFmts><numFmt numFmtId="2" formatCode="0.000"/><numFmt numFmtId="abc" formatCode="x"/><numFmt numFmtId="170"/></numFmts><cellXfs><xf numFmtId="2"/><xf numFmtId="170"/><xf numFmtId="-1"/></cellXfs></styleSheet>"#
        );
        let codes: Vec<_> = parse(&xml)
            .formats
            .into_iter()
            .map(|f| f.num_format)
            .collect();
        assert_eq!(codes, vec![Some("0.000".to_string()), None, None]);
    }

    #[test]
    fn ignores_gradient_fills_and_reads_start_end_borders() {
        let xml = format!(
            r#"<styleSheet xmlns="{MAIN_NS}"><fills><fill><gradientFill degree="90"><stop position="0"><color theme="0"/></stop></gradientFill></fill><fill><patternFill patternType="none"><fgColor rgb="FFFF0000"/></patternFill></fill></fills><borders><border><start style="medium"><color indexed="12"/></start><end style="dotted"/><top><color rgb="FF00FF00"/></top><bottom/><diagonal style="thick"/></border></borders><cellXfs><xf fillId="0" borderId="0"/><xf fillId="1"/></cellXfs></styleSheet>"#
        );
        let formats = parse(&xml).formats;
        assert_eq!(formats[0].fill, Fill::default());
        assert_eq!(
            formats[1].fill,
            Fill::default(),
            "colours without a pattern"
        );
        assert_eq!(
            formats[0].borders,
            Borders {
                left: side("medium", Some(Color::Rgb(0x0000FF))),
                right: side("dotted", None),
                ..Borders::default()
            },
            "a colour without a style is no border"
        );
    }

    #[test]
    fn out_of_range_ids_give_default_parts() {
        let xml = format!(
            r#"<styleSheet xmlns="{MAIN_NS}"><fonts><font><sz val="10"/></font></fonts><cellXfs><xf numFmtId="999999999999" fontId="7" fillId="99999999999999999999999" borderId="-3"><alignment indent="9999" textRotation="200" horizontal="sideways"/></xf></cellXfs></styleSheet>"#
        );
        let styles = parse(&xml);
        assert_eq!(styles.formats[0].font, Font::default());
        assert_eq!(
            styles.formats[0],
            CellFormat {
                alignment: Alignment {
                    indent: 255,
                    ..Alignment::default()
                },
                ..CellFormat::default()
            }
        );
    }

    #[test]
    fn empty_and_minimal_inputs() {
        let styles = parse(&format!(r#"<styleSheet xmlns="{MAIN_NS}"/>"#));
        assert_eq!(styles, Styles::default());
        assert_eq!(parse("").formats, Vec::new());
    }

    #[test]
    fn malformed_xml_is_an_error() {
        for xml in [
            "<styleSheet><fonts></styleSheet>",
            "<styleSheet><cellXfs><xf/>",
            "<styleSheet><cellXfs><xf fontId=\"1/></cellXfs></styleSheet>",
            "<styleSheet><cellXfs><xf fontId=1/></cellXfs></styleSheet>",
            "</styleSheet>",
            "<styleSheet><fonts><font><name val=\"&bogus;\"/></font></fonts></styleSheet>",
        ] {
            assert!(parse_styles(xml.as_bytes()).is_err(), "{xml}");
        }
        let garbage: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
        let _ = parse_styles(&garbage);
    }

    #[test]
    fn bounds_the_number_of_formats() {
        let xml = |n: usize| {
            format!(
                r#"<styleSheet><cellXfs>{}</cellXfs></styleSheet>"#,
                "<xf/>".repeat(n)
            )
        };
        assert_eq!(parse(&xml(MAX_ENTRIES)).formats.len(), MAX_ENTRIES);
        let error = parse_styles(xml(MAX_ENTRIES + 1).as_bytes()).unwrap_err();
        assert!(error.contains("65536"), "{error}");
    }

    #[test]
    fn converts_to_rust_xlsxwriter_formats() {
        let format = |alignment: Alignment| {
            to_format(&CellFormat {
                alignment,
                ..CellFormat::default()
            })
        };
        let rotated = |rotation| {
            format(Alignment {
                rotation,
                ..Alignment::default()
            })
        };
        assert_eq!(rotated(45), xlsx::Format::new().set_rotation(45));
        assert_eq!(rotated(135), xlsx::Format::new().set_rotation(-45));
        assert_eq!(rotated(180), xlsx::Format::new().set_rotation(-90));
        assert_eq!(rotated(255), xlsx::Format::new().set_rotation(270));
        assert_eq!(rotated(200), xlsx::Format::new());
        assert_eq!(to_format(&CellFormat::default()), xlsx::Format::new());
        let themed = to_format(&CellFormat {
            font: Font {
                color: Some(Color::Theme(11, 0)),
                ..font("Arial", 10.0)
            },
            ..CellFormat::default()
        });
        assert_eq!(
            themed,
            xlsx::Format::new()
                .set_font_name("Arial")
                .set_font_size(10)
                .set_font_color(xlsx::Color::Automatic),
            "themes past 9 are not writable"
        );
    }

    /// Source formats for the round trip: xf `i` (from 1) is case `i`.
    const ROUND_TRIP: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">
  <numFmts count="1"><numFmt numFmtId="164" formatCode="&quot;$&quot;#,##0.00;[Red]\-&quot;$&quot;#,##0.00"/></numFmts>
  <fonts count="5">
    <font><sz val="11"/><color theme="1"/><name val="Calibri"/><family val="2"/><scheme val="minor"/></font>
    <font><b/><i/><sz val="11"/><color rgb="FFFF0000"/><name val="Calibri"/><family val="2"/><scheme val="minor"/></font>
    <font><sz val="14"/><name val="Courier New"/><family val="3"/></font>
    <font><u/><sz val="11"/><color theme="1"/><name val="Calibri"/><family val="2"/><scheme val="minor"/></font>
    <font><strike/><sz val="11"/><color theme="1"/><name val="Calibri"/><family val="2"/><scheme val="minor"/></font>
  </fonts>
  <fills count="5">
    <fill><patternFill patternType="none"/></fill>
    <fill><patternFill patternType="gray125"/></fill>
    <fill><patternFill patternType="solid"><fgColor rgb="FFFFFF00"/><bgColor indexed="64"/></patternFill></fill>
    <fill><patternFill patternType="solid"><fgColor theme="4"/><bgColor rgb="FFFF0000"/></patternFill></fill>
    <fill><patternFill patternType="darkTrellis"><fgColor rgb="FF00FF00"/><bgColor rgb="FF0000FF"/></patternFill></fill>
  </fills>
  <borders count="4">
    <border><left/><right/><top/><bottom/><diagonal/></border>
    <border><left/><right/><top/><bottom style="thin"><color indexed="64"/></bottom><diagonal/></border>
    <border><left style="thick"><color rgb="FF0000FF"/></left><right style="thick"><color rgb="FF0000FF"/></right><top style="thick"><color rgb="FF0000FF"/></top><bottom style="thick"><color rgb="FF0000FF"/></bottom><diagonal/></border>
    <border><left style="dashed"><color auto="1"/></left><right/><top/><bottom/><diagonal/></border>
  </borders>
  <cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>
  <cellXfs count="18">
    <xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>
    <xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>
    <xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/>
    <xf numFmtId="0" fontId="2" fillId="0" borderId="0" xfId="0" applyFont="1"/>
    <xf numFmtId="0" fontId="3" fillId="0" borderId="0" xfId="0" applyFont="1"/>
    <xf numFmtId="0" fontId="4" fillId="0" borderId="0" xfId="0" applyFont="1"/>
    <xf numFmtId="0" fontId="0" fillId="2" borderId="0" xfId="0" applyFill="1"/>
    <xf numFmtId="0" fontId="0" fillId="0" borderId="1" xfId="0" applyBorder="1"/>
    <xf numFmtId="0" fontId="0" fillId="0" borderId="2" xfId="0" applyBorder="1"/>
    <xf numFmtId="0" fontId="0" fillId="0" borderId="3" xfId="0" applyBorder="1"/>
    <xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0" applyAlignment="1"><alignment wrapText="1"/></xf>
    <xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0" applyAlignment="1"><alignment horizontal="center"/></xf>
    <xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0" applyAlignment="1"><alignment horizontal="right" vertical="top"/></xf>
    <xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0" applyAlignment="1"><alignment horizontal="left" indent="2"/></xf>
    <xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0" applyAlignment="1"><alignment textRotation="45"/></xf>
    <xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0" applyAlignment="1"><alignment textRotation="135"/></xf>
    <xf numFmtId="0" fontId="0" fillId="3" borderId="0" xfId="0" applyFill="1"/>
    <xf numFmtId="0" fontId="0" fillId="4" borderId="0" xfId="0" applyFill="1"/>
  </cellXfs>
  <cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>
</styleSheet>"#;

    fn read_part(zip: &mut zip::ZipArchive<Cursor<Vec<u8>>>, name: &str) -> Vec<u8> {
        let mut bytes = Vec::new();
        zip.by_name(name)
            .expect("part exists")
            .read_to_end(&mut bytes)
            .expect("part reads");
        bytes
    }

    /// The `s` attribute of every `<c>` in a worksheet, in document order.
    fn cell_style_ids(sheet: &[u8]) -> Vec<usize> {
        let mut reader = Reader::from_reader(sheet);
        let mut ids = Vec::new();
        loop {
            match reader.read_event().expect("sheet parses") {
                Event::Start(e) | Event::Empty(e) if e.local_name().as_ref() == "c" => {
                    let s = attr(&e, "s").expect("attributes parse");
                    ids.push(s.map_or(0, |s| s.parse().expect("numeric s")));
                }
                Event::Eof => return ids,
                _ => {}
            }
        }
    }

    #[test]
    fn formats_survive_a_rust_xlsxwriter_round_trip() {
        let source = parse(ROUND_TRIP).formats;
        assert_eq!(source.len(), 18);
        assert_eq!(source[0], CellFormat::default());
        for (i, format) in source.iter().enumerate().skip(1) {
            assert_ne!(
                *format,
                CellFormat::default(),
                "case {i} parses to something"
            );
            assert!(!source[..i].contains(format), "case {i} is distinct");
        }
        assert_eq!(source[6].fill.foreground, Some(Color::Rgb(0xFFFF00)));
        assert_eq!(source[15].alignment.rotation, 135);

        let mut workbook = xlsx::Workbook::new();
        let sheet = workbook.add_worksheet();
        for (row, format) in source.iter().enumerate() {
            sheet
                .write_string_with_format(row as u32, 0, "x", &to_format(format))
                .expect("cell writes");
        }
        let bytes = workbook.save_to_buffer().expect("workbook saves");
        let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).expect("zip opens");
        let written = parse_styles(&read_part(&mut zip, "xl/styles.xml")).expect("parses");
        let ids = cell_style_ids(&read_part(&mut zip, "xl/worksheets/sheet1.xml"));
        assert_eq!(ids.len(), source.len());
        for (i, (format, id)) in source.iter().zip(ids).enumerate() {
            assert_eq!(written.formats.get(id), Some(format), "case {i}");
        }
    }
}
