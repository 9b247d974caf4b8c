#pragma once

#include <ATen/core/Tensor.h>

#include "continuity/shot_stats.h"

namespace shotchain::continuity {

// Pixel measures on decoded frames [3, H, W] (RGB in [−1, 1], the VAE's output range), computed in
// float64 on the frames' device. Luma is BT.601 Y = 0.299 R + 0.587 G + 0.114 B of the [0, 1] RGB.

// [3, ..., H, W] in [−1, 1] → luma [..., H, W] in [0, 1], float64.
at::Tensor lumaOf(const at::Tensor& rgb);

// PSNR of the luma (peak 1): 10·log10(1 / MSE); +infinity for identical frames.
double psnrLuma(const at::Tensor& a, const at::Tensor& b);
// SSIM of the luma: 11×11 Gaussian window (σ = 1.5), C1 = 0.01², C2 = 0.03², 'valid' filtering (no
// padding), mean of the SSIM map. The window shrinks to the largest odd size that fits a frame smaller
// than 11 pixels.
double ssimLuma(const at::Tensor& a, const at::Tensor& b);
// Mean absolute difference of the luma (in [0, 1]).
double madLuma(const at::Tensor& a, const at::Tensor& b);
// Mean absolute difference over every pixel and channel of the RGB in [0, 1]: how much the picture
// changes, colour included (a hue change at equal luma counts).
double meanRgbChange(const at::Tensor& a, const at::Tensor& b);
FramePairMeasures measureFramePair(const at::Tensor& a, const at::Tensor& b);

// Mean CIE L*a*b* (CIE 1976, D65 white) over the pixels of a frame [3, H, W] read as sRGB.
LabColour meanLab(const at::Tensor& rgb);
// The mean and the spread (population standard deviation of L*, a*, b* over the pixels) of a frame.
struct LabStats {
  LabColour mean;
  LabColour spread;
};
LabStats labStats(const at::Tensor& rgb);
// CIE76 colour difference: the Euclidean distance in L*a*b*.
double deltaE76(const LabColour& x, const LabColour& y);
// The CIE76 difference of two frames of one size, pixel by pixel, averaged.
double meanDeltaE76(const at::Tensor& a, const at::Tensor& b);

}  // namespace shotchain::continuity
