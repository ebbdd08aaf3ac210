//! A setting as the docs and messages name it ([`Setting`]), and its values: as given by a flag,
//! a variable or the config file ([`Given`], naming its source in errors), typed and checked
//! against the setting's range, and written back as a variable ([`SettingValue`]). The settings
//! themselves are declared in `settings.rs`.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::device::{Device, Precision, StandInMs};

/// One setting as the docs and messages name it.
#[derive(Debug, PartialEq, Eq)]
pub struct Setting {
    /// The field of [`CliOverrides`](super::CliOverrides); the flag is `--` and the field with `-` for `_`.
    pub field: &'static str,
    /// The `--help` value name, when not the field's.
    pub value_name: Option<&'static str>,
    pub env: &'static str,
    /// The config-file key (`group.key` inside an object).
    pub key: &'static str,
    /// What the docs add after the key, e.g. the forms the value takes.
    pub key_note: Option<&'static str>,
    /// The docs' name of the setting.
    pub label: &'static str,
    /// The default as the docs give it.
    pub default: DocDefault,
    /// What the docs add after the default and its range.
    pub note: Option<&'static str>,
    /// The smallest value allowed (numbers).
    pub min: Option<u64>,
    /// The largest value allowed (numbers).
    pub max: Option<u64>,
}

/// A default as the docs give it.
#[derive(Debug, PartialEq, Eq)]
pub enum DocDefault {
    /// A literal, as written in the entry (`"nli"` is shown as code).
    Value(&'static str),
    /// Words: a default computed or decided where the setting is used.
    Text(&'static str),
}

impl Setting {
    pub fn flag(&self) -> String {
        format!("--{}", self.field.replace('_', "-"))
    }

    /// The range as the docs give it: `≥ 1`, `≤ 100`, `1 to 64`.
    pub fn range_doc(&self) -> Option<String> {
        match (self.min, self.max) {
            (Some(lo), Some(hi)) => Some(format!("{lo} to {hi}")),
            (Some(lo), None) => Some(format!("≥ {lo}")),
            (None, Some(hi)) => Some(format!("≤ {hi}")),
            (None, None) => None,
        }
    }

    /// The range as an error's fix gives it: `at least 1`, `at most 100`, `1 to 64`.
    fn range_fix(&self) -> String {
        match (self.min, self.max) {
            (Some(lo), None) => format!("at least {lo}"),
            (None, Some(hi)) => format!("at most {hi}"),
            _ => self.range_doc().unwrap_or_default(),
        }
    }

    /// The docs' default column: the default, its range, the note.
    pub fn default_doc(&self) -> String {
        let default = match self.default {
            DocDefault::Value(v) => match v.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
                Some(s) => format!("`{s}`"),
                None => v.to_string(),
            },
            DocDefault::Text(t) => t.to_string(),
        };
        let range = self
            .range_doc()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default();
        format!("{default}{range}{}", self.note.unwrap_or_default())
    }

    /// `Err` naming the source and the range when `value` is a number outside the range;
    /// `sep` goes between the source and the value (`=` after a variable).
    fn check<T: SettingValue>(&self, value: &T, origin: &str, sep: &str) -> Result<(), String> {
        let Some(n) = value.number() else {
            return Ok(());
        };
        if self.min.is_some_and(|lo| n < lo) || self.max.is_some_and(|hi| n > hi) {
            return Err(format!(
                "{origin}{sep}{n} is out of range: use {}",
                self.range_fix()
            ));
        }
        Ok(())
    }
}

/// A type a setting's value takes: how its variable is written and, for numbers, its range.
pub trait SettingValue {
    /// The value as its variable gives it.
    fn to_env(&self) -> String;
    /// The value as a number, for the range check.
    fn number(&self) -> Option<u64> {
        None
    }
}

impl SettingValue for PathBuf {
    fn to_env(&self) -> String {
        self.display().to_string()
    }
}

impl SettingValue for String {
    fn to_env(&self) -> String {
        self.clone()
    }
}

/// A list as one comma-separated value.
impl SettingValue for Vec<String> {
    fn to_env(&self) -> String {
        self.join(",")
    }
}

impl SettingValue for Device {
    fn to_env(&self) -> String {
        self.as_str().to_string()
    }
}

impl SettingValue for Precision {
    fn to_env(&self) -> String {
        self.as_str().to_string()
    }
}

impl SettingValue for StandInMs {
    fn to_env(&self) -> String {
        self.0.to_string()
    }
}

/// A literal default of a setting's type.
pub trait Literal<L> {
    fn literal(l: L) -> Self;
}

impl Literal<&str> for String {
    fn literal(l: &str) -> String {
        l.to_string()
    }
}

impl Literal<&str> for Device {
    fn literal(l: &str) -> Device {
        Device::parse(l).expect("a device default is a device")
    }
}

impl Literal<&str> for Precision {
    fn literal(l: &str) -> Precision {
        Precision::parse(l).expect("a precision default is a precision")
    }
}

macro_rules! numbers {
    ($($t:ty),*) => {$(
        impl SettingValue for $t {
            fn to_env(&self) -> String {
                self.to_string()
            }
            fn number(&self) -> Option<u64> {
                Some(*self as u64)
            }
        }
        impl Literal<$t> for $t {
            fn literal(l: $t) -> $t {
                l
            }
        }
        impl EnvValue for $t {
            fn from_env(var: &str, v: &str) -> Result<Self, String> {
                v.trim()
                    .parse()
                    .map_err(|_| format!("{var}={v:?} is not a valid non-negative integer"))
            }
        }
    )*};
}
numbers!(usize, u64);

/// A URL or a list of URLs (the config file's `nli_backend.urls`).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum UrlList {
    One(String),
    Many(Vec<String>),
}

