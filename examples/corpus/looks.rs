//! What a person sees of every cell, before and after a write (issue 26).
//!
//! [`Looks::read`] resolves, for every cell of every worksheet, its style
//! (font, fill, border, number format, alignment, protection), its constant
//! or formula text and its rich-text runs, and every row's and column's own
//! format. It reads `styles.xml`, the shared strings and the sheet XML
//! itself (with the zip and XML helpers of `features.rs`), nothing of
//! sheetd's reader: the measure shares no code with what it measures.
//! [`compare`] tells, per [`Class`], what a write kept and lost, leaving
//! out the cells the write set; [`Summary`] adds the verdicts of a corpus
//! up and prints them.
//!
//! Resolution: a cell takes `cellXfs[s]`, `s` being 0 when it has none (as
//! ECMA-376 and Excel read it: writers such as XlsxWriter copy the row's or
//! column's format into every cell for that reason); a place with no cell
//! at all shows its row's format (`<row s customFormat="1">`), else its
//! column's (`<col style>`), else `cellXfs[0]`. The cell style an
//! xf derives from (`xfId`) and the `apply…` flags are not followed: what
//! the xf names is what the cell shows. Each component is compared as a
//! canonical text ([`canonical_font`] and its kin): children as a sorted
//! set, attributes sorted, defaults (`<b val="1"/>`, `<u val="single"/>`,
//! `vertAlign="baseline"`, `horizontal="general"`…) dropped, numbers and
//! colours normalized; a number format is compared by its code, built-in
//! ids resolved to theirs.
//!
//! Contents: a constant is its type (number, text, boolean, error, date)
//! and its text as the XML has it (`_xHHHH_` escapes and spaces included;
//! text with leading or trailing spaces also says whether it keeps them
//! with `xml:space="preserve"`); numbers compare by value (`1.10` is
//! `1.1`). A formula is its `<f>` text (a shared formula's, moved to the
//! cell) with `t="array"`, its range and whether it is a dynamic array
//! (the cell's `cm`); its cached result is not compared
//! (recalculation may change it), but a constant that becomes a formula,
//! or is lost, counts. The cells an array formula fills are results, not
//! constants.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::Path;

use quick_xml::events::Event;
use quick_xml::name::QName;
use quick_xml::reader::Reader;

use crate::features::{self, Element, Package};

/// Examples kept per class and file.
const EXAMPLES_PER_FILE: usize = 2;
/// An example's before and after are cut to this many characters.
const MAX_SHOWN_CHARS: usize = 70;
/// The last column of a sheet (XFD).
const LAST_COLUMN: u32 = 16_384;

/// What a write can lose, as a person would notice it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    RowColFormats,
    Fonts,
    Protection,
    NumberFormats,
    Borders,
    Alignment,
    Fills,
    RichText,
    Values,
    FormulaText,
    /// A formula's cached text result with leading or trailing spaces,
    /// written without `xml:space="preserve"`: apps show it trimmed.
    CachedTextSpaces,
    /// A font's link to the theme's fonts (`<scheme val="minor"/>`):
    /// not seen until the theme changes.
    FontSchemes,
}

impl Class {
    const ALL: [Class; 12] = [
        Class::RowColFormats,
        Class::Fonts,
        Class::Protection,
        Class::NumberFormats,
        Class::Borders,
        Class::Alignment,
        Class::Fills,
        Class::RichText,
        Class::Values,
        Class::FormulaText,
        Class::CachedTextSpaces,
        Class::FontSchemes,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Class::RowColFormats => "row/col formats",
            Class::Fonts => "cell fonts",
            Class::Protection => "protection",
            Class::NumberFormats => "number formats",
            Class::Borders => "borders",
            Class::Alignment => "alignment",
            Class::Fills => "fills",
            Class::RichText => "rich text",
            Class::Values => "values",
            Class::FormulaText => "formula text",
            Class::CachedTextSpaces => "cached text spaces",
            Class::FontSchemes => "font theme links",
        }
    }
}

// ---------------------------------------------------------------------------
// What a workbook looks like

/// Every cell, row and column of every worksheet, resolved.
#[derive(Debug, Default)]
pub struct Looks {
    /// `docProps/app.xml`'s producer, bucketed ([`producer`]).
    pub producer: String,
    /// The resolved `cellXfs`, by index.
    styles: Vec<Style>,
    /// By sheet name.
    sheets: BTreeMap<String, SheetLooks>,
}

/// The components of a resolved xf, each a canonical text.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Style {
    font: String,
    /// The font's link to the theme's fonts ([`font_scheme`]).
    font_scheme: String,
    fill: String,
    border: String,
    number_format: String,
    alignment: String,
    protection: String,
}

/// One worksheet: cells by (row, column), both from 1; rows' and
/// columns' own formats as xf indexes.
#[derive(Debug, Default)]
struct SheetLooks {
    cells: BTreeMap<(u32, u32), CellLook>,
    rows: BTreeMap<u32, u32>,
    columns: BTreeMap<u32, u32>,
}

#[derive(Debug, Default)]
struct CellLook {
    /// Its `s`, when it has one.
    xf: Option<u32>,
    content: Content,
}

#[derive(Debug, Default, Clone, PartialEq)]
enum Content {
    #[default]
    Empty,
    Constant(Constant),
    Formula(Formula),
    /// A value an array formula or data table of another cell fills in.
    Result,
}

#[derive(Debug, Clone, PartialEq)]
struct Constant {
    kind: Kind,
    text: String,
    /// Leading or trailing spaces without `xml:space="preserve"`.
    bare_spaces: bool,
    /// The runs of a rich string: text and canonical run properties.
    runs: Option<Vec<(String, String)>>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Number,
    Text,
    Boolean,
    Error,
    Date,
}

#[derive(Debug, Clone, PartialEq)]
struct Formula {
    /// The `<f>` text, a shared formula's moved to this cell.
    text: String,
    /// `array A1:B2`, `array A1:B2 dynamic` or `dataTable …`; empty for a
    /// plain formula.
    kind: String,
    /// A cached text result with leading or trailing spaces, and whether
    /// `xml:space="preserve"` keeps them.
    spaced_result: Option<(String, bool)>,
}

impl Looks {
    /// Resolves what a person sees of the package `xlsx`; an error when it
    /// is not a zip or has no readable workbook part.
    pub fn read(xlsx: &[u8]) -> Result<Looks, String> {
        let mut package = Package::open(xlsx)?;
        let root_relationships = package.relationships("");
        let workbook_part = features::related_part(&root_relationships, "officeDocument")
            .unwrap_or("xl/workbook.xml")
            .to_owned();
        let workbook = package.xml(&workbook_part)?;
        let relationships = package.relationships(&workbook_part);
        let style_sheet = features::related_part(&relationships, "styles")
            .and_then(|part| package.xml(part).ok());
        let theme =
            features::related_part(&relationships, "theme").and_then(|part| package.xml(part).ok());
        let context = Context::read(style_sheet.as_ref(), theme.as_ref());
        let styles = style_sheet
            .map(|sheet| resolve_styles(&sheet, &context))
            .unwrap_or_default();
        let strings = features::related_part(&relationships, "sharedStrings")
            .and_then(|part| package.bytes(part).ok())
            .map(|bytes| shared_strings(&bytes, &context))
            .unwrap_or_default();
        let mut sheets = BTreeMap::new();
        for sheet in workbook
            .child("sheets")
            .into_iter()
            .flat_map(Element::elements)
        {
            let relationship = sheet
                .relationship_attr("id")
                .and_then(|id| relationships.iter().find(|r| r.id == id))
                .filter(|r| r.kind == "worksheet");
            let (Some(name), Some(part)) =
                (sheet.attr("name"), relationship.and_then(|r| r.part()))
            else {
                continue;
            };
            if let Ok(bytes) = package.bytes(part) {
                sheets.insert(name.to_owned(), sheet_looks(&bytes, &strings, &context));
            }
        }
        let producer = producer(&mut package, &root_relationships);
        Ok(Looks {
            producer,
            styles,
            sheets,
        })
    }

    /// The style of xf `index`, `None` when there is no such xf.
    fn style(&self, index: u32) -> Option<&Style> {
        self.styles.get(index as usize)
    }
}

/// `docProps/app.xml`'s `Application`, in a few buckets: `Excel` (with an
/// `AppVersion`, as Excel writes), `Excel-named, no AppVersion` (libraries
/// that call themselves Microsoft Excel), `LibreOffice`, `none`, `other`.
fn producer(package: &mut Package, root_relationships: &[features::Relationship]) -> String {
    let part = features::related_part(root_relationships, "extended-properties")
        .unwrap_or("docprops/app.xml")
        .to_owned();
    let Ok(properties) = package.xml(&part) else {
        return "none".to_owned();
    };
    let application = properties
        .child("Application")
        .map(Element::text)
        .unwrap_or_default();
    let versioned = properties.child("AppVersion").is_some();
    match application.trim() {
        "" => "none",
        app if app.contains("LibreOffice") => "LibreOffice",
        app if app.starts_with("Microsoft") && app.contains("Excel") && versioned => "Excel",
        app if app.starts_with("Microsoft") && app.contains("Excel") => {
            "Excel-named, no AppVersion"
        }
        _ => "other",
    }
    .to_owned()
}

// ---------------------------------------------------------------------------
// Styles

