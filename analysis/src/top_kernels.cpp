#include "vramscope/analysis/top_kernels.h"
