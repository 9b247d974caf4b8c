#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "cli/bench/bench_dit_ranks.h"
#include "cli/bench/bench_options.h"
#include "cli/command_specs.h"
#include "cli/distributed_session.h"
#include "cli/verbs.h"
#include "io/ggml_dequant.h"
#include "io/ggml_quantise.h"
#include "io/gguf_writer.h"
#include "io/safetensors_writer.h"
#include "io/weight_set.h"
#include "memory/device_memory.h"
#include "memory/device_transfer.h"
#include "memory/memory_probe.h"
#include "memory/process_memory.h"
#include "models/attention.h"
#include "models/gguf_tensor_types.h"
#include "models/wan/wan_family.h"
#include "models/wan/wan_memory.h"
#include "models/wan/wan_model.h"
#include "util/byte_size.h"

namespace shotchain::cli {
namespace {

double medianSeconds(int warmup, int repeats, const std::function<void()>& body) {
  for (int i = 0; i < warmup; ++i) body();
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    body();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Grid (1, h, w) with h·w = tokens and h the largest divisor ≤ √tokens.
std::pair<std::int64_t, std::int64_t> grid(std::int64_t tokens) {
  std::int64_t h = static_cast<std::int64_t>(std::sqrt(static_cast<double>(tokens)));
  while (tokens % h != 0) --h;
  return {h, tokens / h};
}

// Sizes a forward cannot run with are refused before anything is allocated, naming the option; so is a model
// whose weights and one forward's activations exceed the machine's memory.
void checkBenchSizes(const models::WanConfig& c, std::int64_t tokens, at::ScalarType dtype) {
  const auto within = [](const char* option, std::int64_t value, std::int64_t lo, std::int64_t hi) {
    if (value < lo || value > hi)
      throw kBenchDitCommand.error(std::string(option) + ": " + std::to_string(value) + " must be from " +
                                   std::to_string(lo) + " to " + std::to_string(hi));
  };
  within("--tokens", tokens, 1, 1'000'000);
  within("--layers", c.numLayers, 1, 1000);
  within("--dim", c.dim, 1, 65536);
  within("--heads", c.numHeads, 1, c.dim);
  within("--ffn", c.ffnDim, 1, 262144);
  const std::uint64_t needed =
      models::wanDitWeightBytes(c, dtype) + models::estimateWanDitActivations(c, dtype, 1, tokens);
  const std::uint64_t total = memory::deviceTotalBytes("cpu");
  if (needed > total)
    throw kBenchDitCommand.error("the model's weights and one forward need " + util::formatByteSize(needed) +
                                 "; this machine has " + util::formatByteSize(total));
}

std::filesystem::path temporaryWeightsFile(const char* extension) {
  return std::filesystem::temp_directory_path() / ("shotchain-bench-" + std::to_string(::getpid()) + extension);
}

// The model's tensors as a GGUF file of `type`, as `convert --type` writes one.
std::filesystem::path writeGgufCopy(const models::WanModel& model, io::GgmlType type) {
  std::vector<io::GgufTensorPlan> plans;
  const auto tensors = model.namedParameters();
  for (const auto& [name, value] : tensors) {
    const std::vector<std::uint64_t> shape(value.sizes().begin(), value.sizes().end());
    plans.push_back({name, models::ggufTensorType(&models::wanDitFamily(), name, shape, type), shape});
  }
  io::GgufWriter writer({{"general.architecture", "wan"}}, plans);
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const at::Tensor values = tensors[i].second.to(at::kFloat).contiguous();
    writer.append(
        io::quantiseGgml({values.data_ptr<float>(), static_cast<std::size_t>(values.numel())}, plans[i].type));
  }
  const std::filesystem::path path = temporaryWeightsFile(".gguf");
  std::ofstream(path, std::ios::binary) << writer.finish();
  return path;
}

// The model with the blocks' matmul weights as scaled fp8 (e4m3, one float32 scale a tensor), as ComfyUI's
// *_fp8_scaled files hold them.
std::filesystem::path writeFloat8Copy(const models::WanModel& model) {
  io::NamedTensors tensors{{"scaled_fp8", at::empty({0}, at::TensorOptions().dtype(at::kFloat8_e4m3fn))}};
  for (const auto& [name, value] : model.namedParameters()) {
    const std::vector<std::uint64_t> shape(value.sizes().begin(), value.sizes().end());
    const at::Tensor values = value.to(at::kFloat);
    if (models::ggufTensorType(&models::wanDitFamily(), name, shape, io::GgmlType::Q8_0) == io::GgmlType::F32) {
      tensors.emplace_back(name, values);
      continue;
    }
    const at::Tensor scale = (values.abs().max() / 448.0).clamp_min(1e-12).reshape({});
    tensors.emplace_back(name, (values / scale).to(at::kFloat8_e4m3fn));
    tensors.emplace_back(name.substr(0, name.size() - std::string(".weight").size()) + ".scale_weight", scale);
  }
  const std::filesystem::path path = temporaryWeightsFile(".safetensors");
  io::saveSafetensors(path, tensors, {{"config", model.config().toJson()}});
  return path;
}

}  // namespace

int runBenchDit(const Args& args) {
  const ParsedOptions parsed = kBenchDitCommand.parse(args, 1);
  if (const std::optional<int> launched = launchRanksIfAsked("bench dit", args, parsed)) return *launched;
  const std::optional<std::string> weightsFile = parsed.text("--weights");
  if (weightsFile) {
    for (const char* sized : {"--config", "--quant", "--save-weights"})
      if (parsed.text(sized))
        throw kBenchDitCommand.error(std::string(sized) + " and --weights: the file says what the model is");
    for (const char* sized : {"--dim", "--layers", "--heads", "--ffn"})
      if (parsed.int64(sized))
        throw kBenchDitCommand.error(std::string(sized) + " and --weights: the file says what the model is");
  }
  std::optional<io::WeightSet> loaded =
      weightsFile ? std::optional<io::WeightSet>(io::WeightSet::open(*weightsFile)) : std::nullopt;
  const std::string preset = weightsFile ? "file" : parsed.text("--config").value_or("custom-default");
  models::WanConfig config = loaded ? models::detectWanConfig(*loaded).config
                                    : models::WanConfig::preset(parsed.text("--config").value_or("1.3b"));
  if (!parsed.text("--config") && !loaded) config.numLayers = 2;  // default: dim 1536, 2 layers, 1560 tokens
  config.dim = parsed.int64("--dim").value_or(config.dim);
  config.numLayers = parsed.int64("--layers").value_or(config.numLayers);
  config.numHeads = parsed.int64("--heads").value_or(config.numHeads);
  config.ffnDim = parsed.int64("--ffn").value_or(config.ffnDim);
  const std::int64_t tokens = parsed.int64("--tokens").value();
  const int repeats = std::max(1, parsed.integer("--repeats").value());
  const bool json = parsed.flag("--json");
  const at::ScalarType dtype = parseBenchDtype(parsed.text("--dtype").value());
  const std::string deviceName = parsed.text("--device").value_or("cpu");
  const at::Device device = memory::torchDevice(deviceName);  // a clear error where CUDA is not there
  // A CUDA call returns before the device is done: a timed body ends by reading one value back.
  const auto done = [&](const at::Tensor& result) {
    if (device.is_cuda()) (void)result.flatten()[0].item<float>();
  };
  const auto on = [&](const at::Tensor& tensor) { return tensor.to(device); };
  checkBenchSizes(config, tokens, dtype);
  config.check();
  const auto [h, w] = grid(tokens);
  if (parsed.int64("--ranks")) return benchDitRanks(parsed, config, h, w, repeats, dtype);
  std::optional<io::GgmlType> quant;
  const bool float8 = parsed.text("--quant") == "fp8";
  if (const auto name = parsed.text("--quant"); name && !float8) {
    quant = io::parseGgmlTypeName(*name);
    if (!quant || !io::isBlockQuantised(*quant))
      throw kBenchDitCommand.error("--quant: \"" + *name +
                                   "\" is neither fp8 nor a GGUF block type (Q8_0, Q6_K, Q4_K, …)");
  }
  // A random model kept quantised is written to a file first and read back as stored, as a file of that kind loads.
  const auto saveIfAsked = [&](const models::WanModel& f32) {
    if (const auto save = parsed.text("--save-weights"))
      io::saveSafetensors(*save, f32.namedParameters(), {{"config", config.toJson()}});
  };
  if (!loaded && (float8 || quant)) {
    const models::WanModel f32 = models::WanModel::random(config, 42, {at::kFloat});
    saveIfAsked(f32);
    const std::filesystem::path path = float8 ? writeFloat8Copy(f32) : writeGgufCopy(f32, *quant);
    loaded = io::WeightSet::open(path);
    std::filesystem::remove(path);  // the mapping holds on to it
  }
  // Loading and forwards in a scope of their own: the model is gone before the analysis below allocates its
  // inputs, so that the process's peak memory is the model's (what a side-by-side with another program compares).
  memory::resetProcessMemoryPeak();
  const std::uint64_t residentBefore = memory::processMemory().resident;
  const std::unique_ptr<memory::MemoryProbe> probe = memory::makeDeviceMemoryProbe(deviceName);
  probe->resetPeak();
  if (device.is_cuda()) memory::emptyDeviceCache(deviceName);
  const std::shared_ptr<const models::DitMemoryModel> planned =
      loaded ? models::wanDitMemory(*loaded) : models::wanDitMemory(config, dtype);
  double forward = 0, dequant = 0;
  std::size_t blockTensors = 0;
  {
    const models::WanModel model = [&] {
      models::WanLoadOptions options{dtype, device};
      if (loaded) {
        options.keepQuantised = true;
        return models::WanModel::load(*loaded, options);
      }
      if (parsed.text("--save-weights")) saveIfAsked(models::WanModel::random(config, 42, {at::kFloat}));
      return models::WanModel::random(config, 42, options);
    }();
    // Dequantising every kept block once: what each forward spends before its matmuls.
    std::vector<std::pair<at::Tensor, io::GgmlType>> blocks;
    for (const auto& [name, value] : model.namedParameters())
      if (value.scalar_type() == at::kByte)
        for (const auto& [other, type] : model.namedParameters())
          if (other == name + "_ggml")
            blocks.emplace_back(value, *io::ggmlTypeFromId(static_cast<std::uint32_t>(type.item<std::int64_t>())));
    blockTensors = blocks.size();
    dequant = blocks.empty() ? 0.0 : medianSeconds(1, repeats, [&] {
      for (const auto& [raw, type] : blocks) {
        const std::int64_t in = raw.size(1) / io::ggmlTraits(type).blockBytes * io::ggmlTraits(type).blockElements;
        done(io::dequantiseGgml(raw, type, {raw.size(0), in}, dtype));
      }
    });
    const at::Tensor x = on(at::randn({config.inDim, 1, h * config.patch[1], w * config.patch[2]}));
    const at::Tensor t = on(at::tensor({500.0f}));
    const at::Tensor context = on(at::randn({std::min<std::int64_t>(config.textLen, 77), config.textDim}));

    forward = medianSeconds(1, repeats, [&] { done(model.forward({x}, t, {context}).at(0)); });
    if (const auto output = parsed.text("--output"))
      io::saveSafetensors(
          *output,
          {{"x", x}, {"t", t}, {"context", context}, {"out", model.forward({x}, t, {context}).at(0).to(at::kFloat)}},
          {{"config", config.toJson()}});
  }
  const memory::ProcessMemory afterForward = memory::processMemory();
  const std::string storedQuantisation = loaded ? loaded->quantisation() : "none";
  loaded.reset();  // its mapping too
  const std::uint64_t liveTensorPeak = probe->sample().peakAllocated;
  const models::LatentShape latent{config.inDim, 1, h * config.patch[1], w * config.patch[2]};
  const std::uint64_t planBytes = planned->weightBytes(dtype) - planned->keptAsStoredSaving(dtype) +
                                  planned->activationBytes(dtype, 1, latent) +
                                  (device.is_cuda() ? 0 : planned->hostMatmulWorkspace(dtype));
  // On the host the process's resident growth; on a GPU the caching allocator's peak.
  const std::uint64_t modelPeak = device.is_cuda()                     ? liveTensorPeak
                                  : afterForward.peak > residentBefore ? afterForward.peak - residentBefore
                                                                       : 0;
  const double flops = models::wanForwardFlops(config, tokens);

  // The machine's dense GEMM rate, same dtype, same run.
  const std::int64_t n = 2048;
  const at::Tensor a = on(at::randn({n, n}).to(dtype)), b = on(at::randn({n, n}).to(dtype));
  const double gemm = medianSeconds(1, 5, [&] { done(at::mm(a, b)); });
  const double gemmRate = 2.0 * n * n * n / gemm;

  // Where the time goes: the forward's linear layers alone, and its attention alone.
  const std::int64_t d = config.dim, T = config.textLen;
  const auto opts = at::TensorOptions().dtype(dtype).device(device);
  const at::Tensor xl = on(at::randn({1, tokens, d}).to(dtype)), xt = on(at::randn({1, T, d}).to(dtype));
  const at::Tensor wdd = on(at::randn({d, d}).to(dtype)), bd = at::zeros({d}, opts);
  const at::Tensor wfd = on(at::randn({config.ffnDim, d}).to(dtype)), bf = at::zeros({config.ffnDim}, opts);
  const at::Tensor wdf = on(at::randn({d, config.ffnDim}).to(dtype));
  const double linears = medianSeconds(1, repeats, [&] {
    for (std::int64_t layer = 0; layer < config.numLayers; ++layer) {
      for (int k = 0; k < 6; ++k) (void)at::linear(xl, wdd, bd);  // self q k v o, cross q o
      for (int k = 0; k < 2; ++k) (void)at::linear(xt, wdd, bd);  // cross k v
      done(at::linear(at::linear(xl, wfd, bf), wdf, bd));         // FFN
    }
  });
  const at::Tensor q = on(at::randn({1, tokens, config.numHeads, config.headDim()}).to(dtype));
  const at::Tensor kt = on(at::randn({1, T, config.numHeads, config.headDim()}).to(dtype));
  const double attention = medianSeconds(1, repeats, [&] {
    for (std::int64_t layer = 0; layer < config.numLayers; ++layer) {
      (void)models::attention(q, q, q);
      done(models::attention(q, kt, kt));
    }
  });

  const double achieved = flops / forward;
  const double ratio = achieved / gemmRate;
  const std::string dtypeName = std::string(dtype == at::kFloat ? "float32" : "bfloat16") +
                                (float8  ? std::string(" with scaled fp8 weights")
                                 : quant ? " with " + std::string(io::ggmlTraits(*quant).name) + " blocks"
                                 : storedQuantisation != "none" ? " with " + storedQuantisation + " weights"
                                                                : "");
  if (json) {
    std::printf(
        "{\"config\": %s, \"preset\": \"%s\", \"tokens\": %lld, \"dtype\": \"%s\", \"device\": \"%s\", \"threads\": "
        "%d, "
        "\"repeats\": %d, "
        "\"forward_s\": %.6f, \"flops\": %.6e, \"achieved_flops_per_s\": %.6e, \"gemm_flops_per_s\": %.6e, "
        "\"ratio\": %.4f, \"linear_s\": %.6f, \"attention_s\": %.6f, \"other_s\": %.6f, \"dequant_s\": %.6f, "
        "\"peak_rss_bytes\": %llu, \"resident_before_model_bytes\": %llu, \"model_peak_bytes\": %llu, "
        "\"live_tensor_peak_bytes\": %llu, \"plan_bytes\": %llu}\n",
        config.toJson().c_str(), preset.c_str(), static_cast<long long>(tokens), dtypeName.c_str(), deviceName.c_str(),
        at::get_num_threads(), repeats, forward, flops, achieved, gemmRate, ratio, linears, attention,
        std::max(0.0, forward - linears - attention), dequant, static_cast<unsigned long long>(afterForward.peak),
        static_cast<unsigned long long>(residentBefore), static_cast<unsigned long long>(modelPeak),
        static_cast<unsigned long long>(liveTensorPeak), static_cast<unsigned long long>(planBytes));
    return 0;
  }
  const std::string where =
      device.is_cuda() ? deviceName : "cpu, " + std::to_string(at::get_num_threads()) + " threads";
  std::printf("dit: dim %lld, %lld layers, %lld heads, ffn %lld, %lld tokens (grid 1x%lldx%lld), %s, %s\n",
              static_cast<long long>(config.dim), static_cast<long long>(config.numLayers),
              static_cast<long long>(config.numHeads), static_cast<long long>(config.ffnDim),
              static_cast<long long>(tokens), static_cast<long long>(h), static_cast<long long>(w), dtypeName.c_str(),
              where.c_str());
  std::printf("forward: %.3f s median of %d (%.1f GFLOP analytic)\n", forward, repeats, flops / 1e9);
  std::printf("achieved: %.1f GFLOP/s; dense GEMM (%lldx%lld): %.1f GFLOP/s; ratio %.0f%%\n", achieved / 1e9,
              static_cast<long long>(n), static_cast<long long>(n), gemmRate / 1e9, 100 * ratio);
  std::printf("time: linear layers %.3f s (%.0f%%), attention %.3f s (%.0f%%), other %.3f s\n", linears,
              100 * linears / forward, attention, 100 * attention / forward,
              std::max(0.0, forward - linears - attention));
  if (blockTensors > 0)
    std::printf("dequantisation: %.3f s per forward (%.0f%%), %zu block tensors\n", dequant, 100 * dequant / forward,
                blockTensors);
  std::printf(
      "memory: peak resident %s through loading and forwards; the model %s over the %s before it (the plan: %s, "
      "%+.0f%%); live tensors at most %s\n",
      util::formatByteSize(afterForward.peak).c_str(), util::formatByteSize(modelPeak).c_str(),
      util::formatByteSize(residentBefore).c_str(), util::formatByteSize(planBytes).c_str(),
      modelPeak > 0 ? 100.0 * (static_cast<double>(planBytes) / static_cast<double>(modelPeak) - 1.0) : 0.0,
      util::formatByteSize(liveTensorPeak).c_str());
  return 0;
}

}  // namespace shotchain::cli
