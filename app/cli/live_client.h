#pragma once
// What `attach` and `watch` share: finding live jobs (trace/live.h) and connecting to the ones a
// user names.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli_command.h"
#include "vramscope/trace/live.h"

namespace vramscope::app {

/// The sockets a target names: "all" (every live job of this user), a pid (the socket of that
/// process on this host) or a socket path (anything with a '/' or ending ".sock"). Errors go to
/// ctx.err naming the target and the socket directory; nullopt then.
std::optional<std::vector<std::string>> resolveTargets(CommandContext& ctx,
                                                       const std::vector<std::string>& targets);

/// Connects to the sockets and starts receiving (trace::live::Receiver, 2 s per hello). A
/// socket that cannot be reached is reported on ctx.err and left out; nullptr when none could be.
std::unique_ptr<trace::live::Receiver> connectAll(CommandContext& ctx,
                                                  const std::vector<std::string>& sockets);

/// What attach and watch do first: resolveTargets, connectAll, then installInterruptFlag.
/// Errors are on ctx.err; nullptr then (the command exits kExitUnreadable).
std::unique_ptr<trace::live::Receiver> attachTargets(CommandContext& ctx,
                                                     const std::vector<std::string>& targets);

/// Makes SIGINT and SIGTERM set a flag (interrupted()), so ^C ends a recording cleanly.
void installInterruptFlag();
/// Whether SIGINT or SIGTERM arrived since installInterruptFlag().
bool interrupted();

/// The steady clock, ns.
int64_t steadyNowNs();

/// "<pid> on <host>, rank R of W, job J" from a hello.
std::string describeProducer(const trace::FileHeader& hello);

}  // namespace vramscope::app