/// What a workbook's fonts and colours resolve against.
struct Context {
    /// The indexed colours: the workbook's own `indexedColors`, else the
    /// default palette.
    palette: Vec<String>,
    /// The theme's minor and major typefaces, for `<scheme val="minor"/>`.
    minor_font: Option<String>,
    major_font: Option<String>,
}

impl Context {
    fn read(style_sheet: Option<&Element>, theme: Option<&Element>) -> Context {
        let own: Vec<String> = style_sheet
            .and_then(|s| s.child("colors"))
            .and_then(|c| c.child("indexedColors"))
            .into_iter()
            .flat_map(Element::elements)
            .map(|c| rgb(c.attr("rgb").unwrap_or_default()))
            .collect();
        let palette = if own.is_empty() {
            DEFAULT_PALETTE.iter().map(|c| (*c).to_owned()).collect()
        } else {
            own
        };
        let typeface = |which: &str| {
            theme?
                .child("themeElements")?
                .child("fontScheme")?
                .child(which)?
                .child("latin")?
                .attr("typeface")
                .map(str::to_owned)
        };
        Context {
            palette,
            minor_font: typeface("minorFont"),
            major_font: typeface("majorFont"),
        }
    }

    /// The typeface a font `scheme` stands for.
    fn scheme_font(&self, scheme: &str) -> Option<&str> {
        match scheme {
            "minor" => self.minor_font.as_deref(),
            "major" => self.major_font.as_deref(),
            _ => None,
        }
    }

    /// A colour element (`color`, `fgColor`…) as what it shows: `auto`,
    /// an `rgb` of six digits (an indexed colour looked up; 64, the system
    /// foreground, is `auto`), or a theme colour; a tint to three decimals.
    fn color(&self, color: &Element) -> String {
        let mut shown = if features::is_true(color.attr("auto")) {
            "auto".to_owned()
        } else if let Some(index) = number(color.attr("indexed")) {
            match index {
                64 => "auto".to_owned(),
                65 => "system background".to_owned(),
                _ => self
                    .palette
                    .get(index as usize)
                    .map_or_else(|| format!("indexed={index}"), |rgb| format!("rgb={rgb}")),
            }
        } else if let Some(value) = color.attr("rgb") {
            format!("rgb={}", rgb(value))
        } else if let Some(theme) = color.attr("theme") {
            format!("theme={}", theme.trim())
        } else {
            "auto".to_owned()
        };
        let tint = color
            .attr("tint")
            .and_then(|t| t.trim().parse::<f64>().ok());
        if let Some(tint) = tint.filter(|t| t.abs() >= 0.0005) {
            let _ = write!(shown, ",tint={tint:.3}");
        }
        format!("{}({shown})", color.name)
    }
}

/// An `rgb` value as six upper-case digits (the alpha is not shown).
fn rgb(value: &str) -> String {
    let value = value.trim().to_uppercase();
    let skip = value.len().saturating_sub(6);
    value[skip..].to_owned()
}

/// The default indexed colours 0–63 (ECMA-376, 18.8.27).
const DEFAULT_PALETTE: [&str; 64] = [
    "000000", "FFFFFF", "FF0000", "00FF00", "0000FF", "FFFF00", "FF00FF", "00FFFF", "000000",
    "FFFFFF", "FF0000", "00FF00", "0000FF", "FFFF00", "FF00FF", "00FFFF", "800000", "008000",
    "000080", "808000", "800080", "008080", "C0C0C0", "808080", "9999FF", "993366", "FFFFCC",
    "CCFFFF", "660066", "FF8080", "0066CC", "CCCCFF", "000080", "FF00FF", "FFFF00", "00FFFF",
    "800080", "800000", "008080", "0000FF", "00CCFF", "CCFFFF", "CCFFCC", "FFFF99", "99CCFF",
    "FF99CC", "CC99FF", "FFCC99", "3366FF", "33CCCC", "99CC00", "FFCC00", "FF9900", "FF6600",
    "666699", "969696", "003366", "339966", "003300", "333300", "993300", "993366", "333399",
    "333333",
];

/// Whether an element is a colour (`color`, `fgColor`, `bgColor`).
fn is_color(element: &Element) -> bool {
    matches!(element.name.as_str(), "color" | "fgColor" | "bgColor")
}

/// The resolved `cellXfs` of a `styleSheet`.
fn resolve_styles(sheet: &Element, context: &Context) -> Vec<Style> {
    let list = |name: &str, item: &str| -> Vec<&Element> {
        sheet
            .child(name)
            .into_iter()
            .flat_map(Element::elements)
            .filter(|e| e.name == item)
            .collect()
    };
    let formats: HashMap<u32, String> = list("numFmts", "numFmt")
        .into_iter()
        .filter_map(|f| {
            Some((
                number(f.attr("numFmtId"))?,
                f.attr("formatCode")?.to_owned(),
            ))
        })
        .collect();
    let font_elements = list("fonts", "font");
    let fonts: Vec<String> = font_elements
        .iter()
        .map(|font| canonical_font(font, context))
        .collect();
    let schemes: Vec<String> = font_elements.iter().map(|f| font_scheme(f)).collect();
    let fills: Vec<String> = list("fills", "fill")
        .into_iter()
        .map(|fill| canonical_fill(fill, context))
        .collect();
    let borders: Vec<String> = list("borders", "border")
        .into_iter()
        .map(|border| canonical_border(border, context))
        .collect();
    let pick = |list: &[String], what: &str, index: Option<u32>| {
        let index = index.unwrap_or(0);
        list.get(index as usize)
            .cloned()
            .unwrap_or_else(|| format!("(no {what} {index})"))
    };
    list("cellXfs", "xf")
        .into_iter()
        .map(|xf| Style {
            font: pick(&fonts, "font", number(xf.attr("fontId"))),
            font_scheme: pick(&schemes, "font", number(xf.attr("fontId"))),
            fill: pick(&fills, "fill", number(xf.attr("fillId"))),
            border: pick(&borders, "border", number(xf.attr("borderId"))),
            number_format: number_format(&formats, number(xf.attr("numFmtId")).unwrap_or(0)),
            alignment: canonical_alignment(xf.child("alignment")),
            protection: canonical_protection(xf.child("protection")),
        })
        .collect()
}

/// An unsigned number attribute.
fn number(value: Option<&str>) -> Option<u32> {
    value?.trim().parse().ok()
}

/// The code of number format `id`: the workbook's own (unless empty),
/// else the built-in one, else `built-in N` (ids Excel resolves by
/// locale); `General` in any case is `General`.
fn number_format(custom: &HashMap<u32, String>, id: u32) -> String {
    let code = match custom.get(&id).filter(|code| !code.is_empty()) {
        Some(code) => code.clone(),
        None => built_in_format(id).map_or_else(|| undefined_format(id), str::to_owned),
    };
    if code.eq_ignore_ascii_case("general") {
        return "General".to_owned();
    }
    code
}

/// What an id without a code shows: `built-in N` for the ids Excel
/// resolves by locale (23–36, 50–81), else `General`.
fn undefined_format(id: u32) -> String {
    if (23..=36).contains(&id) || (50..=81).contains(&id) {
        format!("built-in {id}")
    } else {
        "General".to_owned()
    }
}

/// The built-in number formats of ECMA-376 (18.8.30) with Excel's en-US
/// codes for the currency ids 5–8 and the accounting ids 41–44.
fn built_in_format(id: u32) -> Option<&'static str> {
    Some(match id {
        0 => "General",
        1 => "0",
        2 => "0.00",
        3 => "#,##0",
        4 => "#,##0.00",
        5 => "$#,##0_);($#,##0)",
        6 => "$#,##0_);[Red]($#,##0)",
        7 => "$#,##0.00_);($#,##0.00)",
        8 => "$#,##0.00_);[Red]($#,##0.00)",
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
        37 => "#,##0 ;(#,##0)",
        38 => "#,##0 ;[Red](#,##0)",
        39 => "#,##0.00;(#,##0.00)",
        40 => "#,##0.00;[Red](#,##0.00)",
        41 => r#"_(* #,##0_);_(* \(#,##0\);_(* "-"_);_(@_)"#,
        42 => r#"_("$"* #,##0_);_("$"* \(#,##0\);_("$"* "-"_);_(@_)"#,
        43 => r#"_(* #,##0.00_);_(* \(#,##0.00\);_(* "-"??_);_(@_)"#,
        44 => r#"_("$"* #,##0.00_);_("$"* \(#,##0.00\);_("$"* "-"??_);_(@_)"#,
        45 => "mm:ss",
        46 => "[h]:mm:ss",
        // ECMA-376 says `mmss.0`; Excel shows and writes `mm:ss.0`.
        47 => "mm:ss.0",
        48 => "##0.0E+0",
        49 => "@",
        _ => return None,
    })
}

/// A font (or a run's `rPr`): its properties as a sorted set, each
/// [canonical](canonical_property), those equal to their absence left out,
/// and the hints that do not change what shows (`family`, `charset`: used
/// only when the named font is missing) left out. A font of the theme's
/// `scheme` shows the theme's typeface: that is its `name`, and the link
/// itself is compared apart ([`font_scheme`]).
fn canonical_font(font: &Element, context: &Context) -> String {
    let themed = context.scheme_font(&font_scheme(font)).map(str::to_owned);
    let mut properties: BTreeSet<String> = font
        .elements()
        .filter(|p| !matches!(p.name.as_str(), "family" | "charset" | "scheme"))
        .filter(|p| themed.is_none() || !matches!(p.name.as_str(), "name" | "rFont"))
        .filter_map(|p| canonical_property(p, context))
        .collect();
    if let Some(typeface) = themed {
        properties.insert(format!("name={typeface}"));
    }
    if properties.is_empty() {
        return "(default)".to_owned();
    }
    properties.into_iter().collect::<Vec<_>>().join(" ")
}

