//! Fitting text of the charts (font size 11) into a width: how many characters fit, and
//! lines cut at spaces.

/// A generous width of one character at font size 11 (DejaVu Sans' widest digits are 7 px), so
/// a text cut to [`chars_in`] stays within its room.
const CHAR_PX: f64 = 7.0;

/// How many characters at font size 11 fit in `px` pixels (at least 6).
pub fn chars_in(px: f64) -> usize {
    ((px / CHAR_PX).floor() as usize).max(6)
}

/// `text` cut at spaces into lines of at most `width` characters (a longer word cut anywhere).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let mut word: Vec<char> = word.chars().collect();
        while word.len() > width {
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            lines.push(word.drain(..width).collect());
        }
        let fits = line.chars().count() + 1 + word.len() <= width;
        if !line.is_empty() && !fits {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.extend(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}
