// Job index files (trace/job_index.h).
