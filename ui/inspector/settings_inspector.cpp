#include "inspector/settings_inspector.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>

#include "document/sequence_document.h"
#include "inspector/form_helpers.h"
#include "inspector/lora_list_field.h"
#include "sequence/continuity_modes.h"
#include "sequence/step_cache_policies.h"
#include "sequence/validation.h"
#include "widgets/wheel_guard.h"

namespace shotchain::ui {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
const ResidencyPolicy kPolicies[] = {ResidencyPolicy::Auto, ResidencyPolicy::Pinned, ResidencyPolicy::Offload,
                                     ResidencyPolicy::Reload};
const ExpertResidency kExpertPlacements[] = {ExpertResidency::Auto, ExpertResidency::Resident, ExpertResidency::Swap,
                                             ExpertResidency::Reload};

}  // namespace

SettingsInspector::SettingsInspector(SequenceDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      name_(new QLineEdit(this)),
      fps_(new QDoubleSpinBox(this)),
      source_(new QComboBox(this)),
      builtin_(new QLineEdit(this)),
      folder_(new QLineEdit(this)),
      layout_(new QLabel(this)),
      dit_(new QLineEdit(this)),
      vae_(new QLineEdit(this)),
      textEncoder_(new QLineEdit(this)),
      tokenizer_(new QLineEdit(this)),
      steps_(new QSpinBox(this)),
      guidance_(new QDoubleSpinBox(this)),
      shift_(new QDoubleSpinBox(this)),
      solver_(new QComboBox(this)),
      streamWindow_(new QSpinBox(this)),
      cachePolicy_(new QComboBox(this)),
      cacheThreshold_(new QDoubleSpinBox(this)),
      cacheCalibration_(new QLineEdit(this)),
      device_(new QComboBox(this)),
      budget_(new QDoubleSpinBox(this)),
      policy_(new QComboBox(this)),
      tuning_(new QCheckBox(tr("Tune the allocator (expandable segments, caching)"), this)),
      boundary_(new QDoubleSpinBox(this)),
      guidanceHighNoise_(new QDoubleSpinBox(this)),
      experts_(new QComboBox(this)),
      loras_(new LoraListField(/*inheritable=*/false, this)) {
  ditHighNoise_ = new QLineEdit(this);
  auto* form = new QFormLayout(this);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form->setLabelAlignment(Qt::AlignRight);
  auto* heading = new QLabel(tr("Sequence settings"), this);
  heading->setStyleSheet(QStringLiteral("font-size: 120%; font-weight: bold;"));
  form->addRow(heading);
  auto* hint = new QLabel(tr("Select a shot on the timeline to edit it."), this);
  hint->setStyleSheet(QStringLiteral("color: #909090;"));
  form->addRow(hint);

  errors_["name"] = addField(form, tr("Name"), name_);
  fps_->setRange(1, limits::kMaxFps);
  fps_->setSuffix(tr(" fps"));
  fps_->setKeyboardTracking(false);
  errors_["fps"] = addField(form, tr("Frame rate"), fps_);

  addSection(form, tr("Model"));
  source_->addItems({tr("Built-in model"), tr("Models folder (ComfyUI layout)"), tr("Separate files")});
  errors_["source"] = addField(form, tr("Weights"), source_);
  builtin_->setPlaceholderText(QStringLiteral("demo"));
  errors_["model.builtin"] = addField(form, tr("Built-in"), builtin_);
  builtinRows_ = {builtin_->parentWidget()};
  auto* folderRow = new QWidget(this);
  auto* folderLayout = new QHBoxLayout(folderRow);
  folderLayout->setContentsMargins(0, 0, 0, 0);
  auto* browse = new QPushButton(QStringLiteral("…"), folderRow);
  browse->setFixedWidth(28);
  folderLayout->addWidget(folder_, 1);
  folderLayout->addWidget(browse);
  errors_["model.folder"] = addField(form, tr("Folder"), folderRow);
  layout_->setWordWrap(true);
  layout_->setStyleSheet(QStringLiteral("color: #9a9a9a;"));
  form->addRow(QString(), layout_);
  folderRows_ = {folderRow->parentWidget(), layout_};
  errors_["model.dit"] = addField(form, tr("DiT"), dit_);
  ditHighNoise_->setPlaceholderText(tr("none (one DiT); a pair of experts: the high-noise one"));
  ditHighNoise_->setToolTip(tr("Two experts: this file runs the early, high-noise steps and the DiT above the rest"));
  errors_["model.dit_high_noise"] = addField(form, tr("High-noise expert"), ditHighNoise_);
  errors_["model.vae"] = addField(form, tr("VAE"), vae_);
  errors_["model.text_encoder"] = addField(form, tr("Text encoder"), textEncoder_);
  errors_["model.tokenizer"] = addField(form, tr("Tokenizer"), tokenizer_);
  fileRows_ = {dit_->parentWidget(), ditHighNoise_->parentWidget(), vae_->parentWidget(), textEncoder_->parentWidget(),
               tokenizer_->parentWidget()};

  addSection(form, tr("Sampler defaults"));
  steps_->setRange(1, limits::kMaxSteps);
  guidance_->setRange(0, limits::kMaxGuidance);
  guidance_->setSingleStep(0.5);
  shift_->setRange(0, limits::kMaxShift);
  shift_->setSingleStep(0.5);
  for (QAbstractSpinBox* box :
       std::initializer_list<QAbstractSpinBox*>{steps_, guidance_, shift_, streamWindow_, budget_})
    box->setKeyboardTracking(false);
  solver_->addItem(QStringLiteral("UniPC"), static_cast<int>(Solver::UniPC));
  solver_->addItem(QStringLiteral("Euler"), static_cast<int>(Solver::Euler));
  errors_["sampler.steps"] = addField(form, tr("Steps"), steps_);
  errors_["sampler.guidance"] = addField(form, tr("Guidance"), guidance_);
  errors_["sampler.shift"] = addField(form, tr("Shift"), shift_);
  errors_["sampler.solver"] = addField(form, tr("Solver"), solver_);
  streamWindow_->setRange(1, limits::kMaxStreamWindow);
  streamWindow_->setSuffix(tr(" latent frames"));
  streamWindow_->setToolTip(
      tr("Stream shots: the frames a new chunk attends to besides the stream's first one. "
         "The cache stops growing there; wider remembers more and costs memory."));
  errors_["sampler.stream_window"] = addField(form, tr("Stream window"), streamWindow_);
  streamRows_ = {streamWindow_->parentWidget()};
  for (const StepCachePolicyTraits& policy : stepCachePolicies())
    cachePolicy_->addItem(QString::fromLatin1(policy.name));
  cachePolicy_->setToolTip(
      tr("Skip the sampling steps whose DiT output would barely change (docs/step-cache.md). "
         "After a render each shot's tooltip says how many passes were computed and skipped; "
         "`shotchain bench cache` measures what each policy costs in picture."));
  errors_["sampler.cache.policy"] = addField(form, tr("Step cache"), cachePolicy_);
  boundary_->setRange(0, 1);
  boundary_->setDecimals(3);
  boundary_->setSingleStep(0.025);

  boundary_->setKeyboardTracking(false);
  boundary_->setToolTip(
      tr("Two experts: steps whose timestep is at or above this share of 1000 run the high-noise expert"));
  errors_["sampler.boundary"] = addField(form, tr("Expert boundary"), boundary_);
  guidanceHighNoise_->setRange(0, limits::kMaxGuidance);
  guidanceHighNoise_->setSingleStep(0.5);
  guidanceHighNoise_->setSpecialValueText(tr("as Guidance"));
  guidanceHighNoise_->setKeyboardTracking(false);
  errors_["sampler.guidance_high_noise"] = addField(form, tr("High-noise guidance"), guidanceHighNoise_);
  expertRows_ = {boundary_->parentWidget(), guidanceHighNoise_->parentWidget()};
  errors_["loras"] = addField(form, tr("LoRAs"), loras_);
  cacheThreshold_->setRange(0, limits::kMaxCacheThreshold);
  cacheThreshold_->setDecimals(3);
  cacheThreshold_->setSingleStep(0.01);
  cacheThreshold_->setSpecialValueText(tr("policy default"));
  cacheThreshold_->setKeyboardTracking(false);
  cacheThreshold_->setToolTip(tr("Higher skips more steps and changes the picture more"));
  errors_["sampler.cache.threshold"] = addField(form, tr("Cache threshold"), cacheThreshold_);
  cacheCalibration_->setPlaceholderText(tr("none: the numbers published for the model, where there are some"));
  cacheCalibration_->setToolTip(tr("magcache/teacache: the file `shotchain calibrate-cache` wrote for this model"));
  errors_["sampler.cache.calibration"] = addField(form, tr("Calibration"), cacheCalibration_);

  addSection(form, tr("Memory"));
  device_->setEditable(true);
  device_->addItems(
      {QStringLiteral("cpu"), QStringLiteral("cuda"), QStringLiteral("cuda:0"), QStringLiteral("cuda:1")});
  device_->setToolTip(tr("Where the studio renders (a studio setting, not saved in the sequence)"));
  errors_["device"] = addField(form, tr("Device"), device_);
  budget_->setRange(0, 4096);
  budget_->setDecimals(1);
  budget_->setSuffix(tr(" GiB"));
  budget_->setSpecialValueText(tr("no budget (whole device)"));
  errors_["memory.budget"] = addField(form, tr("Budget"), budget_);
  for (ResidencyPolicy policy : kPolicies) policy_->addItem(QString::fromLatin1(toString(policy)));
  policy_->setToolTip(tr("auto: the renderer picks the fastest policy that fits and says why"));
  errors_["memory.policy"] = addField(form, tr("Residency"), policy_);
  for (ExpertResidency placement : kExpertPlacements) experts_->addItem(QString::fromLatin1(toString(placement)));
  experts_->setToolTip(
      tr("Two experts: both resident, swapped at the boundary through host memory, or read from disk; "
         "auto keeps both when they fit"));
  errors_["memory.experts"] = addField(form, tr("Experts"), experts_);
  expertRows_.push_back(experts_->parentWidget());
  errors_["memory.allocator_tuning"] = addField(form, QString(), tuning_);
  advancedRows_ = {tuning_->parentWidget()};

  connect(name_, &QLineEdit::editingFinished, this,
          [this] { commit("name", [this](SequenceSettings& s) { s.name = name_->text().toStdString(); }); });
  connect(fps_, &QDoubleSpinBox::valueChanged, this,
          [this](double v) { commit("fps", [v](SequenceSettings& s) { s.fps = v; }); });
  connect(source_, &QComboBox::activated, this, [this](int row) {
    commit("source", [row](SequenceSettings& s) {
      if (row == 0 && s.model.builtin.empty()) s.model.builtin = "demo";
      if (row != 0) s.model.builtin.clear();
      if (row == 2) s.model.folder.clear();
    });
    updateModelRows();
  });
  auto text = [this](QLineEdit* edit, const QString& field, std::string ModelSet::*member) {
    connect(edit, &QLineEdit::editingFinished, this, [this, edit, field, member] {
      commit(field, [edit, member](SequenceSettings& s) { s.model.*member = edit->text().trimmed().toStdString(); });
      if (member == &ModelSet::folder) detectLayout();
    });
  };
  text(builtin_, "model.builtin", &ModelSet::builtin);
  text(folder_, "model.folder", &ModelSet::folder);
  text(dit_, "model.dit", &ModelSet::dit);
  text(vae_, "model.vae", &ModelSet::vae);
  text(textEncoder_, "model.text_encoder", &ModelSet::textEncoder);
  text(tokenizer_, "model.tokenizer", &ModelSet::tokenizer);
  connect(browse, &QPushButton::clicked, this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Models folder"));
    if (dir.isEmpty()) return;
    folder_->setText(dir);
    commit("model.folder", [dir](SequenceSettings& s) { s.model.folder = dir.toStdString(); });
    detectLayout();
  });
  connect(steps_, &QSpinBox::valueChanged, this,
          [this](int v) { commit("sampler.steps", [v](SequenceSettings& s) { s.sampler.steps = v; }); });
  connect(guidance_, &QDoubleSpinBox::valueChanged, this,
          [this](double v) { commit("sampler.guidance", [v](SequenceSettings& s) { s.sampler.guidance = v; }); });
  connect(shift_, &QDoubleSpinBox::valueChanged, this,
          [this](double v) { commit("sampler.shift", [v](SequenceSettings& s) { s.sampler.shift = v; }); });
  connect(streamWindow_, &QSpinBox::valueChanged, this, [this](int v) {
    commit("sampler.stream_window", [v](SequenceSettings& s) {
      s.sampler.streamWindow = v == kDefaultStreamWindow ? std::nullopt : std::optional<int>(v);
    });
  });
  connect(cachePolicy_, &QComboBox::activated, this, [this](int row) {
    commit("sampler.cache.policy", [row](SequenceSettings& s) {
      s.sampler.cache.policy = stepCachePolicies()[static_cast<std::size_t>(row)].policy;
    });
  });
  connect(cacheThreshold_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
    commit("sampler.cache.threshold",
           [v](SequenceSettings& s) { s.sampler.cache.threshold = v <= 0 ? std::nullopt : std::optional<double>(v); });
  });
  connect(cacheCalibration_, &QLineEdit::editingFinished, this, [this] {
    commit("sampler.cache.calibration", [this](SequenceSettings& s) {
      s.sampler.cache.calibration = cacheCalibration_->text().trimmed().toStdString();
    });
  });
  connect(solver_, &QComboBox::activated, this, [this](int row) {
    const auto solver = static_cast<Solver>(solver_->itemData(row).toInt());
    commit("sampler.solver", [solver](SequenceSettings& s) { s.sampler.solver = solver; });
  });
  connect(device_, &QComboBox::currentTextChanged, this, &SettingsInspector::deviceChanged);
  connect(budget_, &QDoubleSpinBox::valueChanged, this, [this](double gib) {
    commit("memory.budget", [gib](SequenceSettings& s) {
      s.memoryBudgetBytes =
          gib <= 0 ? std::nullopt : std::optional<std::uint64_t>(static_cast<std::uint64_t>(gib * kGiB));
    });
  });
  connect(policy_, &QComboBox::activated, this,
          [this](int row) { commit("memory.policy", [row](SequenceSettings& s) { s.policy = kPolicies[row]; }); });
  text(ditHighNoise_, "model.dit_high_noise", &ModelSet::ditHighNoise);
  connect(boundary_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
    commit("sampler.boundary",
           [v](SequenceSettings& s) { s.sampler.boundary = v <= 0 ? std::nullopt : std::optional<double>(v); });
  });
  connect(guidanceHighNoise_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
    commit("sampler.guidance_high_noise", [v](SequenceSettings& s) {
      s.sampler.guidanceHighNoise = v <= 0 ? std::nullopt : std::optional<double>(v);
    });
  });
  connect(experts_, &QComboBox::activated, this, [this](int row) {
    commit("memory.experts", [row](SequenceSettings& s) { s.experts = kExpertPlacements[row]; });
  });
  loras_->setOnEdited([this](const std::optional<std::vector<LoraRef>>& loras) {
    if (!commit("loras", [&loras](SequenceSettings& s) { s.loras = loras.value_or(std::vector<LoraRef>{}); }))
      refresh();
  });
  connect(tuning_, &QCheckBox::toggled, this, [this](bool on) {
    commit("memory.allocator_tuning", [on](SequenceSettings& s) { s.allocatorTuning = on; });
  });
  guardWheel(this);
  connect(document_, &SequenceDocument::changed, this, &SettingsInspector::refresh);
  // Long item texts must not make the dock wider than the screen allows.
  for (QComboBox* box : findChildren<QComboBox*>()) {
    box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    box->setMinimumContentsLength(10);
  }
}

