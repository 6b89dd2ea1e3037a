//! A minimal, validating reader of the safetensors format, memory-mapped read-only.
//!
//! Format: 8 bytes little-endian header length N, N bytes of JSON
//! `{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}`, then the
//! data region; offsets are relative to the start of the data region.
//!
//! The file is mapped with `PROT_READ`/`MAP_SHARED`, so every process that loads the model
//! shares the same physical pages through the page cache: only the pages a forward pass
//! touches become resident, and they count as file-backed memory, not as each backend's heap.
//!
//! Alignment: the f32 tensors are used in place as `&[f32]`, which needs each tensor to start
//! on a 4-byte boundary in the file (the mapping itself is page-aligned). The published
//! all-MiniLM-L6-v2 `model.safetensors` has N = 11,408, so the data region starts at byte
//! 11,416 (a multiple of 4; 11,416 mod 64 = 24) and every tensor's offset is a multiple of 4:
//! all tensors are used in place. The format does not promise this, so a tensor that is
//! misaligned (or any tensor on a big-endian machine) is decoded into an owned copy instead;
//! `MiniLm::copied_tensors()` says how many were.

use memmap2::Mmap;
use std::fs::File;
use std::path::{Path, PathBuf};

/// Largest header accepted: the real one is 11 KB; this only bounds a corrupt length.
const MAX_HEADER: u64 = 16 << 20;

/// Where a tensor's f32 values live.
#[derive(Debug)]
enum Data {
    /// Element range `[start, start + len)` of the mapping, viewed as f32 (aligned, little-endian).
    Mapped { byte_start: usize, len: usize },
    /// Decoded copy, for a tensor that cannot be used in place.
    Owned(Box<[f32]>),
}

/// One validated tensor of the file.
#[derive(Debug)]
pub(crate) struct Tensor {
    pub(crate) name: String,
    pub(crate) dtype: String,
    pub(crate) shape: Vec<usize>,
    byte_begin: usize,
    byte_end: usize,
}

/// The validated, mapped file.
pub(crate) struct Tensors {
    path: PathBuf,
    map: Mmap,
    data_start: usize,
    tensors: Vec<Tensor>,
}

/// A handle to one f32 tensor whose shape was checked, resolved to a slice by `Tensors::get`.
#[derive(Debug)]
pub(crate) struct F32 {
    data: Data,
}

fn dtype_size(dtype: &str) -> Option<usize> {
    Some(match dtype {
        "F64" | "I64" | "U64" => 8,
        "F32" | "I32" | "U32" => 4,
        "F16" | "BF16" | "I16" | "U16" => 2,
        "I8" | "U8" | "BOOL" | "F8_E4M3" | "F8_E5M2" => 1,
        _ => return None,
    })
}

