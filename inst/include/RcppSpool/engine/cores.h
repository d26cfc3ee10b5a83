// How many cores this process may use, and how many threads to use by default.
//
// The rules are those of parallelly::availableCores() (version 1.34), written
// anew in C++ so that a pool can size itself without calling R: the minimum
// over the limits that apply (machine, cgroups, affinity mask, mc.cores, batch
// schedulers, R CMD check, ...), named by the rule that decided it.
//
// These headers know nothing of R (the engine must build without it). What R
// would provide, the values of R options, comes through an injected
// OptionReader; environment variables through an EnvReader (getenv by
// default); the machine (/proc, /sys/fs/cgroup, the affinity mask) through
// MachineFacts, read from a root directory that tests can fake.
#pragma once

// One concept per header, in the order the rules build on each other:
#include "cores_values.h"        // R values without R, R's conversions
#include "cores_env_snapshot.h"  // has the environment changed?
#include "cores_cgroups.h"       // the kernel's files on cgroups
#include "cores_machine.h"       // processors, cgroup limits, affinity
#include "cores_options.h"       // inputs and answer; parallelly's options
#include "cores_methods.h"       // what each method says
#include "cores_decision.h"      // availableCores()
#include "default_threads.h"     // the default thread count
