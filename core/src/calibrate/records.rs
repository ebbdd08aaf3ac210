//! The plain records a calibration model's JSON carries, each read and written as JSON: what its
//! scores were made with ([`FittedOn`]), a prior-shift adaptation ([`Prior`], [`super::adapt`])
//! with the guard's check of it ([`Check`], [`super::guard`]), and what a refitted model started
//! from ([`Refit`], [`super::refit`]).

mod fitted_on;
mod prior;
mod refit;

pub use fitted_on::{FittedOn, FITTED_ON_KEYS};
pub use prior::{Check, LogLossCheck, Prior};
pub use refit::{Refit, ScaleChoice};
