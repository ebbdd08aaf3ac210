//! The [`settings!`] macro, with the small macros it expands through: from each entry of the
//! table in [`super::settings`] it writes the flag, the config-file key, the precedence flag >
//! environment > config file, the typed and range-checked value, the field of `Config` with its
//! default and the entry's `UQ_*` variable. `config/mod.rs` declares this module first, with
//! `#[macro_use]`, so that the table can use the macro; the names the expansion uses (`Setting`,
//! `Given`, `Defaults`, …) are those imported where it is expanded.

/// `Some` of an entry's optional part, `None` when the entry leaves it out.
macro_rules! opt {
    () => {
        None
    };
    ($v:expr) => {
        Some($v)
    };
}

/// The type of a value as given (flag, variable, file): the raw type when the entry parses one.
macro_rules! given_ty {
    ($t:ty) => {
        $t
    };
    ($t:ty, $raw:ty) => {
        $raw
    };
}

/// The type of a file key, when not the given type.
macro_rules! file_ty {
    ($t:ty) => {
        $t
    };
    ($t:ty, $file:ty) => {
        $file
    };
}

/// The type of a decided setting: the value, or an `Option` (`maybe`, `later`).
macro_rules! decided_ty {
    ($t:ty, value) => { $t };
    ($t:ty, computed) => { $t };
    ($t:ty, maybe) => { Option<$t> };
    ($t:ty, later) => { Option<$t> };
}

/// A given value typed: parsed by the entry's function (its error prefixed with the source).
macro_rules! typed {
    ($g:expr, $dirs:expr) => {
        GivenValue::from_given($g, $dirs)
    };
    ($g:expr, $dirs:expr, $parse:path) => {
        $g.parse($parse)
    };
}

/// The value decided from the given one (`Option`) and the default.
macro_rules! decide {
    ($given:expr, $d:expr, $t:ty, value($v:literal)) => {
        $given.unwrap_or_else(|| <$t as Literal<_>>::literal($v))
    };
    ($given:expr, $d:expr, $t:ty, computed($f:path, $text:literal)) => {
        $given.unwrap_or_else(|| $f($d))
    };
    ($given:expr, $d:expr, $t:ty, maybe($f:path, $text:literal)) => {
        $given.or_else(|| $f($d))
    };
    ($given:expr, $d:expr, $t:ty, later($text:literal)) => {
        $given
    };
}

/// The docs' default of an entry.
macro_rules! doc_default {
    (value($v:literal)) => {
        DocDefault::Value(stringify!($v))
    };
    (later($text:literal)) => {
        DocDefault::Text($text)
    };
    ($kind:ident($f:path, $text:literal)) => {
        DocDefault::Text($text)
    };
}

/// A decided value's variable, `None` when it is unset.
macro_rules! env_of {
    ($v:expr, value) => {
        Some($v.to_env())
    };
    ($v:expr, computed) => {
        Some($v.to_env())
    };
    ($v:expr, maybe) => {
        $v.as_ref().map(SettingValue::to_env)
    };
    ($v:expr, later) => {
        $v.as_ref().map(SettingValue::to_env)
    };
}

