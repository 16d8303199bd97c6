// TraceSummary <-> the Summary message of trace.proto (summary_proto.h).