bool SettingsInspector::commit(const QString& field, const std::function<void(SequenceSettings&)>& change) {
  SequenceSettings settings = document_->sequence().settings;
  change(settings);
  FieldError* error = errors_.value(field);
  if (settings == document_->sequence().settings) {
    if (error) error->clear();
    Q_EMIT pendingProblemChanged(QString());
    return true;
  }
  const Diagnostics errors = document_->edit(SetSettings{settings});
  if (error) error->show(errors.empty() ? QString() : QString::fromStdString(errors.front().message));
  Q_EMIT pendingProblemChanged(errors.empty() ? QString()
                                              : tr("Not applied: %1 (the sequence keeps its previous setting)")
                                                    .arg(QString::fromStdString(errors.front().format())));
  return errors.empty();
}

QString SettingsInspector::errorText(const QString& field) const {
  const FieldError* error = errors_.value(field);
  return error ? error->text() : QString();
}

void SettingsInspector::setDevice(const QString& device) {
  quietly(device_, [&] { device_->setCurrentText(device); });
}

void SettingsInspector::refresh() {
  const SequenceSettings& s = document_->sequence().settings;
  auto setText = [](QLineEdit* edit, const std::string& value) {
    if (!edit->hasFocus() || !edit->isModified()) quietly(edit, [&] { edit->setText(QString::fromStdString(value)); });
  };
  setText(name_, s.name);
  quietly(fps_, [&] { fps_->setValue(s.fps); });
  const int source = s.model.isBuiltin() ? 0 : !s.model.folder.empty() ? 1 : 2;
  quietly(source_, [&] { source_->setCurrentIndex(source); });
  setText(builtin_, s.model.builtin);
  setText(folder_, s.model.folder);
  setText(dit_, s.model.dit);
  setText(vae_, s.model.vae);
  setText(textEncoder_, s.model.textEncoder);
  setText(tokenizer_, s.model.tokenizer);
  quietly(steps_, [&] { steps_->setValue(s.sampler.steps); });
  quietly(guidance_, [&] { guidance_->setValue(s.sampler.guidance); });
  quietly(shift_, [&] { shift_->setValue(s.sampler.shift); });
  quietly(solver_, [&] { solver_->setCurrentIndex(s.sampler.solver == Solver::UniPC ? 0 : 1); });
  quietly(streamWindow_, [&] { streamWindow_->setValue(s.sampler.streamWindow.value_or(kDefaultStreamWindow)); });
  quietly(cachePolicy_, [&] {
    cachePolicy_->setCurrentIndex(cachePolicy_->findText(QString::fromLatin1(toString(s.sampler.cache.policy))));
  });
  quietly(cacheThreshold_, [&] { cacheThreshold_->setValue(s.sampler.cache.threshold.value_or(0)); });
  setText(cacheCalibration_, s.sampler.cache.calibration);
  const StepCachePolicy cache = s.sampler.cache.policy;
  cacheThreshold_->setEnabled(cache != StepCachePolicy::Off);
  cacheCalibration_->setEnabled(traitsOf(cache).calibration != CalibrationNeed::Online);
  quietly(budget_,
          [&] { budget_->setValue(s.memoryBudgetBytes ? static_cast<double>(*s.memoryBudgetBytes) / kGiB : 0); });
  quietly(policy_, [&] {
    policy_->setCurrentIndex(
        static_cast<int>(std::find(std::begin(kPolicies), std::end(kPolicies), s.policy) - std::begin(kPolicies)));
  });
  quietly(tuning_, [&] { tuning_->setChecked(s.allocatorTuning); });
  setText(ditHighNoise_, s.model.ditHighNoise);
  const models::FamilyKnowledge* family = document_->resolved().models.dit.knowledge;
  boundary_->setSpecialValueText(family && family->expertBoundary > 0
                                     ? tr("family default (%1)").arg(family->expertBoundary)
                                     : tr("family default"));
  quietly(boundary_, [&] { boundary_->setValue(s.sampler.boundary.value_or(0)); });
  quietly(guidanceHighNoise_, [&] { guidanceHighNoise_->setValue(s.sampler.guidanceHighNoise.value_or(0)); });
  quietly(experts_, [&] {
    experts_->setCurrentIndex(
        static_cast<int>(std::find(std::begin(kExpertPlacements), std::end(kExpertPlacements), s.experts) -
                         std::begin(kExpertPlacements)));
  });
  loras_->setBaseFolder(document_->baseFolder());
  loras_->setLoras(s.loras);
  updateModelRows();
  detectLayout();
}