/// The list as one comma-separated value, as the flag and the variable give it.
impl From<UrlList> for String {
    fn from(urls: UrlList) -> String {
        match urls {
            UrlList::One(s) => s,
            UrlList::Many(v) => v.join(","),
        }
    }
}

/// Where a setting's value came from; an environment value is parsed when it is used, so that
/// a bad value fails only where the setting matters.
enum Raw<T> {
    Flag(T),
    Env(String),
    File(T),
}

/// A setting's value as its first source gave it.
pub struct Given<T> {
    raw: Raw<T>,
    setting: &'static Setting,
}

/// A type a setting's environment variable is parsed into.
pub trait EnvValue: Sized {
    fn from_env(var: &str, v: &str) -> Result<Self, String>;
}

impl EnvValue for PathBuf {
    fn from_env(_: &str, v: &str) -> Result<Self, String> {
        Ok(PathBuf::from(v))
    }
}

impl EnvValue for String {
    fn from_env(_: &str, v: &str) -> Result<Self, String> {
        Ok(v.to_string())
    }
}

/// The directories a given path is relative to.
pub struct Dirs<'a> {
    /// The working directory (flags and variables).
    pub cwd: &'a Path,
    /// The config file's directory (its paths).
    pub file: &'a Path,
}

/// A type a setting is given in: its value taken from where it was given.
pub trait GivenValue: EnvValue {
    fn from_given(g: Given<Self>, _dirs: &Dirs) -> Result<Self, String> {
        g.value()
    }
}

impl GivenValue for String {}
impl GivenValue for usize {}
impl GivenValue for u64 {}

/// A path, absolute: a flag's or variable's relative to the working directory, the file's to
/// the file's directory.
impl GivenValue for PathBuf {
    fn from_given(g: Given<Self>, dirs: &Dirs) -> Result<Self, String> {
        Ok(g.path(dirs.cwd, dirs.file))
    }
}

impl<T: EnvValue> Given<T> {
    /// The value of the first source that gives one: flag, environment, file.
    pub(super) fn pick(
        flag: Option<T>,
        env: &dyn Fn(&str) -> Option<String>,
        file: Option<T>,
        setting: &'static Setting,
    ) -> Option<Given<T>> {
        let raw = match (flag, env(setting.env), file) {
            (Some(v), _, _) => Raw::Flag(v),
            (None, Some(v), _) => Raw::Env(v),
            (None, None, Some(v)) => Raw::File(v),
            (None, None, None) => return None,
        };
        Some(Given { raw, setting })
    }

    /// The value (an environment value parsed, its error naming the variable).
    pub fn value(self) -> Result<T, String> {
        match self.raw {
            Raw::Flag(v) | Raw::File(v) => Ok(v),
            Raw::Env(v) => T::from_env(self.setting.env, &v),
        }
    }

    /// The value typed by `typed` and checked against the setting's range.
    pub(super) fn checked<U: SettingValue>(
        self,
        typed: impl FnOnce(Given<T>) -> Result<U, String>,
    ) -> Result<U, String> {
        let (setting, origin) = (self.setting, self.origin());
        let sep = if matches!(self.raw, Raw::Env(_)) {
            "="
        } else {
            " "
        };
        let v = typed(self)?;
        setting.check(&v, &origin, sep)?;
        Ok(v)
    }
}

impl<T> Given<T> {
    /// How messages name the source: `--flag`, `VAR` or `config file key`.
    pub fn origin(&self) -> String {
        match self.raw {
            Raw::Flag(_) => self.setting.flag(),
            Raw::Env(_) => self.setting.env.to_string(),
            Raw::File(_) => format!("config file {}", self.setting.key),
        }
    }
}

impl Given<String> {
    /// The value parsed by `parse`, its error prefixed with the source.
    pub fn parse<U>(self, parse: impl FnOnce(&str) -> Result<U, String>) -> Result<U, String> {
        let origin = self.origin();
        let (Raw::Flag(v) | Raw::Env(v) | Raw::File(v)) = self.raw;
        parse(&v).map_err(|e| format!("{origin}: {e}"))
    }

    /// The text as given (e.g. a list of precisions, before it is parsed).
    pub fn text(self) -> String {
        let (Raw::Flag(v) | Raw::Env(v) | Raw::File(v)) = self.raw;
        v
    }
}

impl Given<PathBuf> {
    /// The path, absolute: a flag's or variable's relative to `cwd`, the file's to `file_dir`.
    pub fn path(self, cwd: &Path, file_dir: &Path) -> PathBuf {
        match self.raw {
            Raw::Flag(p) => absolutize(p, cwd),
            Raw::Env(p) => absolutize(PathBuf::from(p), cwd),
            Raw::File(p) => absolutize(p, file_dir),
        }
    }
}

pub(super) fn absolutize(p: PathBuf, base: &Path) -> PathBuf {
    if p.is_absolute() {
        p
    } else {
        base.join(p)
    }
}
