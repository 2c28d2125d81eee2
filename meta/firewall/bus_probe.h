// Whether firewalld runs, asked by the static plugin itself: the one D-Bus
// call the auto backend needs on every ADD and DEL of a host with a system
// bus (podman's default networks), without the helper's exec, the dynamic
// loader or libsystemd. A minimal client of the D-Bus wire protocol for
// exactly this: connect to the system bus's Unix socket, authenticate
// (EXTERNAL, our uid), Hello, GetNameOwner("org.fedoraproject.FirewallD1").
// Anything it does not expect makes it say "cannot tell", and the caller
// asks the helper (sd-bus) instead: it never guesses.
#pragma once

namespace cni::firewall::firewalld {

enum class Probe {
  kRunning,     // firewalld owns its name
  kNotRunning,  // the bus answered that nobody does, or no bus answers at all
  kCannotTell,  // an address or an answer this client does not handle: ask the helper
};

// Each read and write waits at most a few seconds (a hung bus is a bus that
// does not answer: kNotRunning, as an sd-bus call that timed out was).
Probe ProbeFirewalld();

}  // namespace cni::firewall::firewalld
