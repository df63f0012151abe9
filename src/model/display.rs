//! A number as its number format displays it (contract §11.3
//! `values=formatted`): the text LibreOffice shows for the cell.
//!
//! A format code is parsed once into a [`NumberFormat`] (the reader keeps
//! one per cell format, see `model::render`): its sections, each with its
//! condition, and what kind of section it is. Showing a number picks the
//! section as spreadsheet apps do, then:
//!
//! - **General** is written here, as LibreOffice writes it: up to 15
//!   significant digits, and scientific notation from 1E+016 up (the
//!   exponent in three digits, as LibreOffice 7 writes it) and below
//!   1E-09 or where the fixed form would need more than 20 decimals.
//! - **Dates and times** are written here: IronCalc's formatter cannot
//!   show serials below 1 (times of day), does not carry rounded seconds
//!   into minutes, and has no fractions of seconds. Serial 0 is 1899-12-30,
//!   as in LibreOffice (so serials below 61 are a day earlier than in Excel,
//!   which counts a 29 February 1900).
//! - **Fractions** (`# ?/?`) are written here: IronCalc has none.
//! - **Other numbers** go to IronCalc's formatter
//!   (`ironcalc_base::formatter::format::format_number`), given only the
//!   chosen section (IronCalc reads no conditions), with the value's sign
//!   dropped when the section is a negative one, fill characters (`*x`)
//!   dropped as LibreOffice drops them from displayed text, and a currency
//!   with a locale (`[$€-407]`) as its symbol in quotes.
//!
//! The built-in date formats 14 (`mm-dd-yy`) and 22 (`m/d/yy h:mm`) show,
//! as in LibreOffice and Excel with an en-US locale, as `m/d/yyyy` and
//! `m/d/yyyy h:mm`.

use ironcalc_base::formatter::format::format_number;
use ironcalc_base::locale::{Locale, get_locale};

use super::value::civil_from_days;

/// A parsed number format code.
#[derive(Debug, Clone)]
pub struct NumberFormat {
    sections: Vec<Section>,
    /// The section for text (the one with `@`, or the fourth): text shown
    /// with its literals, `@` standing for the cell's text.
    text: Option<Vec<TextPiece>>,
}

#[derive(Debug, Clone, PartialEq)]
enum TextPiece {
    Literal(String),
    /// `@`: the cell's text.
    Text,
}

#[derive(Debug, Clone)]
struct Section {
    condition: Option<(Compare, f64)>,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Compare {
    Less,
    LessOrEqual,
    Greater,
    GreaterOrEqual,
    Equal,
    NotEqual,
}

#[derive(Debug, Clone)]
enum Kind {
    /// General, with the text the section writes before and after it
    /// (`"$"General`, `General" kg"`, the `-` of `General;-General`).
    General {
        before: String,
        after: String,
    },
    /// A section for IronCalc.
    Number(Digits),
    Date(Vec<DatePiece>),
    Fraction(Fraction),
    /// Only text, no digits (`"zero"`, `"-"`).
    Literal(String),
}

impl NumberFormat {
    /// Parses `code`; `None` (no code) is General.
    pub fn parse(code: Option<&str>) -> NumberFormat {
        let code = match code {
            None => "General",
            Some("mm-dd-yy") => "m/d/yyyy",
            Some("m/d/yy h:mm") => "m/d/yyyy h:mm",
            // Excel's system long date and time: what the codes after them
            // say is replaced by the locale's (en-US) forms, as
            // LibreOffice shows them.
            Some(code) if code.to_ascii_uppercase().starts_with("[$-F800]") => "dddd, mmmm d, yyyy",
            Some(code) if code.to_ascii_uppercase().starts_with("[$-F400]") => "h:mm:ss AM/PM",
            Some(code) => code,
        };
        let all = split_sections(code);
        let is_text = |section: &&String| text_pieces(section, false).contains(&TextPiece::Text);
        let text = (all.iter().find(is_text))
            .or_else(|| all.get(3))
            .map(|section| text_pieces(section, true));
        // A section with `@` is for text: numbers take the others
        // (`m/d/yy;@` shows a negative number through its first section,
        // with its sign), or it alone when there are none (`@`).
        let numeric: Vec<&String> = all.iter().take(3).filter(|s| !is_text(s)).collect();
        let numeric = match numeric.is_empty() {
            true => vec![&all[0]],
            false => numeric,
        };
        let sections = numeric
            .iter()
            .map(|section| parse_section(section))
            .collect();
        NumberFormat { sections, text }
    }

    /// `text` as the format shows text: through its text section, when it
    /// has one (`_(@_)` shows ` abc `), else as it is.
    pub fn show_text(&self, text: &str) -> String {
        let Some(pieces) = &self.text else {
            return text.to_owned();
        };
        let mut out = String::with_capacity(text.len() + 8);
        for piece in pieces {
            match piece {
                TextPiece::Literal(literal) => out.push_str(literal),
                TextPiece::Text => out.push_str(text),
            }
        }
        out
    }

    /// Whether the format is General throughout.
    pub fn is_general(&self) -> bool {
        self.sections.len() == 1
            && matches!(&self.sections[0].kind,
                Kind::General { before, after } if before.is_empty() && after.is_empty())
    }

    /// `value` as the format shows it.
    pub fn show(&self, value: f64) -> String {
        if !value.is_finite() {
            return "#NUM!".to_owned();
        }
        let (section, drop_sign) = self.pick(value);
        let value = if drop_sign { value.abs() } else { value };
        match &section.kind {
            Kind::General { before, after } => format!("{before}{}{after}", general(value)),
            Kind::Number(digits) => digits.show(value),
            Kind::Date(pieces) => show_date(value, pieces),
            Kind::Fraction(fraction) => fraction.show(value),
            Kind::Literal(text) => {
                if value < 0.0 {
                    format!("-{text}")
                } else {
                    text.clone()
                }
            }
        }
    }

    /// The section that shows `value`, and whether it shows its magnitude
    /// only (a negative number in a section for negative numbers).
    fn pick(&self, value: f64) -> (&Section, bool) {
        let sections = &self.sections;
        let conditional = sections.iter().any(|s| s.condition.is_some());
        if !conditional {
            return match sections.len() {
                0 => unreachable!("a format has a section"),
                1 => (&sections[0], false),
                2 if value < 0.0 => (&sections[1], true),
                2 => (&sections[0], false),
                _ if value < 0.0 => (&sections[1], true),
                _ if value == 0.0 => (&sections[2], false),
                _ => (&sections[0], false),
            };
        }
        // With conditions: the first section whose condition holds; a
        // section without one, after a conditional first, takes the rest
        // (the second the negatives when a third exists, as LibreOffice).
        let first = &sections[0];
        if first
            .condition
            .is_none_or(|(cmp, bound)| holds(cmp, value, bound))
        {
            return (first, false);
        }
        match sections.get(1) {
            None => (first, false),
            Some(second) => match second.condition {
                Some((cmp, bound)) if holds(cmp, value, bound) => (second, value < 0.0),
                Some(_) => (sections.get(2).unwrap_or(second), false),
                None if sections.len() > 2 && value >= 0.0 => (&sections[2], false),
                None => (second, sections.len() > 2 && value < 0.0),
            },
        }
    }
}

fn holds(cmp: Compare, value: f64, bound: f64) -> bool {
    match cmp {
        Compare::Less => value < bound,
        Compare::LessOrEqual => value <= bound,
        Compare::Greater => value > bound,
        Compare::GreaterOrEqual => value >= bound,
        Compare::Equal => value == bound,
        Compare::NotEqual => value != bound,
    }
}

fn locale() -> &'static Locale {
    // "en" is compiled into ironcalc_base; the default is its fallback.
    get_locale("en").unwrap_or_else(|_| ironcalc_base::locale::get_default_locale())
}

