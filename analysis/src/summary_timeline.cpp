// Memory timelines and stored analyses from summaries (analysis/summary_timeline.h).