/// A font's link to the theme's fonts: `minor`, `major` or empty.
fn font_scheme(font: &Element) -> String {
    match font
        .child("scheme")
        .and_then(|s| s.attr("val"))
        .map(str::trim)
    {
        Some(scheme @ ("minor" | "major")) => scheme.to_owned(),
        _ => String::new(),
    }
}

/// One property element: `name=val` when it has only a `val`, else
/// `name(attr=value,…)`; `None` when it says what its absence says
/// (`<b val="0"/>`, `<u val="none"/>`, `<vertAlign val="baseline"/>`).
/// `rFont` reads as `name`, so a run's font compares with a cell's; a
/// colour is [what it shows](Context::color).
fn canonical_property(property: &Element, context: &Context) -> Option<String> {
    if is_color(property) {
        return Some(context.color(property));
    }
    let name = match property.name.as_str() {
        "rFont" => "name",
        name => name,
    };
    let attributes = canonical_attributes(property);
    let value = attributes
        .iter()
        .find(|(key, _)| key == "val")
        .map(|(_, value)| value.as_str());
    let toggle = matches!(
        name,
        "b" | "i" | "strike" | "outline" | "shadow" | "condense" | "extend"
    );
    match (name, value) {
        (_, Some("0")) if toggle => return None,
        (_, Some("1")) | (_, None) if toggle => return Some(name.to_owned()),
        ("u", None | Some("single")) => return Some("u".to_owned()),
        ("u", Some("none")) | ("vertAlign", Some("baseline")) => return None,
        _ => {}
    }
    Some(match (value, attributes.len()) {
        (Some(value), 1) => format!("{name}={value}"),
        (_, 0) => name.to_owned(),
        _ => format!("{name}({})", joined(&attributes)),
    })
}

/// The attributes of an element, sorted, values normalized: `true` and
/// `false` as `1` and `0`, numbers without trailing zeros.
fn canonical_attributes(element: &Element) -> Vec<(String, String)> {
    let mut attributes: Vec<(String, String)> = element
        .attributes
        .iter()
        .filter(|a| a.namespace.is_empty())
        .map(|a| (a.name.clone(), canonical_number(&a.value)))
        .collect();
    attributes.sort();
    attributes
}

/// `true`/`false` as `1`/`0`, a decimal number in its shortest form, any
/// other text as it is.
fn canonical_number(value: &str) -> String {
    let text = value.trim();
    match text {
        "true" => return "1".to_owned(),
        "false" => return "0".to_owned(),
        _ => {}
    }
    let numeric = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+'));
    match text.parse::<f64>() {
        Ok(number) if numeric && number.is_finite() => format!("{}", number + 0.0),
        _ => text.to_owned(),
    }
}

/// `a=1,b=2`
fn joined(attributes: &[(String, String)]) -> String {
    attributes
        .iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// An element and its subtree, attributes and children sorted, colours
/// as [what they show](Context::color).
fn canonical_tree(element: &Element, context: &Context) -> String {
    if is_color(element) {
        return context.color(element);
    }
    let attributes = canonical_attributes(element);
    let mut children: Vec<String> = element
        .elements()
        .map(|child| canonical_tree(child, context))
        .collect();
    children.sort();
    let mut out = element.name.clone();
    if !attributes.is_empty() {
        let _ = write!(out, "({})", joined(&attributes));
    }
    if !children.is_empty() {
        let _ = write!(out, "[{}]", children.join(" "));
    }
    out
}

/// A fill: `none`, or its pattern and colours (a solid fill's background
/// colour is not shown, so not compared), or its gradient as a tree.
fn canonical_fill(fill: &Element, context: &Context) -> String {
    if let Some(gradient) = fill.child("gradientFill") {
        return canonical_tree(gradient, context);
    }
    let Some(pattern) = fill.child("patternFill") else {
        return "none".to_owned();
    };
    let kind = pattern.attr("patternType").unwrap_or("none");
    if kind == "none" {
        return "none".to_owned();
    }
    let mut out = kind.to_owned();
    let shown: &[&str] = if kind == "solid" {
        &["fgColor"]
    } else {
        &["fgColor", "bgColor"]
    };
    for color in pattern
        .elements()
        .filter(|c| shown.contains(&c.name.as_str()))
    {
        let _ = write!(out, " {}", context.color(color));
    }
    out
}

/// A border: each side with a line, `side:style color`, sorted; `start`
/// and `end` read as `left` and `right`; the diagonal only when
/// `diagonalUp` or `diagonalDown` shows it.
fn canonical_border(border: &Element, context: &Context) -> String {
    let up = features::is_true(border.attr("diagonalUp"));
    let down = features::is_true(border.attr("diagonalDown"));
    let mut sides = BTreeSet::new();
    for side in border.elements() {
        let style = side.attr("style").unwrap_or("none");
        let name = match side.name.as_str() {
            "start" => "left",
            "end" => "right",
            "diagonal" if !(up || down) => continue,
            name => name,
        };
        if style == "none" {
            continue;
        }
        let color = side
            .child("color")
            .map_or_else(|| "color(auto)".to_owned(), |c| context.color(c));
        sides.insert(format!("{name}:{style} {color}"));
    }
    if up || down {
        sides.insert(format!("diagonal up={up} down={down}"));
    }
    if sides.is_empty() {
        return "none".to_owned();
    }
    sides.into_iter().collect::<Vec<_>>().join("; ")
}

/// An xf's alignment, its default values left out.
fn canonical_alignment(alignment: Option<&Element>) -> String {
    const DEFAULTS: [(&str, &str); 9] = [
        ("horizontal", "general"),
        ("vertical", "bottom"),
        ("textRotation", "0"),
        ("wrapText", "0"),
        ("indent", "0"),
        ("relativeIndent", "0"),
        ("justifyLastLine", "0"),
        ("shrinkToFit", "0"),
        ("readingOrder", "0"),
    ];
    let attributes: Vec<(String, String)> = alignment
        .map(canonical_attributes)
        .unwrap_or_default()
        .into_iter()
        .filter(|(name, value)| !DEFAULTS.contains(&(name.as_str(), value.as_str())))
        .collect();
    if attributes.is_empty() {
        return "default".to_owned();
    }
    joined(&attributes)
}

/// An xf's protection: `locked` (default on) and `hidden` (default off).
fn canonical_protection(protection: Option<&Element>) -> String {
    let flag = |name: &str, default: bool| {
        protection
            .and_then(|p| p.attr(name))
            .map_or(default, |value| features::is_true(Some(value)))
    };
    format!(
        "locked={} hidden={}",
        u8::from(flag("locked", true)),
        u8::from(flag("hidden", false))
    )
}

// ---------------------------------------------------------------------------
// Strings and sheets

/// The shared-string table: each entry as a text constant.
fn shared_strings(xml: &[u8], context: &Context) -> Vec<Constant> {
    let mut strings = Vec::new();
    each_fragment(xml, &["si"], |si| strings.push(string_item(si, context)));
    strings
}

/// Calls `handle` with the parsed tree of every element named one of
/// `names` (by local name) in `xml`, read one at a time so that a large
/// part is never a tree as a whole.
fn each_fragment(xml: &[u8], names: &[&str], mut handle: impl FnMut(&Element)) {
    let utf8 = features::from_utf16(xml);
    let xml = utf8.as_ref().map_or(xml, String::as_bytes);
    // Without its byte-order mark: the reader's positions would not count it.
    let xml = xml.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(xml);
    let mut reader = Reader::from_reader(xml);
    loop {
        let start = reader.buffer_position() as usize;
        let wanted = |local: &str| names.contains(&local);
        let end = match reader.read_event() {
            Ok(Event::Start(tag)) if wanted(tag.local_name().as_ref()) => {
                let name = tag.name().as_ref().to_owned();
                if reader.read_to_end(QName(&name)).is_err() {
                    return;
                }
                reader.buffer_position() as usize
            }
            Ok(Event::Empty(tag)) if wanted(tag.local_name().as_ref()) => {
                reader.buffer_position() as usize
            }
            Ok(Event::Eof) | Err(_) => return,
            Ok(_) => continue,
        };
        if let Ok(fragment) = features::parse(&xml[start..end], None) {
            handle(&fragment);
        }
    }
}

/// A string item (`<si>` or `<is>`): its text, and its runs when it has
/// any. Phonetic runs (`rPh`) are not shown in the cell.
fn string_item(item: &Element, context: &Context) -> Constant {
    let mut text = String::new();
    let mut bare_spaces = false;
    let mut runs = Vec::new();
    let mut rich = false;
    let mut add = |t: &Element, properties: String, runs: &mut Vec<(String, String)>| {
        let piece = t.text();
        bare_spaces |= has_edge_spaces(&piece) && !preserves_spaces(t);
        text.push_str(&piece);
        if !piece.is_empty() {
            runs.push((piece, properties));
        }
    };
    for child in item.elements() {
        match child.name.as_str() {
            "t" => add(child, String::new(), &mut runs),
            "r" => {
                rich = true;
                let properties = child
                    .child("rPr")
                    .map(|p| canonical_font(p, context))
                    .unwrap_or_default();
                for t in child.elements().filter(|e| e.name == "t") {
                    add(t, properties.clone(), &mut runs);
                }
            }
            _ => {}
        }
    }
    Constant {
        kind: Kind::Text,
        text,
        bare_spaces,
        runs: rich.then_some(runs),
    }
}

/// Whether a text starts or ends with white space.
fn has_edge_spaces(text: &str) -> bool {
    // XML's white space: a reader trims these, not a no-break space.
    let space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\r');
    text.starts_with(space) || text.ends_with(space)
}

/// Whether an element says `xml:space="preserve"`.
fn preserves_spaces(element: &Element) -> bool {
    element
        .attributes
        .iter()
        .any(|a| a.name == "space" && a.value == "preserve")
}

/// The cells, rows and columns of a worksheet part.
fn sheet_looks(xml: &[u8], strings: &[Constant], context: &Context) -> SheetLooks {
    let mut reading = SheetReading {
        strings,
        context,
        looks: SheetLooks::default(),
        last_row: 0,
        shared: HashMap::new(),
        filled: Vec::new(),
    };
    each_fragment(xml, &["row", "cols"], |element| {
        match element.name.as_str() {
            "row" => reading.row(element),
            _ => reading.columns(element),
        }
    });
    reading.mark_filled_ranges();
    reading.looks
}

/// A worksheet as it is read, row by row.
struct SheetReading<'s> {
    strings: &'s [Constant],
    context: &'s Context,
    looks: SheetLooks,
    /// The row read last.
    last_row: u32,
    /// Shared formulas by `si`: first cell and text.
    shared: HashMap<String, ((u32, u32), String)>,
    /// Ranges an array formula or data table fills: first and last cell.
    filled: Vec<((u32, u32), (u32, u32))>,
}