/// The sections of a code, split at `;` outside quotes and escapes.
fn split_sections(code: &str) -> Vec<String> {
    let mut sections = vec![String::new()];
    let mut chars = code.chars();
    while let Some(c) = chars.next() {
        let current = sections.last_mut().expect("one section at least");
        match c {
            ';' => {
                sections.push(String::new());
                continue;
            }
            '"' => {
                current.push(c);
                for c in chars.by_ref() {
                    current.push(c);
                    if c == '"' {
                        break;
                    }
                }
            }
            '\\' => {
                current.push(c);
                if let Some(next) = chars.next() {
                    current.push(next);
                }
            }
            _ => current.push(c),
        }
    }
    sections
}

/// One section: its condition, colours and fills taken out, its kind found.
fn parse_section(section: &str) -> Section {
    let mut condition = None;
    let mut code = String::with_capacity(section.len());
    let mut literal = String::new();
    let mut digits = false;
    let mut date = false;
    // Where General stands in the section's text, once it is seen.
    let mut general = None;
    let mut fraction = false;
    let mut chars = section.chars().peekable();
    // Where the code's last quoted text ends: text quoted right after it
    // joins it (IronCalc reads `"a""b"` as `a"b`).
    let mut quote_end = None;
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                if quote_end == Some(code.len()) {
                    code.pop();
                } else {
                    code.push(c);
                }
                for c in chars.by_ref() {
                    code.push(c);
                    if c == '"' {
                        break;
                    }
                    literal.push(c);
                }
                quote_end = Some(code.len());
            }
            '\\' => {
                if let Some(next) = chars.next() {
                    code.push(c);
                    code.push(next);
                    literal.push(next);
                }
            }
            // A fill repeats its character across the cell's width: the
            // displayed text has none of it.
            '*' => {
                chars.next();
            }
            '_' => {
                code.push(c);
                if let Some(next) = chars.next() {
                    code.push(next);
                    literal.push(' ');
                }
            }
            '[' => {
                let inner: String = chars.by_ref().take_while(|&c| c != ']').collect();
                if let Some(parsed) = parse_condition(&inner) {
                    condition = Some(parsed);
                } else if let Some(currency) = inner.strip_prefix('$') {
                    let symbol = currency.split('-').next().unwrap_or("");
                    if !symbol.is_empty() {
                        code.push('"');
                        code.push_str(symbol);
                        code.push('"');
                        literal.push_str(symbol);
                    }
                } else if !inner.is_empty()
                    && inner
                        .chars()
                        .all(|c| matches!(c.to_ascii_lowercase(), 'h' | 'm' | 's'))
                {
                    date = true;
                    code.push('[');
                    code.push_str(&inner);
                    code.push(']');
                }
                // Anything else is a colour: not part of the text.
            }
            '0' | '#' | '?' => {
                digits = true;
                code.push(c);
            }
            '/' if digits => {
                fraction = true;
                code.push(c);
            }
            'G' | 'g' if starts_general(chars.clone()) => {
                general = Some(literal.len());
                for _ in 0..6 {
                    chars.next();
                }
            }
            'y' | 'Y' | 'd' | 'D' | 'h' | 'H' | 's' | 'S' | 'm' | 'M' => {
                date = true;
                code.push(c);
            }
            'a' | 'A' if starts_am_pm(chars.clone()) => {
                date = true;
                code.push(c);
            }
            'e' | 'E' if digits => code.push(c),
            _ => {
                code.push(c);
                literal.push(c);
            }
        }
    }
    let kind = if let Some(at) = general {
        Kind::General {
            after: literal.split_off(at),
            before: literal,
        }
    } else if date {
        Kind::Date(date_pieces(&code))
    } else if fraction {
        Fraction::parse(&code).map_or_else(|| Kind::Number(Digits::new(code)), Kind::Fraction)
    } else if digits {
        Kind::Number(Digits::new(code))
    } else if code.contains('@') {
        // A text section used for numbers: they show as General.
        Kind::General {
            before: String::new(),
            after: String::new(),
        }
    } else {
        Kind::Literal(literal)
    };
    Section { condition, kind }
}

/// Whether `code` has a digit placeholder or `/` inside quotes or escaped.
fn quotes_a_placeholder(code: &str) -> bool {
    let placeholder = |c: char| matches!(c, '0' | '#' | '?' | '/');
    let mut chars = code.chars();
    while let Some(c) = chars.next() {
        let quoted = match c {
            '"' => chars.by_ref().take_while(|&c| c != '"').any(placeholder),
            '\\' => chars.next().is_some_and(placeholder),
            _ => false,
        };
        if quoted {
            return true;
        }
    }
    false
}

/// A fragment of a code (as [`parse_section`] keeps it) as it shows:
/// quoted text without its quotes, an escaped character without its `\`,
/// `_x` a space (see [`text_pieces`]).
fn shown(fragment: &str) -> String {
    let pieces = text_pieces(fragment, false).into_iter();
    pieces
        .map(|piece| match piece {
            TextPiece::Literal(literal) => literal,
            TextPiece::Text => "@".to_owned(),
        })
        .collect()
}

/// Whether the characters after a `G` make `General`.
fn starts_general(rest: impl Iterator<Item = char>) -> bool {
    rest.take(6)
        .collect::<String>()
        .eq_ignore_ascii_case("eneral")
}

/// Whether the characters after an `a` make `AM/PM` or `A/P`.
fn starts_am_pm(rest: impl Iterator<Item = char>) -> bool {
    let next: String = rest.take(4).collect::<String>().to_ascii_lowercase();
    next.starts_with("m/pm") || next.starts_with("/p")
}

/// A section as text shows it: quoted text, escaped characters and other
/// literals as they are, `_x` a space, no fill (`*x`) or brackets; `@` the
/// text, and so `General` when `general_is_text` (the fourth section, the
/// text's, shows the text so).
fn text_pieces(section: &str, general_is_text: bool) -> Vec<TextPiece> {
    let mut pieces = Vec::new();
    let mut literal = String::new();
    let mut chars = section.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => literal.extend(chars.by_ref().take_while(|&c| c != '"')),
            '\\' => literal.extend(chars.next()),
            '_' => {
                chars.next();
                literal.push(' ');
            }
            '*' => {
                chars.next();
            }
            '[' => {
                chars.by_ref().take_while(|&c| c != ']').for_each(drop);
            }
            '@' | 'G' | 'g' if c == '@' || general_is_text && starts_general(chars.clone()) => {
                if c != '@' {
                    chars.nth(5);
                }
                if !literal.is_empty() {
                    pieces.push(TextPiece::Literal(std::mem::take(&mut literal)));
                }
                pieces.push(TextPiece::Text);
            }
            c => literal.push(c),
        }
    }
    if !literal.is_empty() {
        pieces.push(TextPiece::Literal(literal));
    }
    pieces
}

