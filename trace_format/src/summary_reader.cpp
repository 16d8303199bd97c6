// readTraceSummary, readTraceFrames and the frame filters (trace/summary.h).