/// Declares the settings: top-level config-file keys first, then the keys of one object
/// (`@group name: FileType => GroupSettings as Decided`), whose fields name their key
/// (`field / key`) and may take another type in the file (`as Type`, converted with `Into`), then
/// the variables of commands whose flags are their own (`@vars Struct { field: Type { env } }`).
/// An entry's type may be parsed from a string (`Type = String => parse_fn`, its error prefixed
/// with the source). The doc comment is required: it is the `--help` text, which names the
/// variable and, if it names a literal default, the entry's (both checked by `config::tests`).
macro_rules! settings {
    (
        $(
            $(#[doc = $doc:literal])+
            $field:ident: $ty:ty $(= $raw:ty => $parse:path)? {
                $(value_name: $value_name:literal,)?
                env: $env:literal,
                label: $label:literal,
                default: $kind:ident($($default:tt)*),
                $(min: $min:literal,)?
                $(max: $max:literal,)?
                $(note: $note:literal,)?
            }
        )*
        @group $group:ident: $Group:ident => $GroupSettings:ident as $Decided:ty {
            $(
                $(#[doc = $gdoc:literal])+
                $gfield:ident / $gkey:ident: $gty:ty $(= $graw:ty => $gparse:path)? $(as $gfile:ty)? {
                    $(value_name: $gvalue_name:literal,)?
                    env: $genv:literal,
                    $(key_note: $gnote:literal,)?
                    label: $glabel:literal,
                    default: $gkind:ident($($gdefault:tt)*),
                    $(min: $gmin:literal,)?
                    $(max: $gmax:literal,)?
                    $(note: $gdnote:literal,)?
                }
            )*
        }
        $(
            @vars $Vars:ident {
                $(
                    $(#[doc = $vdoc:literal])+
                    $vfield:ident: $vty:ty { env: $venv:literal }
                )*
            }
        )*
    ) => {
        /// Values given on the command line (each `None` when the flag was not given).
        #[derive(Args, Debug, Clone, Default)]
        pub struct CliOverrides {
            /// JSON config file (keys as the flags, in snake_case); also UQ_CONFIG.
            #[arg(long)]
            pub config: Option<PathBuf>,
            $(
                $(#[doc = $doc])+
                #[arg(long $(, value_name = $value_name)?)]
                pub $field: Option<given_ty!($ty $(, $raw)?)>,
            )*
            $(
                $(#[doc = $gdoc])+
                #[arg(long $(, value_name = $gvalue_name)?)]
                pub $gfield: Option<given_ty!($gty $(, $graw)?)>,
            )*
        }

        /// The JSON config file: the same keys as the settings, in snake_case. Unknown keys are
        /// refused.
        #[derive(Debug, Clone, Default, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct FileConfig {
            $(pub $field: Option<given_ty!($ty $(, $raw)?)>,)*
            pub $group: Option<$Group>,
        }

        #[doc = concat!("The `", stringify!($group), "` object of the config file.")]
        #[derive(Debug, Clone, Default, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $Group {
            $(pub $gkey: Option<file_ty!(given_ty!($gty $(, $graw)?) $(, $gfile)?)>,)*
        }

        /// Every setting, in the order of the flags.
        pub const SETTINGS: &[Setting] = &[
            $(Setting {
                field: stringify!($field),
                value_name: opt!($($value_name)?),
                env: $env,
                key: stringify!($field),
                key_note: None,
                label: $label,
                default: doc_default!($kind($($default)*)),
                note: opt!($($note)?),
                min: opt!($($min)?),
                max: opt!($($max)?),
            },)*
            $(Setting {
                field: stringify!($gfield),
                value_name: opt!($($gvalue_name)?),
                env: $genv,
                key: concat!(stringify!($group), ".", stringify!($gkey)),
                key_note: opt!($($gnote)?),
                label: $glabel,
                default: doc_default!($gkind($($gdefault)*)),
                note: opt!($($gdnote)?),
                min: opt!($($gmin)?),
                max: opt!($($gmax)?),
            },)*
        ];

        /// Each setting's value from the first source that gives it, as given.
        pub struct GivenSettings {
            $(pub $field: Option<Given<given_ty!($ty $(, $raw)?)>>,)*
            $(pub $gfield: Option<Given<given_ty!($gty $(, $graw)?)>>,)*
        }

        /// What was given of the top-level settings, typed and range-checked (`None`: not
        /// given, so a default set to its own value is still told apart from an unset one).
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct GivenValues {
            $(pub $field: Option<$ty>,)*
        }

        #[doc = concat!("The `", stringify!($group), "` settings decided (their URLs given).")]
        #[derive(Debug, Clone, PartialEq)]
        pub struct $GroupSettings {
            $(pub $gkey: decided_ty!($gty, $gkind),)*
        }

        /// The resolved configuration of the daemon: each setting given, else its default.
        #[derive(Debug, Clone, PartialEq)]
        pub struct Config {
            $(
                $(#[doc = $doc])+
                pub $field: decided_ty!($ty, $kind),
            )*
            #[doc = concat!("The `", stringify!($group), "` settings; `None` when not given.")]
            pub $group: Option<$Decided>,
        }

        impl GivenSettings {
            /// Flag > environment (`env` yields only non-blank values) > config file.
            pub fn pick(
                cli: CliOverrides,
                env: &dyn Fn(&str) -> Option<String>,
                file: FileConfig,
            ) -> GivenSettings {
                let group = file.$group.unwrap_or_default();
                GivenSettings {
                    $($field: Given::pick(cli.$field, env, file.$field, setting(stringify!($field))),)*
                    $($gfield: Given::pick(
                        cli.$gfield,
                        env,
                        group.$gkey.map(Into::into),
                        setting(stringify!($gfield)),
                    ),)*
                }
            }

            /// The top-level settings typed and range-checked (an error names the source).
            pub fn values(&mut self, dirs: &Dirs) -> Result<GivenValues, String> {
                Ok(GivenValues {
                    $($field: match self.$field.take() {
                        Some(g) => Some(g.checked(|g| typed!(g, dirs $(, $parse)?))?),
                        None => None,
                    },)*
                })
            }

            #[doc = concat!("The `", stringify!($group), "` settings decided when its first \
                             setting is given, else `None` (the others are then not looked at).")]
            pub fn $group(&mut self, dirs: &Dirs) -> Result<Option<$GroupSettings>, String> {
                if ![$(self.$gfield.is_some(),)*][0] {
                    return Ok(None);
                }
                $(let $gfield: Option<$gty> = match self.$gfield.take() {
                    Some(g) => Some(g.checked(|g| typed!(g, dirs $(, $gparse)?))?),
                    None => None,
                };)*
                Ok(Some($GroupSettings {
                    $($gkey: decide!($gfield, &(), $gty, $gkind($($gdefault)*)),)*
                }))
            }
        }

        impl GivenValues {
            /// The configuration: each value given, else its default.
            pub fn decide(self, d: &Defaults, $group: Option<$Decided>) -> Config {
                Config {
                    $($field: decide!(self.$field, d, $ty, $kind($($default)*)),)*
                    $group,
                }
            }
        }

        $(
            /// Variables of one command (its flags are its own), read from the environment.
            #[derive(Debug, Clone, Default, PartialEq)]
            pub struct $Vars {
                $(
                    $(#[doc = $vdoc])+
                    pub $vfield: Option<$vty>,
                )*
            }

            impl $Vars {
                /// Each variable that is set and not blank, parsed (an error names it).
                pub fn read(env: &dyn Fn(&str) -> Option<String>) -> Result<$Vars, String> {
                    Ok($Vars {
                        $($vfield: env($venv)
                            .filter(|v| !v.trim().is_empty())
                            .map(|v| <$vty as EnvValue>::from_env($venv, &v))
                            .transpose()?,)*
                    })
                }
            }
        )*

        /// Every variable read beside the settings' (a command's own).
        pub const COMMAND_VARIABLES: &[&str] = &[$($($venv,)*)*];

        impl Config {
            /// The `UQ_*` variables that give a child daemon this configuration (unset
            /// settings are left out, so the child decides them as this one would).
            pub fn to_env(&self) -> Vec<(&'static str, String)> {
                let mut out = Vec::new();
                $(if let Some(v) = env_of!(self.$field, $kind) {
                    out.push(($env, v));
                })*
                if let Some(g) = &self.$group {
                    $(out.push(($genv, g.$gkey.to_env()));)*
                }
                out
            }
        }
    };
}
