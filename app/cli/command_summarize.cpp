// vramscope-cli summarize: per-file summaries into a job index, and --merge (job_index.h).
