#pragma once

#include <QImage>
#include <QMetaType>
#include <QVector>

#include <string>

#include "render/render_events.h"
#include "render/renderer.h"

namespace shotchain::ui {

// A deep copy of a renderer frame as an image the GUI thread may own.
QImage toImage(const render::RgbFrame& frame);

// Frames 1…count of a finished shot read back from its PNGs (shots/<NN>-<id>), up to the first
// one that cannot be read.
QVector<QImage> readShotFrames(const std::string& shotDirectory, int count);

}  // namespace shotchain::ui

// Renderer events travel through queued connections as these types.
Q_DECLARE_METATYPE(shotchain::memory::MemoryPlan)
Q_DECLARE_METATYPE(shotchain::memory::MemorySample)
Q_DECLARE_METATYPE(shotchain::continuity::CutMetrics)
Q_DECLARE_METATYPE(shotchain::render::ShotStarted)
Q_DECLARE_METATYPE(shotchain::render::ShotFinished)
Q_DECLARE_METATYPE(shotchain::render::SequenceFinished)
Q_DECLARE_METATYPE(shotchain::render::RenderWarning)
Q_DECLARE_METATYPE(shotchain::render::RenderOptions)
Q_DECLARE_METATYPE(shotchain::Sequence)