impl SheetReading<'_> {
    /// A `<row>`: its own format and its cells.
    fn row(&mut self, row: &Element) {
        let row_number = number(row.attr("r")).unwrap_or(self.last_row + 1);
        self.last_row = row_number;
        if features::is_true(row.attr("customFormat"))
            && let Some(xf) = number(row.attr("s"))
        {
            self.looks.rows.insert(row_number, xf);
        }
        let mut column = 0;
        for cell in row.elements().filter(|e| e.name == "c") {
            let (at_row, at_column) = cell
                .attr("r")
                .and_then(reference)
                .map_or((row_number, column + 1), |(r, c)| {
                    (r.unwrap_or(row_number), c)
                });
            column = at_column;
            let content = self.content(cell, (at_row, at_column));
            let look = CellLook {
                xf: number(cell.attr("s")),
                content,
            };
            self.looks.cells.insert((at_row, at_column), look);
        }
    }

    /// A `<cols>`: the columns with a `style`.
    fn columns(&mut self, cols: &Element) {
        for col in cols.elements().filter(|e| e.name == "col") {
            let (Some(first), Some(xf)) = (number(col.attr("min")), number(col.attr("style")))
            else {
                continue;
            };
            let last = number(col.attr("max")).unwrap_or(first).min(LAST_COLUMN);
            for column in first..=last {
                self.looks.columns.insert(column, xf);
            }
        }
    }

    /// What a `<c>` holds.
    fn content(&mut self, cell: &Element, at: (u32, u32)) -> Content {
        if let Some(f) = cell.child("f") {
            return Content::Formula(self.formula(f, cell, at));
        }
        let kind = cell.attr("t").unwrap_or("n");
        let value = cell.child("v");
        let constant = match (kind, value) {
            ("inlineStr", _) => cell.child("is").map(|is| string_item(is, self.context)),
            ("s", Some(v)) => self.shared_string(&v.text()),
            (_, Some(v)) => Some(plain_constant(kind, v)),
            (_, None) => None,
        };
        match constant {
            Some(constant) if !constant.text.is_empty() => Content::Constant(constant),
            _ => Content::Empty,
        }
    }

    /// Shared string `index`; none (an empty cell) when the index is
    /// empty, not a number or past the table, or the table is not one a
    /// reader finds: LibreOffice 7.4 shows such cells empty (checked on
    /// `<v/>` and on an Excel 2007 beta table of `<sstItem>`s).
    fn shared_string(&self, index: &str) -> Option<Constant> {
        let index = index.trim().parse::<usize>().ok()?;
        self.strings.get(index).cloned()
    }

    /// A `<f>`: its text (a shared formula's moved here), its kind, its
    /// cached text result when that has edge spaces.
    fn formula(&mut self, f: &Element, cell: &Element, at: (u32, u32)) -> Formula {
        let text = f.text();
        let kind = f.attr("t").unwrap_or("normal");
        let range = f.attr("ref").unwrap_or_default();
        let text = match (kind, f.attr("si")) {
            ("shared", Some(si)) if text.is_empty() => self.shared_text(si, at),
            ("shared", Some(si)) => {
                self.shared.insert(si.to_owned(), (at, text.clone()));
                text
            }
            _ => text,
        };
        if matches!(kind, "array" | "dataTable")
            && let Some(range) = range_of(range)
        {
            self.filled.push(range);
        }
        // `cm` points at the cell's metadata: an Excel 365 dynamic array,
        // which spills, where an array without it is a legacy `{=…}` one.
        let dynamic = match cell.attr("cm") {
            Some(_) => " dynamic",
            None => "",
        };
        let kind = match kind {
            "array" => format!("array {}{dynamic}", canonical_range(range)),
            "dataTable" => format!("dataTable {}", canonical_tree(f, self.context)),
            _ => String::new(),
        };
        let spaced_result = (cell.attr("t") == Some("str"))
            .then(|| cell.child("v"))
            .flatten()
            .map(|v| (v.text(), preserves_spaces(v)))
            .filter(|(text, _)| has_edge_spaces(text));
        Formula {
            text,
            kind,
            spaced_result,
        }
    }

    /// The text of shared formula `si`, moved from its first cell to `at`.
    fn shared_text(&self, si: &str, at: (u32, u32)) -> String {
        match self.shared.get(si) {
            Some(((row, column), text)) => shift_formula(
                text,
                i64::from(at.0) - i64::from(*row),
                i64::from(at.1) - i64::from(*column),
            ),
            None => format!("(shared formula {si} before its first cell)"),
        }
    }

    /// Turns the constants an array formula or data table fills (its
    /// cached results, outside its own cell) into results. So are the
    /// empty formulas (`<f ca="1"/>`) there: Excel writes a volatile
    /// array's results so, and they hold no formula of their own.
    fn mark_filled_ranges(&mut self) {
        for &(first, last) in &self.filled {
            for (at, cell) in self.looks.cells.range_mut(first..=last) {
                let inside = (first.1..=last.1).contains(&at.1) && at != &first;
                let filled = match &cell.content {
                    Content::Constant(_) => true,
                    Content::Formula(f) => f.text.is_empty() && f.kind.is_empty(),
                    _ => false,
                };
                if inside && filled {
                    cell.content = Content::Result;
                }
            }
        }
    }
}

/// A constant from its `t` and `<v>`.
fn plain_constant(kind: &str, v: &Element) -> Constant {
    let text = v.text();
    Constant {
        kind: match kind {
            "b" => Kind::Boolean,
            "e" => Kind::Error,
            "d" => Kind::Date,
            "str" => Kind::Text,
            _ => Kind::Number,
        },
        bare_spaces: has_edge_spaces(&text) && !preserves_spaces(v),
        text,
        runs: None,
    }
}

/// A cell reference `A1` (or `$A$1`) as row (absent in `A`) and column.
fn reference(text: &str) -> Option<(Option<u32>, u32)> {
    let text = text.trim().replace('$', "");
    let letters = text.bytes().take_while(u8::is_ascii_alphabetic).count();
    if letters == 0 || letters > 3 {
        return None;
    }
    let column = text[..letters].bytes().fold(0u32, |n, b| {
        n * 26 + u32::from(b.to_ascii_uppercase() - b'A' + 1)
    });
    let row = &text[letters..];
    let row = if row.is_empty() {
        None
    } else {
        Some(row.parse().ok()?)
    };
    (column <= LAST_COLUMN).then_some((row, column))
}

/// A range `A1:B2` (or one cell) as first and last (row, column).
fn range_of(text: &str) -> Option<((u32, u32), (u32, u32))> {
    let (first, last) = text.split_once(':').unwrap_or((text, text));
    let (Some(first_row), first_column) = reference(first)? else {
        return None;
    };
    let (Some(last_row), last_column) = reference(last)? else {
        return None;
    };
    Some(((first_row, first_column), (last_row, last_column)))
}

/// A range as `A1:B2`, or `A1` for one cell (`A1:A1`).
fn canonical_range(text: &str) -> String {
    match range_of(text) {
        Some((first, last)) if first == last => cell_name(first),
        Some((first, last)) => format!("{}:{}", cell_name(first), cell_name(last)),
        None => text.to_owned(),
    }
}

/// `A1` for (row, column).
fn cell_name((row, column): (u32, u32)) -> String {
    format!("{}{row}", column_letters(column))
}

