// One Wan DiT forward timed in stable-diffusion.cpp (ggml, CPU), on the inputs of a
// `shotchain bench dit --output` file. Built by build-peer.sh against the fetched sources.

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ggml-backend.h"
#include "ggml_extend.hpp"
#include "json.hpp"
#include "model.h"
#include "stable-diffusion.h"
#include "wan.hpp"

namespace {

using json = nlohmann::json;

const char* const kPrefix = "model.diffusion_model";

struct Options {
  std::string weights;
  std::string inputs;
  std::string output;
  std::string wtype;
  int repeats = 3;
  int warmup = 1;
  int threads = 2;
  bool flashAttention = false;
  bool sdcppRunner = false;
  bool json = false;
  bool verbose = false;
};

void usage(FILE* to) {
  std::fprintf(to,
               "usage: sdcpp_wan_dit --weights FILE --inputs FILE [--repeats N] [--warmup N] [--threads N]\n"
               "                     [--flash-attn] [--wtype f32|f16|bf16|q8_0] [--output FILE]\n"
               "                     [--sdcpp-runner] [--json] [--verbose]\n"
               "\n"
               "  --weights FILE  the DiT (safetensors or GGUF, as stable-diffusion.cpp's loader reads)\n"
               "  --inputs FILE   x, t and context from `shotchain bench dit --output`\n"
               "  --repeats N     timed forwards, the median is reported (default 3)\n"
               "  --warmup N      untimed forwards first (default 1)\n"
               "  --threads N     ggml threads (default 2)\n"
               "  --flash-attn    stable-diffusion.cpp's flash attention (K and V in F16)\n"
               "  --wtype T       convert the matmul weights on load, as sd-cli --type does\n"
               "  --output FILE   the last forward's output as float32 safetensors (\"out\")\n"
               "  --sdcpp-runner  stable-diffusion.cpp's WanRunner as is (30 or 40 layers only)\n"
               "  --json          one JSON line on stdout\n");
}

Options parseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--weights")
      o.weights = value();
    else if (a == "--inputs")
      o.inputs = value();
    else if (a == "--output")
      o.output = value();
    else if (a == "--wtype")
      o.wtype = value();
    else if (a == "--repeats")
      o.repeats = std::max(1, std::stoi(value()));
    else if (a == "--warmup")
      o.warmup = std::max(0, std::stoi(value()));
    else if (a == "--threads")
      o.threads = std::max(1, std::stoi(value()));
    else if (a == "--flash-attn")
      o.flashAttention = true;
    else if (a == "--sdcpp-runner")
      o.sdcppRunner = true;
    else if (a == "--json")
      o.json = true;
    else if (a == "--verbose")
      o.verbose = true;
    else if (a == "-h" || a == "--help") {
      usage(stdout);
      std::exit(0);
    } else {
      throw std::invalid_argument("unknown argument " + a);
    }
  }
  if (o.weights.empty() || o.inputs.empty()) throw std::invalid_argument("--weights and --inputs are required");
  return o;
}

ggml_type parseWtype(const std::string& name) {
  if (name.empty()) return GGML_TYPE_COUNT;
  if (name == "f32") return GGML_TYPE_F32;
  if (name == "f16") return GGML_TYPE_F16;
  if (name == "bf16") return GGML_TYPE_BF16;
  if (name == "q8_0") return GGML_TYPE_Q8_0;
  throw std::invalid_argument("--wtype: " + name + " is none of f32, f16, bf16, q8_0");
}

// A float32 tensor of a safetensors file, its shape outermost first as PyTorch writes it.
struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

struct SafetensorsFile {
  std::map<std::string, HostTensor> tensors;
  json metadata = json::object();
};

SafetensorsFile readSafetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  uint64_t headerBytes = 0;
  in.read(reinterpret_cast<char*>(&headerBytes), sizeof headerBytes);
  std::string header(headerBytes, '\0');
  in.read(header.data(), static_cast<std::streamsize>(headerBytes));
  if (!in) throw std::runtime_error(path + ": truncated safetensors header");
  const json parsed = json::parse(header);
  const std::streamoff dataStart = static_cast<std::streamoff>(sizeof headerBytes + headerBytes);
  SafetensorsFile file;
  for (const auto& [name, info] : parsed.items()) {
    if (name == "__metadata__") {
      file.metadata = info;
      continue;
    }
    if (info.at("dtype") != "F32") throw std::runtime_error(path + ": " + name + " is not F32");
    HostTensor t;
    int64_t count = 1;
    for (const auto& d : info.at("shape")) {
      t.shape.push_back(d.get<int64_t>());
      count *= t.shape.back();
    }
    const auto begin = info.at("data_offsets")[0].get<uint64_t>();
    const auto end = info.at("data_offsets")[1].get<uint64_t>();
    if (end - begin != static_cast<uint64_t>(count) * sizeof(float))
      throw std::runtime_error(path + ": " + name + " has the wrong byte count");
    t.data.resize(static_cast<size_t>(count));
    in.seekg(dataStart + static_cast<std::streamoff>(begin));
    in.read(reinterpret_cast<char*>(t.data.data()), static_cast<std::streamsize>(end - begin));
    if (!in) throw std::runtime_error(path + ": " + name + " is truncated");
    file.tensors.emplace(name, std::move(t));
  }
  return file;
}

