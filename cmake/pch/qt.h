// Precompiled for the Qt targets (cmake/build_speed.cmake): Qt's modules and QCustomPlot, whose
// headers take most of a widget source's compile time.
#pragma once

#include <qcustomplot.h>
#include <QtCore>
#include <QtGui>
#include <QtPrintSupport>
#include <QtSvg>
#include <QtWidgets>
