#include "models/dit_runner.h"

#include <algorithm>
#include <stdexcept>

namespace shotchain::models {

DitRunner::DitRunner(const DitRunnerOptions& options, std::int64_t tokens, std::int64_t heads)
    : split_(UlyssesSplit::make(options.streaming ? nullptr : options.parallel, tokens, heads)), trace_(options.trace) {
  if (split_ && trace_) throw std::invalid_argument("DiT forward: no trace of a forward spread over ranks");
  const bool cacheable = !options.streaming && !trace_ && !split_ && !options.ragged && !options.trainable;
  cache_ = cacheable ? options.blockCache : nullptr;
}

at::Tensor DitRunner::shard(const at::Tensor& x, double padValue) const {
  return split_ ? split_->shardTokens(x, padValue) : x;
}

at::Tensor DitRunner::rowsPerToken(const at::Tensor& rows, std::int64_t tokensPerFrame) const {
  return split_ ? split_->rowsPerToken(rows, tokensPerFrame) : rows;
}

at::Tensor DitRunner::gather(const at::Tensor& y) const { return split_ ? split_->gatherTokens(y) : y; }

std::vector<std::int64_t> DitRunner::keyLengths(std::int64_t batch, const std::vector<std::int64_t>& lengths) const {
  const bool ragged = std::any_of(lengths.begin(), lengths.end(), [&](std::int64_t l) { return l != lengths.front(); });
  return ragged ? lengths : split_ ? split_->keyLengths(batch) : std::vector<std::int64_t>{};
}

void DitRunner::trace(const std::string& name, const at::Tensor& value) const {
  if (trace_) (*trace_)[name] = value;
}

at::Tensor DitRunner::blocks(const Blocks& run, std::size_t count, const at::Tensor& x,
                             const std::vector<at::Tensor>& rowInputs, const at::Tensor& timeEmbedding,
                             const at::Tensor& modulation) const {
  if (!cache_) return run(x, 0, count, rowInputs);
  const std::int64_t batch = x.size(0);
  const auto probed = static_cast<std::size_t>(std::clamp<int>(cache_->probeBlocks(), 0, static_cast<int>(count)));
  const at::Tensor base = probed > 0 ? run(x, 0, probed, rowInputs) : x;
  const at::Tensor probeResidual = probed > 0 ? base - x : at::Tensor();
  const std::vector<bool> skip = cache_->skipRows({timeEmbedding, modulation, x, probeResidual});
  if (static_cast<std::int64_t>(skip.size()) != batch)
    throw std::logic_error("BlockCache::skipRows: one entry per row");
  std::vector<std::int64_t> rows;
  for (std::int64_t b = 0; b < batch; ++b)
    if (!skip[static_cast<std::size_t>(b)]) rows.push_back(b);
  at::Tensor computed;
  if (!rows.empty()) {
    const at::Tensor index = at::tensor(rows, at::TensorOptions().dtype(at::kLong)).to(x.device());
    const bool whole = static_cast<std::int64_t>(rows.size()) == batch;
    const auto pick = [&](const at::Tensor& tensor) { return whole ? tensor : tensor.index_select(0, index); };
    const at::Tensor start = pick(base);
    std::vector<at::Tensor> picked;
    for (const at::Tensor& input : rowInputs) picked.push_back(pick(input));
    computed = run(start, probed, count, picked);
    for (std::size_t j = 0; j < rows.size(); ++j)
      cache_->store(rows[j], computed[static_cast<std::int64_t>(j)] - start[static_cast<std::int64_t>(j)]);
  }
  std::vector<at::Tensor> out;
  for (std::int64_t b = 0, j = 0; b < batch; ++b)
    out.push_back(skip[static_cast<std::size_t>(b)] ? base[b] + cache_->residual(b).to(base.device()) : computed[j++]);
  return at::stack(out);
}

}  // namespace shotchain::models
