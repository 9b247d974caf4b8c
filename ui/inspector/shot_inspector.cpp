#include "inspector/shot_inspector.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRandomGenerator>
#include <QSpinBox>
#include <QTimer>

#include <span>

#include "document/sequence_document.h"
#include "inspector/form_helpers.h"
#include "inspector/image_field.h"
#include "inspector/lora_list_field.h"
#include "resolve/resolved_shot.h"
#include "sequence/continuity_modes.h"
#include "sequence/shot_rules.h"
#include "sequence/validation.h"
#include "widgets/wheel_guard.h"

namespace shotchain::ui {
namespace {

// The sizes the inspector offers: the DiT family's (models/family_knowledge.h).
std::span<const models::SizePreset> presetsOf(const resolve::ResolvedSequence& resolved) {
  return resolved.models.dit.knowledge ? resolved.models.dit.knowledge->sizes : std::span<const models::SizePreset>{};
}

}  // namespace

// ~QWidget closes the window and deletes the fields, which moves the focus and ends their editing:
// the handlers would then run on an object that is no longer a ShotInspector (UBSan: vptr). They
// are cut first.
ShotInspector::~ShotInspector() {
  qApp->disconnect(this);
  for (QObject* child : findChildren<QObject*>()) child->disconnect(this);
}

ShotInspector::ShotInspector(SequenceDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      heading_(new QLabel(this)),
      name_(new QLineEdit(this)),
      prompt_(new QPlainTextEdit(this)),
      negative_(new QPlainTextEdit(this)),
      frames_(new QSpinBox(this)),
      preset_(new QComboBox(this)),
      width_(new QSpinBox(this)),
      height_(new QSpinBox(this)),
      seed_(new QLineEdit(this)),
      steps_(new QSpinBox(this)),
      guidance_(new QDoubleSpinBox(this)),
      shift_(new QDoubleSpinBox(this)),
      cache_(new QComboBox(this)),
      mode_(new QComboBox(this)),
      tag_(new QLineEdit(this)),
      overlap_(new QSpinBox(this)),
      blend_(new QDoubleSpinBox(this)),
      start_(new ImageField(tr("Start image"), tr("none (drop a picture on a shot that starts fresh)"), this)),
      end_(new ImageField(tr("End image"), tr("none (a first–last-frame model ends the shot on it)"), this)),
      fallback_(new ImageField(tr("Fallback image"), tr("none (drop a picture on a continuing shot)"), this)),
      motion_(new QSpinBox(this)),
      sviAnchor_(new ImageField(tr("Anchor image"), tr("the chain's first start image"), this)),
      anchor_(new QCheckBox(tr("Pull colours toward shot 1 (AdaIN)"), this)),
      recache_(new QCheckBox(tr("Recache the stream under a new prompt"), this)),
      enabled_(new QCheckBox(tr("Render this shot"), this)),
      loras_(new LoraListField(/*inheritable=*/true, this)) {
  auto* form = new QFormLayout(this);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form->setLabelAlignment(Qt::AlignRight);
  heading_->setStyleSheet(QStringLiteral("font-size: 120%; font-weight: bold;"));
  form->addRow(heading_);

  prompt_->setPlaceholderText(tr("What happens in this shot"));
  negative_->setPlaceholderText(tr("What to avoid (optional)"));
  for (QPlainTextEdit* editor : {prompt_, negative_}) {
    editor->setTabChangesFocus(true);
    editor->setFixedHeight(editor == prompt_ ? 86 : 52);
  }
  errors_["name"] = addField(form, tr("Name"), name_);
  errors_["prompt"] = addField(form, tr("Prompt"), prompt_);
  errors_["negative_prompt"] = addField(form, tr("Negative"), negative_);

  addSection(form, tr("Picture"));
  frames_->setRange(1, limits::kMaxFrames);
  frames_->setSuffix(tr(" frames"));
  errors_["frames"] = addField(form, tr("Length"), frames_);
  errors_["preset"] = addField(form, tr("Resolution"), preset_);
  auto* size = new QWidget(this);
  auto* sizeRow = new QHBoxLayout(size);
  sizeRow->setContentsMargins(0, 0, 0, 0);
  for (QSpinBox* side : {width_, height_}) {
    side->setRange(limits::kMinSide, limits::kMaxSide);
    side->setKeyboardTracking(false);
  }
  sizeRow->addWidget(width_);
  sizeRow->addWidget(new QLabel(QStringLiteral("×"), size));
  sizeRow->addWidget(height_);
  errors_["size"] = addField(form, QString(), size);
  auto* seedRow = new QWidget(this);
  auto* seedLayout = new QHBoxLayout(seedRow);
  seedLayout->setContentsMargins(0, 0, 0, 0);
  auto* randomise = new QPushButton(tr("Randomise"), seedRow);
  seedLayout->addWidget(seed_, 1);
  seedLayout->addWidget(randomise);
  randomise->setSizePolicy(QSizePolicy::Maximum, QSizePolicy::Fixed);
  errors_["seed"] = addField(form, tr("Seed"), seedRow);

  start_->setToolTip(
      tr("The picture the shot starts from: encoded as its first latent frame (held clean on a model "
         "trained for it), or the image an image-to-video model conditions on; a shot that continues the "
         "previous one starts from the handoff."));
  errors_["start_image"] = addField(form, tr("Start image"), start_);
  end_->setToolTip(
      tr("The picture the shot ends on (an image-to-video model: its last frame is conditioned on it). When it is "
         "also the next shot's start image the two shots share one keyframe: changing it here changes both."));
  errors_["end_image"] = addField(form, tr("End image"), end_);

  addSection(form, tr("Sampler overrides"));
  steps_->setRange(0, limits::kMaxSteps);
  guidance_->setRange(0, limits::kMaxGuidance);
  guidance_->setSingleStep(0.5);
  shift_->setRange(0, limits::kMaxShift);
  shift_->setSingleStep(0.5);
  for (QAbstractSpinBox* box :
       std::initializer_list<QAbstractSpinBox*>{frames_, steps_, guidance_, shift_, overlap_, blend_, motion_})
    box->setKeyboardTracking(false);
  errors_["steps"] = addField(form, tr("Steps"), steps_);
  errors_["guidance"] = addField(form, tr("Guidance"), guidance_);
  errors_["shift"] = addField(form, tr("Shift"), shift_);
  cache_->addItem(tr("as the sequence"));
  for (const StepCachePolicy policy : {StepCachePolicy::Off, StepCachePolicy::TeaCache, StepCachePolicy::MagCache,
                                       StepCachePolicy::EasyCache, StepCachePolicy::FirstBlock})
    cache_->addItem(QString::fromLatin1(toString(policy)), static_cast<int>(policy));
  cache_->setToolTip(tr("This shot's step cache instead of the sequence's (the policy's default threshold)"));
  errors_["cache.policy"] = addField(form, tr("Step cache"), cache_);
  loras_->setToolTip(tr("LoRAs merged into the resident DiT for this shot, taken off bit for bit after it"));
  errors_["loras"] = addField(form, tr("LoRAs"), loras_);

  addSection(form, tr("Continuity"));
  for (const ContinuityModeTraits& mode : continuityModes())
    mode_->addItem(tr(mode.description), QString::fromLatin1(mode.name));
  errors_["continuity.mode"] = addField(form, tr("From previous"), mode_);
  errors_["continuity.tag"] = addField(form, tr("Tag"), tag_);
  overlap_->setRange(1, 64);
  overlap_->setSuffix(tr(" latents"));
  errors_["continuity.overlap_latents"] = addField(form, tr("Overlap k"), overlap_);
  blend_->setRange(0, 1);
  blend_->setSingleStep(0.05);
  errors_["continuity.blend_ratio"] = addField(form, tr("Blend ratio"), blend_);
  errors_["continuity.fallback_image"] = addField(form, tr("Fallback image"), fallback_);
  motion_->setRange(1, 16);
  motion_->setSuffix(tr(" latents"));
  motion_->setToolTip(tr("SVI: how many of the previous shot's last latent frames go into this shot's condition"));
  errors_["continuity.motion_latents"] = addField(form, tr("Motion"), motion_);
  sviAnchor_->setToolTip(tr("SVI: the picture every shot of the chain is anchored to"));
  errors_["continuity.anchor_image"] = addField(form, tr("SVI anchor"), sviAnchor_);
  errors_["continuity.anchor_colour"] = addField(form, QString(), anchor_);
  recache_->setToolTip(
      tr("Stream: at a cut to a new prompt, rebuild the model's memory of the frames it keeps under "
         "the new prompt (a KV-recache). Off: keep it as the previous prompt left it."));
  errors_["continuity.recache"] = addField(form, QString(), recache_);
  errors_["enabled"] = addField(form, QString(), enabled_);

  widgets_ = {{"name", name_},
              {"prompt", prompt_},
              {"negative_prompt", negative_},
              {"frames", frames_},
              {"width", width_},
              {"height", height_},
              {"seed", seed_},
              {"steps", steps_},
              {"guidance", guidance_},
              {"shift", shift_},
              {"mode", mode_},
              {"tag", tag_},
              {"overlap", overlap_},
              {"blend", blend_},
              {"fallback", fallback_->edit()},
              {"preset", preset_},
              {"start_image", start_->edit()},
              {"end_image", end_->edit()},
              {"motion", motion_},
              {"anchor_image", sviAnchor_->edit()}};

  guardWheel(this);
  connect(name_, &QLineEdit::editingFinished, this,
          [this] { commit("name", [this](Shot& s) { s.name = name_->text().toStdString(); }); });
  watchTyping(prompt_, "prompt");
  watchTyping(negative_, "negative_prompt");
  connect(frames_, &QSpinBox::valueChanged, this, &ShotInspector::commitLength);
  connect(preset_, &QComboBox::activated, this, [this](int row) {
    const std::span<const models::SizePreset> presets = presetsOf(document_->resolved());
    if (row < 0 || row >= static_cast<int>(presets.size())) return;
    const models::SizePreset& preset = presets[static_cast<std::size_t>(row)];
    commit("preset", [&preset](Shot& s) {
      s.width = preset.width;
      s.height = preset.height;
    });
  });
  connect(width_, &QSpinBox::valueChanged, this, [this](int v) { commit("size", [v](Shot& s) { s.width = v; }); });
  connect(height_, &QSpinBox::valueChanged, this, [this](int v) { commit("size", [v](Shot& s) { s.height = v; }); });
  connect(seed_, &QLineEdit::editingFinished, this, [this] {
    bool ok = false;
    const quint64 seed = seed_->text().trimmed().toULongLong(&ok);
    if (!ok) return errors_["seed"]->show(tr("A seed is a whole number from 0 to 18446744073709551615"));
    commit("seed", [seed](Shot& s) { s.seed = seed; });
  });
  connect(randomise, &QPushButton::clicked, this, [this] {
    const quint64 seed = QRandomGenerator::global()->bounded(std::numeric_limits<qint64>::max());
    commit("seed", [seed](Shot& s) { s.seed = seed; });
  });
  connect(steps_, &QSpinBox::valueChanged, this, [this](int v) {
    commit("steps", [v](Shot& s) { s.steps = v == 0 ? std::nullopt : std::optional<int>(v); });
  });
  connect(guidance_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
    commit("guidance", [v](Shot& s) { s.guidance = v == 0 ? std::nullopt : std::optional<double>(v); });
  });
  connect(shift_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
    commit("shift", [v](Shot& s) { s.shift = v == 0 ? std::nullopt : std::optional<double>(v); });
  });
  connect(cache_, &QComboBox::activated, this, [this](int row) {
    const QVariant policy = cache_->itemData(row);
    commit("cache.policy", [&policy](Shot& s) {
      if (!policy.isValid()) return s.cache.reset();
      StepCacheSettings cache = s.cache.value_or(StepCacheSettings{});
      cache.policy = static_cast<StepCachePolicy>(policy.toInt());
      s.cache = cache;
    });
  });
  loras_->setOnEdited([this](const std::optional<std::vector<LoraRef>>& loras) {
    if (!commit("loras", [&loras](Shot& s) { s.loras = loras; })) refresh();
  });
  connect(mode_, &QComboBox::activated, this, [this](int row) {
    const ContinuityMode mode = continuityModes()[static_cast<std::size_t>(row)].mode;
    commit("continuity.mode", [mode](Shot& s) { s.continuity.mode = mode; });
  });
  connect(tag_, &QLineEdit::editingFinished, this, [this] {
    commit("continuity.tag", [this](Shot& s) { s.continuity.tag = tag_->text().trimmed().toStdString(); });
  });
  connect(overlap_, &QSpinBox::valueChanged, this,
          [this](int v) { commit("continuity.overlap_latents", [v](Shot& s) { s.continuity.overlapLatents = v; }); });
  connect(blend_, &QDoubleSpinBox::valueChanged, this,
          [this](double v) { commit("continuity.blend_ratio", [v](Shot& s) { s.continuity.blendRatio = v; }); });
  connect(fallback_, &ImageField::chosen, this, [this](const QString& path) {
    commit("continuity.fallback_image", [&path](Shot& s) { setFallbackImage(s, path.toStdString()); });
  });
  for (ImageField* field : {start_, end_})
    connect(field, &ImageField::chosen, this, [this, field](const QString& path) {
      if (index_ < 0) return;
      const bool end = field == end_;
      const Diagnostics errors = document_->edit(
          keyframeEdit(document_->sequence(), static_cast<std::size_t>(index_), end, path.toStdString()));
      errors_[end ? "end_image" : "start_image"]->show(errors.empty() ? QString()
                                                                      : QString::fromStdString(errors.front().message));
    });
  connect(motion_, &QSpinBox::valueChanged, this, [this](int v) {
    commit("continuity.motion_latents",
           [v](Shot& s) { s.continuity.motionLatents = v == 1 ? std::nullopt : std::optional<int>(v); });
  });
  connect(sviAnchor_, &ImageField::chosen, this, [this](const QString& path) {
    commit("continuity.anchor_image", [&path](Shot& s) { s.continuity.anchorImage = path.toStdString(); });
  });
  connect(anchor_, &QCheckBox::toggled, this,
          [this](bool on) { commit("continuity.anchor_colour", [on](Shot& s) { s.continuity.anchorColour = on; }); });
  connect(recache_, &QCheckBox::toggled, this, [this](bool on) {
    commit("continuity.recache",
           [on](Shot& s) { s.continuity.recache = on ? std::nullopt : std::optional<bool>(false); });
  });
  connect(enabled_, &QCheckBox::toggled, this,
          [this](bool on) { commit("enabled", [on](Shot& s) { s.enabled = on; }); });

