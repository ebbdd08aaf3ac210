//! uqd: the uqlite daemon. `engine` runs the ONNX models, `pipeline` takes one request through
//! decompose → score → aggregate, `server` speaks the socket protocol, `bench` measures it all.

pub mod bench;
pub mod config;
pub mod engine;
pub mod pipeline;
pub mod server;
