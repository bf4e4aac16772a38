//! The device peak table: dense FLOP/s per precision, on tensor/matrix cores and on
//! vector units, and memory bandwidth of the GPUs kinetoscope knows. Sources, row by
//! row, in `docs/devices.md`.

use serde::{Deserialize, Serialize};

use super::flops::Precision;

/// Dense peaks of one GPU (vendor datasheets and whitepapers, without 2:4 sparsity).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuPeak {
    /// The table row used.
    pub model: String,
    /// FP64 TFLOP/s (tensor/matrix core where available).
    pub fp64_tflops: f64,
    /// FP32 TFLOP/s on CUDA cores / vector units.
    pub fp32_tflops: f64,
    /// TF32 tensor-core TFLOP/s.
    pub tf32_tflops: f64,
    /// BF16/FP16 tensor-core TFLOP/s.
    pub bf16_tflops: f64,
    /// FP8 tensor-core TFLOP/s (0 when absent).
    pub fp8_tflops: f64,
    /// BF16/FP16 TFLOP/s on vector units (no tensor cores): the lower of the two where
    /// the vendor gives both, the FP32 rate where it gives neither (`docs/devices.md`).
    #[serde(default)]
    pub vector_bf16_tflops: f64,
    /// Peak memory (HBM/GDDR) bandwidth, TB/s (10¹² bytes per second); 0 when unknown.
    #[serde(default)]
    pub hbm_tbps: f64,
}

/// Where an operator's arithmetic runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Units {
    /// Tensor cores (NVIDIA) or matrix cores (AMD).
    Matrix,
    /// CUDA cores / vector ALUs.
    Vector,
}

impl GpuPeak {
    /// Peak TFLOP/s for a precision on tensor/matrix cores (FP32 without tensor cores
    /// is the vector rate).
    pub fn for_precision(&self, p: Precision) -> f64 {
        match p {
            Precision::Fp64 => self.fp64_tflops,
            Precision::Fp32 => self.fp32_tflops,
            Precision::Tf32 => self.tf32_tflops,
            Precision::Bf16 => self.bf16_tflops,
            Precision::Fp8 => self.fp8_tflops,
        }
    }

    /// Peak TFLOP/s for a precision on the given units; `None` when the table has no
    /// number for it.
    pub fn compute(&self, units: Units, p: Precision) -> Option<f64> {
        let v = match (units, p) {
            (Units::Matrix, p) => self.for_precision(p),
            (Units::Vector, Precision::Bf16) => self.vector_bf16_tflops,
            (Units::Vector, Precision::Fp32 | Precision::Tf32) => self.fp32_tflops,
            (Units::Vector, Precision::Fp64) => self.fp64_tflops,
            (Units::Vector, Precision::Fp8) => 0.0,
        };
        (v > 0.0).then_some(v)
    }

    /// Peak bandwidth in TB/s; `None` when unknown.
    pub fn bandwidth(&self) -> Option<f64> {
        (self.hbm_tbps > 0.0).then_some(self.hbm_tbps)
    }
}

