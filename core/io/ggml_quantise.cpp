#include "io/ggml_quantise.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace shotchain::io {
// Unity builds compile this file together with the folder's others: its helpers keep to a namespace of their own.
namespace ggml_quantise_parts {
namespace {

// ggml's GROUP_MAX_EPS: a group whose largest magnitude is below this is stored as zeros.
constexpr float kNegligible = 1e-15f;

// Round to nearest, ties to even, as IEEE fp16 bits.
std::uint16_t halfBits(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u);  // NaN, kept quiet
  const int exponent = static_cast<int>(magnitude >> 23) - 127;
  if (exponent > 15) return static_cast<std::uint16_t>(sign | 0x7c00u);  // infinity, or too large for fp16
  // The value as an integer count of fp16 steps: a 24-bit significand shifted so that its unit is the step,
  // 2^(exponent − 10) for normal fp16 numbers and 2^−24 below them.
  const std::uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
  const int drop = exponent >= -14 ? 13 : -exponent - 1;
  if (drop > 24) return sign;  // below half the smallest subnormal
  std::uint32_t steps = significand >> drop;
  const std::uint32_t rest = significand & ((1u << drop) - 1u);
  const std::uint32_t half = 1u << (drop - 1);
  if (rest > half || (rest == half && (steps & 1u) != 0)) ++steps;
  // Normal numbers: the exponent field sits above the 10 stored significand bits (whose implicit leading 1 the
  // addition absorbs); a carry out of the significand moves to the next exponent, up to infinity.
  if (exponent >= -14) steps += static_cast<std::uint32_t>(exponent + 14) << 10;
  return static_cast<std::uint16_t>(sign | std::min<std::uint32_t>(steps, 0x7c00u));
}

float halfValue(std::uint16_t bits) {
  const float sign = (bits & 0x8000u) != 0 ? -1.0f : 1.0f;
  const int exponent = (bits >> 10) & 0x1f;
  const auto fraction = static_cast<float>(bits & 0x3ffu);
  if (exponent == 0x1f)
    return fraction == 0 ? sign * std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
  if (exponent == 0) return sign * std::ldexp(fraction, -24);
  return sign * std::ldexp(1024.0f + fraction, exponent - 25);
}

// Round to nearest, ties to even, as bfloat16 bits (the top half of the float32); NaN stays a quiet NaN.
std::uint16_t bfloat16Bits(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  return static_cast<std::uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

void putU16(std::uint8_t* out, std::uint16_t value) {
  out[0] = static_cast<std::uint8_t>(value & 0xffu);
  out[1] = static_cast<std::uint8_t>(value >> 8);
}

// Stores `value` as the fp16 scale of a block and returns what a reader will see.
float putScale(std::uint8_t* out, float value) {
  const std::uint16_t bits = halfBits(value);
  if ((bits & 0x7c00u) == 0x7c00u) throw std::range_error("the values are too large for the block's fp16 scale");
  putU16(out, bits);
  return halfValue(bits);
}

// Round to nearest, ties to even (ggml's nearest_int), kept to ±2^22 so that no conversion overflows.
int nearestInt(float value) {
  constexpr float kLimit = 4194304.0f;
  if (!(std::fabs(value) < kLimit)) return value > 0 ? 4194304 : (value < 0 ? -4194304 : 0);
  return static_cast<int>(std::nearbyint(value));
}

int clampInt(int value, int low, int high) { return std::max(low, std::min(high, value)); }

// The entry of largest magnitude (the first of equals), with its sign.
float signedPeak(const float* x, int n) {
  float peak = 0.0f;
  float magnitude = 0.0f;
  for (int i = 0; i < n; ++i)
    if (magnitude < std::fabs(x[i])) {
      magnitude = std::fabs(x[i]);
      peak = x[i];
    }
  return peak;
}

// ---- The 32-value formats, as ggml's quantize_row_*_ref. Each product and sum is its own statement, rounded on
// its own as in ggml and gguf-py: a fused multiply-add would change codes (in ISO C++ mode, the project's, neither
// GCC nor Clang fuses across statements).

// Q4_0: d = peak / −8, codes trunc(x/d + 8.5) ≤ 15.
void blockQ4_0(const float* x, std::uint8_t* out) {
  const float d = signedPeak(x, 32) / -8;
  const float inverse = d != 0 ? 1.0f / d : 0.0f;
  putScale(out, d);
  for (int j = 0; j < 16; ++j) {
    const float a = x[j] * inverse;
    const float b = x[j + 16] * inverse;
    const float ra = a + 8.5f;
    const float rb = b + 8.5f;
    const int qa = std::min(15, static_cast<int>(ra));
    const int qb = std::min(15, static_cast<int>(rb));
    out[2 + j] = static_cast<std::uint8_t>(qa | (qb << 4));
  }
}

// The smallest and the largest value of a block.
std::pair<float, float> valueRange(const float* x, int n) {
  float low = x[0];
  float high = x[0];
  for (int i = 1; i < n; ++i) {
    low = std::min(low, x[i]);
    high = std::max(high, x[i]);
  }
  return {low, high};
}

// Q4_1: d = (max − min) / 15, m = min, codes trunc((x − min)/d + 0.5) ≤ 15.
void blockQ4_1(const float* x, std::uint8_t* out) {
  const auto [low, high] = valueRange(x, 32);
  const float d = (high - low) / 15;
  const float inverse = d != 0 ? 1.0f / d : 0.0f;
  putScale(out, d);
  putScale(out + 2, low);
  for (int j = 0; j < 16; ++j) {
    const float a = (x[j] - low) * inverse;
    const float b = (x[j + 16] - low) * inverse;
    const float ra = a + 0.5f;
    const float rb = b + 0.5f;
    const int qa = std::min(15, static_cast<int>(ra));
    const int qb = std::min(15, static_cast<int>(rb));
    out[4 + j] = static_cast<std::uint8_t>(qa | (qb << 4));
  }
}

// The 5-bit codes of Q5_0 / Q5_1: low nibbles in 16 bytes at `low`, bit 4 of code j as bit j of the 32-bit
// little-endian word at `high`.
void putFiveBitCodes(const std::array<int, 32>& codes, std::uint8_t* high, std::uint8_t* low) {
  std::uint32_t bits = 0;
  for (int j = 0; j < 16; ++j) {
    low[j] = static_cast<std::uint8_t>((codes[j] & 15) | ((codes[j + 16] & 15) << 4));
    bits |= static_cast<std::uint32_t>((codes[j] >> 4) & 1) << j;
    bits |= static_cast<std::uint32_t>((codes[j + 16] >> 4) & 1) << (j + 16);
  }
  for (int b = 0; b < 4; ++b) high[b] = static_cast<std::uint8_t>((bits >> (8 * b)) & 0xffu);
}

// Q5_0: d = peak / −16, codes trunc(x/d + 16.5) ≤ 31.
void blockQ5_0(const float* x, std::uint8_t* out) {
  const float d = signedPeak(x, 32) / -16;
  const float inverse = d != 0 ? 1.0f / d : 0.0f;
  putScale(out, d);
  std::array<int, 32> codes{};
  for (int j = 0; j < 32; ++j) {
    const float scaled = x[j] * inverse;
    const float rounded = scaled + 16.5f;
    codes[j] = std::min(31, static_cast<int>(rounded));
  }
  putFiveBitCodes(codes, out + 2, out + 6);
}

// Q5_1: d = (max − min) / 31, m = min, codes trunc((x − min)/d + 0.5).
void blockQ5_1(const float* x, std::uint8_t* out) {
  const auto [low, high] = valueRange(x, 32);
  const float d = (high - low) / 31;
  const float inverse = d != 0 ? 1.0f / d : 0.0f;
  putScale(out, d);
  putScale(out + 2, low);
  std::array<int, 32> codes{};
  for (int j = 0; j < 32; ++j) {
    const float scaled = (x[j] - low) * inverse;
    const float rounded = scaled + 0.5f;
    codes[j] = std::min(31, static_cast<int>(rounded));
  }
  putFiveBitCodes(codes, out + 4, out + 8);
}

// Q8_0: d = max |x| / 127, codes round(x/d), halves away from zero.
void blockQ8_0(const float* x, std::uint8_t* out) {
  float magnitude = 0.0f;
  for (int j = 0; j < 32; ++j) magnitude = std::max(magnitude, std::fabs(x[j]));
  const float d = magnitude / 127;
  const float inverse = d != 0 ? 1.0f / d : 0.0f;
  putScale(out, d);
  for (int j = 0; j < 32; ++j) {
    const float scaled = x[j] * inverse;
    out[2 + j] = static_cast<std::uint8_t>(static_cast<std::int8_t>(std::round(scaled)));
  }
}

// ---- The scale searches of ggml's K-quantisers.

// make_qkx2_quants: codes 0…nmax with x ≈ scale·code − min, minimising Σ w·|error| (absolute) or Σ w·error².
// Starts from the full range, then tries nstep + 1 scales (nmax + rmin + k·rdelta)/(max − min) with the
// weighted least-squares scale and min of each set of codes. Returns the scale and sets `minimum` (≥ 0).
float fitScaleAndMin(const float* x, const float* w, int n, int nmax, float rmin, float rdelta, int nstep,
                     bool absolute, std::uint8_t* codes, float& minimum) {
  float low = x[0];
  float high = x[0];
  float sumW = w[0];
  float sumX = sumW * x[0];
  for (int i = 1; i < n; ++i) {
    low = std::min(low, x[i]);
    high = std::max(high, x[i]);
    sumW += w[i];
    sumX += w[i] * x[i];
  }
  low = std::min(low, 0.0f);
  if (high == low) {
    std::fill(codes, codes + n, std::uint8_t{0});
    minimum = -low;
    return 0.0f;
  }
  const auto errorOf = [absolute](float difference) {
    return absolute ? std::fabs(difference) : difference * difference;
  };
  float inverse = static_cast<float>(nmax) / (high - low);
  float scale = 1 / inverse;
  float bestError = 0.0f;
  for (int i = 0; i < n; ++i) {
    codes[i] = static_cast<std::uint8_t>(clampInt(nearestInt(inverse * (x[i] - low)), 0, nmax));
    const float difference = scale * codes[i] + low - x[i];
    bestError += w[i] * errorOf(difference);
  }
  std::array<std::uint8_t, 32> trial{};
  for (int step = 0; step <= nstep; ++step) {
    inverse = (rmin + rdelta * static_cast<float>(step) + static_cast<float>(nmax)) / (high - low);
    float sumL = 0.0f;
    float sumL2 = 0.0f;
    float sumXL = 0.0f;
    for (int i = 0; i < n; ++i) {
      const int l = clampInt(nearestInt(inverse * (x[i] - low)), 0, nmax);
      trial[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(l);
      sumL += w[i] * static_cast<float>(l);
      sumL2 += w[i] * static_cast<float>(l) * static_cast<float>(l);
      sumXL += w[i] * static_cast<float>(l) * x[i];
    }
    const float determinant = sumW * sumL2 - sumL * sumL;
    if (determinant <= 0) continue;
    float trialScale = (sumW * sumXL - sumX * sumL) / determinant;
    float trialMin = (sumL2 * sumX - sumL * sumXL) / determinant;
    if (trialMin > 0) {
      trialMin = 0;
      trialScale = sumXL / sumL2;
    }
    float error = 0.0f;
    for (int i = 0; i < n; ++i) {
      const float difference = trialScale * trial[static_cast<std::size_t>(i)] + trialMin - x[i];
      error += w[i] * errorOf(difference);
    }
    if (error < bestError) {
      std::copy(trial.begin(), trial.begin() + n, codes);
      bestError = error;
      scale = trialScale;
      low = trialMin;
    }
  }
  minimum = -low;
  return scale;
}

// make_q3_quants (with its refinement): signed codes −nmax…nmax−1 for x ≈ scale·code, then up to five rounds
// of moving single codes while that raises the x²-weighted fit. Returns the scale; codes end offset by nmax.
float fitSignedCodesRefined(const float* x, int n, int nmax, std::int8_t* codes) {
  const float peak = signedPeak(x, n);
  if (std::fabs(peak) < kNegligible) {
    std::fill(codes, codes + n, std::int8_t{0});
    return 0.0f;
  }
  const float inverse = static_cast<float>(-nmax) / peak;
  float sumLX = 0.0f;
  float sumL2 = 0.0f;
  for (int i = 0; i < n; ++i) {
    const int l = clampInt(nearestInt(inverse * x[i]), -nmax, nmax - 1);
    codes[i] = static_cast<std::int8_t>(l);
    const float w = x[i] * x[i];
    sumLX += w * x[i] * static_cast<float>(l);
    sumL2 += w * static_cast<float>(l) * static_cast<float>(l);
  }
  for (int pass = 0; pass < 5; ++pass) {
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      float lx = sumLX - w * x[i] * codes[i];
      if (lx <= 0) continue;
      float l2 = sumL2 - w * codes[i] * codes[i];
      const int l = clampInt(nearestInt(x[i] * l2 / lx), -nmax, nmax - 1);
      if (l == codes[i]) continue;
      lx += w * x[i] * static_cast<float>(l);
      l2 += w * static_cast<float>(l) * static_cast<float>(l);
      if (l2 > 0 && lx * lx * sumL2 > sumLX * sumLX * l2) {
        codes[i] = static_cast<std::int8_t>(l);
        sumLX = lx;
        sumL2 = l2;
        ++changed;
      }
    }
    if (changed == 0) break;
  }
  for (int i = 0; i < n; ++i) codes[i] = static_cast<std::int8_t>(codes[i] + nmax);
  return sumL2 > 0 ? sumLX / sumL2 : 0.0f;
}

// make_qx_quants with x²-weights: signed codes −nmax…nmax−1 for x ≈ scale·code, trying 19 scales around
// nmax / peak and keeping the best weighted least-squares fit. Returns the scale; codes end offset by nmax.
float fitSignedCodes(const float* x, int n, int nmax, std::int8_t* codes) {
  const float peak = signedPeak(x, n);
  if (std::fabs(peak) < kNegligible) {
    std::fill(codes, codes + n, std::int8_t{0});
    return 0.0f;
  }
  // The sums of w·x·code and w·code² for the codes of `inverse`, storing the codes when asked.
  const auto fit = [&](float inverse, bool store, float& sumLX, float& sumL2) {
    sumLX = 0.0f;
    sumL2 = 0.0f;
    for (int i = 0; i < n; ++i) {
      const int l = clampInt(nearestInt(inverse * x[i]), -nmax, nmax - 1);
      if (store) codes[i] = static_cast<std::int8_t>(l + nmax);
      const float w = x[i] * x[i];
      sumLX += w * x[i] * static_cast<float>(l);
      sumL2 += w * static_cast<float>(l) * static_cast<float>(l);
    }
  };
  float sumLX = 0.0f;
  float sumL2 = 0.0f;
  fit(static_cast<float>(-nmax) / peak, true, sumLX, sumL2);
  float scale = sumL2 != 0 ? sumLX / sumL2 : 0.0f;
  float best = scale * sumLX;
  for (int step = -9; step <= 9; ++step) {
    if (step == 0) continue;
    const float inverse = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(step)) / peak;
    fit(inverse, false, sumLX, sumL2);
    if (sumL2 > 0 && sumLX * sumLX > best * sumL2) {
      fit(inverse, true, sumLX, sumL2);
      scale = sumLX / sumL2;
      best = scale * sumLX;
    }
  }
  return scale;
}

// Four 2-bit codes per byte: code 128h + 32j + l as bits 2j, 2j+1 of byte 32h + l.
void putTwoBitCodes(const std::uint8_t* codes, std::uint8_t* out) {
  for (int h = 0; h < 2; ++h)
    for (int l = 0; l < 32; ++l) {
      const std::uint8_t* c = codes + 128 * h + l;
      out[32 * h + l] = static_cast<std::uint8_t>(c[0] | (c[32] << 2) | (c[64] << 4) | (c[96] << 6));
    }
}

// Q2_K (84 bytes): 4-bit scale and min per 16 values [0, 16), 2-bit codes [16, 80), d at 80, dmin at 82.
void blockQ2_K(const float* x, std::uint8_t* out) {
  std::array<std::uint8_t, 256> codes{};
  std::array<float, 16> scales{};
  std::array<float, 16> mins{};
  float maxScale = 0.0f;
  float maxMin = 0.0f;
  for (int j = 0; j < 16; ++j) {
    std::array<float, 16> weights{};
    for (int l = 0; l < 16; ++l) weights[static_cast<std::size_t>(l)] = std::fabs(x[16 * j + l]);
    scales[j] =
        fitScaleAndMin(x + 16 * j, weights.data(), 16, 3, -0.5f, 0.1f, 15, true, codes.data() + 16 * j, mins[j]);
    maxScale = std::max(maxScale, scales[j]);
    maxMin = std::max(maxMin, mins[j]);
  }
  std::uint8_t* packed = out;
  std::fill(packed, packed + 16, std::uint8_t{0});
  if (maxScale > 0) {
    const float inverse = 15.0f / maxScale;
    for (int j = 0; j < 16; ++j)
      packed[j] = static_cast<std::uint8_t>(clampInt(nearestInt(inverse * scales[j]), 0, 15));
  }
  if (maxMin > 0) {
    const float inverse = 15.0f / maxMin;
    for (int j = 0; j < 16; ++j)
      packed[j] = static_cast<std::uint8_t>(packed[j] | (clampInt(nearestInt(inverse * mins[j]), 0, 15) << 4));
  }
  const float d = putScale(out + 80, maxScale > 0 ? maxScale / 15.0f : 0.0f);
  const float dmin = putScale(out + 82, maxMin > 0 ? maxMin / 15.0f : 0.0f);
  for (int j = 0; j < 16; ++j) {
    const float step = d * static_cast<float>(packed[j] & 15);
    if (step == 0) continue;
    const float offset = dmin * static_cast<float>(packed[j] >> 4);
    for (int l = 0; l < 16; ++l) {
      const float shifted = x[16 * j + l] + offset;
      codes[16 * j + l] = static_cast<std::uint8_t>(clampInt(nearestInt(shifted / step), 0, 3));
    }
  }
  putTwoBitCodes(codes.data(), out + 16);
}

// Q3_K (110 bytes): high-bit mask [0, 32), 2-bit codes [32, 96), 16 signed 6-bit scales [96, 108), d at 108.
void blockQ3_K(const float* x, std::uint8_t* out) {
  std::array<std::int8_t, 256> codes{};
  std::array<float, 16> scales{};
  float peakScale = 0.0f;
  float peakMagnitude = 0.0f;
  for (int j = 0; j < 16; ++j) {
    scales[j] = fitSignedCodesRefined(x + 16 * j, 16, 4, codes.data() + 16 * j);
    if (std::fabs(scales[j]) > peakMagnitude) {
      peakMagnitude = std::fabs(scales[j]);
      peakScale = scales[j];
    }
  }
  // Scale j (stored + 32): low 4 bits in the low (j < 8) or high nibble of byte j % 8, top 2 bits at bit
  // 2·(j / 4) of byte 8 + j % 4.
  std::uint8_t* packed = out + 96;
  std::fill(packed, packed + 12, std::uint8_t{0});
  float d = 0.0f;
  if (peakScale != 0) {
    const float inverse = -32.0f / peakScale;
    for (int j = 0; j < 16; ++j) {
      const int l = clampInt(nearestInt(inverse * scales[j]), -32, 31) + 32;
      packed[j % 8] = static_cast<std::uint8_t>(packed[j % 8] | ((l & 15) << (j < 8 ? 0 : 4)));
      packed[8 + j % 4] = static_cast<std::uint8_t>(packed[8 + j % 4] | ((l >> 4) << (2 * (j / 4))));
    }
    d = 1 / inverse;
  }
  d = putScale(out + 108, d);
  for (int j = 0; j < 16; ++j) {
    const int low = (packed[j % 8] >> (j < 8 ? 0 : 4)) & 15;
    const int high = (packed[8 + j % 4] >> (2 * (j / 4))) & 3;
    const float step = d * static_cast<float>((low | (high << 4)) - 32);
    if (step == 0) continue;
    for (int l = 0; l < 16; ++l)
      codes[16 * j + l] = static_cast<std::int8_t>(clampInt(nearestInt(x[16 * j + l] / step), -4, 3) + 4);
  }
  // Code i's third bit goes to bit i / 32 of mask byte i % 32; the low two bits are packed as Q2_K's.
  std::uint8_t* mask = out;
  std::fill(mask, mask + 32, std::uint8_t{0});
  std::array<std::uint8_t, 256> lowBits{};
  for (int i = 0; i < 256; ++i) {
    const int code = codes[static_cast<std::size_t>(i)];
    if (code > 3) mask[i % 32] = static_cast<std::uint8_t>(mask[i % 32] | (1 << (i / 32)));
    lowBits[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(code & 3);
  }
  putTwoBitCodes(lowBits.data(), out + 32);
}

// What a reader of a Q4_K / Q5_K block sees for each of its eight 32-value sub-blocks: d·scale and dmin·min.
struct KScales {
  std::array<float, 8> step{};
  std::array<float, 8> offset{};
};

// The 6-bit scales and mins of Q4_K / Q5_K for eight 32-value sub-blocks, fitted by make_qkx2_quants with
// weights rms + |x|, then stored at bytes [4, 16) with d at 0 and dmin at 2; `codes` gets the fit's codes.

KScales fitKScales(const float* x, int nmax, float rmin, int nstep, std::uint8_t* codes, std::uint8_t* out) {
  std::array<float, 8> scales{};
  std::array<float, 8> mins{};
  float maxScale = 0.0f;
  float maxMin = 0.0f;
  for (int j = 0; j < 8; ++j) {
    const float* sub = x + 32 * j;
    float sumSquares = 0.0f;
    for (int l = 0; l < 32; ++l) sumSquares += sub[l] * sub[l];
    const float rms = std::sqrt(sumSquares / 32);
    std::array<float, 32> weights{};
    for (int l = 0; l < 32; ++l) weights[static_cast<std::size_t>(l)] = rms + std::fabs(sub[l]);
    scales[j] = fitScaleAndMin(sub, weights.data(), 32, nmax, rmin, 0.1f, nstep, false, codes + 32 * j, mins[j]);
    maxScale = std::max(maxScale, scales[j]);
    maxMin = std::max(maxMin, mins[j]);
  }
  const float inverseScale = maxScale > 0 ? 63.0f / maxScale : 0.0f;
  const float inverseMin = maxMin > 0 ? 63.0f / maxMin : 0.0f;
  // Scale / min j < 4: the low 6 bits of bytes j / j + 4. j ≥ 4: low 4 bits in the low / high nibble of byte
  // j + 4, top 2 bits in the top bits of bytes j − 4 / j.
  std::uint8_t* packed = out + 4;
  std::fill(packed, packed + 12, std::uint8_t{0});
  std::array<int, 8> scaleCodes{};
  std::array<int, 8> minCodes{};
  for (int j = 0; j < 8; ++j) {
    const int ls = clampInt(nearestInt(inverseScale * scales[j]), 0, 63);
    const int lm = clampInt(nearestInt(inverseMin * mins[j]), 0, 63);
    scaleCodes[j] = ls;
    minCodes[j] = lm;
    if (j < 4) {
      packed[j] = static_cast<std::uint8_t>(ls);
      packed[j + 4] = static_cast<std::uint8_t>(lm);
    } else {
      packed[j + 4] = static_cast<std::uint8_t>((ls & 15) | ((lm & 15) << 4));
      packed[j - 4] = static_cast<std::uint8_t>(packed[j - 4] | ((ls >> 4) << 6));
      packed[j] = static_cast<std::uint8_t>(packed[j] | ((lm >> 4) << 6));
    }
  }
  const float d = putScale(out, maxScale / 63.0f);
  const float dmin = putScale(out + 2, maxMin / 63.0f);
  KScales result;
  for (int j = 0; j < 8; ++j) {
    result.step[j] = d * static_cast<float>(scaleCodes[j]);
    result.offset[j] = dmin * static_cast<float>(minCodes[j]);
  }
  return result;
}

// The codes 0…nmax of x ≈ step·code − offset, per 32-value sub-block with the stored scales.
void requantiseK(const float* x, const KScales& scales, int nmax, std::uint8_t* codes) {
  for (int j = 0; j < 8; ++j) {
    if (scales.step[j] == 0) continue;
    for (int l = 0; l < 32; ++l) {
      const float shifted = x[32 * j + l] + scales.offset[j];
      codes[32 * j + l] = static_cast<std::uint8_t>(clampInt(nearestInt(shifted / scales.step[j]), 0, nmax));
    }
  }
}

// Q4_K (144 bytes): d, dmin, scales [4, 16), codes [16, 144): byte 32p + l holds code 64p + l (low nibble)
// and 64p + 32 + l (high).
void blockQ4_K(const float* x, std::uint8_t* out) {
  std::array<std::uint8_t, 256> codes{};
  const KScales scales = fitKScales(x, 15, -1.0f, 20, codes.data(), out);
  requantiseK(x, scales, 15, codes.data());
  for (int p = 0; p < 4; ++p)
    for (int l = 0; l < 32; ++l)
      out[16 + 32 * p + l] = static_cast<std::uint8_t>(codes[64 * p + l] | (codes[64 * p + 32 + l] << 4));
}

// Q5_K (176 bytes): as Q4_K with fifth bits [16, 48) (bit k of byte l: code 32k + l) and low nibbles [48, 176).
void blockQ5_K(const float* x, std::uint8_t* out) {
  std::array<std::uint8_t, 256> codes{};
  const KScales scales = fitKScales(x, 31, -0.5f, 15, codes.data(), out);
  requantiseK(x, scales, 31, codes.data());
  std::uint8_t* fifth = out + 16;
  std::fill(fifth, fifth + 32, std::uint8_t{0});
  for (int i = 0; i < 256; ++i)
    if (codes[static_cast<std::size_t>(i)] > 15)
      fifth[i % 32] = static_cast<std::uint8_t>(fifth[i % 32] | (1 << (i / 32)));
  for (int p = 0; p < 4; ++p)
    for (int l = 0; l < 32; ++l)
      out[48 + 32 * p + l] = static_cast<std::uint8_t>((codes[64 * p + l] & 15) | ((codes[64 * p + 32 + l] & 15) << 4));
}

// Q6_K (210 bytes): low nibbles [0, 128), top bit pairs [128, 192), 16 int8 scales [192, 208), d at 208.
void blockQ6_K(const float* x, std::uint8_t* out) {
  std::array<std::int8_t, 256> codes{};
  std::array<float, 16> scales{};
  float peakScale = 0.0f;
  float peakMagnitude = 0.0f;
  for (int j = 0; j < 16; ++j) {
    scales[j] = fitSignedCodes(x + 16 * j, 16, 32, codes.data() + 16 * j);
    if (std::fabs(scales[j]) > peakMagnitude) {
      peakMagnitude = std::fabs(scales[j]);
      peakScale = scales[j];
    }
  }
  std::fill(out, out + 210, std::uint8_t{0});
  if (peakMagnitude < kNegligible) return;
  const float inverse = -128.0f / peakScale;
  const float d = putScale(out + 208, 1 / inverse);
  for (int j = 0; j < 16; ++j) {
    const int scale = clampInt(nearestInt(inverse * scales[j]), -128, 127);
    out[192 + j] = static_cast<std::uint8_t>(static_cast<std::int8_t>(scale));
    const float step = d * static_cast<float>(scale);
    if (step == 0) continue;
    for (int l = 0; l < 16; ++l)
      codes[16 * j + l] = static_cast<std::int8_t>(clampInt(nearestInt(x[16 * j + l] / step), -32, 31) + 32);
  }
  // Per 128-value half h: code 128h + 32k + l has its low nibble in byte 64h + l + 32·(k % 2) (low nibble for
  // k < 2, high above) and its top two bits at bit 2k of byte 128 + 32h + l.
  for (int h = 0; h < 2; ++h)
    for (int l = 0; l < 32; ++l) {
      const std::int8_t* c = codes.data() + 128 * h + l;
      out[64 * h + l] = static_cast<std::uint8_t>((c[0] & 15) | ((c[64] & 15) << 4));
      out[64 * h + l + 32] = static_cast<std::uint8_t>((c[32] & 15) | ((c[96] & 15) << 4));
      out[128 + 32 * h + l] =
          static_cast<std::uint8_t>((c[0] >> 4) | ((c[32] >> 4) << 2) | ((c[64] >> 4) << 4) | ((c[96] >> 4) << 6));
    }
}

using BlockQuantiser = void (*)(const float*, std::uint8_t*);

BlockQuantiser blockQuantiser(GgmlType type) {
  switch (type) {
    case GgmlType::Q4_0:
      return blockQ4_0;
    case GgmlType::Q4_1:
      return blockQ4_1;
    case GgmlType::Q5_0:
      return blockQ5_0;
    case GgmlType::Q5_1:
      return blockQ5_1;
    case GgmlType::Q8_0:
      return blockQ8_0;
    case GgmlType::Q2_K:
      return blockQ2_K;
    case GgmlType::Q3_K:
      return blockQ3_K;
    case GgmlType::Q4_K:
      return blockQ4_K;
    case GgmlType::Q5_K:
      return blockQ5_K;
    case GgmlType::Q6_K:
      return blockQ6_K;
    default:
      return nullptr;
  }
}

}  // namespace
}  // namespace ggml_quantise_parts