void SettingsInspector::setAdvanced(bool advanced) {
  advanced_ = advanced;
  updateModelRows();
}

void SettingsInspector::updateModelRows() {
  const int source = source_->currentIndex();
  for (QWidget* w : std::as_const(builtinRows_)) w->setVisible(source == 0);
  for (QWidget* w : std::as_const(folderRows_)) w->setVisible(source == 1);
  for (QWidget* w : std::as_const(fileRows_)) w->setVisible(source != 0);
  const bool twoExperts = !document_->sequence().settings.model.ditHighNoise.empty();
  for (QWidget* w : std::as_const(expertRows_)) w->setVisible(twoExperts);
  const auto& shots = document_->sequence().shots;
  const bool streams = std::any_of(shots.begin(), shots.end(),
                                   [](const Shot& shot) { return shotchain::streams(shot.continuity.mode); });
  for (QWidget* w : std::as_const(streamRows_)) w->setVisible(advanced_ || streams);
  for (QWidget* w : std::as_const(advancedRows_)) w->setVisible(advanced_);
  if (auto* form = qobject_cast<QFormLayout*>(layout())) {
    for (QWidget* w : builtinRows_ + folderRows_ + fileRows_ + expertRows_ + streamRows_ + advancedRows_)
      if (QWidget* label = form->labelForField(w)) label->setVisible(w->isVisibleTo(this));
  }
}

// ComfyUI keeps each component in its own sub-folder; say which ones the folder has.
void SettingsInspector::detectLayout() {
  const std::string folder = document_->sequence().settings.model.folder;
  if (folder.empty()) return layout_->clear();
  QDir dir(QString::fromStdString(folder));
  if (dir.isRelative())
    dir.setPath(QDir(QString::fromStdString(document_->baseFolder().string())).filePath(dir.path()));
  if (!dir.exists()) return layout_->setText(tr("Folder not found: %1").arg(dir.path()));
  QStringList found, missing;
  for (const char* sub : {"diffusion_models", "vae", "text_encoders"})
    (dir.exists(QString::fromLatin1(sub)) ? found : missing) << QString::fromLatin1(sub);
  layout_->setText(missing.isEmpty()
                       ? tr("ComfyUI layout detected (%1)").arg(found.join(QStringLiteral(", ")))
                       : tr("Not a complete ComfyUI layout: missing %1").arg(missing.join(QStringLiteral(", "))));
}

}  // namespace shotchain::ui