/// Rows of the peak table, most specific pattern first. Columns: TFLOP/s in FP64, FP32
/// (vector), TF32, BF16/FP16 and FP8 (tensor/matrix cores), BF16/FP16 on vector units,
/// then memory bandwidth in TB/s; dense, 0 where the part lacks the precision or its
/// datasheet gives no number. Sources per row: `docs/devices.md`. Volta and Turing have
/// FP16 tensor cores only (no TF32, no BF16): their BF16/FP16 column is the FP16
/// tensor-core peak.
const PEAKS: &[(&[&str], PeakRow)] = &[
    (
        &["h100", "pcie"],
        row("H100 PCIe", [51.0, 51.0, 378.0, 756.0, 1513.0, 102.4, 2.0]),
    ),
    (
        &["h100", "nvl"],
        row("H100 NVL", [60.0, 60.0, 418.0, 835.0, 1671.0, 60.0, 3.9]),
    ),
    (
        &["h100"],
        row("H100 SXM5", [67.0, 67.0, 494.7, 989.4, 1978.9, 133.8, 3.35]),
    ),
    (
        &["h200", "nvl"],
        row("H200 NVL", [60.0, 60.0, 418.0, 835.0, 1671.0, 60.0, 4.8]),
    ),
    (
        &["h200"],
        row("H200 SXM", [67.0, 67.0, 494.7, 989.4, 1978.9, 133.8, 4.8]),
    ),
    (
        &["gb200"],
        row("GB200", [45.0, 0.0, 1250.0, 2500.0, 5000.0, 0.0, 8.0]),
    ),
    (
        &["b200"],
        row("B200", [37.0, 0.0, 1100.0, 2250.0, 4500.0, 0.0, 8.0]),
    ),
    (
        &["a100", "pcie", "40gb"],
        row(
            "A100 PCIe 40GB",
            [19.5, 19.5, 156.0, 312.0, 0.0, 39.0, 1.555],
        ),
    ),
    (
        &["a100", "pcie"],
        row("A100 PCIe", [19.5, 19.5, 156.0, 312.0, 0.0, 39.0, 1.935]),
    ),
    (
        &["a100", "40gb"],
        row(
            "A100 SXM4 40GB",
            [19.5, 19.5, 156.0, 312.0, 0.0, 39.0, 1.555],
        ),
    ),
    (
        &["a100"],
        row("A100 SXM4", [19.5, 19.5, 156.0, 312.0, 0.0, 39.0, 2.039]),
    ),
    (
        &["l40s"],
        row("L40S", [0.0, 91.6, 183.0, 362.05, 733.0, 91.6, 0.864]),
    ),
    (
        &["nvidia l4"],
        row("L4", [0.0, 30.3, 60.0, 121.0, 242.5, 30.3, 0.3]),
    ),
    (
        &["v100s"],
        row("V100S PCIe", [8.2, 16.4, 0.0, 130.0, 0.0, 16.4, 1.134]),
    ),
    (
        &["v100", "pcie"],
        row("V100 PCIe", [7.0, 14.0, 0.0, 112.0, 0.0, 14.0, 0.9]),
    ),
    (
        &["v100"],
        row("V100 SXM2", [7.8, 15.7, 0.0, 125.0, 0.0, 15.7, 0.9]),
    ),
    (
        &["tesla t4"],
        row("T4", [0.0, 8.1, 0.0, 65.0, 0.0, 8.1, 0.32]),
    ),
    (
        &["nvidia t4"],
        row("T4", [0.0, 8.1, 0.0, 65.0, 0.0, 8.1, 0.32]),
    ),
    (
        &["rtx 2080 ti"],
        row(
            "GeForce RTX 2080 Ti",
            [0.0, 13.4, 0.0, 53.8, 0.0, 13.4, 0.616],
        ),
    ),
    (
        &["rtx 2080"],
        row("GeForce RTX 2080", [0.0, 10.1, 0.0, 40.3, 0.0, 10.1, 0.448]),
    ),
    (
        &["rtx 2070"],
        row("GeForce RTX 2070", [0.0, 7.5, 0.0, 29.9, 0.0, 7.5, 0.448]),
    ),
    (
        &["quadro rtx 6000"],
        row("Quadro RTX 6000", [0.0, 16.3, 0.0, 130.5, 0.0, 16.3, 0.672]),
    ),
    (
        &["mi355"],
        row("MI355X", [78.6, 157.3, 0.0, 2517.0, 5033.0, 157.3, 8.0]),
    ),
    (
        &["mi325"],
        row("MI325X", [163.4, 163.4, 653.7, 1307.4, 2614.9, 163.4, 6.0]),
    ),
    (
        &["mi300x"],
        row("MI300X", [163.4, 163.4, 653.7, 1307.4, 2614.9, 163.4, 5.3]),
    ),
    (
        &["mi250x"],
        row("MI250X", [95.7, 47.9, 0.0, 383.0, 0.0, 47.9, 3.2768]),
    ),
    (
        &["mi210"],
        row("MI210", [45.3, 22.6, 0.0, 181.0, 0.0, 22.6, 1.6384]),
    ),
];

