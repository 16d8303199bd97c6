// SummaryBuilder and summarizeTrace (trace/summary.h).