void writeSafetensors(const std::string& path, const std::string& name, const HostTensor& t, const json& metadata) {
  json header;
  header[name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {0, t.data.size() * sizeof(float)}}};
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  const uint64_t headerBytes = text.size();
  out.write(reinterpret_cast<const char*>(&headerBytes), sizeof headerBytes);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.write(reinterpret_cast<const char*>(t.data.data()), static_cast<std::streamsize>(t.data.size() * sizeof(float)));
  if (!out) throw std::runtime_error("cannot write " + path);
}

const HostTensor& need(const SafetensorsFile& file, const std::string& name) {
  const auto it = file.tensors.find(name);
  if (it == file.tensors.end()) throw std::runtime_error("the inputs file has no tensor \"" + name + "\"");
  return it->second;
}

// ggml shapes run innermost first: the reverse of the PyTorch shape over the same bytes.
sd::Tensor<float> toSd(const HostTensor& t) {
  return sd::Tensor<float>(std::vector<int64_t>(t.shape.rbegin(), t.shape.rend()), t.data);
}

const TensorStorage& storage(const String2TensorStorage& map, const std::string& name) {
  const auto it = map.find(std::string(kPrefix) + "." + name);
  if (it == map.end()) throw std::runtime_error("the weights have no tensor " + name);
  return it->second;
}

bool has(const String2TensorStorage& map, const std::string& name) {
  return map.find(std::string(kPrefix) + "." + name) != map.end();
}

// What WanRunner reads off its table of 30- and 40-layer models, read here off the tensors
// (and the head count off the config ShotChain wrote), so that any depth runs.
WAN::WanParams paramsFromWeights(const String2TensorStorage& map, const json& config) {
  WAN::WanParams p;
  p.num_layers = 0;
  const std::string blocks = std::string(kPrefix) + ".blocks.";
  for (const auto& [name, _] : map) {
    if (name.rfind(blocks, 0) != 0) continue;
    p.num_layers = std::max(p.num_layers, std::atoi(name.c_str() + blocks.size()) + 1);
  }
  if (p.num_layers == 0) throw std::runtime_error("the weights have no blocks.N tensors");
  if (has(map, "img_emb.proj.1.weight") || has(map, "vace_blocks.0.modulation"))
    throw std::runtime_error("only text-to-video DiTs (no img_emb, no VACE) are wired here");

  // TensorStorage shapes are ggml's: ne[0] is the input width of a linear layer.
  const TensorStorage& patch = storage(map, "patch_embedding.weight");
  const auto& patchSize = config.value("patch_size", std::vector<int>{1, 2, 2});
  p.patch_size = {patchSize.at(0), patchSize.at(1), patchSize.at(2)};
  const int64_t patchVolume = int64_t{patchSize.at(0)} * patchSize.at(1) * patchSize.at(2);
  p.dim = storage(map, "patch_embedding.bias").ne[0];
  p.in_dim = patch.nelements() / patchVolume / p.dim;
  p.ffn_dim = storage(map, "blocks.0.ffn.0.weight").ne[1];
  p.text_dim = storage(map, "text_embedding.0.weight").ne[0];
  p.freq_dim = static_cast<int>(storage(map, "time_embedding.0.weight").ne[0]);
  p.out_dim = storage(map, "head.head.weight").ne[1] / patchVolume;
  p.qk_norm = has(map, "blocks.0.self_attn.norm_q.weight");
  p.cross_attn_norm = has(map, "blocks.0.norm3.weight");
  p.num_heads = config.value("num_heads", p.dim / 128);
  p.text_len = config.value("text_len", int64_t{512});
  p.eps = config.value("eps", 1e-6f);
  p.model_type = "t2v";

  const int headDim = static_cast<int>(p.dim / p.num_heads);
  p.axes_dim = {headDim - 4 * (headDim / 6), 2 * (headDim / 6), 2 * (headDim / 6)};
  p.axes_dim_sum = headDim;
  return p;
}

// WanRunner's graph (patchify, RoPE table, Wan::forward) over a WAN::Wan built from
// parameters given rather than looked up by layer count.
struct DitRunner : public GGMLRunner {
  WAN::WanParams params;
  WAN::Wan wan;
  std::vector<float> pe;

