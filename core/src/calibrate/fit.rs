//! The maths of a calibration map, free of [`Calibration`](super::model::Calibration): the
//! logistic function, Platt's maximum-likelihood fit, isotonic regression by
//! pool-adjacent-violators, the interpolation of an isotonic model, and Bayes' re-weighting of a
//! probability to another base rate ([`super::adapt`]). "Module doc" below is [`super`]'s.

/// Logistic function σ(z) = 1 / (1 + e^(−z)), without overflow for large |z|.
pub fn sigmoid(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

/// ln(1 + e^z) without overflow.
pub(super) fn softplus(z: f64) -> f64 {
    if z > 0.0 {
        z + (-z).exp().ln_1p()
    } else {
        z.exp().ln_1p()
    }
}

/// Checks a training set: same lengths, finite scores, at least one unit of each class.
/// `score` names the score argument in errors.
pub(super) fn check_training(
    scores: &[f64],
    labels: &[bool],
    score: &str,
) -> Result<usize, String> {
    if scores.len() != labels.len() {
        return Err(format!(
            "internal error: {} scores but {} labels",
            scores.len(),
            labels.len()
        ));
    }
    if let Some(s) = scores.iter().find(|s| !s.is_finite()) {
        return Err(format!("{score} must be a finite number, got {s}"));
    }
    let positives = labels.iter().filter(|&&l| l).count();
    if scores.is_empty() {
        return Err(
            "no labelled rows to fit on (rows with a NULL score or label are skipped): fit on \
             rows with a score and a 0/1 label, of both classes"
                .to_string(),
        );
    }
    if positives == 0 || positives == labels.len() {
        return Err(format!(
            "all {} labelled rows have label {}: a fit needs both classes (1 = true, \
             0 = false); add rows of the other class",
            labels.len(),
            u8::from(positives > 0)
        ));
    }
    Ok(positives)
}

/// Linear interpolation through the points, constant beyond the ends (`np.interp`).
pub(super) fn interpolate(x: &[f64], y: &[f64], s: f64) -> f64 {
    let last = x.len() - 1;
    if s <= x[0] {
        return y[0];
    }
    if s >= x[last] {
        return y[last];
    }
    // first i with x[i] > s; 1 ≤ i ≤ last
    let i = x.partition_point(|&xi| xi <= s);
    let (x0, x1, y0, y1) = (x[i - 1], x[i], y[i - 1], y[i]);
    y0 + (y1 - y0) * (s - x0) / (x1 - x0)
}

/// Platt's maximum-likelihood (a, b) for the smoothed targets (module doc), by Newton's method
/// with a backtracking line search on the negative log-likelihood
/// F(a, b) = Σ_i [ (1 − t_i)·z_i + ln(1 + e^(−z_i)) ], z_i = a·s_i + b, whose gradient is
/// Σ_i (p_i − t_i)·(s_i, 1) and Hessian Σ_i p_i(1 − p_i)·(s_i, 1)(s_i, 1)ᵀ.
pub(super) fn fit_platt(scores: &[f64], labels: &[bool]) -> Result<(f64, f64), String> {
    let n_pos = labels.iter().filter(|&&l| l).count() as f64;
    let n_neg = labels.len() as f64 - n_pos;
    let targets = platt_targets(labels);
    let mean = scores.iter().sum::<f64>() / scores.len() as f64;
    if scores.iter().all(|&s| s == scores[0]) {
        // One distinct score: only the intercept is identified; p = mean target.
        let t = targets.iter().sum::<f64>() / targets.len() as f64;
        return Ok((0.0, (t / (1.0 - t)).ln()));
    }
    // Centre the scores (z = a·(s − mean) + c, b = c − a·mean) for a well-conditioned Hessian.
    let xs: Vec<f64> = scores.iter().map(|s| s - mean).collect();
    let loss = |a: f64, c: f64| -> f64 {
        xs.iter()
            .zip(&targets)
            .map(|(&x, &t)| {
                let z = a * x + c;
                (1.0 - t) * z + softplus(-z)
            })
            .sum()
    };
    let (mut a, mut c) = (0.0, ((n_pos + 1.0) / (n_neg + 1.0)).ln());
    let mut f = loss(a, c);
    for _ in 0..200 {
        let (mut ga, mut gc, mut haa, mut hac, mut hcc) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for (&x, &t) in xs.iter().zip(&targets) {
            let p = sigmoid(a * x + c);
            let d = p - t;
            let w = (p * (1.0 - p)).max(1e-300);
            ga += d * x;
            gc += d;
            haa += w * x * x;
            hac += w * x;
            hcc += w;
        }
        if ga.abs() < 1e-12 * xs.len() as f64 && gc.abs() < 1e-12 * xs.len() as f64 {
            break;
        }
        // Newton direction: H·(da, dc) = −g, with Lin et al.'s tiny ridge.
        let (haa, hcc) = (haa + 1e-12, hcc + 1e-12);
        let det = haa * hcc - hac * hac;
        let da = -(hcc * ga - hac * gc) / det;
        let dc = -(haa * gc - hac * ga) / det;
        let slope = ga * da + gc * dc;
        if slope.abs() < 1e-9 * (1.0 + f.abs()) {
            // Quadratic region: the decrease is below the loss's rounding, so the line search
            // cannot see it; Newton's full step converges here.
            (a, c) = (a + da, c + dc);
            f = loss(a, c);
            continue;
        }
        let mut step = 1.0;
        let mut moved = false;
        while step >= 1e-10 {
            let (na, nc) = (a + step * da, c + step * dc);
            let nf = loss(na, nc);
            if nf <= f + 1e-4 * step * slope {
                (a, c, f) = (na, nc, nf);
                moved = true;
                break;
            }
            step /= 2.0;
        }
        if !moved {
            break; // no further decrease representable: at the optimum to rounding
        }
    }
    let b = c - a * mean;
    if a.is_finite() && b.is_finite() {
        Ok((a, b))
    } else {
        Err("internal error: the Platt fit diverged".to_string())
    }
}

/// Platt's smoothed targets: (N⁺ + 1)/(N⁺ + 2) for label 1, 1/(N⁻ + 2) for label 0.
pub(super) fn platt_targets(labels: &[bool]) -> Vec<f64> {
    let n_pos = labels.iter().filter(|&&l| l).count() as f64;
    let n_neg = labels.len() as f64 - n_pos;
    let (t_pos, t_neg) = ((n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0));
    labels
        .iter()
        .map(|&l| if l { t_pos } else { t_neg })
        .collect()
}

/// Isotonic regression of the labels on the scores (module doc): the points (x, y) of the
/// fitted function, the first and last distinct score of each pooled block.
pub(super) fn fit_isotonic(scores: &[f64], labels: &[bool]) -> (Vec<f64>, Vec<f64>) {
    let mut v: Vec<(f64, f64)> = scores
        .iter()
        .zip(labels)
        .map(|(&s, &l)| (s, if l { 1.0 } else { 0.0 }))
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Pool tied scores: (x, weight, sum of labels).
    let mut distinct: Vec<(f64, f64, f64)> = Vec::new();
    for (s, l) in v {
        match distinct.last_mut() {
            Some(last) if last.0 == s => {
                last.1 += 1.0;
                last.2 += l;
            }
            _ => distinct.push((s, 1.0, l)),
        }
    }
    let blocks = pool_adjacent_violators(&distinct);
    let mut x = Vec::with_capacity(2 * blocks.len());
    let mut y = Vec::with_capacity(2 * blocks.len());
    for b in blocks {
        let value = (b.sum / b.weight).clamp(0.0, 1.0);
        x.push(b.first);
        y.push(value);
        if b.last > b.first {
            x.push(b.last);
            y.push(value);
        }
    }
    (x, y)
}

/// A block of pooled distinct scores.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Block {
    first: f64,
    last: f64,
    weight: f64,
    sum: f64,
}

