//! The plain-text form of a highlighted answer, for terminals: unsupported pieces as `[!…]`,
//! doubtful ones as `[?…]`, neighbouring pieces of one level in one bracket; supported and
//! unscored text as it is. Units not placed in the answer follow on lines of their own
//! (`[?] not found in the answer: …`), when doubtful or unsupported.

use super::marks::{lowest, pieces, Level, Mark, Options};

fn marker(level: Level) -> Option<char> {
    match level {
        Level::Unsupported => Some('!'),
        Level::Doubtful => Some('?'),
        Level::Supported | Level::Unscored => None,
    }
}

/// The highlighted answer as text (module docs).
pub fn render(response: &str, marks: &[Mark], o: &Options) -> String {
    let chars: Vec<char> = response.chars().collect();
    let mut out = String::new();
    let mut open: Option<char> = None;
    for (a, b, covering) in pieces(chars.len(), marks) {
        let m = if covering.is_empty() {
            None
        } else {
            marker(o.level(lowest(marks, &covering)))
        };
        if m != open {
            if open.is_some() {
                out.push(']');
            }
            if let Some(c) = m {
                out.push('[');
                out.push(c);
            }
            open = m;
        }
        out.extend(&chars[a..b]);
    }
    if open.is_some() {
        out.push(']');
    }
    for m in marks.iter().filter(|m| m.span.is_none()) {
        if let Some(c) = marker(o.level(m.score)) {
            let score = m.score.map_or(String::new(), |s| format!(" ({s:.3})"));
            out.push_str(&format!(
                "\n[{c}] not found in the answer: {}{score}",
                m.unit.as_deref().unwrap_or("(unit without text)")
            ));
        }
    }
    out
}