  DitRunner(ggml_backend_t backend, const String2TensorStorage& map, const WAN::WanParams& p)
      : GGMLRunner(backend), params(p), wan(p) {
    wan.init(params_ctx, map, kPrefix);
  }

  std::string get_desc() override { return "wan-dit"; }

  void get_param_tensors(std::map<std::string, ggml_tensor*>& tensors) { wan.get_param_tensors(tensors, kPrefix); }

  ggml_cgraph* build_graph(const sd::Tensor<float>& xIn, const sd::Tensor<float>& tIn, const sd::Tensor<float>& cIn) {
    ggml_cgraph* gf = new_graph_custom(WAN::WAN_GRAPH_SIZE);
    ggml_tensor* x = make_input(xIn);
    ggml_tensor* t = make_input(tIn);
    ggml_tensor* c = make_input(cIn);
    pe = Rope::gen_wan_pe(static_cast<int>(x->ne[2]), static_cast<int>(x->ne[1]), static_cast<int>(x->ne[0]),
                          std::get<0>(params.patch_size), std::get<1>(params.patch_size),
                          std::get<2>(params.patch_size), 1, params.theta, params.axes_dim);
    const int64_t positions = static_cast<int64_t>(pe.size()) / params.axes_dim_sum / 2;
    ggml_tensor* peTensor = ggml_new_tensor_4d(compute_ctx, GGML_TYPE_F32, 2, 2, params.axes_dim_sum / 2, positions);
    set_backend_tensor_data(peTensor, pe.data());
    GGMLRunnerContext runnerContext = get_context();
    ggml_build_forward_expand(gf, wan.forward(&runnerContext, x, t, c, peTensor));
    return gf;
  }

  sd::Tensor<float> forward(int threads, const sd::Tensor<float>& x, const sd::Tensor<float>& t,
                            const sd::Tensor<float>& c) {
    std::optional<sd::Tensor<float>> out = compute<float>([&] { return build_graph(x, t, c); }, threads, false);
    if (!out) throw std::runtime_error("the forward failed");
    return std::move(*out);
  }
};

int logLevel = SD_LOG_WARN;

void logToStderr(sd_log_level_t level, const char* text, void*) {
  if (level >= logLevel) std::fputs(text, stderr);
}

void noProgress(int, int, float, void*) {}

// VmRSS and VmHWM of /proc/self/status in bytes, as ShotChain's bench dit reads them.
std::pair<uint64_t, uint64_t> residentAndPeak() {
  std::ifstream status("/proc/self/status");
  std::string key, rest;
  uint64_t kib = 0, resident = 0, peak = 0;
  while (status >> key) {
    if (key == "VmRSS:" && status >> kib)
      resident = kib * 1024;
    else if (key == "VmHWM:" && status >> kib)
      peak = kib * 1024;
    std::getline(status, rest);
  }
  return {resident, peak};
}

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

