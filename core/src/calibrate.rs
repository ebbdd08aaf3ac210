//! Calibration: a monotone map from a scorer's confidence to the probability that the unit is
//! true, fitted on labelled units (the paper evaluates calibration with ECE and Brier, §5; its
//! scores are confidences, not probabilities). Two methods, as scikit-learn's
//! `CalibratedClassifierCV`:
//!
//! * `platt` (Platt 1999): p(s) = σ(a·s + b), σ(z) = 1 / (1 + e^(−z)), (a, b) the maximum
//!   likelihood fit to Platt's smoothed targets t⁺ = (N⁺ + 1)/(N⁺ + 2) for label 1 and
//!   t⁻ = 1/(N⁻ + 2) for label 0 (finite a, b even when the classes separate). Fitted by Newton's
//!   method with backtracking (Lin, Lin & Weng 2007).
//! * `isotonic`: the non-decreasing step function closest in squared error to the labels
//!   (pool-adjacent-violators on the distinct scores, tied scores first pooled), predicted as
//!   scikit-learn's `IsotonicRegression(out_of_bounds="clip")`: linear interpolation between the
//!   first and last distinct score of each pooled block, clipped outside the fitted range.
//!
//! A model is JSON (`to_json` / `from_json`): `{"method":"platt","a":…,"b":…,"n":…,
//! "positives":…}` or `{"method":"isotonic","x":[…],"y":[…],"n":…,"positives":…}`, with two
//! optional keys: `"fitted_on"`, what its scores were made with ([`FittedOn`]: scorer, NLI model,
//! precision, premise setting, number of samples), and `"prior"`, a prior-shift adaptation to a
//! new set of answers ([`adapt`]: `{"train":…,"target":…,"iterations":…}`, checked on labels
//! of the new answers when there are some: [`guard`]), which [`Calibration::apply`] honours.
//! A Platt model fitted here also records `"refit_precision"`, the prior precision for a refit
//! on a few labels of new answers (its Fisher information), and a refitted model records `"refit"`, what it started from
//! ([`refit`]).

pub mod adapt;
pub mod conformal;
pub mod fit;
pub mod guard;
pub mod map_platt;
pub mod model;
pub mod records;
pub mod refit;

pub use fit::sigmoid;
pub use model::{Calibration, Method, Model};
pub use records::{FittedOn, Prior, Refit};

#[cfg(test)]
mod tests;