/// A row of the peak table: the model and its numbers in [`PEAKS`] column order.
struct PeakRow(&'static str, [f64; 7]);

const fn row(model: &'static str, v: [f64; 7]) -> PeakRow {
    PeakRow(model, v)
}

/// The peak-table row for a `deviceProperties` name (`NVIDIA H100 80GB HBM3`).
pub fn gpu_peak(device_name: &str) -> Option<GpuPeak> {
    let l = device_name.to_ascii_lowercase();
    PEAKS
        .iter()
        .find(|(pats, _)| pats.iter().all(|p| l.contains(p)))
        .map(|(_, PeakRow(model, v))| GpuPeak {
            model: (*model).to_owned(),
            fp64_tflops: v[0],
            fp32_tflops: v[1],
            tf32_tflops: v[2],
            bf16_tflops: v[3],
            fp8_tflops: v[4],
            vector_bf16_tflops: v[5],
            hbm_tbps: v[6],
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::flops::Precision;

    #[test]
    fn peak_table() {
        assert_eq!(
            gpu_peak("NVIDIA H100 80GB HBM3").unwrap().bf16_tflops,
            989.4
        );
        assert_eq!(gpu_peak("NVIDIA H100 PCIe").unwrap().bf16_tflops, 756.0);
        assert_eq!(
            gpu_peak("NVIDIA A100-SXM4-80GB").unwrap().tf32_tflops,
            156.0
        );
        assert_eq!(gpu_peak("NVIDIA H200").unwrap().model, "H200 SXM");
        let v100 = gpu_peak("Tesla V100-SXM2-32GB").unwrap();
        assert_eq!(
            (v100.model.as_str(), v100.bf16_tflops),
            ("V100 SXM2", 125.0)
        );
        assert_eq!(v100.tf32_tflops, 0.0, "Volta has no TF32");
        assert_eq!(gpu_peak("Tesla V100-PCIE-16GB").unwrap().bf16_tflops, 112.0);
        assert_eq!(
            gpu_peak("Tesla V100S-PCIE-32GB").unwrap().model,
            "V100S PCIe"
        );
        assert_eq!(gpu_peak("Tesla T4").unwrap().bf16_tflops, 65.0);
        assert_eq!(
            gpu_peak("NVIDIA GeForce RTX 2080 Ti").unwrap().model,
            "GeForce RTX 2080 Ti"
        );
        assert_eq!(
            gpu_peak("NVIDIA GeForce RTX 2080").unwrap().fp32_tflops,
            10.1
        );
        assert!(gpu_peak("NVIDIA GeForce GTX 1080").is_none());
        assert_eq!(gpu_peak("AMD Instinct MI300X VF").unwrap().hbm_tbps, 5.3);
        assert_eq!(gpu_peak("NVIDIA A100-SXM4-40GB").unwrap().hbm_tbps, 1.555);
        assert_eq!(gpu_peak("NVIDIA L4").unwrap().model, "L4");
        assert_eq!(gpu_peak("NVIDIA L40S").unwrap().model, "L40S");
        assert_eq!(gpu_peak("AMD Instinct MI250X").unwrap().model, "MI250X");
        let h100 = gpu_peak("NVIDIA H100 80GB HBM3").unwrap();
        assert_eq!(h100.compute(Units::Vector, Precision::Fp32), Some(67.0));
        assert_eq!(h100.compute(Units::Vector, Precision::Bf16), Some(133.8));
        assert_eq!(h100.compute(Units::Matrix, Precision::Bf16), Some(989.4));
        assert_eq!(
            gpu_peak("NVIDIA B200")
                .unwrap()
                .compute(Units::Vector, Precision::Fp32),
            None
        );
        assert_eq!(
            Precision::from_dtype("c10::BFloat16"),
            Some(Precision::Bf16)
        );
        assert_eq!(Precision::from_dtype("float"), Some(Precision::Fp32));
    }
}