/// `<100`, `>=0`, `=5`, `<>1`.
fn parse_condition(inner: &str) -> Option<(Compare, f64)> {
    let (cmp, number) = if let Some(rest) = inner.strip_prefix("<=") {
        (Compare::LessOrEqual, rest)
    } else if let Some(rest) = inner.strip_prefix(">=") {
        (Compare::GreaterOrEqual, rest)
    } else if let Some(rest) = inner.strip_prefix("<>") {
        (Compare::NotEqual, rest)
    } else if let Some(rest) = inner.strip_prefix('<') {
        (Compare::Less, rest)
    } else if let Some(rest) = inner.strip_prefix('>') {
        (Compare::Greater, rest)
    } else if let Some(rest) = inner.strip_prefix('=') {
        (Compare::Equal, rest)
    } else {
        return None;
    };
    number.trim().parse().ok().map(|bound| (cmp, bound))
}

// ---------------------------------------------------------------------------
// Numbers

/// A number section, for IronCalc's formatter, with what rounding it needs
/// first: IronCalc rounds a half to even (`1234.5` with `0` gives `1234`),
/// spreadsheet apps away from zero (`1235`).
#[derive(Debug, Clone)]
struct Digits {
    /// The code without conditions, colours, fills, and thousands scaling.
    code: String,
    /// The same with its decimal point and `#` decimals left out, for whole
    /// numbers: LibreOffice shows `0.###` of 3 as `3`, IronCalc as `3.`.
    whole_code: Option<String>,
    /// Digits after the decimal point; `None` in scientific notation.
    decimals: Option<i32>,
    /// What the number is multiplied by: 100 per `%`, 1/1000 per comma
    /// after the last digit.
    scale: f64,
    /// How many `%` the code has (IronCalc multiplies by 100 for each).
    percent: i32,
    /// A code of engineering notation (`##0.0E+0`), which IronCalc does
    /// not implement.
    engineering: Option<Engineering>,
    /// The common codes (`"$"#,##0.00`, `0.0%`, `00000`), written here
    /// without IronCalc, which parses its code again for every number.
    simple: Option<Simple>,
}

/// A code of text, whole digits, optional decimals and text:
/// `"$"#,##0.00`, `0.00%`, `#,##0" units"`, `00000`, `#.##`, `?.??`.
/// A placeholder with no digit to show is a `0` for `0`, a space for `?`
/// and nothing for `#`; decimals that are zeros at `#` are left out (and
/// the point with them when none is left), as LibreOffice shows them.
#[derive(Debug, Clone, PartialEq)]
struct Simple {
    prefix: String,
    suffix: String,
    /// The whole part's placeholders (`0`, `#`, `?`), commas left out.
    whole: Vec<char>,
    thousands: bool,
    /// The decimals' placeholders.
    decimals: Vec<char>,
}

impl Simple {
    /// The code (conditions, colours, fills and scaling commas taken out)
    /// as a simple one, or `None`.
    fn parse(code: &str) -> Option<Simple> {
        #[derive(PartialEq)]
        enum At {
            Prefix,
            Whole,
            Decimals,
            Suffix,
        }
        let mut at = At::Prefix;
        let mut simple = Simple {
            prefix: String::new(),
            suffix: String::new(),
            whole: Vec::new(),
            thousands: false,
            decimals: Vec::new(),
        };
        let mut chars = code.chars();
        while let Some(c) = chars.next() {
            let text = match c {
                '"' => Some(chars.by_ref().take_while(|&c| c != '"').collect::<String>()),
                '\\' => Some(chars.next()?.to_string()),
                '_' => {
                    chars.next()?;
                    Some(" ".to_owned())
                }
                '0' | '#' | '?' | ',' if matches!(at, At::Prefix | At::Whole) => {
                    at = At::Whole;
                    if c == ',' {
                        simple.thousands = true;
                    } else {
                        simple.whole.push(c);
                    }
                    None
                }
                '.' if matches!(at, At::Prefix | At::Whole) => {
                    at = At::Decimals;
                    None
                }
                '0' | '#' | '?' if at == At::Decimals => {
                    simple.decimals.push(c);
                    None
                }
                '$' | '-' | '+' | '(' | ')' | ':' | ' ' | '%' | '!' | '^' | '&' | '\'' | '~'
                | '{' | '}' | '<' | '>' | '=' => Some(c.to_string()),
                c if !c.is_ascii() => Some(c.to_string()),
                _ => return None,
            };
            if let Some(text) = text {
                match at {
                    At::Prefix => simple.prefix.push_str(&text),
                    _ => {
                        at = At::Suffix;
                        simple.suffix.push_str(&text);
                    }
                }
            }
        }
        let digits = simple.whole.len() + simple.decimals.len();
        (at != At::Prefix && digits > 0).then_some(simple)
    }

    /// `value`, already scaled and rounded to the decimals shown.
    fn show(&self, value: f64) -> String {
        let digits = fixed_15(value.abs(), self.decimals.len());
        let (whole, decimals) = digits.split_once('.').unwrap_or((&digits, ""));
        let whole = if whole == "0" { "" } else { whole };
        let mut out = String::with_capacity(digits.len() + self.prefix.len() + 8);
        if value < 0.0 {
            out.push('-');
        }
        out.push_str(&self.prefix);
        // The whole part: placeholders without a digit, then the digits.
        let missing = self.whole.len().saturating_sub(whole.len());
        let mut shown: Vec<char> = Vec::with_capacity(self.whole.len() + whole.len());
        for &placeholder in &self.whole[..missing] {
            match placeholder {
                '0' => shown.push('0'),
                '?' => shown.push(' '),
                _ => {}
            }
        }
        shown.extend(whole.chars());
        let numeric = shown.iter().filter(|c| c.is_ascii_digit()).count();
        let mut seen = 0;
        for c in shown {
            out.push(c);
            if c.is_ascii_digit() {
                seen += 1;
                let left = numeric - seen;
                if self.thousands && left > 0 && left % 3 == 0 {
                    out.push(',');
                }
            }
        }
        // The decimals: trailing zeros at `#` go, at `?` become spaces.
        let mut fraction: Vec<char> = decimals.chars().collect();
        for i in (0..fraction.len()).rev() {
            match (fraction[i], self.decimals[i]) {
                ('0', '#') => {
                    fraction.pop();
                }
                ('0', '?') => fraction[i] = ' ',
                _ => break,
            }
        }
        if !fraction.is_empty() {
            out.push('.');
            out.extend(fraction);
        }
        out.push_str(&self.suffix);
        out
    }
}

/// `value` (not negative) with `decimals` decimals, its digits past the
/// 15th significant one shown as zeros, as LibreOffice shows a double
/// (123456789.123 with ten decimals is `123456789.1230000000`, not the
/// binary fraction's `…1229999810`).
fn fixed_15(value: f64, decimals: usize) -> String {
    let exact = format!("{value:.decimals$}");
    let significant = exact
        .trim_start_matches(['0', '.'])
        .bytes()
        .filter(u8::is_ascii_digit)
        .count();
    if significant <= 15 {
        return exact;
    }
    let (digits, exponent) = fifteen_digits(value);
    let exponent = i64::from(exponent);
    // The digit for 10^power: one of the 15, or a zero around them.
    let digit = |power: i64| {
        let at = exponent - power;
        usize::try_from(at)
            .ok()
            .and_then(|at| digits.get(at))
            .map_or('0', |&d| char::from(d))
    };
    let mut out: String = (0..=exponent.max(0)).rev().map(digit).collect();
    if decimals > 0 {
        out.push('.');
        out.extend((1..=decimals as i64).map(|place| digit(-place)));
    }
    out
}