std::vector<std::uint8_t> quantiseGgml(std::span<const float> values, GgmlType type) {
  namespace parts = ggml_quantise_parts;
  const GgmlTypeTraits& traits = ggmlTraits(type);
  const std::string what =
      "quantising " + std::to_string(values.size()) + " values to ggml " + std::string(traits.name) + ": ";
  if (values.size() % traits.blockElements != 0)
    throw std::invalid_argument(what + "not a whole number of " + std::to_string(traits.blockElements) +
                                "-value blocks");
  const std::size_t blocks = values.size() / traits.blockElements;
  std::vector<std::uint8_t> bytes(blocks * traits.blockBytes);
  switch (type) {
    case GgmlType::F32:
      for (std::size_t i = 0; i < values.size(); ++i) {
        const std::uint32_t bits = std::bit_cast<std::uint32_t>(values[i]);
        parts::putU16(bytes.data() + 4 * i, static_cast<std::uint16_t>(bits & 0xffffu));
        parts::putU16(bytes.data() + 4 * i + 2, static_cast<std::uint16_t>(bits >> 16));
      }
      return bytes;
    case GgmlType::F16:
      for (std::size_t i = 0; i < values.size(); ++i) parts::putU16(bytes.data() + 2 * i, parts::halfBits(values[i]));
      return bytes;
    case GgmlType::BF16:
      for (std::size_t i = 0; i < values.size(); ++i)
        parts::putU16(bytes.data() + 2 * i, parts::bfloat16Bits(values[i]));
      return bytes;
    default:
      break;
  }
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]))
      throw std::invalid_argument(what + "value " + std::to_string(i) + " is not finite (" + std::to_string(values[i]) +
                                  ")");
  const parts::BlockQuantiser quantise = parts::blockQuantiser(type);
  for (std::size_t b = 0; b < blocks; ++b) {
    try {
      quantise(values.data() + b * traits.blockElements, bytes.data() + b * traits.blockBytes);
    } catch (const std::range_error& error) {
      throw std::invalid_argument(what + "block " + std::to_string(b) + ": " + error.what());
    }
  }
  return bytes;
}

}  // namespace shotchain::io
