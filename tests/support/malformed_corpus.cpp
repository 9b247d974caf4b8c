// GCC 12 reports a false -Wrestrict inside std::string concatenation at -O2 (GCC bug 105329).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
#include "malformed_corpus.h"

#include <cstdint>

namespace shotchain::testing {
namespace {

std::string lengthPrefix(std::uint64_t n) {
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xFF));
  return out;
}

// Built with append: GCC 12 reports `"{" + text` (operator+ of a literal and a temporary) as a
// -Warray-bounds false positive (GCC bug 105329).
std::string tensor(const std::string& name, const std::string& dtype, const std::string& shape,
                   const std::string& offsets) {
  std::string out = "\"";
  out.append(name).append("\":{\"dtype\":\"").append(dtype).append("\",\"shape\":").append(shape);
  return out.append(",\"data_offsets\":").append(offsets).append("}");
}

std::string braced(const std::string& members) { return std::string("{").append(members).append("}"); }

}  // namespace

std::string safetensorsBytes(const std::string& header, std::size_t dataBytes) {
  return lengthPrefix(header.size()) + header + std::string(dataBytes, '\0');
}

std::vector<MalformedCase> malformedCorpus() {
  const std::string okA = tensor("a", "F32", "[2]", "[0,8]");
  std::vector<MalformedCase> c;
  auto add = [&](const std::string& name, std::string bytes, const std::string& expected) {
    c.push_back({name + ".safetensors", std::move(bytes), expected});
  };
  add("empty", "", "too short");
  add("five_bytes", "\x01\x02\x03\x04\x05", "too short");
  add("length_huge", lengthPrefix(0x8000000000000000ull) + "{}", "exceeds the 100000000-byte limit");
  add("length_max", lengthPrefix(~0ull) + "{}", "exceeds");
  add("length_past_end", lengthPrefix(64) + "{}", "runs past the end");
  add("length_zero", lengthPrefix(0), "too small for a JSON object");
  add("not_json", safetensorsBytes("hello!!!", 0), "not valid JSON");
  add("json_array", safetensorsBytes("[1,2,3] ", 0), "top level must be a JSON object");
  add("json_truncated", safetensorsBytes("{\"a\":{\"dtype\":", 0), "not valid JSON");
  add("json_bad_utf8", safetensorsBytes("{\"\xff\xfe\":1}  ", 0), "not valid JSON");
  add("json_nul_padding", safetensorsBytes("{}" + std::string(6, '\0'), 0), "not valid JSON");
  add("duplicate_tensor", safetensorsBytes(braced(okA + "," + okA), 8), "duplicate key \"a\"");
  add("duplicate_field",
      safetensorsBytes("{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8),
      "duplicate key \"dtype\"");
  add("unknown_dtype", safetensorsBytes(braced(tensor("a", "F31", "[2]", "[0,8]")), 8), "unknown dtype \"F31\"");
  add("dtype_not_string", safetensorsBytes("{\"a\":{\"dtype\":7,\"shape\":[2],\"data_offsets\":[0,8]}}", 8),
      "\"dtype\" must be a string");
  add("missing_dtype", safetensorsBytes("{\"a\":{\"shape\":[2],\"data_offsets\":[0,8]}}", 8), "missing \"dtype\"");
  add("missing_shape", safetensorsBytes("{\"a\":{\"dtype\":\"F32\",\"data_offsets\":[0,8]}}", 8), "missing \"shape\"");
  add("missing_offsets", safetensorsBytes("{\"a\":{\"dtype\":\"F32\",\"shape\":[2]}}", 8), "missing \"data_offsets\"");
  add("shape_negative", safetensorsBytes(braced(tensor("a", "F32", "[-2]", "[0,8]")), 8),
      "non-negative integers, got -2");
  add("shape_fraction", safetensorsBytes(braced(tensor("a", "F32", "[2.5]", "[0,8]")), 8),
      "non-negative integers, got 2.5");
  add("shape_string", safetensorsBytes(braced(tensor("a", "F32", "[\"2\"]", "[0,8]")), 8), "non-negative integers");
  add("shape_not_array", safetensorsBytes(braced(tensor("a", "F32", "2", "[0,8]")), 8), "\"shape\" must be an array");
  add("shape_beyond_u64", safetensorsBytes(braced(tensor("a", "F32", "[18446744073709551616]", "[0,8]")), 8),
      "non-negative integers");
  add("offsets_three", safetensorsBytes(braced(tensor("a", "F32", "[2]", "[0,8,8]")), 8), "array of two integers");
  add("offsets_negative", safetensorsBytes(braced(tensor("a", "F32", "[2]", "[-8,0]")), 8), "non-negative integers");
  add("offsets_reversed", safetensorsBytes(braced(tensor("a", "F32", "[0]", "[8,0]")), 8), "end before they begin");
  add("span_mismatch", safetensorsBytes(braced(tensor("x", "F32", "[2,2]", "[0,12]")), 12),
      "header: tensor \"x\": data_offsets [0, 12] span 12 bytes but F32 [2, 2] needs 16");
  add("elements_overflow",
      safetensorsBytes(braced(tensor("a", "U8", "[4294967296,4294967296,4294967296]", "[0,8]")), 8),
      "more elements than 2^64");
  add("bits_overflow", safetensorsBytes(braced(tensor("a", "F64", "[4611686018427387904]", "[0,8]")), 8),
      "is too large");
  add("subbyte_partial", safetensorsBytes(braced(tensor("a", "F4", "[3]", "[0,2]")), 2), "whole number of bytes");
  add("gap", safetensorsBytes(braced(okA + "," + tensor("b", "F32", "[1]", "[12,16]")), 16), "gap");
  add("overlap", safetensorsBytes(braced(okA + "," + tensor("b", "F32", "[2]", "[4,12]")), 12), "overlaps \"a\"");
  add("not_from_zero", safetensorsBytes(braced(tensor("a", "F32", "[1]", "[4,8]")), 8), "gap");
  add("trailing_bytes", safetensorsBytes(braced(okA), 12), "trailing bytes");
  add("truncated_data", safetensorsBytes(braced(okA), 5), "past the 5-byte data buffer");
  add("huge_offsets",
      safetensorsBytes(braced(tensor("a", "U8", "[18446744073709551615]", "[0,18446744073709551615]")), 8),
      "is too large");
  add("offsets_past_buffer", safetensorsBytes(braced(tensor("a", "U8", "[1000000000]", "[0,1000000000]")), 8),
      "data ends at byte 1000000000 past the 8-byte data buffer");
  add("metadata_number", safetensorsBytes("{\"__metadata__\":{\"format\":5}}", 0),
      "__metadata__ value \"format\" must be a string");
  add("metadata_array", safetensorsBytes("{\"__metadata__\":[\"pt\"]}", 0), "__metadata__ must be an object");
  add("tensor_not_object", safetensorsBytes("{\"a\":[1,2]}", 0), "expected an object");
  add("unknown_field", safetensorsBytes("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"x\":1}}", 8),
      "unknown field \"x\"");
  add("deep_nesting", safetensorsBytes("{\"a\":{\"b\":{\"c\":{\"d\":{\"e\":1}}}}}", 0), "nested deeper");
  return c;
}

}  // namespace shotchain::testing
