#pragma once

#include <cstdio>
#include <string>

#include <ATen/ATen.h>

namespace shotchain::io {
class SafetensorsFile;
class WeightSet;
}  // namespace shotchain::io

namespace shotchain::cli {

struct Tolerance {
  double maxAbs = 1e-4;
  double relL2 = 1e-5;
};

struct Report {
  Tolerance tolerance;
  std::string vae;        // --vae: the VAE file a sampling-loop IO file's encode and decode run on (empty: none)
  std::string highNoise;  // --high-noise: a two-expert loop's high-noise expert (WEIGHTS is the low-noise one)
  int compared = 0;
  int failed = 0;

  // Prints one line per tensor: max-abs and relative L2 error, PASS or FAIL.
  void compare(const std::string& name, const at::Tensor& got, const at::Tensor& expected) {
    ++compared;
    if (got.sizes() != expected.sizes()) {
      ++failed;
      std::printf("%-36s shape %s vs expected %s  FAIL\n", name.c_str(), c10::str(got.sizes()).c_str(),
                  c10::str(expected.sizes()).c_str());
      return;
    }
    const at::Tensor g = got.to(at::kDouble), e = expected.to(at::kDouble);
    const double maxAbs = (g - e).abs().max().item<double>();
    const double norm = e.norm().item<double>();
    const double relL2 = norm > 0 ? (g - e).norm().item<double>() / norm : (g - e).norm().item<double>();
    const bool pass = maxAbs <= tolerance.maxAbs && relL2 <= tolerance.relL2;
    failed += pass ? 0 : 1;
    std::printf("%-36s max-abs %.3e  rel-L2 %.3e  %s\n", name.c_str(), maxAbs, relL2, pass ? "PASS" : "FAIL");
  }
};

inline bool endsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// One model component that `shotchain verify` can check against a reference IO file.
struct VerifiableComponent {
  const char* name;
  // True when the IO file's metadata `source` or the weights say this is the component.
  bool (*matches)(const io::WeightSet& weights, const std::string& source);
  void (*verify)(const io::WeightSet& weights, const io::SafetensorsFile& file, Report& report);
  Tolerance tolerance{};  // the component's default (golden README §6); --max-abs / --rel-l2 override
};

bool matchesWanDit(const io::WeightSet& weights, const std::string& source);
void verifyWanDit(const io::WeightSet& weights, const io::SafetensorsFile& file, Report& report);
bool matchesWanVae(const io::WeightSet& weights, const std::string& source);
void verifyWanVae(const io::WeightSet& weights, const io::SafetensorsFile& file, Report& report);
bool matchesTi2vLoop(const io::WeightSet& weights, const std::string& source);
void verifyTi2vLoop(const io::WeightSet& weights, const io::SafetensorsFile& file, Report& report);
bool matchesExpertLoop(const io::WeightSet& weights, const std::string& source);
void verifyExpertLoop(const io::WeightSet& weights, const io::SafetensorsFile& file, Report& report);
bool matchesWan21I2v(const io::WeightSet& weights, const std::string& source);
void verifyWan21I2v(const io::WeightSet& weights, const io::SafetensorsFile& file, Report& report);
bool matchesClipVision(const io::WeightSet& weights, const std::string& source);
void verifyClipVision(const io::WeightSet& weights, const io::SafetensorsFile& file, Report& report);
bool matchesUmt5(const io::WeightSet& weights, const std::string& source);
void verifyUmt5(const io::WeightSet& weights, const io::SafetensorsFile& file, Report& report);

// IO files that hold no weights (`shotchain verify IO`).
bool matchesTimestepMatrix(const io::SafetensorsFile& file);
void verifyTimestepMatrix(const io::SafetensorsFile& file, Report& report);

}  // namespace shotchain::cli