impl Tensors {
    /// Maps `path` and validates its header: the length prefix, the JSON, and for every tensor
    /// a known dtype, a shape whose byte size matches its offsets, offsets inside the data
    /// region, and a data region that ends exactly at the end of the file (which catches a
    /// truncated or padded file without reading the 90 MB).
    pub(crate) fn open(path: &Path) -> Result<Tensors, String> {
        let what = path.display();
        let file = File::open(path).map_err(|e| format!("cannot open {what}: {e}"))?;
        let file_len = file
            .metadata()
            .map_err(|e| format!("cannot stat {what}: {e}"))?
            .len();
        if file_len < 8 {
            return Err(format!(
                "{what}: {file_len} bytes, too short for a safetensors file (truncated?)"
            ));
        }
        // SAFETY: the mapping is read-only and private to this struct; the slices handed out
        // borrow it. Like every memory-mapped reader, this assumes nobody truncates or rewrites
        // the file in place while it is mapped (setup installs the model files once, read-only;
        // replacing them is done by writing new files and renaming, which leaves this mapping
        // on the old inode).
        let map = unsafe { Mmap::map(&file) }.map_err(|e| format!("cannot mmap {what}: {e}"))?;
        let header_len = u64::from_le_bytes(map[..8].try_into().expect("8 bytes"));
        if header_len > MAX_HEADER || header_len > file_len - 8 {
            return Err(format!(
                "{what}: header length {header_len} does not fit in a file of {file_len} bytes \
                 (truncated or not a safetensors file)"
            ));
        }
        let data_start = 8 + header_len as usize;
        let header: serde_json::Value = serde_json::from_slice(&map[8..data_start])
            .map_err(|e| format!("{what}: the header is not valid JSON: {e}"))?;
        let entries = header
            .as_object()
            .ok_or_else(|| format!("{what}: the header is not a JSON object"))?;
        let data_len = map.len() - data_start;
        let mut tensors = Vec::with_capacity(entries.len());
        let mut max_end = 0usize;
        for (name, info) in entries {
            if name == "__metadata__" {
                continue;
            }
            let bad = |why: &str| format!("{what}: tensor {name:?}: {why}");
            let dtype = info
                .get("dtype")
                .and_then(|d| d.as_str())
                .ok_or_else(|| bad("no dtype"))?
                .to_string();
            let size = dtype_size(&dtype).ok_or_else(|| bad(&format!("unknown dtype {dtype}")))?;
            let shape = info
                .get("shape")
                .and_then(|s| s.as_array())
                .ok_or_else(|| bad("no shape"))?
                .iter()
                .map(|d| d.as_u64().map(|d| d as usize))
                .collect::<Option<Vec<usize>>>()
                .ok_or_else(|| bad("shape is not a list of sizes"))?;
            let offsets = info
                .get("data_offsets")
                .and_then(|o| o.as_array())
                .filter(|o| o.len() == 2)
                .and_then(|o| Some((o[0].as_u64()? as usize, o[1].as_u64()? as usize)))
                .ok_or_else(|| bad("data_offsets is not [begin, end]"))?;
            let (begin, end) = offsets;
            let numel = shape
                .iter()
                .try_fold(1usize, |a, &d| a.checked_mul(d))
                .ok_or_else(|| bad("shape overflows"))?;
            if begin > end || end > data_len {
                return Err(bad(&format!(
                    "data_offsets [{begin}, {end}] outside the data region of {data_len} bytes \
                     (truncated file?)"
                )));
            }
            if numel.checked_mul(size) != Some(end - begin) {
                return Err(bad(&format!(
                    "shape {shape:?} of {dtype} needs {} bytes but data_offsets span {}",
                    numel.saturating_mul(size),
                    end - begin
                )));
            }
            max_end = max_end.max(end);
            tensors.push(Tensor {
                name: name.clone(),
                dtype,
                shape,
                byte_begin: begin,
                byte_end: end,
            });
        }
        if max_end != data_len {
            return Err(format!(
                "{what}: the tensors end at byte {} but the file has {file_len} bytes \
                 ({} bytes too many)",
                data_start + max_end,
                data_len - max_end
            ));
        }
        Ok(Tensors {
            path: path.to_path_buf(),
            map,
            data_start,
            tensors,
        })
    }

    pub(crate) fn tensors(&self) -> &[Tensor] {
        &self.tensors
    }

    /// The whole mapped file, header included.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// The f32 tensor `name`, which must have exactly `shape`.
    pub(crate) fn f32(&self, name: &str, shape: &[usize]) -> Result<F32, String> {
        let what = self.path.display();
        let t = self
            .tensors
            .iter()
            .find(|t| t.name == name)
            .ok_or_else(|| format!("{what}: tensor {name:?} is missing"))?;
        if t.dtype != "F32" {
            return Err(format!(
                "{what}: tensor {name:?} has dtype {}, expected F32",
                t.dtype
            ));
        }
        if t.shape != shape {
            return Err(format!(
                "{what}: tensor {name:?} has shape {:?}, expected {shape:?}",
                t.shape
            ));
        }
        let byte_start = self.data_start + t.byte_begin;
        let bytes = &self.map[byte_start..self.data_start + t.byte_end];
        let len = bytes.len() / 4;
        let in_place = cfg!(target_endian = "little")
            && (bytes.as_ptr() as usize).is_multiple_of(std::mem::align_of::<f32>());
        let data = if in_place {
            Data::Mapped { byte_start, len }
        } else {
            let v: Vec<f32> = bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
                .collect();
            Data::Owned(v.into_boxed_slice())
        };
        Ok(F32 { data })
    }

    /// The values of `t`, a handle made by `self.f32`.
    #[inline]
    pub(crate) fn get<'a>(&'a self, t: &'a F32) -> &'a [f32] {
        match &t.data {
            Data::Mapped { byte_start, len } => {
                let bytes = &self.map[*byte_start..*byte_start + *len * 4];
                // SAFETY: `f32` checked that this range is 4-byte aligned and on a little-endian
                // machine; every bit pattern is a valid f32; the slice borrows `self.map`.
                unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<f32>(), *len) }
            }
            Data::Owned(v) => v,
        }
    }
}

impl F32 {
    /// Whether this tensor had to be copied out of the mapping.
    pub(crate) fn is_copy(&self) -> bool {
        matches!(self.data, Data::Owned(_))
    }
}
