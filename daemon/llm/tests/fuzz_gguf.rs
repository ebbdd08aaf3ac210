//! Fuzz of the GGUF tokenizer metadata reader (`GgufTokenizer::from_gguf_file`, which the embedded
//! model's loader shares) on the real SmolLM2 GGUF header: truncated at any length, with random
//! bits flipped, with random bytes spliced in, and on random bytes behind the magic. Each case must
//! give an error or a working tokenizer: no panic, and no single allocation larger than
//! `MAX_ALLOC` (a counting global allocator records the largest one). Fixed budget and seed; the
//! cases run are printed (`--nocapture`).
//!
//! The model file is found as in local_model.rs; without it the test says so and passes, unless
//! `UQ_REQUIRE_LOCAL_MODEL=1`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
#[path = "../../../core/tests/common/fuzz.rs"]
mod fuzz_runner;
use fuzz_runner::fuzz;
use uq_llm::gguf_tokenizer::GgufTokenizer;
use uq_llm::local::SMOLLM2_FILE;

/// Largest allocation any case may make: far above what the real header needs (a few MB for the
/// vocabulary), far below what a corrupt length field would ask for.
const MAX_ALLOC: usize = 256 << 20;

struct Counting;
static LARGEST: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LARGEST.fetch_max(l.size(), Ordering::Relaxed);
        System.alloc(l)
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        LARGEST.fetch_max(l.size(), Ordering::Relaxed);
        System.alloc_zeroed(l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        LARGEST.fetch_max(new, Ordering::Relaxed);
        System.realloc(p, l, new)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn model_path() -> Option<PathBuf> {
    let ws = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let p = std::env::var("UQ_SMOLLM2_GGUF")
        .map(PathBuf::from)
        .unwrap_or_else(|_| ws.join("dist/models/smollm2").join(SMOLLM2_FILE));
    if p.is_file() {
        return Some(p);
    }
    let msg = format!(
        "SmolLM2 GGUF not found at {}; set UQ_SMOLLM2_GGUF",
        p.display()
    );
    if std::env::var("UQ_REQUIRE_LOCAL_MODEL").as_deref() == Ok("1") {
        panic!("{msg}");
    }
    eprintln!("SKIPPED: {msg}");
    None
}

/// The header of the real file: everything before the tensor data (metadata and tensor infos).
fn real_header(path: &PathBuf) -> Vec<u8> {
    let mut f = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let content = candle_core::quantized::gguf_file::Content::read(&mut f).unwrap();
    let n = content.tensor_data_offset as usize;
    let mut bytes = std::fs::read(path).unwrap();
    bytes.truncate(n);
    bytes
}

#[derive(Debug, Clone)]
enum Mutation {
    Truncate(usize),
    Flip(Vec<(usize, u8)>),
    Splice(usize, Vec<u8>),
    Garbage(Vec<u8>),
}

fn apply(header: &[u8], m: &Mutation) -> Vec<u8> {
    match m {
        Mutation::Truncate(n) => header[..(*n).min(header.len())].to_vec(),
        Mutation::Flip(bits) => {
            let mut b = header.to_vec();
            for &(at, bit) in bits {
                let i = at % b.len();
                b[i] ^= 1 << (bit % 8);
            }
            b
        }
        Mutation::Splice(at, bytes) => {
            let mut b = header.to_vec();
            let i = at % b.len();
            let end = (i + bytes.len()).min(b.len());
            b[i..end].copy_from_slice(&bytes[..end - i]);
            b
        }
        Mutation::Garbage(bytes) => [b"GGUF".as_slice(), bytes].concat(),
    }
}

/// Mutations that hit the length and count fields of the first kilobyte (magic, version,
/// counts, the first keys) more often than the rest of the header.
fn mutation(len: usize) -> impl Strategy<Value = Mutation> {
    let pos = prop_oneof![0usize..1024, 0usize..len];
    prop_oneof![
        (0usize..len).prop_map(Mutation::Truncate),
        (0usize..64).prop_map(Mutation::Truncate),
        prop::collection::vec((pos.clone(), 0u8..8), 1..8).prop_map(Mutation::Flip),
        (
            pos,
            prop::collection::vec(prop_oneof![Just(0xffu8), Just(0u8), any::<u8>()], 1..16)
        )
            .prop_map(|(at, b)| Mutation::Splice(at, b)),
        prop::collection::vec(any::<u8>(), 0..512).prop_map(Mutation::Garbage),
    ]
}

#[test]
fn gguf_metadata_reader_survives_corrupt_headers() {
    let Some(path) = model_path() else { return };
    let header = real_header(&path);
    let dir = std::env::temp_dir().join(format!("uq-fuzz-gguf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("mutated.gguf");
    // The unmutated header must give a working tokenizer, or the cases below test nothing.
    std::fs::write(&file, &header).unwrap();
    let t = GgufTokenizer::from_gguf_file(&file).expect("the real header reads");
    assert!(!t.encode("Hello world").unwrap().is_empty());

    // A header whose `general.alignment` is 0 (candle divides by it).
    let mut zero_align = b"GGUF".to_vec();
    zero_align.extend(3u32.to_le_bytes());
    zero_align.extend(0u64.to_le_bytes()); // tensors
    zero_align.extend(1u64.to_le_bytes()); // metadata entries
    zero_align.extend(17u64.to_le_bytes());
    zero_align.extend(b"general.alignment");
    zero_align.extend(4u32.to_le_bytes()); // u32
    zero_align.extend(0u32.to_le_bytes());
    std::fs::write(&file, &zero_align).unwrap();
    let out = std::panic::catch_unwind(|| GgufTokenizer::from_gguf_file(&file).map(|_| ()));
    assert!(matches!(out, Ok(Err(_))), "alignment 0: {out:?}");

    let (mut ok, mut largest) = (0u64, 0usize);
    fuzz("gguf_tokenizer", 400, mutation(header.len()), |m| {
        std::fs::write(&file, apply(&header, &m)).unwrap();
        LARGEST.store(0, Ordering::SeqCst);
        let out = GgufTokenizer::from_gguf_file(&file).map(|t| {
            // A tokenizer that was built must also work (or fail cleanly) on text.
            let _ = t.encode("Hello, world 123 <|im_end|> é");
            let _ = t.chat_prompt(Some("sys"), "user text");
            let _ = t.decode(&[0, 1, 2, 50_000, u32::MAX]);
        });
        let big = LARGEST.load(Ordering::SeqCst);
        largest = largest.max(big);
        match out {
            Ok(()) => ok += 1,
            Err(e) if e.is_empty() => return Err("empty error message".into()),
            Err(_) => {}
        }
        if big > MAX_ALLOC {
            return Err(format!("allocated {big} bytes at once"));
        }
        Ok(())
    });
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "fuzz gguf_tokenizer: on a {} byte header ({ok} read, the rest errors); largest allocation {largest} bytes",
        header.len()
    );
}
