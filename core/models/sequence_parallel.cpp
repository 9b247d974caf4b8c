#include "models/sequence_parallel.h"

#include <mutex>
#include <stdexcept>
#include <string>

#include <ATen/ATen.h>

namespace shotchain::models {
namespace {

std::mutex& defaultMutex() {
  static std::mutex mutex;
  return mutex;
}

std::shared_ptr<DitParallel>& defaultGroup() {
  static std::shared_ptr<DitParallel> group;
  return group;
}

}  // namespace

void setDefaultDitParallel(std::shared_ptr<DitParallel> parallel) {
  const std::lock_guard<std::mutex> lock(defaultMutex());
  defaultGroup() = std::move(parallel);
}

std::shared_ptr<DitParallel> defaultDitParallel() {
  const std::lock_guard<std::mutex> lock(defaultMutex());
  return defaultGroup();
}

std::optional<UlyssesSplit> UlyssesSplit::make(DitParallel* group, std::int64_t length, std::int64_t heads) {
  if (group == nullptr || group->sequenceSize() <= 1) return std::nullopt;
  const int n = group->sequenceSize();
  if (heads % n != 0)
    throw std::invalid_argument(
        "sequence parallelism (Ulysses) splits the attention heads over the ranks: " + std::to_string(heads) +
        " heads do not divide by " + std::to_string(n) + " ranks; use a rank count that divides " +
        std::to_string(heads) + " (or twice that with guidance in parallel)");
  UlyssesSplit split;
  split.group_ = group;
  split.ranks_ = n;
  split.length_ = length;
  split.padded_ = (length + n - 1) / n * n;
  split.shard_ = split.padded_ / n;
  split.offset_ = split.shard_ * group->sequenceRank();
  return split;
}

at::Tensor UlyssesSplit::shardTokens(const at::Tensor& x, double padValue) const {
  at::Tensor full = x;
  if (x.size(1) < padded_) {
    std::vector<std::int64_t> shape(x.sizes().begin(), x.sizes().end());
    shape[1] = padded_ - x.size(1);
    full = at::cat({x, at::full(shape, padValue, x.options())}, 1);
  }
  return full.narrow(1, offset_, shard_).contiguous();
}

at::Tensor UlyssesSplit::rowsPerToken(const at::Tensor& rows, std::int64_t tokensPerFrame) const {
  const auto longs = at::TensorOptions().dtype(at::kLong).device(rows.device());
  const at::Tensor frame =
      at::arange(offset_, offset_ + shard_, longs).div(tokensPerFrame, "floor").clamp_max(rows.size(1) - 1);
  return rows.index_select(1, frame);
}

std::vector<std::int64_t> UlyssesSplit::keyLengths(std::int64_t batch) const {
  if (padded_ == length_) return {};
  return std::vector<std::int64_t>(static_cast<std::size_t>(batch), length_);
}

at::Tensor UlyssesSplit::tokensToHeads(const at::Tensor& x) const {
  const std::int64_t b = x.size(0), heads = x.size(2), d = x.size(3);
  const at::Tensor send = x.reshape({b, shard_, ranks_, heads / ranks_, d}).permute({2, 0, 1, 3, 4}).contiguous();
  const at::Tensor received = group_->allToAll(send);  // [N (source: its tokens), B, shard, H/N, d]
  return received.permute({1, 0, 2, 3, 4}).reshape({b, padded_, heads / ranks_, d});
}

at::Tensor UlyssesSplit::headsToTokens(const at::Tensor& x) const {
  const std::int64_t b = x.size(0), local = x.size(2), d = x.size(3);
  const at::Tensor send = x.reshape({b, ranks_, shard_, local, d}).permute({1, 0, 2, 3, 4}).contiguous();
  const at::Tensor received = group_->allToAll(send);  // [N (source: its heads), B, shard, H/N, d]
  return received.permute({1, 2, 0, 3, 4}).reshape({b, shard_, ranks_ * local, d});
}

at::Tensor UlyssesSplit::attention(
    const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
    const std::function<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&)>& attend) const {
  return headsToTokens(attend(tokensToHeads(q), tokensToHeads(k), tokensToHeads(v)));
}

at::Tensor UlyssesSplit::gatherTokens(const at::Tensor& y) const {
  const std::int64_t b = y.size(0), channels = y.size(2);
  const at::Tensor all = group_->allGather(y.contiguous());  // [N, B, shard, C]
  return all.permute({1, 0, 2, 3}).reshape({b, padded_, channels}).narrow(1, 0, length_);
}

at::Tensor forwardGuidanceParallel(
    DitParallel& group, const at::Tensor& x, const at::Tensor& t, const at::Tensor& context,
    const std::function<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&)>& forward) {
  const int groups = group.guidanceSize();
  const std::int64_t batch = x.size(0);
  if (groups <= 1 || batch % groups != 0) return forward(x, t, context);
  const std::int64_t part = batch / groups, start = part * group.guidanceRank();
  const at::Tensor mine = forward(x.narrow(0, start, part), t.narrow(0, start, part), context.narrow(0, start, part));
  const at::Tensor all = group.guidanceAllGather(mine.contiguous());  // [G, part, …]
  std::vector<std::int64_t> shape(mine.sizes().begin(), mine.sizes().end());
  shape[0] = batch;
  return all.reshape(shape);
}

}  // namespace shotchain::models
