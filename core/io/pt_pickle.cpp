#include "io/pt_pickle.h"

#include <array>
#include <bit>
#include <cstring>
#include <unordered_map>
#include <utility>

#include "io/safetensors_header.h"

namespace shotchain::io {
namespace {

using Kind = PickleNode::Kind;

constexpr std::size_t kMaxGlobalName = 256;

constexpr std::string_view kOrderedDict = "collections.OrderedDict";
constexpr std::string_view kRebuildTensor = "torch._utils._rebuild_tensor_v2";
constexpr std::string_view kRebuildParameter = "torch._utils._rebuild_parameter";
constexpr std::string_view kRebuildParameterWithState = "torch._utils._rebuild_parameter_with_state";

struct StorageName {
  std::string_view name;
  DType dtype;
};
constexpr std::array<StorageName, 11> kStorages{{
    {"FloatStorage", DType::F32},
    {"DoubleStorage", DType::F64},
    {"HalfStorage", DType::F16},
    {"BFloat16Storage", DType::BF16},
    {"LongStorage", DType::I64},
    {"IntStorage", DType::I32},
    {"ShortStorage", DType::I16},
    {"CharStorage", DType::I8},
    {"ByteStorage", DType::U8},
    {"BoolStorage", DType::Bool},
    {"ComplexFloatStorage", DType::C64},
}};

bool allowedGlobal(std::string_view qualified) {
  DType unused;
  return qualified == kOrderedDict || qualified == kRebuildTensor || qualified == kRebuildParameter ||
         qualified == kRebuildParameterWithState ||
         (qualified.starts_with("torch.") && storageDType(qualified.substr(6), unused));
}

class Unpickler {
 public:
  Unpickler(std::string_view label, std::span<const std::byte> bytes) : label_(label), bytes_(bytes) {}