/// Column letters of column `n` (from 1).
fn column_letters(mut n: u32) -> String {
    let mut letters = Vec::new();
    while n > 0 {
        let digit = (n - 1) % 26;
        letters.push(b'A' + digit as u8);
        n = (n - 1) / 26;
    }
    letters.reverse();
    String::from_utf8(letters).unwrap_or_default()
}

/// `formula` as a shared formula reads in a cell `rows` and `columns` away
/// from its first cell: references without `$` move. Text in double
/// quotes, sheet names in single quotes and structured references in
/// brackets stay; a name that looks like a reference but is followed by
/// `(` or `!` (a function, a sheet) is no reference.
fn shift_formula(formula: &str, rows: i64, columns: i64) -> String {
    let chars: Vec<char> = formula.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let end = match c {
            '"' | '\'' => quoted_end(&chars, i),
            '[' => bracket_end(&chars, i),
            _ if is_name_char(c) => {
                let end = (i..chars.len())
                    .find(|&j| !is_name_char(chars[j]))
                    .unwrap_or(chars.len());
                if let Some((line, line_end)) = whole_line_range(&chars, i, end) {
                    out.push_str(&shift_line_range(&line, rows, columns));
                    i = line_end;
                    continue;
                }
                let token: String = chars[i..end].iter().collect();
                let next = chars.get(end).copied();
                let moved = (!matches!(next, Some('(' | '!')))
                    .then(|| shift_reference(&token, rows, columns))
                    .flatten();
                out.push_str(moved.as_deref().unwrap_or(&token));
                i = end;
                continue;
            }
            _ => i + 1,
        };
        out.extend(&chars[i..end]);
        i = end;
    }
    out
}

/// A whole-column (`F:G`, `$B:B`) or whole-row (`2:2`) range whose first
/// part is the token `chars[start..end]`: the range's two parts and where
/// it ends. `None` for anything else (`A1:B2` moves part by part).
fn whole_line_range(chars: &[char], start: usize, end: usize) -> Option<((String, String), usize)> {
    if chars.get(end) != Some(&':') {
        return None;
    }
    let second_end = (end + 1..chars.len())
        .find(|&j| !is_name_char(chars[j]))
        .unwrap_or(chars.len());
    let first: String = chars[start..end].iter().collect();
    let second: String = chars[end + 1..second_end].iter().collect();
    let columns =
        line_part(&first, u8::is_ascii_alphabetic).zip(line_part(&second, u8::is_ascii_alphabetic));
    let rows = line_part(&first, u8::is_ascii_digit).zip(line_part(&second, u8::is_ascii_digit));
    (columns.is_some() || rows.is_some()).then_some(((first, second), second_end))
}

/// A part of a whole-line range, `$` and then only characters of one kind.
fn line_part(part: &str, kind: fn(&u8) -> bool) -> Option<&str> {
    let bare = part.strip_prefix('$').unwrap_or(part);
    (!bare.is_empty() && bare.len() <= 7 && bare.bytes().all(|b| kind(&b))).then_some(bare)
}

/// A whole-column range moved by `columns`, a whole-row one by `rows`;
/// parts with `$` stay.
fn shift_line_range((first, second): &(String, String), rows: i64, columns: i64) -> String {
    let moved = |part: &str| -> Option<String> {
        let fixed = part.starts_with('$');
        let bare = &part[usize::from(fixed)..];
        if fixed {
            return Some(part.to_owned());
        }
        if bare.bytes().all(|b| b.is_ascii_digit()) {
            let row = bare.parse::<i64>().ok()? + rows;
            return (1..=1_048_576).contains(&row).then(|| row.to_string());
        }
        let (_, column) = reference(bare)?;
        let column = i64::from(column) + columns;
        (1..=i64::from(LAST_COLUMN))
            .contains(&column)
            .then(|| column_letters(column as u32))
    };
    match (moved(first), moved(second)) {
        (Some(first), Some(second)) => format!("{first}:{second}"),
        _ => "#REF!".to_owned(),
    }
}

/// Characters of a name, a number or a reference.
fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '.' | '$' | '\\')
}

/// The end of a quoted text starting at `start` (a doubled quote inside
/// does not end it).
fn quoted_end(chars: &[char], start: usize) -> usize {
    let quote = chars[start];
    let mut i = start + 1;
    while i < chars.len() {
        if chars[i] == quote {
            if chars.get(i + 1) == Some(&quote) {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    chars.len()
}

/// The end of a bracketed part starting at `start`, nested brackets in.
fn bracket_end(chars: &[char], start: usize) -> usize {
    let mut depth = 0;
    for (i, c) in chars.iter().enumerate().skip(start) {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    chars.len()
}

/// A cell reference token moved, `None` when `token` is no reference.
fn shift_reference(token: &str, rows: i64, columns: i64) -> Option<String> {
    let bytes = token.as_bytes();
    let column_fixed = bytes.first() == Some(&b'$');
    let rest = &token[usize::from(column_fixed)..];
    let letters = rest.bytes().take_while(u8::is_ascii_alphabetic).count();
    let after_letters = &rest[letters..];
    let row_fixed = after_letters.starts_with('$');
    let digits = &after_letters[usize::from(row_fixed)..];
    if letters == 0
        || letters > 3
        || digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let (_, column) = reference(&rest[..letters])?;
    let row: i64 = digits.parse().ok()?;
    let column = i64::from(column) + if column_fixed { 0 } else { columns };
    let row = row + if row_fixed { 0 } else { rows };
    if !(1..=i64::from(LAST_COLUMN)).contains(&column) || !(1..=1_048_576).contains(&row) {
        return Some("#REF!".to_owned());
    }
    Some(format!(
        "{}{}{}{}",
        if column_fixed { "$" } else { "" },
        column_letters(column as u32),
        if row_fixed { "$" } else { "" },
        row
    ))
}

// ---------------------------------------------------------------------------
// Comparing before and after

/// The texts the write put in: a row holding one of `rows` is the
/// inserted row (left out whole), a cell holding one of `cells` the
/// updated cell; and the other cells the edits set (a header the insert
/// named, a formula filled down), by sheet name and 1-based (row, column).
pub struct Marks<'m> {
    pub rows: &'m [&'m str],
    pub cells: &'m [&'m str],
    pub edited: &'m [(String, (u32, u32))],
}

/// What a write kept and lost of one workbook.
#[derive(Debug, Default)]
pub struct Verdict {
    pub producer: String,
    pub classes: BTreeMap<Class, Tally>,
    /// Untouched constants before the write, and how many it kept.
    pub constants: usize,
    pub constants_kept: usize,
}

/// Places compared and lost in one class, with a few examples.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    pub compared: usize,
    pub lost: usize,
    pub examples: Vec<String>,
    /// Losses by what differs (fonts: the properties, [`font_difference`]):
    /// how many, the first example.
    pub kinds: BTreeMap<String, (usize, String)>,
}

impl Tally {
    /// Counts one place, and a loss with its example.
    fn count(&mut self, lost: bool, example: impl FnOnce() -> String) {
        self.compared += 1;
        if lost {
            self.lost += 1;
            if self.examples.len() < EXAMPLES_PER_FILE {
                self.examples.push(example());
            }
        }
    }
}

/// What the written workbook `after` kept of `before`, class by class,
/// leaving out the cells `marks` tells the write set.
pub fn compare(before: &Looks, after: &Looks, marks: &Marks) -> Verdict {
    let mut verdict = Verdict {
        producer: before.producer.clone(),
        ..Verdict::default()
    };
    let missing = SheetLooks::default();
    for (name, old) in &before.sheets {
        let new = after.sheets.get(name).unwrap_or(&missing);
        let sheet = SheetPair {
            name,
            before: (before, old),
            after: (after, new),
            touched: Touched::find(name, new, marks),
        };
        sheet.compare_cells(&mut verdict);
        sheet.compare_lines(&mut verdict);
    }
    verdict
}

/// The rows and cells the write set, found by what it wrote.
#[derive(Default)]
struct Touched {
    rows: HashSet<u32>,
    cells: HashSet<(u32, u32)>,
}

impl Touched {
    fn find(name: &str, sheet: &SheetLooks, marks: &Marks) -> Touched {
        let mut touched = Touched::default();
        touched.cells.extend(
            (marks.edited.iter())
                .filter(|(sheet, _)| sheet == name)
                .map(|(_, at)| *at),
        );
        for (at, cell) in &sheet.cells {
            let Content::Constant(constant) = &cell.content else {
                continue;
            };
            if marks.rows.contains(&constant.text.as_str()) {
                touched.rows.insert(at.0);
            } else if marks.cells.contains(&constant.text.as_str()) {
                touched.cells.insert(*at);
            }
        }
        touched
    }

    fn contains(&self, at: (u32, u32)) -> bool {
        self.rows.contains(&at.0) || self.cells.contains(&at)
    }
}

/// One sheet before and after, with the workbooks' styles.
struct SheetPair<'a> {
    name: &'a str,
    before: (&'a Looks, &'a SheetLooks),
    after: (&'a Looks, &'a SheetLooks),
    touched: Touched,
}

/// One component of a resolved style.
type Component = fn(&Style) -> &str;

/// The style components, each with its class.
const COMPONENTS: [(Class, Component); 7] = [
    (Class::Fonts, |s| &s.font),
    (Class::FontSchemes, |s| &s.font_scheme),
    (Class::Fills, |s| &s.fill),
    (Class::Borders, |s| &s.border),
    (Class::NumberFormats, |s| &s.number_format),
    (Class::Alignment, |s| &s.alignment),
    (Class::Protection, |s| &s.protection),
];