int run(const Options& o) {
  if (o.verbose) logLevel = SD_LOG_DEBUG;
  sd_set_log_callback(logToStderr, nullptr);
  sd_set_progress_callback(noProgress, nullptr);

  const SafetensorsFile inputs = readSafetensors(o.inputs);
  json config = json::object();
  if (inputs.metadata.contains("config")) config = json::parse(inputs.metadata["config"].get<std::string>());

  std::ofstream("/proc/self/clear_refs") << "5";
  const uint64_t residentBefore = residentAndPeak().first;
  const auto loadStart = std::chrono::steady_clock::now();
  ModelLoader loader;
  if (!loader.init_from_file_and_convert_name(o.weights, std::string(kPrefix) + "."))
    throw std::runtime_error("stable-diffusion.cpp cannot read " + o.weights);
  const ggml_type wtype = parseWtype(o.wtype);
  if (wtype != GGML_TYPE_COUNT) loader.set_wtype_override(wtype);
  String2TensorStorage& map = loader.get_tensor_storage_map();

  ggml_backend_t backend = ggml_backend_cpu_init();
  if (backend == nullptr) throw std::runtime_error("no ggml CPU backend");
  const WAN::WanParams params = paramsFromWeights(map, config);

  // Either runner exposes the same calls; WanRunner only for the depths its table knows.
  std::unique_ptr<DitRunner> dit;
  std::unique_ptr<WAN::WanRunner> wanRunner;
  GGMLRunner* runner = nullptr;
  std::map<std::string, ggml_tensor*> tensors;
  if (o.sdcppRunner) {
    wanRunner = std::make_unique<WAN::WanRunner>(backend, false, map, kPrefix, VERSION_WAN2);
    wanRunner->alloc_params_buffer();
    wanRunner->get_param_tensors(tensors, kPrefix);
    runner = wanRunner.get();
  } else {
    dit = std::make_unique<DitRunner>(backend, map, params);
    dit->alloc_params_buffer();
    dit->get_param_tensors(tensors);
    runner = dit.get();
  }
  runner->set_flash_attention_enabled(o.flashAttention);
  if (!loader.load_tensors(tensors, {}, o.threads, false)) throw std::runtime_error("loading the tensors failed");
  const double loadSeconds = seconds(loadStart);

  std::map<ggml_type, int> weightTypes;
  for (const auto& [name, t] : tensors) ++weightTypes[t->type];

  const HostTensor& xHost = need(inputs, "x");
  const HostTensor& tHost = need(inputs, "t");
  const HostTensor& cHost = need(inputs, "context");
  if (xHost.shape.size() != 4 || xHost.shape[0] != params.in_dim)
    throw std::runtime_error("x is not [in_dim, F, H, W]");
  if (cHost.shape.size() != 2 || cHost.shape[1] != params.text_dim || cHost.shape[0] > params.text_len)
    throw std::runtime_error("context is not [L <= text_len, text_dim]");

  // The Wan DiT reads text_len context rows, zero rows after the prompt's (as ShotChain,
  // the reference code and sd.cpp's T5 conditioner give it).
  HostTensor cPadded{{1, params.text_len, params.text_dim}, cHost.data};
  cPadded.data.resize(static_cast<size_t>(params.text_len * params.text_dim), 0.0f);
  const sd::Tensor<float> x = toSd(xHost);
  const sd::Tensor<float> t = toSd(tHost);
  const sd::Tensor<float> c = toSd(cPadded);

  auto forward = [&]() -> sd::Tensor<float> {
    if (wanRunner) return wanRunner->compute(o.threads, x, t, c);
    return dit->forward(o.threads, x, t, c);
  };
  sd::Tensor<float> out;
  for (int i = 0; i < o.warmup; ++i) out = forward();
  std::vector<double> times;
  for (int i = 0; i < o.repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    out = forward();
    times.push_back(seconds(start));
  }
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  const uint64_t peakAfter = residentAndPeak().second;

  if (!o.output.empty()) {
    HostTensor outHost{std::vector<int64_t>(out.shape().rbegin(), out.shape().rend()),
                       std::vector<float>(out.data(), out.data() + out.numel())};
    if (outHost.shape != xHost.shape) throw std::runtime_error("the output's shape is not x's");
    writeSafetensors(o.output, "out", outHost, {{"config", config.dump()}});
  }

  std::string types;
  for (const auto& [type, count] : weightTypes)
    types += (types.empty() ? "" : ", ") + std::string(ggml_type_name(type)) + " x" + std::to_string(count);
  const int64_t tokens = (xHost.shape[1] / std::get<0>(params.patch_size)) *
                         (xHost.shape[2] / std::get<1>(params.patch_size)) *
                         (xHost.shape[3] / std::get<2>(params.patch_size));
  if (o.json) {
    json line = {{"forward_s", median},
                 {"times_s", times},
                 {"load_s", loadSeconds},
                 {"tokens", tokens},
                 {"layers", params.num_layers},
                 {"dim", params.dim},
                 {"heads", params.num_heads},
                 {"threads", o.threads},
                 {"flash_attn", o.flashAttention},
                 {"runner", o.sdcppRunner ? runner->get_desc() : std::string("wan-dit")},
                 {"weight_types", types},
                 {"params_mib", static_cast<double>(runner->get_params_buffer_size()) / (1 << 20)},
                 {"peak_rss_bytes", peakAfter},
                 {"resident_before_model_bytes", residentBefore},
                 {"model_peak_bytes", peakAfter > residentBefore ? peakAfter - residentBefore : 0},
                 {"system", sd_get_system_info()}};
    std::printf("%s\n", line.dump().c_str());
  } else {
    std::printf("sd.cpp wan dit: dim %" PRId64 ", %d layers, %" PRId64 " heads, ffn %" PRId64 ", %" PRId64
                " tokens, %d threads, flash attention %s\n",
                params.dim, params.num_layers, params.num_heads, params.ffn_dim, tokens, o.threads,
                o.flashAttention ? "on" : "off");
    std::printf("weights: %s (%.1f MiB), loaded in %.2f s\n", types.c_str(),
                static_cast<double>(runner->get_params_buffer_size()) / (1 << 20), loadSeconds);
    std::printf("forward: median %.3f s over %d (min %.3f, max %.3f)\n", median, o.repeats, sorted.front(),
                sorted.back());
  }
  dit.reset();
  wanRunner.reset();
  ggml_backend_free(backend);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parseOptions(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sdcpp_wan_dit: %s\n", e.what());
    return 1;
  }
}
