//! Options `calibration.adapt` and `calibration.refit` of a job: the checks across the
//! calibration models, the job's labels and each other (the run-time steps are the daemon's
//! `jobs/adapt.rs`).

use super::spec::JobSpec;

/// Option `calibration.adapt` needs calibration models that carry their training prior.
pub(super) fn check_adapt(spec: &JobSpec) -> Result<(), String> {
    let models = &spec.parsed.calibration.models;
    if spec.adapt.is_some() && models.is_empty() {
        return Err(
            "option calibration.adapt has no model to adapt: add a model per scorer, e.g. \
             \"calibration\":{\"entailment\":<uq_fit_calibration's JSON>,\"adapt\":\"job\"}"
                .into(),
        );
    }
    if let (Some(a), Some((s, c))) = (
        spec.adapt,
        models.iter().find(|(_, c)| c.training_prior("").is_err()),
    ) {
        let e = c
            .training_prior(&format!("option calibration.{}", s.name()))
            .unwrap_err();
        return Err(format!(
            "option calibration.adapt = \"{}\": {e}",
            a.as_str()
        ));
    }
    Ok(())
}

/// Option `calibration.refit` needs Platt models with a prior strength, labels of the job's units
/// (`labels_column` or `grade`), and the same groups as `calibration.adapt` when both are given.
pub(super) fn check_refit(spec: &JobSpec) -> Result<(), String> {
    let Some(refit) = spec.refit else {
        return Ok(());
    };
    let models = &spec.parsed.calibration.models;
    if models.is_empty() {
        return Err(
            "option calibration.refit has no model to refit: add a model per scorer, e.g. \
             \"calibration\":{\"entailment\":<uq_fit_calibration's JSON>,\"refit\":\"job\"}"
                .into(),
        );
    }
    if let Some(a) = spec.adapt.filter(|&a| a != refit) {
        return Err(format!(
            "option calibration.refit = \"{}\" and calibration.adapt = \"{}\" group the answers \
             differently: give both the same value (the refit starts from the adaptation of \
             its group)",
            refit.as_str(),
            a.as_str()
        ));
    }
    if spec.columns.labels.is_none() && !spec.grade {
        return Err(
            "option calibration.refit refits on labelled units, but the job has no labels: set \
             labels_column (a JSON array of 0/1/null per unit of units_column) or grade"
                .into(),
        );
    }
    for (s, c) in models {
        c.refit_prior(&format!("option calibration.{}", s.name()))
            .map_err(|e| format!("option calibration.refit = \"{}\": {e}", refit.as_str()))?;
    }
    Ok(())
}
