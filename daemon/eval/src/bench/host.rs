//! The NLI path's host side in a bench line: host microseconds per pair of each stage and of the
//! whole process, the device's time per batch, the most batches in flight at once, the overlap,
//! and with the stand-in model its time per batch and the pairs/s that bounds.

use serde_json::{json, Map, Value};

use super::lines::round;
use std::time::Duration;

use uqd::engine::stages::{process_cpu, Stage, StageSnapshot};
use uqd::engine::{Engine, PadSnapshot};

/// The engine's stage figures at the start of a run.
pub struct HostStart(StageSnapshot, Duration);

impl HostStart {
    /// Now, with a fresh count of the batches in flight.
    pub fn now(engine: &Engine) -> HostStart {
        engine.reset_nli_in_flight();
        HostStart(engine.nli_stages(), process_cpu())
    }

    /// The run's fields (`pairs` NLI pairs computed, `pad` its batches): `host_us_per_pair`
    /// (tokenise, cache, batching, pad_copy, device, scatter, queue_wait), `device_ms_per_batch`,
    /// `process_cpu_us_per_pair` (every thread's CPU time over the run, the whole pipeline's
    /// host work: what bounds the pairs/s of a host with few cores, whatever else runs there),
    /// `max_batches_in_flight`, `nli_overlap`, `stand_in_ms` and `stand_in_pairs_per_s`.
    pub fn fields(&self, engine: &Engine, pairs: u64, pad: &PadSnapshot) -> Map<String, Value> {
        let stages = engine.nli_stages().since(&self.0);
        let cpu = process_cpu().saturating_sub(self.1);
        let info = engine.info();
        let bound = info
            .stand_in_ms
            .filter(|ms| *ms > 0.0)
            .map(|ms| round(engine.nli_batch() as f64 * 1000.0 / ms));
        let device_ms = (pad.batches > 0)
            .then(|| round(stages.time(Stage::Device).as_secs_f64() * 1000.0 / pad.batches as f64));
        let v = json!({
            "host_us_per_pair": stages.us_per_pair(pairs),
            "process_cpu_us_per_pair": (pairs > 0)
                .then(|| round(cpu.as_secs_f64() * 1e6 / pairs as f64)),
            "device_ms_per_batch": device_ms,
            "max_batches_in_flight": stages.max_in_flight,
            "nli_overlap": info.nli_overlap,
            "stand_in_ms": info.stand_in_ms,
            "stand_in_pairs_per_s": bound,
        });
        let Value::Object(m) = v else {
            unreachable!("json! of an object literal is an object")
        };
        m
    }
}