impl SheetPair<'_> {
    /// Every untouched cell on either side: its style and its content.
    fn compare_cells(&self, verdict: &mut Verdict) {
        let places: BTreeSet<(u32, u32)> = self
            .before
            .1
            .cells
            .keys()
            .chain(self.after.1.cells.keys())
            .copied()
            .filter(|at| !self.touched.contains(*at))
            .collect();
        for at in places {
            let place = format!("{}!{}", self.name, cell_name(at));
            self.compare_style(verdict, at, &place);
            let old = self.before.1.cells.get(&at).map(|c| &c.content);
            let new = self.after.1.cells.get(&at).map(|c| &c.content);
            compare_content(verdict, old.unwrap_or(&Content::Empty), new, &place);
        }
    }

    /// A cell's style components, when the original has styles.
    fn compare_style(&self, verdict: &mut Verdict, at: (u32, u32), place: &str) {
        let (Some(old), Some(new)) = (cell_style(self.before, at), cell_style(self.after, at))
        else {
            return;
        };
        for (class, component) in COMPONENTS {
            let (was, is) = (component(old), component(new));
            let tally = verdict.classes.entry(class).or_default();
            tally.count(was != is, || change(place, was, is));
            if class == Class::Fonts && was != is {
                let kind = tally.kinds.entry(font_difference(was, is)).or_default();
                kind.0 += 1;
                if kind.1.is_empty() {
                    kind.1 = change(place, was, is);
                }
            }
        }
    }

    /// Every untouched row's and every column's own format, counted by
    /// runs of adjacent rows (columns) with the same formats before and
    /// after: a `<col>` range is one place, however many columns it spans.
    fn compare_lines(&self, verdict: &mut Verdict) {
        let lines = [
            (&self.before.1.rows, &self.after.1.rows, "row"),
            (&self.before.1.columns, &self.after.1.columns, "col"),
        ];
        for (old, new, what) in lines {
            let numbers = old
                .keys()
                .chain(new.keys())
                .copied()
                .filter(|n| what == "col" || !self.touched.rows.contains(n));
            let pair = |n: u32| (old.get(&n).copied(), new.get(&n).copied());
            for (first, last) in runs(numbers.collect(), pair) {
                let (was, is) = pair(first);
                let was = self.before.0.style(was.unwrap_or(0));
                let is = self.after.0.style(is.unwrap_or(0));
                let (Some(was), Some(is)) = (was, is) else {
                    continue;
                };
                let line = match what {
                    "row" if first == last => format!("{}!row {first}", self.name),
                    "row" => format!("{}!rows {first}:{last}", self.name),
                    _ if first == last => format!("{}!col {}", self.name, column_letters(first)),
                    _ => format!(
                        "{}!cols {}:{}",
                        self.name,
                        column_letters(first),
                        column_letters(last)
                    ),
                };
                verdict
                    .classes
                    .entry(Class::RowColFormats)
                    .or_default()
                    .count(was != is, || style_change(&line, was, is));
            }
        }
    }
}

/// The runs of adjacent numbers of `numbers` with the same `key`: first
/// and last of each.
fn runs<K: PartialEq>(numbers: BTreeSet<u32>, key: impl Fn(u32) -> K) -> Vec<(u32, u32)> {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for number in numbers {
        match runs.last_mut() {
            Some((first, last)) if *last + 1 == number && key(*first) == key(number) => {
                *last = number;
            }
            _ => runs.push((number, number)),
        }
    }
    runs
}

impl SheetPair<'_> {}

/// The style a place shows: a cell's own xf (0 without `s`); where there
/// is no cell, its row's, else its column's, else xf 0. `None` when the
/// workbook has no such xf.
fn cell_style<'a>(
    (looks, sheet): (&'a Looks, &'a SheetLooks),
    at: (u32, u32),
) -> Option<&'a Style> {
    let xf = match sheet.cells.get(&at) {
        Some(cell) => cell.xf.unwrap_or(0),
        None => sheet
            .rows
            .get(&at.0)
            .or_else(|| sheet.columns.get(&at.1))
            .copied()
            .unwrap_or(0),
    };
    looks.style(xf)
}

/// A cell's content before and after: formula text, constant value,
/// rich-text runs, a cached text result's spaces.
fn compare_content(verdict: &mut Verdict, old: &Content, new: Option<&Content>, place: &str) {
    let new = new.unwrap_or(&Content::Empty);
    let mut count = |class: Class, lost: bool| {
        verdict
            .classes
            .entry(class)
            .or_default()
            .count(lost, || change(place, &shown(old), &shown(new)));
    };
    match (old, new) {
        (Content::Formula(was), _) => {
            let same =
                matches!(new, Content::Formula(is) if is.text == was.text && is.kind == was.kind);
            count(Class::FormulaText, !same);
            if let (Some(_), Content::Formula(is)) = (&was.spaced_result, new) {
                let bare = is
                    .spaced_result
                    .as_ref()
                    .is_some_and(|(_, preserved)| !preserved);
                count(Class::CachedTextSpaces, bare);
            }
        }
        (Content::Constant(was), _) => {
            let same = matches!(new, Content::Constant(is) if same_value(was, is));
            count(Class::Values, !same);
            if let Some(runs) = &was.runs {
                let after = match new {
                    Content::Constant(is) => runs_of(is),
                    _ => Vec::new(),
                };
                verdict
                    .classes
                    .entry(Class::RichText)
                    .or_default()
                    .count(after != *runs, || run_change(place, runs, &after));
            }
            verdict.constants += 1;
            verdict.constants_kept += usize::from(same);
        }
        (Content::Empty | Content::Result, Content::Constant(_)) => count(Class::Values, true),
        (Content::Empty | Content::Result, Content::Formula(_)) => {
            count(Class::FormulaText, true);
        }
        _ => {}
    }
}

/// Whether two constants are the same value: same kind, same text (a
/// number the same number), the same spaces kept.
fn same_value(was: &Constant, is: &Constant) -> bool {
    if was.kind != is.kind {
        return false;
    }
    if was.kind == Kind::Number
        && let (Ok(a), Ok(b)) = (
            was.text.trim().parse::<f64>(),
            is.text.trim().parse::<f64>(),
        )
    {
        return a == b;
    }
    was.text == is.text && was.bare_spaces == is.bare_spaces
}

/// The first run that differs: `place run N: [text: properties] → …`.
fn run_change(place: &str, was: &[(String, String)], is: &[(String, String)]) -> String {
    let at = (0..was.len().max(is.len()))
        .find(|&i| was.get(i) != is.get(i))
        .unwrap_or(0);
    let run = |runs: &[(String, String)]| {
        runs.get(at).map_or_else(
            || "(none)".to_owned(),
            |(text, properties)| format!("[{text:?}: {properties}]"),
        )
    };
    change(&format!("{place} run {}", at + 1), &run(was), &run(is))
}

/// A constant's runs: its own, or the whole text as one plain run.
fn runs_of(constant: &Constant) -> Vec<(String, String)> {
    constant
        .runs
        .clone()
        .unwrap_or_else(|| vec![(constant.text.clone(), String::new())])
}

/// A short form of a content for an example.
fn shown(content: &Content) -> String {
    match content {
        Content::Empty => "(empty)".to_owned(),
        Content::Result => "(array result)".to_owned(),
        Content::Formula(f) => {
            let mut text = format!("={}", f.text);
            if !f.kind.is_empty() {
                let _ = write!(text, " [{}]", f.kind);
            }
            if let Some((result, preserved)) = &f.spaced_result {
                let space = if *preserved { "preserved" } else { "bare" };
                let _ = write!(text, " → {result:?} ({space})");
            }
            text
        }
        Content::Constant(c) => {
            let mut text = format!("{:?} {:?}", c.kind, c.text);
            if c.bare_spaces {
                text.push_str(" (spaces bare)");
            }
            if let Some(runs) = &c.runs {
                for (piece, properties) in runs {
                    let _ = write!(text, " [{piece:?}: {properties}]");
                }
            }
            text
        }
    }
}

/// The properties two canonical fonts differ in: `-name` gone, `+name`
/// added, `name` changed, sorted.
fn font_difference(was: &str, is: &str) -> String {
    let properties = |font: &str| -> BTreeMap<String, String> {
        let font = if font == "(default)" { "" } else { font };
        font.split(' ')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let name = p.split(['=', '(']).next().unwrap_or(p);
                (name.to_owned(), p.to_owned())
            })
            .collect()
    };
    let (was, is) = (properties(was), properties(is));
    let names: BTreeSet<&String> = was.keys().chain(is.keys()).collect();
    let differing: Vec<String> = names
        .into_iter()
        .filter_map(|name| match (was.get(name), is.get(name)) {
            (Some(a), Some(b)) if a != b => Some(name.clone()),
            (Some(_), None) => Some(format!("-{name}")),
            (None, Some(_)) => Some(format!("+{name}")),
            _ => None,
        })
        .collect();
    differing.join(" ")
}

/// `place: before → after`, each side cut short.
fn change(place: &str, was: &str, is: &str) -> String {
    format!("{place}: {} → {}", cut(was), cut(is))
}