  PickleObjects run() {
    while (true) {
      const auto opcode = static_cast<char>(take(1)[0]);
      if (opcode == '.') {
        objects_.root = pop();
        return std::move(objects_);
      }
      step(opcode);
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw SafetensorsError(std::string(label_) + ": " + what + " (at byte " + std::to_string(at_) + ")");
  }

  std::span<const std::byte> take(std::size_t count) {
    if (count > bytes_.size() - at_) fail("the pickle ends early (no STOP opcode, or a length runs past its end)");
    const auto out = bytes_.subspan(at_, count);
    at_ += count;
    return out;
  }
  std::uint64_t unsignedLe(std::size_t count) {
    const auto raw = take(count);
    std::uint64_t value = 0;
    for (std::size_t i = count; i-- > 0;) value = (value << 8) | static_cast<std::uint8_t>(raw[i]);
    return value;
  }
  std::string text(std::size_t count) {
    const auto raw = take(count);
    return {reinterpret_cast<const char*>(raw.data()), raw.size()};
  }
  std::string line() {
    std::string out;
    while (true) {
      const auto c = static_cast<char>(take(1)[0]);
      if (c == '\n') return out;
      if (out.size() >= kMaxGlobalName) fail("a GLOBAL name longer than 256 characters");
      out.push_back(c);
    }
  }

  std::size_t make(PickleNode node) {
    if (objects_.nodes.size() >= kMaxPickleObjects)
      fail("the pickle builds more than " + std::to_string(kMaxPickleObjects) + " objects");
    objects_.nodes.push_back(std::move(node));
    return objects_.nodes.size() - 1;
  }
  std::size_t make(Kind kind) {
    PickleNode made;
    made.kind = kind;
    return make(std::move(made));
  }
  std::size_t makeNumber(Kind kind, std::int64_t integer, double real = 0) {
    const std::size_t index = make(kind);
    node(index).integer = integer;
    node(index).real = real;
    return index;
  }
  std::size_t makeText(Kind kind, std::string text) {
    const std::size_t index = make(kind);
    node(index).text = std::move(text);
    return index;
  }
  PickleNode& node(std::size_t index) { return objects_.nodes[index]; }

  void push(std::size_t index) {
    if (stack_.size() >= kMaxPickleStack) fail("the pickle stack grows past " + std::to_string(kMaxPickleStack));
    stack_.push_back(index);
  }
  std::size_t pop() {
    if (stack_.size() <= floor()) fail("an opcode pops an empty stack");
    const std::size_t top = stack_.back();
    stack_.pop_back();
    return top;
  }
  std::size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  std::size_t top() {
    if (stack_.size() <= floor()) fail("an opcode needs an object on the stack");
    return stack_.back();
  }
  std::vector<std::size_t> popMark() {
    if (marks_.empty()) fail("an opcode needs a MARK");
    const std::size_t mark = marks_.back();
    marks_.pop_back();
    std::vector<std::size_t> items(stack_.begin() + static_cast<std::ptrdiff_t>(mark), stack_.end());
    stack_.resize(mark);
    return items;
  }
  std::size_t tuple(std::vector<std::size_t> items) {
    const std::size_t index = make(Kind::Tuple);
    node(index).items = std::move(items);
    return index;
  }

  void memoPut(std::uint64_t key) {
    if (memo_.size() >= kMaxPickleMemo && !memo_.contains(key))
      fail("the memo grows past " + std::to_string(kMaxPickleMemo));
    memo_[key] = top();
  }
  void memoGet(std::uint64_t key) {
    const auto it = memo_.find(key);
    if (it == memo_.end()) fail("memo entry " + std::to_string(key) + " is read before it is written");
    push(it->second);
  }

  void setItems(std::vector<std::size_t> pairs) {
    const std::size_t dict = top();
    if (node(dict).kind != Kind::Dict) fail("SETITEM(S) on an object that is not a dict");
    if (pairs.size() % 2 != 0) fail("SETITEMS with an odd number of objects");
    for (const std::size_t item : pairs) node(dict).items.push_back(item);
  }
  void append(std::vector<std::size_t> items) {
    const std::size_t list = top();
    if (node(list).kind != Kind::List) fail("APPEND(S) on an object that is not a list");
    for (const std::size_t item : items) node(list).items.push_back(item);
  }

  void global(std::string qualified) {
    if (!allowedGlobal(qualified))
      fail("global " + qualified +
           " is not allowed: only tensors, storages, collections.OrderedDict and plain containers and numbers are "
           "read (what torch.load(weights_only=True) accepts); nothing was executed");
    push(makeText(Kind::Global, std::move(qualified)));
  }

  const PickleNode& expect(std::size_t index, Kind kind, const char* what) {
    if (node(index).kind != kind) fail(std::string(what) + " has the wrong type");
    return node(index);
  }
  std::vector<std::int64_t> intTuple(std::size_t index, const char* what) {
    const PickleNode& t = expect(index, Kind::Tuple, what);
    if (t.items.size() > kMaxTensorDims) fail(std::string(what) + " has more than 64 dimensions");
    std::vector<std::int64_t> out;
    for (const std::size_t item : t.items) {
      const std::int64_t value = expect(item, Kind::Int, what).integer;
      if (value < 0) fail(std::string(what) + " holds a negative number");
      out.push_back(value);
    }
    return out;
  }

  std::size_t rebuildTensor(const std::vector<std::size_t>& args) {
    if (args.size() != 6 && args.size() != 7) fail("_rebuild_tensor_v2 takes 6 or 7 arguments");
    const PickleNode& storage = expect(args[0], Kind::Storage, "a tensor's storage");
    PickleNode tensor;
    tensor.kind = Kind::Tensor;
    tensor.dtype = storage.dtype;
    tensor.items = {args[0]};
    tensor.offset = expect(args[1], Kind::Int, "a tensor's storage offset").integer;
    tensor.sizes = intTuple(args[2], "a tensor's size");
    tensor.strides = intTuple(args[3], "a tensor's stride");
    expect(args[4], Kind::Bool, "a tensor's requires_grad");
    if (!expect(args[5], Kind::Dict, "a tensor's backward hooks").items.empty()) fail("a tensor has backward hooks");
    if (args.size() == 7 && node(args[6]).kind != Kind::None &&
        !expect(args[6], Kind::Dict, "a tensor's metadata").items.empty())
      fail("a tensor has Python metadata");
    if (tensor.sizes.size() != tensor.strides.size()) fail("a tensor's size and stride differ in length");
    if (tensor.offset < 0 || tensor.offset > storage.integer)
      fail("a tensor's storage offset lies outside its storage");
    // The last element's index must lie inside the storage (overflow-safe).
    constexpr std::uint64_t kLimit = std::uint64_t{1} << 62;
    std::uint64_t last = static_cast<std::uint64_t>(tensor.offset);
    bool empty = false;
    for (std::size_t d = 0; d < tensor.sizes.size(); ++d) {
      if (tensor.sizes[d] == 0) empty = true;
      const auto steps = static_cast<std::uint64_t>(tensor.sizes[d] == 0 ? 0 : tensor.sizes[d] - 1);
      const auto stride = static_cast<std::uint64_t>(tensor.strides[d]);
      if (stride != 0 && steps > (kLimit - last) / stride) fail("a tensor's size and stride reach past any storage");
      last += steps * stride;
    }
    if (!empty && last >= static_cast<std::uint64_t>(storage.integer))
      fail("a tensor reaches element " + std::to_string(last) + " of storage \"" + storage.text + "\" of " +
           std::to_string(storage.integer) + " elements");
    return make(std::move(tensor));
  }

  std::size_t call(std::size_t callable, std::size_t argsIndex) {
    const PickleNode& function = expect(callable, Kind::Global, "a REDUCE callable");
    const std::vector<std::size_t> args = expect(argsIndex, Kind::Tuple, "REDUCE arguments").items;
    const std::string& name = function.text;
    if (name == kOrderedDict) {
      if (!args.empty()) fail("collections.OrderedDict is called with arguments");
      return make(Kind::Dict);
    }
    if (name == kRebuildTensor) return rebuildTensor(args);
    if (name == kRebuildParameter || name == kRebuildParameterWithState) {
      if (args.size() < 3) fail(name + " takes at least 3 arguments");
      expect(args[0], Kind::Tensor, "a parameter's data");
      return args[0];
    }
    fail("global " + name + " is called");
  }

  std::size_t persistentLoad(std::size_t pid) {
    const PickleNode& id = expect(pid, Kind::Tuple, "a persistent id");
    if (id.items.size() != 5 || node(id.items[0]).kind != Kind::String || node(id.items[0]).text != "storage")
      fail("a persistent id is not ('storage', type, key, location, numel)");
    const PickleNode& type = expect(id.items[1], Kind::Global, "a storage type");
    DType dtype;
    if (!type.text.starts_with("torch.") || !storageDType(std::string_view(type.text).substr(6), dtype))
      fail("storage type " + type.text + " is not a torch storage");
    const std::string key = expect(id.items[2], Kind::String, "a storage key").text;
    expect(id.items[3], Kind::String, "a storage location");
    const std::int64_t numel = expect(id.items[4], Kind::Int, "a storage size").integer;
    if (numel < 0 || numel > (std::int64_t{1} << 56))
      fail("storage \"" + key + "\" claims " + std::to_string(numel) + " elements");
    if (key.empty() || key.find('/') != std::string::npos || key.find('\\') != std::string::npos || key == "." ||
        key == "..")
      fail("storage key \"" + key + "\" is not a plain name");
    const std::size_t index = makeText(Kind::Storage, key);
    node(index).integer = numel;
    node(index).dtype = dtype;
    return index;
  }

  std::int64_t signedLe(std::size_t count) {
    if (count > 8) fail("LONG1 integer wider than 64 bits");
    if (count == 0) return 0;
    std::uint64_t value = unsignedLe(count);
    if (count < 8 && (value >> (8 * count - 1)) != 0) value |= ~std::uint64_t{0} << (8 * count);
    return static_cast<std::int64_t>(value);
  }
  void pushInt(std::int64_t value) { push(makeNumber(Kind::Int, value)); }
  void pushString(std::uint64_t length) {
    if (length > bytes_.size() - at_) fail("a string runs past the end of the pickle");
    push(makeText(Kind::String, text(static_cast<std::size_t>(length))));
  }

  void step(char opcode) {
    switch (opcode) {
      case '\x80': {
        const auto version = unsignedLe(1);
        if (version < 2 || version > 5) fail("pickle protocol " + std::to_string(version) + " is not supported");
        break;
      }
      case '\x95':
        unsignedLe(8);
        break;  // FRAME: its length only groups opcodes
      case '}':
        push(make(Kind::Dict));
        break;
      case ']':
        push(make(Kind::List));
        break;
      case ')':
        push(tuple({}));
        break;
      case '(':
        if (marks_.size() >= kMaxPickleStack) fail("too many MARKs");
        marks_.push_back(stack_.size());
        break;
      case 'X':
        pushString(unsignedLe(4));
        break;
      case '\x8c':
        pushString(unsignedLe(1));
        break;
      case '\x8d':
        pushString(unsignedLe(8));
        break;
      case 'J':
        pushInt(static_cast<std::int32_t>(unsignedLe(4)));
        break;
      case 'K':
        pushInt(static_cast<std::int64_t>(unsignedLe(1)));
        break;
      case 'M':
        pushInt(static_cast<std::int64_t>(unsignedLe(2)));
        break;
      case '\x8a':
        pushInt(signedLe(static_cast<std::size_t>(unsignedLe(1))));
        break;
      case 'G': {
        std::uint64_t bits = 0;  // big-endian on the wire
        for (const std::byte b : take(8)) bits = (bits << 8) | static_cast<std::uint8_t>(b);
        push(makeNumber(Kind::Float, 0, std::bit_cast<double>(bits)));
        break;
      }
      case '\x88':
        push(makeNumber(Kind::Bool, 1));
        break;
      case '\x89':
        push(makeNumber(Kind::Bool, 0));
        break;
      case 'N':
        push(make(Kind::None));
        break;
      case '\x85': {
        const std::size_t a = pop();
        push(tuple({a}));
        break;
      }
      case '\x86': {
        const std::size_t b = pop(), a = pop();
        push(tuple({a, b}));
        break;
      }
      case '\x87': {
        const std::size_t c = pop(), b = pop(), a = pop();
        push(tuple({a, b, c}));
        break;
      }
      case 't':
        push(tuple(popMark()));
        break;
      case 'c': {
        std::string module = line();
        global(module + "." + line());
        break;
      }
      case '\x93': {
        const std::size_t name = pop(), module = pop();
        global(expect(module, Kind::String, "a STACK_GLOBAL module").text + "." +
               expect(name, Kind::String, "a STACK_GLOBAL name").text);
        break;
      }
      case 'R':
      case '\x81': {
        const std::size_t args = pop(), callable = pop();
        push(call(callable, args));
        break;
      }
      case 'Q':
        push(persistentLoad(pop()));
        break;
      case 'b': {
        const std::size_t state = pop();
        const PickleNode& target = node(top());
        if (target.kind != Kind::Dict || (node(state).kind != Kind::None && node(state).kind != Kind::Dict))
          fail("BUILD is only read for an OrderedDict (whose attributes are ignored)");
        break;
      }
      case 'q':
        memoPut(unsignedLe(1));
        break;
      case 'r':
        memoPut(unsignedLe(4));
        break;
      case '\x94':
        memoPut(memo_.size());
        break;
      case 'h':
        memoGet(unsignedLe(1));
        break;
      case 'j':
        memoGet(unsignedLe(4));
        break;
      case 's': {
        const std::size_t value = pop(), key = pop();
        setItems({key, value});
        break;
      }
      case 'u':
        setItems(popMark());
        break;
      case 'a':
        append({pop()});
        break;
      case 'e':
        append(popMark());
        break;
      case '0':
        pop();
        break;
      default: {
        const auto code = static_cast<unsigned>(static_cast<unsigned char>(opcode));
        fail("pickle opcode 0x" + std::string(1, "0123456789abcdef"[code >> 4]) + "0123456789abcdef"[code & 15] +
             " is not one torch.save writes for weights");
      }
    }
  }

  std::string_view label_;
  std::span<const std::byte> bytes_;
  std::size_t at_ = 0;
  PickleObjects objects_;
  std::vector<std::size_t> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, std::size_t> memo_;
};

}  // namespace

bool storageDType(std::string_view className, DType& dtype) {
  for (const StorageName& storage : kStorages)
    if (storage.name == className) {
      dtype = storage.dtype;
      return true;
    }
  return false;
}

PickleObjects unpickleRestricted(std::string_view label, std::span<const std::byte> pickle) {
  return Unpickler(label, pickle).run();
}

}  // namespace shotchain::io