/// `##0.0E+0`: the exponent a multiple of the whole digits' count (3), the
/// mantissa with so many decimals, the exponent with at least so many
/// digits, and its `+` when the code has `E+`.
#[derive(Debug, Clone)]
struct Engineering {
    group: i32,
    decimals: usize,
    exponent_digits: usize,
    plus: bool,
}

impl Engineering {
    /// `magnitude / 10^exponent` with the code's decimals, a half rounded
    /// up (`1.25` is `1.3`, where IronCalc gives `1.2`). A negative power
    /// multiplies, so that `0.125` is `1.25` exactly.
    fn mantissa(&self, magnitude: f64, exponent: i32) -> String {
        let mantissa = if exponent < 0 {
            magnitude * 10_f64.powi(-exponent)
        } else {
            magnitude / 10_f64.powi(exponent)
        };
        let factor = 10_f64.powi(self.decimals as i32);
        format!("{:.*}", self.decimals, (mantissa * factor).round() / factor)
    }

    /// Only a bare code: digits, an optional point and decimals, `E±`, digits.
    fn parse(code: &str) -> Option<Engineering> {
        let (mantissa, exponent) = code.split_once(['E', 'e'])?;
        let (whole, decimals) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let placeholder = |c: char| matches!(c, '0' | '#' | '?');
        let plus = exponent.starts_with('+');
        let exponent = exponent.strip_prefix(['+', '-'])?;
        let bare = !whole.is_empty()
            && whole.chars().all(placeholder)
            && decimals.chars().all(placeholder)
            && !exponent.is_empty()
            && exponent.chars().all(placeholder);
        let group = match whole {
            "0" => 1,
            _ if whole.len() > 1 && whole.starts_with('#') => whole.len() as i32,
            _ => return None,
        };
        bare.then_some(Engineering {
            group,
            decimals: decimals.len(),
            exponent_digits: exponent.len(),
            plus,
        })
    }

    fn show(&self, value: f64) -> String {
        let sign = if value < 0.0 { "-" } else { "" };
        let magnitude = value.abs();
        let mut exponent = if magnitude == 0.0 {
            0
        } else {
            (magnitude.log10().floor() as i32).div_euclid(self.group) * self.group
        };
        let mut mantissa = self.mantissa(magnitude, exponent);
        if mantissa.parse::<f64>().unwrap_or(0.0) >= 10_f64.powi(self.group) {
            exponent += self.group;
            mantissa = self.mantissa(magnitude, exponent);
        }
        let exponent_sign = match (exponent < 0, self.plus) {
            (true, _) => "-",
            (false, true) => "+",
            (false, false) => "",
        };
        format!(
            "{sign}{mantissa}E{exponent_sign}{:0width$}",
            exponent.abs(),
            width = self.exponent_digits
        )
    }
}

impl Digits {
    fn new(code: String) -> Digits {
        let mut decimals = 0;
        let mut in_decimals = false;
        let mut only_hashes = true;
        let mut scientific = false;
        let mut percent = 0;
        let mut thousands = 0;
        let mut out = String::with_capacity(code.len());
        let mut whole = String::with_capacity(code.len());
        let mut chars = code.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '"' => {
                    out.push(c);
                    whole.push(c);
                    for c in chars.by_ref() {
                        out.push(c);
                        whole.push(c);
                        if c == '"' {
                            break;
                        }
                    }
                    continue;
                }
                '\\' | '_' => {
                    out.push(c);
                    whole.push(c);
                    if let Some(next) = chars.next() {
                        out.push(next);
                        whole.push(next);
                    }
                    continue;
                }
                '.' if !in_decimals && !scientific => {
                    in_decimals = true;
                    out.push(c);
                    continue;
                }
                '0' | '#' | '?' if in_decimals && !scientific => {
                    decimals += 1;
                    only_hashes &= c == '#';
                    out.push(c);
                    continue;
                }
                'E' | 'e' => scientific = true,
                '%' => percent += 1,
                ',' => {
                    // Commas right after the digits, with no digit after
                    // them, divide by a thousand each.
                    let next = chars.peek().copied();
                    if !matches!(next, Some('0' | '#' | '?' | ',')) && !scientific {
                        thousands += 1;
                        // Earlier commas in the run divide too.
                        while out.ends_with(',') {
                            out.pop();
                            whole.pop();
                            thousands += 1;
                        }
                        continue;
                    }
                }
                _ => {}
            }
            if in_decimals && !matches!(c, '0' | '#' | '?') {
                in_decimals = false;
            }
            out.push(c);
            whole.push(c);
        }
        let engineering = Engineering::parse(&out);
        let simple = Simple::parse(&out);
        Digits {
            whole_code: (decimals > 0 && only_hashes && !scientific).then_some(whole),
            code: out,
            decimals: (!scientific).then_some(decimals),
            scale: 100_f64.powi(percent) / 1000_f64.powi(thousands),
            percent,
            engineering,
            simple,
        }
    }

    fn show(&self, value: f64) -> String {
        let mut scaled = value * self.scale;
        let mut code = &self.code;
        // Whole numbers past 1E+15 are whole in binary too: left alone.
        if let Some(decimals) = self.decimals.filter(|_| scaled.abs() < 1e15) {
            // Rounded at 15 significant digits first, as the value's
            // decimal form reads (1.005 is 1.005, not 1.00499…).
            // (Only a value near a half needs the slower exact reading.)
            let factor = 10_f64.powi(decimals);
            let shifted = scaled.abs() * factor;
            let rounded = if (shifted.fract() - 0.5).abs() < 1e-6 {
                round_decimal(scaled.abs(), decimals)
            } else {
                shifted.round() / factor
            };
            scaled = rounded.copysign(scaled);
        }
        if let Some(simple) = &self.simple {
            return simple.show(scaled);
        }
        if scaled.fract() == 0.0
            && let Some(whole) = &self.whole_code
        {
            code = whole;
        }
        if let Some(engineering) = &self.engineering {
            return engineering.show(scaled);
        }
        // IronCalc scales a `%` itself. It is given the magnitude, and the
        // sign goes in front of everything (`-$1.00`, `-Total: 1`), as in
        // LibreOffice: IronCalc drops the sign of -1 shown without decimals.
        let given = scaled.abs() / 100_f64.powi(self.percent);
        // A code from a file is anyone's: should IronCalc fail on one (it
        // indexes its digits), the number shows as General instead.
        let shown = std::panic::catch_unwind(|| format_number(given, code, locale()).text);
        let Ok(shown) = shown else {
            return general(value);
        };
        if shown == "#VALUE!" {
            general(value)
        } else if scaled < 0.0 {
            format!("-{shown}")
        } else {
            shown
        }
    }
}