  connect(document_, &SequenceDocument::changed, this, &ShotInspector::refresh);
  // Long item texts must not make the dock wider than the screen allows.
  for (QComboBox* box : findChildren<QComboBox*>()) {
    box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    box->setMinimumContentsLength(10);
  }
}

void ShotInspector::watchTyping(QPlainTextEdit* editor, const QString& field) {
  auto* idle = new QTimer(editor);
  idle->setSingleShot(true);
  idle->setInterval(700);
  connect(editor, &QPlainTextEdit::textChanged, idle, qOverload<>(&QTimer::start));
  connect(idle, &QTimer::timeout, this, [this, editor, field] { commitText(editor, field); });
  // A focus change ends a typing session: the next one is a new undo step.
  connect(qApp, &QApplication::focusChanged, this, [this, editor, idle, field](QWidget* old, QWidget* now) {
    if (old == editor && now != editor) {
      idle->stop();
      commitText(editor, field);
    }
    if (now == editor) ++typingSession_;
  });
}

void ShotInspector::commitText(QPlainTextEdit* editor, const QString& field) {
  if (index_ < 0) return;
  const std::string text = editor->toPlainText().toStdString();
  const QString key =
      field + QLatin1Char(':') + QString::number(index_) + QLatin1Char(':') + QString::number(typingSession_);
  commit(
      field, [&](Shot& s) { (editor == prompt_ ? s.prompt : s.negativePrompt) = text; }, key);
}