/// A row's or column's style change: the components that differ.
fn style_change(line: &str, was: &Style, is: &Style) -> String {
    let differing: Vec<String> = COMPONENTS
        .iter()
        .filter(|(_, component)| component(was) != component(is))
        .map(|(class, component)| {
            format!(
                "{} {} → {}",
                class.label(),
                cut(component(was)),
                cut(component(is))
            )
        })
        .collect();
    format!("{line}: {}", differing.join("; "))
}

/// A text cut to [`MAX_SHOWN_CHARS`].
fn cut(text: &str) -> String {
    match text.char_indices().nth(MAX_SHOWN_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

// ---------------------------------------------------------------------------
// The report

/// The verdicts of a corpus, added up.
#[derive(Default)]
pub struct Summary {
    /// Written workbooks compared.
    files: usize,
    /// Written workbooks that lost something in some class.
    files_losing: usize,
    /// Of those, the ones losing something seen without changing the
    /// theme (in a class other than font theme links).
    files_losing_seen: usize,
    unreadable: Vec<String>,
    classes: BTreeMap<Class, ClassTotal>,
    constants: usize,
    constants_kept: usize,
    files_changing_constants: usize,
    /// Per producer: files, files losing something, and per class files
    /// losing it.
    producers: BTreeMap<String, (usize, usize, BTreeMap<Class, usize>)>,
}

/// One class over the corpus.
#[derive(Default)]
struct ClassTotal {
    files: usize,
    files_losing: usize,
    compared: usize,
    lost: usize,
    /// Per file losing something: its examples.
    examples: Vec<String>,
    /// Files per kind of loss ([`Tally::kinds`]), the first example.
    kinds: BTreeMap<String, (usize, String)>,
}

impl Summary {
    /// Adds the verdict on one written workbook.
    pub fn add(&mut self, file: &Path, verdict: Result<Verdict, String>) {
        let name = file
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let verdict = match verdict {
            Ok(verdict) => verdict,
            Err(why) => return self.unreadable.push(format!("{name}: {why}")),
        };
        self.files += 1;
        let producer = self.producers.entry(verdict.producer.clone()).or_default();
        producer.0 += 1;
        let mut losing = false;
        let mut seen = false;
        for (class, tally) in &verdict.classes {
            let total = self.classes.entry(*class).or_default();
            total.files += 1;
            total.compared += tally.compared;
            total.lost += tally.lost;
            if tally.lost > 0 {
                losing = true;
                seen |= *class != Class::FontSchemes;
                total.files_losing += 1;
                *producer.2.entry(*class).or_default() += 1;
                if let Some(example) = tally.examples.first() {
                    let lost = tally.lost;
                    total
                        .examples
                        .push(format!("{name} [{lost} lost], {example}"));
                }
                for (kind, (_, example)) in &tally.kinds {
                    let files = total.kinds.entry(kind.clone()).or_default();
                    files.0 += 1;
                    if files.1.is_empty() {
                        files.1 = format!("{name}, {example}");
                    }
                }
            }
        }
        producer.1 += usize::from(losing);
        self.files_losing += usize::from(losing);
        self.files_losing_seen += usize::from(seen);
        self.constants += verdict.constants;
        self.constants_kept += verdict.constants_kept;
        self.files_changing_constants += usize::from(verdict.constants_kept < verdict.constants);
    }

    /// The per-class table, the split by producer, and `show` examples
    /// per class.
    pub fn print(&self, show: usize) {
        let percent = |n: usize, of: usize| 100.0 * n as f64 / of.max(1) as f64;
        println!(
            "\nwhat a person sees (looks.rs), written workbooks compared: {}",
            self.files
        );
        println!(
            "  losing something in a class below: {} ({:.1}%)",
            self.files_losing,
            percent(self.files_losing, self.files)
        );
        println!(
            "  losing something seen without a theme change (all but font theme links): {} ({:.1}%)",
            self.files_losing_seen,
            percent(self.files_losing_seen, self.files)
        );
        println!(
            "  untouched constants kept: {} of {} ({:.3}%); files with one changed: {} ({:.1}%)",
            self.constants_kept,
            self.constants,
            percent(self.constants_kept, self.constants),
            self.files_changing_constants,
            percent(self.files_changing_constants, self.files)
        );
        println!(
            "\n  {:<20} {:>7} {:>8} {:>12} {:>10}",
            "class", "files", "losing", "cells", "lost"
        );
        for class in Class::ALL {
            let total = self.classes.get(&class);
            let get = |f: fn(&ClassTotal) -> usize| total.map_or(0, f);
            println!(
                "  {:<20} {:>7} {:>8} {:>12} {:>10}",
                class.label(),
                get(|t| t.files),
                get(|t| t.files_losing),
                get(|t| t.compared),
                get(|t| t.lost)
            );
        }
        self.print_kinds();
        self.print_producers();
        println!("\n  examples (file, sheet!cell: before → after):");
        for class in Class::ALL {
            for example in self
                .classes
                .get(&class)
                .into_iter()
                .flat_map(|t| t.examples.iter().take(show))
            {
                println!("  {}: {example}", class.label());
            }
        }
        for why in self.unreadable.iter().take(show) {
            println!("  not compared: {why}");
        }
    }

    /// Per class with kinds of loss, the files per kind, most first.
    fn print_kinds(&self) {
        for (class, total) in &self.classes {
            if total.kinds.is_empty() {
                continue;
            }
            let mut kinds: Vec<(&String, &(usize, String))> = total.kinds.iter().collect();
            kinds.sort_by_key(|(kind, (files, _))| (std::cmp::Reverse(*files), (*kind).clone()));
            println!(
                "\n  {} lost, by what differs: files, an example",
                class.label()
            );
            for (kind, (files, example)) in kinds.iter().take(10) {
                println!("  {kind:<24} {files:>5}  {example}");
            }
        }
    }

    /// Files losing something, per producer and class.
    fn print_producers(&self) {
        println!("\n  by producer (docProps/app.xml): files losing / files written");
        for (producer, (files, losing, classes)) in &self.producers {
            let by_class: Vec<String> = Class::ALL
                .iter()
                .filter_map(|c| classes.get(c).map(|n| format!("{} {n}", c.label())))
                .collect();
            println!(
                "  {producer:<28} {losing:>5} / {files:<5} {}",
                by_class.join(", ")
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STYLES: &str = r#"<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">
  <numFmts count="1"><numFmt numFmtId="164" formatCode="0.000"/></numFmts>
  <fonts count="3">
    <font><sz val="11"/><name val="Calibri"/></font>
    <font><b/><sz val="10"/><name val="Arial"/></font>
    <font><vertAlign val="superscript"/><sz val="11"/><name val="Calibri"/></font>
  </fonts>
  <fills count="1"><fill><patternFill patternType="none"/></fill></fills>
  <borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>
  <cellXfs count="4">
    <xf numFmtId="0" fontId="0" fillId="0" borderId="0"/>
    <xf numFmtId="38" fontId="1" fillId="0" borderId="0"/>
    <xf numFmtId="164" fontId="2" fillId="0" borderId="0"><protection locked="0"/></xf>
    <xf numFmtId="14" fontId="0" fillId="0" borderId="0"><alignment horizontal="center"/></xf>
  </cellXfs>
</styleSheet>"#;

    fn styles() -> Vec<Style> {
        let sheet = features::parse(STYLES.as_bytes(), None).expect("test styles parse");
        resolve_styles(&sheet, &Context::read(Some(&sheet), None))
    }

    fn font(font: &Element) -> String {
        canonical_font(font, &Context::read(None, None))
    }

    fn border(border: &Element) -> String {
        canonical_border(border, &Context::read(None, None))
    }

    fn fill(fill: &Element) -> String {
        canonical_fill(fill, &Context::read(None, None))
    }

    fn element(xml: &str) -> Element {
        features::parse(xml.as_bytes(), None).expect("test XML parses")
    }

    fn sheet(rows: &str) -> SheetLooks {
        let xml = format!(
            r#"<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><cols><col min="2" max="3" style="3"/></cols><sheetData>{rows}</sheetData></worksheet>"#
        );
        sheet_looks(xml.as_bytes(), &[], &Context::read(None, None))
    }

    fn looks(rows: &str) -> Looks {
        let mut sheets = BTreeMap::new();
        sheets.insert("S".to_owned(), sheet(rows));
        Looks {
            producer: "test".to_owned(),
            styles: styles(),
            sheets,
        }
    }

    #[test]
    fn a_place_without_a_cell_in_a_formatted_row_takes_the_row_format() {
        let looks = looks(r#"<row r="2" s="1" customFormat="1"><c r="A2" s="0"/></row>"#);
        let style = cell_style((&looks, &looks.sheets["S"]), (2, 2)).expect("xf 1");
        assert_eq!(style.font, "b name=Arial sz=10");
    }

    #[test]
    fn a_place_without_a_cell_outside_formatted_rows_takes_the_column_format() {
        let looks = looks(r#"<row r="2" s="1"><c r="A2"/></row>"#);
        let sheet = &looks.sheets["S"];
        let b2 = cell_style((&looks, sheet), (2, 2)).expect("xf 3");
        assert_eq!(b2.alignment, "horizontal=center");
        let d2 = cell_style((&looks, sheet), (2, 4)).expect("xf 0");
        assert_eq!(d2.alignment, "default");
    }

    #[test]
    fn a_cell_without_s_is_xf_0_even_in_a_formatted_row_and_column() {
        let looks = looks(r#"<row r="2" s="1" customFormat="1"><c r="B2"><v>1</v></c></row>"#);
        let style = cell_style((&looks, &looks.sheets["S"]), (2, 2)).expect("xf 0");
        assert_eq!(style, &looks.styles[0]);
    }

    #[test]
    fn built_in_number_formats_resolve_to_their_codes() {
        let styles = styles();
        assert_eq!(styles[1].number_format, "#,##0 ;[Red](#,##0)");
        assert_eq!(styles[2].number_format, "0.000");
        assert_eq!(styles[3].number_format, "mm-dd-yy");
    }

    #[test]
    fn protection_defaults_to_locked() {
        let styles = styles();
        assert_eq!(styles[0].protection, "locked=1 hidden=0");
        assert_eq!(styles[2].protection, "locked=0 hidden=0");
    }

    #[test]
    fn font_child_order_and_default_vals_do_not_matter() {
        let one = element(
            r#"<font><b val="1"/><sz val="11.0"/><color rgb="ff000000"/><name val="Arial"/><u/><i val="0"/></font>"#,
        );
        let two = element(
            r#"<font><name val="Arial"/><u val="single"/><color rgb="FF000000" tint="0"/><sz val="11"/><b/></font>"#,
        );
        assert_eq!(font(&one), font(&two));
    }

    #[test]
    fn vert_align_name_size_and_colour_matter() {
        let plain = element(r#"<font><sz val="11"/><name val="Calibri"/></font>"#);
        for other in [
            r#"<font><vertAlign val="superscript"/><sz val="11"/><name val="Calibri"/></font>"#,
            r#"<font><sz val="11"/><name val="Arial"/></font>"#,
            r#"<font><sz val="10"/><name val="Calibri"/></font>"#,
            r#"<font><sz val="11"/><name val="Calibri"/><color theme="1"/></font>"#,
        ] {
            assert_ne!(font(&plain), font(&element(other)), "{other}");
        }
        let baseline = element(
            r#"<font><vertAlign val="baseline"/><sz val="11"/><name val="Calibri"/></font>"#,
        );
        assert_eq!(font(&plain), font(&baseline));
    }

    #[test]
    fn empty_border_sides_and_a_hidden_diagonal_are_no_border() {
        let empty =
            element(r#"<border><left/><right style="none"/><diagonal style="thin"/></border>"#);
        assert_eq!(border(&empty), "none");
        let thin = element(r#"<border><start style="thin"><color auto="1"/></start></border>"#);
        assert_eq!(border(&thin), "left:thin color(auto)");
    }

    #[test]
    fn a_solid_fill_ignores_its_background_colour() {
        let one = element(
            r#"<fill><patternFill patternType="solid"><fgColor rgb="FFFF0000"/><bgColor indexed="64"/></patternFill></fill>"#,
        );
        let two = element(
            r#"<fill><patternFill patternType="solid"><fgColor rgb="ffff0000"/></patternFill></fill>"#,
        );
        assert_eq!(fill(&one), fill(&two));
    }

    #[test]
    fn indexed_colours_read_as_what_they_show() {
        let context = Context::read(None, None);
        let color = |xml: &str| context.color(&element(xml));
        assert_eq!(
            color(r#"<fgColor indexed="43"/>"#),
            color(r#"<fgColor rgb="FFFFFF99"/>"#)
        );
        assert_eq!(
            color(r#"<color indexed="64"/>"#),
            color(r#"<color auto="1"/>"#)
        );
        assert_ne!(
            color(r#"<color theme="4" tint="0.499984740745262"/>"#),
            color(r#"<color theme="4" tint="0.5999938962981048"/>"#)
        );
        let own = element(
            r#"<styleSheet><colors><indexedColors><rgbColor rgb="FF123456"/></indexedColors></colors></styleSheet>"#,
        );
        let context = Context::read(Some(&own), None);
        assert_eq!(
            context.color(&element(r#"<color indexed="0"/>"#)),
            "color(rgb=123456)"
        );
    }

    #[test]
    fn a_theme_font_shows_the_theme_typeface() {
        let theme = element(
            r#"<theme><themeElements><fontScheme><majorFont><latin typeface="Cambria"/></majorFont><minorFont><latin typeface="Aptos"/></minorFont></fontScheme></themeElements></theme>"#,
        );
        let context = Context::read(None, Some(&theme));
        let themed =
            element(r#"<font><sz val="11"/><name val="Calibri"/><scheme val="minor"/></font>"#);
        assert_eq!(canonical_font(&themed, &context), "name=Aptos sz=11");
        assert_eq!(font_scheme(&themed), "minor");
    }

    #[test]
    fn shared_formulas_move_with_their_cell() {
        let sheet = sheet(
            r#"<row r="1"><c r="A1"><f t="shared" ref="A1:B2" si="0">$C1+D$1+"A1"+Sheet2!E1+SUM(F1)+LOG10(2)</f><v>1</v></c><c r="B1"><f t="shared" si="0"/><v>1</v></c></row>
               <row r="2"><c r="A2"><f t="shared" si="0"/><v>1</v></c></row>"#,
        );
        let text = |at| match &sheet.cells[&at].content {
            Content::Formula(f) => f.text.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(text((1, 2)), r#"$C1+E$1+"A1"+Sheet2!F1+SUM(G1)+LOG10(2)"#);
        assert_eq!(text((2, 1)), r#"$C2+D$1+"A1"+Sheet2!E2+SUM(F2)+LOG10(2)"#);
    }

    #[test]
    fn empty_formulas_in_a_volatile_array_are_its_results() {
        let sheet = sheet(
            r#"<row r="1"><c r="A1"><f t="array" ref="A1:B1" ca="1">ROW(A1:B1)</f><v>1</v></c><c r="B1"><f ca="1"/><v>1</v></c><c r="C1"><f ca="1"/><v>1</v></c></row>"#,
        );
        assert!(matches!(sheet.cells[&(1, 2)].content, Content::Result));
        assert!(matches!(sheet.cells[&(1, 3)].content, Content::Formula(_)));
    }

    #[test]
    fn whole_columns_and_rows_of_shared_formulas_move_too() {
        assert_eq!(shift_formula("SUM(F:G)+$B:B", 1, 1), "SUM(G:H)+$B:C");
        assert_eq!(
            shift_formula("IRR(2:2)+SUM(Data!$3:4)", 1, 1),
            "IRR(3:3)+SUM(Data!$3:5)"
        );
        assert_eq!(
            shift_formula("A1:B2+TIME(1,2,3)", 1, 0),
            "A2:B3+TIME(1,2,3)"
        );
    }

    #[test]
    fn constants_keep_their_type_spaces_and_escapes() {
        let sheet = sheet(
            r#"<row r="1"><c r="A1" t="e"><v>#NULL!</v></c><c r="B1" t="inlineStr"><is><t>a_x000D_b </t></is></c><c r="C1" t="inlineStr"><is><t xml:space="preserve">a </t></is></c></row>"#,
        );
        let constant = |at| match &sheet.cells[&at].content {
            Content::Constant(c) => c.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(constant((1, 1)).kind, Kind::Error);
        let b1 = constant((1, 2));
        assert_eq!((b1.text.as_str(), b1.bare_spaces), ("a_x000D_b ", true));
        assert!(!constant((1, 3)).bare_spaces);
    }

    #[test]
    fn rich_runs_keep_their_properties() {
        let item = string_item(
            &element(
                r#"<si><r><t>x</t></r><r><rPr><vertAlign val="superscript"/><rFont val="Arial"/></rPr><t>2</t></r></si>"#,
            ),
            &Context::read(None, None),
        );
        assert_eq!(item.text, "x2");
        let runs = item.runs.expect("rich");
        assert_eq!(
            runs[1],
            (
                "2".to_owned(),
                "name=Arial vertAlign=superscript".to_owned()
            )
        );
    }

    #[test]
    fn array_results_are_not_constants() {
        let sheet = sheet(
            r#"<row r="1"><c r="A1"><f t="array" ref="A1:A2">{1;2}</f><v>1</v></c></row><row r="2"><c r="A2"><v>2</v></c></row>"#,
        );
        assert_eq!(sheet.cells[&(2, 1)].content, Content::Result);
    }

    #[test]
    fn the_inserted_row_and_updated_cell_are_left_out_and_losses_counted() {
        let before = looks(
            r#"<row r="1"><c r="A1" s="2"><v>1</v></c><c r="B1"><f>A1+1</f></c></row><row r="2"><c r="A2"><v>5</v></c></row>"#,
        );
        let after = looks(
            r#"<row r="1"><c r="A1" s="1"><v>1.0</v></c><c r="B1"><f>A1 +1</f></c></row><row r="2"><c r="A2" t="inlineStr"><is><t>upd</t></is></c></row><row r="3"><c r="A3" s="2" t="inlineStr"><is><t>ins</t></is></c></row>"#,
        );
        let marks = Marks {
            rows: &["ins"],
            cells: &["upd"],
            edited: &[],
        };
        let verdict = compare(&before, &after, &marks);
        let lost = |class| verdict.classes.get(&class).map_or(0, |t| t.lost);
        assert_eq!(lost(Class::Fonts), 1);
        assert_eq!(lost(Class::Protection), 1);
        assert_eq!(lost(Class::Values), 0);
        assert_eq!(lost(Class::FormulaText), 1);
        assert_eq!((verdict.constants, verdict.constants_kept), (1, 1));
    }
}
