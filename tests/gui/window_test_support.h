#pragma once
// Helpers of the tests that drive the main window offscreen.

#include <QApplication>

#include <gtest/gtest.h>

#include <memory>

#include "job_loader.h"
#include "vramscope/analysis/model/job_model.h"

namespace window_test {

/// Lets what the last step queued run (layouts, deferred deletes, zero-time timers): a few
/// rounds of QApplication::processEvents, since handling one event can post the next.
inline void settle() {
    for (int i = 0; i < 4; ++i) {
        QApplication::processEvents();
    }
}

/// The bundled sample job (app::loadBundledSample); null, and a failed check, when it does not
/// load.
inline std::shared_ptr<const vramscope::analysis::JobModel> bundledSample() {
    auto loaded = vramscope::app::loadBundledSample();
    EXPECT_TRUE(loaded.ok()) << (loaded.ok() ? "" : loaded.error().describe());
    return loaded.ok() ? loaded.value() : nullptr;
}

}  // namespace window_test