/// Pool-adjacent-violators over points (x, weight, weighted sum of y) sorted by x: blocks whose
/// means y = sum / weight strictly increase, each the weighted mean of the points it pools.
/// Adjacent blocks with equal means are pooled too (one constant piece).
fn pool_adjacent_violators(points: &[(f64, f64, f64)]) -> Vec<Block> {
    let mut stack: Vec<Block> = Vec::with_capacity(points.len());
    for &(x, w, s) in points {
        let mut cur = Block {
            first: x,
            last: x,
            weight: w,
            sum: s,
        };
        // previous mean ≥ current mean ⇔ prev.sum · cur.weight ≥ cur.sum · prev.weight
        while let Some(prev) = stack.last() {
            if prev.sum * cur.weight >= cur.sum * prev.weight {
                cur = Block {
                    first: prev.first,
                    last: cur.last,
                    weight: prev.weight + cur.weight,
                    sum: prev.sum + cur.sum,
                };
                stack.pop();
            } else {
                break;
            }
        }
        stack.push(cur);
    }
    stack
}

/// Bayes' re-weighting of a posterior p from training prior `train` to prior `target`
/// (Saerens et al. 2002, eq. 2.3). 0 and 1 stay; NaN stays NaN.
pub fn shift(p: f64, train: f64, target: f64) -> f64 {
    if p.is_nan() || p <= 0.0 || p >= 1.0 {
        return p;
    }
    let w1 = target / train * p;
    let w0 = (1.0 - target) / (1.0 - train) * (1.0 - p);
    w1 / (w1 + w0)
}