void ShotInspector::commitLength(int frames) {
  if (index_ < 0) return;
  const Diagnostics errors = document_->edit(SetShotLength{static_cast<std::size_t>(index_), frames});
  errors_["frames"]->show(errors.empty() ? QString() : QString::fromStdString(errors.front().message));
}

bool ShotInspector::commit(const QString& field, const std::function<void(Shot&)>& change, const QString& mergeKey) {
  if (index_ < 0 || index_ >= static_cast<int>(document_->sequence().shots.size())) return false;
  Shot shot = document_->sequence().shots[static_cast<std::size_t>(index_)];
  change(shot);
  FieldError* error = errors_.value(field);
  if (shot == document_->sequence().shots[static_cast<std::size_t>(index_)]) {
    if (error) error->clear();
    return true;
  }
  const Diagnostics errors = document_->edit(SetShot{static_cast<std::size_t>(index_), shot}, mergeKey);
  if (error) error->show(errors.empty() ? QString() : QString::fromStdString(errors.front().message));
  return errors.empty();
}

void ShotInspector::setShotIndex(int index) {
  index_ = index;
  ++typingSession_;
  for (FieldError* error : std::as_const(errors_)) error->clear();
  fromResolved_.clear();
  refresh();
}

QString ShotInspector::errorText(const QString& field) const {
  const FieldError* error = errors_.value(field);
  return error ? error->text() : QString();
}