/// The 15 significant digits of `value`'s magnitude (ASCII, the first not
/// 0 unless `value` is) and the power of ten of the first. As LibreOffice,
/// they are the shortest decimal that reads back as `value` rounded, a
/// half up: 2.356194490192345 (as it reads back) is `…92345` and so `…9235`, where its exact
/// binary value (`…923448369…`) would round down.
fn fifteen_digits(value: f64) -> (Vec<u8>, i32) {
    let shortest = format!("{:e}", value.abs());
    let (mantissa, exponent) = shortest.split_once('e').unwrap_or((&shortest, "0"));
    let mut exponent: i32 = exponent.parse().unwrap_or(0);
    let mut digits: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).collect();
    if digits.len() > 15 {
        let up = digits[15] >= b'5';
        digits.truncate(15);
        if up {
            match digits.iter().rposition(|&d| d != b'9') {
                Some(at) => {
                    digits[at] += 1;
                    digits[at + 1..].fill(b'0');
                }
                None => {
                    digits.fill(b'0');
                    digits[0] = b'1';
                    exponent += 1;
                }
            }
        }
    }
    digits.resize(15, b'0');
    (digits, exponent)
}

/// `magnitude` rounded to `decimals` decimals, a half up, as its 15
/// significant digits read: `1.005` (1.00499999999999989…) to 2 is `1.01`.
fn round_decimal(magnitude: f64, decimals: i32) -> f64 {
    let (digits, exponent) = fifteen_digits(magnitude);
    // How many of the digits stay.
    let keep = exponent + 1 + decimals;
    if keep < 0 || keep as usize >= digits.len() {
        let factor = 10_f64.powi(decimals);
        return (magnitude * factor).round() / factor;
    }
    let keep = keep as usize;
    let mut kept: u64 = digits[..keep]
        .iter()
        .fold(0, |n, d| n * 10 + u64::from(d - b'0'));
    if digits[keep] >= b'5' {
        kept += 1;
    }
    format!("{kept}e{}", -decimals).parse().unwrap_or(magnitude)
}

// ---------------------------------------------------------------------------
// General

/// A number as LibreOffice's General shows it.
fn general(value: f64) -> String {
    if value == 0.0 {
        return "0".to_owned();
    }
    let magnitude = value.abs();
    // Most numbers are short: their shortest decimal form is General's.
    if (1e-9..1e15).contains(&magnitude) {
        if value.fract() == 0.0 {
            return format!("{}", value as i64);
        }
        let shortest = value.to_string();
        let significant = shortest
            .trim_start_matches(['-', '0', '.'])
            .bytes()
            .filter(u8::is_ascii_digit)
            .count();
        let decimals = shortest.split_once('.').map_or(0, |(_, d)| d.len());
        if significant <= 15 && decimals as i32 <= most_decimals(magnitude) {
            return shortest;
        }
    }
    // Rounded to 15 significant digits, whose exponent says which form
    // shows them.
    let (mut digits, exponent) = fifteen_digits(value);
    while digits.len() > 1 && digits.last() == Some(&b'0') {
        digits.pop();
    }
    let digits = String::from_utf8(digits).unwrap_or_default();
    let decimals = digits.len() as i32 - 1 - exponent;
    let sign = if value < 0.0 { "-" } else { "" };
    // Whole numbers from 2^53, where doubles skip integers, are shown in
    // scientific notation (9007199254740992 is 9.00719925474099E+015).
    if magnitude >= 9_007_199_254_740_992.0 || exponent < -9 || decimals > most_decimals(magnitude)
    {
        let (first, rest) = digits.split_at(1);
        let point = if rest.is_empty() { "" } else { "." };
        let exponent_sign = if exponent < 0 { '-' } else { '+' };
        let width = if exponent < 0 { 2 } else { 3 };
        return format!(
            "{sign}{first}{point}{rest}E{exponent_sign}{:0width$}",
            exponent.abs()
        );
    }
    if exponent >= 15 {
        // Whole numbers below 2^53 are shown with every digit.
        return format!("{value:.0}");
    }
    let plain = match usize::try_from(exponent) {
        // 123.45: the digits with a point after the whole part's.
        Ok(whole) if whole + 1 >= digits.len() => format!("{digits:0<width$}", width = whole + 1),
        Ok(whole) => format!("{}.{}", &digits[..=whole], &digits[whole + 1..]),
        // 0.00123: zeros before the digits.
        Err(_) => format!("0.{}{digits}", "0".repeat((-exponent - 1) as usize)),
    };
    format!("{sign}{plain}")
}

/// The most decimals General shows a number of `magnitude` with before it
/// turns to scientific notation, as LibreOffice: 20, and 16 below 10^-4
/// (`0.0000035068523895`, but `3.50685238956922E-06`).
fn most_decimals(magnitude: f64) -> i32 {
    if magnitude < 1e-4 { 16 } else { 20 }
}

// ---------------------------------------------------------------------------
// Dates and times

#[derive(Debug, Clone, PartialEq)]
enum DatePiece {
    Text(String),
    Year2,
    Year4,
    Month,
    Month2,
    MonthShort,
    MonthLong,
    MonthLetter,
    Day,
    Day2,
    DayShort,
    DayLong,
    Hour(usize),
    Minute(usize),
    Second(usize),
    /// Fractions of a second, in this many digits.
    SecondFraction(usize),
    /// `[h]`, `[m]`, `[s]`: hours, minutes or seconds elapsed, at least
    /// this many digits.
    ElapsedHours(usize),
    ElapsedMinutes(usize),
    ElapsedSeconds(usize),
    AmPm,
    AP,
}

/// The pieces of a date or time code (already without conditions and
/// colours). `m` is a minute right after an hour or before a second, else
/// a month.
fn date_pieces(code: &str) -> Vec<DatePiece> {
    let chars: Vec<char> = code.chars().collect();
    let mut pieces = Vec::new();
    let mut i = 0;
    let run = |i: usize, c: char| {
        chars[i..]
            .iter()
            .take_while(|x| x.eq_ignore_ascii_case(&c))
            .count()
    };
    while i < chars.len() {
        let c = chars[i];
        let lower = c.to_ascii_lowercase();
        match lower {
            '"' => {
                let text: String = chars[i + 1..].iter().take_while(|&&c| c != '"').collect();
                i += text.chars().count() + 2;
                pieces.push(DatePiece::Text(text));
            }
            '\\' => {
                if let Some(&next) = chars.get(i + 1) {
                    pieces.push(DatePiece::Text(next.to_string()));
                }
                i += 2;
            }
            '_' => {
                pieces.push(DatePiece::Text(" ".into()));
                i += 2;
            }
            '[' => {
                let inner: String = chars[i + 1..].iter().take_while(|&&c| c != ']').collect();
                i += inner.chars().count() + 2;
                let n = inner.len();
                pieces.push(match inner.chars().next().map(|c| c.to_ascii_lowercase()) {
                    Some('h') => DatePiece::ElapsedHours(n),
                    Some('m') => DatePiece::ElapsedMinutes(n),
                    _ => DatePiece::ElapsedSeconds(n),
                });
            }
            'y' => {
                let n = run(i, c);
                i += n;
                pieces.push(if n <= 2 {
                    DatePiece::Year2
                } else {
                    DatePiece::Year4
                });
            }
            'd' => {
                let n = run(i, c);
                i += n;
                pieces.push(match n {
                    1 => DatePiece::Day,
                    2 => DatePiece::Day2,
                    3 => DatePiece::DayShort,
                    _ => DatePiece::DayLong,
                });
            }
            'h' => {
                let n = run(i, c);
                i += n;
                pieces.push(DatePiece::Hour(n.min(2)));
            }
            's' => {
                let n = run(i, c);
                i += n;
                pieces.push(DatePiece::Second(n.min(2)));
                if chars.get(i) == Some(&'.') {
                    let zeros = chars[i + 1..].iter().take_while(|&&c| c == '0').count();
                    if zeros > 0 {
                        i += zeros + 1;
                        pieces.push(DatePiece::SecondFraction(zeros));
                    }
                }
            }
            'm' => {
                let n = run(i, c);
                i += n;
                pieces.push(match n {
                    1 => DatePiece::Month,
                    2 => DatePiece::Month2,
                    3 => DatePiece::MonthShort,
                    5 => DatePiece::MonthLetter,
                    _ => DatePiece::MonthLong,
                });
            }
            'a' => {
                let rest: String = chars[i..].iter().take(5).collect::<String>();
                if rest.eq_ignore_ascii_case("am/pm") {
                    i += 5;
                    pieces.push(DatePiece::AmPm);
                } else if rest.to_ascii_lowercase().starts_with("a/p") {
                    i += 3;
                    pieces.push(DatePiece::AP);
                } else {
                    i += 1;
                    pieces.push(DatePiece::Text(c.to_string()));
                }
            }
            '@' => i += 1,
            _ => {
                i += 1;
                pieces.push(DatePiece::Text(c.to_string()));
            }
        }
    }
    minutes_by_context(&mut pieces);
    pieces
}

