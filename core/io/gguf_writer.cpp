#include "io/gguf_writer.h"

#include <cstring>
#include <set>
#include <stdexcept>

namespace shotchain::io {
namespace {

constexpr std::uint64_t kAlignment = 32;

template <typename T>
void put(std::string& out, T value) {
  char raw[sizeof(T)];
  std::memcpy(raw, &value, sizeof(T));
  out.append(raw, sizeof(T));
}

void putString(std::string& out, const std::string& text) {
  put<std::uint64_t>(out, text.size());
  out += text;
}

void pad(std::string& out) { out.append((kAlignment - out.size() % kAlignment) % kAlignment, '\0'); }

}  // namespace

std::uint64_t ggmlBytesOf(GgmlType type, const std::vector<std::uint64_t>& shape) {
  const GgmlTypeTraits& traits = ggmlTraits(type);
  if (shape.empty() || shape.back() % traits.blockElements != 0)
    throw std::invalid_argument("rows of " + (shape.empty() ? std::string("a scalar") : std::to_string(shape.back())) +
                                " values are not whole " + std::string(traits.name) + " blocks of " +
                                std::to_string(traits.blockElements));
  std::uint64_t elements = 1;
  for (const std::uint64_t d : shape) elements *= d;
  return elements / traits.blockElements * traits.blockBytes;
}

GgufWriter::GgufWriter(const std::map<std::string, std::string>& metadata, std::vector<GgufTensorPlan> plans)
    : plans_(std::move(plans)) {
  std::set<std::string> names;
  for (const GgufTensorPlan& plan : plans_) {
    if (!names.insert(plan.name).second) throw std::invalid_argument("tensor \"" + plan.name + "\" planned twice");
    try {
      ggmlBytesOf(plan.type, plan.shape);
    } catch (const std::invalid_argument& error) {
      throw std::invalid_argument("tensor \"" + plan.name + "\": " + error.what());
    }
  }
  bytes_ = "GGUF";
  put<std::uint32_t>(bytes_, 3);
  put<std::uint64_t>(bytes_, plans_.size());
  put<std::uint64_t>(bytes_, metadata.size());
  for (const auto& [key, value] : metadata) {
    putString(bytes_, key);
    if (key == "general.quantization_version" || key == "general.file_type") {
      put<std::uint32_t>(bytes_, 4);  // u32
      put<std::uint32_t>(bytes_, static_cast<std::uint32_t>(std::stoul(value)));
    } else {
      put<std::uint32_t>(bytes_, 8);  // string
      putString(bytes_, value);
    }
  }
  std::uint64_t offset = 0;
  for (const GgufTensorPlan& plan : plans_) {
    putString(bytes_, plan.name);
    put<std::uint32_t>(bytes_, static_cast<std::uint32_t>(plan.shape.size()));
    for (auto d = plan.shape.rbegin(); d != plan.shape.rend(); ++d) put<std::uint64_t>(bytes_, *d);
    put<std::uint32_t>(bytes_, static_cast<std::uint32_t>(plan.type));
    put<std::uint64_t>(bytes_, offset);
    offset += (ggmlBytesOf(plan.type, plan.shape) + kAlignment - 1) / kAlignment * kAlignment;
  }
  pad(bytes_);
  finishedSize_ = bytes_.size() + offset;
}

void GgufWriter::append(std::span<const std::uint8_t> bytes) {
  if (next_ >= plans_.size()) throw std::invalid_argument("GGUF writer: more tensors than planned");
  const GgufTensorPlan& plan = plans_[next_];
  const std::uint64_t expected = ggmlBytesOf(plan.type, plan.shape);
  if (bytes.size() != expected)
    throw std::invalid_argument("tensor \"" + plan.name + "\": " + std::to_string(bytes.size()) +
                                " bytes where its type and shape take " + std::to_string(expected));
  bytes_.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  pad(bytes_);
  ++next_;
}

std::string GgufWriter::finish() {
  if (next_ != plans_.size())
    throw std::logic_error("GGUF writer: " + std::to_string(plans_.size() - next_) + " planned tensors not written");
  return std::move(bytes_);
}

}  // namespace shotchain::io