void ShotInspector::refresh() {
  const auto& shots = document_->sequence().shots;
  if (index_ < 0 || index_ >= static_cast<int>(shots.size())) return;
  const Shot& shot = shots[static_cast<std::size_t>(index_)];
  const SamplerDefaults& defaults = document_->sequence().settings.sampler;
  heading_->setText(tr("Shot %1 · %2").arg(index_ + 1).arg(QString::fromStdString(shot.id)));
  auto setText = [](QLineEdit* edit, const std::string& value) {
    if (!edit->hasFocus() || !edit->isModified()) quietly(edit, [&] { edit->setText(QString::fromStdString(value)); });
  };
  auto setPlain = [](QPlainTextEdit* edit, const std::string& value) {
    const QString text = QString::fromStdString(value);
    if (edit->toPlainText() != text && !edit->hasFocus()) quietly(edit, [&] { edit->setPlainText(text); });
  };
  setText(name_, shot.name);
  setPlain(prompt_, shot.prompt);
  setPlain(negative_, shot.negativePrompt);
  quietly(frames_, [&] { frames_->setValue(shot.frames); });
  const resolve::ResolvedSequence& resolved = document_->resolved();
  const resolve::ResolvedShot& effective = resolved.shots[static_cast<std::size_t>(index_)];
  frames_->setSingleStep(resolved.geometry.frameStep());
  for (QSpinBox* side : {width_, height_}) side->setSingleStep(resolved.geometry.sideMultiple());
  quietly(width_, [&] { width_->setValue(shot.width); });
  quietly(height_, [&] { height_->setValue(shot.height); });
  const std::span<const models::SizePreset> presets = presetsOf(resolved);
  quietly(preset_, [&] {
    preset_->clear();
    for (const models::SizePreset& preset : presets) preset_->addItem(QString::fromUtf8(preset.label));
    preset_->addItem(tr("Custom"));
    int row = static_cast<int>(presets.size());
    for (int i = 0; i < static_cast<int>(presets.size()); ++i)
      if (presets[static_cast<std::size_t>(i)].width == shot.width &&
          presets[static_cast<std::size_t>(i)].height == shot.height)
        row = i;
    preset_->setCurrentIndex(row);
  });
  setText(seed_, std::to_string(shot.seed));
  // What the shot runs when a field is left to the sequence, as resolved: a few-step schedule's length, the
  // sequence's guidance and shift.
  steps_->setSpecialValueText(effective.fewStep ? tr("few-step (%1)").arg(effective.steps)
                                                : tr("default (%1)").arg(defaults.steps));
  guidance_->setSpecialValueText(tr("default (%1)").arg(defaults.guidance));
  shift_->setSpecialValueText(tr("default (%1)").arg(defaults.shift));
  cache_->setToolTip(effective.cache.off.empty()
                         ? tr("This shot's step cache instead of the sequence's (the policy's default threshold)")
                         : tr("Off for this shot: %1").arg(QString::fromStdString(effective.cache.off)));
  quietly(steps_, [&] { steps_->setValue(shot.steps.value_or(0)); });
  quietly(cache_,
          [&] { cache_->setCurrentIndex(shot.cache ? cache_->findData(static_cast<int>(shot.cache->policy)) : 0); });
  quietly(guidance_, [&] { guidance_->setValue(shot.guidance.value_or(0)); });
  quietly(shift_, [&] { shift_->setValue(shot.shift.value_or(0)); });
  quietly(mode_, [&] { mode_->setCurrentIndex(mode_->findData(QString::fromLatin1(toString(shot.continuity.mode)))); });
  setText(tag_, shot.continuity.tag);
  quietly(overlap_, [&] { overlap_->setValue(shot.continuity.overlapLatents); });
  quietly(blend_, [&] { blend_->setValue(shot.continuity.blendRatio); });
  const ContinuityModeTraits& traits = traitsOf(shot.continuity.mode);
  overlap_->setEnabled(traits.readsOverlap);
  blend_->setEnabled(traits.readsBlend);
  for (ImageField* field : {start_, end_, fallback_, sviAnchor_}) field->setBaseFolder(document_->baseFolder());
  fallback_->setPath(QString::fromStdString(shot.continuity.fallbackImage));
  start_->setPath(QString::fromStdString(shot.startImage));
  end_->setPath(QString::fromStdString(shot.endImage));
  sviAnchor_->setPath(QString::fromStdString(shot.continuity.anchorImage));
  quietly(motion_, [&] { motion_->setValue(motionLatents(shot.continuity)); });
  motion_->setEnabled(traits.readsMotion);
  sviAnchor_->setEnabled(traits.readsMotion);
  loras_->setBaseFolder(document_->baseFolder());
  std::vector<LoraRef> shown;
  for (const resolve::ResolvedLora& lora : effective.loras) shown.push_back(lora.written);
  loras_->setLoras(shown, effective.ownLoras);
  quietly(anchor_, [&] { anchor_->setChecked(shot.continuity.anchorColour); });
  quietly(recache_, [&] { recache_->setChecked(recaches(shot.continuity)); });
  recache_->setEnabled(traits.readsRecache);
  anchor_->setEnabled(traits.sampling == ShotSampling::WholeClip);
  quietly(enabled_, [&] { enabled_->setChecked(shot.enabled); });
  showResolvedProblems();
}

// What the resolved shot refuses, beside its field (a document opened with a size its family cannot take); an
// edit's own refusal in a field stays until that field is edited again.
void ShotInspector::showResolvedProblems() {
  for (const QString& field : std::as_const(fromResolved_))
    if (FieldError* error = errors_.value(field)) error->clear();
  fromResolved_.clear();
  const std::string prefix = "shots[" + std::to_string(index_) + "].";
  for (const Diagnostic& problem : document_->resolved().problems) {
    if (!problem.isError() || !problem.path.starts_with(prefix)) continue;
    QString field = QString::fromStdString(problem.path.substr(prefix.size()));
    if (field == QLatin1String("width") || field == QLatin1String("height")) field = QStringLiteral("size");
    FieldError* error = errors_.value(field);
    if (!error || !error->text().isEmpty()) continue;
    error->show(QString::fromStdString(problem.message));
    fromResolved_.insert(field);
  }
}

}  // namespace shotchain::ui
