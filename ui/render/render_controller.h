#pragma once

#include <QElapsedTimer>
#include <QImage>
#include <QObject>
#include <QString>
#include <QThread>
#include <QVector>

#include <atomic>
#include <functional>
#include <optional>
#include <vector>

#include "render/prompt_worker.h"
#include "render/render_event_types.h"

namespace shotchain::ui {

class PromptWorker;
class RenderWorker;

// The studio's one way to render. Owns a long-lived worker thread that owns the Renderer (so the
// model stays loaded between renders); the GUI thread only posts requests and receives queued
// signals, so it never blocks and never runs a tensor op.
class RenderController : public QObject {
  Q_OBJECT

 public:
  // Applied to the options of every render after the defaults (tests point the output elsewhere,
  // turn previews off, pick a shot range…).
  using OptionsHook = std::function<void(render::RenderOptions&)>;

  explicit RenderController(OptionsHook hook = {}, QObject* parent = nullptr);
  ~RenderController() override;

  // "<folder of the sequence>/<name>.render"; for an untitled sequence a folder under AppLocalData.
  static QString outputDirectoryFor(const QString& sequencePath);
  render::RenderOptions optionsFor(const Sequence& sequence, const QString& sequencePath) const;

  void setDevice(const QString& device) { device_ = device; }
  void setPromptEmbeddingBytes(std::uint64_t bytes) { promptEmbeddingBytes_ = bytes; }
  QString device() const { return device_; }
  bool isRendering() const { return rendering_; }
  QString outputDirectory() const { return outputDirectory_; }

  // Starts a render of a copy of `sequence`; false when one is already running.
  // `shotSteps`: each shot's resolved step count (0 for a disabled shot), what the time left is reckoned from.
  bool start(const Sequence& sequence, const QString& sequencePath, std::vector<int> shotSteps);
  // Thread-safe and non-blocking; Now stops at the next step, AfterShot once the current shot is written.
  void stop(render::StopRequest request);
  // The renderer's memory probe (cheap; reads counters). Empty until the worker thread is up.
  std::optional<memory::MemorySample> sampleMemory() const;
  // Tell the worker the last step preview was shown, so it may send the next one.
  void previewShown();

  // Encodes the prompts of `sequence` that its renders' embeddings do not keep yet (render/prompt_precompute.h),
  // on the render thread once what is queued there is done, keeping the text encoder loaded afterwards; a newer
  // call stops it between prompts. Returns the job's number, which promptsPrecomputed gives back.
  quint64 precomputePrompts(const Sequence& sequence, const QString& sequencePath);
  // Frees the text encoder the jobs kept (a render frees it before it starts).
  void releasePromptEncoder();
  // Thread-safe: the newest job's number.
  quint64 promptJob() const { return promptJob_.load(); }

 Q_SIGNALS:
  void renderingChanged(bool rendering);
  void planReady(const shotchain::memory::MemoryPlan& plan);
  void shotStarted(const shotchain::render::ShotStarted& shot);
  // `preview`: the latent preview (may be null); `previewFrames`: the whole shot decoded by the preview decoder
  // from this step's prediction (empty at most steps, and without a decoder).
  void stepDone(int shotIndex, int step, int steps, const QImage& preview, const QVector<QImage>& previewFrames);
  // Shot `shotIndex` of `shotCount`, step of steps, estimated seconds left (negative: unknown).
  void progress(int shotIndex, int shotCount, int step, int steps, double etaSeconds);
  void framesDecoded(int shotIndex, int firstFrame, int shotFrames, const QVector<QImage>& frames);
  void cutMeasured(const shotchain::continuity::CutMetrics& cut);
  void memorySampled(int cutIndex, const shotchain::memory::MemorySample& sample);
  void shotFinished(const shotchain::render::ShotFinished& shot);
  void warning(const shotchain::render::RenderWarning& warning);
  void failed(int shotIndex, const QString& message, const QString& details);
  void finished(const shotchain::render::SequenceFinished& result, bool failed);
  // `error`: why the job could not encode (its prompts are then encoded by the render).
  void promptsPrecomputed(quint64 job, const shotchain::render::PromptPrecompute& result, const QString& error);

 private:
  // The worker posts every renderer event here (the signals above, or these where the controller
  // keeps state), on this thread, in order.
  friend class RenderWorker;
  void onShotStarted(const render::ShotStarted& shot);
  void onStepDone(int shotIndex, int step, int steps, double seconds, const QImage& preview,
                  const QVector<QImage>& previewFrames);
  void onFailed(int shotIndex, const QString& message, const QString& details);
  void onFinished(const render::SequenceFinished& result);

  OptionsHook hook_;
  QString device_ = QStringLiteral("cpu");
  QThread thread_;
  RenderWorker* worker_;
  PromptWorker* promptWorker_;
  std::atomic<quint64> promptJob_{0};
  std::uint64_t promptEmbeddingBytes_ = render::kDefaultPromptEmbeddingBytes;
  bool rendering_ = false;
  bool failedThisRender_ = false;
  QString outputDirectory_;
  // For the ETA: shots still to sample after the current one, and the mean step time.
  int shotCount_ = 0;
  std::vector<int> shotSteps_;
  double stepSecondsTotal_ = 0;
  int stepsTimed_ = 0;
};

}  // namespace shotchain::ui