/// A month token right after an hour, or right before a second, is minutes.
fn minutes_by_context(pieces: &mut [DatePiece]) {
    let significant: Vec<usize> = (0..pieces.len())
        .filter(|&i| !matches!(pieces[i], DatePiece::Text(_)))
        .collect();
    for (k, &i) in significant.iter().enumerate() {
        let digits = match pieces[i] {
            DatePiece::Month => 1,
            DatePiece::Month2 => 2,
            _ => continue,
        };
        let after_hour = k > 0
            && matches!(
                pieces[significant[k - 1]],
                DatePiece::Hour(_) | DatePiece::ElapsedHours(_)
            );
        let before_second = significant
            .get(k + 1)
            .is_some_and(|&j| matches!(pieces[j], DatePiece::Second(_)));
        if after_hour || before_second {
            pieces[i] = DatePiece::Minute(digits);
        }
    }
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// `serial` (days since 1899-12-30) as the date pieces show it: rounded to
/// the fraction of a second shown, or to the millisecond and then cut to
/// the second.
fn show_date(serial: f64, pieces: &[DatePiece]) -> String {
    let fraction_digits = pieces
        .iter()
        .find_map(|p| match p {
            DatePiece::SecondFraction(n) => Some((*n).min(3)),
            _ => None,
        })
        .unwrap_or(0);
    let ticks_per_second = 10_i64.pow(fraction_digits as u32);
    let ticks_per_day = 86_400 * ticks_per_second;
    let elapsed = pieces.iter().any(|p| {
        matches!(
            p,
            DatePiece::ElapsedHours(_)
                | DatePiece::ElapsedMinutes(_)
                | DatePiece::ElapsedSeconds(_)
        )
    });
    // As LibreOffice 7.4 shows them: fractions of a second shown, and a
    // duration (`[h]:mm:ss`), are rounded (431.991 s is 0:07:12); a clock
    // time's whole seconds are cut (0:07:11 with `h:mm:ss`, and
    // 299.99999998 s is 0:04:59), but not below a number 15 digits round up.
    let scaled = serial * ticks_per_day as f64;
    let ticks = if fraction_digits > 0 || elapsed {
        scaled.round()
    } else {
        approx_floor(scaled)
    };
    if ticks.abs() > 1e17 {
        return "#NUM!".to_owned();
    }
    let ticks = ticks as i64;
    let days = ticks.div_euclid(ticks_per_day);
    // A duration counts its magnitude, its sign in front; a clock time is
    // the time of its day.
    let of_day = match elapsed {
        true => ticks.abs(),
        false => ticks.rem_euclid(ticks_per_day),
    };
    let seconds_of_day = of_day / ticks_per_second;
    let (hour, minute, second) = (
        seconds_of_day / 3600 % 24,
        seconds_of_day % 3600 / 60,
        seconds_of_day % 60,
    );
    let total_seconds = ticks.abs() / ticks_per_second;
    let sign = if ticks < 0 { "-" } else { "" };
    let twelve_hours = pieces
        .iter()
        .any(|p| matches!(p, DatePiece::AmPm | DatePiece::AP));
    let (year, month, day) = civil_from_days(days - 25_569);
    let weekday = (days + 6).rem_euclid(7) as usize; // serial 0 was a Saturday
    let mut out = String::with_capacity(24);
    use std::fmt::Write;
    for piece in pieces {
        let _ = match piece {
            DatePiece::Text(text) => {
                out.push_str(text);
                Ok(())
            }
            DatePiece::Year2 => write!(out, "{:02}", year.rem_euclid(100)),
            DatePiece::Year4 => write!(out, "{year}"),
            DatePiece::Month => write!(out, "{month}"),
            DatePiece::Month2 => write!(out, "{month:02}"),
            DatePiece::MonthShort => write!(out, "{}", &MONTHS[month as usize - 1][..3]),
            DatePiece::MonthLong => write!(out, "{}", MONTHS[month as usize - 1]),
            DatePiece::MonthLetter => write!(out, "{}", &MONTHS[month as usize - 1][..1]),
            DatePiece::Day => write!(out, "{day}"),
            DatePiece::Day2 => write!(out, "{day:02}"),
            DatePiece::DayShort => write!(out, "{}", &DAYS[weekday][..3]),
            DatePiece::DayLong => write!(out, "{}", DAYS[weekday]),
            DatePiece::Hour(width) => {
                let hour = if twelve_hours {
                    (hour + 11) % 12 + 1
                } else {
                    hour
                };
                write!(out, "{hour:0width$}")
            }
            DatePiece::Minute(width) => write!(out, "{minute:0width$}"),
            DatePiece::Second(width) => write!(out, "{second:0width$}"),
            DatePiece::SecondFraction(width) => {
                let fraction = of_day % ticks_per_second;
                let shown = (*width).min(fraction_digits);
                write!(out, ".{fraction:0shown$}")
            }
            DatePiece::ElapsedHours(width) => {
                write!(out, "{sign}{:0width$}", total_seconds / 3600)
            }
            DatePiece::ElapsedMinutes(width) => {
                write!(out, "{sign}{:0width$}", total_seconds / 60)
            }
            DatePiece::ElapsedSeconds(width) => write!(out, "{sign}{total_seconds:0width$}"),
            DatePiece::AmPm => {
                out.push_str(if hour < 12 { "AM" } else { "PM" });
                Ok(())
            }
            // LibreOffice shows `A/P` in lower case.
            DatePiece::AP => {
                out.push(if hour < 12 { 'a' } else { 'p' });
                Ok(())
            }
        };
    }
    out
}

/// The whole number below `x`, unless `x` is within its 15 significant
/// digits of the one above (a time stored as 35999.99999999999 seconds is
/// 10:00:00), as LibreOffice cuts.
fn approx_floor(x: f64) -> f64 {
    let nearest = x.round();
    if (x - nearest).abs() <= x.abs() * 1e-14 {
        nearest
    } else {
        x.floor()
    }
}

// ---------------------------------------------------------------------------
// Fractions

/// `# ?/?`, `?/8`: a whole part (when the code has one), a numerator and a
/// denominator of at most so many digits, or a fixed denominator.
#[derive(Debug, Clone)]
struct Fraction {
    /// The code's text before the whole part's digits, and between it and
    /// the numerator (`" "`), when it has a whole part.
    prefix: String,
    whole: Option<String>,
    numerator_width: usize,
    denominator: Denominator,
    denominator_width: usize,
    suffix: String,
}

#[derive(Debug, Clone)]
enum Denominator {
    /// At most this many digits.
    Digits(u32),
    Fixed(u64),
}

impl Fraction {
    /// A fraction code: `[prefix][whole digits][sep]numerator/denominator[suffix]`.
    fn parse(code: &str) -> Option<Fraction> {
        let (left, right) = code.split_once('/')?;
        let is_digit = |c: char| matches!(c, '0' | '#' | '?');
        let right_digits: String = right
            .chars()
            .take_while(|&c| is_digit(c) || c.is_ascii_digit())
            .collect();
        let suffix = right[right_digits.len()..].to_owned();
        let denominator = if right_digits.chars().all(|c| c.is_ascii_digit()) {
            Denominator::Fixed(right_digits.parse().ok().filter(|&d| d > 0)?)
        } else {
            Denominator::Digits(right_digits.len().min(4) as u32)
        };
        // The numerator: the digits right before '/'.
        let numerator_len = left.chars().rev().take_while(|&c| is_digit(c)).count();
        let (rest, numerator) = left.split_at(left.len() - numerator_len);
        let mut whole = None;
        let mut prefix = rest.to_owned();
        // A whole part: digits, then a separator, before the numerator.
        if let Some(end) = rest.rfind(is_digit) {
            let start = rest[..=end]
                .rfind(|c: char| !is_digit(c))
                .map_or(0, |i| i + 1);
            prefix = rest[..start].to_owned();
            whole = Some(rest[end + 1..].to_owned());
        }
        // A quoted or escaped `0`, `#`, `?` or `/` would be read for a
        // digit or the bar: such a code is shown as digits instead.
        if numerator.is_empty() || quotes_a_placeholder(code) {
            return None;
        }
        Some(Fraction {
            prefix: shown(&prefix),
            whole: whole.as_deref().map(shown),
            numerator_width: numerator.len(),
            denominator,
            denominator_width: right_digits.len(),
            suffix: shown(&suffix),
        })
    }

    fn show(&self, value: f64) -> String {
        let sign = if value < 0.0 { "-" } else { "" };
        let magnitude = value.abs();
        let (mut whole, part) = match self.whole {
            Some(_) => (magnitude.trunc(), magnitude.fract()),
            None => (0.0, magnitude),
        };
        let (mut numerator, denominator) = match self.denominator {
            Denominator::Fixed(d) => ((part * d as f64).round() as u64, d),
            Denominator::Digits(digits) => best_fraction(part, 10_u64.pow(digits) - 1),
        };
        if self.whole.is_some() && numerator == denominator {
            whole += 1.0;
            numerator = 0;
        }
        // LibreOffice leaves a fixed denominator's digits out of the blank.
        let blank_width = match self.denominator {
            Denominator::Fixed(_) => self.numerator_width + 1,
            Denominator::Digits(_) => self.numerator_width + 1 + self.denominator_width,
        };
        let blank = " ".repeat(blank_width);
        let fraction = if numerator == 0 && self.whole.is_some() {
            blank
        } else {
            format!(
                "{numerator:>nw$}/{denominator:<dw$}",
                nw = self.numerator_width,
                dw = self.denominator_width
            )
        };
        match &self.whole {
            Some(separator) => {
                let whole = if whole == 0.0 && numerator != 0 {
                    String::new()
                } else {
                    format!("{whole:.0}")
                };
                format!(
                    "{}{sign}{whole}{separator}{fraction}{}",
                    self.prefix, self.suffix
                )
            }
            None => format!("{}{sign}{fraction}{}", self.prefix, self.suffix),
        }
    }
}

/// The fraction nearest `value` (0 ≤ value < 1, or any for no whole part)
/// with a denominator of at most `max`.
fn best_fraction(value: f64, max: u64) -> (u64, u64) {
    let mut best = (value.round() as u64, 1_u64);
    let mut best_error = (value - best.0 as f64).abs();
    for denominator in 2..=max.max(1) {
        let numerator = (value * denominator as f64).round();
        let error = (value - numerator / denominator as f64).abs();
        if error < best_error - 1e-12 {
            best = (numerator as u64, denominator);
            best_error = error;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(code: &str, value: f64) -> String {
        NumberFormat::parse(Some(code)).show(value)
    }

    #[test]
    fn general_is_shown_as_libreoffice_shows_it() {
        for (value, expected) in [
            (1.0 / 3.0, "0.333333333333333"),
            (1e20, "1E+020"),
            (1.23e-10, "1.23E-10"),
            (1234567890123456.0, "1234567890123456"),
            (1e16, "1E+016"),
            (0.00001, "0.00001"),
            (1.2345678901234567e-7, "1.23456789012346E-07"),
            (-1200.0, "-1200"),
            (0.1 + 0.2, "0.3"),
            // Shown by LibreOffice 7.4 (`getString()` through UNO).
            (2.356194490192345, "2.35619449019235"),
            (-2.356194490192345, "-2.35619449019235"),
            (3.50685238956922e-6, "3.50685238956922E-06"),
            (0.0000035068523895, "0.0000035068523895"),
            (0.9999999999999999, "1"),
            (123.45678901234568, "123.456789012346"),
        ] {
            assert_eq!(general(value), expected, "{value}");
        }
    }

    #[test]
    fn simple_codes_show_what_ironcalc_shows() {
        let codes = [
            "0",
            "0.00",
            "#,##0",
            "#,##0.000",
            "\"$\"#,##0.00",
            "0.0%",
            "00000",
            "#,##0_)",
            "(#,##0)",
            "0\" units\"",
            "#,###",
        ];
        let values = [
            0.0,
            1.0,
            -1.0,
            0.5,
            2.5,
            1234.5,
            -1234.567,
            0.0042,
            999.9996,
            1e9,
            123456789.125,
        ];
        for code in codes {
            let mut digits = Digits::new(code.to_owned());
            assert!(digits.simple.is_some(), "{code}");
            for value in values {
                let simple = digits.show(value);
                let saved = digits.simple.take();
                assert_eq!(simple, digits.show(value), "{code} {value}");
                digits.simple = saved;
            }
        }
        for code in ["0.0E+00", "# ?/?", "[h]:mm", "@", "\"text\""] {
            assert_eq!(Simple::parse(code), None, "{code}");
        }
    }

    #[test]
    fn general_and_system_formats_show_as_libreoffice_shows_them() {
        for (code, value, expected) in [
            ("General\" kg\"", 12.0, "12 kg"),
            ("\"$\"General", 12.0, "$12"),
            ("General;[Red]-General", -3.25, "-3.25"),
            ("General;-General", -3.25, "-3.25"),
            ("General;(General)", -3.25, "(3.25)"),
            ("General", -3.25, "-3.25"),
            ("#,##0.00_);(#,##0.00)", 1234.5, "1,234.50 "),
            ("#,##0.00_);[Red](#,##0.00)", -1234.5, "(1,234.50)"),
            (
                "[$-F800]dddd, mmmm dd, yyyy",
                45296.0,
                "Friday, January 5, 2024",
            ),
            ("[$-F400]h:mm:ss AM/PM", 0.75, "6:00:00 PM"),
        ] {
            assert_eq!(show(code, value), expected, "{code} {value}");
        }
        assert!(NumberFormat::parse(Some("General")).is_general());
        assert!(!NumberFormat::parse(Some("General\" kg\"")).is_general());
    }

    /// Each shown by LibreOffice 7.4 (`getString()` of the cell, through
    /// UNO), from a black-box comparison on the corpus.
    #[test]
    fn text_sections_and_fraction_literals_show_as_libreoffice_shows_them() {
        for (code, value, expected) in [
            ("0.00;@", -1.2, "-1.20"),
            ("[h]:mm:ss;@", -1.2, "-28:48:00"),
            ("0.00;@", 1.2, "1.20"),
            (r"#\ ?/2", 12.3, "12 1/2"),
            (r#"#"  "?/?"#, 1.2, "1  1/5"),
            (r##""x"# ?/?"##, 1.2, "x1 1/5"),
        ] {
            assert_eq!(show(code, value), expected, "{code} {value}");
        }
        let code = "[Red][<=-25]General;[Blue][>=25]General;[Green]General;[Yellow]General";
        assert_eq!(NumberFormat::parse(Some(code)).show_text("foo"), "foo");
    }

    /// Each shown by LibreOffice 7.4 (an xlsx converted to CSV).
    #[test]
    fn digits_past_the_fifteenth_are_zeros_as_libreoffice_shows_them() {
        for (code, value, expected) in [
            ("0.0000000000", 123456789.123, "123456789.1230000000"),
            ("#,##0", 123456789012345678.0, "123,456,789,012,346,000"),
            ("0", 123456789012345678.0, "123456789012346000"),
            ("0.00000000000000000", 0.1 + 0.2, "0.30000000000000000"),
            ("0.000000000", 1234567.891234567, "1234567.891234570"),
            ("#,##0.00", 2.5e20, "250,000,000,000,000,000,000.00"),
            ("0.00", 1234.5, "1234.50"),
            ("0.000", 0.000_123_456_789_012_345, "0.000"),
            ("General", 9007199254740992.0, "9.00719925474099E+015"),
            ("General", -9007199254740992.0, "-9.00719925474099E+015"),
            ("General", 9007199254740990.0, "9007199254740990"),
            ("General", 1234567890123456.0, "1234567890123456"),
            ("General", 9999999999999998.0, "1E+016"),
        ] {
            assert_eq!(show(code, value), expected, "{code} {value}");
        }
    }

    /// Each shown by LibreOffice 7.4 (an xlsx converted to CSV).
    #[test]
    fn durations_round_and_times_of_day_cut_as_libreoffice_shows_them() {
        let day = 86_400.0;
        for (code, value, expected) in [
            ("[h]:mm:ss", 431.991 / day, "0:07:12"),
            ("h:mm:ss", 431.991 / day, "0:07:11"),
            ("[h]:mm:ss", 30629.7 / day, "8:30:30"),
            ("h:mm:ss", 30629.7 / day, "8:30:29"),
            ("[h]:mm:ss", 299.99999998 / day, "0:05:00"),
            ("h:mm:ss", 299.99999998 / day, "0:04:59"),
            ("[h]:mm:ss", -0.001, "-0:01:26"),
            ("[h]:mm:ss", -1234.567, "-29629:36:29"),
            ("[h]:mm", -0.25035, "-6:00"),
            ("[h]:mm:ss", -0.5 - 0.6 / day, "-12:00:01"),
            ("[h]:mm", 0.5 + 59.6 / day, "12:01"),
            ("[mm]:ss", 0.999999, "1440:00"),
            ("[ss]", 0.5 + 0.6 / day, "43201"),
            ("h:mm:ss", 1.5 + 0.6 / day, "12:00:00"),
            (
                "yyyy-mm-dd hh:mm:ss",
                45466.5 + 0.6 / day,
                "2024-06-23 12:00:00",
            ),
            ("h:mm:ss", 35999.99999999999 / day, "10:00:00"),
        ] {
            assert_eq!(show(code, value), expected, "{code} {value}");
        }
    }

    #[test]
    fn optional_decimals_show_as_libreoffice_shows_them() {
        for (code, value, expected) in [
            ("#.##", 0.0, ""),
            ("#.##", 0.62963, ".63"),
            ("#.##", -1200.0, "-1200"),
            ("?.??", -1200.0, "-1200.  "),
            ("?.??", 0.0, " .  "),
            ("0.0#", 1234.5, "1234.5"),
            ("0.0#", 0.0, "0.0"),
            ("0.###", 3.0, "3"),
            ("#,##0.0#", 1234567.891, "1,234,567.89"),
        ] {
            assert_eq!(show(code, value), expected, "{code} {value}");
        }
    }

    #[test]
    fn any_code_shows_any_number_without_panicking() {
        let codes = [
            "",
            ";",
            ";;;;;",
            "[",
            "[<",
            "[<1",
            "[<1]",
            "\"",
            "\\",
            "_",
            "*",
            "0/0",
            "#/#",
            "?/",
            "/",
            "/0",
            "0/",
            "E+",
            "0E",
            "0.0E+",
            "0E-",
            "[h",
            "[$",
            "[$-",
            "[$-]0",
            "[>=1e400]0",
            "[=x]0",
            "0.0.0.0",
            "#,#,#,",
            ",,,,",
            "%%%%0",
            "0000000000000000000000.0000000000000000000000",
            "# ????/????",
            "0 0/99999",
            "?/?;?/?",
            "ddddd mmmmmm yyyyy",
            "[hhhhhhhhhhhh]",
            "[s].000000",
            "ss.0000000000",
            "a/p",
            "am/pm",
            "A",
            "@;@;@;@",
            "General;General",
            "0;-0;;@",
            "\"€\"* #,##0.00_-",
            "[Red][<=100]0;[Blue][>100]0",
            "[$€-407] #,##0.00",
            "0.0E+0E+0",
            "#0.#E-#",
            "##0.0E+0",
            "00.00E+00",
            "[mm]:ss.00",
            "h:mm:ss.000 AM/PM",
            "m",
            "mm",
            "d/m",
        ];
        let values = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            -0.5,
            1e-300,
            -1e-300,
            1e300,
            -1e300,
            1e16,
            45466.5,
            -45466.5,
            2958465.99999,
            123456789012345680.0,
            f64::MAX,
            f64::MIN_POSITIVE,
            f64::NAN,
            f64::INFINITY,
        ];
        for code in codes {
            let format = NumberFormat::parse(Some(code));
            for value in values {
                let _ = format.show(value);
            }
        }
    }

    #[test]
    fn times_are_cut_to_the_unit_shown() {
        assert_eq!(show("h:mm", 36526.99999), "23:59");
        assert_eq!(show("yyyy-mm-dd hh:mm:ss", 45466.5), "2024-06-23 12:00:00");
        assert_eq!(show("[h]:mm:ss", 1.5), "36:00:00");
        assert_eq!(show("mm:ss.0", 36526.99999), "59:59.1");
        assert_eq!(show("d-mmm-yy", 0.0), "30-Dec-99");
    }
}
